"""The vectorised tokenizer and counter against the plain Python ones (no JVM)."""

import random
import re
from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from nbspark.backoff.arrow_events import ngram_events
from nbspark.inputs.arrow_tokens import documents, token_codes, word_tokens
from nbspark.naive_bayes.arrow_count import count_label_tokens
from nbspark.spine.arrow_counts import PartialCounts

WORDS = re.compile(r"\w+")


def python_tokens(texts):
    return [(i, t) for i, text in enumerate(texts) for t in WORDS.findall(text.lower())]


EDGES = [
    "",
    "abc",
    "Hello, World!",
    "x",
    "_a_ b1 ",
    "...",
    "ZZ top",
    "end",
    "tab\tand\nnewline",
    "@[`{",  # the bytes either side of A-Z, a-z: not word characters
    "Über café naïve",  # non-ASCII letters are word characters
    "ÀÉ x²y ½ ٣ 中文 — “quoted”",
    "STRASSE ẞ",  # ẞ lower-cases to ß in both
    "ΟΔΟΣ ΣΟΦΟΣ Σ ΣΑ",  # Python lower-cases a word-final Σ to ς, utf8proc always to σ
    "İstanbul",  # Python: "i" + U+0307, which is not a word character; utf8proc: "i"
    "cafe\u0301 हिन्दी a\u203fb",  # combining marks and connector punctuation are not word characters
    "a",
]


@pytest.mark.parametrize("offset", [0, 1, 3])
def test_word_tokens_equal_python_on_edge_cases(offset):
    arr = pa.array(EDGES).slice(offset)  # a sliced array: the buffers start before the data
    tokens, doc = word_tokens(arr)
    assert list(zip(doc.tolist(), tokens.to_pylist())) == python_tokens(EDGES[offset:])


def test_word_tokens_where_python_and_utf8proc_lower_case_differently():
    # those documents are tokenized by Python itself (they once gave "istanbul" and "οδοσ")
    texts = ["İstanbul", "plain", "ΟΔΟΣ é", "ΣΑ"]
    tokens, doc = word_tokens(pa.array(texts))
    assert list(zip(doc.tolist(), tokens.to_pylist())) == [
        (0, "i"),
        (0, "stanbul"),
        (1, "plain"),
        (2, "οδος"),
        (2, "é"),
        (3, "σα"),
    ]


def test_word_tokens_all_ascii_and_random_text():
    rng = random.Random(7)
    alphabet = "aZ_09 .,-\t'\"é中x"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))) for _ in range(500)]
    ascii_only = [t.encode("ascii", "ignore").decode() for t in texts]
    for sample in (texts, ascii_only, [""] * 5):
        tokens, doc = word_tokens(pa.array(sample))
        assert list(zip(doc.tolist(), tokens.to_pylist())) == python_tokens(sample)


@pytest.mark.parametrize("offset", [0, 1, 2])
def test_word_tokens_ascii_edges_between_documents(offset):
    # all ASCII (the byte-arithmetic path): words that touch across a document boundary, empty
    # documents between them, "_" (folded to DEL and back), DEL itself, the bytes beside A-Z and a-z
    texts = ["ab", "cd", "", "", "_E", "F_", "9", "\x7f_\x7f", "@A[a`z{Z", "", "end"]
    tokens, doc = word_tokens(pa.array(texts).slice(offset))
    assert list(zip(doc.tolist(), tokens.to_pylist())) == python_tokens(texts[offset:])


def _token_lengths_texts():
    # tokens of every length from 1 to 40 bytes (the 8-byte word, the pair of words, the strings),
    # the same long token twice and with different case, tokens that share their first 8 or 16
    # bytes, "_" inside long tokens, and tokens that touch across a document boundary
    words = "ab_Cd" * 8
    texts = [words[:n] + " " + words[:n].upper() for n in range(1, 41)]
    texts += [
        "internationally International internal INTERNATIONALISATION interstate",
        "abcdefgh abcdefghi abcdefghij",
    ]
    texts += ["abcdefghabcdefgh abcdefghabcdefghx abcdefghabcdefghxy", "x" * 17, "y" * 9, "z" * 8, "Q" * 300]
    texts += ["tail_of_a_long_token", "continues_here", "", "12345678901234567", "last"]
    return texts


