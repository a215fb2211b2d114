"""What the in-process predictors of both families share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["as_batch", "summed_rows"]


def as_batch(items, what: str) -> list:
    """A predict call's items as a list. One text, window or row is refused, as scikit-learn refuses
    a lone string: iterating it would score its characters (or a row's keys), silently."""
    if isinstance(items, (str, bytes, Mapping)):
        raise TypeError(f"predict takes a list of {what}, got one {type(items).__name__}; wrap it in a list")
    return list(items)


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
