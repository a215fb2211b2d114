"""Counting a table's rows into the density count table (``density.model.COUNT_DDL``), in one pass:
``count_density(spark, cfg, inputs, engine) -> spine.counting.Counted``.

* ``arrow`` (Spark): the table read as Spark reads it (a CSV's cells as text), grouped by the
  modelled columns with their weights summed, then each group's key (``density.model.row_key``) and
  its share of every marginal made in Python over Arrow batches and summed: the joint and the
  marginals from one read.
* ``local`` (``nbspark train --in-process``, ``nbspark.fit``): the same table read with pyarrow
  (``inputs.tables``) and counted by ``density.model.count_rows``.

A cell is text (a CSV's as written; a Parquet column must hold text: a number is binned first, and
refused here). A weight is a number >= 0; a row whose weight is not one is malformed: skipped and
counted (``malformed.weight``), or in failfast mode the end of the run.
"""

from __future__ import annotations

import logging
import math
import re

from nbspark.density.model import COUNT_DDL, count_rows, row_key
from nbspark.errors import InputError
from nbspark.inputs.bins import (
    NUMBER_TEXT,
    bin_cell,
    bin_labels,
    parse_bins,
    quantiles_asked,
)
from nbspark.inputs.tables import headed
from nbspark.spark.session import cache_coalescable
from nbspark.spine.counting import Counted
from nbspark.spine.frames import named_column

log = logging.getLogger(__name__)

__all__ = [
    "MANIFEST_FIELDS",
    "NGRAM_COUNT",
    "bin_expressions",
    "binned",
    "cell_types",
    "checked_weight",
    "count_density",
    "count_fields",
    "count_frame",
    "local_rows",
    "modelled_columns",
    "number_of",
    "read_local_table",
    "read_table",
    "refuse_missing",
    "rows_fields",
    "not_text",
    "text_only",
    "weight_column",
    "weight_of",
]


#: An n-gram file (``w1 … wN TAB count``, the backoff family's ``ngrams`` format) read as a table:
#: one column per position, named by its letter (A, B, C, …, ``width`` of them), and ``count``.
NGRAM_COUNT = "count"


def weight_column(cfg, fmt: str) -> str:
    """The column that weighs each row: ``density.weight_column``, else an n-gram file's count."""
    return cfg.density.weight_column or (NGRAM_COUNT if fmt == "ngrams" else "")


def modelled_columns(cfg, names: list[str], root, fmt: str = "csv") -> list[str]:
    """The columns a density model counts: ``density.columns``, else every column but the weight's;
    ``InputError`` for one the table lacks."""
    headed(root, names)
    weight = weight_column(cfg, fmt)
    if weight and weight not in names:
        raise InputError(f"{root}: no weight column {weight!r} (columns: {', '.join(names)})")
    columns = list(cfg.density.columns) or [c for c in names if c != weight]
    missing = [c for c in columns if c not in names]
    if missing:
        raise InputError(f"{root}: no column(s) {', '.join(missing)} (columns: {', '.join(names)})")
    if not columns:
        raise InputError(f"{root}: no column to model")
    if left := [c for c in names if c not in columns and c != weight]:
        log.info("%s: column(s) %s not modelled (density.columns)", root, ", ".join(left))
    return columns


def weight_of(cell) -> float | None:
    """A weight cell as a number >= 0, or None when it is not one (text: ``inputs.bins.NUMBER_TEXT``)."""
    if isinstance(cell, str) and not re.fullmatch(NUMBER_TEXT, cell):
        return None
    try:
        w = float(cell)
    except (TypeError, ValueError):
        return None
    return w if math.isfinite(w) and w >= 0 else None


