"""``spine.committing``: ``save()`` compacts as a stream does (past ``COMPACT_EVERY`` deltas the
version is summed into one table again, its fields counted exactly, upper bounds before, and the model
reads and scores as before the compaction, for every family that saves)."""

import json

import pytest

import nbspark
from nbspark.backoff.jobs import train
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from tests.density.test_jobs import TRUTH
from tests.naive_bayes.test_partial_fit import TSV, docs, write_tsv


def _manifest(model) -> dict:
    return json.loads((model / "manifest.json").read_text())


def test_naive_bayes_saves_past_the_threshold_compact(tmp_path, monkeypatch):
    """No JVM: three saves of one document each, compacted at two deltas; the model is then the
    one trained on every document (features and label counts exact), and a fourth save is a delta
    on the new base."""
    monkeypatch.setattr("nbspark.spine.committing.COMPACT_EVERY", 2)
    items = docs(6, 3)
    write_tsv(tmp_path / "first.tsv", items[:3])
    write_tsv(tmp_path / "all.tsv", items[:5])
    everything = nbspark.fit(
        None, tmp_path / "all", settings={**TSV, "train.path": str(tmp_path / "all.tsv")}
    )
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "first.tsv")})
    model.partial_fit([items[3][1]], [items[3][0]])
    assert model.save() == 2 and len(_manifest(tmp_path / "m").get("parts", [])) == 0  # one delta, beside
    assert len(nbspark.load(tmp_path / "m").manifest["parts"]) == 2
    model.partial_fit([items[4][1]], [items[4][0]])
    assert model.save() == 3
    folded = _manifest(tmp_path / "m")
    assert folded["version"] == 3 and folded["compacted"]["parts"] == 3 and "parts" not in model.manifest
    assert not (tmp_path / "m" / "versions").exists() or not list((tmp_path / "m" / "versions").iterdir())
    for key in ("label_counts", "features", "count_rows"):
        assert folded[key] == _manifest(tmp_path / "all")[key], key
    probe = ["alpha beta", "theta zeta"]
    got, want = nbspark.load(tmp_path / "m").predict_proba(probe), everything.predict_proba(probe)
    assert got.ravel().tolist() == pytest.approx(want.ravel().tolist(), abs=1e-12)
    model.partial_fit([items[5][1]], [items[5][0]])
    assert model.save() == 4 and len(nbspark.load(tmp_path / "m").manifest["parts"]) == 2


def test_density_saves_past_the_threshold_compact(tmp_path, monkeypatch):
    """No JVM: the distinct rows and values, upper bounds over two parts, exact once compacted."""
    monkeypatch.setattr("nbspark.spine.committing.COMPACT_EVERY", 1)
    lines = TRUTH.splitlines(keepends=True)
    (tmp_path / "a.csv").write_text("".join(lines[:5]))
    settings = {"task": "density", "train.format": "csv", "density.weight_column": "weight"}
    model = nbspark.fit(None, tmp_path / "m", settings={**settings, "train.path": str(tmp_path / "a.csv")})
    model.partial_fit([{"A": "0", "B": "0", "C": "0"}, {"A": "1", "B": "1", "C": "1"}], [0.5, 0.25])
    assert model.save() == 2
    folded = _manifest(tmp_path / "m")
    assert "parts" not in folded and (folded["distinct_rows"], folded["total"]) == (5, pytest.approx(1.25))
    assert folded["values"] == {"A": 2, "B": 2, "C": 2}
    again = nbspark.load(tmp_path / "m")
    assert again.probability({"A": "0", "B": "0", "C": "0"}) == pytest.approx(0.8 / 1.25)


@pytest.mark.spark
def test_backoff_saves_past_the_threshold_compact(spark, fixtures, tmp_path, monkeypatch):
    """A backoff model's updates, compacted at two deltas: its events and prior counted again from
    the summed table (one more window of each kind), and it decides as the model in memory did."""
    monkeypatch.setattr("nbspark.spine.committing.COMPACT_EVERY", 2)
    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    before = _manifest(tmp_path / "m")
    model = nbspark.load(tmp_path / "m")
    model.update(["could not effect the plan"], [3])
    assert model.save() == 2
    model.update(["the cumulative affect of the"])
    assert model.save() == 3
    folded = _manifest(tmp_path / "m")
    assert "parts" not in folded and "bounds" not in folded and folded["compacted"]["parts"] == 3
    assert folded["label_counts"] == {
        "affect": before["label_counts"]["affect"] + 1,
        "effect": before["label_counts"]["effect"] + 3,
    }
    windows = ["could not _ the plan", "the cumulative _ of the", "does not _ the outcome"]
    assert nbspark.load(tmp_path / "m").explain(windows) == model.explain(windows)
    assert sum(folded["distinct_events"].values()) == folded["count_rows"]
