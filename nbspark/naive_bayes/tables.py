"""The naive Bayes family's table inputs (csv, parquet, a scikit-learn dataset): which columns are
numbers and which categories (``table_columns``, the one rule of every table reader), the rows in
file order with where each is (in Spark, ``table_source``; in process, ``local_table_rows``), and
each row read into a ``Row`` or named malformed (``table_partition``)."""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from nbspark.errors import InputError
from nbspark.inputs.files import names_by_path, parquet_frame
from nbspark.inputs.parsers import kept
from nbspark.inputs.resolve import Inputs
from nbspark.inputs.spec import is_decimal_comma
from nbspark.inputs.stats import PIECE, TABLE, PartitionStats
from nbspark.inputs.tables import csv_frame, csv_numbers, headed, local_table
from nbspark.naive_bayes.events import binary_cell, number_cell
from nbspark.settings.config import NBSpec
from nbspark.spine.frames import named_column

__all__ = [
    "Row",
    "TableRows",
    "TableRule",
    "arrow_columns",
    "local_table_rows",
    "table_columns",
    "table_partition",
    "table_source",
]

log = logging.getLogger(__name__)


class Row(NamedTuple):
    id: str
    label: str
    categorical: dict
    numeric: dict


@dataclass(frozen=True)
class TableRule:
    """How a table's rows are read (``table_partition``'s settings): the label, numeric, categorical
    and Bernoulli columns, the hold-out, the mode, the malformed rows kept, the decimal mark."""

    label: str
    numeric: tuple
    categorical: tuple
    splits: frozenset
    holdout: float
    seed: int
    mode: str
    keep_bad: int
    bernoulli: frozenset
    decimal: str

    def rows(self, records):
        """``table_partition`` of ``records`` by this rule."""
        return table_partition(
            records,
            self.label,
            list(self.numeric),
            list(self.categorical),
            self.splits,
            self.holdout,
            self.seed,
            self.mode,
            self.keep_bad,
            self.bernoulli,
            self.decimal,
        )


def table_partition(
    records,
    label_col,
    numeric,
    categorical,
    splits,
    holdout,
    seed,
    mode,
    keep_bad,
    bernoulli=frozenset(),
    decimal=".",
):
    """Table records -> ``Row``s: numbers read with the input's ``decimal`` mark (``number_cell``),
    a row without a label or with a cell that is not a number in a numeric column malformed."""
    stats = PartitionStats(keep_bad, mode)
    # counted here, added to ``stats`` once (a call a row each)
    read = documents = held_out = missing = non_finite = 0
    isfinite = math.isfinite
    for index, record, (source, row) in records:
        read += 1
        row_id = str(index)
        label = record.get(label_col)
        if label is None or str(label).strip() == "":
            stats.bad_record(TABLE + source, row, "label", _cells(record))
            continue
        try:
            values = {c: number_cell(record.get(c), decimal) for c in numeric}
        except ValueError:
            reason = "decimal_comma" if decimal == "." and _comma_numbers(record, numeric) else "numeric"
            stats.bad_record(TABLE + source, row, reason, _cells(record))
            continue
        num = {c: x for c, x in values.items() if x is not None and isfinite(x)}
        if bernoulli:
            try:
                binary = {c: binary_cell(record.get(c), decimal) for c in bernoulli}
            except ValueError:
                stats.bad_record(TABLE + source, row, "bernoulli", _cells(record))
                continue
            cat = {
                c: binary[c] if c in bernoulli else str(record[c])
                for c in categorical
                if record.get(c) is not None
            }
            cat = {c: v for c, v in cat.items() if v is not None}
        else:
            cat = {c: str(v) for c in categorical if (v := record.get(c)) is not None}
        if holdout and not kept(splits, holdout, seed, row_id):
            held_out += 1  # the other part of a seeded hold-out
            continue
        documents += 1
        # a missing or non-finite cell, numeric or categorical, leaves that feature out of the row
        # (naive Bayes skips it); counted for the rows of this part only
        if len(num) < len(values) or len(cat) < len(categorical):
            nones = sum(x is None for x in values.values())
            missing += nones + len(categorical) - len(cat)
            non_finite += len(values) - len(num) - nones
        yield Row(row_id, str(label), cat, num)
    stats.add("rows_read", read)
    stats.add("documents", documents)
    stats.add("held_out", held_out)
    stats.add("missing_values", missing)
    stats.add("non_finite_values", non_finite)
    yield from stats.records()


