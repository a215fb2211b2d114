"""The naive Bayes family's jobs: train (count documents or table rows) and classify (score with
the model's smoothing).

Record shapes: train, ``Doc`` / ``Row`` -> ``((event, label, feature, value), count | (n, Σx,
Σx²))`` -> ``counts/`` (``naive_bayes.events.COUNT_DDL``) + ``manifest.json``; classify, ``counts/`` -> the
scorer
(``naive_bayes.scoring``) -> ``predictions/`` (``naive_bayes.scoring.PREDICTION_DDL``) -> ``metrics.json``,
``report.txt``.
"""

from __future__ import annotations

import dataclasses
import time

from nbspark.errors import ConfigError, InputError
from nbspark.inputs.resolve import Inputs
from nbspark.naive_bayes.count import count_nb
from nbspark.naive_bayes.count_table import table_fields
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.naive_bayes.model import build_nb_model
from nbspark.naive_bayes.scoring import RANKED, score, score_here
from nbspark.report.metrics import LOG_EPS, classification_metrics, format_classification_report, pr_curve
from nbspark.report.plots import plot_pr_curve
from nbspark.settings.capabilities import TEXT_MODELS, one_label
from nbspark.settings.config import ExperimentConfig
from nbspark.settings.naive_bayes import SAME_COUNTS, model_options, refuse_unused
from nbspark.spine.classifying import ClassifyPlan, plan_classify, write_results
from nbspark.spine.training import (
    Family,
    plan_training,
    read_counts,
    train_in_process,
    train_model,
    why_empty,
)
from nbspark.storage.counts import is_arrow_table, read_count_table
from nbspark.storage.locations import Location
from nbspark.storage.manifests import NB_KIND, load_manifest
from nbspark.storage.tables import write_json

__all__ = [
    "NAIVE_BAYES",
    "SCORING",
    "SMOOTHING",
    "binary_decision",
    "posteriors_of",
    "classify_nb",
    "load_nb_manifest",
    "model_settings",
    "plan_nb_classify",
    "run_nb_classify",
    "train_nb",
    "train_nb_in_process",
]

#: Settings applied at scoring time from the same counts: the model's unless the caller overrides them.
SMOOTHING = ("alpha", "prior_alpha", "var_smoothing", "unseen", "norm", "domains", "preset")
#: The smoothing settings a text model's metrics report, by kind.
_TEXT_SMOOTHING = {
    "complement": ("alpha", "norm", "preset"),
    "*": ("alpha", "prior_alpha", "unseen", "preset"),
}
#: Settings of the classify run itself, never the model's.
SCORING = ("top_k", "multilabel_threshold", "positive_label", "decision_threshold", "posteriors")


def _fields(spark, cfg: ExperimentConfig, counted, read_written, updated: bool) -> dict:
    """The naive Bayes manifest's own fields; label counts and features come from the engine
    when it summed them (SQL engines, new models), else from the written table."""
    known = counted.known
    if "label_counts" in known and not updated:
        labels, features = known["label_counts"], known["features"]
    elif is_arrow_table(written := read_written()):  # written by this process (spine.training.write_counts)
        got = table_fields(written)
        labels, features = got["label_counts"], got["features"]
    else:
        labels = {
            r["label"]: r["n"] for r in written.where(written.event == "Y").select("label", "n").collect()
        }
        features = written.where(written.event.isin("YX", "YG")).select("feature", "value").distinct().count()
    return {
        "model": cfg.nb.model,
        "columns": known.get("columns", {}),
        "label_counts": dict(sorted(labels.items())),
        "features": features,
    }


def _model_columns(manifest: dict, cfg: ExperimentConfig) -> ExperimentConfig:
    """``cfg`` reading a table with the model's columns, inferred ones too: a new inference over an
    update's rows could read a column the model counted as categorical as numbers (or the reverse)."""
    columns = manifest.get("columns") or {}
    if not columns:
        return cfg
    nb = dataclasses.replace(
        cfg.nb,
        numeric_columns=tuple(columns.get("numeric", ())),
        categorical_columns=tuple(columns.get("categorical", ())),
    )
    return dataclasses.replace(cfg, nb=nb)


