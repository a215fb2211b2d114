"""A ``CountingNaiveBayes`` model's counts as an nbspark model directory and back: the count table
and manifest it saves (``counts_table``), the ``Counts`` read from one (``read_counts``: its own
``PATH/nbspark``, or a model trained by ``nbspark train``, ``model_dir_counts``), and the names of
its label values (``label_namer``).

Label values are numbers in a Pipeline (``StringIndexer``'s 0, 1, …) and names everywhere else. A
model fitted on an indexed label column writes the indexer's names into its count table and
``label_names`` into its manifest, so ``nbspark.load`` gives ``classes_`` as names; reading it
back maps the names to their values again. A model directory's classes become the values 0, 1, …
in ``classes_`` order."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

import numpy as np

from nbspark._version import __version__
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.settings.capabilities import TEXT_MODELS
from nbspark.settings.config import ExperimentConfig, NBSpec
from nbspark.storage.manifests import NB_KIND, SCHEMA_VERSION

__all__ = ["Counts", "counts_table", "label_namer", "model_dir_counts", "read_counts"]


@dataclass(frozen=True)
class Counts:
    """What fitting counted: the classes (label values, ascending), their (weighted) documents,
    the features (tokens, or vector indices as strings) and ``C[class, feature]`` (weighted term
    counts for multinomial, documents containing the feature for Bernoulli)."""

    classes: tuple[float, ...]
    class_count: np.ndarray
    features: tuple[str, ...]
    counts: np.ndarray
    vectors: bool
    declared: int = 0  # the classes the label column's MLlib metadata declares (StringIndexer's), 0 if none
    names: tuple[str, ...] = ()  # label value i's name (StringIndexer's labels, a model dir's classes)
    prior_alpha: float | None = None  # the class prior's smoothing: None is MLlib's (the smoothing λ)
    tokenizer: str = "words"  # how a features column of strings is split (a model dir's tokenizer)

    def weighted(self) -> bool:
        return not (
            np.all(self.class_count == np.round(self.class_count))
            and np.all(self.counts == np.round(self.counts))
        )


def label_namer(counts: Counts):
    """Label value -> the name the count table gives it: its name where the labels have names, else
    the value as text (``repr``: ``'1.0'``)."""
    names = counts.names
    return lambda y: names[int(y)] if int(y) < len(names) else repr(float(y))


def counts_table(c: Counts, kind: str, smoothing: float):
    """The counts as an nbspark count table (``n`` the rounded count, ``sum`` the exact weighted
    one) and its manifest, for ``ml.persist.CountsWriter``."""
    import pyarrow as pa

    name = label_namer(c)
    rows = [("Y=ANY", None, None, float(c.class_count.sum()))]
    rows += [("Y", name(y), None, float(n)) for y, n in zip(c.classes, c.class_count)]
    nz = np.nonzero(c.counts)
    rows += [("YX", name(c.classes[i]), c.features[j], float(c.counts[i, j])) for i, j in zip(*nz)]
    if kind in ("multinomial", "complement"):
        rows += [("YX=ANY", name(y), None, float(t)) for y, t in zip(c.classes, c.counts.sum(axis=1))]
    table = pa.table(
        {
            "event": [r[0] for r in rows],
            "label": [r[1] for r in rows],
            "feature": [r[2] for r in rows],
            "value": pa.nulls(len(rows), pa.string()),
            "n": [int(round(r[3])) for r in rows],
            "sum": [r[3] for r in rows],
            "sumsq": pa.nulls(len(rows), pa.float64()),
        }
    )
    return table, _manifest(c, kind, smoothing, len(rows))


def _manifest(c: Counts, kind: str, smoothing: float, rows: int) -> dict:
    mllib = 0.0 if kind == "complement" else smoothing  # MLlib's prior; its complement has none
    prior = mllib if c.prior_alpha is None else c.prior_alpha
    nb = NBSpec(model=kind, alpha=smoothing, prior_alpha=prior, tokenizer=c.tokenizer)
    return {
        "kind": NB_KIND,
        "schema_version": SCHEMA_VERSION,
        "nbspark_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "config": ExperimentConfig(task="naive_bayes", name="pyspark.ml", nb=nb).to_dict(),
        "engine": "pyspark.ml",
        "model": kind,
        "columns": {},
        "weighted": c.weighted(),
        "vectors": c.vectors,
        "declared_classes": c.declared,
        "label_counts": {label_namer(c)(y): float(n) for y, n in zip(c.classes, c.class_count)},
        "label_names": list(c.names),
        # unnamed label values are numbers: nbspark.load gives them back as MLlib's prediction does
        **({} if c.names else {"label_numbers": {label_namer(c)(y): float(y) for y in c.classes}}),
        "prior_follows_smoothing": c.prior_alpha is None,
        "features": len(c.features),
        "count_schema": COUNT_DDL,
        "count_rows": rows,
        "stats": {},
        "malformed_examples": [],
    }


def read_counts(root, manifest: dict) -> Counts:
    """The ``Counts`` of a checked ``PATH/nbspark`` or model directory, read through its storage as
    ``nbspark.load`` reads a model (any scheme: ``hdfs:``, ``s3a:``, ``viewfs:``). Labels named in
    the count table (``label_names``, or a model directory's classes) become the values 0, 1, … in
    that order."""
    from nbspark.storage.counts import read_count_rows
    from nbspark.storage.tables import ddl_columns

    columns = list(ddl_columns(COUNT_DDL))
    rows = [dict(zip(columns, r)) for r in read_count_rows(root, COUNT_DDL, manifest)]
    written = sorted({r["label"] for r in rows if r["event"] == "Y"})
    names = manifest.get("label_names") or ([] if _values(written) else written)
    value = {n: float(i) for i, n in enumerate(names)} or {y: float(y) for y in written}
    classes = tuple(sorted(value[y] for y in written))
    cidx = {y: i for i, y in enumerate(classes)}
    vectors = manifest.get("vectors", False)
    features = sorted({r["feature"] for r in rows if r["event"] == "YX"}, key=int if vectors else str)
    if vectors:
        features = [str(i) for i in range(manifest["features"])]
    fidx = {f: i for i, f in enumerate(features)}
    class_count, counts = np.zeros(len(classes)), np.zeros((len(classes), len(features)))
    for r in rows:
        n = r["sum"] if r["sum"] is not None else r["n"]  # a train job's table: integer counts in n
        if r["event"] == "Y":
            class_count[cidx[value[r["label"]]]] = n
        elif r["event"] == "YX":
            counts[cidx[value[r["label"]]], fidx[r["feature"]]] = n
    nb = manifest["config"]["nb"]
    follows = manifest.get("prior_follows_smoothing", manifest.get("engine") == "pyspark.ml")
    return Counts(
        classes,
        class_count,
        tuple(features),
        counts,
        vectors,
        manifest.get("declared_classes", len(names)),
        tuple(names),
        None if follows else float(nb.get("prior_alpha", 0.0)),
        nb.get("tokenizer", "words"),
    )


def model_dir_counts(path) -> tuple[Counts, float, str]:
    """``(counts, smoothing, model type)`` of a text model trained by ``nbspark train`` (or the train
    job), read and checked as ``nbspark.load`` reads it; refused with one line when a pyspark.ml
    stage cannot score it as ``nbspark.load`` does."""
    from nbspark.ml.persist import model_dir_manifest

    root, manifest = model_dir_manifest(path, NB_KIND)
    nb, kind = manifest["config"]["nb"], manifest["model"]
    if kind not in ("multinomial", "bernoulli"):
        raise ValueError(
            f"fromModelDir takes a multinomial or Bernoulli text model; {path} holds a {kind} model "
            "(nbspark.load scores it"
            + (
                "; CountingTableNaiveBayesModel.fromModelDir makes it a stage)"
                if kind not in TEXT_MODELS
                else ")"
            )
        )
    if nb.get("unseen", "drop") != "drop" or nb.get("norm"):
        raise ValueError(
            f"fromModelDir scores as MLlib does (unseen words dropped, no norm); {path} was trained "
            f"with unseen={nb.get('unseen')!r}, norm={nb.get('norm')!r} (nbspark.load scores it)"
        )
    return read_counts(root, manifest), float(nb["alpha"]), kind


def _values(labels) -> bool:
    """Whether every label is a label value as text (``'0.0'``, ``'1'``): a model saved without names."""
    try:
        return all(float(y) == int(float(y)) >= 0 for y in labels)
    except ValueError:
        return False
