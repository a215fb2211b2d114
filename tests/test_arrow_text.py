"""The vectorised tokenizer and counter against the plain Python ones (no JVM)."""

import random
import re
from collections import Counter

import pyarrow as pa
import pytest

from nbspark.arrow_text import PartialCounts, count_label_tokens, word_tokens

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
    "a",
]


@pytest.mark.parametrize("offset", [0, 1, 3])
def test_word_tokens_equal_python_on_edge_cases(offset):
    arr = pa.array(EDGES).slice(offset)  # a sliced array: the buffers start before the data
    tokens, doc = word_tokens(arr)
    assert list(zip(doc.tolist(), tokens.to_pylist())) == python_tokens(EDGES[offset:])


def test_word_tokens_known_difference_dotted_capital_i():
    # Python lower-cases İ to "i" + U+0307 (not a word character), utf8proc to "i": documented
    assert word_tokens(pa.array(["İstanbul"]))[0].to_pylist() == ["istanbul"]
    assert python_tokens(["İstanbul"]) == [(0, "i"), (0, "stanbul")]


def test_word_tokens_all_ascii_and_random_text():
    rng = random.Random(7)
    alphabet = "aZ_09 .,-\t'\"é中x"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))) for _ in range(500)]
    ascii_only = [t.encode("ascii", "ignore").decode() for t in texts]
    for sample in (texts, ascii_only, [""] * 5):
        tokens, doc = word_tokens(pa.array(sample))
        assert list(zip(doc.tolist(), tokens.to_pylist())) == python_tokens(sample)


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


def test_partial_counts_sum_like_a_counter():
    rng = random.Random(3)
    expected, partial, emitted = Counter(), PartialCounts(limit=50), []
    for _ in range(30):
        labels = [rng.choice("ab") for _ in range(8)]
        texts = [" ".join(rng.choice(["x", "y", "z", "w"]) for _ in range(rng.randrange(5))) for _ in range(8)]
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
