"""Single-label predictions are strings: a test format of one label per record (sms, csv,
Parquet, scikit-learn tables) scored with one label per record writes ``gold`` and ``predicted``
as strings, for pandas; a tsv (a line may hold several labels) or top_k > 1 keeps lists. The
metrics read either the same way, in the driver and in Spark."""

import csv
from collections import Counter

import pandas as pd
import pyarrow.parquet as pq
import pytest

from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import classify_nb, train_nb
from nbspark.settings.config import load_config

pytestmark = pytest.mark.spark

WEATHER = {
    "task": "naive_bayes",
    "nb.model": "mixed",
    "nb.label_column": "play",
    "nb.numeric_columns": "temperature,humidity",
    "nb.categorical_columns": "outlook,windy",
}


def _run(spark, cfg, tmp_path, name):
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / f"{name}.model")
    return classify_nb(spark, cfg, tmp_path / f"{name}.model", resolve_input(cfg.test, None), tmp_path / name)


@pytest.mark.parametrize("piece", [None, "1k"])  # the metrics in the driver (small), then in Spark
def test_a_table_writes_strings_and_the_metrics_count_them(spark, fixtures, tmp_path, piece):
    path = str(fixtures / "weather.csv")
    cfg = load_config(
        None, {**WEATHER, "train.format": "csv", "train.path": path, "test.format": "csv", "test.path": path}
    )
    if piece:
        spark.conf.set("spark.sql.files.maxPartitionBytes", piece)
    try:
        metrics = _run(spark, cfg, tmp_path, "r")
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    schema = pq.read_schema(next((tmp_path / "r" / "predictions").glob("part-*.parquet")))
    assert (str(schema.field("gold").type), str(schema.field("predicted").type)) == ("string", "string")
    frame = pd.read_parquet(tmp_path / "r" / "predictions")
    with open(fixtures / "weather.csv", newline="") as f:  # its one malformed row is skipped
        good = [r for r in csv.DictReader(f) if r["temperature"].isdigit() and r["humidity"].isdigit()]
    assert Counter(frame["gold"]) == Counter(r["play"] for r in good) == {"yes": 9, "no": 5}
    right = int((frame["gold"] == frame["predicted"]).sum())
    assert metrics["documents"] == len(frame) and metrics["accuracy"] == right / len(frame)
    confusion = metrics["confusion"]
    assert sum(n for row in confusion.values() for n in row.values()) == len(frame)
    assert {g: sum(r.values()) for g, r in confusion.items()} == frame["gold"].value_counts().to_dict()
    assert metrics["log_loss"] is not None  # one gold label per row, read back as a list of one


def test_a_tsv_or_several_labels_keep_lists(spark, fixtures, tmp_path):
    china = {
        "task": "naive_bayes",
        "nb.tokenizer": "words",
        "train.format": "tsv",
        "train.path": str(fixtures / "china_train.tsv"),
        "test.format": "tsv",
        "test.path": str(fixtures / "china_test.tsv"),
    }
    _run(spark, load_config(None, china), tmp_path, "tsv")
    path = str(fixtures / "weather.csv")
    table = {**WEATHER, "train.format": "csv", "train.path": path, "test.format": "csv", "test.path": path}
    _run(spark, load_config(None, {**table, "nb.top_k": "2"}), tmp_path, "top2")
    for name in ("tsv", "top2"):
        schema = pq.read_schema(next((tmp_path / name / "predictions").glob("part-*.parquet")))
        assert str(schema.field("predicted").type).startswith("list<")


def test_a_binary_curve_read_in_the_driver_or_collected_by_spark_is_the_same(spark, fixtures, tmp_path):
    """The positive class's posteriors of small predictions are read in the driver, of larger ones
    collected by Spark (``Written.arrow``): the same curve, log-loss and decisions."""
    path = str(fixtures / "weather.csv")
    cfg = load_config(
        None,
        {
            **WEATHER,
            **{"train.format": "csv", "train.path": path, "test.format": "csv", "test.path": path},
            **{"nb.positive_label": "yes", "nb.decision_threshold": "0.7"},
        },
    )
    runs = []
    for piece in (None, "1k"):
        if piece:
            spark.conf.set("spark.sql.files.maxPartitionBytes", piece)
        try:
            metrics = _run(spark, cfg, tmp_path, f"r{piece}")
        finally:
            spark.conf.unset("spark.sql.files.maxPartitionBytes")
        runs.append({k: metrics[k] for k in ("pr_curve", "log_loss", "confusion")})
    assert runs[0] == runs[1] and runs[0]["pr_curve"]["positive_label"] == "yes"
    assert 0 < runs[0]["pr_curve"]["average_precision"] <= 1
