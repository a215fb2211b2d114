"""The one parse of tsv and sms lines: decoded and parsed on whole Arrow batches (``parse_lines``),
or one line at a time through the same code (``parse_line``, a batch of one). The Python engines
parse their lines in batches here too; the Spark SQL engine's twin is
``naive_bayes.inputs.text_lines``, tested line by line against this.

The arrow counting engine and the arrow scorer send Spark's lines to Python as they were read,
bytes unchecked, and decode and cut them here, where the bytes go anyway. In Spark SQL the JVM
checked each line's UTF-8 and copied its text into a column of its own, next to a label list and
a category, before the same bytes crossed to Python, which cost more than the hand-over itself.
Here Arrow checks the UTF-8 and pyarrow cuts the fields, on whole batches.

A line that is not UTF-8 is decoded as the JVM decodes the Python engines' lines
(``jvm_decoded``, which the n-gram arrow engine uses too), by the one decoder of bad UTF-8
(``inputs.decoding``).

Plain pyarrow and numpy, no Spark. The SQL twin follows the same rules, line by line (tested
against each other and against the rule stated in plain Python, and the decoding against the JVM's
on random bytes).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nbspark.inputs.decoding import JVM_REPLACE
from nbspark.inputs.parsers import MalformedLine
from nbspark.inputs.tokens import WHITESPACE

__all__ = ["LINE_CATEGORIES", "blank_values", "jvm_decoded", "parse_line", "parse_lines", "parsed_lines"]

#: What a line is, as the Python parsers name it: a document, or why it is not one.
LINE_CATEGORIES = (
    "documents",
    "blank_lines",
    "malformed.fields",
    "malformed.id",
    "malformed.labels",
    "malformed.nul",
)


def jvm_decoded(values: pa.Array) -> pa.Array:
    """``values`` (a string array as Spark sends it to Python: its bytes unchecked) as valid
    UTF-8, a line that is not decoded as the JVM decodes the Python engines' lines (U+FFFD for
    bad bytes, ``JVM_REPLACE``). Checked by Arrow (many GB/s); only an array with a bad line is
    decoded again, by Python. A ``large_string`` array (Spark's ``useLargeVarTypes``) stays one."""
    try:
        values.validate(full=True)
        return values
    except pa.ArrowInvalid:
        large = pa.types.is_large_string(values.type)
        raw = values.view(pa.large_binary() if large else pa.binary()).to_pylist()
        return pa.array([None if b is None else b.decode("utf-8", JVM_REPLACE) for b in raw], values.type)


def _strip(values: pa.Array) -> pa.Array:
    """Python's ``str.strip()`` of each value (``utf8_trim_whitespace`` takes fewer characters)."""
    return pc.utf8_trim(values, WHITESPACE)


def blank_values(values: pa.Array) -> pa.Array:
    """Whether each line holds nothing but white space: ``inputs.parsers.blank_line`` over Arrow."""
    return pc.equal(_strip(values), "")


def _has_nul(fields: pa.Array) -> np.ndarray:
    """Whether each value holds a NUL character."""
    return pc.match_substring(fields, "\x00").to_numpy(zero_copy_only=False)


def _labels(fields: pa.Array, fmt: str) -> pa.ListArray:
    """Each line's labels: the stripped field (sms) or its comma-separated items, stripped (tsv);
    empty strings dropped."""
    if fmt == "sms":
        label = _strip(fields)
        keep = pc.not_equal(label, "").to_numpy(zero_copy_only=False)
        flat, per_row = label.filter(pa.array(keep)), keep.astype(np.int32)
    else:
        items = pc.split_pattern(fields, ",")
        stripped = _strip(items.values)
        keep = pc.not_equal(stripped, "")
        flat = stripped.filter(keep)
        per_row = np.add.reduceat(
            np.append(keep.to_numpy(zero_copy_only=False), False).astype(np.int32),
            items.offsets.to_numpy()[:-1],
        )
    offsets = np.zeros(len(per_row) + 1, np.int32)
    np.cumsum(per_row, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), flat)


