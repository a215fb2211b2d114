"""Counting from a DataFrame: the count tables of both families from columns a user already has,
with Spark SQL only (no Python per row), for notebooks and existing pipelines.

* ``count_windows(df, "window")``: an ``array<string>`` column of windows (width tokens, the label
  at the centre) and an optional weight column -> the backoff count table (``events.count_ddl``),
  one row per (context subset, context values, label), as the train job writes it.
* ``count_documents(df, "tokens", "label")``: an ``array<string>`` of tokens per document and a
  label column (any type; compared as strings) -> the naive Bayes count table (``nb.COUNT_DDL``)
  with the events of ``nb.doc_events``, multinomial or Bernoulli.

Tokens are taken as given: lower-case them (``RegexTokenizer`` does) before counting if the model
should. Weights must be finite and >= 0, and no token or document null; a row breaking that, or a
window of another width, fails the job with a message naming the column. The result is a lazy DataFrame with the table's columns
and types (its columns are nullable in the DataFrame's schema): write it, or collect a small one
(``nbspark.ml`` does).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .config import ExperimentConfig, position_letters
from .events import context_letters, count_columns

__all__ = ["checked_tokens", "checked_weight", "collect_checked", "count_documents", "count_windows", "failed_check", "local_frame", "schema_of"]


def schema_of(ddl: str):
    """The ``StructType`` of a flat DDL (``name TYPE [NOT NULL], …``; STRING, INT, BIGINT, DOUBLE,
    ARRAY<STRING>), built in Python: the JVM's DDL parser costs 0.3 s the first time in a job."""
    from pyspark.sql import types as T

    from .tables import ddl_fields

    kinds = {"STRING": T.StringType(), "INT": T.IntegerType(), "BIGINT": T.LongType(), "DOUBLE": T.DoubleType(),
             "ARRAY<STRING>": T.ArrayType(T.StringType())}
    fields = ddl_fields(ddl)
    unknown = [f"{name} {kind}" for name, kind, _ in fields if kind not in kinds]
    if unknown:
        raise ValueError(f"schema_of: cannot read {unknown[0]!r}")
    return T.StructType([T.StructField(name, kinds[kind], nullable) for name, kind, nullable in fields])


def local_frame(spark, rows, ddl: str):
    """A DataFrame of a few rows held in the driver (tuples in the order of the flat DDL ``ddl``),
    handed to the JVM as Arrow. ``spark.createDataFrame`` of a list makes a Python RDD, so every
    job that reads its rows runs a Python task for them: 0.1-0.2 s of the write of each naive
    Bayes model, for its 21 head rows."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = schema_of(ddl)
    table = pa.Table.from_pylist([dict(zip(schema.names, row)) for row in rows], schema=to_arrow_schema(schema))
    return spark.createDataFrame(table, schema)


def failed_check(error_text: str) -> str | None:
    """The message of the first ``raise_error`` check in a Spark error's text, or None."""
    found = re.search(r"\[USER_RAISED_EXCEPTION\] (.+?)(?: SQLSTATE: \w+|$)", error_text, flags=re.MULTILINE)
    return found.group(1) if found else None


