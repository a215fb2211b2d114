"""The backoff family's inputs: n-gram lines, Google Books shards, the Brown zip, Reuters SGML and
plain text turned into training or test examples.

Record shapes: lines ``(file, offset, text)`` or files ``(file, bytes)`` -> ``Example(source,
window, weight)``, mixed with statistics records (``inputs.stats``) in one RDD.
"""

from __future__ import annotations

from nbspark.backoff.events import Example, ngram_example, piece_examples, story_examples
from nbspark.errors import ConfigError
from nbspark.inputs.files import decode_text, ngram_lines, sgml_texts
from nbspark.inputs.parsers import MalformedLine, blank_line, google_line, parse_brown_zip, text_documents
from nbspark.inputs.resolve import Inputs
from nbspark.inputs.spec import InputSpec
from nbspark.inputs.stats import PartitionStats
from nbspark.inputs.tokens import line_pieces, tokenize
from nbspark.settings.capabilities import BACKOFF_FORMATS
from nbspark.spark.faults import maybe_inject

__all__ = ["examples_rdd", "google_summed", "local_examples", "ngram_partition"]


def ngram_partition(records, confusion, width, lowercase, mode, keep_bad):
    """(file, offset, line) -> Example, or stats records; failfast raises on the first bad line."""
    maybe_inject()
    stats = PartitionStats(keep_bad, mode)
    for source, offset, line in records:
        stats.add("lines_read")
        if "\ufffd" in line:
            stats.add("decode_replacements", line.count("\ufffd"))
        if blank_line(line):
            stats.add("blank_lines")
            continue
        try:
            example = ngram_example(line, f"{source}@{offset}", confusion, width, lowercase)
        except MalformedLine as exc:
            stats.bad_record(source, offset, exc.reason, line)
            continue
        if example is None:
            stats.add("lines_not_in_confusion_set")
            continue
        stats.add("examples")
        stats.add("weight", example.weight)
        yield example
    yield from stats.records()


def _google_partition(records, spec: InputSpec, confusion, width, lowercase, mode, keep_bad):
    """Google Books lines -> ``(("ngram", tokens), match count in the year range)``, filtered to
    the confusion set here, in the map, so only matching n-grams reach the shuffle
    (``inputs.parsers.google_line``: the rule every engine applies)."""
    maybe_inject()
    stats = PartitionStats(keep_bad, mode)
    strip = spec.pos == "strip"
    for source, offset, line in records:
        stats.add("lines_read")
        try:
            outcome, tokens, count = google_line(
                line, spec.format, width, strip, lowercase, confusion, spec.year_min, spec.year_max
            )
        except MalformedLine as exc:
            stats.bad_record(source, offset, exc.reason, line)
            continue
        if outcome == "ngram":
            yield ("ngram", tokens), count
        else:
            stats.add(outcome)
    yield from stats.records()


def google_summed(records, min_count: int, keep_bad: int, partitions: int = 0):
    """Google records (``(("ngram", tokens), count)`` and statistics) summed by n-gram, then the
    n-grams of at least ``min_count`` as ``Example`` records."""
    summed = records.reduceByKey(lambda a, b: a + b, numPartitions=partitions or None)
    return summed.mapPartitions(lambda it: _min_count_partition(it, min_count, keep_bad))


def _min_count_partition(records, min_count, keep_bad):
    """Summed ``(("ngram", tokens), count)`` -> ``Example`` when count >= min_count; stats pass through."""
    stats = PartitionStats(keep_bad)
    for key, value in records:
        if key[0] != "ngram":
            yield key, value
            continue
        stats.add("ngrams")
        if value < min_count:
            stats.add("ngrams_below_min_count")
            continue
        stats.add("examples")
        stats.add("weight", value)
        yield Example("google", key[1], value)
    yield from stats.records()


def _document_examples(stats: PartitionStats, doc_id: str, pieces, confusion, width):
    """The windows of one document, given as pieces of (cased) tokens, weight 1 each, counted into
    ``stats``."""
    stats.add("documents_read")

    def counted():
        for tokens in pieces:
            stats.add("tokens", len(tokens))
            yield tokens

    for example in piece_examples(doc_id, counted(), confusion, width):
        stats.add("examples")
        stats.add("weight", 1)
        yield example


def _brown_partition(records, confusion, width, lowercase, keep_bad):
    maybe_inject()
    stats = PartitionStats(keep_bad)
    for source, data in records:
        for file_id, words in parse_brown_zip(data, source):
            yield from _document_examples(
                stats,
                f"brown:{file_id}",
                [[w.lower() for w in words] if lowercase else words],
                confusion,
                width,
            )
    yield from stats.records()


def _reuters_partition(records, confusion, width, lowercase, splits, mode, keep_bad):
    maybe_inject()
    stats = PartitionStats(keep_bad, mode)
    for source, data in records:
        for story in stats.sgml_file(source, data):
            stats.add("stories_read")
            if splits and story.lewissplit not in splits:
                stats.add("stories_in_other_splits")
                continue
            stats.add("stories_used")
            if not story.body.strip():
                stats.add("empty_bodies")
            for example in story_examples(story, confusion, width, lowercase):
                stats.add("examples")
                stats.add("weight", example.weight)
                yield example
    yield from stats.records()


