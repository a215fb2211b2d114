"""CSV and Parquet tables: Spark's CSV reader as nbspark sets it (``csv_frame``), and the tables
read in this process with pyarrow as Spark's readers read them (``local_table``, ``csv_table``),
with the one rule of a header both refuse (``header_problem``). No pyspark import."""

from __future__ import annotations

import io
import logging
import re

from nbspark.errors import EmptyTable, InputError
from nbspark.inputs.decoding import UTF16_HINT
from nbspark.inputs.files import head_line_values, local_line_values, spark_paths
from nbspark.inputs.spec import DECIMAL_COMMA, is_decimal_comma
from nbspark.storage.locations import location

__all__ = [
    "csv_batches",
    "csv_frame",
    "csv_number_columns",
    "csv_numbers",
    "spark_cells",
    "csv_table",
    "decimal_comma_columns",
    "header_problem",
    "headed",
    "local_table",
    "parquet_here_problem",
]

log = logging.getLogger(__name__)

#: The characters a CSV's cells are most often separated by, for the hint on a header read as one
#: column (``_one_column``).
DELIMITERS = (",", ";", "\t", "|")
#: The CSV files of an input whose headers ``csv_frame`` reads before Spark's reader runs: one that
#: differs from the first failed a task, whose report Spark's loggers printed twice (160 lines)
#: above the one line. Each is an open and a small read (on an object store a request, some tens of
#: ms), so not every file of a directory of hundreds of part files: past these, Spark's reader finds
#: it (and the command says it in one line still, ``app.cli._csv_header_refused``).
HEADERS_READ_FIRST = 32


def csv_frame(spark, files: list, infer: bool = False, delimiter: str = ","):
    """Spark SQL's CSV source over ``files`` (``Location``s, read literally) as nbspark reads every
    CSV, training and classifying (and ``inputs.tables.csv_table`` reads in process): a header row,
    cells separated by ``delimiter`` (the input's setting), a record a line (``PERMISSIVE``: a
    short row ends in nulls), every cell as text unless ``infer``, and quotes as RFC 4180, Excel
    and Python write them (``"say ""hi"" now"`` is ``say "hi" now``: Spark's default escape, a
    backslash, kept the doubled quotes in the cell, where the in-process reader took them out).
    ``InputError`` naming the file for a header that holds NUL characters
    (``inputs.tables.header_problem``: a UTF-16 file), names a column twice or none, or is not
    the first file's, as the reader in process refuses them (the headers of the first
    ``HEADERS_READ_FIRST`` files read here); a warning for a header read as one column that
    another delimiter would cut (``_one_column``)."""

    def headers():  # refused headers found here, not in a failed task
        for i, f in enumerate(files[:HEADERS_READ_FIRST]):
            head = head_line_values(f) if i == 0 else head_line_values(f, 1 << 16)  # the others' 64 KB
            lines = _records(head or [])
            yield f, _header(f, lines[0], delimiter) if lines else None

    _one_header_of(headers())
    df = spark.read.csv(
        spark_paths(files),
        header=True,
        inferSchema=infer,
        mode="PERMISSIVE",
        enforceSchema=False,
        escape='"',
        sep=delimiter,
    )
    if any("\x00" in name for name in df.columns):
        culprit = next((f for f in files if _opens_with_nul(f)), files[0])
        raise InputError(f"{culprit}: {header_problem(df.columns)}")
    if not infer:  # once: a reader that infers types reads the same files again
        _one_column(files, df.columns, delimiter)
    return df


def _one_column(files: list, header: list[str], delimiter: str, setting: str = "") -> None:
    """Warn of a header of ``files`` read as one column that another of ``DELIMITERS`` would cut into
    several: a file separated by semicolons (Excel's where the comma is the decimal mark) read with
    commas gave one column whose cells are whole lines, and a density model of it, or no label
    column. The warning names the file, or the directory of several, and the ``setting`` that
    changes the delimiter (default: the input's, ``train.delimiter`` or ``test.delimiter``)."""
    if len(header) == 1 and (cut := [d for d in DELIMITERS if d != delimiter and d in header[0]]):
        where = files[0] if len(files) == 1 else files[0].parent
        setting = (
            f"{setting} {cut[0]!r}"
            if setting
            else f"the input's delimiter (train.delimiter or test.delimiter = {cut[0]!r})"
        )
        log.warning(
            "%s: its header is one column, %r: are its cells separated by %r? Set %s",
            where,
            header[0],
            cut[0],
            setting,
        )


