"""A model's versions committed beside the train: counts made in this process committed as the next
version (``commit_counts``: ``partial_fit``, ``update`` and ``save``), and compaction, which sums a
model's base and deltas into a new base of the same version (``compact``: a stream's, in Spark; past
``COMPACT_EVERY`` deltas a ``save`` compacts by pyarrow), so that reads stay fast after thousands
of versions. Where versions lie on disk and who may write is ``storage.versions``; a stream's
micro-batches commit theirs in ``spine.streaming``.
"""

from __future__ import annotations

import logging
import time

from nbspark.spark.session import cache_coalescable
from nbspark.spine.counting import Counted
from nbspark.spine.training import Family, read_counts, write_counts
from nbspark.storage.counts import read_count_table
from nbspark.storage.locations import Location, location
from nbspark.storage.manifests import (
    fold_stream_updates,
    load_manifest,
    manifest_header,
    merged_manifest,
    model_version,
)
from nbspark.storage.tables import parquet_rows
from nbspark.storage.versions import DELTA, delta_location, take_writer_lock

__all__ = ["COMPACT_EVERY", "commit_counts", "compact", "compaction_due", "counted_here"]

log = logging.getLogger("nbspark")

#: The manifest fields a compaction counts again (the sums over parts are upper bounds, or exact).
RECOUNTED = ("features", "distinct_events", "label_counts", "total", "distinct_rows", "values")
#: Deltas past which a stream (unless ``--compact-every``) or a ``save()`` compacts its model (reads
#: sum this many parts at most).
COMPACT_EVERY = 100


def compaction_due(old: dict, every: int) -> bool:
    """Whether a version committed on top of the manifest ``old`` leaves ``every`` deltas or more:
    ``old``'s parts are its base and its deltas, one fewer than the deltas after the commit."""
    return len(old.get("parts", [None])) >= every


def compact(spark, model, family: Family, cfg) -> dict | None:
    """Sum a model's base and deltas into a new base of the same version (the deltas go with the old
    base); the new manifest, or None when there is nothing to fold. The fields that were upper
    bounds (``features``, ``distinct_events``) are counted again."""
    model = location(model)
    old = load_manifest(model, family.kind)
    if "parts" not in old:
        return None
    counts = cache_coalescable(read_counts(spark, model, family, old))  # not 200 partitions of a small sum
    counted = Counted(old["engine"], counts, {}, [], cached=counts)
    try:

        def fields(written) -> dict:
            return family.fields(spark, cfg, counted, written, True)

        return _fold(spark, model, old, counts, fields, cfg.rows_per_file)
    finally:
        counted.release()


def _fold(spark, model: Location, old: dict, counts, fields_of, rows_per_file: int) -> dict:
    """Write ``counts`` (the model's parts summed: a DataFrame, or a pyarrow table where ``spark`` is
    None) as the model's new base, its manifest ``old``'s with the parts folded and the ``RECOUNTED``
    fields from ``fields_of(written)``; the new manifest. The one compaction of a stream and a save."""
    started = time.time()

    def manifest_of(stage, written):
        manifest = {k: v for k, v in old.items() if k not in ("parts", "bounds")}
        manifest["updates"] = fold_stream_updates(old.get("updates", []))
        fields = fields_of(written)
        manifest.update({k: fields[k] for k in RECOUNTED if k in fields})
        manifest["count_rows"] = parquet_rows(stage / "counts")
        manifest["compacted"] = {"parts": len(old["parts"]), "seconds": round(time.time() - started, 2)}
        return manifest

    manifest = write_counts(spark, counts, model, "model", rows_per_file, None, manifest_of)
    log.info("compacted %s: %d parts into one (version %d)", model, len(old["parts"]), manifest["version"])
    return manifest


def counted_here(
    kind: str, config, fields: dict, count_schema: str, stage, stats: dict, engine: str, started
):
    """The manifest of counts made in this process by ``engine`` (``partial_fit``, ``update``; no
    input files), written to ``stage`` since ``started``: the header of ``config``, the family's
    ``fields`` of the table, its schema and rows, ``stats``. A delta's (``commit_counts``) and a
    whole model's (``naive_bayes.estimator.NaiveBayes.save``)."""
    return {
        **manifest_header(kind, config),
        "engine": engine,
        **fields,
        "count_schema": count_schema,
        "count_rows": parquet_rows(stage / "counts"),
        "inputs": {"format": engine, "root": "python", "files": [], "signatures": []},
        "stats": stats,
        "malformed_examples": [],
        "seconds": round(time.time() - started, 2),
    }


def commit_counts(
    model_dir, kind: str, table, fields_of, stats: dict, engine: str
) -> tuple[dict, dict | None]:
    """Commit counts made in this process (``partial_fit``, ``update``: a pyarrow ``table`` in the
    model's count schema) as the model's next version, a delta (``storage.versions``), under the
    model's writer lock. ``fields_of(table)`` gives the family's manifest fields of a count table;
    ``stats`` are these counts' statistics. Past ``COMPACT_EVERY`` deltas the version is compacted
    here, still under the lock (the parts summed by pyarrow), as a stream compacts its own:
    ``(the delta's manifest, the compacted manifest or None)``."""
    started = time.time()
    model_dir = location(model_dir)
    release = take_writer_lock(model_dir)
    try:
        old = load_manifest(model_dir, kind)
        version = model_version(old) + 1

        def manifest_of(stage, written):
            fields = fields_of(table)
            manifest = counted_here(
                kind, old["config"], fields, old["count_schema"], stage, stats, engine, started
            )
            return {**merged_manifest(None, manifest), "version": version}

        rows_per_file = old["config"].get("rows_per_file", 1 << 62)
        delta = write_counts(
            None, table, delta_location(model_dir, version), DELTA, rows_per_file, None, manifest_of
        )
        if not compaction_due(old, COMPACT_EVERY):
            return delta, None
        newest = load_manifest(model_dir, kind)
        summed = read_count_table(model_dir, old["count_schema"], newest)
        return delta, _fold(
            None, model_dir, newest, summed, lambda _written: fields_of(summed), rows_per_file
        )
    finally:
        release()