def _refuse_matrix_models(manifest: dict, cfg: ExperimentConfig) -> None:
    """A model fitted on a count matrix (``nbspark.NaiveBayes.fit``) is refused to a job's update (a
    stream, ``--update``): its vocabulary is the matrix's columns, and an input's words would be
    features of no column, in every score of a matrix (``NBPredictor`` refuses texts by that rule)."""
    if manifest.get("matrix_columns") is not None:
        raise InputError(
            f"cannot update: the model was fitted on a count matrix of {manifest['matrix_columns']} "
            "columns (nbspark.NaiveBayes), and learns only such rows: nbspark.load(M).partial_fit(X, y), "
            "then save()"
        )


NAIVE_BAYES = Family(
    kind=NB_KIND,
    task="naive_bayes",
    count=count_nb,
    ddl=lambda config: COUNT_DDL,
    sums=("n", "sum", "sumsq"),
    unit="documents",
    update_keys=(
        "nb.model",
        "nb.tokenizer",
        "nb.labels",
        "nb.label_column",
        "nb.numeric_columns",
        "nb.categorical_columns",
        "nb.bernoulli_columns",
    ),
    fields=_fields,
    update_settings=_model_columns,
    check_old=_refuse_matrix_models,
)


def load_nb_manifest(model_dir: Location) -> dict:
    return load_manifest(model_dir, NB_KIND)


def train_nb(
    spark,
    cfg: ExperimentConfig,
    inputs: Inputs,
    out: Location,
    update: bool = False,
    force: bool = False,
    overwrite: bool = False,
) -> dict:
    """Count naive Bayes events of ``inputs`` into the model ``out``; return its manifest."""
    return train_model(
        spark, plan_training(cfg, inputs, out, NAIVE_BAYES, update, force, overwrite), NAIVE_BAYES
    )


def train_nb_in_process(
    cfg: ExperimentConfig, out, data_dir: str | None = None, overwrite: bool = False
) -> dict:
    """Count ``cfg.train`` into the naive Bayes model ``out`` in this process, no Spark and no JVM:
    ``spine.training.train_in_process`` with this family, counting by the arrow engine's rule
    (``naive_bayes.count``'s ``local``) over local files; the manifest."""
    return train_in_process(cfg, NAIVE_BAYES, out, data_dir, overwrite)


def model_settings(
    manifest: dict, cfg: ExperimentConfig, overrides: frozenset[str] = frozenset()
) -> ExperimentConfig:
    """``cfg`` with the naive Bayes settings of the model: tokenizer, label view and table columns
    always (the features must be made as in training), the smoothing (``SMOOTHING``) unless its
    ``nb.KEY`` is in ``overrides`` (set explicitly for this run). Scoring settings stay the run's. A
    multinomial model may be read as a complement one and the reverse (``nb.model`` in
    ``overrides``): the counts are the same."""
    model_nb = {
        k: tuple(v) if isinstance(v, list) else v for k, v in manifest["config"]["nb"].items()
    }  # JSON lists: the config's tuples
    kind = manifest["model"]
    if "nb.model" in overrides and {cfg.nb.model, kind} <= set(SAME_COUNTS):
        kind = model_nb["model"] = cfg.nb.model
    refuse_unused(kind, [k[3:] for k in overrides if k.startswith("nb.")], "the model", "nb.")
    fields = {f.name for f in dataclasses.fields(cfg.nb)}
    values = {k: v for k, v in model_nb.items() if k not in SMOOTHING and k not in SCORING and k in fields}
    fixed = [k for k, v in values.items() if f"nb.{k}" in overrides and getattr(cfg.nb, k) != v]
    if fixed:  # the model's features are made as in training: a run cannot change how
        raise ConfigError(
            f"{', '.join(f'nb.{k} = {getattr(cfg.nb, k)!r}' for k in fixed)}: the model was trained with "
            f"{', '.join(f'{values[k]!r}' for k in fixed)}, which its scoring must use; train a model "
            "with yours"
        )
    if "nb.preset" in overrides:  # a preset named for this run sets what it names
        overrides = overrides | {f"nb.{k}" for k in ("alpha", "prior_alpha", "unseen", "norm")}
    for key in SMOOTHING:
        if f"nb.{key}" not in overrides and key in model_nb:
            values[key] = model_nb[key]
    nb = dataclasses.replace(cfg.nb, **values)
    return _model_columns(manifest, dataclasses.replace(cfg, nb=nb))