@pytest.mark.parametrize("offset", [0, 1, 5])
def test_word_tokens_of_every_length(offset):
    texts = _token_lengths_texts()
    tokens, doc = word_tokens(pa.array(texts).slice(offset))
    assert list(zip(doc.tolist(), tokens.to_pylist())) == python_tokens(texts[offset:])


@pytest.mark.parametrize("non_ascii", [False, True])
def test_token_codes_name_each_token_once(non_ascii):
    # one code per distinct token, also where the same token is in an ASCII document and in one
    # tokenized by RE2 or by Python (a non-ASCII document)
    texts = _token_lengths_texts() + (
        ["café internationally abcdefghi the", "İstanbul the abcdefgh"] if non_ascii else []
    )
    codes, vocab, doc = token_codes(pa.array(texts))
    spelt = pc.take(vocab, pa.array(codes)).to_pylist()
    assert list(zip(doc.tolist(), spelt)) == python_tokens(texts)
    code_of = {}
    for code, token in zip(codes.tolist(), spelt):
        assert code_of.setdefault(token, code) == code
    assert len(set(code_of.values())) == len(code_of)


def test_word_tokens_chunked_and_large_string():
    texts = ["One two", "", "THREE"]
    chunked = pa.chunked_array([pa.array(texts[:1]), pa.array(texts[1:])])
    for arr in (chunked, pa.array(texts, pa.large_string())):
        tokens, doc = word_tokens(arr)
        assert tokens.to_pylist() == ["one", "two", "three"] and doc.tolist() == [0, 0, 2]


@pytest.mark.parametrize("bernoulli", [False, True])
def test_count_label_tokens_hand_counted(bernoulli):
    labels = pa.array(["spam", "ham", "spam", "ham"])
    texts = pa.array(["win win cash", "see you", "", "You win"])
    table, has_tokens = count_label_tokens(labels, texts, bernoulli)
    got = {(r["label"], r["token"]): r["n"] for r in table.to_pylist()}
    assert got == {
        ("spam", "win"): 1 if bernoulli else 2,
        ("spam", "cash"): 1,
        ("ham", "see"): 1,
        ("ham", "you"): 2,
        ("ham", "win"): 1,
    }
    assert has_tokens.tolist() == [True, True, False, True]


@pytest.mark.parametrize("bernoulli", [False, True])
def test_count_label_tokens_counts_a_document_under_each_of_its_labels(bernoulli):
    # a list of labels per document: each token counts once per element, as Spark's explode of
    # the list would give (a repeated label counts twice); an empty list counts nothing
    labels = pa.array([["a", "b"], ["b"], [], ["a", "c", "a"], ["c"]], pa.list_(pa.string()))
    texts = pa.array(["x y x", "y", "x", "z", ""])
    table, has_tokens = count_label_tokens(labels, texts, bernoulli)
    got = {(r["label"], r["token"]): r["n"] for r in table.to_pylist()}
    xs = 1 if bernoulli else 2
    assert got == {("a", "x"): xs, ("a", "y"): 1, ("b", "x"): xs, ("b", "y"): 2, ("a", "z"): 2, ("c", "z"): 1}
    assert has_tokens.tolist() == [True, True, True, True, False]
    # one label per document as a list gives what the plain string array gives
    flat = pa.array(["spam", "ham", "spam"])
    texts = pa.array(["win win cash", "see you", "you win"])
    listed, _ = count_label_tokens(pa.array([["spam"], ["ham"], ["spam"]]), texts, bernoulli)
    plain, _ = count_label_tokens(flat, texts, bernoulli)
    assert sorted(listed.to_pylist(), key=str) == sorted(plain.to_pylist(), key=str)


def test_partial_counts_sum_like_a_counter():
    rng = random.Random(3)
    expected, partial, emitted = Counter(), PartialCounts(limit=50), []
    for _ in range(30):
        labels = [rng.choice("ab") for _ in range(8)]
        texts = [
            " ".join(rng.choice(["x", "y", "z", "w"]) for _ in range(rng.randrange(5))) for _ in range(8)
        ]
        for y, text in zip(labels, texts):
            expected.update((y, t) for t in text.split())
        table, _ = count_label_tokens(pa.array(labels), pa.array(texts))
        emitted += partial.add(table)
    assert emitted, "the limit of 50 rows must have forced a flush"
    emitted += partial.flush()
    got = Counter()
    for t in emitted:
        for r in t.to_pylist():
            got[(r["label"], r["token"])] += r["n"]
    assert got == expected


