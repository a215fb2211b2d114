"""What the in-process predictors of both families share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["accuracy", "as_batch", "save_rows", "summed_rows"]


def as_batch(items, what: str, call: str = "predict") -> list:
    """A ``call``'s items as a list. One text, window or row is refused, as scikit-learn refuses a
    lone string: iterating it would score its characters (or a row's keys), silently."""
    if isinstance(items, (str, bytes, Mapping)):
        raise TypeError(f"{call} takes a list of {what}, got one {type(items).__name__}; wrap it in a list")
    return list(items)


def accuracy(predicted: Sequence, labels, what: str) -> float:
    """The share of ``predicted`` equal to ``labels`` (scikit-learn's ``score``; NaN for none), one
    label per item of ``what`` (``ValueError`` otherwise: a shorter list would be scored in silence)."""
    labels = as_batch(labels, "labels", "score")
    if len(predicted) != len(labels):
        raise ValueError(f"score takes one label per {what}: {len(predicted)} {what}s, {len(labels)} labels")
    return sum(p == y for p, y in zip(predicted, labels)) / len(labels) if labels else float("nan")


def summed_rows(rows: Sequence[Sequence], more: Sequence[Sequence], ddl: str) -> list[tuple]:
    """Count rows in the schema ``ddl`` with ``more`` added, rows of equal keys summed by the one rule
    (``storage.counts.summed_table``): what a model's ``partial_fit`` or ``update`` adds to what it read."""
    import pyarrow as pa

    from nbspark.storage.counts import summed_table
    from nbspark.storage.tables import arrow_schema

    both = [*rows, *more]
    if not both:
        return []
    table = summed_table(pa.table([list(c) for c in zip(*both)], schema=arrow_schema(ddl)))
    return list(zip(*(column.to_pylist() for column in table.columns)))


def save_rows(path, kind: str, rows: list, ddl: str, fields, stats: dict, engine: str, manifest: dict):
    """Commit count ``rows`` made in this process (``partial_fit``, ``update``; the schema ``ddl``) as
    the next version of the model read from ``path``: a delta (``spine.streaming.commit_counts``,
    with ``fields(table)``, the family's manifest fields of the rows as a pyarrow table, and
    ``stats``). ``(version, manifest)``: the new version and
    ``manifest`` (the model's in memory) with the delta folded in; no rows, no version. A model not
    read from a directory has nowhere to save (``ValueError``)."""
    if path is None:
        raise ValueError("this model was not read from a directory (nbspark.load): there is nowhere to save")
    from nbspark.storage.manifests import folded_manifest, model_version

    if not rows:
        return model_version(manifest), manifest
    import pyarrow as pa

    from nbspark.spine.streaming import commit_counts
    from nbspark.storage.locations import location
    from nbspark.storage.tables import arrow_schema
    from nbspark.storage.versions import delta_location

    model_dir = location(path)
    table = pa.table([list(c) for c in zip(*rows)], schema=arrow_schema(ddl))
    delta = commit_counts(model_dir, kind, table, fields(table), stats, engine)
    where = delta_location(model_dir, delta["version"])
    return delta["version"], folded_manifest(manifest, delta, where, model_dir)