def classify_nb(
    spark,
    cfg: ExperimentConfig,
    model_dir: Location,
    inputs: Inputs,
    out: Location,
    overrides: frozenset[str] = frozenset(),
    overwrite: bool = False,
) -> dict:
    """Score the test records of ``inputs``; write predictions, metrics.json and report.txt: the
    plan (``plan_nb_classify``), then the job (``run_nb_classify``)."""
    return run_nb_classify(spark, plan_nb_classify(cfg, model_dir, inputs, out, overrides, overwrite))


def plan_nb_classify(
    cfg: ExperimentConfig,
    model_dir,
    inputs,
    out,
    overrides: frozenset[str] = frozenset(),
    overwrite: bool = False,
    where: str = "spark",
) -> ClassifyPlan:
    """The plan of a naive Bayes classify run (``spine.classifying.plan_classify``). The smoothing is
    the model's unless ``overrides`` names ``nb.alpha`` / ``nb.var_smoothing`` (``--set`` on the
    command line); ``cfg.scoring`` picks the scorer, ``join`` past ``broadcast_limit_mb`` of model;
    ``where`` it scores, as ``plan_classify`` decides."""
    plan = plan_classify(
        cfg,
        model_dir,
        inputs,
        out,
        NB_KIND,
        settings=lambda manifest, run: model_settings(manifest, run, overrides),
        model_bytes=lambda manifest: len(manifest["label_counts"]) * manifest["features"] * 8,
        overwrite=overwrite,
        where=where,
    )
    binary = _binary(plan.cfg, tuple(sorted(plan.manifest["label_counts"])))
    return dataclasses.replace(plan, details={"binary": binary, "one_label": one_label(plan.cfg)})


def run_nb_classify(spark, plan: ClassifyPlan) -> dict:
    """Score ``plan.inputs`` with ``plan.scorer``; write predictions, metrics.json and report.txt into
    ``plan.out`` (staged); return the metrics."""
    started = time.time()
    cfg, model_dir, manifest, inputs, scoring = (
        plan.cfg,
        plan.model_dir,
        plan.manifest,
        plan.inputs,
        plan.scorer,
    )
    overlap, out, binary = plan.overlap, plan.out, plan.details["binary"]
    kind = cfg.nb.model  # the model's kind, or the one it is read as (model_settings)
    text_model = kind in TEXT_MODELS
    counts = model = None
    if scoring == "join":  # the count table joined to the test events in Spark
        counts = read_counts(spark, model_dir, NAIVE_BAYES, manifest)
    else:
        # broadcast and arrow scoring ship the model as arrays: its rows read as nbspark.load reads them (no
        # Spark job)
        table = read_count_table(model_dir, COUNT_DDL, manifest)
        model = build_nb_model(table, kind, **model_options(dataclasses.asdict(cfg.nb)))
    classes = model.classes if model is not None else tuple(sorted(manifest["label_counts"]))
    if spark is None:  # planned in process: no binary decision, no join (classify_here_problem)
        scored = score_here(cfg, inputs, scoring, model, len(classes))
    else:
        scored = score(spark, cfg, inputs, scoring, counts, model, len(classes))
    if binary:
        scored.predictions = binary_decision(scored.predictions, *binary, cfg.nb.decision_threshold)
    if plan.details["one_label"]:  # written as strings, read back by the metrics as lists of one
        scored.scalars = ("gold", "predicted")
    all_kept = cfg.nb.posteriors == "all" or len(classes) <= RANKED

    def metrics_of(written) -> dict:
        written.preload(["gold", "predicted", *LOSS_COLUMNS])
        pairs = written.counts(["gold", "predicted"])
        metrics = classification_metrics(pairs, classes)
        metrics["unknown_label_count"] = sum(n for g, _, n in pairs if any(x not in classes for x in g))
        losses = written.totals(LOSS_COLUMNS, _arrow_losses, _spark_losses)
        metrics.update(_probability_metrics(written, losses, binary, cfg.nb.decision_threshold, all_kept))
        return metrics

    extra = {
        "model": str(model_dir),
        "kind": kind,
        "scoring": scoring,
        "smoothing": {
            k: getattr(cfg.nb, k)
            for k in (
                SMOOTHING
                if not text_model
                else ("alpha", "norm", "preset")
                if kind == "complement"
                else ("alpha", "prior_alpha", "unseen", "preset")
            )
        },
        "test_input": str(inputs.root),
        "test_is_training_data": overlap == "all",
        "broadcast_bytes": None if model is None else model.nbytes(),
        "classes": list(classes),
    }
    return write_results(
        spark,
        out,
        scored,
        metrics_of,
        format_classification_report,
        extra,
        started,
        _pr_files,
        empty=(NAIVE_BAYES.unit, why_empty("naive_bayes"), inputs.spec.format),
    )