def _opens_with_nul(f) -> bool:
    """Whether the first KB of a file holds a NUL byte."""
    with f.open() as stream:
        return b"\x00" in stream.read(1024)


def decimal_comma_columns(table, columns=None) -> set[str]:
    """The columns of a CSV read as text (a Spark DataFrame, or a pyarrow table read in process;
    ``columns`` of them, default all) whose cells are numbers written with a decimal comma
    (``inputs.spec.DECIMAL_COMMA``): at least one, and every one that is not empty, as Spark infers a
    column of numbers (it infers none written ``1,5``). On a DataFrame, one aggregation (a job)
    where Spark's inference would have read the files."""
    if columns is not None and not columns:
        return set()
    if hasattr(table, "selectExpr"):
        names = table.columns if columns is None else list(columns)

        def numbers(i, name):
            cell = "`" + name.replace("`", "``") + "`"
            return f"count({cell}) > 0 AND coalesce(bool_and({cell} RLIKE '{DECIMAL_COMMA}'), false) AS c{i}"

        row = table.selectExpr(*(numbers(i, n) for i, n in enumerate(names))).first()
        return {n for i, n in enumerate(names) if row[f"c{i}"]}
    found = set()
    for name in table.column_names if columns is None else columns:
        cells = [v for v in table.column(name).to_pylist() if v is not None]
        if cells and all(isinstance(v, str) and is_decimal_comma(v) for v in cells):
            found.add(name)
    return found


def csv_numbers(table, inferred: set[str], label: str, where, delimiter: str, decimal: str) -> set[str]:
    """The numeric columns of a CSV read as text (a Spark DataFrame, or a pyarrow table read in
    process) whose config names none, in Spark and in process alike: with ``decimal`` ``","`` those
    of ``decimal_comma_columns`` (no reader infers them); else ``inferred``, the reader's inference
    of numbers written with points, after a warning naming the other columns (the ``label`` aside)
    whose every cell is a number written with a decimal comma, ``1,5``: a mixed model would count
    them as categories, a Gaussian one refuse every row. That look costs one aggregation, and is
    made only where cells are not separated by commas (a comma in a cell must be quoted there)."""
    if decimal == ",":
        return decimal_comma_columns(table)
    if delimiter != ",":
        names = table.columns if hasattr(table, "selectExpr") else table.column_names
        if found := sorted(
            decimal_comma_columns(table, [c for c in names if c not in inferred and c != label])
        ):
            log.warning(
                "%s: %s hold%s numbers written with a decimal comma (1,5), not read as numbers; set the "
                "input's decimal mark (train.decimal or test.decimal = ',') to read them",
                where,
                ", ".join(found),
                "s" if len(found) == 1 else "",
            )
    return set(inferred)


def local_table(files, fmt: str, infer: bool = False, delimiter: str = ",", setting: str = ""):
    """A CSV or Parquet input (``files``: a table's directory, or files) read in this process as
    Spark reads it: ``(table, parts, numeric)``. ``table`` holds every file's rows in path order, a
    CSV's cells as text (``csv_table``), Parquet as typed with a partition directory's value
    (``name=value``) a column; ``parts`` is each file's ``(name, rows)`` in that order, the name as
    records call a file (``str`` of its ``Location``: how a row is named); ``numeric`` the columns
    of numbers: Parquet's by type, a CSV's inferred when ``infer``, as Spark infers over every file
    (numbers in each file that has a value in the column), else none. A CSV's cells are separated
    by ``delimiter``; ``setting`` is what a warning of a header read as one column says changes it
    (``_one_column``)."""
    import pyarrow as pa

    if fmt == "parquet":
        import pyarrow.dataset as ds

        named = []
        for f in files:
            data = ds.dataset(f.path, partitioning="hive")
            for fragment in sorted(data.get_fragments(), key=lambda fragment: fragment.path):
                scanned = ds.Scanner.from_fragment(fragment, schema=data.schema).to_table()
                named.append((str(location(fragment.path)), scanned))
        table = pa.concat_tables([t for _, t in named] or [pa.table({})], promote_options="default")
        return table, [(uri, t.num_rows) for uri, t in named], _numbers(table.schema)
    read = _one_header(files, [csv_table(f, delimiter) for f in files])  # None: empty, no rows
    if first := next(filter(None, read), None):
        _one_column(files, first.column_names, delimiter, setting)
    table = pa.concat_tables([t for t in read if t is not None] or [pa.table({})])
    parts = [(str(f), 0 if t is None else t.num_rows) for f, t in zip(files, read)]
    return table, parts, csv_number_columns(table) if infer else set()