def _comma_numbers(record: dict, numeric) -> bool:
    """Whether a row refused as not a number holds, in a numeric column, a number written with a
    decimal comma (``1,5``) where the input reads points: its reason then names the setting."""
    return any(
        isinstance(cell := record.get(c), str) and "," in cell and is_decimal_comma(cell.strip())
        for c in numeric
    )


def _cells(record: dict) -> str:
    """A table's record as its cells, ``name=value, …`` (``(empty)`` for an empty cell): how a
    malformed row is shown."""
    return ", ".join(f"{k}={'(empty)' if v is None or v == '' else v}" for k, v in record.items())


def _sklearn_records(inputs: Inputs, nb: NBSpec) -> tuple[list[dict], list[tuple], list[str]]:
    """A scikit-learn dataset's rows (features as floats, the label its target's name), where each
    is (``("sklearn:NAME", row)``, as ``_rows_in_file_order`` places a file's) and its columns."""
    from sklearn import datasets  # scikit-learn is needed only for this format

    data = getattr(datasets, f"load_{inputs.spec.path}")()  # one of inputs.SKLEARN_DATASETS
    names = [str(n).replace(" ", "_") for n in data.feature_names]
    target = [str(data.target_names[t]) for t in data.target]
    rows = [dict(zip(names, map(float, x)), **{nb.label_column: y}) for x, y in zip(data.data, target)]
    return rows, [(f"sklearn:{inputs.spec.path}", i + 1) for i in range(len(rows))], names


def _header_rows(fmt: str) -> int:
    """The rows before a table's first record in its file: a CSV's header, row 1 as a spreadsheet
    counts (how a malformed row is numbered)."""
    return int(fmt == "csv")


def table_source(spark, inputs: Inputs, nb: NBSpec, numbered: bool = True):
    """``(TableRows, numeric columns, categorical columns, the table's fields)`` for
    csv, parquet, sklearn (no fields: every column of a scikit-learn table is a feature or the label);
    the rows ``numbered`` beforehand, else by their pieces (``_rows_in_file_order``)."""
    fmt = inputs.spec.format
    if fmt == "sklearn":
        records, places, names = _sklearn_records(inputs, nb)
        rdd = spark.sparkContext.parallelize(
            [(i, r, place) for i, (r, place) in enumerate(zip(records, places))],
            max(2, spark.sparkContext.defaultParallelism),
        )
        return (TableRows(rdd), *table_columns(inputs, nb, [*names, nb.label_column], set(names), {}), [])
    if fmt == "csv":
        # every cell as the file writes it, in training as in classify (where the model names
        # the columns): a label or category is its text ("TRUE", "01", "85.50", a date), never
        # what schema inference made of it ("True", "1", "85.5"); inference only finds the
        # numeric columns where their types decide them (_by_type; Spark infers no number written
        # "1,5": csv_numbers, in Spark as in process)
        sep, comma = inputs.spec.delimiter, inputs.spec.decimal == ","
        df = csv_frame(spark, inputs.files, delimiter=sep)
        infer = _by_type(nb) and not comma
        typed = csv_frame(spark, inputs.files, infer=True, delimiter=sep) if infer else df
    else:
        df = typed = parquet_frame(spark, inputs.files)
    from pyspark.sql.types import ArrayType, BinaryType, MapType, NumericType, StructType

    numeric_types = {f.name for f in typed.schema.fields if isinstance(f.dataType, NumericType)}
    if fmt == "csv" and _by_type(nb):
        numeric_types = csv_numbers(
            df, numeric_types, nb.label_column, inputs.named, sep, inputs.spec.decimal
        )
    nested = {
        f.name: f.dataType.simpleString()
        for f in df.schema.fields
        if isinstance(f.dataType, (ArrayType, BinaryType, MapType, StructType))
    }
    numeric, categorical = table_columns(inputs, nb, df.columns, numeric_types, nested)  # refusals first
    rows = _rows_in_file_order(df, _header_rows(fmt), names_by_path(inputs.files, encoded=True), numbered)
    return rows, numeric, categorical, df.schema.fields