def _binary(cfg: ExperimentConfig, classes: tuple[str, ...]) -> tuple[str, str] | None:
    """``(positive, other)`` for a binary decision (``nb.positive_label``), refused unless the model has
    exactly two classes, the positive one among them."""
    pos = cfg.nb.positive_label
    if not pos:
        return None
    if len(classes) != 2 or pos not in classes:
        raise ConfigError(
            f"nb.positive_label = {pos!r} needs a model of two classes, one of them {pos!r}; this model "
            f"has {list(classes)[:10]}"
        )
    return pos, next(c for c in classes if c != pos)


def binary_decision(predictions, positive: str, other: str, threshold: float):
    """Predict ``positive`` when its posterior is > ``threshold`` (MLlib's ``thresholds`` on two
    classes), else ``other``; ``probability`` is the predicted class's posterior. One rule,
    ``_decided``, for a pyarrow Table (scored in process) and a DataFrame (each of its Arrow
    batches: ``mapInArrow``)."""
    import pyarrow as pa

    if is_arrow_table(predictions):
        decided = [_decided(b, positive, other, threshold) for b in predictions.to_batches()]
        return pa.Table.from_batches(decided, predictions.schema)
    return predictions.mapInArrow(
        lambda batches: (_decided(b, positive, other, threshold) for b in batches), predictions.schema
    )


def _decided(batch, positive: str, other: str, threshold: float):
    """``binary_decision`` of a record batch of predictions: ``predicted`` (a list of one) and
    ``probability`` replaced. A posterior of ``positive`` that is not kept is no yes (Spark's null
    comparison); a NaN one is (Spark orders NaN above every number)."""
    import numpy as np
    import pyarrow as pa

    p_pos, has_pos = posteriors_of(batch, positive)
    p_other, has_other = posteriors_of(batch, other)
    yes = has_pos & ((p_pos > threshold) | np.isnan(p_pos))
    one_each = pa.array(np.arange(batch.num_rows + 1, dtype=np.int32))
    predicted = pa.ListArray.from_arrays(one_each, pa.array(np.where(yes, positive, other), pa.string()))
    probability = pa.array(
        np.where(yes, p_pos, p_other), pa.float64(), mask=~np.where(yes, has_pos, has_other)
    )
    for name, values in (("predicted", predicted), ("probability", probability)):
        at = batch.schema.get_field_index(name)
        batch = batch.set_column(at, batch.schema.field(at), values.cast(batch.schema.field(at).type))
    return batch