#: A CSV cell that Spark's reader infers as a number (``CSVInferSchema``): an int or a long as Java
#: parses one (Unicode digits too: ``١٢``), a decimal, a double as Java's ``Double.parseDouble``
#: reads one (spaces and control characters around it trimmed; ``NaN``, ``Infinity``, a suffix ``f``
#: or ``d``, hex floats ``0x1p3``), or the reader's own ``NaN``, ``Inf`` and ``-Inf``. pyarrow's
#: inference differs on both sides (``inf``, ``nan``, ``0x10`` numbers to it; ``1d``, ``١٢`` not),
#: so a column was numeric in process and text in Spark, or the other way: two models of one file.
SPARK_NUMBER = (
    r"^(?:[+-]?\p{Nd}+|NaN|Inf|-Inf|[\x00-\x20]*[+-]?(?:NaN|Infinity"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?)[\x00-\x20]*)$"
)


def csv_number_columns(table) -> set[str]:
    """The columns of a CSV read as text (``csv_table``'s cells) that Spark's reader infers as
    numbers, over every file at once as Spark infers: those with a cell, each cell ``SPARK_NUMBER``
    (an empty cell is none)."""
    import pyarrow.compute as pc

    found = set()
    for name in table.column_names:
        cells = table.column(name).drop_null()
        if len(cells) and pc.all(pc.match_substring_regex(cells, SPARK_NUMBER)).as_py():
            found.add(name)
    return found


def parquet_here_problem(files) -> str | None:
    """Why a local Parquet table's rows read in this process (``local_table``) would not be typed as
    Spark's reader types them (None: they would): a partition directory's column (Spark infers its
    type from the values: a date, a double), or a column of a type Spark reads as another (unsigned
    integers, dictionaries, large strings, timestamps that are not microseconds without a time zone,
    …) or not at all. Every column of every file is checked, nested fields too (``_typed_alike``)."""
    import pyarrow.dataset as ds

    for f in files:
        data = ds.dataset(f.path, partitioning="hive")
        fragments = list(data.get_fragments())
        own = set().union(*(set(x.physical_schema.names) for x in fragments)) if fragments else set()
        if parts := [n for n in data.schema.names if n not in own]:
            return f"{f}: a table in partition directories ({', '.join(parts)}) is read with Spark"
        for field in data.schema:
            if not _typed_alike(field.type):
                return f"{f}: column {field.name!r} of type {field.type} is read with Spark"
    return None


def _typed_alike(t) -> bool:
    """Whether a Parquet column of pyarrow type ``t`` is read by Spark as that same type, written back
    as it (``parquet_here_problem``)."""
    import pyarrow as pa

    types = pa.types
    if types.is_list(t):
        return _typed_alike(t.value_type)
    if types.is_struct(t):
        return all(_typed_alike(t.field(i).type) for i in range(t.num_fields))
    if types.is_map(t):
        return _typed_alike(t.key_type) and _typed_alike(t.item_type)
    if types.is_timestamp(t):
        return t.tz is None and t.unit == "us"
    plain = (types.is_string, types.is_binary, types.is_boolean, types.is_signed_integer, types.is_float32)
    return any(check(t) for check in (*plain, types.is_float64, types.is_date32, types.is_decimal128))


def _one_header(files, read: list) -> list:
    """``read`` (each file's ``csv_table``, None for an empty file), once every file's header is the
    first file's. Spark reads each file by that header and refuses one whose names differ in name or
    place (``enforceSchema=false``); one that differs only in case it reads, but infers types with
    that header line as a row of data: a numeric column became text. A header not the first's is
    refused here (``InputError``, naming the file; pyarrow said "Schema at index 1 was different"
    in 8 lines)."""
    _one_header_of((f, None if t is None else t.column_names) for f, t in zip(files, read))
    return read


def _one_header_of(headers) -> None:
    """The rule of ``_one_header`` and ``csv_frame`` alike: ``InputError`` naming the first file of
    ``headers`` (``(file, names)``, in path order; names None for an empty file, which has none to
    differ) whose names are not the first named file's, in name and place. Read lazily: no header
    after the first that differs is read."""
    first = None
    for f, names in headers:
        if names is None:
            continue
        if first is None:
            first = (f, names)
        elif names != first[1]:
            raise InputError(
                f"{f}: its header ({', '.join(names)}) is not {first[0].name}'s "
                f"({', '.join(first[1])}); the CSV files of one input share one header"
            )


