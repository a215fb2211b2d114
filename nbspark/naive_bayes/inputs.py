"""The naive Bayes family's inputs: tsv/sms lines, Reuters ModApte stories and tables (csv,
parquet, a scikit-learn dataset, read by ``naive_bayes.tables``) turned into documents or rows.

Record shapes: lines ``(file, offset, text)`` / SGML files / table rows -> ``Doc(id, labels,
tokens)`` or ``tables.Row(id, label, categorical, numeric)``, mixed with statistics records
(``inputs.stats``) in one RDD; ``record_events`` turns each into its count events (``nb``).
"""

from __future__ import annotations

import pickle
from typing import NamedTuple

from nbspark.errors import InputError
from nbspark.inputs.files import ngram_lines, sgml_texts
from nbspark.inputs.lines import parsed_lines
from nbspark.inputs.parsers import in_sample, kept
from nbspark.inputs.resolve import Inputs
from nbspark.inputs.stats import STAT, PartitionStats, is_stat
from nbspark.inputs.tokens import WHITESPACE, tokenizer
from nbspark.naive_bayes.events import doc_events, row_events
from nbspark.naive_bayes.table_batches import table_batch_sums
from nbspark.naive_bayes.tables import TableRule, local_table_rows, table_source
from nbspark.settings.config import ExperimentConfig, NBSpec
from nbspark.spark.faults import maybe_inject

__all__ = [
    "NOT_SAMPLED",
    "Doc",
    "REUTERS_TOP10",
    "decoded_lines",
    "local_records",
    "local_table_sums",
    "numbered_batches",
    "record_events",
    "records_rdd",
    "sampled_batches",
    "sampled_events",
    "sampled_sums",
    "table_rule",
    "table_sums",
    "text_lines",
]

#: The ten most frequent topics of the ModApte training stories (counted from Reuters-21578).
REUTERS_TOP10 = ("earn", "acq", "money-fx", "grain", "crude", "trade", "interest", "wheat", "ship", "corn")


class Doc(NamedTuple):
    id: str
    labels: tuple[str, ...]
    tokens: list[str]


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
            if not kept(splits, holdout, seed, doc_id):
                stats.add("held_out")  # the other part of a seeded hold-out (train.holdout)
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
        for story in stats.sgml_file(source, data):
            stats.add("stories_read")
            # ModApte: TRAIN or TEST, TOPICS="YES", at least one topic; each story left out is
            # counted under its first reason (report.format.STORIES_LEFT_OUT says them)
            if story.lewissplit not in ("TRAIN", "TEST") or story.topics_attr != "YES" or not story.topics:
                stats.add("stories_outside_modapte")
                continue
            if splits and story.lewissplit not in splits:
                stats.add("stories_in_other_splits")
                continue
            if nb.labels == "top10":
                if story.topics[0] not in top:
                    stats.add("stories_off_top10")
                    continue
                labels = (story.topics[0],)
            else:
                labels = story.topics
            stats.add("stories_used")
            tokens = tok(story.text)
            stats.add("documents")
            if not tokens:
                stats.add("empty_documents")
            yield Doc(f"reuters:{story.newid}", labels, tokens)
    yield from stats.records()


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
        source, numeric, categorical, fields = table_source(spark, inputs, nb)
        rdd, rule = source.rdd(), table_rule(inputs, cfg, numeric, categorical)
        return rdd.mapPartitions(rule.rows), {"numeric": numeric, "categorical": categorical}, (rdd, fields)
    raise InputError(
        f"format {spec.format!r} is not a naive Bayes input (tsv, sms, reuters_topics, csv, parquet, sklearn)"
    )


def table_rule(
    inputs: Inputs, cfg: ExperimentConfig, numeric: list[str], categorical: list[str]
) -> TableRule:
    """How a table's rows are read (``tables.table_partition``), by the input's and the config's settings."""
    nb, spec = cfg.nb, inputs.spec
    return TableRule(
        nb.label_column,
        tuple(numeric),
        tuple(categorical),
        frozenset(spec.splits),
        spec.holdout,
        spec.seed,
        cfg.mode,
        cfg.max_bad_examples,
        frozenset(nb.bernoulli_columns),
        spec.decimal,
    )


def table_sums(spark, inputs: Inputs, cfg: ExperimentConfig):
    """A csv or parquet table's count events summed a partition at a time, as the ``combine``
    engine sums them, the rows read through Arrow batches (``tables.TableRows.map_batches``) and
    counted by ``table_batches.table_batch_sums``: ``(RDD of (key, value) pairs, each key once a
    partition; the feature columns)``. None for any other input, or a table whose rows Arrow does
    not give as a ``Row`` would."""
    if inputs.spec.format not in ("csv", "parquet"):
        return None
    # only a hold-out or a sample reads a row's index, and failfast names a row as it stops: else the
    # rows are not numbered beforehand (a pass over the table), and a malformed row is named afterwards
    fraction, seed = cfg.sample, cfg.sample_seed
    numbered = bool(inputs.spec.holdout) or cfg.mode != "permissive" or fraction < 1.0
    source, numeric, categorical, _ = table_source(spark, inputs, cfg.nb, numbered)
    rule, kind = table_rule(inputs, cfg, numeric, categorical), cfg.nb.model

    def summed(batches, numbering):
        import pyarrow as pa

        sums = list(sampled_sums(batches, rule, kind, fraction, seed).items())
        sums += numbering.counts()  # each piece's rows, where they were not numbered beforehand
        for at in range(0, max(len(sums), 1), SUMS_A_BATCH):  # a partition's sums in a few pickles
            yield pa.RecordBatch.from_arrays(
                [pa.array([pickle.dumps(sums[at : at + SUMS_A_BATCH])])], ["sums"]
            )

    pickled = source.map_batches(summed, "sums BINARY")
    if pickled is None:
        return None
    return pickled.rdd.flatMap(lambda r: pickle.loads(r[0])), {"numeric": numeric, "categorical": categorical}


