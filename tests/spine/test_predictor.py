"""What the in-process models of both families share: a 2-D array is rows (``as_batch``); their
``save()`` and its compaction: tests/spine/test_committing.py."""

import numpy as np
import pytest

import nbspark
from nbspark.spine.predictor import add_events


def test_a_2d_array_is_rows_by_position_and_a_bad_one_is_refused():
    """``as_batch``'s rule of scikit-learn's ``X``: a 2-D array (numpy's, a list of lists, a frame
    of unnamed columns) is rows, its columns the model's in order (``x0``, ``x1``, … for none), a
    NaN cell missing; a 1-D, ragged, sparse or complex one, or one of another width, is refused in
    one line, in scikit-learn's words."""
    import pandas as pd
    import scipy.sparse

    from nbspark.spine.predictor import as_batch

    def rows(*args, **kwargs) -> list:
        return list(as_batch(*args, **kwargs))

    grid = np.array([[1.5, np.nan], [2.0, 3.0]])
    assert rows(grid, "rows") == [{"x0": 1.5, "x1": None}, {"x0": 2.0, "x1": 3.0}]
    assert rows([(1, "a")], "rows", columns=["n", "c"]) == [{"n": 1, "c": "a"}]
    assert rows(pd.DataFrame(grid), "rows") == rows(grid, "rows")  # columns 0, 1: unnamed
    assert rows(grid, "rows", columns=["x0", "x1"]) == rows(grid, "rows")
    assert type(rows(np.array([[7]]), "rows")[0]["x0"]) is int  # numpy's scalars as Python's
    frame = pd.DataFrame({"a": [1.5, np.nan], "b": ["x", None], "c": pd.array([1, None], dtype="Int64")})
    assert rows(frame, "rows") == [{"a": 1.5, "b": "x", "c": 1}, {"a": None, "b": None, "c": None}]
    assert rows(pd.DataFrame(index=range(2)), "rows") == [{}, {}]  # rows of no cell
    when = pd.DataFrame({"d": pd.to_datetime(["2020-01-01", None])})  # a time, not its nanoseconds
    assert rows(when, "rows") == [{"d": pd.Timestamp("2020-01-01")}, {"d": None}]
    batch = as_batch(grid, "rows")  # kept by column, as the array gave them
    assert (
        batch.columns["x0"].dtype == np.float64
        and batch[-1] == batch[1]
        and batch[:1] == rows(grid[:1], "rows")
    )
    with pytest.raises(ValueError, match="rows of distinct columns; the DataFrame repeats a"):
        as_batch(pd.DataFrame([[1, 2]], columns=["a", "a"]), "rows", "fit")
    refusals = [
        (np.arange(3.0), ValueError, "got a 1-D array. Reshape your data"),
        ([[1, 2], [3]], ValueError, r"all of one width; got rows of \[1, 2\] cells"),
        (scipy.sparse.csr_matrix(grid), TypeError, "sparse input is not supported"),
        (grid.astype(complex), ValueError, "Complex data not supported"),
        (np.zeros((2, 0)), ValueError, r"0 feature\(s\) \(shape=\(2, 0\)\)"),
    ]
    for bad, error, message in refusals:
        with pytest.raises(error, match=message):
            as_batch(bad, "rows", "fit")
    with pytest.raises(ValueError, match=r"X has 2 features, but it is expecting 3 .*: a, b, c\)"):
        as_batch(grid, "rows", columns=["a", "b", "c"])


def test_rows_given_each_its_own_way_are_each_read_as_its_kind_is():
    """A batch of rows some as mappings and some as lists of cells (``nbspark predict``'s lines,
    ``/v1/predict``'s rows): a list is the model's columns in order, as an array's row is, and its
    width is checked; the mappings stay as they are, in place."""
    from nbspark.spine.predictor import as_batch

    mixed = [[1.5, None], {"b": 2}, (3, 4)]
    assert list(as_batch(mixed, "rows", columns=["a", "b"])) == [
        {"a": 1.5, "b": None},
        {"b": 2},
        {"a": 3, "b": 4},
    ]
    assert list(as_batch([{"x1": 0}, [7, 8]], "rows")) == [{"x1": 0}, {"x0": 7, "x1": 8}]
    with pytest.raises(ValueError, match=r"X has 1 features, but it is expecting 2 .*: a, b\)"):
        as_batch([{"a": 1}, [1]], "rows", columns=["a", "b"])
    import pandas as pd

    rows = [{"t": 1.0, "u": 0.5}, {"t": 2.5, "u": 3.0}, {"t": 0.5, "u": 0.0}]
    model = nbspark.NaiveBayes(model="gaussian").fit(pd.DataFrame(rows), ["p", "q", "p"])  # t, u in order
    given = [rows[0], [2.5, 3.0], rows[2]]
    np.testing.assert_array_equal(model.predict_proba(given), model.predict_proba(rows))
    mixed = nbspark.NaiveBayes(model="mixed").fit(pd.DataFrame(rows).astype({"u": str}), ["p", "q", "p"])
    with pytest.raises(TypeError, match=r"columns \(t, u\) are named and have no order"):
        mixed.predict([rows[0], [2.5, "3.0"]])  # a mixed model's columns: numbers, then categories