def collect_checked(df) -> list:
    """``df.collect()``, a failed check of this module (``raise_error``) raised as one ValueError
    naming it. Spark reports one as a SparkRuntimeException; but when adaptive execution
    materializes two stages that both fail, as one Py4JJavaError
    (``[STAGE_MATERIALIZATION_MULTIPLE_FAILURES]``) that PySpark does not convert (seen in CI)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
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
    return F.when(bad, F.raise_error(F.lit(f"{what}: weight column {weight_col!r} holds a null, NaN, infinite or negative value"))).otherwise(w)


def checked_tokens(df, tokens_col: str, what: str):
    """The ``array<string>`` tokens column, checked in the job: a null document, or a null token in
    one, fails it (a null document was counted in its class's prior with no tokens; a null token
    was a feature ``None``). A document without tokens is an empty array."""
    from pyspark.sql import functions as F

    _array_column(df, tokens_col, "tokens")
    tokens = F.col(tokens_col)
    return (F.when(tokens.isNull(), F.raise_error(F.lit(f"{what}: the tokens column {tokens_col!r} holds a null document (an empty one is an empty array)")))
            .when(F.exists(tokens, lambda t: t.isNull()), F.raise_error(F.lit(f"{what}: the tokens column {tokens_col!r} holds a null token")))
            .otherwise(tokens))


def _array_column(df, name: str, role: str):
    from pyspark.sql.types import ArrayType, StringType

    if name not in df.columns:
        raise ValueError(f"no {role} column {name!r} (columns: {', '.join(df.columns)})")
    dtype = df.schema[name].dataType
    if not (isinstance(dtype, ArrayType) and isinstance(dtype.elementType, StringType)):
        raise ValueError(f"the {role} column {name!r} must be array<string>, not {dtype.simpleString()}")


def count_windows(df, windows_col: str = "window", weight_col: str | None = None, *, width: int = 5,
                  subsets: Sequence[str] | None = None):
    """The backoff count table of ``df``'s windows, in ``events.count_ddl(letters)``.

    ``subsets`` are the context subsets counted (letters of the positions, ``""`` the prior);
    by default those the train job counts for the default chain (``ExperimentConfig.counted_subsets``).
    A weighted count is rounded to the nearest integer, as counts are stored as integers. A window
    of another length, or with a null token, fails the job (``raise_error``), as MLlib refuses a bad label.
    """
    from pyspark.sql import functions as F

    _array_column(df, windows_col, "windows")
    letters = position_letters(width)
    subsets = tuple(ExperimentConfig(width=width).counted_subsets if subsets is None else subsets)
    ctx = context_letters(letters)
    for s in subsets:
        if any(c not in ctx for c in s):
            raise ValueError(f"subset {s!r}: only context positions {ctx!r} can be counted for width {width}")
    window = F.col(windows_col)
    checked = (F.when(window.isNull(), F.raise_error(F.lit(f"count_windows: column {windows_col!r} holds a null window")))
               .when(F.size(window) != width, F.raise_error(F.lit(f"count_windows: a window of column {windows_col!r} has not {width} tokens")))
               # a null centre would be counted as a label None, a null context word as the subset's wildcard
               .when(F.exists(window, lambda t: t.isNull()), F.raise_error(F.lit(f"count_windows: a window of column {windows_col!r} has a null token")))
               .otherwise(window))
    base = df.select(checked.alias("w"), checked_weight(df, weight_col, "count_windows").alias("n"))
    null = F.lit(None).cast("string")
    events = F.array(*[
        F.struct(F.lit(s).alias("subset"), *[(F.col("w")[letters.index(c)] if c in s else null).alias(c.lower()) for c in ctx])
        for s in subsets
    ])
    names = count_columns(letters)
    exploded = base.select(F.explode(events).alias("e"), F.col("w")[width // 2].alias("label"), "n").select("e.*", "label", "n")
    summed = exploded.groupBy(*names[:-1]).agg(F.sum("n").alias("s"))
    table = summed.select(*names[:-1], F.round("s").cast("long").alias("count"))
    return table


def count_documents(df, tokens_col: str = "tokens", label_col: str = "label", weight_col: str | None = None, *,
                    model: str = "multinomial"):
    """The naive Bayes count table of ``df``'s documents, in ``nb.COUNT_DDL``: ``Y=ANY``, ``Y`` per
    label, ``YX`` per (label, token) (token count, or documents containing it for ``bernoulli``)
    and, for ``multinomial``, ``YX=ANY`` per label. ``n`` is the count (weighted counts rounded);
    ``sum`` holds the exact weighted count when ``weight_col`` is given."""
    from pyspark.sql import functions as F

    if model not in ("multinomial", "bernoulli"):
        raise ValueError(f"model must be multinomial or bernoulli, got {model!r}")
    tokens = checked_tokens(df, tokens_col, "count_documents")
    if label_col not in df.columns:
        raise ValueError(f"no label column {label_col!r} (columns: {', '.join(df.columns)})")
    if model == "bernoulli":
        tokens = F.array_distinct(tokens)
    label = F.col(label_col).cast("string")
    no_label = F.raise_error(F.lit(f"count_documents: the label column {label_col!r} holds a null"))
    docs = df.select(F.when(label.isNull(), no_label).otherwise(label).alias("label"), tokens.alias("t"),
                     checked_weight(df, weight_col, "count_documents").alias("w"))
    null = F.lit(None).cast("string")
    per_class = docs.groupBy("label").agg(F.sum("w").alias("s"))
    terms = docs.select("label", F.explode("t").alias("feature"), "w").groupBy("label", "feature").agg(F.sum("w").alias("s"))
    parts = [
        per_class.agg(F.sum("s").alias("s")).select(F.lit("Y=ANY").alias("event"), null.alias("label"), null.alias("feature"), "s"),
        per_class.select(F.lit("Y").alias("event"), "label", null.alias("feature"), "s"),
        terms.select(F.lit("YX").alias("event"), "label", "feature", "s"),
    ]
    if model == "multinomial":
        parts.append(terms.groupBy("label").agg(F.sum("s").alias("s")).select(F.lit("YX=ANY").alias("event"), "label", null.alias("feature"), "s"))
    table = parts[0]
    for part in parts[1:]:
        table = table.unionByName(part)
    exact = F.col("s") if weight_col else F.lit(None).cast("double")
    table = table.select("event", "label", "feature", null.alias("value"), F.round("s").cast("long").alias("n"), exact.alias("sum"),
                         F.lit(None).cast("double").alias("sumsq"))
    return table

