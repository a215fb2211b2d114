import math

import pytest

from nbspark.backoff.strategies import CountTables, all_subsets, evaluate, order_by_dev_accuracy

LETTERS = "ABCDE"
ROWS = [
    ("", None, None, None, None, "effect", 8),
    ("", None, None, None, None, "affect", 2),
    ("B", None, "not", None, None, "affect", 2),
    ("B", None, "not", None, None, "effect", 1),
    ("B", None, "the", None, None, "effect", 5),
    ("A", "x", None, None, None, "effect", 1),
    ("D", None, None, "the", None, "affect", 2),
    ("D", None, None, "of", None, "effect", 6),
    ("E", None, None, None, "y", "effect", 3),
]


def test_all_subsets():
    subsets = all_subsets("ABDE")
    assert len(subsets) == 15 and subsets[0] == "ABDE" and subsets[-1] == "E"


def test_threshold_walk():
    t = CountTables(ROWS, LETTERS)
    w = ("q", "not", "_", "q", "q")
    assert t.chain(w, ["B", ""]) == ("affect", "B")
    assert t.chain(w, ["B", ""], k=4) == ("effect", "")  # B=not seen 3 times only


def test_naive_bayes_by_hand():
    t = CountTables(ROWS, LETTERS)
    w = ("x", "not", "_", "the", "y")
    # |V_A| = 1, |V_B| = 2, |V_D| = 2, |V_E| = 1
    effect = math.log(8 / 10) + math.log(2 / 9) + math.log(2 / 10) + math.log(1 / 10) + math.log(4 / 9)
    affect = math.log(2 / 10) + math.log(1 / 3) + math.log(3 / 4) + math.log(3 / 4) + math.log(1 / 3)
    assert (effect > affect) == (t.naive_bayes(w) == "effect")
    assert t.naive_bayes(w) == "affect"


def test_order_by_dev_accuracy():
    t = CountTables(ROWS, LETTERS)
    dev = [
        ("q", "the", "effect", "of", "q"),
        ("q", "q", "affect", "the", "q"),
        ("q", "not", "effect", "q", "q"),
    ]
    order = order_by_dev_accuracy(t, dev, ["B", "D"])
    assert order == ["D", "B", ""]  # D: 2 of 2 right; B: 1 of 2
    assert evaluate(lambda w: t.chain(w, order)[0], dev) == pytest.approx(2 / 3)
