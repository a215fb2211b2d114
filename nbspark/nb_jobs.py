"""The naive Bayes family's jobs: train (count documents or table rows) and classify (score with
the model's smoothing).

Record shapes: train, ``Doc`` / ``Row`` -> ``((event, label, feature, value), count | (n, Σx,
Σx²))`` -> ``counts/`` (``nb.COUNT_DDL``) + ``manifest.json``; classify, ``counts/`` -> the scorer
(``nb_scoring``) -> ``predictions/`` (``nb_scoring.PREDICTION_DDL``) -> ``metrics.json``,
``report.txt``.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from .capabilities import resolve_scoring
from .classifying import write_results
from .config import ExperimentConfig
from .inputs import Inputs
from .manifests import NB_KIND, load_manifest
from .metrics import classification_metrics, format_classification_report
from .nb import COUNT_DDL, build_nb_model
from .nb_count import count_nb
from .nb_scoring import score
from .tables import check_output
from .training import Family, read_counts, train_model

__all__ = ["NAIVE_BAYES", "SMOOTHING", "classify_nb", "load_nb_manifest", "model_settings", "train_nb"]

#: Settings applied at scoring time from the same counts: the model's unless the caller overrides them.
SMOOTHING = ("alpha", "prior_alpha", "var_smoothing")


def _fields(spark, cfg: ExperimentConfig, counted, read_written, updated: bool) -> dict:
    """The naive Bayes manifest's own fields; label counts and features come from the engine
    when it summed them (SQL engines, new models), else from the written table."""
    known = counted.known
    if "label_counts" in known and not updated:
        labels, features = known["label_counts"], known["features"]
    else:
        written = read_written()
        labels = {r["label"]: r["n"] for r in written.where(written.event == "Y").select("label", "n").collect()}
        features = written.where(written.event.isin("YX", "YG")).select("feature", "value").distinct().count()
    return {
        "model": cfg.nb.model,
        "columns": known.get("columns", {}),
        "label_counts": dict(sorted(labels.items())),
        "features": features,
    }


NAIVE_BAYES = Family(
    kind=NB_KIND,
    count=count_nb,
    ddl=lambda config: COUNT_DDL,
    sums=("n", "sum", "sumsq"),
    unit="documents",
    update_keys=("nb.model", "nb.tokenizer", "nb.labels", "nb.label_column", "nb.numeric_columns", "nb.categorical_columns"),
    fields=_fields,
)


def load_nb_manifest(model_dir: Path) -> dict:
    return load_manifest(model_dir, NB_KIND)


def train_nb(spark, cfg: ExperimentConfig, inputs: Inputs, out: Path, update: bool = False, force: bool = False,
             overwrite: bool = False) -> dict:
    """Count naive Bayes events of ``inputs`` into the model ``out``; return its manifest."""
    return train_model(spark, cfg, inputs, out, NAIVE_BAYES, update, force, overwrite)


def model_settings(manifest: dict, cfg: ExperimentConfig, overrides: frozenset[str] = frozenset()) -> ExperimentConfig:
    """``cfg`` with the naive Bayes settings of the model: tokenizer, label view and table columns
    always (the features must be made as in training), the smoothing (``SMOOTHING``) unless its
    ``nb.KEY`` is in ``overrides`` (set explicitly for this run). Scoring settings stay the run's."""
    model_nb = manifest["config"]["nb"]
    columns = manifest.get("columns") or {}
    values = {
        **{k: v for k, v in model_nb.items() if k not in SMOOTHING and k not in ("top_k", "threshold")},
        "numeric_columns": tuple(columns.get("numeric", ())),
        "categorical_columns": tuple(columns.get("categorical", ())),
    }
    for key in SMOOTHING:
        if f"nb.{key}" not in overrides and key in model_nb:
            values[key] = model_nb[key]
    nb = dataclasses.replace(cfg.nb, **{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})
    return dataclasses.replace(cfg, nb=nb)


def classify_nb(spark, cfg: ExperimentConfig, model_dir: Path, inputs: Inputs, out: Path,
                overrides: frozenset[str] = frozenset(), overwrite: bool = False) -> dict:
    """Score the test records of ``inputs``; write predictions, metrics.json and report.txt.

    The smoothing is the model's unless ``overrides`` names ``nb.alpha`` / ``nb.var_smoothing``
    (``--set`` on the command line). ``cfg.scoring`` picks the scorer (``capabilities``). ``out``
    is checked as the command line checks it (``tables.check_output``).
    """
    started = time.time()
    out = check_output(out, overwrite, [inputs.root, model_dir])
    manifest = load_nb_manifest(model_dir)
    cfg = model_settings(manifest, cfg, overrides)
    text_model = manifest["model"] in ("multinomial", "bernoulli")
    scoring = resolve_scoring(cfg, len(manifest["label_counts"]) * manifest["features"] * 8)
    counts = read_counts(spark, model_dir, NAIVE_BAYES, manifest)
    model = None
    if scoring != "join":  # broadcast and arrow scoring both ship the model as arrays
        model = build_nb_model(counts.collect(), manifest["model"], cfg.nb.alpha, cfg.nb.var_smoothing, cfg.nb.prior_alpha)
    classes = model.classes if model is not None else tuple(sorted(manifest["label_counts"]))
    scored = score(spark, cfg, inputs, scoring, counts, model)

    def metrics_of(written) -> dict:
        pairs = [(tuple(r["gold"]), tuple(r["predicted"]), r["count"]) for r in written.groupBy("gold", "predicted").count().collect()]
        metrics = classification_metrics(pairs, classes)
        metrics["unknown_label_count"] = sum(n for g, _, n in pairs if any(x not in classes for x in g))
        return metrics

    extra = {
        "model": str(model_dir),
        "kind": manifest["model"],
        "scoring": scoring,
        "smoothing": {k: getattr(cfg.nb, k) for k in (SMOOTHING if not text_model else ("alpha", "prior_alpha"))},
        "test_input": str(inputs.root),
        "broadcast_bytes": None if model is None else model.nbytes(),
    }
    return write_results(spark, out, scored, metrics_of, format_classification_report, extra, started)