def local_table_sums(inputs: Inputs, cfg: ExperimentConfig):
    """``table_sums`` in this process, of any table input (``tables.local_table_rows``): ``(the summed
    events as a dict, the feature columns)``; None for another input. With ``cfg.sample`` < 1 only
    the rows in the sample are read (``sampled_batches``), the others counted as
    ``documents_not_sampled``."""
    if inputs.spec.format not in ("csv", "parquet", "sklearn"):
        return None
    table, places, numeric, categorical = local_table_rows(inputs, cfg.nb)
    rule = table_rule(inputs, cfg, numeric, categorical)
    sums = sampled_sums(numbered_batches(table, places), rule, cfg.nb.model, cfg.sample, cfg.sample_seed)
    return sums, {"numeric": numeric, "categorical": categorical}


def sampled_sums(batches, rule, kind: str, fraction: float, seed: int) -> dict:
    """``table_batches.table_batch_sums`` of the rows of numbered ``batches`` in the seeded
    ``fraction`` sample (``sampled_batches``), with the rows it left out as ``documents_not_sampled``:
    a table's sums, in a Spark partition (``table_sums``) and in process (``local_table_sums``)."""
    left_out = [0]
    sums = table_batch_sums(sampled_batches(batches, fraction, seed, left_out), rule, kind, record_events)
    if left_out[0]:
        sums[(STAT, NOT_SAMPLED)] = left_out[0]
    return sums


def sampled_batches(batches, fraction: float, seed: int, left_out: list):
    """Numbered batches (``numbered_batches``) with only their rows in the seeded ``fraction`` sample
    (``inputs.parsers.in_sample`` of the row's index), the others added to ``left_out[0]`` unread
    (a malformed one among them is not seen); every row when ``fraction`` is 1."""
    import numpy as np
    import pyarrow as pa

    if fraction >= 1.0:
        yield from batches
        return
    for batch, index, place in batches:
        keep = np.fromiter((in_sample(str(i), seed, fraction) for i in index.tolist()), bool, len(index))
        left_out[0] += int(len(keep) - keep.sum())
        at = np.flatnonzero(keep)
        yield batch.filter(pa.array(keep)), index[at], lambda j, at=at, place=place: place(at[j])


def sampled_events(kind: str, fraction: float, seed: int):
    """``record_events`` of a record in the seeded ``fraction`` sample of its input (``in_sample`` of
    its id: a document's, or a table row's place), and ``documents_not_sampled`` of another, which the
    reader counted among its ``documents`` (the Python engines' records, in Spark and in process)."""
    if fraction >= 1.0:
        return lambda record: record_events(record, kind)

    def events(record):
        if is_stat(record) or in_sample(record.id, seed, fraction):
            return record_events(record, kind)
        return [((STAT, NOT_SAMPLED), 1), ((STAT, "documents"), -1)]  # read, but not a document counted

    return events


#: The statistic of the records a sample leaves out (``sampled_events``, ``sampled_batches``).
NOT_SAMPLED = "documents_not_sampled"


def numbered_batches(table, places: list):
    """A table read in process (``tables.local_table_rows``) as the numbered batches a Spark
    partition's rows come in (``tables.TableRows.map_batches``): ``(record batch of at most
    ``LOCAL_BATCH`` rows, their indices in the table, place(j) -> (file, row) of its j-th row)``."""
    import numpy as np

    at = 0
    for batch in table.to_batches(max_chunksize=LOCAL_BATCH):
        yield batch, np.arange(at, at + batch.num_rows), lambda j, at=at: places[at + j]
        at += batch.num_rows


#: The rows of a table counted together in process (``local_table_sums``).
LOCAL_BATCH = 65_536

#: The summed events of a partition in one pickle, at most (``table_sums``).
SUMS_A_BATCH = 100_000


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
    """``records_rdd``'s records of text, read in this process (``nbspark train --in-process``):
    local files through the same partition functions, so a record, its id, its hold-out part and
    every statistic are the Spark readers'. Lines are read as Spark's text reader gives them
    (``inputs.files.local_lines``), decoded as the JVM decodes them. (A table is counted by
    ``local_table_sums``.)"""
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
    raise InputError(
        f"format {spec.format!r} is not a naive Bayes input (tsv, sms, reuters_topics, csv, parquet, sklearn)"
    )