def test_a_density_scores_an_array_of_its_cells_as_its_rows():
    rows = [{"A": a, "B": b} for a, b in (("1", "0"), ("1", "1"), ("0", "0"), ("1", "0"))]
    model = nbspark.Density(m=1.0).fit(rows)
    cells = [[r["A"], r["B"]] for r in rows]
    assert model.score_samples(np.array(cells, dtype=object)).tolist() == model.score_samples(rows).tolist()
    assert nbspark.Density(m=1.0).fit(np.array(cells)).feature_names_in_.tolist() == ["x0", "x1"]


def test_score_refuses_labels_no_prediction_can_equal():
    """A model trained from a file names its classes as text ("0", "1"): labels given as numbers
    scored 0.0 in silence; now refused, as names against a model of class numbers are. Labels of the
    model's kind score as scikit-learn's ``accuracy_score`` does, weighted too."""
    from sklearn.metrics import accuracy_score

    names = nbspark.NaiveBayes().fit(["a b", "c d", "a a"], ["0", "1", "0"])
    with pytest.raises(ValueError, match="classes are names, the labels numbers.*y.astype\\(str\\)"):
        names.score(["a", "c"], np.array([0, 1]))
    numbers = nbspark.NaiveBayes(model="gaussian").fit(np.array([[0.0], [1.0], [0.1]]), [0, 1, 0])
    with pytest.raises(ValueError, match="classes are numbers, the labels names"):
        numbers.score(np.array([[0.0]]), ["0"])
    X, y, w = np.array([[0.0], [1.0], [1.0]]), [0, 1, 0], [1.0, 2.0, 3.0]  # the last one wrong
    assert numbers.score(X, y) == accuracy_score(y, numbers.predict(X)) == pytest.approx(2 / 3)
    weighted = numbers.score(X, y, sample_weight=w)
    assert weighted == accuracy_score(y, numbers.predict(X), sample_weight=w) == pytest.approx(0.5)
    assert names.score(["a", "c"], ["0", "1"]) == 1.0


def test_add_events_adds_a_batch_in_place_by_the_rule_given():
    """``add_events``: each event's value added to its key's by ``add`` (a new key takes it as it is),
    in place: what ``partial_fit`` and ``update`` count, a call costing its batch."""
    import operator

    pending = {"x": 1}
    for _ in range(3):
        add_events(pending, [("x", 2), ("y", 1), ("x", 1)], operator.add)
    assert pending == {"x": 10, "y": 3}
    add_events(pending, [("z", (1, 2.0))], lambda a, b: tuple(map(sum, zip(a, b))))
    add_events(pending, [("z", (1, 0.5))], lambda a, b: tuple(map(sum, zip(a, b))))
    assert pending["z"] == (2, 2.5)


def test_a_loaded_model_shows_its_kind_classes_version_and_path(tmp_path):
    """A notebook showed ``<nbspark…NBPredictor object at 0x…>``; now what the model is, where it was
    read from, and whether it holds counts a ``save`` has not committed."""
    nbspark.NaiveBayes().fit(["a b", "c d", "a a"], ["spam", "ham", "spam"]).save(tmp_path / "m")
    model = nbspark.load(tmp_path / "m")
    assert repr(model) == f"<NBPredictor multinomial; classes: ham, spam; version 1; from {tmp_path / 'm'}>"
    model.partial_fit(["e"], ["eggs"])
    assert repr(model).endswith(
        "classes: eggs, ham, spam; version 1; from " + f"{tmp_path / 'm'}; counts not saved yet>"
    )
    many = nbspark.NaiveBayes(model="gaussian").fit(np.arange(8.0).reshape(8, 1), list(range(8)))
    assert repr(many.model_).startswith("<NBPredictor gaussian; classes: 0, 1, 2, 3, 4, 5, … (8); version ")
    rows = [{"A": "1", "B": "0"}, {"A": "0", "B": "1"}]
    assert repr(nbspark.Density().fit(rows).model_).startswith("<DensityPredictor density; version ")
