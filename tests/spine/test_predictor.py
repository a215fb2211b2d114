"""What the in-process models of both families share: a 2-D array is rows (``as_batch``); their
``save()`` and its compaction: tests/spine/test_committing.py."""

import numpy as np
import pytest

import nbspark


def test_a_2d_array_is_rows_by_position_and_a_bad_one_is_refused():
    """``as_batch``'s rule of scikit-learn's ``X``: a 2-D array (numpy's, a list of lists, a frame
    of unnamed columns) is rows, its columns the model's in order (``x0``, ``x1``, … for none), a
    NaN cell missing; a 1-D, ragged, sparse or complex one, or one of another width, is refused in
    one line, in scikit-learn's words."""
    import pandas as pd
    import scipy.sparse

    from nbspark.spine.predictor import as_batch

    grid = np.array([[1.5, np.nan], [2.0, 3.0]])
    assert as_batch(grid, "rows") == [{"x0": 1.5, "x1": None}, {"x0": 2.0, "x1": 3.0}]
    assert as_batch([(1, "a")], "rows", columns=["n", "c"]) == [{"n": 1, "c": "a"}]
    assert as_batch(pd.DataFrame(grid), "rows") == as_batch(grid, "rows")  # columns 0, 1: unnamed
    assert as_batch(grid, "rows", columns=["x0", "x1"]) == as_batch(grid, "rows")
    assert type(as_batch(np.array([[7]]), "rows")[0]["x0"]) is int  # numpy's scalars as Python's
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


def test_a_density_scores_an_array_of_its_cells_as_its_rows():
    rows = [{"A": a, "B": b} for a, b in (("1", "0"), ("1", "1"), ("0", "0"), ("1", "0"))]
    model = nbspark.Density(m=1.0).fit(rows)
    cells = [[r["A"], r["B"]] for r in rows]
    assert model.score_samples(np.array(cells, dtype=object)).tolist() == model.score_samples(rows).tolist()
    assert nbspark.Density(m=1.0).fit(np.array(cells)).feature_names_in_.tolist() == ["x0", "x1"]