def _numbers(schema) -> set[str]:
    """The columns of a pyarrow ``schema`` that hold numbers."""
    import pyarrow as pa

    return {
        f.name
        for f in schema
        if pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_decimal(f.type)
    }


def csv_table(f, delimiter: str = ","):
    """One CSV file (a ``Location``) with its header, as Spark's CSV reader reads it (``header``,
    ``PERMISSIVE``, one line a record, cells separated by ``delimiter``): a table with every column
    as text (``csv_number_columns`` says which Spark infers as numbers). ``.gz`` and ``.bz2`` are
    decompressed, bytes that are not UTF-8 read as U+FFFD, empty lines skipped, an empty cell null.
    A row with fewer cells than the header ends in nulls, one with more loses the extra cells
    (Spark's rule), and a quote left open ends with its line. None for an empty file (it holds no
    rows, as Spark reads it); a header naming a column twice, or leaving one unnamed, is refused
    (``InputError``). The file is read once."""
    lines = _records(local_line_values(f))
    if not lines:
        return None
    return _text_cells(f, lines[1:], _header(f, lines[0], delimiter), delimiter)


def csv_batches(f, line_batches, delimiter: str = ",", setting: str = ""):
    """A CSV file's rows as ``csv_table`` reads them, every cell as text, in batches as its lines
    come (``line_batches``: ``inputs.files.line_value_batches``), so that memory holds one batch:
    ``(number of the batch's first row, table)``, the header row 1 as a spreadsheet counts (and a
    train names a malformed row). The header is the first line that is not empty, refused or warned
    of as ``csv_table`` and ``local_table`` do (``setting``: what changes the delimiter); a file with
    no line gives no batch."""
    names, number = [], 2
    for batch in line_batches:
        lines = _records(batch)
        if not names and lines:
            names = _header(f, lines.pop(0), delimiter)
            _one_column([f], names, delimiter, setting)
        if lines:
            table = _text_cells(f, lines, names, delimiter)
            yield number, table
            number += table.num_rows


def _records(lines: list[bytes]) -> list[bytes]:
    """The lines Spark's CSV reader reads as records: not those Java's ``trim`` leaves empty (white
    space and control characters only, ``CSVUtils.filterCommentAndEmpty``)."""
    return [line for line in lines if line.strip(_JAVA_SPACE)]


_JAVA_SPACE = bytes(range(33))  # what Java's String.trim() removes: every character up to ' '


def _text_cells(f, lines: list[bytes], header: list[str], delimiter: str):
    """``lines`` (records, below the header whose names are ``header``) as a table of text cells by
    ``csv_table``'s rules: the lines whose quoting pyarrow reads as Spark does (``_plain``) by
    pyarrow, where each is the header's width; the others, or all of them where a width is not, by
    ``spark_cells``, cut or padded to the header's width; the rows in the lines' order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    data = b"\n".join(lines).decode("utf-8", "replace")
    texts = data.split("\n") if data else []
    plain = np.ones(len(texts), bool)
    if '"' in data:  # the lines pyarrow reads as Spark does, and the others
        plain = pc.match_substring_regex(pa.array(texts, pa.string()), _plain(delimiter)).to_numpy(False)
        data = data if plain.all() else "\n".join(t for t, p in zip(texts, plain.tolist()) if p)
    table = _read_csv(f, data, header, delimiter)
    if table is None:  # a row of another width than the header: each line by spark_cells
        plain, table = np.zeros(len(texts), bool), _read_csv(f, "", header, delimiter)
    if plain.all():
        return table
    fast, slow = np.flatnonzero(plain), np.flatnonzero(~plain)
    width = len(header)
    rows = [(spark_cells(texts[i], delimiter) + [None] * width)[:width] for i in slow.tolist()]
    read = pa.table({name: pa.array([r[j] for r in rows], pa.string()) for j, name in enumerate(header)})
    order = np.argsort(np.concatenate([fast, slow]), kind="stable")
    return pa.concat_tables([table, read]).take(pa.array(order))


def _plain(delimiter: str) -> str:
    """A line pyarrow's CSV parser reads as Spark's does (an RE2 pattern): each cell quote-free, or
    quoted from its start to its end with any quote inside doubled. Nothing is plain for a
    delimiter of more than one character, or a quote."""
    if len(delimiter) != 1 or delimiter == '"':
        return "^$x"  # never
    d = re.escape(delimiter)
    cell = f'(?:[^"{d}]*|"(?:[^"]|"")*")'
    return f"^{cell}(?:{d}{cell})*$"


def spark_cells(line: str, delimiter: str = ",") -> list[str | None]:
    """The cells of one CSV line as Spark's reader (univocity's parser, a record a line, quote and
    escape ``"``, ``STOP_AT_DELIMITER``) gives them, an empty cell None. A cell opening with a quote
    runs to its closing quote (``""`` inside is one quote), white space after it up to the
    delimiter dropped; one with more after its closing quote is all of it as written, to the next
    delimiter (``"a"b`` is ``"a"b``); one whose quote is never closed is the rest of the line (a lone
    quote is itself). Any other cell is as written, quotes and white space kept."""
    cells, i, n = [], 0, len(line)
    while True:
        if i < n and line[i] == '"':
            i = _quoted(line, i, delimiter, cells)
        else:
            end = line.find(delimiter, i)
            end = n if end < 0 else end
            cells.append(line[i:end] or None)
            i = end
        if i >= n:
            return cells
        i += len(delimiter)


def _quoted(line: str, start: int, delimiter: str, cells: list) -> int:
    """``spark_cells``' reading of a cell that opens with a quote at ``start``: the cell appended to
    ``cells``; where the next delimiter, or the line's end, is."""
    n, i, content = len(line), start + 1, []
    while (j := line.find('"', i)) >= 0:
        content.append(line[i:j])
        if line.startswith('"', j + 1):  # "" inside: one quote
            content.append('"')
            i = j + 2
            continue
        k = j + 1
        while k < n and line[k] <= " " and not line.startswith(delimiter, k):
            k += 1
        if k >= n or line.startswith(delimiter, k):  # closed: white space after it dropped
            cells.append("".join(content) or None)
            return k
        end = line.find(delimiter, k)
        end = n if end < 0 else end
        cell = '"' + "".join(content) + line[j:end]  # more after the quote: all of it
        cells.append(cell)
        return end
    content.append(line[i:])  # never closed: the rest of the line
    cells.append("".join(content) or '"')
    return n


