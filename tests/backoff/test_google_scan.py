"""``backoff.google_scan`` (whole shards tested by RE2) against an independent reading of the same bytes:
the lines cut as Hadoop's LineRecordReader cuts them (written here from its documentation: ``\\n``,
``\\r`` and ``\\r\\n`` end a line, a UTF-8 byte-order mark at the start is dropped), each decoded and
given to ``inputs.parsers.google_line``, the rule of the ``combine`` engine. No Spark."""

import gzip
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbspark.backoff.google_scan as gs
from nbspark.inputs.decoding import JVM_REPLACE
from nbspark.inputs.parsers import MalformedLine, google_line
from nbspark.inputs.stats import PartitionStats


def hadoop_lines(data: bytes) -> list[str]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    pieces = re.split(rb"\r\n|\r|\n", data)
    if pieces and pieces[-1] == b"":
        pieces.pop()
    return [p.decode("utf-8", JVM_REPLACE) for p in pieces]  # as Spark decodes (test_nb_spark checks it)


def reference(data: bytes, args) -> tuple[Counter, dict]:
    ngrams, stats = Counter(), Counter()
    for line in hadoop_lines(data):
        stats["lines_read"] += 1
        try:
            outcome, tokens, count = google_line(line, *args)
        except MalformedLine as exc:
            stats["malformed"] += 1
            stats[f"malformed.{exc.reason}"] += 1
            continue
        if outcome == "ngram":
            ngrams[tokens] += count
        else:
            stats[outcome] += 1
    return ngrams, dict(stats)


def scanned(data: bytes, args, gz: bool = False) -> tuple[Counter, dict]:
    stats, ngrams = PartitionStats(0), Counter()
    gs.scan_shard(gzip.compress(data) if gz else data, gz, gs.GoogleRules(*args), stats, ngrams)
    return ngrams, dict(stats.counts)


def settings_for(fmt, **kw):
    base = {
        "width": 5,
        "strip": True,
        "lowercase": True,
        "centres": frozenset({"affect", "effect"}),
        "year_min": 1800,
        "year_max": 2100,
    }
    base.update(kw)
    return (
        fmt,
        base["width"],
        base["strip"],
        base["lowercase"],
        base["centres"],
        base["year_min"],
        base["year_max"],
    )


V3 = [
    "the cumulative effect_NOUN of the\t2000,45,5",
    "The Cumulative EFFECT_NOUN Of The\t1990,41,2\t1991,1,1",
    "_START_ not affect_VERB the outcome\t2001,39,4",
    "a b _NOUN_ d e\t2000,60,1",  # a tag token, not centred
    "a b effect_ d e\t2000,60,1",  # ends with _ but no tag
    "a b _._ d e\t2000,60,1",
    "a b Éffect d e\t2000,60,1",  # non-ASCII centre
    "a b \u212aind d e\t2000,60,1",  # Kelvin sign: "Kind".lower() == "kind"
    "a b affect d\t2000,60,1",  # four tokens
    "a  b affect d e\t2000,60,1",  # an empty token
    "a b affect d e\tMMX,60,1",
    "a b affect d e\t2000,123456789012345678901,1",
    "a b affect d e\t2000,1234567890123456789,1",  # 19 digits: within 64 bits
    "a b affect d e",
    "a b affect d e\t1700,60,1",
    "of the cause and so\t2001,900,9",
    "x y effect z w\t2000, 7 ,1",
    "x y effect z w\t2000,40,",
    "x y effective z w\t2000,40,1",
    "x y affects z w\t2000,40,1",
    "",
    "\t",
    "a b c d e\t2000,1,1,1",
]


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"strip": False},
        {"lowercase": False},
        {"centres": frozenset({"kind", "effect", "café"})},
        {"width": 3},
    ],
)
@pytest.mark.parametrize("gz", [False, True])
def test_v3_edges_equal_the_line_rule(kw, gz):
    args = settings_for("google_v3", **kw)
    data = ("\n".join(V3) + "\n").encode()
    assert scanned(data, args, gz) == reference(data, args)
    ngrams, stats = reference(data, args)
    assert stats["lines_read"] == len(V3)


def test_v2_edges_equal_the_line_rule():
    lines = [
        "the cumulative effect_NOUN of the\t2000\t45\t5",
        "x y effect z w\t2000\t 7 \t1",
        "a b affect d e\t2000\t60",
        "a b _END_ d e\t2000\t60\t1",
        "a b affect d e\t2000\t60\t1\t1",
        "of the cause and so\t2001\t900\t",
    ]
    args = settings_for("google_v2")
    data = ("\n".join(lines) + "\n").encode()
    ngrams, stats = scanned(data, args)
    assert (ngrams, stats) == reference(data, args)
    assert ngrams == {("the", "cumulative", "effect", "of", "the"): 45, ("x", "y", "effect", "z", "w"): 7}
    assert stats == {
        "lines_read": 6,
        "lines_with_pos_tag_tokens": 1,
        "lines_not_in_confusion_set": 1,
        "malformed": 2,
        "malformed.fields": 2,
    }


