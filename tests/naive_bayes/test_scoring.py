"""A test table's columns that a naive Bayes model does not read (an id kept out of the features, a
note) ride along into its predictions, after ``id``, typed as the table reads them, each on its own
row however Spark splits the file; the predictions themselves are those of the same table without
them. A column named as one of the predictions' own is left out, with a warning."""

import csv

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import classify_nb, train_nb
from nbspark.naive_bayes.scoring import PREDICTION_COLUMNS
from nbspark.settings.config import load_config
from tests.naive_bayes.test_jobs_one_label import WEATHER

pytestmark = pytest.mark.spark


def _weather(fixtures):
    with open(fixtures / "weather.csv", newline="") as f:
        return list(csv.DictReader(f))


def _classify(spark, fixtures, tmp_path, name, fmt, path):
    cfg = load_config(
        None,
        {
            **WEATHER,
            "train.format": "csv",
            "train.path": str(fixtures / "weather.csv"),
            "test.format": fmt,
            "test.path": str(path),
        },
    )
    if not (tmp_path / "model").exists():
        train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "model")
    classify_nb(spark, cfg, tmp_path / "model", resolve_input(cfg.test, None), tmp_path / name)
    frame = pd.read_parquet(tmp_path / name / "predictions")
    frame["id"] = frame["id"].astype(int)
    return frame.sort_values("id").reset_index(drop=True)


@pytest.mark.parametrize("piece", [None, "200"])  # one partition, then pieces of 200 bytes
def test_a_csv_tables_other_columns_ride_along(spark, fixtures, tmp_path, caplog, piece):
    rows = _weather(fixtures)
    with open(tmp_path / "days.csv", "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["day", "id", *rows[0], "probability", "note.x"])
        for i, r in enumerate(rows):
            out.writerow([f"D{i + 1:02d}", f"row-{i}", *r.values(), "0.5", f"n{i}" if i % 3 else ""])
    if piece:
        spark.conf.set("spark.sql.files.maxPartitionBytes", piece)
    try:
        plain = _classify(spark, fixtures, tmp_path, "plain", "csv", fixtures / "weather.csv")
        days = _classify(spark, fixtures, tmp_path, "days", "csv", tmp_path / "days.csv")
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert list(plain.columns) == list(PREDICTION_COLUMNS)
    # the table's own id and probability beside the prediction's, renamed (they were left out)
    assert list(days.columns) == [
        "id",
        "day",
        "table_id",
        "table_probability",
        "note.x",
        *PREDICTION_COLUMNS[1:],
    ]
    assert len(days) == 14  # the fixture's one malformed row (temperature "warm") is skipped
    # each row's own cells, as the file writes them (an empty cell is read as null, as Spark reads it)
    assert days["day"].tolist() == [f"D{i + 1:02d}" for i in days["id"]]
    assert days["note.x"].tolist() == [f"n{i}" if i % 3 else None for i in days["id"]]
    assert days["table_id"].tolist() == [f"row-{i}" for i in days["id"]]
    assert days["table_probability"].tolist() == ["0.5"] * 14
    pd.testing.assert_frame_equal(days[list(PREDICTION_COLUMNS)], plain)


def test_a_parquet_tables_other_columns_keep_their_types(spark, fixtures, tmp_path):
    good = [r for r in _weather(fixtures) if r["temperature"].isdigit()]
    table = {
        "outlook": [r["outlook"] for r in good],
        "temperature": [int(r["temperature"]) for r in good],
        "humidity": [float(r["humidity"]) for r in good],
        "windy": [r["windy"] for r in good],
        "play": [r["play"] for r in good],
        "day": pa.array(range(100, 100 + len(good)), pa.int64()),
        "tags": pa.array(
            [[r["outlook"]] if i % 2 else [] for i, r in enumerate(good)], pa.list_(pa.string())
        ),
    }
    (tmp_path / "pq").mkdir()
    pq.write_table(pa.table({k: v[:6] for k, v in table.items()}), tmp_path / "pq" / "a.parquet")
    pq.write_table(pa.table({k: v[6:] for k, v in table.items()}), tmp_path / "pq" / "b.parquet")
    scored = _classify(spark, fixtures, tmp_path, "r", "parquet", tmp_path / "pq")
    schema = pq.read_schema(next((tmp_path / "r" / "predictions").glob("part-*.parquet")))
    assert schema.names == ["id", "day", "tags", *PREDICTION_COLUMNS[1:]]
    assert schema.field("day").type == pa.int64() and schema.field("tags").type == pa.list_(pa.string())
    assert scored["day"].tolist() == [100 + i for i in scored["id"]]
    assert [list(t) for t in scored["tags"]] == [[good[i]["outlook"]] if i % 2 else [] for i in scored["id"]]
    assert scored["gold"].tolist() == [good[i]["play"] for i in scored["id"]]