def python_ngram_events(lines, width, centres, lowercase, subsets, letters):
    """The Python path itself (``backoff.inputs.ngram_partition``), line by line: the reference."""
    from nbspark.backoff.events import example_events
    from nbspark.backoff.inputs import ngram_partition as _ngram_partition
    from nbspark.inputs.stats import is_stat, split_stats

    events, stat_rows = Counter(), []
    records = (("", offset, line) for offset, line in enumerate(lines))
    for rec in _ngram_partition(records, frozenset(centres), width, lowercase, "permissive", 0):
        if is_stat(rec):
            stat_rows.append(rec)
            continue
        for key, w in example_events(rec, subsets, letters):
            events[key] += w
    return events, split_stats(stat_rows, 0)[0]


NGRAM_LINES = [
    "the cumulative effect of the\t10",
    "The cumulative Effect of the\t5",  # lower-cased into the line above
    "would not affect the outcome\t9",
    "would not affect finance \t3",  # trailing space: an empty fifth token, kept
    "in effect \t1176",  # a token missing
    "no tab here 7",
    "two\ttabs\t3",
    "a b effect d e\tx12",
    "a b effect d e\t 4 ",  # spaces around the count are fine
    "a b effect d e\t\u00a07",  # so is a no-break space (Python's strip)
    "a b effect d e\t٣",  # an Arabic-Indic digit is not ASCII: malformed count
    "x y other z w\t4",
    "ÜBER die AFFECT ist gut\t2",  # non-ASCII lower-casing, and a centre in upper case
    "İ x effect y z\t1",  # Python lower-cases İ to two code points
    "bad \ufffd byte effect x\t1",
    "a b effect d e\t3\r",
]


@pytest.mark.parametrize("lowercase", [True, False])
def test_ngram_events_equal_the_python_path(lowercase):
    subsets = ("ABDE", "ABD", "BD", "B", "")
    table, stats = ngram_events(pa.array(NGRAM_LINES), 5, ("affect", "effect"), lowercase, subsets, "ABCDE")
    events, expected_stats = python_ngram_events(
        NGRAM_LINES, 5, ("affect", "effect"), lowercase, subsets, "ABCDE"
    )
    got = Counter()
    for r in table.to_pylist():
        got[(r["subset"], r["a"], r["b"], r["d"], r["e"], r["label"])] += r["count"]
    assert got == events and stats == expected_stats
    if lowercase:  # a few cells by hand
        assert events[("ABDE", "the", "cumulative", "of", "the", "effect")] == 15
        assert events[("B", None, "not", None, None, "affect")] == 12
        assert stats["malformed"] == 5 and stats["examples"] == 9 and stats["lines_not_in_confusion_set"] == 2


def test_ngram_events_invalid_utf8_and_empty():
    raw = pa.array([b"caf\xe9 x effect y z\t2", b"a b affect d e\t1"], pa.binary()).cast(
        pa.string(), safe=False
    )
    table, stats = ngram_events(raw, 5, ("affect", "effect"), True, ("",), "ABCDE")
    assert stats["decode_replacements"] == 1 and stats["weight"] == 3
    # an encoded surrogate is one U+FFFD, as the JVM decodes the Python path's lines (Python's replace: three)
    raw = pa.array([b"\xed\xa0\x80 x effect y z\t2"], pa.binary()).cast(pa.string(), safe=False)
    table, stats = ngram_events(raw, 5, ("affect", "effect"), True, ("A",), "ABCDE")
    assert stats["decode_replacements"] == 1
    assert table.column("a").to_pylist() == ["\ufffd"]
    table, stats = ngram_events(pa.array([], pa.string()), 5, ("affect", "effect"), True, ("",), "ABCDE")
    assert table.num_rows == 0 and stats == {}


def test_documents_keeps_the_document_rows_and_the_batch_itself_when_all_are():
    mixed = pa.RecordBatch.from_pydict(
        {"category": ["documents", "blank_lines", "malformed.id", "documents"], "text": ["a", "", "x", "b"]}
    )
    assert documents(mixed).to_pydict() == {"category": ["documents", "documents"], "text": ["a", "b"]}
    whole = pa.RecordBatch.from_pydict({"category": ["documents", "documents"], "text": ["a", "b"]})
    assert documents(whole) is whole
    none = pa.RecordBatch.from_pydict({"category": ["blank_lines"], "text": [""]})
    assert documents(none).num_rows == 0


