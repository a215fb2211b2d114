"""``nbspark.Density``, scikit-learn's shape of a density estimator: fitted on rows in memory, it is
the model a train of the same rows as a CSV gives; scikit-learn's model selection chooses its ``m``
by held-out log-likelihood; saved, the other tools read it."""

import contextlib
import io
import json
import math
import random

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

import nbspark
from nbspark.app.command import main
from nbspark.errors import ConfigError
from tests.density.test_jobs import TRUTH, _rows
from tests.density.test_model import COLUMNS, TABLE


def test_the_truth_table_fitted_in_memory_gives_its_numbers_back(tmp_path):
    """The lecture's table, rows weighed by their probabilities: P(A=1 | B=1) = 0.35 / 0.5, and the
    model saved is the one nbspark.fit counts from the CSV, row for row."""
    rows = [dict(zip(COLUMNS, key)) for key in TABLE]
    model = nbspark.Density().fit(rows, sample_weight=list(TABLE.values()))
    assert model.probability({"A": "1"}, {"B": "1"}) == pytest.approx(0.7)
    assert math.exp(model.score_samples([{"A": "1", "B": "1", "C": "0"}])[0]) == pytest.approx(0.25)
    assert model.probability({"A": "1", "B": "0", "C": "1"}, model="naive") == pytest.approx(0.5 * 0.5 * 0.3)
    (tmp_path / "abc.csv").write_text(TRUTH)
    nbspark.fit(
        None,
        tmp_path / "trained",
        settings={
            "task": "density",
            "train.format": "csv",
            "train.path": str(tmp_path / "abc.csv"),
            "density.weight_column": "weight",
        },
    )
    manifest = model.save(tmp_path / "fitted")
    assert manifest["total"] == pytest.approx(1.0) and manifest["columns"] == list(COLUMNS)
    fitted, trained = _rows(tmp_path / "fitted"), _rows(tmp_path / "trained")
    assert [r[:3] for r in fitted] == [r[:3] for r in trained]
    assert np.allclose([r[3] for r in fitted], [r[3] for r in trained], rtol=1e-12)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert (
            main(["predict", "--model", str(tmp_path / "fitted"), "--json", '{"A": "1", "B": "1", "C": "0"}'])
            == 0
        )
    assert json.loads(said.getvalue())["density"] == pytest.approx(0.25)


def test_scikit_learns_grid_search_chooses_m_by_held_out_likelihood():
    """Unsmoothed (m = 0), a held-out row never seen in training has density 0: its fold scores -inf,
    so the search picks a smoothing; each fold's score is the sum of the held-out rows' log
    densities under the model of the other folds, counted here by hand."""
    rng = random.Random(4)
    rows = [{"A": rng.choice("abcd"), "B": rng.choice("vwxyz"), "C": rng.choice("012")} for _ in range(60)]
    folds = KFold(3)
    # scikit-learn's word on the -inf fold, and numpy's on the spread of scores that hold -inf
    with pytest.warns(UserWarning, match="non-finite"), np.errstate(invalid="ignore"):
        search = GridSearchCV(nbspark.Density(), {"m": [0.0, 0.5, 2.0]}, cv=folds).fit(rows)
    scores = search.cv_results_["mean_test_score"]
    assert scores[0] == -math.inf and search.best_params_["m"] in (0.5, 2.0)
    m = search.best_params_["m"]
    by_hand = []
    for train, test in folds.split(rows):
        seen = [rows[i] for i in train]
        total, joint = len(seen), {}
        for r in seen:
            key = (r["A"], r["B"], r["C"])
            joint[key] = joint.get(key, 0) + 1
        cells = math.prod(len({r[c] for r in seen}) for c in "ABC")  # the joint's domain: values seen
        by_hand.append(
            sum(
                math.log((joint.get((r["A"], r["B"], r["C"]), 0) + m / cells) / (total + m))
                for r in (rows[i] for i in test)
            )
        )
    np.testing.assert_allclose(cross_val_score(nbspark.Density(m=m), rows, cv=folds), by_hand, rtol=1e-12)
    assert clone(nbspark.Density(m=m)).get_params() == {"model": "joint", "m": m, "columns": (), "bins": ()}


@pytest.mark.parametrize(
    ("estimator", "rows", "error", "says"),
    [
        (lambda: nbspark.Density(m=-1), [{"A": "1"}], ConfigError, "density.m"),
        (lambda: nbspark.Density(), [{"A": 1}], ValueError, "a cell is text"),
        (lambda: nbspark.Density(columns=["A", "A"]), [{"A": "1"}], ConfigError, "distinct columns"),
        (lambda: nbspark.Density(), [{}], ValueError, "at least one column"),
        (lambda: nbspark.Density(), [], ValueError, "^fit takes at least one row"),  # said "one column"
    ],
)
def test_what_it_cannot_fit_is_refused_in_one_line(estimator, rows, error, says):
    with pytest.raises(error, match=says):
        estimator().fit(rows)
    with pytest.raises(AttributeError, match="not fitted yet"):
        estimator().score_samples([{"A": "1"}])
