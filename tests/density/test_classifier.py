"""Classifying by density (``density.classifier``): the naive classifier is the naive Bayes
family's categorical model on the same table (equal posteriors); the joint with backoff over
columns equals a plain-Python reference; the binary rule; refusals."""

import itertools
from collections import Counter

import numpy as np
import pytest

import nbspark
from nbspark.density.jobs import train_density_in_process
from nbspark.settings.config import load_config

ROWS = [  # the nominal weather table's outlook, windy, humidity and play (Witten & Frank), less
    # three overcast days, so that some rows are backed off from: (overcast, FALSE, *) to (overcast),
    # (overcast, TRUE, normal) to (overcast, TRUE)
    ("sunny", "FALSE", "high", "no"),
    ("sunny", "TRUE", "high", "no"),
    ("rainy", "FALSE", "high", "yes"),
    ("rainy", "FALSE", "normal", "yes"),
    ("rainy", "TRUE", "normal", "no"),
    ("sunny", "FALSE", "high", "no"),
    ("sunny", "FALSE", "normal", "yes"),
    ("rainy", "FALSE", "normal", "yes"),
    ("sunny", "TRUE", "normal", "yes"),
    ("overcast", "TRUE", "high", "yes"),
    ("rainy", "TRUE", "high", "no"),
]
COLUMNS = ("outlook", "windy", "humidity", "play")


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "weather.csv"
    path.write_text(",".join(COLUMNS) + "\n" + "".join(",".join(r) + "\n" for r in ROWS))
    return path


def _density(table, tmp_path):
    cfg = load_config(None, {"task": "density", "train.format": "csv", "train.path": str(table)})
    train_density_in_process(cfg, tmp_path / "density")
    return nbspark.load(tmp_path / "density")


def _every_row():
    values = [sorted({r[i] for r in ROWS}) + ["misty"] * (i == 0) for i in range(3)]
    return [dict(zip(COLUMNS[:3], v)) for v in itertools.product(*values)]


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_the_naive_classifier_is_categorical_naive_bayes(table, tmp_path, alpha):
    nb = nbspark.fit(
        settings={
            "task": "naive_bayes",
            "nb.model": "categorical",
            "nb.alpha": str(alpha),
            "nb.label_column": "play",
            "nb.categorical_columns": "outlook,windy,humidity",
            "train.format": "csv",
            "train.path": str(table),
        },
        out=tmp_path / "nb",
    )
    naive = _density(table, tmp_path).classifier("play", model="naive", alpha=alpha)
    rows = _every_row()  # 'misty' never seen: left out by both, as naive Bayes leaves out an unseen value
    assert naive.classes_ == nb.classes_ == ("no", "yes")
    np.testing.assert_allclose(naive.predict_proba(rows), nb.predict_proba(rows), rtol=0, atol=1e-12)
    assert naive.predict(rows).tolist() == nb.predict(rows).tolist()


def _reference(row: dict) -> tuple[str | None, dict, list]:
    """Plain Python: the first prefix of (outlook, windy, humidity) seen in training decides."""
    x = [row[c] for c in COLUMNS[:3]]
    for k in range(3, -1, -1):
        seen = Counter(r[3] for r in ROWS if list(r[:k]) == x[:k])
        if seen:
            total = sum(seen.values())
            p = {c: seen[c] / total for c in ("no", "yes")}
            best = max(p.values())
            return next(c for c in ("no", "yes") if p[c] == best), p, list(COLUMNS[:k])
    return None, {}, []


def test_the_joint_classifier_backs_off_over_columns_as_a_plain_python_reference(table, tmp_path):
    joint = _density(table, tmp_path).classifier("play")
    rows = _every_row()
    explained = joint.explain(rows)
    levels = Counter(len(e["level"]) for e in explained)
    assert levels[3] and levels[2] and levels[1]  # every kind of backoff happens on this grid
    for row, e in zip(rows, explained):
        label, p, level = _reference(row)
        assert (e["label"], e["level"]) == (label, level)
        assert e["probabilities"] == pytest.approx(p, abs=1e-12)
    assert joint.predict([dict(zip(COLUMNS, r)) for r in ROWS]).tolist()[:3] == ["no", "no", "yes"]
    assert levels[0] == 4  # 'misty': no column seen, the prior decides
    accuracy = joint.score([dict(zip(COLUMNS, r)) for r in ROWS], [r[3] for r in ROWS])
    assert accuracy == sum(_reference(dict(zip(COLUMNS, r)))[0] == r[3] for r in ROWS) / len(ROWS)


def test_the_binary_rule_and_refusals(table, tmp_path):
    model = _density(table, tmp_path)
    row = {"outlook": "sunny", "windy": "TRUE", "humidity": "normal"}  # seen once: yes (1 of 1)
    assert model.classifier("play").predict([row]).tolist() == ["yes"]
    strict = model.classifier("play", model="naive", positive="yes", threshold=0.99)
    p_yes = model.classifier("play", model="naive").predict_proba([row])[0, 1]
    assert p_yes < 0.99 and strict.predict([row]).tolist() == ["no"]
    with pytest.raises(ValueError, match="no class column 'label'"):
        model.classifier("label")
    with pytest.raises(ValueError, match="the binary rule needs two classes, 'rain' one of them"):
        model.classifier("play", positive="rain")
    with pytest.raises(ValueError, match="score takes one label per row: 1 rows, 2 labels"):
        model.classifier("play").score([row], ["yes", "no"])  # never the first pair scored alone
    with pytest.raises(ValueError, match="row 0 lacks column\\(s\\) humidity"):
        model.classifier("play").predict([{"outlook": "sunny", "windy": "TRUE"}])
    with pytest.raises(TypeError, match="expected a list of rows, got one dict"):
        model.classifier("play").predict(row)  # not its keys, each a row
    # a row may hold its target (as a table's rows do); any other column is refused, an id left out
    # when named (it was dropped in silence, a misspelt column too)
    labelled = {**row, "play": "no"}
    assert model.classifier("play").predict([labelled]).tolist() == ["yes"]
    with pytest.raises(ValueError, match="column\\(s\\) the model does not know: 'id'; its columns: "):
        model.classifier("play").predict([{**row, "id": "7"}])
    assert model.classifier("play").predict([{**row, "id": "7"}], extra_columns=["id"]).tolist() == ["yes"]
