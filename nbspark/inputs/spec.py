"""One input of an experiment, as the config names it (``[train]``, ``[test]``): pure data, read
by ``settings.config`` and resolved into files by ``inputs.resolve``."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DECIMAL_COMMA", "InputSpec", "format_by_name", "is_decimal_comma"]

#: A number written with a decimal comma (an input's ``decimal = ","``): ``1,5``, ``-0,25``, ``,5``,
#: ``1,5e3``, and ``1.234,5`` with points grouping the thousands (``1.234`` is 1234); and ``NaN``,
#: ``Inf``, ``-Inf``, which Spark's CSV reader infers as numbers in a file of points (a cell that is
#: not finite is then left out, as there). The one rule of reading such a cell
#: (``naive_bayes.events.number_cell``) and of finding a CSV's columns of them
#: (``inputs.tables.decimal_comma_columns``, in Spark and in process). No backslash: Python's ``re``,
#: Java's regex and a Spark SQL string literal read it alike.
DECIMAL_COMMA = (
    "^[ \t]*([+-]?([0-9]{1,3}([.][0-9]{3})+(,[0-9]*)?|[0-9]+(,[0-9]*)?|,[0-9]+)([eE][+-]?[0-9]+)?"
    "|NaN|[+-]?Inf)[ \t]*$"
)
_DECIMAL_COMMA = re.compile(DECIMAL_COMMA)


def is_decimal_comma(text: str) -> bool:
    """Whether ``text`` is a number written with a decimal comma (``DECIMAL_COMMA``), in Python."""
    return _DECIMAL_COMMA.match(text) is not None


#: A table's format by how its path ends, for a naive Bayes or density config that names none
#: (``settings.config.load_config``): a ``.tsv`` is not among them, as its lines may be tsv's
#: ``id TAB labels TAB text`` or sms's ``label TAB text``.
FORMAT_BY_NAME = {".csv": "csv", ".csv.gz": "csv", ".parquet": "parquet"}


def format_by_name(path: str) -> str | None:
    """The format ``FORMAT_BY_NAME`` gives a path (a file, a directory or a glob), or None."""
    name = str(path).lower().rstrip("/")
    return next((fmt for end, fmt in FORMAT_BY_NAME.items() if name.endswith(end)), None)


@dataclass(frozen=True)
class InputSpec:
    """One input: its format, its path (relative paths are under the data dir) and, for
    Reuters, the LEWISSPLIT values kept (empty: every story)."""

    format: str
    path: str
    splits: tuple[str, ...] = ()
    # Seeded hold-out for inputs without a split of their own (sms, tsv, tables): a fraction
    # ``holdout`` of the records (chosen by a hash of seed and record id, so the same records
    # whatever the partitioning) is the part "test", the rest "train"; ``splits`` picks parts.
    holdout: float = 0.0
    seed: int = 0
    # Google Books Ngram files (google_v2, google_v3): match counts summed over the years
    # year_min..year_max; n-grams whose total is below min_count are dropped (Cohen used 40);
    # part-of-speech suffixes (effect_NOUN) stripped ("strip") or kept ("keep").
    year_min: int = 0
    year_max: int = 9999
    min_count: int = 40
    pos: str = "strip"
    # A gzip or plain Google file of at most whole_file_mb MB is read whole by one Python task
    # (fastest; the task holds it in memory); a larger one is streamed through the JVM. 0: stream all.
    whole_file_mb: float = 256.0
    # Plain text (format "text"): a document is a whole file ("file") or a paragraph, lines
    # separated by blank lines ("paragraph"); windows are padded at the document's edges.
    document: str = "file"
    # A CSV table (format "csv"): the one character between its cells: "," (the default), ";" (what
    # Excel writes where the comma is the decimal mark), "\t", "|".
    delimiter: str = ","
    # A CSV table's decimal mark in its numbers: "." (the default) or "," ("1,5", and "1.234,5" with
    # points grouping the thousands: what Excel writes in much of Europe, cells separated by ";").
    decimal: str = "."