def _read_csv(f, data: str, header: list[str], delimiter: str):
    """CSV records (``data``, no header line) read by pyarrow as the columns ``header``, every cell
    as text, an empty cell null; None where a row's width is not the header's."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not data:
        return pa.table({name: pa.array([], pa.string()) for name in header})
    text = {name: pa.string() for name in header}
    options = pacsv.ConvertOptions(column_types=text, null_values=[""], strings_can_be_null=True)
    try:
        return pacsv.read_csv(
            io.BytesIO(data.encode()),
            read_options=pacsv.ReadOptions(column_names=header),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=options,
        )
    except pa.ArrowInvalid as exc:
        if "CSV parse error" in str(exc):
            return None
        raise InputError(f"{f}: {exc}") from None


def _header(f, line: bytes, delimiter: str) -> list[str]:
    """The names of a CSV file's header ``line`` (its first line that is not empty), or
    ``InputError`` naming the file for one Spark's reader refuses (``header_problem``). Spark finds
    such a header inside a task, and its loggers printed the failed task twice (160 lines) above
    the one line: ``csv_frame`` checks the first file's here first, as ``csv_table`` checks each."""
    header = [cell or "" for cell in spark_cells(line.decode("utf-8", "replace"), delimiter)]
    if problem := header_problem(header):
        raise InputError(f"{f}: {problem}")
    return header


def headed(root, names) -> None:
    """``EmptyTable`` for a table of no columns: every file of it empty (Spark's reader and
    ``csv_table`` read no header from an empty file), which was said as a missing label or a table
    with no column to model."""
    if not len(names):
        raise EmptyTable(f"{root}: no header line: the table's files are empty")


def header_problem(header: list[str]) -> str | None:
    """Why Spark's CSV reader refuses a file with this ``header`` (its names), in the words every
    reader says it (``csv_table`` in process; ``app.cli.job_failure`` for Spark's "CSV header does
    not conform to the schema"; ``csv_frame``): NUL characters (a UTF-16 file, which
    Spark reads as UTF-8 without a word), a column left unnamed, or one named twice, case aside as
    Spark compares names (``a,A``); None when each column has a name of its own."""
    if any("\x00" in name for name in header):
        return f"the header holds NUL characters: {UTF16_HINT}"
    if "" in header:
        return f"the header leaves column {header.index('') + 1} unnamed; name each column"
    seen: dict[str, str] = {}
    for name in header:
        if (first := seen.get(name.lower())) is not None:
            why = "" if first == name else f" ({first!r} and {name!r}: Spark's reader ignores case)"
            return f"the header names column {first!r} twice{why}; name each column once"
        seen[name.lower()] = name
    return None
