"""Scoring a test table's rows under a density model (``nbspark classify`` of a density task): each
row's log-density under the joint and the naive estimator as columns, equal to ``nbspark.load``'s,
and the held-out log-likelihood in the metrics, with the rows of probability 0 said plainly."""

import json
import math

import pandas as pd
import pytest

import nbspark
from nbspark.app.command import main
from nbspark.density.jobs import classify_density, train_density_in_process
from nbspark.errors import ConfigError
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from tests.conftest import FIXTURES, classify_results

pytestmark = pytest.mark.spark

COLUMNS = ["outlook", "windy", "play"]


def _tables(tmp_path):
    """The weather table's categorical columns: its first 10 rows to train on, the other 5 to score
    (a cloudy day among them, a value the first 10 never held: probability 0 even to the naive model)."""
    rows = pd.read_csv(FIXTURES / "weather.csv", dtype=str)[COLUMNS].dropna()
    train, test = rows.iloc[:10], rows.iloc[10:]
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    return train, test


def _cfg(tmp_path, **more):
    return load_config(
        None,
        {
            "task": "density",
            "train.format": "csv",
            "train.path": str(tmp_path / "train.csv"),
            "test.format": "csv",
            "test.path": str(tmp_path / "test.csv"),
            **more,
        },
    )


@pytest.mark.parametrize("m", [0.0, 1.0])
def test_each_rows_log_density_is_nbspark_loads_and_the_mean_is_the_held_out_likelihood(spark, tmp_path, m):
    train, test = _tables(tmp_path)
    cfg = _cfg(tmp_path, **{"density.m": str(m)})
    train_density_in_process(cfg, tmp_path / "m")
    metrics = classify_density(spark, cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / "r")
    scored = pd.read_parquet(tmp_path / "r" / "predictions")
    loaded = nbspark.load(tmp_path / "m")
    records = test.to_dict("records")
    assert scored[COLUMNS].to_dict("records") == records
    for estimator in ("joint", "naive"):
        want = loaded.log_density(records, model=estimator)
        assert scored[f"log_density_{estimator}"].tolist() == pytest.approx(want, abs=1e-12)
        # by hand: the plain Python count of the training rows
        n, k = len(train), {c: train[c].nunique() for c in COLUMNS}
        if estimator == "joint":
            seen = train.value_counts().to_dict()
            q = math.prod(1 / k[c] for c in COLUMNS)
            p = [(seen.get(tuple(r[c] for c in COLUMNS), 0) + m * q) / (n + m) for r in records]
        else:
            p = [math.prod((train[c].eq(r[c]).sum() + m / k[c]) / (n + m) for c in COLUMNS) for r in records]
        logs = [math.log(x) if x > 0 else -math.inf for x in p]
        assert want == pytest.approx(logs, abs=1e-12)
        got = metrics[estimator]
        zero = sum(x == -math.inf for x in logs)
        assert got["zero_probability_rows"] == zero
        if zero:
            assert got["held_out_log_likelihood"] == "-inf"
        else:
            assert got["held_out_log_likelihood"] == pytest.approx(sum(logs) / len(logs), abs=1e-12)
    assert metrics["rows"] == len(test) == 5
    saved = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert saved["joint"] == metrics["joint"]
    report = (tmp_path / "r" / "report.txt").read_text()
    if m == 0:  # the joint never saw a test row: said plainly, not hidden
        assert metrics["joint"]["zero_probability_rows"] >= 1
        assert "have probability 0 under the joint model (a row never seen in training, with m = 0)" in report
        assert "smooth with density.m > 0" in report
    else:
        assert "probability 0" not in report