def _by_type(nb: NBSpec) -> bool:
    """Whether a table's numeric columns are those the reader types as numbers (``table_columns``):
    when the config names none and the model is neither Gaussian (every column a number) nor
    categorical (every column a category). Only then is a CSV's every cell read to infer them."""
    return not (nb.numeric_columns or nb.categorical_columns) and nb.model not in ("gaussian", "categorical")


def table_columns(inputs: Inputs, nb: NBSpec, names, numeric_types, nested) -> tuple[list[str], list[str]]:
    """``(numeric, categorical)`` feature columns of a table whose columns are ``names`` (the label
    among them), ``numeric_types`` those read as numbers, ``nested`` the list, map, struct or bytes
    ones (by type name): the config's, else by type and model; ``InputError`` for a missing label or
    column, or a nested one used. The one rule of every table reader, in Spark or in process."""
    headed(inputs.named, names)
    if nb.label_column not in names:
        raise InputError(
            f"{inputs.named}: no label column {nb.label_column!r} (columns: {', '.join(names)}); name it "
            "with nb.label_column (rows without labels are scored, not measured: nbspark predict --csv, "
            "or CountingTableNaiveBayesModel.fromModelDir in a Spark pipeline)"
        )
    columns = [c for c in names if c != nb.label_column]
    numeric = list(nb.numeric_columns)
    categorical = list(nb.categorical_columns)
    if not numeric and not categorical:
        if nb.model == "gaussian":
            numeric = columns
        elif nb.model == "categorical":
            categorical = columns
        else:
            numeric = [c for c in columns if c in numeric_types]
            categorical = [c for c in columns if c not in numeric_types]
    bernoulli = list(nb.bernoulli_columns)
    numeric = [c for c in numeric if c not in bernoulli]
    categorical = categorical + [c for c in bernoulli if c not in categorical]
    missing = [c for c in numeric + categorical if c not in columns]
    if missing:
        raise InputError(
            f"{inputs.named}: no feature column(s) {', '.join(missing)} (the table's columns: "
            f"{', '.join(names)})"
        )
    # a list, map, struct or bytes cell is no number and no one category (its text would be a value seen once)
    if bad := [c for c in [nb.label_column, *numeric, *categorical] if c in nested]:
        raise InputError(
            f"{inputs.named}: column {bad[0]!r} is {nested[bad[0]]}, which cannot be a label or a table "
            "feature; "
            "name the feature columns (nb.numeric_columns, nb.categorical_columns) to leave it out"
        )
    if left := [c for c in columns if c not in numeric and c not in categorical]:  # said, not silent
        log.info(
            "%s: column(s) %s not used (the features: nb.numeric_columns, nb.categorical_columns)",
            inputs.named,
            ", ".join(left),
        )
    if nb.model == "gaussian":
        numeric, categorical = numeric + categorical, []
    elif nb.model == "categorical":
        numeric, categorical = [], categorical + numeric
    return numeric, categorical