def parse_lines(values, fmt: str) -> pa.RecordBatch:
    """``(id, labels, text, category)`` of each line in ``values`` (a string array, no nulls), as
    ``naive_bayes.inputs.text_lines`` gives them: a ``tsv`` line is ``id TAB labels TAB text`` (labels
    comma-separated), an ``sms`` line ``label TAB text`` (its ``id`` is null: the caller makes sms
    ids). ``category`` is one of ``LINE_CATEGORIES``; ``labels`` and ``text`` are those of the
    line's fields where it has them (``text`` is null without them).

    A line is malformed (``nul``) when a NUL character stands before its text, in its id or labels
    (or in the whole line, where it has no TAB): UTF-16 text read as UTF-8 holds one beside every
    ASCII character (an Excel "Unicode Text" export, Notepad's "Unicode"), which made a class of
    each spaced-out label, and a label opening with NUL would pass for one of the engines'
    statistics rows (``inputs.stats.MARK``). That rule comes first, then fields, id and labels."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.type == pa.large_string():
        values = values.cast(pa.string())
    fields = 2 if fmt == "sms" else 3
    parts = pc.split_pattern(values, "\t", max_splits=fields - 1)
    starts = parts.offsets.to_numpy()[:-1]
    n_parts = np.diff(parts.offsets.to_numpy())  # a line without a TAB is one part (an empty line too)
    flat = parts.values
    first = flat.take(pa.array(starts))
    fields_ok = n_parts == fields
    text = flat.take(pa.array(starts + fields - 1, mask=~fields_ok))
    if fmt == "sms":
        doc_id, id_ok = pa.nulls(len(values), pa.string()), np.ones(len(values), bool)
        labels = _labels(first, fmt)
    else:
        doc_id = _strip(first)
        id_ok = pc.not_equal(doc_id, "").to_numpy(zero_copy_only=False)
        labels = _labels(
            flat.take(pa.array(starts + (n_parts > 1))), fmt
        )  # no TAB: the line itself, as SQL's substring_index
    has_labels = np.diff(labels.offsets.to_numpy()) > 0
    nul = _has_nul(first)
    if fmt != "sms":
        nul |= _has_nul(flat.take(pa.array(starts + (n_parts > 1))))
    category = np.select([fields_ok & id_ok & has_labels & ~nul], [0], 4)
    other = np.flatnonzero(category)
    if len(other):  # not documents: blank, or the first rule that fails, in the Python parsers' order
        blank = blank_values(values.take(pa.array(other))).to_numpy(zero_copy_only=False)
        category[other] = np.select([blank, nul[other], ~fields_ok[other], ~id_ok[other]], [1, 5, 2, 3], 4)
    names = pc.take(pa.array(LINE_CATEGORIES), pa.array(category))
    return pa.RecordBatch.from_arrays(
        [doc_id, labels, text, names], names=["id", "labels", "text", "category"]
    )


def parsed_lines(lines: list[str], fmt: str):
    """``(id, labels, text, category)`` of each of ``lines`` (Python strings), by ``parse_lines``:
    the Python engines' batches."""
    batch = parse_lines(pa.array(lines, pa.string()), fmt)
    return zip(*(column.to_pylist() for column in batch.columns))


def parse_line(line: str, fmt: str):
    """One line by ``parse_lines`` (a batch of one): ``None`` for a blank line, else ``(id, labels,
    text)`` (an sms line's id is None); a malformed line raises ``MalformedLine`` with the reason of
    the first rule it breaks (``fields``, ``id``, ``labels``)."""
    ((doc_id, labels, text, category),) = parsed_lines([line], fmt)
    if category == "blank_lines":
        return None
    if category != "documents":
        raise MalformedLine(category.removeprefix("malformed."), line)
    return doc_id, tuple(labels), text