def test_the_tables_other_columns_ride_along_so_a_ranked_row_can_be_found(spark, tmp_path, caplog):
    """The predictions held only the modelled columns: ranking rows by density, an analyst could not
    tell which row of theirs was the odd one. Every other column of the test table (an id, typed as
    the table holds it) now rides along in the table's order; the weight column is ``weight``, and a
    column named as one of the predictions' own is ``table_NAME``; left out, with a warning, only
    where that name is taken too. The same in process as in Spark."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    train, test = _tables(tmp_path)
    train_density_in_process(_cfg(tmp_path, **{"density.m": "1"}), tmp_path / "m")
    pq.write_table(
        pa.table(
            {
                "id": pa.array(range(100, 100 + len(test)), pa.int64()),
                **{c: test[c].tolist() for c in COLUMNS},
                "tags": [["a"], [], None, ["b", "c"], ["d"]],
                "w": [2.0, 1.0, 1.0, 1.0, 3.0],
                "probability": [0.5] * len(test),
                "weight": [9.0] * len(test),
                "table_weight": ["taken"] * len(test),
            }
        ),
        tmp_path / "test.parquet",
    )
    test_cfg = load_config(
        None,
        {
            "task": "density",
            "density.m": "1",
            "density.weight_column": "w",
            "test.format": "parquet",
            "test.path": str(tmp_path / "test.parquet"),
        },
    )
    _in_spark_and_here(spark, tmp_path, test_cfg)  # in process as in Spark
    scored = pq.read_table(tmp_path / "here" / "predictions")
    assert scored.column_names == [
        "id",
        *COLUMNS,
        "tags",
        "table_probability",
        "table_weight",
        "weight",
        "log_density_joint",
        "log_density_naive",
    ]
    assert scored.schema.field("id").type == pa.int64() and scored.schema.field("tags").type == pa.list_(
        pa.string()
    )
    rows = scored.to_pylist()
    assert [r["id"] for r in rows] == [100, 101, 102, 103, 104]
    assert [r["tags"] for r in rows] == [["a"], [], None, ["b", "c"], ["d"]]
    assert [r["weight"] for r in rows] == [2.0, 1.0, 1.0, 1.0, 3.0]
    want = nbspark.load(tmp_path / "m").log_density(test.to_dict("records"), model="joint")
    assert [r["log_density_joint"] for r in rows] == pytest.approx(want, abs=1e-12)
    assert [r["table_probability"] for r in rows] == [0.5] * 5
    assert (
        "column(s) weight left out of the predictions, which name their own so (and table_weight is taken)"
        in caplog.text
    )


def test_the_command_scores_a_density_model(spark, tmp_path, capsys):
    _tables(tmp_path)
    settings = [
        "--set", "task=density", "--set", "train.format=csv", "--set", f"train.path={tmp_path / 'train.csv'}",
        "--set", "test.format=csv", "--set", f"test.path={tmp_path / 'test.csv'}",
    ]  # fmt: skip
    assert main(["train", "--in-process", *settings, "--out", str(tmp_path / "m")]) == 0
    capsys.readouterr()
    code = main(
        [
            "classify",
            *settings,
            "--set",
            "density.m=1",
            "--model",
            str(tmp_path / "m"),
            "--out",
            str(tmp_path / "r"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "held-out log-likelihood per row" in out and "m = 1" in out
    assert json.loads((tmp_path / "r" / "metrics.json").read_text())["m"] == 1.0


@pytest.mark.parametrize("classifier", ["joint", "naive"])
def test_the_job_classifies_a_target_column_as_the_python_classifier(spark, tmp_path, classifier):
    _, test = _tables(tmp_path)
    cfg = _cfg(tmp_path, **{"density.target": "play", "density.classifier": classifier})
    train_density_in_process(cfg, tmp_path / "m")
    metrics = classify_density(spark, cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / "r")
    scored = pd.read_parquet(tmp_path / "r" / "predictions")
    records = test.to_dict("records")
    python = nbspark.load(tmp_path / "m").classifier("play", classifier)
    explained = python.explain(records)
    assert scored["predicted"].tolist() == [e["label"] for e in explained]
    assert scored["probability"].tolist() == pytest.approx([e["probability"] for e in explained], abs=1e-12)
    right = sum(e["label"] == r["play"] for e, r in zip(explained, records))
    assert (metrics["classified"], metrics["correct"]) == (5, right)
    assert metrics["accuracy"] == python.score(records, [r["play"] for r in records])
    report = (tmp_path / "r" / "report.txt").read_text()
    assert f"classifying play by the {classifier} density: accuracy" in report
    with pytest.raises(ConfigError, match="density.target 'weather' is not a column of the model"):
        bad = _cfg(tmp_path, **{"density.target": "weather"})
        classify_density(spark, bad, tmp_path / "m", resolve_input(bad.test, None), tmp_path / "r2")


def _in_spark_and_here(spark, tmp_path, cfg) -> tuple:
    """The classify run of ``cfg`` with the model in ``tmp_path / "m"``, planned for Spark and in
    process, run: what each wrote (``classify_results``), asserted equal; the one in process."""
    from nbspark.density.jobs import plan_density_classify, run_density_classify

    results = []
    for where, session in (("spark", spark), ("here", None)):
        test = resolve_input(cfg.test, None)
        plan = plan_density_classify(cfg, tmp_path / "m", test, tmp_path / where, where=where)
        assert plan.in_process == (session is None)
        run_density_classify(session, plan)
        results.append(classify_results(tmp_path / where))
    assert results[1] == results[0]
    return results[1]


def test_an_ngram_file_scored_in_process_is_the_spark_jobs(spark, tmp_path):
    """tests/data/ngrams.txt as a density's test table: 8 n-grams weighted by their counts (43), 3
    lines that do not parse skipped as rows without a weight; in process as in Spark."""
    cfg = load_config(
        None,
        {
            "task": "density",
            **{f"{p}.format": "ngrams" for p in ("train", "test")},
            **{f"{p}.path": str(FIXTURES / "ngrams.txt") for p in ("train", "test")},
        },
    )
    train_density_in_process(cfg, tmp_path / "m")
    metrics, _, _, schema, _ = _in_spark_and_here(spark, tmp_path, cfg)
    assert schema.names[:5] == list("ABCDE") and (metrics["rows"], metrics["weight"]) == (8, 43.0)
    assert metrics["input_stats"] == {"malformed": 3, "malformed.weight": 3}


def _odd_test_table(path) -> None:
    """The weather rows to score as people leave them: an id and a column named with a dot that ride
    along, a weight column with a weight that is text, one below 0 and one empty, a humidity (binned)
    that is no number and one that is empty, a value the model never saw."""
    path.write_text(
        "id,outlook,odd.name,humidity,windy,play,w\n"
        "r1,sunny,x,85,FALSE,no,2\n"
        "r2,overcast,y,86,FALSE,yes,1.5\n"
        "r3,rainy,z,high,TRUE,no,1\n"
        "r4,cloudy,x,70,TRUE,yes,1\n"
        "r5,sunny,y,,FALSE,yes,1\n"
        "r6,rainy,z,80,FALSE,yes,heavy\n"
        "r7,rainy,z,80,FALSE,yes,-1\n"
        "r8,overcast,x,65,TRUE,yes,\n"
        "r9,sunny,y, 7e1 ,TRUE,yes,3\n"
    )


@pytest.mark.parametrize("target", ["", "play"])
def test_a_density_model_scored_in_process_is_the_spark_jobs(spark, tmp_path, target):
    """``nbspark classify`` of a density model in process (``spark`` None) writes what the Spark job
    writes: the same predictions (the columns that ride along, typed as Spark types them), rows skipped
    for their weight or a bin, held-out log-likelihoods, accuracy of a target, report."""
    rows = pd.read_csv(FIXTURES / "weather.csv", dtype=str).iloc[:14]
    rows.to_csv(tmp_path / "train.csv", index=False)
    _odd_test_table(tmp_path / "test.csv")
    settings = {
        "density.columns": "outlook,humidity,windy,play",
        "density.bins": "humidity=75|90",
        "density.weight_column": "w",
        "density.m": "1",
        **({"density.target": target} if target else {}),
    }
    train_density_in_process(
        _cfg(tmp_path, **{k: v for k, v in settings.items() if k != "density.weight_column"}), tmp_path / "m"
    )
    cfg = _cfg(tmp_path, **settings)
    metrics, _, _, schema, scored = _in_spark_and_here(spark, tmp_path, cfg)
    assert schema.names[:3] == ["id", "outlook", "odd.name"] and schema.field("humidity").type == "string"
    assert (metrics["rows"], metrics["weight"]) == (5, 2 + 1.5 + 1 + 1 + 3)  # r1, r2, r4, r5, r9
    assert metrics["input_stats"] == {"malformed": 4, "malformed.weight": 3, "malformed.bin": 1}
    assert sorted(json.loads(r)["id"] for r in scored) == ["r1", "r2", "r4", "r5", "r9"]
    assert (metrics.get("classified"), "predicted" in schema.names) == (
        (5, True) if target else (None, False)
    )
