"""The affect/effect experiment on the real corpora (skipped when the data dir is absent).

Independent figures: ../shared/data/README.md (49,413 lines, 5,090 that do not split into five
tokens; 724 Reuters windows, 529 effect and 195 affect, 504 TRAIN / 194 TEST) and the course
slide's worked examples (probabilities 1.0 and 0.9625, decided at ABDE, ABDE, BD and B).
"""

import pytest

from nbspark.backoff.jobs import classify, train
from nbspark.backoff.query import query
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import DEFAULT, load_config
from tests.conftest import ROOT

pytestmark = [pytest.mark.spark, pytest.mark.realdata]


@pytest.fixture(scope="module")
def books(spark, data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("books") / "model"
    manifest = train(spark, DEFAULT, resolve_input(DEFAULT.train, str(data_dir)), out)
    return manifest, out


def test_books_training_lines(books):
    manifest, _ = books
    stats = manifest["stats"]
    assert stats["lines_read"] == 49_413
    assert stats["malformed"] == 5_090 and stats["malformed.tokens"] == 5_090
    assert stats["examples"] == 49_413 - 5_090
    assert manifest["malformed_examples"][0]["line"] == '"and in effect \t1176'


def test_books_to_reuters_reproduces_the_slide(spark, books, data_dir, tmp_path):
    _, model = books
    metrics = classify(spark, DEFAULT, model, resolve_input(DEFAULT.test, str(data_dir)), tmp_path / "r")
    assert metrics["examples"] == 724 and metrics["gold_labels"] == {"affect": 195, "effect": 529}
    assert abs(metrics["distinct_examples"] - 661) / 661 < 0.02  # slide: 723 windows, 661 distinct
    worked = {
        w["pattern"]: (w["predicted"], round(w["probability"], 4), w["subset"])
        for w in metrics["worked_examples"]
    }
    assert worked == {
        "the cumulative _ of the": ("effect", 1.0, "ABDE"),
        "go into _ on january": ("effect", 1.0, "ABDE"),
        "from cumulative _ of accounting": ("effect", 1.0, "BD"),
        "would not _ finance minister": ("affect", 0.9625, "B"),
    }
    assert metrics["worked_examples"][2]["unseen_at"] == ["ABDE", "ABD"]
    assert metrics["majority_baseline"] == pytest.approx(529 / 724)
    assert metrics["accuracy"] > metrics["majority_baseline"] + 0.15
    assert sum(lv["examples"] for lv in metrics["levels"]) == 724


def test_queries_on_the_books_model(spark, books):
    _, model = books
    r = query(spark, {"B": "no", "C": "_"}, model_dir=model)
    assert {t["values"]["C"] for t in r["top"]} <= {"affect", "effect"} and r["matching_count"] > 0
    r = query(spark, {"B": "not", "C": "_"}, model_dir=model)
    assert r["top"][0]["values"] == {"C": "affect"} and round(r["top"][0]["probability"], 4) == 0.9625
    # in process (nbspark query --model), the same answers
    from nbspark.backoff.query import query_model

    for bindings in ({"B": "not", "C": "_"}, {"B": "_", "C": "affect"}, {"A": "_", "C": "effect", "E": "_"}):
        assert query_model(model, bindings) == query(spark, bindings, model_dir=model)


def test_reuters_train_split_to_test_split(spark, data_dir, tmp_path):
    cfg = load_config(ROOT / "conf/experiments/affect_effect_reuters.toml")
    manifest = train(spark, cfg, resolve_input(cfg.train, str(data_dir)), tmp_path / "m")
    assert manifest["stats"]["examples"] == 504  # windows in LEWISSPLIT=TRAIN stories
    assert manifest["stats"]["stories_used"] == 14_668
    metrics = classify(spark, cfg, tmp_path / "m", resolve_input(cfg.test, str(data_dir)), tmp_path / "r")
    assert metrics["examples"] == 194
    assert metrics["accuracy"] >= metrics["majority_baseline"]


def test_compare_backoff_script_agrees_with_the_pipeline(spark, data_dir):
    """The comparison re-implements Cohen's walk on raw counts; on the Reuters TEST windows it must
    give the pipeline's accuracy (Books -> Reuters TEST: 181 of 194)."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import compare_backoff

    result = compare_backoff.compare(spark, None, str(data_dir))
    assert set(result["results"]) >= {"cohen_chain", "naive_bayes_positions", "all_subsets_by_dev_accuracy"}
    assert round(result["results"]["cohen_chain"]["test"] * 194) == 181


def test_loaded_books_model_predicts_as_the_classify_job(spark, books, data_dir, tmp_path):
    """``nbspark.load`` (pyarrow, no Spark) gives the classify job's predictions row for row, and
    the slide's worked example from the command line with no JVM."""
    import json
    import subprocess
    import sys

    import nbspark

    _, model_dir = books
    classify(spark, DEFAULT, model_dir, resolve_input(DEFAULT.test, str(data_dir)), tmp_path / "r")
    rows = spark.read.parquet(str(tmp_path / "r" / "predictions")).collect()
    model = nbspark.load(model_dir)
    got = model.explain([(r["a"], r["b"], r["c"], r["d"], r["e"]) for r in rows])
    assert [(p["label"], p["probability"], p["level"]) for p in got] == [
        (r["predicted"], r["probability"], r["subset"]) for r in rows
    ]
    nbspark_cmd = [
        sys.executable,
        "-m",
        "nbspark",
        "predict",
        "--model",
        str(model_dir),
        "--json",
        "would not _ finance minister",
    ]
    out = subprocess.run(nbspark_cmd, capture_output=True, text=True, check=True)
    answer = json.loads(out.stdout)
    assert (answer["label"], round(answer["probability"], 4), answer["level"]) == ("affect", 0.9625, "B")
