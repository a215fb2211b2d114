"""A table model's rows in memory read by column (``naive_bayes.row_cells``): a 2-D array or a
DataFrame, read whole by its columns' types, is read as the same rows given as mappings, cell by
cell; what cannot be read is refused naming the first row at fault."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbspark
from nbspark.naive_bayes.row_cells import read_cells
from nbspark.spine.predictor import as_batch


def _same(a, b) -> bool:
    def text(cells) -> dict:  # an integer column read whole is codes into its distinct values' text
        return {c: v if isinstance(v, list) else v.tolist() for c, v in cells.categories.items()}

    return (
        a.n == b.n
        and a.numbers.keys() == b.numbers.keys()
        and all(np.array_equal(a.numbers[c], b.numbers[c], equal_nan=True) for c in a.numbers)
        and text(a) == text(b)
    )


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.floats(), st.none()),
            st.integers(-(2**62), 2**62),
            st.one_of(st.sampled_from(["x", "y", "", " ", "Ω"]), st.none()),
            st.integers(-3, 3),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_a_frames_columns_are_read_as_its_rows_are_cell_by_cell(rows):
    """Typed columns (float with NaN and infinities, int, text with None, int categories) read
    whole equal the same rows given as mappings, each cell by the row rule: a number column's NaN
    and infinities left out, an integer category its text."""
    frame = pd.DataFrame(
        {
            "f": pd.Series([r[0] for r in rows], dtype=float),
            "i": pd.Series([r[1] for r in rows], dtype="int64"),
            "t": pd.Series([r[2] for r in rows], dtype=object),
            "k": pd.Series([r[3] for r in rows], dtype="int64"),
        }
    )
    mappings = [{"f": r[0], "i": r[1], "t": r[2], "k": r[3]} for r in rows]
    by_columns = read_cells(as_batch(frame, "rows"), ["f", "i"], ["t", "k"], frozenset(), "mixed")
    by_cells = read_cells(mappings, ["f", "i"], ["t", "k"], frozenset(), "mixed")
    assert _same(by_columns, by_cells)
    f = by_cells.numbers["f"]
    assert [None if math.isnan(v) else v for v in f.tolist()] == [
        r[0] if r[0] is not None and math.isfinite(r[0]) else None for r in rows
    ]
    assert by_cells.categories["k"] == by_columns.categories["k"].tolist() == [str(r[3]) for r in rows]


def test_a_table_model_fits_and_scores_an_array_as_the_same_rows_of_mappings():
    """A Gaussian and a categorical model fitted on 2-D arrays score as models fitted on the same
    rows as mappings, and as scikit-learn's ``GaussianNB`` and ``CategoricalNB``."""
    from sklearn.naive_bayes import CategoricalNB, GaussianNB

    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    K = rng.integers(0, 4, size=(400, 3))
    for model, data, theirs in (("gaussian", X, GaussianNB()), ("categorical", K, CategoricalNB())):
        by_array = nbspark.NaiveBayes(model=model).fit(data, y)
        rows = [{f"x{j}": v for j, v in enumerate(r)} for r in data.tolist()]
        by_rows = nbspark.NaiveBayes(model=model).fit(rows, y)
        assert np.allclose(by_array.predict_proba(data), by_rows.predict_proba(rows), rtol=1e-12)
        assert np.allclose(by_array.predict_proba(data), theirs.fit(data, y).predict_proba(data), rtol=1e-9)
        halves = (
            nbspark.NaiveBayes(model=model).partial_fit(data[:150], y[:150]).partial_fit(data[150:], y[150:])
        )
        assert np.allclose(halves.predict_proba(data), by_array.predict_proba(data), rtol=1e-12)
        w = rng.integers(0, 3, size=400)  # a weight of k counts k copies; of 0, nothing
        weighed = nbspark.NaiveBayes(model=model).fit(data, y, sample_weight=w)
        copies = nbspark.NaiveBayes(model=model).fit(np.repeat(data, w, axis=0), np.repeat(y, w))
        assert np.allclose(weighed.predict_proba(data), copies.predict_proba(data), rtol=1e-12)
        assert weighed.class_count_.tolist() == copies.class_count_.tolist()


def test_what_cannot_be_read_is_refused_naming_the_first_row_at_fault():
    model = nbspark.NaiveBayes(model="mixed").fit(
        pd.DataFrame({"n": [1.0, 2.0, 3.0], "k": ["1", "2", "2"]}), ["a", "b", "b"]
    )  # k: categories, written as text; an integer column is read as their text, if seen
    assert model.predict(pd.DataFrame({"n": [2.5], "k": [2]})).tolist() == ["b"]
    with pytest.raises(
        ValueError, match=r"row 2, column 'k': 5 is not a value the model saw there \('1', '2'\)"
    ):
        model.predict(pd.DataFrame({"n": [1.0, 1.0, 1.0], "k": [1, 2, 5]}))
    with pytest.raises(ValueError, match=r"row 1, column 'n': 'warm' is not a number"):
        model.predict(pd.DataFrame({"n": ["1.5", "warm", "x"], "k": ["1", "2", "2"]}))
    with pytest.raises(
        TypeError, match=r"row 1, column 'k': argument must be a string or a number, not list"
    ):
        model.predict([{"n": 1.0, "k": "1"}, {"n": "warm", "k": [1]}])  # a wrong type before a wrong number
    with pytest.raises(ValueError, match=r"row 0 has none of the model's columns \(n, k\); its keys: 'm'"):
        model.predict(pd.DataFrame({"m": [1.0]}), extra_columns=["m"])
    with pytest.raises(ValueError, match=r"row 1 has none of the model's columns \(n, k\); it is empty$"):
        model.predict([{"n": 1.0}, {}])
    with pytest.raises(ValueError, match=r"row 1, column 'k' holds a lone surrogate"):
        model.partial_fit(pd.DataFrame({"n": [1.0, 2.0], "k": ["1", "\ud83d"]}), ["a", "b"])
    assert model.predict(pd.DataFrame({"n": [2.5], "k": ["7"]})).tolist() == ["b"]  # text: an unseen value


def test_a_bernoulli_columns_text_is_its_0_or_1_however_the_rows_come():
    """A Bernoulli column's cells are "0" or "1" (TRUE, 1.0, True are "1"), read from a DataFrame's
    text column, a numpy array of text, or mappings; other cells are refused, naming the row."""
    given = [("TRUE", "x"), ("0", "y"), ("1.0", "x"), ("false", "y")]
    frame = pd.DataFrame(given, columns=["f", "g"])
    ways = [as_batch(frame, "rows"), as_batch(np.array(given), "rows", columns=["f", "g"])]
    ways.append([{"f": f, "g": g} for f, g in given])
    for rows in ways:
        cells = read_cells(rows, [], ["f", "g"], frozenset({"f"}), "categorical")
        assert cells.categories == {"f": ["1", "0", "1", "0"], "g": ["x", "y", "x", "y"]}
    with pytest.raises(ValueError, match=r"row 1, column 'f': '2' is not 0 or 1 \(a Bernoulli column\)"):
        read_cells(as_batch(np.array([["1"], ["2"]]), "rows", columns=["f"]), [], ["f"], {"f"}, "categorical")
