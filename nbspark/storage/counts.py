"""A model's count table read without Spark (pyarrow), after the same checks as the jobs': the
marker, the part files' schema, the rows against the manifest's ``count_rows``; and, in the same
pass over the columns it loads, that counts are >= 0 and that no key is written twice."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from nbspark.errors import OutputError
from nbspark.storage.locations import Location
from nbspark.storage.tables import check_table, ddl_columns, read_arrow
from nbspark.storage.versions import count_parts

__all__ = [
    "is_arrow_table",
    "check_counts",
    "check_counts_spark",
    "read_count_rows",
    "read_count_table",
    "rows_table",
    "summed_table",
    "table_rows",
]


def read_count_rows(model_dir: Location, ddl: str, manifest: dict) -> list[tuple]:
    """The count table's rows as tuples in the schema's column order, after the same checks as the jobs'."""
    return table_rows(read_count_table(model_dir, ddl, manifest))


def is_arrow_table(table) -> bool:
    """Whether a written count table is a pyarrow one (counted in this process, or collected by the
    driver: ``spine.training.write_counts``), not a Spark DataFrame."""
    import pyarrow as pa

    return isinstance(table, pa.Table)


def table_rows(table) -> list[tuple]:
    """A pyarrow table's rows as tuples in its columns' order."""
    return list(zip(*(column.to_pylist() for column in table.columns)))


def rows_table(rows, ddl: str):
    """Rows (tuples in the schema's column order) as a pyarrow table of the schema ``ddl``; no rows,
    an empty table of it: ``table_rows`` the other way."""
    import pyarrow as pa

    from nbspark.storage.tables import arrow_schema

    schema = arrow_schema(ddl)
    return pa.table([list(c) for c in zip(*rows)] if rows else [[] for _ in schema], schema=schema)


def read_count_table(model_dir: Location, ddl: str, manifest: dict):
    """The count table as one pyarrow Table, its columns in the schema's order, after the same
    checks as the jobs'; a version made of several parts (``storage.versions``) summed by key."""
    columns = list(ddl_columns(ddl))
    tables = []
    for where, rows in count_parts(model_dir, manifest):
        table = read_arrow(check_table(where, ddl, rows), columns)
        check_counts(table, where)
        tables.append(table)
    # promote: the parts agree but for nullability (written by Spark, or in process from the DDL)
    return (
        tables[0] if len(tables) == 1 else summed_table(pa.concat_tables(tables, promote_options="default"))
    )


def summed_table(table):
    """Rows with equal keys (every column but ``VALUES``; NULLs equal) summed into one, columns
    in their order: the pyarrow twin of ``spine.counting.merge_counts``."""
    values = [c for c in table.column_names if c in VALUES]
    keys = [c for c in table.column_names if c not in VALUES]
    summed = table.group_by(keys, use_threads=False).aggregate([(c, "sum") for c in values])
    summed = summed.rename_columns([f"{c}_sum" if c in values else c for c in summed.column_names])
    return pa.table(
        {
            c: summed[f"{c}_sum" if c in values else c].cast(table.schema.field(c).type)
            for c in table.column_names
        },
        schema=table.schema,
    )


#: The count columns of both families' tables (``n``/``sumsq`` naive Bayes, ``count`` backoff); a
#: naive Bayes ``sum`` (of a numeric feature's values) may be negative.
NON_NEGATIVE = ("n", "count", "sumsq")
#: The columns that are values, not keys.
VALUES = ("n", "sum", "sumsq", "count")


def check_counts(table, where) -> None:
    """Refuse a count table with a negative count or a key written twice (``OutputError``): a
    prediction would silently move (a row counted twice, a level that seems unseen)."""
    for name in NON_NEGATIVE:
        if name in table.column_names and table.num_rows:
            low = pc.min(table[name]).as_py()
            if low is not None and low < 0:
                raise _negative(where, low, name)
    keys = [c for c in table.column_names if c not in VALUES]
    if table.num_rows and keys:
        grouped = table.select(keys).group_by(keys, use_threads=False).aggregate([([], "count_all")])
        if grouped.num_rows != table.num_rows:
            twice = grouped.filter(pc.greater(grouped["count_all"], 1)).slice(0, 1).to_pylist()[0]
            del twice["count_all"]
            raise _repeated(where, table.num_rows - grouped.num_rows, twice)


def check_counts_spark(frame, where) -> None:
    """``check_counts`` for a table read by Spark (a model too large for the driver: the join
    scorer, ``--update``'s merge, a stream's compaction, the query job): one aggregation job over
    it, grouped by a 64-bit hash of each row's key (and of which of its cells are NULL) rather than
    by the key's strings, with each count column's least value. Two rows of one hash are looked at
    again by their keys (a second query, of those rows only): a repeated key is named, a hash
    collision passes. A frame of several tables (a version's parts: a key repeats across them,
    never within one) has each row's table in a ``_part`` column, and ``where(part)`` names it in a
    refusal; else ``where`` is the table's name."""
    from pyspark.sql import functions as F

    name_of = where if callable(where) else (lambda _: where)
    keys = [c for c in frame.columns if c not in VALUES]  # with _part, when there is one
    counted = [c for c in NON_NEGATIVE if c in frame.columns]
    hashed = frame.withColumn("_key", F.xxhash64(*keys, *[F.isnull(k) for k in keys]))
    per_hash = hashed.groupBy("_key").agg(
        F.count(F.lit(1)).alias("_rows"), *[F.min(c).alias(f"_least_{c}") for c in counted]
    )
    found = per_hash.agg(F.max("_rows"), *[F.min(f"_least_{c}") for c in counted]).first()
    for column, low in zip(counted, list(found)[1:]):
        if low is not None and low < 0:
            part = frame.filter(F.col(column) == low).first().asDict().get("_part")
            raise _negative(name_of(part), low, column)
    if found[0] is not None and found[0] > 1:
        shared = per_hash.filter(F.col("_rows") > 1).select("_key")
        per_key = hashed.join(shared, "_key").groupBy(*keys).agg(F.count(F.lit(1)).alias("_rows"))
        repeated = (
            per_key.filter(F.col("_rows") > 1)
            .agg(F.sum(F.col("_rows") - 1), F.first(F.struct(*keys)))
            .first()
        )
        if repeated[0]:
            example = repeated[1].asDict()
            raise _repeated(name_of(example.pop("_part", None)), repeated[0], example)


def _negative(where, low, name: str) -> OutputError:
    """The refusal of a negative count, whichever reader found it."""
    return OutputError(f"{where}: a negative count ({low}) in column {name!r}; the table is damaged")


def _repeated(where, extra: int, example: dict) -> OutputError:
    """The refusal of a table whose rows repeat a key, whichever reader found it."""
    return OutputError(f"{where}: {extra:,} row(s) repeat a key, e.g. {example}; the table is damaged")
