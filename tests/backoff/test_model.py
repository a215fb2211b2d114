"""Events, the model built from them and the backoff walk, on the hand-counted ngrams.txt."""

import copy
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbspark.backoff.events import Example, count_columns, count_ddl, example_events, ngram_example
from nbspark.backoff.model import build_model, rank
from nbspark.backoff.predict import UNSEEN, parse_pattern, predict
from nbspark.inputs.parsers import MalformedLine

LETTERS = "ABCDE"
CHAIN = ("ABDE", "ABD", "BD", "B", "")
CONFUSION = frozenset({"affect", "effect"})


def fixture_counts(fixtures):
    """Count ngrams.txt in plain Python, the way the Spark job must."""
    counts = Counter()
    for line in (fixtures / "ngrams.txt").read_text(encoding="utf-8").splitlines():
        try:
            ex = ngram_example(line, "t", CONFUSION, 5, True)
        except MalformedLine:
            continue
        if ex is not None:
            for key, w in example_events(ex, CHAIN, LETTERS):
                counts[key] += w
    return counts


def test_example_events_one_per_subset():
    ex = Example("s", ("the", "cumulative", "effect", "of", "the"), 10)
    assert list(example_events(ex, CHAIN, LETTERS)) == [
        (("ABDE", "the", "cumulative", "of", "the", "effect"), 10),
        (("ABD", "the", "cumulative", "of", None, "effect"), 10),
        (("BD", None, "cumulative", "of", None, "effect"), 10),
        (("B", None, "cumulative", None, None, "effect"), 10),
        (("", None, None, None, None, "effect"), 10),
    ]
    assert count_columns(LETTERS) == ["subset", "a", "b", "d", "e", "label", "count"]
    assert count_ddl(LETTERS).startswith("subset STRING NOT NULL, a STRING, b STRING, d STRING, e STRING")


def test_hand_counted_tables(fixtures):
    counts = fixture_counts(fixtures)
    assert counts[("", None, None, None, None, "effect")] == 23
    assert counts[("", None, None, None, None, "affect")] == 11
    assert counts[("B", None, "not", None, None, "affect")] == 9
    assert counts[("B", None, "not", None, None, "effect")] == 1
    assert counts[("BD", None, "cumulative", "of", None, "effect")] == 10
    assert counts[("ABDE", '":', "the", "is", "", "effect")] == 8
    per_subset = Counter(k[0] for k in counts)
    assert per_subset == {"ABDE": 7, "ABD": 7, "BD": 6, "B": 6, "": 2}


def test_backoff_decisions(fixtures):
    rows = [(*k, v) for k, v in fixture_counts(fixtures).items()]
    model = build_model(rows, LETTERS, CHAIN)
    assert predict(model, parse_pattern("does not _ the outcome", 5)) == ("affect", pytest.approx(1.0), "ABD")
    assert predict(model, parse_pattern("could not _ the ratio", 5)) == ("affect", pytest.approx(0.9), "BD")
    assert predict(model, parse_pattern("so cumulative _ and so", 5)) == (
        "effect",
        pytest.approx(10 / 12),
        "B",
    )
    assert predict(model, parse_pattern("x y _ z w", 5)) == ("effect", pytest.approx(23 / 34), "")
    assert predict(model, parse_pattern("the cumulative _ of the", 5)) == (
        "effect",
        pytest.approx(10 / 12),
        "ABDE",
    )


def test_chain_without_prior_can_leave_unseen(fixtures):
    rows = [(*k, v) for k, v in fixture_counts(fixtures).items()]
    model = build_model(rows, LETTERS, ("ABDE", "B"))
    assert predict(model, ("q", "q", "_", "q", "q")) == (None, 0.0, UNSEEN)


def test_rank_ties_are_broken_by_label():
    assert [label for label, _ in rank({"effect": 3, "affect": 3, "x": 1})] == ["affect", "effect", "x"]
    assert rank({"a": 1, "b": 3})[0] == ("b", math.log(0.75))


def test_parse_pattern_needs_centre():
    with pytest.raises(ValueError, match="'_' in the middle"):
        parse_pattern("a b c d e", 5)


def test_candidates_restrict_and_renormalise():
    rows = [
        ("B", None, "x", None, None, "their", 6),
        ("B", None, "x", None, None, "effect", 3),
        ("B", None, "x", None, None, "affect", 1),
        ("", None, None, None, None, "their", 6),
        ("", None, None, None, None, "effect", 3),
        ("", None, None, None, None, "affect", 1),
        ("", None, None, None, None, "there", 2),
    ]
    model = build_model(rows, LETTERS, ("B", ""))
    window = ("q", "x", "_", "q", "q")
    assert predict(model, window) == ("their", pytest.approx(0.6), "B")
    assert predict(model, window, frozenset({"affect", "effect"})) == ("effect", pytest.approx(0.75), "B")
    # "there" was never seen after x: B has only "their" from the set, so B decides with 1.0
    assert predict(model, window, frozenset({"their", "there"})) == ("their", pytest.approx(1.0), "B")
    assert predict(model, ("q", "y", "_", "q", "q"), frozenset({"their", "there"})) == (
        "their",
        pytest.approx(0.75),
        "",
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["ABDE", "BD", "B", ""]),
            st.sampled_from(["a", "b"]),
            st.sampled_from(["c", "d"]),
            st.sampled_from(["affect", "effect"]),
            st.integers(1, 5),
        ),
        min_size=1,
        max_size=40,
    ),
    st.integers(1, 39),
)
def test_counts_added_in_two_parts_rank_as_all_at_once(rows, cut):
    """``add_counts`` of a second part into the tables of the first, and ``model_from_counts`` from
    the first part's model ranking only the contexts touched, equal the tables and model of every
    row at once; the first part's model and counts stay as they were."""
    from nbspark.backoff.model import add_counts, count_tables, model_from_counts

    letters, chain = "ABCDE", ["ABDE", "BD", "B", ""]
    as_rows = [(s, a, c, c, a, label, n) for s, a, c, label, n in rows]  # (subset, A, B, D, E, C, n)
    first, second = as_rows[:cut], as_rows[cut:]
    tables = count_tables(first, letters, chain)
    before = model_from_counts(tables, letters, chain)
    kept = copy.deepcopy((tables, before))
    held = {s: dict(t) for s, t in tables.items()}  # the label counts handed out, by reference
    touched = add_counts(tables, second, letters, chain)
    after = model_from_counts(tables, letters, chain, before, touched)
    assert tables == count_tables(as_rows, letters, chain)
    assert after == model_from_counts(count_tables(as_rows, letters, chain), letters, chain)
    assert before == kept[1] and held == kept[0]