def _malformed(cfg, inputs, bad: dict, example) -> dict:
    """The statistics of the rows skipped (``bad``: by reason, ``weight`` or ``bin``), or in failfast
    mode the end of the run at the first (``example``)."""
    if sum(bad.values()) and cfg.mode == "failfast":
        weight = weight_column(cfg, inputs.spec.format)
        why = (  # the example's own reason: its weight first, as both engines judge a row
            f"with a cell that is not a number in a binned column ({', '.join(binned(cfg))})"
            if not (weight and weight_of(example.get(weight)) is None) and _not_binned(cfg, example)
            else f"whose weight ({weight}) is not a number >= 0 (an n-gram line that does not parse has none)"
        )
        raise InputError(f"{inputs.named}: a row {why}: {example!r}")
    counted = {f"malformed.{reason}": n for reason, n in bad.items() if n}
    return {"malformed": sum(counted.values()), **counted} if counted else {}


def binned(cfg) -> dict[str, tuple[float, ...]]:
    """The binned columns' edges (``density.bins``, its quantiles settled: ``settle_bins``)."""
    bins = parse_bins(cfg.density.bins)
    if asked := quantiles_asked(bins):
        raise AssertionError(f"density.bins: the quantiles of {', '.join(asked)} are not settled")
    return bins


def _not_binned(cfg, row: dict) -> bool:
    """Whether a cell of ``row`` (a malformed row's cells by column) is no number of its bins."""
    for column, edges in binned(cfg).items():
        try:
            bin_cell(row.get(column), edges)
        except ValueError:
            return True
    return False


#: A column type that a binned column may have besides text (Spark's and Arrow's names of numbers).
_NUMBER_TYPE = re.compile(r"(u?int\d*|(tiny|small|big)int|double|float|halffloat|decimal.*)")


def cell_types(names_types: dict[str, str], columns, bins, root) -> None:
    """Refuse (``InputError``) ``columns`` of a table that are not text (``text_only``), but for the
    binned ones, which may hold numbers."""
    if unknown := [c for c in bins if c not in columns]:
        raise InputError(f"{root}: density.bins names {', '.join(unknown)}, not a modelled column")
    text_only(names_types, [c for c in columns if c not in bins], root)
    if other := [
        f"{c} ({names_types[c]})"
        for c in bins
        if c in columns
        and not (names_types.get(c, "string") in TEXT_TYPES or _NUMBER_TYPE.fullmatch(names_types[c]))
    ]:
        raise InputError(f"{root}: binned column(s) {', '.join(other)} hold neither numbers nor text")


def count_density(spark, cfg, inputs, engine: str) -> Counted:
    """Count ``inputs`` (a CSV or Parquet table) into the density count table with ``engine``."""
    if engine == "local":
        return _local_counts(cfg, inputs)
    return _spark_counts(spark, cfg, inputs)


#: The column types a density model counts: text, as a table writes its cells (Spark's and Arrow's names).
TEXT_TYPES = ("string", "large_string")


def not_text(names_types: dict[str, str], columns) -> list[str]:
    """``"column (type)"`` of each of ``columns`` that ``names_types`` holds as other than text: the
    one rule of a density input's types (tables and the pyspark.ml stages' DataFrames)."""
    return [f"{c} ({names_types[c]})" for c in columns if names_types.get(c, "string") not in TEXT_TYPES]


def text_only(names_types: dict[str, str], columns: list[str], root) -> None:
    """Refuse (``InputError``) a table whose ``columns`` are not all text (``not_text``)."""
    if numbers := not_text(names_types, columns):
        raise InputError(
            f"{root}: column(s) {', '.join(numbers)} are not text: a density model counts categorical cells; "
            "cut numbers into bins (density.bins), or leave the column out (density.columns)"
        )


def refuse_missing(inputs, columns: list[str], names: list[str]) -> None:
    """Refuse a table to score (``names``: its columns) that lacks a column the model counts
    (``InputError`` naming them and the table's), in process and in Spark alike."""
    if missing := [c for c in columns if c not in names]:
        raise InputError(
            f"{inputs.named}: no column(s) {', '.join(missing)}, which the model counts "
            f"(columns: {', '.join(names)})"
        )


