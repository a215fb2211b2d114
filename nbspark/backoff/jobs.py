"""The backoff family's jobs: train (count every context subset of the confusion-set windows) and
classify (predict the centre word with Cohen's backoff chain).

Record shapes: train, ``Example`` -> ``((subset, *context, label), weight)`` -> ``counts/``
(``backoff.events.count_ddl``) + ``manifest.json``; classify, ``counts/`` -> ``BackoffModel`` (driver,
small) -> broadcast; test ``Example`` -> ``mapPartitions(predict)`` -> ``predictions/``
(``prediction_ddl``) -> ``metrics.json``, ``report.txt``.
"""

from __future__ import annotations

import time

from nbspark.backoff.count import count_ngrams
from nbspark.backoff.events import count_ddl
from nbspark.backoff.inputs import examples_rdd
from nbspark.backoff.model import BackoffModel, build_model, table_fields
from nbspark.backoff.predict import parse_pattern, predict
from nbspark.errors import InputError, OutputError
from nbspark.inputs.resolve import Inputs
from nbspark.inputs.stats import is_stat, run_failfast, split_stats
from nbspark.report.format import format_classify_report
from nbspark.report.metrics import backoff_metrics, level_name
from nbspark.settings.config import ExperimentConfig, position_letters
from nbspark.spine.classifying import ClassifyPlan, Scored, plan_classify, scored_here, write_results
from nbspark.spine.counting import count_events
from nbspark.spine.training import Family, plan_training, train_model, why_empty
from nbspark.storage.counts import is_arrow_table, read_count_rows
from nbspark.storage.locations import Location, location
from nbspark.storage.manifests import BACKOFF_KIND, confusion_sets, load_manifest, set_of_word

__all__ = [
    "BACKOFF",
    "classify",
    "load_backoff_manifest",
    "metrics_in_process",
    "per_set_metrics",
    "plan_backoff_classify",
    "prediction_ddl",
    "run_backoff_classify",
    "train",
    "worked_examples",
]


def _ddl(config: dict) -> str:
    return count_ddl(position_letters(config["width"]))


def _check_subsets(old: dict, cfg: ExperimentConfig) -> None:
    if list(cfg.counted_subsets) != old["subsets"]:
        raise InputError(
            f"cannot update: the model counted subsets {old['subsets']}, this run counts "
            f"{list(cfg.counted_subsets)}"
        )


def _fields(spark, cfg: ExperimentConfig, counted, read_written, updated: bool) -> dict:
    """The backoff manifest's own fields: what the engine learned while counting, or (an update,
    or an engine that learns nothing) from the written table (one small aggregate)."""
    known = counted.known
    if "distinct_events" in known and not updated:
        per_subset, label_counts = known["distinct_events"], known["label_counts"]
    elif is_arrow_table(written := read_written()):  # written by this process (spine.training.write_counts)
        got = table_fields(written)
        per_subset, label_counts = got["distinct_events"], got["label_counts"]
    else:
        per_subset = {
            r["subset"]: r["n"]
            for r in written.groupBy("subset").count().withColumnRenamed("count", "n").collect()
        }
        label_counts = {}
        if "" in cfg.counted_subsets:
            prior = (
                written.where(written.subset == "")
                .groupBy("label")
                .agg({"count": "sum"})
                .withColumnRenamed("sum(count)", "total")
            )
            label_counts = {r["label"]: r["total"] for r in prior.collect()}
    return {
        "letters": cfg.letters,
        "subsets": list(cfg.counted_subsets),
        "distinct_events": dict(sorted(per_subset.items())),
        "label_counts": dict(sorted(label_counts.items())),
    }


BACKOFF = Family(
    kind=BACKOFF_KIND,
    task="backoff",
    count=count_ngrams,
    ddl=_ddl,
    sums=("count",),
    unit="examples",
    update_keys=(
        "confusion_set",
        "confusion_sets",
        "width",
        "lowercase",
        "sample",
        "sample_seed",
        "train.year_min",
        "train.year_max",
        "train.min_count",
        "train.pos",
    ),
    fields=_fields,
    check_old=_check_subsets,
)


def load_backoff_manifest(model_dir: Location) -> dict:
    return load_manifest(model_dir, BACKOFF_KIND)


def train(
    spark,
    cfg: ExperimentConfig,
    inputs: Inputs,
    out: Location,
    update: bool = False,
    force: bool = False,
    overwrite: bool = False,
) -> dict:
    """Count ``inputs`` into the backoff model ``out``; return its manifest
    (``spine.training.train_model``)."""
    return train_model(spark, plan_training(cfg, inputs, out, BACKOFF, update, force, overwrite), BACKOFF)


