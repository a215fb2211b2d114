"""Run statistics and malformed input: how counts of lines read, skipped and malformed travel,
and how the first offending lines are named (``FILE:LINE``) or, in failfast mode, stop the run.

* Python engines and readers keep a ``PartitionStats`` per partition and emit its records
  ``((STAT, name), n)`` and ``((BAD, source, offset, reason, line), 1)`` into the same shuffle as
  the events: a reduced value counts each record once even when a task is retried
  (accumulators updated in transformations may count a retried task twice). ``split_stats``
  turns the reduced records into the statistics and the first malformed lines.
* The Spark SQL and Arrow engines sum statistics rows whose key starts with ``MARK`` beside their
  counts, and name the first malformed lines afterwards with ``first_malformed_lines``.
* In failfast mode a worker raises ``failfast_error`` at the first malformed line; ``run_failfast``
  turns it into one ``InputError`` on the driver.

No pyspark import at module level.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import nullcontext

from nbspark.errors import InputError
from nbspark.inputs.decoding import JVM_REPLACE, UTF16_HINT
from nbspark.inputs.files import line_number, line_numbers, local_lines, ngram_lines
from nbspark.inputs.parsers import LINE_LAYOUTS, MalformedLine, decode_reuters, parse_reuters_checked
from nbspark.spark.session import failures_expected

__all__ = [
    "BAD",
    "FAILFAST_TAG",
    "MARK",
    "PIECE",
    "STAT",
    "TABLE",
    "PartitionStats",
    "failfast_error",
    "fields_hint",
    "first_malformed_lines",
    "is_stat",
    "malformed_message",
    "reason_said",
    "run_failfast",
    "split_stats",
    "where",
]

log = logging.getLogger(__name__)

STAT = "__stat__"
BAD = "__bad__"
#: The rows of a piece of a table's file, ``((PIECE, source, piece's start), n)``, counted where its
#: rows were not numbered beforehand: ``split_stats`` names its malformed rows by them.
PIECE = "__piece__"
#: Prefix of the statistics rows that the arrow and dataframe engines sum beside their counts
#: (never in a token, a label or a subset name).
MARK = "\u0000"
FAILFAST_TAG = "NBSPARK-MALFORMED"


#: The source of a table's record starts with this, then its file: its ``offset`` is the record's row
#: in that file (1-based; a CSV's header is row 1, as a spreadsheet counts).
TABLE = "table:"


#: What a malformed record's reason means, where its name alone does not tell a user what to do.
REASON_HINTS = {
    "nul": f"a NUL character before its text: {UTF16_HINT}",
    "decimal_comma": "a number written with a decimal comma (1,5): set the input's decimal mark "
    "(train.decimal or test.decimal = ',')",
}


def fields_hint(fmt: str, line: str | None) -> str | None:
    """What a line of ``fmt`` holds (``parsers.LINE_LAYOUTS``), for an input whose lines lacked its
    fields, and the format ``line`` (the first such line) reads as where it is a likelier one: a
    tsv line with one TAB is an sms line, a tsv or sms line with commas and no TAB a CSV table's.
    None for a format without a line layout."""
    if fmt not in LINE_LAYOUTS:
        return None
    said = f"each {fmt} line is {LINE_LAYOUTS[fmt]}"
    if line is None or fmt not in ("tsv", "sms"):
        return said
    if fmt == "tsv" and line.count("\t") == 1:
        return f'{said}; the first one has one TAB, as an sms line ({LINE_LAYOUTS["sms"]}): format = "sms"?'
    if "\t" not in line and "," in line:
        return f'{said}; the first one has commas and no TAB: a CSV table (a header row) is format = "csv"'
    return said


def reason_said(reason: str) -> str:
    """A malformed record's reason as a message shows it: its name, and what it means where
    ``REASON_HINTS`` says."""
    hint = REASON_HINTS.get(reason)
    return f"{reason}: {hint}" if hint else reason


def where(source: str, offset: int, number: int | None = None) -> str:
    """``FILE:LINE`` for a line of a file (``FILE at byte N`` when its line number is unknown),
    ``FILE row N`` for a table's record (its source ``TABLE`` + the file)."""
    if source.startswith(TABLE):
        return f"{source[len(TABLE) :]} row {offset}"
    if source == "table":  # a model written before records named their file
        return f"table row {offset}"
    return f"{source}:{number}" if number else f"{source} at byte {offset}"


