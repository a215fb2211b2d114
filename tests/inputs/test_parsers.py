import pytest

from nbspark.inputs.parsers import (
    MalformedLine,
    clean_sgml_text,
    decode_reuters,
    parse_ngram_line,
    parse_reuters_sgml,
)


def test_reuters_fixture_fields(fixtures):
    stories = list(parse_reuters_sgml(decode_reuters((fixtures / "mini.sgm").read_bytes(), "mini.sgm")))
    assert [s.newid for s in stories] == ["1", "2", "3", "4"]
    assert [s.lewissplit for s in stories] == ["TRAIN", "TEST", "NOT-USED", "TEST"]
    assert [s.topics_attr for s in stories] == ["YES", "NO", "BYPASS", "NO"]
    assert stories[0].topics == ("cocoa", "grain")
    assert stories[1].topics == ()
    assert stories[0].title == "AN EFFECT IN THE TITLE"
    assert stories[0].body == "Does not affect the outcome.\nCould not effect the ratio.\n Reuter\n"
    # Latin-1 bytes, entity references, &amp;lt; kept literal, the control character dropped
    assert stories[1].title == "SOCIÉTÉ & CO"
    assert stories[1].body.startswith("Effect on Société <SG> was nil &lt;ok.")
    assert stories[3].body == ""


def test_clean_sgml_text():
    assert clean_sgml_text("a&#3;b&#2;\tc\n") == "ab\tc\n"
    assert clean_sgml_text("&lt;&gt;&amp;&quot;&#233;") == '<>&"é'


def test_ngram_line_ok():
    assert parse_ngram_line("The effect of it all\t12\n") == (("The", "effect", "of", "it", "all"), 12)
    # a trailing space gives an empty last token: kept, as the published counts were made
    assert parse_ngram_line('": the effect is \t8') == (('":', "the", "effect", "is", ""), 8)
    assert parse_ngram_line("a b c\t1", order=3) == (("a", "b", "c"), 1)


@pytest.mark.parametrize(
    "line, reason",
    [
        ('"and in effect \t5', "tokens"),
        ("a b c d e f\t1", "tokens"),
        ("a b effect d e", "fields"),
        ("a b effect d e\t1\t2", "fields"),
        ("a b effect d e\t", "count"),
        ("a b effect d e\tabc", "count"),
        ("a b effect d e\t-3", "count"),
        ("a b effect d e\t１２", "count"),  # full-width digits are not a count
    ],
)
def test_ngram_line_malformed(line, reason):
    with pytest.raises(MalformedLine) as info:
        parse_ngram_line(line)
    assert info.value.reason == reason


def test_line_numbers_of_the_first_malformed_lines_read_each_file_once(tmp_path, monkeypatch):
    """Hand-counted line numbers of several offenders in one gzip file and one plain file (a
    ``\\r\\n`` line end among them), from one read of each file; table rows have none."""
    import gzip

    from nbspark.inputs.stats import BAD, split_stats
    from nbspark.storage.locations import Location

    text = b"a\nbb\n\nccc\r\nd\n"  # lines 1-5 start at bytes 0, 2, 5, 6, 11
    (tmp_path / "x.gz").write_bytes(gzip.compress(text))
    (tmp_path / "y.txt").write_bytes(text)
    opened = []
    real_open = Location.open
    monkeypatch.setattr(Location, "open", lambda self: opened.append(self.name) or real_open(self))
    gz, plain = str(tmp_path / "x.gz"), str(tmp_path / "y.txt")
    offenders = [(gz, 11), (gz, 0), (gz, 6), (plain, 5), (plain, 2), ("table:/t.csv", 3)]
    _, bad = split_stats([((BAD, source, offset, "fields", "?"), 1) for source, offset in offenders], 10)
    assert [(b["source"], b["offset"], b["line_number"]) for b in bad] == [
        (gz, 0, 1),
        (gz, 6, 4),
        (gz, 11, 5),
        (plain, 2, 2),
        (plain, 5, 3),
        ("table:/t.csv", 3, None),
    ]
    assert sorted(opened) == ["x.gz", "y.txt"]