class TableRows:
    """A table's rows in file order, each ``(index, row as a dict, (file, row in the file))``
    (``_Numbering``): as an RDD (``rdd``), or as Arrow batches, each with its rows' indices and
    places (``map_batches``: no ``Row`` pickled a row from the JVM and unpickled in Python, about
    25 µs a row; only where every column's Python value is a ``Row``'s, ``arrow_columns``)."""

    def __init__(self, rdd=None, frame=None, numbering=None):
        self._rdd, self.frame, self.numbering = rdd, frame, numbering

    def rdd(self):
        """The rows as an RDD."""
        if self._rdd is None:
            numbering = self.numbering
            self._rdd = self.frame.rdd.mapPartitions(lambda rows: _numbered(rows, numbering()))
        return self._rdd

    def map_batches(self, fn, schema: str):
        """``fn(a partition's (record batch, indices, place(j) -> (file, row)), its numbering)`` ->
        Arrow record batches of ``schema``, as a DataFrame; None where the rows are not read through
        Arrow (a scikit-learn dataset, or a column whose value Arrow gives otherwise than a ``Row``:
        ``arrow_columns``)."""
        if self.frame is None or not arrow_columns(self.frame.schema):
            return None
        numbering, names = self.numbering, self.frame.columns
        # positional names into mapInArrow, the table's back in each batch: pyspark's mapInArrow
        # takes every input column by name, and a name holding a dot ("note.x") is not found
        positional = self.frame.toDF(*(f"c{i}" for i in range(len(names))))

        def partition(batches):
            numbers = numbering()
            return fn(_numbered_batches((b.rename_columns(names) for b in batches), numbers), numbers)

        return positional.mapInArrow(partition, schema)