def local_rows(cfg, inputs, columns: list[str] | None = None) -> tuple[list[str], list, dict]:
    """``(columns, rows, stats)`` of a local table read with pyarrow (a CSV's cells as text):
    ``rows`` the ``(values, weight)`` of each row whose weight is a number >= 0, in the table's
    order, ``values`` in the order of ``columns`` (default: ``modelled_columns``); a weight column
    the table lacks weighs every row 1 when ``columns`` are given (a test table)."""
    fmt = inputs.spec.format
    table, columns = read_local_table(cfg, inputs, columns)
    names = table.column_names
    bins = binned(cfg)
    cell_types({f.name: str(f.type) for f in table.schema}, columns, bins, inputs.root)
    weight = weight_column(cfg, fmt)
    weight = weight if weight in names else ""
    cells = [table.column(c).to_pylist() for c in columns]
    weights = table.column(weight).to_pylist() if weight else [1.0] * table.num_rows
    cuts = [(j, bins[c]) for j, c in enumerate(columns) if c in bins]
    rows, bad, example = [], {"weight": 0, "bin": 0}, None
    for i, cell in enumerate(weights):
        values, w = [col[i] for col in cells], weight_of(cell)
        try:
            reason = "weight" if w is None else None
            for j, edges in cuts if reason is None else ():
                values[j] = bin_cell(values[j], edges)
        except ValueError:
            reason = "bin"
        if reason is not None:
            bad[reason] += 1
            example = example or {c: col[i] for c, col in zip([*columns, weight], [*cells, weights])}
            continue
        rows.append((values, w))
    stats = {"rows_read": table.num_rows, "rows": len(rows), **_malformed(cfg, inputs, bad, example)}
    return columns, rows, stats


def read_local_table(cfg, inputs, columns: list[str] | None = None):
    """``(table, columns)``: a local input read with pyarrow (``inputs.tables.local_table``; an
    n-gram file ``_ngram_table``) and its modelled columns (``columns`` given: refused if missing)."""
    from nbspark.inputs.tables import local_table

    fmt = inputs.spec.format
    table = (
        _ngram_table(cfg, inputs)
        if fmt == "ngrams"
        else local_table(inputs.files, fmt, delimiter=inputs.spec.delimiter)[0]
    )
    if columns is None:
        return table, modelled_columns(cfg, table.column_names, inputs.root, fmt)
    refuse_missing(inputs, columns, table.column_names)
    return table, columns


def _ngram_table(cfg, inputs):
    """An n-gram file as a pyarrow table of position columns and ``count`` (a line that does not parse
    keeps its place with no count: skipped and counted as every row without a weight is)."""
    import string

    import pyarrow as pa

    from nbspark.inputs.parsers import MalformedLine, blank_line, parse_ngram_line

    letters = string.ascii_uppercase[: cfg.width]
    cells: list[list] = [[] for _ in letters]
    counts: list = []
    for f in inputs.files:
        with open(f.path, encoding="utf-8", errors="replace", newline="") as lines:
            for line in lines:
                if blank_line(line):
                    continue
                try:
                    tokens, count = parse_ngram_line(line, cfg.width)
                except MalformedLine:
                    tokens, count = (None,) * cfg.width, None
                for column, token in zip(cells, tokens):
                    column.append(token)
                counts.append(None if count is None else str(count))
    return pa.table({**dict(zip(letters, cells)), NGRAM_COUNT: counts}, schema=_ngram_schema(letters))


def _ngram_schema(letters: str):
    import pyarrow as pa

    return pa.schema([*((c, pa.string()) for c in letters), (NGRAM_COUNT, pa.string())])


def _local_counts(cfg, inputs) -> Counted:
    from nbspark.storage.counts import rows_table

    columns, rows, stats = local_rows(cfg, inputs)
    counted = count_rows(rows, columns)  # the N row at least: never empty
    table = rows_table(counted, COUNT_DDL)
    return Counted("local", table, stats, [], rows_fields(columns, counted))


#: A density manifest's own fields (``count_fields``).
MANIFEST_FIELDS = ("columns", "total", "distinct_rows", "values")


def rows_fields(columns: list[str] | None, rows: list[tuple]) -> dict:
    """``count_fields`` of a whole count table's ``rows`` (its ``J`` rows counted, not kept)."""
    head = [r for r in rows if r[0] != "J"]
    return count_fields(columns, head, len(rows) - len(head))


