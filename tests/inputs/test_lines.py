"""The one parse of tsv and sms lines (``inputs.lines``), without Spark: whole batches and one line
at a time, against the rule stated in plain Python (``expected_parse``) on hostile lines."""

import pyarrow as pa
import pytest

from nbspark.inputs.decoding import JVM_REPLACE
from nbspark.inputs.lines import parse_line, parse_lines, parsed_lines
from nbspark.inputs.parsers import MalformedLine

HOSTILE_LINES = {
    "tsv": [
        b"d1\ta\ttext with\ta tab inside",
        "d2\ta, b ,\u00a0\tcomma list".encode(),
        b"  d3 \t c \t  spaced text  ",
        "\u3000d4\u3000\tb\tx".encode(),
        b"d5\t\tno labels",
        b"\ta\tno id",
        b" \t a \t",
        b"d6\ta",
        b"only words",
        b"",
        b"\t\t",
        b" \x0c\t",
        b"d7\ta\t",
        "é\tü\tÄ text".encode(),
        b"d8\tb\t caf\xe9 \tx",
        b"d\xff9\ta\tx",
        b"d10\t,\tx",
        b"d11\t \t ",
        b"d12\ta\t\t\t",
        "d13\tb\tx".encode("utf-16-le"),
        b"\x00d\x00\t\x00a\x00\t\x00x\x00",
        b"d14\ta\ta NUL in the text \x00 is no matter",
        b"d15\ta\x00b",
        b"\x00",
    ],
    "sms": [
        b"ham\ttext",
        b"\ttext",
        b" \t ",
        b"ham",
        b"ham\t",
        b"ham\tt1\tt2",
        "\u00a0spam\u00a0\tx".encode(),
        b"",
        b"\t",
        b"sp\xe9m\tx\xff y",
        "é\tü".encode(),
        b" \x0b ",
        "ham\tx".encode("utf-16-le"),
        b"\x00s\x00p\x00a\x00m\x00\t\x00x\x00",
        b"ham\ta NUL in the text \x00 is no matter",
        b"\x00",
    ],
}


def expected_parse(line: str, fmt: str) -> tuple:
    """The rule as the docs state it: ``(category, id, labels, text)``. A blank line (only white
    space, as ``str.strip`` takes it) is no document; a tsv line is ``id TAB labels TAB text`` split
    on its first two TABs (labels comma-separated, stripped, empty ones dropped; the id stripped),
    an sms line ``label TAB text`` split on its first TAB (sms lines have no id). A NUL character
    before the text (in those fields, or the line without them) makes it malformed (nul: UTF-16
    read as UTF-8); else the first missing part names a malformed line: fields, then id, then
    labels."""
    if not line.strip():
        return ("blank_lines", None, None, None)
    if "\x00" in "\t".join(line.split("\t", 2)[: 2 if fmt == "tsv" else 1]):
        return ("malformed.nul", None, None, None)
    parts = line.split("\t", 2 if fmt == "tsv" else 1)
    if len(parts) != (3 if fmt == "tsv" else 2):
        return ("malformed.fields", None, None, None)
    if fmt == "tsv":
        doc_id, raw_labels, text = parts
        if not doc_id.strip():
            return ("malformed.id", None, None, None)
        doc_id, labels = doc_id.strip(), [x.strip() for x in raw_labels.split(",") if x.strip()]
    else:
        doc_id, labels, text = None, [parts[0].strip()] if parts[0].strip() else [], parts[1]
    if not labels:
        return ("malformed.labels", None, None, None)
    return ("documents", doc_id, labels, text)


@pytest.mark.parametrize("fmt", ["tsv", "sms"])
def test_a_batch_and_single_lines_follow_the_rule(fmt):
    lines = [raw.decode("utf-8", JVM_REPLACE) for raw in HOSTILE_LINES[fmt]]
    expected = [expected_parse(line, fmt) for line in lines]
    assert {e[0] for e in expected} == {
        "documents",
        "blank_lines",
        "malformed.fields",
        "malformed.labels",
        "malformed.nul",
    } | ({"malformed.id"} if fmt == "tsv" else set())
    got = [
        (category, doc_id, labels, text) if category == "documents" else (category, None, None, None)
        for doc_id, labels, text, category in parsed_lines(lines, fmt)
    ]
    assert got == expected
    assert parse_lines(pa.array(lines), fmt).num_rows == len(lines)
    for line, (category, doc_id, labels, text) in zip(lines, expected):
        if category == "blank_lines":
            assert parse_line(line, fmt) is None
        elif category == "documents":
            assert parse_line(line, fmt) == (doc_id, tuple(labels), text)
        else:
            with pytest.raises(MalformedLine) as bad:
                parse_line(line, fmt)
            assert bad.value.reason == category.removeprefix("malformed.")


def test_hand_parsed_lines():
    """Worked by hand: TABs and quotes stay in the text; labels are stripped and split on commas."""
    assert parse_line('d1\t earn , acq ,\tsaid "it\t" rose', "tsv") == (
        "d1",
        ("earn", "acq"),
        'said "it\t" rose',
    )
    assert parse_line("spam\tWIN\tnow", "sms") == (None, ("spam",), "WIN\tnow")
    assert parse_line(" \t\t ", "tsv") is None
    with pytest.raises(MalformedLine, match="labels"):
        parse_line("d2\t , \ttext", "tsv")