def arrow_columns(schema) -> bool:
    """Whether every column of ``schema`` reaches Python through Arrow as the same value as in a
    ``Row`` (text, booleans, integers, floating point numbers, dates): not a timestamp (Arrow's
    carries its zone), a decimal, a nested or an untyped column."""
    from pyspark.sql import types as T

    plain = (T.StringType, T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    return all(isinstance(f.dataType, (*plain, T.FloatType, T.DoubleType, T.DateType)) for f in schema.fields)


def _rows_in_file_order(df, header: int = 0, name_of=lambda path: path, numbered: bool = True) -> TableRows:
    """``(index, row as a dict, (file, row in the file))``: the row's 0-based position in the files
    read in path order, each from its start, whatever the partitioning, and where it is (the file
    as ``name_of`` names Spark's path of it, ``inputs.files.names_by_path``; the row 1-based in its
    file after ``header`` rows, ``_header_rows``: how a malformed row is named). (``zipWithIndex`` numbers
    partitions in Spark's order, which puts a large file's pieces before a smaller file and its
    last, shorter piece after it, and cuts files by the cores: the hold-out and the ids moved with
    ``local[N]``.) One pass
    counts the rows of each piece of a file (``_metadata``), as ``zipWithIndex`` counts partitions.
    Not ``numbered``: no such pass; each row's place is its piece and its row there (``_Pieces``)."""
    from pyspark.sql import functions as F

    piece = [
        F.col("_metadata.file_path").alias("__file"),
        F.col("_metadata.file_block_start").alias("__start"),
    ]
    tagged = df.select("*", *piece)
    if not numbered:
        return TableRows(frame=tagged, numbering=lambda: _Pieces(header, name_of))
    # every column counted, so the reader parses each row as the numbering pass will (no column pruning)
    whole = F.struct(*[named_column(c) for c in df.columns])
    starts, total, first = {}, 0, {}
    for r in sorted(tagged.groupBy("__file", "__start").agg(F.count(whole).alias("count")).collect()):
        starts[(r["__file"], r["__start"])] = total
        first.setdefault(r["__file"], total)  # the file's first piece (pieces sort by their start)
        total += r["count"]
    return TableRows(frame=tagged, numbering=lambda: _Numbering(starts, first, header, name_of))


class _Pieces:
    """The numbers of rows not counted beforehand (training without a hold-out, which alone reads a
    row's index), a partition's rows one after another (a piece's rows come together, in file
    order, within one partition): a row's index is its row in its piece, its place the piece and
    that row as a file counts it, which ``inputs.stats.split_stats`` makes the row in the file from
    each piece's rows, counted here (``counts``: ``((PIECE, source, start), rows)``)."""

    def __init__(self, header: int, name_of):
        self.header, self.name_of = header, name_of
        self.key, self.seen, self.rows = None, 0, Counter()

    def _next(self, at: tuple) -> int:
        """The next row's row in its piece ``at`` (``(file, start)``), from 0."""
        self.seen = 0 if at != self.key else self.seen + 1
        self.key = at
        return self.seen

    def index(self, at: tuple) -> int:
        self.rows[at] += 1
        return self._next(at)

    def place(self, at: tuple, index: int) -> tuple:
        return self.name_of(at[0]), (at[1], index + 1 + self.header)

    def counts(self) -> list[tuple[tuple, int]]:
        return [((PIECE, TABLE + self.name_of(f), start), n) for (f, start), n in self.rows.items()]


class _Numbering(_Pieces):
    """``_rows_in_file_order``'s numbers: a row's index from its piece's first row's (``starts``),
    and where it is in its file (``first``: each file's first index)."""

    def __init__(self, starts: dict, first: dict, header: int, name_of):
        super().__init__(header, name_of)
        self.starts, self.first = starts, first

    def index(self, at: tuple) -> int:
        return self.starts[at] + self._next(at)

    def place(self, at: tuple, index: int) -> tuple[str, int]:
        """Where the row of piece ``at`` and ``index`` is: its file's name, its row there."""
        return self.name_of(at[0]), index - self.first[at[0]] + 1 + self.header

    def counts(self) -> list:
        """No piece's rows to report: every row was numbered beforehand."""
        return []


def _numbered(rows, numbering: _Numbering):
    """Rows (``Row``s holding ``__file`` and ``__start``, taken out here) numbered."""
    for r in rows:
        d = r.asDict()
        at = (d.pop("__file"), d.pop("__start"))
        index = numbering.index(at)
        yield index, d, numbering.place(at, index)


def _numbered_batches(batches, numbering: _Numbering):
    """Arrow batches (holding ``__file`` and ``__start``, taken out here), each with its rows'
    indices and ``place(j)``."""
    import numpy as np

    for batch in batches:
        pieces = list(zip(batch.column("__file").to_pylist(), batch.column("__start").to_pylist()))
        index = np.fromiter((numbering.index(at) for at in pieces), np.int64, batch.num_rows)

        def place(j: int, pieces=pieces, index=index) -> tuple:
            return numbering.place(pieces[j], int(index[j]))

        yield batch.drop_columns(["__file", "__start"]), index, place


def local_table_rows(inputs: Inputs, nb: NBSpec) -> tuple:
    """A table's rows in file order as a pyarrow Table, and where each is (``(file, row in it)``, as
    ``_rows_in_file_order`` gives them), read as Spark reads it (``inputs.tables.local_table``: a
    CSV's cells as their text, with numbers inferred only to find the numeric columns when the config
    names none; Parquet as typed). Then ``table_columns``, the rule of every table reader."""
    import pyarrow as pa

    if inputs.spec.format == "sklearn":
        records, places, names = _sklearn_records(inputs, nb)
        columns = table_columns(inputs, nb, [*names, nb.label_column], set(names), {})
        return (pa.Table.from_pylist(records), places, *columns)
    spec = inputs.spec  # pyarrow, as Spark, infers no number written "1,5": csv_numbers finds them
    table, parts, numeric_types = local_table(
        inputs.files, spec.format, _by_type(nb) and spec.decimal != ",", spec.delimiter
    )
    if spec.format == "csv" and _by_type(nb):
        numeric_types = csv_numbers(
            table, numeric_types, nb.label_column, inputs.named, spec.delimiter, spec.decimal
        )
    nested = {
        f.name: str(f.type)
        for f in table.schema
        if pa.types.is_nested(f.type) or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)
    }
    numeric, categorical = table_columns(inputs, nb, table.column_names, numeric_types, nested)
    header = _header_rows(inputs.spec.format)
    places = [(name, k + 1 + header) for name, rows in parts for k in range(rows)]
    return table, places, numeric, categorical