def count_fields(columns: list[str] | None, head: list[tuple], distinct: int) -> dict:
    """The manifest's fields from the table's ``N`` and ``X`` rows and its number of ``J`` rows;
    ``columns`` None: those the ``X`` rows name, in their order."""
    if columns is None:
        columns = list(dict.fromkeys(r[1] for r in head if r[0] == "X"))
    return {
        "columns": columns,
        "total": next((r[3] for r in head if r[0] == "N"), 0.0),
        "distinct_rows": distinct,
        "values": {c: sum(r[0] == "X" and r[1] == c for r in head) for c in columns},
        "rows": len(head) + distinct,
    }


def read_table(spark, inputs, width: int = 5):
    """A density input as Spark reads it for counting and scoring alike: a CSV's cells as text
    (header row, no inference), a Parquet table as typed, an n-gram file as its position columns and
    ``count`` (``_ngram_table``'s rule: a line that does not parse has no count)."""
    import string

    from pyspark.sql import functions as F

    from nbspark.inputs.files import parquet_frame, text_frame
    from nbspark.inputs.tables import csv_frame

    if inputs.spec.format == "csv":
        return csv_frame(spark, inputs.files, delimiter=inputs.spec.delimiter)
    if inputs.spec.format == "ngrams":
        lines = text_frame(spark, inputs.files).where(F.trim("value") != "")
        parts = F.split(F.regexp_replace("value", "\r$", ""), "\t")
        tokens = F.split(F.get(parts, 0), " ")
        count = F.get(parts, 1)
        ok = (F.size(parts) == 2) & (F.size(tokens) == width) & count.rlike("^[0-9]+$")
        letters = string.ascii_uppercase[:width]
        return lines.select(
            *(F.when(ok, F.get(tokens, i)).alias(c) for i, c in enumerate(letters)),
            F.when(ok, count).alias(NGRAM_COUNT),
        )
    return parquet_frame(spark, inputs.files)


def checked_weight(df, weight_column: str):
    """``(weight, valid)`` columns of ``df``: the weight column as a double (1 without one), and
    whether it is a number >= 0 (``weight_of``'s rule, in Spark: a text cast only where it matches
    ``NUMBER_TEXT``, so that no cell stops the job with Spark's cast error)."""
    from pyspark.sql import functions as F

    if not weight_column:
        weight = F.lit(1.0)
    elif dict(df.dtypes)[weight_column] == "string":
        text = named_column(weight_column)
        weight = F.when(text.rlike(f"^{NUMBER_TEXT}\\z"), text).cast("double")
    else:
        weight = named_column(weight_column).cast("double")
    return weight, weight.isNotNull() & ~F.isnan(weight) & (weight >= 0) & (weight < float("inf"))


def _spark_counts(spark, cfg, inputs) -> Counted:
    from pyspark.sql import functions as F

    df = read_table(spark, inputs, cfg.width)
    columns = modelled_columns(cfg, df.columns, inputs.root, inputs.spec.format)
    bins = binned(cfg)
    cell_types(dict(df.dtypes), columns, bins, inputs.root)
    counts, read, bad, example = count_frame(
        df, columns, weight_column(cfg, inputs.spec.format), *bin_expressions(df, bins)
    )
    try:
        stats = {"rows_read": read, "rows": read - sum(bad.values())}
        stats.update(_malformed(cfg, inputs, bad, example))
        head = counts.where(F.col("event") != "J").collect()
        known_rows = [(r["event"], r["column"], r["value"], r["n"]) for r in head]
        distinct = counts.where(F.col("event") == "J").count()
        known = count_fields(columns, known_rows, distinct)
        return Counted("arrow", counts.select("event", "column", "value", "n"), stats, [], known, counts)
    except BaseException:
        counts.unpersist()
        raise


