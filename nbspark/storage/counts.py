"""A model's count table read without Spark (pyarrow), after the same checks as the jobs': the
marker, the part files' schema, the rows against the manifest's ``count_rows``."""

from __future__ import annotations

from nbspark.storage.locations import Location
from nbspark.storage.tables import check_table, ddl_columns, read_arrow

__all__ = ["read_count_rows", "read_count_table"]


def read_count_rows(model_dir: Location, ddl: str, manifest: dict) -> list[tuple]:
    """The count table's rows as tuples in the schema's column order, after the same checks as the jobs'."""
    table = read_count_table(model_dir, ddl, manifest)
    return list(zip(*(column.to_pylist() for column in table.columns)))


def read_count_table(model_dir: Location, ddl: str, manifest: dict):
    """The count table as one pyarrow Table, its columns in the schema's order, after the same
    checks as the jobs'."""
    return read_arrow(
        check_table(model_dir / "counts", ddl, manifest.get("count_rows")), list(ddl_columns(ddl))
    )