def test_line_ends_bom_and_the_last_line_as_hadoop_reads_them(monkeypatch):
    args = settings_for("google_v3")
    line = b"a b effect d e\t2000,50,1"
    data = b"\xef\xbb\xbf" + line + b"\r\n" + line + b"\r" + line + b"\n\n" + line + b"\r\r\n" + line
    expected = reference(data, args)
    assert expected[0] == {("a", "b", "effect", "d", "e"): 250}
    assert expected[1]["blank_lines"] == 2 and "malformed" not in expected[1]  # the two empty lines
    for piece in (1, 2, 3, 7, 64, 1 << 24):  # pieces cut everywhere, a \r\n across two of them too
        monkeypatch.setattr(gs, "PIECE", piece)
        assert scanned(data, args) == expected, piece
        assert scanned(data, args, gz=True) == expected, piece
    for short in (b"\xef", b"\xef\xbb", b"\xef\xbb\xbf", b"a"):  # files no longer than a byte-order mark
        assert scanned(short, args) == reference(short, args), short


def test_every_gzip_member_and_a_truncated_one():
    args = settings_for("google_v3")
    one, two = b"a b effect d e\t2000,50,1\n", b"a b affect d e\t2000,60,1\n"
    stats, ngrams = PartitionStats(0), Counter()
    gs.scan_shard(gzip.compress(one) + gzip.compress(two), True, gs.GoogleRules(*args), stats, ngrams)
    assert sum(ngrams.values()) == 110 and stats.counts["lines_read"] == 2
    with pytest.raises(
        gs.UnreadableShardError, match=r"cannot be read as gzip \(.*(?i:truncated|end of|incomplete|invalid)"
    ):
        gs.scan_shard(
            gzip.compress(one * 1000)[:-30], True, gs.GoogleRules(*args), PartitionStats(0), Counter()
        )
    with pytest.raises(gs.UnreadableShardError, match="cannot be read as gzip"):
        gs.scan_shard(one, True, gs.GoogleRules(*args), PartitionStats(0), Counter())


def test_invalid_utf8_is_decoded_as_the_text_source_decodes_it():
    args = settings_for("google_v3")
    data = b"a \xff effect d e\t2000,50,1\na b \xffeffect d e\t2000,50,1\na b eff\xc3 d e\t2000,1,1\n"
    assert scanned(data, args) == reference(data, args)


def test_an_encoded_surrogate_is_one_replacement_as_in_java():
    """``ED A0 80`` (a UTF-16 surrogate encoded in UTF-8): Java's decoder gives one U+FFFD, Python's
    ``errors="replace"`` three; the scanner decodes as Spark does."""
    ngrams, _ = scanned(b"a \xed\xa0\x80 effect d e\t2000,50,1\n", settings_for("google_v3"))
    assert ngrams == Counter({("a", "\ufffd", "effect", "d", "e"): 50})


TOKENS = st.sampled_from(
    [
        "a",
        "effect",
        "Effect",
        "AFFECT",
        "affect_VERB",
        "effect_",
        "_NOUN_",
        "_START_",
        "_._",
        "É",
        "\u212a",
        "\u212aIND",
        "kind",
        "x,y",
        "7",
        "",
        " ",
        "\t",
        "\r",
        "_",
        "é\udcff",
    ]
)
COUNTS = st.sampled_from(
    [
        "2000,40,1",
        "1999,7,",
        "1700,5,5",
        "2000, 3 ,1",
        "x,1,1",
        "2000,1",
        "2000,99999999999999999999,1",
        "2000\t41\t1",
        "",
        "2001,12,3\t2002,1,1",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(TOKENS, min_size=0, max_size=6), COUNTS, st.sampled_from(["\n", "\r\n", "\r"])),
        max_size=12,
    ),
    st.sampled_from(["google_v2", "google_v3"]),
    st.booleans(),
    st.booleans(),
)
def test_any_lines_equal_the_line_rule(rows, fmt, strip, lowercase):
    text = "".join(" ".join(tokens) + "\t" + counts + end for tokens, counts, end in rows)
    data = text.encode("utf-8", "surrogateescape")
    args = settings_for(
        fmt, strip=strip, lowercase=lowercase, centres=frozenset({"effect", "affect", "kind"})
    )
    assert scanned(data, args) == reference(data, args)