def bin_expressions(df, bins: dict) -> tuple[dict, object]:
    """``(cells, numbers)``: each binned column of ``df`` as its bin's label (``inputs.bins``' rule in
    Spark SQL, from the same edges and labels: a text cell read only where it matches
    ``NUMBER_TEXT``, a number column cast), and whether every binned cell of a row is a number or
    empty (a row where one is not is malformed, ``bin``)."""
    from pyspark.sql import functions as F

    cells, numbers = {}, F.lit(True)
    for column, edges in bins.items():
        x = number_of(df, column)
        labels = bin_labels(edges)
        label = F.when(x < edges[0], labels[0])
        for edge, name in zip(edges[1:], labels[1:-1]):
            label = label.when(x < edge, name)
        cells[column] = F.when(x.isNotNull(), label.otherwise(labels[-1]))
        numbers = numbers & (named_column(column).isNull() | x.isNotNull())
    return cells, numbers


def number_of(df, column: str):
    """A cell of ``df``'s ``column`` as a double, null where it is no number (``inputs.bins.cell_number``'s
    rule in Spark SQL: a text cell read only where it matches ``NUMBER_TEXT``, a number column cast,
    NaN none)."""
    from pyspark.sql import functions as F

    raw = named_column(column)
    x = (F.when(raw.rlike(f"^{NUMBER_TEXT}\\z"), raw) if dict(df.dtypes)[column] == "string" else raw).cast(
        "double"
    )
    return F.when(~F.isnan(x), x)


def count_frame(df, columns: list[str], weight: str, cells: dict | None = None, cells_valid=None):
    """The density counts of the rows of ``df`` over its text ``columns``, each row weighted by the
    column ``weight`` (1 without one): ``(counts, rows read, rows skipped by reason, the first
    skipped row as a dict or None)``, a row skipped where its weight is not a number >= 0
    (``weight``: ``checked_weight``) or where ``cells_valid`` is false (``bin``: ``bin_expressions``,
    whose ``cells`` are counted in place of those columns). The counts (``COUNT_DDL``'s columns) are
    cached: the caller unpersists them. The one Spark count of the train job and of pyspark.ml's
    ``CountingDensity``."""
    from pyspark.sql import functions as F

    weight, valid = checked_weight(df, weight)
    good = valid if cells_valid is None else valid & cells_valid
    summary = df.agg(
        F.count(F.lit(1)).alias("n"),
        F.count_if(~valid).alias("weight"),
        F.count_if(valid & ~good).alias("bin"),
    ).first()
    bad = {"weight": summary["weight"], "bin": summary["bin"]}
    example = df.where(~good).first().asDict() if sum(bad.values()) else None
    # positional names: a column named with a dot ("col.a") read as a nested field, in groupBy and
    # in pyspark's mapInArrow, which names its input columns unquoted
    picked = df.select(
        *((cells or {}).get(c, named_column(c)).alias(f"__{i}") for i, c in enumerate(columns)),
        weight.alias("__w"),
        good.alias("__valid"),
    )
    grouped = (
        picked.where("__valid")
        .groupBy(*(f"__{i}" for i in range(len(columns))))
        .agg(F.sum("__w").alias("__n"))
    )
    width = len(columns)

    def rows_of(batches):
        import pyarrow as pa

        for batch in batches:
            values = [batch.column(i).to_pylist() for i in range(width)]
            n = batch.column(width).to_pylist()
            out = [("N", None, None, math.fsum(n))]
            for i, c in enumerate(columns):
                partial: dict = {}
                for v, w in zip(values[i], n):
                    partial[v] = partial.get(v, 0.0) + w
                out += [("X", c, v, w) for v, w in partial.items()]
            out += [("J", None, row_key(row), w) for row, w in zip(zip(*values), n)]
            yield pa.RecordBatch.from_pylist([dict(zip(("event", "column", "value", "n"), r)) for r in out])

    counts = cache_coalescable(  # not 200 tasks a scan of a small table
        grouped.mapInArrow(rows_of, COUNT_DDL.replace(" NOT NULL", ""))
        .groupBy("event", "column", "value")
        .agg(F.sum("n").alias("n"))
    )
    return counts, summary["n"], bad, example