def malformed_message(
    source: str, offset: int, reason: str, line: str, number: int | None = None, shown: str | None = None
) -> str:
    """The one-line failfast message: ``FILE:LINE: malformed line (reason): 'line'`` (``shown``: the
    line as a worker already wrote it, quoted)."""
    return f"{where(source, offset, number)}: malformed line ({reason_said(reason)}): {shown or repr(line)}"


def failfast_error(source: str, offset: int, reason: str, line: str) -> ValueError:
    """What a worker raises at the first malformed line in failfast mode (``run_failfast`` reads it)."""
    return ValueError(f"{FAILFAST_TAG}\t{source}\t{offset}\t{reason}\t{line[:200]!r}")


class PartitionStats:
    """Per-partition counters and the first ``keep_bad`` offending records, emitted at the end."""

    def __init__(self, keep_bad: int, mode: str = "permissive"):
        self.counts: Counter = Counter()
        self.keep_bad = keep_bad
        self.mode = mode
        self.bad: list[tuple] = []

    def add(self, name: str, n: int = 1) -> None:
        if n:  # no zero entries: a statistic that did not happen is absent, in every engine
            self.counts[name] += n

    def bad_record(self, source: str, offset: int, reason: str, line: str) -> None:
        """Count a malformed record (and keep it among the first ones); in failfast mode, stop."""
        if self.mode == "failfast":
            raise failfast_error(source, offset, reason, line)
        self.counts[f"malformed.{reason}"] += 1
        self.counts["malformed"] += 1
        if len(self.bad) < self.keep_bad:
            self.bad.append((BAD, source, offset, reason, line[:300]))

    def sgml_file(self, source: str, data: bytes):
        """The stories of a Reuters SGML file's bytes (``inputs.parsers.decode_reuters``: compressed
        ones decompressed); elements that cannot be read are counted (``stories_unreadable``) and
        the file named as malformed (``sgml``)."""
        stories, unreadable = parse_reuters_checked(decode_reuters(data, source))
        if unreadable:
            self.add("stories_unreadable", unreadable)
            self.bad_record(source, 0, "sgml", f"{unreadable} <REUTERS> element(s) not well formed")
        return stories

    def records(self) -> Iterator[tuple[tuple, int]]:
        for name, n in self.counts.items():
            yield (STAT, name), n
        for rec in self.bad:
            yield rec, 1


def is_stat(record) -> bool:
    """Whether ``record`` is a statistics record ``((STAT | BAD, ...), n)``, not an event pair
    or an example (examples are tuples too, so the shape is checked before the tag)."""
    return (
        isinstance(record, tuple)
        and len(record) == 2
        and isinstance(record[0], tuple)
        and bool(record[0])
        and record[0][0] in (STAT, BAD, PIECE)
    )


def split_stats(stat_rows: Iterable[tuple[tuple, int]], keep_bad: int) -> tuple[dict, list[dict]]:
    """Statistics and the first ``keep_bad`` offending records (by source, then offset), each with
    its line number (None for table rows)."""
    stats: dict[str, int] = {}
    bad, pieces = [], {}
    for key, n in stat_rows:
        if key[0] == STAT:
            stats[key[1]] = n
        elif key[0] == PIECE:
            pieces[key[1:]] = n
        else:
            bad.append({"source": key[1], "offset": key[2], "reason": key[3], "line": key[4]})
    bad.sort(key=lambda b: (b["source"], b["offset"]))
    bad = bad[:keep_bad]
    if pieces:
        _rows_from_pieces(bad, pieces)
    _number_lines(bad)
    return dict(sorted(stats.items())), bad


