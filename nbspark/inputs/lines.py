"""The Arrow twin of ``nb_inputs.text_lines``: tsv and sms lines decoded and parsed on whole
Arrow batches.

The arrow counting engine and the arrow scorer send Spark's lines to Python as they were read,
bytes unchecked, and decode and cut them here, where the bytes go anyway. In Spark SQL the JVM
checked each line's UTF-8 and copied its text into a column of its own, next to a label list and
a category, before the same bytes crossed to Python: on the ×50 Reuters text (``local[2]``,
Python doing nothing with the batches) 0.77 s to check, parse and hand over against 0.33 s for the
lines alone. Here Arrow checks UTF-8 at about 18 GB/s and the parse costs 25 ms per 49 MB.

A line that is not UTF-8 is decoded as the JVM decodes the Python engines' lines
(``jvm_decoded``, which the n-gram arrow engine uses too): Java's UTF-8 decoder and Python's
``errors="replace"`` put U+FFFD over different spans of some malformed sequences.

Plain pyarrow and numpy, no Spark. The rules are those of ``corpora.parse_labelled_line`` and
``parse_sms_line``, and of the SQL twin, line by line (tested against both, and the decoding
against the JVM's on random bytes).
"""

from __future__ import annotations

import codecs

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nbspark.inputs.tokens import WHITESPACE

__all__ = ["JVM_REPLACE", "LINE_CATEGORIES", "jvm_decoded", "parse_lines"]

#: What a line is, as the Python parsers name it: a document, or why it is not one.
LINE_CATEGORIES = ("documents", "blank_lines", "malformed.fields", "malformed.id", "malformed.labels")


#: The ``errors`` of ``bytes.decode`` that decodes as the JVM's ``new String(bytes, UTF_8)``.
JVM_REPLACE = "nbspark.jvm-replace"


def _jvm_malformed_length(data: bytes, i: int) -> int:
    """How many bytes the JVM's UTF-8 decoder (``java.lang.String``) turns into one U+FFFD at
    ``data[i]``, where the bytes from ``i`` are not a UTF-8 character.

    Python's ``errors="replace"`` replaces each maximal invalid subpart: ``ED A0 80`` (an encoded
    surrogate) gives three U+FFFD there and one in Java; ``E4 B8`` at the end of a line one in
    both. Java's rules (``String.decodeUTF8_UTF16``, unchanged from JDK 9 to 25): a 3-byte lead
    takes its second byte along when that byte could follow it, a 4-byte lead its second and
    third; a sequence cut off by the end of the line is one U+FFFD."""
    n = len(data) - i  # the lead byte and the bytes after it

    def cont(k):
        return k < n and data[i + k] & 0xC0 == 0x80

    b1 = data[i]
    if 0xE0 <= b1 <= 0xEF:
        bad_second = (b1 == 0xE0 and data[i + 1] & 0xE0 == 0x80 if n > 1 else False) or not cont(1)
        if n >= 3:
            return 1 if bad_second else 2 if not cont(2) else 3  # 3: a surrogate
        return 1 if n == 2 and bad_second else n
    if 0xF0 <= b1 <= 0xF7:
        b2 = data[i + 1] if n > 1 else 0x80
        if (
            b1 > 0xF4
            or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
            or (b1 == 0xF4 and b2 & 0xF0 != 0x80)
            or not cont(1)
        ):
            return 1 if n > 1 or b1 > 0xF4 else n
        if n >= 4:
            return 2 if not cont(2) else 3
        return 2 if n == 3 and not cont(2) else n
    return 1  # a continuation byte, C0, C1, F8 to FF, or a 2-byte lead without its second byte


def _jvm_replace(error: UnicodeDecodeError):
    return "\ufffd", error.start + _jvm_malformed_length(error.object, error.start)


codecs.register_error(JVM_REPLACE, _jvm_replace)


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
    ``nb_inputs.text_lines`` gives them: a ``tsv`` line is ``id TAB labels TAB text`` (labels
    comma-separated), an ``sms`` line ``label TAB text`` (its ``id`` is null: the caller makes sms
    ids). ``category`` is one of ``LINE_CATEGORIES``; ``labels`` and ``text`` are those of the
    line's fields where it has them (``text`` is null without them)."""
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
    category = np.select([fields_ok & id_ok & has_labels], [0], 4)
    other = np.flatnonzero(category)
    if len(other):  # not documents: blank, or the first rule that fails, in the Python parsers' order
        blank = pc.equal(_strip(values.take(pa.array(other))), "").to_numpy(zero_copy_only=False)
        category[other] = np.select([blank, ~fields_ok[other], ~id_ok[other]], [1, 2, 3], 4)
    names = pc.take(pa.array(LINE_CATEGORIES), pa.array(category))
    return pa.RecordBatch.from_arrays(
        [doc_id, labels, text, names], names=["id", "labels", "text", "category"]
    )