def _text_partition(records, confusion, width, lowercase, unit, keep_bad):
    """Plain text files ``(file, bytes)`` (read by ``inputs.files.decode_text``: undecodable bytes
    replaced by U+FFFD and counted, binary files skipped and counted) -> every window centred on a
    confusion-set word, per document."""
    maybe_inject()
    stats = PartitionStats(keep_bad)
    for source, data in records:
        read = decode_text(data, source)
        if read.binary:  # an image, a PDF beside the texts: counted, not read
            stats.add("binary_files")
            continue
        stats.add("decode_replacements", read.replaced)
        for line, doc in text_documents(read.text, unit):  # a whole file tokenized a piece of lines at a time
            pieces = (tokenize(piece, lowercase) for _, piece in line_pieces(doc))
            yield from _document_examples(stats, f"{source}:{line}", pieces, confusion, width)
    yield from stats.records()


def examples_rdd(
    sc, inputs: Inputs, confusion, width: int, lowercase: bool, mode: str, keep_bad: int, partitions: int = 0
):
    """RDD mixing ``Example`` records and statistics records (``counting.is_stat``).

    ``partitions`` > 0 spreads n-gram lines over that many partitions before parsing (a
    ``.gz`` file is one unsplittable partition otherwise).
    """
    confusion = frozenset(confusion)
    if inputs.spec.format in ("google_v2", "google_v3"):
        spec = inputs.spec
        lines = ngram_lines(sc, list(inputs.files))
        if partitions:
            lines = lines.repartition(partitions)
        records = lines.mapPartitions(
            lambda it: _google_partition(it, spec, confusion, width, lowercase, mode, keep_bad)
        )
        return google_summed(records, spec.min_count, keep_bad, partitions)
    if inputs.spec.format == "brown":
        zips = sgml_texts(sc, list(inputs.files))
        return zips.mapPartitions(lambda it: _brown_partition(it, confusion, width, lowercase, keep_bad))
    if inputs.spec.format == "ngrams":
        lines = ngram_lines(sc, list(inputs.files))
        if partitions:
            lines = lines.repartition(partitions)
        return lines.mapPartitions(
            lambda it: ngram_partition(it, confusion, width, lowercase, mode, keep_bad)
        )
    if inputs.spec.format == "text":
        unit = inputs.spec.document
        texts = sgml_texts(sc, list(inputs.files))
        return texts.mapPartitions(
            lambda it: _text_partition(it, confusion, width, lowercase, unit, keep_bad)
        )
    if inputs.spec.format == "reuters":
        splits = frozenset(inputs.spec.splits)
        texts = sgml_texts(sc, list(inputs.files))
        return texts.mapPartitions(
            lambda it: _reuters_partition(it, confusion, width, lowercase, splits, mode, keep_bad)
        )
    raise ConfigError(f"format {inputs.spec.format!r} is not a backoff input ({', '.join(BACKOFF_FORMATS)})")


def local_examples(inputs: Inputs, confusion, width: int, lowercase: bool, mode: str, keep_bad: int):
    """``examples_rdd``'s records, read in this process (``nbspark train --in-process``, a learning
    curve's test set): local files through the same partition functions, so an example and every
    statistic are the Spark readers'.
    Lines are read as Hadoop's text reader gives them (``inputs.files.local_lines``), decoded as the
    JVM decodes them; a Google n-gram's years are summed in a dict, as ``google_summed`` sums them
    by key (``spine.counting.combine_partition``)."""
    from nbspark.inputs.decoding import JVM_REPLACE
    from nbspark.inputs.files import local_lines
    from nbspark.spine.counting import combine_partition

    spec, confusion = inputs.spec, frozenset(confusion)
    lines = (
        (str(f), at, raw.decode("utf-8", JVM_REPLACE)) for f in inputs.files for at, raw in local_lines(f)
    )
    files = ((str(f), f.read_bytes()) for f in inputs.files)
    if spec.format in ("google_v2", "google_v3"):
        records = _google_partition(lines, spec, confusion, width, lowercase, mode, keep_bad)
        return _min_count_partition(combine_partition(records), spec.min_count, keep_bad)
    if spec.format == "ngrams":
        return ngram_partition(lines, confusion, width, lowercase, mode, keep_bad)
    if spec.format == "brown":
        return _brown_partition(files, confusion, width, lowercase, keep_bad)
    if spec.format == "text":
        return _text_partition(files, confusion, width, lowercase, spec.document, keep_bad)
    if spec.format == "reuters":
        return _reuters_partition(files, confusion, width, lowercase, frozenset(spec.splits), mode, keep_bad)
    raise ConfigError(f"format {spec.format!r} is not a backoff input ({', '.join(BACKOFF_FORMATS)})")