# ---------------------------------------------------------------- classify


def prediction_ddl(letters: str) -> str:
    tokens = ", ".join(f"{c.lower()} STRING" for c in letters)
    return (
        f"source STRING NOT NULL, {tokens}, gold STRING NOT NULL, predicted STRING, probability DOUBLE "
        "NOT NULL, subset STRING NOT NULL"
    )


def _score_partition(examples, bc_model, set_of):
    model: BackoffModel = bc_model.value
    centre = len(model.letters) // 2
    for ex in examples:
        decision = predict(model, ex.window, set_of.get(ex.window[centre]))
        yield (
            ex.source,
            *ex.window,
            ex.window[centre],
            decision.label,
            decision.probability,
            decision.subset,
        )


def classify(
    spark, cfg: ExperimentConfig, model_dir: Location, inputs: Inputs, out: Location, overwrite: bool = False
) -> dict:
    """Score every test example of ``inputs`` with the model; write predictions and metrics; return
    the metrics: the plan (``plan_backoff_classify``), then the job (``run_backoff_classify``)."""
    return run_backoff_classify(spark, plan_backoff_classify(cfg, model_dir, inputs, out, overwrite))


def plan_backoff_classify(
    cfg: ExperimentConfig, model_dir, inputs, out, overwrite: bool = False, where: str = "spark"
) -> ClassifyPlan:
    """The plan of a backoff classify run (``spine.classifying.plan_classify``); a chain that needs a
    subset the model did not count is refused; ``where`` it scores, as ``plan_classify`` decides."""
    model_dir = location(model_dir)

    def counted_chain(manifest: dict, run: ExperimentConfig) -> ExperimentConfig:
        missing = [s for s in run.backoff if s not in manifest["subsets"]]
        if missing:
            raise OutputError(
                f"{model_dir}: the backoff chain needs subsets {', '.join(map(level_name, missing))}, "
                f"which this model did not count (it has {', '.join(map(level_name, manifest['subsets']))})"
            )
        return run

    return plan_classify(
        cfg, model_dir, inputs, out, BACKOFF_KIND, settings=counted_chain, overwrite=overwrite, where=where
    )


def run_backoff_classify(spark, plan: ClassifyPlan) -> dict:
    """Score ``plan.inputs``; write predictions, metrics.json and report.txt into ``plan.out`` (staged);
    return the metrics. With ``spark`` None (``plan.in_process``) the test examples are read and
    scored in this process (``_scored_here``): the same files."""
    started = time.time()
    cfg, model_dir, manifest, inputs, out = plan.cfg, plan.model_dir, plan.manifest, plan.inputs, plan.out
    letters = manifest["letters"]
    model, sets, majority = _scoring_model(cfg, model_dir, manifest)  # broadcast
    set_of = set_of_word(sets)
    width, lowercase = manifest["config"]["width"], manifest["config"]["lowercase"]
    read = (inputs, tuple(set_of), width, lowercase, cfg.mode)  # what the readers take, both ways
    if spark is None:
        result = _scored_here(read, cfg.max_bad_examples, model, set_of, letters)
    else:
        result = _scored_in_spark(spark, read, cfg.max_bad_examples, model, set_of, letters)
    label_counts = manifest.get("label_counts") or {}

    def metrics_of(written) -> dict:
        triples = written.counts(["gold", "predicted", "subset"])
        metrics = backoff_metrics(triples, cfg.backoff, majority)
        if len(sets) > 1:
            metrics["sets"] = per_set_metrics(triples, sets, cfg.backoff, label_counts)
        metrics["distinct_examples"] = written.distinct([c.lower() for c in letters])
        metrics["worked_examples"] = worked_examples(model, cfg.worked_examples, width)
        return metrics

    extra = {
        "model": str(model_dir),
        "test_input": str(inputs.root),
        "test_is_training_data": plan.overlap == "all",
    }
    return write_results(
        spark,
        out,
        result,
        metrics_of,
        format_classify_report,
        extra,
        started,
        empty=(BACKOFF.unit, why_empty("backoff", set_of), inputs.spec.format),
    )