@pytest.mark.parametrize(
    "raw, jvm",
    [
        (b"caf\xe9", "caf\ufffd"),  # a lone byte: one U+FFFD in both
        (b"\xed\xa0\x80x", "\ufffdx"),  # an encoded surrogate: one in the JVM, three in Python
        (b"\xed\xa0x", "\ufffdx"),  # a 3-byte lead takes a second byte that may follow it: one, Python two
        (b"\xed\xa0", "\ufffd"),  # ... and at the end of the line
        (b"\xe0\x80\x80", "\ufffd\ufffd\ufffd"),  # an overlong lead takes nothing along: three in both
        (b"\xe4\xb8", "\ufffd"),  # cut off at the end: one in both
        (b"\xe4\xb8x", "\ufffdx"),
        (b"\xf0\x90\x80", "\ufffd"),
        (b"\xf0\x90\x80x", "\ufffdx"),
        (b"\xf0\x90x", "\ufffdx"),
        (b"\xf4\x90\x80\x80", "\ufffd" * 4),  # past U+10FFFF: the lead alone, then each continuation byte
        (b"\xf5\x80", "\ufffd\ufffd"),
        (b"\xc0\xaf \xc2", "\ufffd\ufffd \ufffd"),
        ("naïve ☃ 😀".encode(), "naïve ☃ 😀"),
    ],
)
def test_bad_utf8_is_decoded_as_the_jvm_decodes_it(raw, jvm):
    """Cases worked by hand from ``java.lang.String``'s UTF-8 decoder (the arrow paths decode
    Spark's unchecked bytes in Python; the Python engines get lines the JVM decoded). The Spark
    tests check the same against the JVM itself on random bytes."""
    from nbspark.inputs.decoding import JVM_REPLACE
    from nbspark.inputs.lines import jvm_decoded

    assert raw.decode("utf-8", JVM_REPLACE) == jvm
    for binary, string in ((pa.binary(), pa.string()), (pa.large_binary(), pa.large_string())):
        decoded = jvm_decoded(pa.array([b"ok", raw, None], binary).view(string))
        assert decoded.type == string
        assert decoded.to_pylist() == ["ok", jvm, None]


def test_a_valid_array_is_not_decoded_again():
    from nbspark.inputs.lines import jvm_decoded

    values = pa.array(["a", "é", None])
    assert jvm_decoded(values) is values


@pytest.mark.parametrize("fmt", ["tsv", "sms"])
def test_parse_lines_by_hand(fmt):
    """``inputs.lines.parse_lines`` without Spark; the Spark tests hold it to the Python parsers
    and to the SQL parse on hostile lines."""
    from nbspark.inputs.lines import parse_lines

    if fmt == "tsv":
        lines = ["d1\ta, b ,\u00a0\ttext\twith tab", " \t ", "d2\ta", "\ta\tx", "d3\t , \tx", "d4\tz\t"]
        expected = [
            ("documents", "d1", ["a", "b"], "text\twith tab"),
            ("blank_lines", None, None, None),
            ("malformed.fields", None, None, None),
            ("malformed.id", None, None, None),
            ("malformed.labels", None, None, None),
            ("documents", "d4", ["z"], ""),
        ]
    else:
        lines = ["\u3000ham \tHi\tthere", "", "spam", "\tx", "ham\t"]
        expected = [
            ("documents", None, ["ham"], "Hi\tthere"),
            ("blank_lines", None, None, None),
            ("malformed.fields", None, None, None),
            ("malformed.labels", None, None, None),
            ("documents", None, ["ham"], ""),
        ]
    batch = parse_lines(pa.array(lines), fmt)
    assert batch.schema.names == ["id", "labels", "text", "category"]
    got = [
        (r["category"], r["id"], r["labels"], r["text"])
        if r["category"] == "documents"
        else (r["category"], None, None, None)
        for r in batch.to_pylist()
    ]
    assert got == expected
    assert parse_lines(pa.array([], pa.string()), fmt).num_rows == 0
