"""The naive Bayes family's inputs: tsv/sms lines, Reuters ModApte stories and tables (csv,
parquet, a scikit-learn dataset) turned into documents or rows.

Record shapes: lines ``(file, offset, text)`` / SGML files / table rows -> ``Doc(id, labels,
tokens)`` or ``Row(id, label, categorical, numeric)``, mixed with statistics records
(``inputs.stats``) in one RDD; ``record_events`` turns each into its count events (``nb``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from nbspark.errors import InputError
from nbspark.inputs.files import names_by_path, ngram_lines, parquet_frame, sgml_texts
from nbspark.inputs.lines import parsed_lines
from nbspark.inputs.parsers import decode_reuters, holdout_part
from nbspark.inputs.resolve import Inputs
from nbspark.inputs.spec import is_decimal_comma
from nbspark.inputs.stats import TABLE, PartitionStats, is_stat
from nbspark.inputs.tables import csv_frame, csv_numbers, local_table
from nbspark.inputs.tokens import WHITESPACE, tokenizer
from nbspark.naive_bayes.model import binary_cell, doc_events, number_cell, row_events
from nbspark.settings.config import ExperimentConfig, NBSpec
from nbspark.spark.faults import maybe_inject
from nbspark.spine.frames import named_column

__all__ = [
    "Doc",
    "REUTERS_TOP10",
    "Row",
    "decoded_lines",
    "local_records",
    "record_events",
    "records_rdd",
    "table_columns",
    "text_lines",
]

#: The ten most frequent topics of the ModApte training stories (counted from Reuters-21578).
REUTERS_TOP10 = ("earn", "acq", "money-fx", "grain", "crude", "trade", "interest", "wheat", "ship", "corn")


class Doc(NamedTuple):
    id: str
    labels: tuple[str, ...]
    tokens: list[str]


class Row(NamedTuple):
    id: str
    label: str
    categorical: dict
    numeric: dict


def _keep(spec_splits, holdout, seed, record_id) -> bool:
    if not holdout:
        return True
    part = holdout_part(record_id, seed, holdout)
    return not spec_splits or part in spec_splits


#: Lines parsed together by the Python engines (``inputs.lines.parsed_lines``).
LINE_BATCH = 1024


def _text_partition(records, fmt, nb: NBSpec, splits, holdout, seed, mode, keep_bad):
    maybe_inject()
    tok = tokenizer(nb.tokenizer)
    stats = PartitionStats(keep_bad, mode)
    for batch in _batched(records, LINE_BATCH):
        for (source, offset, line), (doc_id, labels, text, category) in zip(
            batch, parsed_lines([line for _, _, line in batch], fmt)
        ):
            stats.add("lines_read")
            if "\ufffd" in line:
                stats.add("decode_replacements", line.count("\ufffd"))
            if category == "blank_lines":
                stats.add("blank_lines")
                continue
            if category != "documents":
                stats.bad_record(source, offset, category.removeprefix("malformed."), line)
                continue
            if fmt == "sms":  # an sms line has no id: its record id is its file and byte offset
                doc_id = f"{source.rsplit('/', 1)[-1]}@{offset}"
            if not _keep(splits, holdout, seed, doc_id):
                continue
            tokens = tok(text)
            stats.add("documents")
            if not tokens:
                stats.add("empty_documents")
            yield Doc(doc_id, tuple(labels), tokens)
    yield from stats.records()


def _batched(records, size: int):
    batch = []
    for record in records:
        batch.append(record)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _topics_partition(records, nb: NBSpec, splits, mode, keep_bad):
    tok = tokenizer(nb.tokenizer)
    stats = PartitionStats(keep_bad, mode)
    top = frozenset(REUTERS_TOP10)
    for source, data in records:
        for story in stats.sgml_file(source, decode_reuters(data)):
            stats.add("stories_read")
            # ModApte: TRAIN or TEST, TOPICS="YES", at least one topic
            if story.lewissplit not in ("TRAIN", "TEST") or story.topics_attr != "YES" or not story.topics:
                continue
            if splits and story.lewissplit not in splits:
                continue
            if nb.labels == "top10":
                if story.topics[0] not in top:
                    continue
                labels = (story.topics[0],)
            else:
                labels = story.topics
            tokens = tok(story.text)
            stats.add("documents")
            if not tokens:
                stats.add("empty_documents")
            yield Doc(f"reuters:{story.newid}", labels, tokens)
    yield from stats.records()


def _table_partition(
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
    for index, record, (source, row) in records:
        stats.add("rows_read")
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
        num = {c: x for c, x in values.items() if x is not None and math.isfinite(x)}
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
        if not _keep(splits, holdout, seed, row_id):
            continue
        stats.add("documents")
        # a missing or non-finite cell, numeric or categorical, leaves that feature out of the row
        # (naive Bayes skips it); counted for the rows of this part only
        stats.add("missing_values", sum(x is None for x in values.values()) + len(categorical) - len(cat))
        stats.add("non_finite_values", sum(x is not None and not math.isfinite(x) for x in values.values()))
        yield Row(row_id, str(label), cat, num)
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


def _table_source(spark, inputs: Inputs, nb: NBSpec):
    """``(RDD of (index, dict, place), numeric columns, categorical columns, the table's fields)`` for
    csv, parquet, sklearn (no fields: every column of a scikit-learn table is a feature or the label)."""
    fmt = inputs.spec.format
    if fmt == "sklearn":
        records, places, names = _sklearn_records(inputs, nb)
        rdd = spark.sparkContext.parallelize(
            [(i, r, place) for i, (r, place) in enumerate(zip(records, places))],
            max(2, spark.sparkContext.defaultParallelism),
        )
        return (rdd, *table_columns(inputs, nb, [*names, nb.label_column], set(names), {}), [])
    explicit = bool(nb.numeric_columns or nb.categorical_columns)
    if fmt == "csv":
        # every cell as the file writes it, in training as in classify (where the model names
        # the columns): a label or category is its text ("TRUE", "01", "85.50", a date), never
        # what schema inference made of it ("True", "1", "85.5"); inference only finds the
        # numeric columns when the config names none (Spark infers no number written "1,5":
        # csv_numbers, in Spark as in process)
        sep, comma = inputs.spec.delimiter, inputs.spec.decimal == ","
        df = csv_frame(spark, inputs.files, delimiter=sep)
        typed = df if explicit or comma else csv_frame(spark, inputs.files, infer=True, delimiter=sep)
    else:
        df = typed = parquet_frame(spark, inputs.files)
    from pyspark.sql.types import ArrayType, BinaryType, MapType, NumericType, StructType

    numeric_types = {f.name for f in typed.schema.fields if isinstance(f.dataType, NumericType)}
    if fmt == "csv" and not explicit:
        numeric_types = csv_numbers(
            df, numeric_types, nb.label_column, inputs.named, sep, inputs.spec.decimal
        )
    nested = {
        f.name: f.dataType.simpleString()
        for f in df.schema.fields
        if isinstance(f.dataType, (ArrayType, BinaryType, MapType, StructType))
    }
    numeric, categorical = table_columns(inputs, nb, df.columns, numeric_types, nested)  # refusals first
    rows = _rows_in_file_order(df, _header_rows(fmt), names_by_path(inputs.files, encoded=True))
    return rows, numeric, categorical, df.schema.fields


def table_columns(inputs: Inputs, nb: NBSpec, names, numeric_types, nested) -> tuple[list[str], list[str]]:
    """``(numeric, categorical)`` feature columns of a table whose columns are ``names`` (the label
    among them), ``numeric_types`` those read as numbers, ``nested`` the list, map, struct or bytes
    ones (by type name): the config's, else by type and model; ``InputError`` for a missing label or
    column, or a nested one used. The one rule of every table reader, in Spark or in process."""
    if nb.label_column not in names:
        raise InputError(f"{inputs.named}: no label column {nb.label_column!r} (columns: {', '.join(names)})")
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
        raise InputError(f"{inputs.named}: no column(s) {', '.join(missing)}")
    # a list, map, struct or bytes cell is no number and no one category (its text would be a value seen once)
    if bad := [c for c in [nb.label_column, *numeric, *categorical] if c in nested]:
        raise InputError(
            f"{inputs.named}: column {bad[0]!r} is {nested[bad[0]]}, which cannot be a label or a table "
            "feature; "
            "name the feature columns (nb.numeric_columns, nb.categorical_columns) to leave it out"
        )
    if nb.model == "gaussian":
        numeric, categorical = numeric + categorical, []
    elif nb.model == "categorical":
        numeric, categorical = [], categorical + numeric
    return numeric, categorical


def _rows_in_file_order(df, header: int = 0, name_of=lambda path: path):
    """``(index, row as a dict, (file, row in the file))``: the row's 0-based position in the files
    read in path order, each from its start, whatever the partitioning, and where it is (the file
    as ``name_of`` names Spark's path of it, ``inputs.files.names_by_path``; the row 1-based in its
    file after ``header`` rows, ``_header_rows``: how a malformed row is named). (``zipWithIndex`` numbers
    partitions in Spark's order, which puts a large file's pieces before a smaller file and its
    last, shorter piece after it, and cuts files by the cores: the hold-out and the ids moved with
    ``local[N]``.) One pass
    counts the rows of each piece of a file (``_metadata``), as ``zipWithIndex`` counts partitions."""
    from pyspark.sql import functions as F

    piece = [
        F.col("_metadata.file_path").alias("__file"),
        F.col("_metadata.file_block_start").alias("__start"),
    ]
    tagged = df.select("*", *piece)
    # every column counted, so the reader parses each row as the numbering pass will (no column pruning)
    whole = F.struct(*[named_column(c) for c in df.columns])
    starts, total, first = {}, 0, {}
    for r in sorted(tagged.groupBy("__file", "__start").agg(F.count(whole).alias("count")).collect()):
        starts[(r["__file"], r["__start"])] = total
        first.setdefault(r["__file"], total)  # the file's first piece (pieces sort by their start)
        total += r["count"]

    def numbered(rows):
        key = seen = None
        for r in rows:  # a piece's rows come together, in file order, within one partition
            d = r.asDict()
            at = (d.pop("__file"), d.pop("__start"))
            seen = 0 if at != key else seen + 1
            key = at
            index = starts[at] + seen
            yield index, d, (name_of(at[0]), index - first[at[0]] + 1 + header)

    return tagged.rdd.mapPartitions(numbered)


def records_rdd(spark, inputs: Inputs, cfg: ExperimentConfig):
    """``(RDD mixing Doc or Row records with statistics records, the table's feature columns, its rows)``:
    a table's rows are ``(RDD of (index, dict, place), the table's fields)`` for what rides along into
    its predictions (``naive_bayes.scoring``); None for text."""
    nb, spec = cfg.nb, inputs.spec
    splits, holdout, seed = frozenset(spec.splits), spec.holdout, spec.seed
    mode, keep = cfg.mode, cfg.max_bad_examples
    sc = spark.sparkContext
    if spec.format in ("tsv", "sms"):
        lines = ngram_lines(sc, list(inputs.files))
        if cfg.partitions:
            lines = lines.repartition(cfg.partitions)
        fmt = spec.format
        return (
            lines.mapPartitions(lambda it: _text_partition(it, fmt, nb, splits, holdout, seed, mode, keep)),
            {},
            None,
        )
    if spec.format == "reuters_topics":
        texts = sgml_texts(sc, list(inputs.files))
        return texts.mapPartitions(lambda it: _topics_partition(it, nb, splits, mode, keep)), {}, None
    if spec.format in ("csv", "parquet", "sklearn"):
        rdd, numeric, categorical, fields = _table_source(spark, inputs, nb)
        label = nb.label_column
        bern, decimal = frozenset(nb.bernoulli_columns), spec.decimal
        mixed = rdd.mapPartitions(
            lambda it: _table_partition(
                it, label, numeric, categorical, splits, holdout, seed, mode, keep, bern, decimal
            )
        )
        return mixed, {"numeric": numeric, "categorical": categorical}, (rdd, fields)
    raise InputError(
        f"format {spec.format!r} is not a naive Bayes input (tsv, sms, reuters_topics, csv, parquet, sklearn)"
    )


def record_events(record, kind):
    if is_stat(record):
        return [record]
    if isinstance(record, Doc):
        return doc_events(record.labels, record.tokens, kind)
    return row_events(record.label, record.categorical, record.numeric)


def decoded_lines(lines):
    """A text DataFrame's lines (``value``) as valid UTF-8, decoded as the JVM decodes the Python
    engines' lines (U+FFFD for bad bytes): the first step of the SQL parse (``text_lines``); the
    arrow paths decode in Python instead (``inputs.lines.jvm_decoded``, tested against this). Only
    a line that is not valid UTF-8 makes the string round trip (``split`` decodes into a Java
    string)."""
    from pyspark.sql import functions as F

    value = F.col("value")
    return lines.select(
        F.when(F.is_valid_utf8(value), value).otherwise(F.get(F.split(value, "\t", 1), 0)).alias("value")
    )


def text_lines(lines, fmt: str):
    """The SQL twin of ``inputs.lines.parse_lines``: a text DataFrame (``value``) as ``(id, labels,
    text, category)``, the one place the SQL engines parse a tsv or sms line (the arrow engine and
    scorer parse in pyarrow, tested line by line against this and the rule in plain Python).
    ``category`` is ``documents``, ``blank_lines`` or one of the Python parser's reasons
    (``malformed.nul``, ``.fields``, ``.id``, ``.labels``, in that order: ``parse_lines``);
    ``labels`` is empty for a line without labels; an sms line's id is null (counting needs none;
    a record's id, ``FILE@BYTE``, is what the Python readers give).

    The fields are cut at the TABs' positions (``instr``, ``substring_index``, ``substr``), not by
    ``split``, which decodes every line into a Java string and encodes its parts back. A line that
    is not valid UTF-8 is first decoded as the JVM decodes the Python engines' lines (U+FFFD for
    bad bytes): the one string round trip kept, for those lines only. A line is a document when
    its fields, id and labels are there and no NUL stands before its text; only the other lines
    are tested in the Python parsers' order (a document is never blank: its id or label is not
    white space). Each step is a projection of its own, which Spark does not inline."""
    from pyspark.sql import functions as F

    def strip(column):  # Python's str.strip(): SQL's trim alone takes only the space
        return F.trim(column, F.lit(WHITESPACE))

    value = F.col("value")
    valid = decoded_lines(lines)
    if fmt == "sms":
        tab = F.col("tab")  # the TAB's position (1-based, in characters; 0: none)
        cut = valid.select("value", F.instr(value, "\t").alias("tab"))
        first = F.substring_index(value, "\t", 1)  # the label field (the whole line without a TAB)
        nul, label = F.instr(first, "\u0000") > 0, strip(first)
        labels = F.when(label != "", F.array(label)).otherwise(F.array().cast("array<string>"))
        doc_id = F.lit(None).cast("string")  # counting needs no id
        text, fields_ok, id_ok = F.when(tab > 0, F.substr(value, tab + 1)), tab > 0, F.lit(True)
    else:
        head = F.col(
            "head"
        )  # the first two fields and the TAB between them (the whole line if it has fewer TABs)
        cut = valid.select("value", F.substring_index(value, "\t", 2).alias("head"))
        doc_id = strip(F.substring_index(value, "\t", 1))
        nul = F.instr(head, "\u0000") > 0
        labels = F.filter(
            F.transform(F.split(F.substring_index(head, "\t", -1), ","), strip), lambda x: x != ""
        )
        fields_ok = F.octet_length(head) < F.octet_length(value)  # two TABs: head stops before the end
        text, id_ok = F.when(fields_ok, F.substr(value, F.char_length(head) + 2)), doc_id != ""
    category = (
        F.when(fields_ok & id_ok & (F.size(labels) > 0) & ~nul, "documents")
        .when(strip(value) == "", "blank_lines")
        .when(nul, "malformed.nul")
        .when(~fields_ok, "malformed.fields")
        .when(~id_ok, "malformed.id")
        .otherwise("malformed.labels")
    )
    return cut.select(
        doc_id.alias("id"), labels.alias("labels"), text.alias("text"), category.alias("category")
    )


def local_records(inputs: Inputs, cfg: ExperimentConfig):
    """``records_rdd``'s records and table columns, read in this process (``nbspark train
    --in-process``): local files through the same partition functions, so a record, its id, its
    hold-out part and every statistic are the Spark readers'. Lines are read as Spark's text reader
    gives them (``inputs.files.local_lines``), decoded as the JVM decodes them; tables as
    ``_local_table`` reads them."""
    from nbspark.inputs.decoding import JVM_REPLACE
    from nbspark.inputs.files import local_lines

    nb, spec = cfg.nb, inputs.spec
    splits, holdout, seed = frozenset(spec.splits), spec.holdout, spec.seed
    mode, keep = cfg.mode, cfg.max_bad_examples
    if spec.format in ("tsv", "sms"):
        lines = (
            (str(f), at, raw.decode("utf-8", JVM_REPLACE)) for f in inputs.files for at, raw in local_lines(f)
        )
        return _text_partition(lines, spec.format, nb, splits, holdout, seed, mode, keep), {}
    if spec.format == "reuters_topics":
        texts = ((str(f), f.read_bytes()) for f in inputs.files)
        return _topics_partition(texts, nb, splits, mode, keep), {}
    if spec.format in ("csv", "parquet", "sklearn"):
        rows, places, numeric, categorical = _local_table(inputs, nb)
        bernoulli = frozenset(nb.bernoulli_columns)
        label = nb.label_column
        records = ((i, r, place) for i, (r, place) in enumerate(zip(rows, places)))
        mixed = _table_partition(
            records, label, numeric, categorical, splits, holdout, seed, mode, keep, bernoulli, spec.decimal
        )
        return mixed, {"numeric": numeric, "categorical": categorical}
    raise InputError(
        f"format {spec.format!r} is not a naive Bayes input (tsv, sms, reuters_topics, csv, parquet, sklearn)"
    )


def _local_table(inputs: Inputs, nb: NBSpec) -> tuple[list[dict], list, list[str], list[str]]:
    """A table's rows in file order and where each is (``(file, row in it)``, as
    ``_rows_in_file_order`` gives them), read as Spark reads it (``inputs.tables.local_table``: a
    CSV's cells as their text, with numbers inferred only to find the numeric columns when the config
    names none; Parquet as typed). Then ``table_columns``, the rule of every table reader."""
    import pyarrow as pa

    if inputs.spec.format == "sklearn":
        records, places, names = _sklearn_records(inputs, nb)
        return (records, places, *table_columns(inputs, nb, [*names, nb.label_column], set(names), {}))
    infer = not (nb.numeric_columns or nb.categorical_columns)
    spec = inputs.spec  # pyarrow, as Spark, infers no number written "1,5": csv_numbers finds them
    table, parts, numeric_types = local_table(
        inputs.files, spec.format, infer and spec.decimal != ",", spec.delimiter
    )
    if infer and spec.format == "csv":
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
    return table.to_pylist(), places, numeric, categorical