def _scored_in_spark(spark, read: tuple, keep_bad: int, model, set_of: dict, letters: str) -> Scored:
    """The test examples of ``read`` (inputs, centres, width, lowercase, mode) read by Spark
    (``backoff.inputs.examples_rdd``), their statistics counted, each scored by ``_score_partition``
    with the model broadcast."""
    mode = read[-1]
    bc = spark.sparkContext.broadcast(model)
    mixed = examples_rdd(spark.sparkContext, *read, keep_bad).cache()

    def release():
        mixed.unpersist()
        bc.unpersist()

    try:
        stats, bad = split_stats(
            run_failfast(lambda: count_events(mixed.filter(is_stat)).collect(), mode), keep_bad
        )
    except BaseException:
        release()
        raise
    scored = mixed.filter(lambda r: not is_stat(r)).mapPartitions(lambda it: _score_partition(it, bc, set_of))
    predictions = spark.createDataFrame(scored, schema=prediction_ddl(letters))
    return Scored(
        predictions,
        lambda: {"input_stats": stats, "malformed_examples": bad},
        release,
        scored.getNumPartitions,
    )


def _scored_here(read: tuple, keep_bad: int, model, set_of: dict, letters: str) -> Scored:
    """``_scored_in_spark`` in this process: the examples read by the Spark readers' own partition
    functions over the local files (``backoff.inputs.local_examples``), their statistics summed as
    ``count_events`` sums them (``spine.counting.combine_partition``), each scored by the same
    ``_score_partition``; the predictions a pyarrow Table of the same schema."""
    from types import SimpleNamespace

    from nbspark.backoff.inputs import local_examples

    def score(examples):
        return _score_partition(examples, SimpleNamespace(value=model), set_of)

    records = local_examples(*read, keep_bad)
    predictions, stats, bad = scored_here(records, score, prediction_ddl(letters), read[-1], keep_bad)
    return Scored(predictions, lambda: {"input_stats": stats, "malformed_examples": bad})


def _scoring_model(cfg: ExperimentConfig, model_dir, manifest: dict):
    """``(model, confusion sets, majority label)`` of a classify run: the model built in the driver
    from its rows of ``cfg``'s chain, read as ``nbspark.load`` reads them (checked whole:
    ``storage.counts``, no negative count, no key twice; no Spark job); the majority is training's
    most frequent word (the baseline)."""
    letters, chain = manifest["letters"], set(cfg.backoff)
    rows = [r for r in read_count_rows(model_dir, count_ddl(letters), manifest) if r[0] in chain]
    label_counts = manifest.get("label_counts") or {}
    majority = min(label_counts, key=lambda k: (-label_counts[k], k)) if label_counts else None
    return build_model(rows, letters, cfg.backoff), confusion_sets(manifest["config"]), majority


def metrics_in_process(cfg: ExperimentConfig, model_dir, examples: list) -> dict:
    """A classify run's accuracy, baseline and per-level table without Spark and without writing
    predictions (a learning curve's point): test ``examples`` (``Example`` records, read once by
    ``backoff.inputs.local_examples``) scored by the job's own rule (``_score_partition``) and
    counted as its metrics count them (``report.metrics.backoff_metrics``)."""
    from collections import Counter
    from types import SimpleNamespace

    model_dir = location(model_dir)
    model, sets, majority = _scoring_model(cfg, model_dir, load_manifest(model_dir, BACKOFF_KIND))
    scored = _score_partition(examples, SimpleNamespace(value=model), set_of_word(sets))
    triples = Counter((row[-4], row[-3], row[-1]) for row in scored)  # gold, predicted, deciding subset
    return backoff_metrics([(*k, n) for k, n in triples.items()], cfg.backoff, majority)


def per_set_metrics(triples, sets, chain, label_counts) -> list[dict]:
    """One row per confusion set: its test examples, accuracy and majority baseline (the
    set's most frequent word in training)."""
    rows = []
    for words in sets:
        majority = min(words, key=lambda w: (-label_counts.get(w, 0), w))
        m = backoff_metrics([t for t in triples if t[0] in words], chain, majority)
        rows.append(
            {
                "set": list(words),
                **{
                    k: m[k]
                    for k in (
                        "examples",
                        "correct",
                        "accuracy",
                        "majority_label",
                        "majority_baseline",
                        "gold_labels",
                    )
                },
            }
        )
    return rows


def worked_examples(model: BackoffModel, patterns, width: int) -> list[dict]:
    """How the model decides each ``"w w _ w w"`` pattern, with the levels it passed."""
    out = []
    for pattern in patterns:
        window = parse_pattern(pattern, width)
        decision = predict(model, window)
        passed = (
            list(model.chain[: model.chain.index(decision.subset)])
            if decision.subset in model.chain
            else list(model.chain)
        )
        shown = " ".join(
            w if model.letters[i] in decision.subset or i == width // 2 else "_" for i, w in enumerate(window)
        )
        out.append(
            {
                "pattern": pattern,
                "predicted": decision.label,
                "probability": decision.probability,
                "subset": decision.subset,
                "unseen_at": passed,
                "context_used": shown,
            }
        )
    return out