def _rows_from_pieces(bad: list[dict], pieces: dict) -> None:
    """Name a table's malformed rows in their files where they were found before the rows were
    numbered: an ``offset`` ``(piece's start, row in the piece counted as in a file)`` becomes the
    row in the file, the rows of the file's earlier ``pieces`` (``(source, start) -> rows``) added."""
    before, total = {}, {}
    for source, start in sorted(pieces):
        before[(source, start)] = total.get(source, 0)
        total[source] = before[(source, start)] + pieces[(source, start)]
    for b in bad:
        if isinstance(b["offset"], tuple):
            start, row = b["offset"]
            b["offset"] = before[(b["source"], start)] + row


def _number_lines(items: list[dict]) -> None:
    """Set each offending record's ``line_number`` (None for table rows), reading each file once."""
    offsets: dict[str, list[int]] = {}
    for item in items:
        offsets.setdefault(item["source"], []).append(item["offset"])
    numbers = {
        source: {} if source.startswith(TABLE) else line_numbers(source, at) for source, at in offsets.items()
    }
    for item in items:
        item["line_number"] = numbers[item["source"]].get(item["offset"])


def run_failfast(action, mode: str):
    """Run a Spark action; turn a worker's ``failfast_error`` into a one-line ``InputError``. In
    failfast ``mode`` a failed task is expected: Spark's own report of it (the worker's traceback,
    logged twice, a hundred lines above the one line) is quiet while the action runs
    (``spark.session.failures_expected``), and the text of any other failure is logged here instead."""
    quieted = False
    try:
        with failures_expected() if mode == "failfast" else nullcontext(False) as quieted:
            return action()
    except Exception as exc:  # Py4JJavaError / PythonException carry the worker's message
        text = str(exc)
        at = text.find(FAILFAST_TAG)
        if at < 0:
            if quieted:
                log.error("%s", text)  # what Spark's loggers would have said of it
            raise
        _, source, offset, reason, line = text[at:].split("\n", 1)[0].split("\t", 4)
        number = None if source.startswith(TABLE) else line_number(source, int(offset))
        raise InputError(malformed_message(source, int(offset), reason, "", number, shown=line)) from None


def first_malformed_lines(sc, files, parse, stats: dict, mode: str, keep: int) -> list[dict]:
    """For the engines that only count malformed lines: the first ``keep`` of them by file and
    byte offset, with line numbers, from a ``take`` over the lines of one file after another that
    stops once it has found them, or as many as ``stats`` counts (no scan when it counts none).
    In failfast mode the first one raises ``InputError``. ``parse(line)`` raises ``MalformedLine``
    for a malformed line. With no SparkContext (``sc`` None: training in process) the lines are
    read here (``inputs.files.local_lines``, decoded as the JVM decodes them)."""
    if not stats.get("malformed"):
        return []

    def malformed(record):
        source, offset, line = record
        try:
            parse(line)
        except MalformedLine as exc:
            return [{"source": source, "offset": offset, "reason": exc.reason, "line": line[:300]}]
        return []

    # never more than there are, file by file: the scan stops at the last of them, and no file
    # after it is opened (each file's RDD costs a job as it is made, and a Google Books input has
    # 19,423 files: all of them read a second time, line by line, for a few bad lines early on)
    keep = min(1 if mode == "failfast" else keep, stats["malformed"])
    found: list[dict] = []
    for f in files:
        if len(found) >= keep:
            break
        if sc is None:
            records = ((str(f), at, raw.decode("utf-8", JVM_REPLACE)) for at, raw in local_lines(f))
            found += list(
                itertools.islice(itertools.chain.from_iterable(map(malformed, records)), keep - len(found))
            )
        else:
            found += ngram_lines(sc, [f]).flatMap(malformed).take(keep - len(found))
    found.sort(key=lambda b: (b["source"], b["offset"]))
    _number_lines(found)
    if found and mode == "failfast":
        first = found[0]
        raise InputError(
            malformed_message(
                first["source"], first["offset"], first["reason"], first["line"], first["line_number"]
            )
        )
    return found
