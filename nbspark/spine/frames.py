"""DataFrame helpers that both families' Spark code shares: schemas from DDL strings, small driver
rows sent to the JVM as Arrow (``local_frame``), and collects whose checks fail with a message
naming the column (``collect_checked``, ``checked_weight``, ``checked_tokens``).

Counting from a DataFrame a user already has is ``backoff.frames.count_windows`` and
``naive_bayes.frames.count_documents`` (both re-exported by ``nbspark.frames``). Tokens are taken as
given; weights must be finite and >= 0, and no token or document null; a row breaking that fails
the job with a message naming the column.
"""

from __future__ import annotations

import logging
import re

from nbspark.spark.session import failures_expected

__all__ = [
    "carried_columns",
    "checked_tokens",
    "checked_weight",
    "collect_checked",
    "failed_check",
    "local_frame",
    "named_column",
    "schema_of",
]


log = logging.getLogger(__name__)


#: What a test table's column named as one of the predictions' own is called in them.
RENAMED = "table_{}"


def carried_columns(names, used, outputs, named) -> dict[str, str]:
    """The columns of a test table (``names``, in its order) that ride along into its predictions, so
    that a scored row can be found again (an id, a date), each with its name there: every one the
    model does not ``used``, under its own name, or as ``table_NAME`` where the predictions name one
    of their own ``outputs`` so (a table's ``id`` beside the prediction's; logged); left out, with a
    warning naming them and the table (``named``), only where that name is taken too. The one rule
    of both families' table predictions."""
    carried, clash = {}, []
    taken = {*names, *outputs}
    for c in (c for c in names if c not in used):
        if c not in outputs:
            carried[c] = c
        elif RENAMED.format(c) not in taken:
            carried[c] = RENAMED.format(c)
            log.info("%s: column %r is %r in the predictions, which name their own so", named, c, carried[c])
        else:
            clash.append(c)
    if clash:
        log.warning(
            "%s: column(s) %s left out of the predictions, which name their own so (and %s is taken)",
            named,
            ", ".join(clash),
            ", ".join(RENAMED.format(c) for c in clash),
        )
    return carried


def named_column(name: str):
    """The column a table names ``name``, taken literally: Spark reads ``F.col("a.b")`` as the field
    ``b`` of a column ``a``, so a CSV header's ``col.a`` was not found (quoted, with a backtick in
    the name doubled)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def schema_of(ddl: str):
    """The ``StructType`` of a flat DDL (``name TYPE [NOT NULL], …``; STRING, INT, BIGINT, DOUBLE,
    ARRAY<STRING>, ARRAY<DOUBLE>), built in Python: the JVM's DDL parser is slow the first time in a job."""
    from pyspark.sql import types as T

    from nbspark.storage.tables import ddl_fields

    kinds = {
        "STRING": T.StringType(),
        "INT": T.IntegerType(),
        "BIGINT": T.LongType(),
        "DOUBLE": T.DoubleType(),
        "ARRAY<STRING>": T.ArrayType(T.StringType()),
        "ARRAY<DOUBLE>": T.ArrayType(T.DoubleType()),
    }
    fields = ddl_fields(ddl)
    unknown = [f"{name} {kind}" for name, kind, _ in fields if kind not in kinds]
    if unknown:
        raise ValueError(f"schema_of: cannot read {unknown[0]!r}")
    return T.StructType([T.StructField(name, kinds[kind], nullable) for name, kind, nullable in fields])


def local_frame(spark, rows, ddl: str):
    """A DataFrame of a few rows held in the driver (tuples in the order of the flat DDL ``ddl``),
    handed to the JVM as Arrow. ``spark.createDataFrame`` of a list makes a Python RDD, so every
    job that reads its rows runs a Python task for them (the write of each naive Bayes model, for
    its few head rows)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = schema_of(ddl)
    table = pa.Table.from_pylist(
        [dict(zip(schema.names, row)) for row in rows], schema=to_arrow_schema(schema)
    )
    return spark.createDataFrame(table, schema)


def failed_check(error_text: str) -> str | None:
    """The message of the first ``raise_error`` check in a Spark error's text, or None."""
    found = re.search(r"\[USER_RAISED_EXCEPTION\] (.+?)(?: SQLSTATE: \w+|$)", error_text, flags=re.MULTILINE)
    return found.group(1) if found else None


def collect_checked(df) -> list:
    """``df.collect()``, a failed check of this module (``raise_error``) raised as one ValueError
    naming it. Spark reports one as a SparkRuntimeException; but when adaptive execution
    materializes two stages that both fail, as one Py4JJavaError
    (``[STAGE_MATERIALIZATION_MULTIPLE_FAILURES]``) that PySpark does not convert (seen in CI).
    A check's failed task is expected: Spark's loggers of failed tasks are quiet meanwhile
    (``spark.session.failures_expected``); any other failure is raised as it came, its trace in it."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
        with failures_expected():
            return df.collect()
    except (Py4JJavaError, PySparkException) as exc:
        message = failed_check(str(exc))
        if message is None:
            raise
        raise ValueError(message) from None


def checked_weight(df, weight_col: str | None, what: str):
    """The weight column, checked in the job (finite, >= 0), or 1."""
    from pyspark.sql import functions as F

    if not weight_col:
        return F.lit(1.0)
    if weight_col not in df.columns:
        raise ValueError(f"no weight column {weight_col!r} (columns: {', '.join(df.columns)})")
    w = F.col(weight_col).cast("double")
    bad = w.isNull() | F.isnan(w) | (w < 0) | (w == float("inf"))
    return F.when(
        bad,
        F.raise_error(
            F.lit(f"{what}: weight column {weight_col!r} holds a null, NaN, infinite or negative value")
        ),
    ).otherwise(w)


def checked_tokens(df, tokens_col: str, what: str):
    """The ``array<string>`` tokens column, checked in the job: a null document, or a null token in
    one, fails it (a null document was counted in its class's prior with no tokens; a null token
    was a feature ``None``). A document without tokens is an empty array."""
    from pyspark.sql import functions as F

    _array_column(df, tokens_col, "tokens")
    tokens = F.col(tokens_col)
    return (
        F.when(
            tokens.isNull(),
            F.raise_error(
                F.lit(
                    f"{what}: the tokens column {tokens_col!r} holds a null document (an empty one is an "
                    "empty array)"
                )
            ),
        )
        .when(
            F.exists(tokens, lambda t: t.isNull()),
            F.raise_error(F.lit(f"{what}: the tokens column {tokens_col!r} holds a null token")),
        )
        .otherwise(tokens)
    )


def _array_column(df, name: str, role: str):
    from pyspark.sql.types import ArrayType, StringType

    if name not in df.columns:
        raise ValueError(f"no {role} column {name!r} (columns: {', '.join(df.columns)})")
    dtype = df.schema[name].dataType
    if not (isinstance(dtype, ArrayType) and isinstance(dtype.elementType, StringType)):
        raise ValueError(f"the {role} column {name!r} must be array<string>, not {dtype.simpleString()}")