def posteriors_of(table, wanted) -> tuple:
    """Each prediction's kept posterior of ``wanted`` (one label for every row, or a pyarrow array of a
    label a row, null: none), found by position in ``ranked_labels`` (the first match, as Spark's
    ``array_position``) and read from ``ranked_probabilities`` (as long as it, as the scorers write
    them), in a pyarrow Table or record batch: ``(values, kept)``, numpy arrays; a row whose label is
    not among its ranked ones, or whose posterior there is null, is not kept (its value 0)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    def whole(name):
        column = table.column(name)
        return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column

    labels, n = whole("ranked_labels"), table.num_rows
    parent = pc.list_parent_indices(labels).to_numpy()
    per_value = wanted if isinstance(wanted, str) else pc.take(wanted, pa.array(parent))
    hit = pc.fill_null(pc.equal(pc.list_flatten(labels), per_value), False).to_numpy(zero_copy_only=False)
    at = np.flatnonzero(hit)
    rows, once = np.unique(parent[at], return_index=True)  # a row's first match
    probs = pc.list_flatten(whole("ranked_probabilities")).take(pa.array(at[once], pa.int64()))
    valid = probs.is_valid().to_numpy(zero_copy_only=False)
    values, kept = np.zeros(n), np.zeros(n, bool)
    values[rows[valid]] = probs.to_numpy(zero_copy_only=False)[valid]
    kept[rows[valid]] = True
    return values, kept


def _posterior_of(label):
    """A prediction's kept posterior of ``label`` (a column), from the ranked columns; null when
    ``label`` is not among them: ``posteriors_of``'s rule in Spark SQL, for log-loss over predictions
    too large to read in the driver (tests hold them equal)."""
    from pyspark.sql import functions as F

    at = F.array_position("ranked_labels", label)
    return F.when(at > 0, F.element_at("ranked_probabilities", at.cast("int")))


#: the predictions' columns that log-loss reads
LOSS_COLUMNS = ["gold", "ranked_labels", "ranked_probabilities"]


def _spark_losses() -> list:
    """The log-loss totals of written predictions as Spark aggregate columns: the predictions
    (``n``), those with other than one gold label (``multi``), those whose first gold label's
    posterior was not kept (``missing``), and Σ −log P(gold) (``loss``), P clipped to [LOG_EPS, 1]
    as scikit-learn's log_loss clips (a posterior not kept counts as 0). ``_arrow_losses`` is the
    same rule in pyarrow."""
    from pyspark.sql import functions as F

    gold = _posterior_of(F.get("gold", 0))
    clipped = F.greatest(F.least(F.coalesce(gold, F.lit(0.0)), F.lit(1.0)), F.lit(LOG_EPS))
    return [
        F.count(F.lit(1)).alias("n"),
        F.count_if(F.size("gold") != 1).alias("multi"),
        F.count_if(gold.isNull()).alias("missing"),
        F.coalesce(F.sum(-F.log(clipped)), F.lit(0.0)).alias("loss"),
    ]


def _arrow_losses(table) -> dict:
    """``_spark_losses`` of a pyarrow Table of ``gold``, ``ranked_labels`` and ``ranked_probabilities``
    (a list of probabilities as long as its list of labels, as the scorers write them). Spark's
    rules for nulls and NaN are kept: a null first gold label, label or probability is a posterior
    not kept; a NaN posterior is above 1 (clipped to 1)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    if not n:
        return {"n": 0, "multi": 0, "missing": 0, "loss": 0.0}
    gold = table.column("gold").combine_chunks()
    sizes = pc.list_value_length(gold)
    multi = pc.sum(pc.cast(pc.not_equal(sizes, 1), pa.int64())).as_py() or 0
    # each row's first gold label (null where it has none)
    has = pc.fill_null(pc.greater(sizes, 0), False).to_numpy(zero_copy_only=False)
    first = pc.take(gold.values, pa.array(np.where(has, np.asarray(gold.offsets)[:-1], 0), mask=~has))
    p, kept = posteriors_of(table, first)
    p = np.where(kept, np.nan_to_num(p, nan=1.0), 0.0)
    loss = float(np.sum(-np.log(np.clip(p, LOG_EPS, 1.0))))
    return {"n": n, "multi": int(multi), "missing": int(n - np.count_nonzero(kept)), "loss": loss}


def _probability_metrics(written, losses: dict, binary, threshold: float, all_kept: bool) -> dict:
    """Log-loss from the ``losses`` totals (single-label test sets whose gold posteriors were
    kept) and, for a binary decision, the precision/recall curve of the positive class (its
    posteriors collected from the ``written`` predictions)."""
    n = losses["n"]
    out: dict = {"log_loss": None}
    if not n or losses["multi"]:
        out["log_loss_note"] = "log-loss needs one gold label per document"
    elif losses["missing"] and not all_kept:
        out["log_loss_note"] = "some gold labels were not among the kept posteriors: set nb.posteriors = all"
    else:
        out["log_loss"] = losses["loss"] / n
    if binary:  # each prediction's posterior of the positive class, and whether it is a gold label
        table = written.arrow(["gold", "ranked_labels", "ranked_probabilities"])
        p, kept = posteriors_of(table, binary[0])
        positive = [
            binary[0] in gold if gold is not None else None for gold in table.column("gold").to_pylist()
        ]
        out["pr_curve"] = {
            "positive_label": binary[0],
            **pr_curve([(x if k else None, y) for x, k, y in zip(p.tolist(), kept, positive)], threshold),
        }
    return out


def _pr_files(stage: Location, metrics: dict) -> None:
    """``pr.json`` and ``pr.png`` beside the metrics of a binary decision."""
    pr = metrics.get("pr_curve")
    if not pr:
        return
    write_json(stage / "pr.json", pr)
    plot_pr_curve(pr, stage / "pr.png", f"{metrics['model']}: precision/recall of {pr['positive_label']!r}")
