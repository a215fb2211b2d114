"""``spine.training.write_counts``: a count table Spark counted is written by the driver when it is
one file's rows, and it is the table Spark's writer writes, row for row, with the same manifest."""

import pyarrow.parquet as pq
import pytest

from nbspark.backoff.jobs import train
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import train_nb
from nbspark.settings.config import load_config

pytestmark = pytest.mark.spark

#: what Spark's Parquet writer leaves in a file's metadata, and pyarrow's does not
SPARK_WRITER = b"org.apache.spark.version"


def _written(out):
    parts = sorted((out / "counts").glob("part-*.parquet"))
    rows = sorted(r for p in parts for r in pq.read_table(p).to_pylist() for r in [tuple(r.values())])
    by_spark = {SPARK_WRITER in (pq.read_metadata(p).metadata or {}) for p in parts}
    return rows, by_spark


def _fields(manifest):
    return {k: v for k, v in manifest.items() if k not in ("created", "seconds", "config", "updates")}


@pytest.mark.parametrize("family", ["backoff", "naive_bayes"])
def test_one_files_rows_are_written_by_the_driver_as_spark_writes_them(spark, fixtures, tmp_path, family):
    settings = (
        {"train.path": str(fixtures / "ngrams.txt")}
        if family == "backoff"
        else {"task": "naive_bayes", "train.format": "tsv", "train.path": str(fixtures / "china_train.tsv")}
    )
    trainer = train if family == "backoff" else train_nb

    def run(out, **extra):
        cfg = load_config(None, {**settings, **extra})
        return trainer(spark, cfg, resolve_input(cfg.train, None), tmp_path / out)

    driver = run("driver")
    rows, by_spark = _written(tmp_path / "driver")
    spark_written = run("spark", rows_per_file=str(driver["count_rows"] - 1))  # two files' rows: Spark's
    theirs, theirs_by_spark = _written(tmp_path / "spark")
    assert by_spark == {False} and theirs_by_spark == {True}
    assert rows == theirs and len(rows) == driver["count_rows"] > 1
    assert _fields(driver) == _fields(spark_written)


def test_a_table_past_what_a_collect_may_bring_back_is_written_by_spark(
    spark, fixtures, tmp_path, monkeypatch
):
    """A session whose ``spark.driver.maxResultSize`` is below the table's rows at
    ``DRIVER_ROW_BYTES`` each leaves the write to Spark (the collect would fail the run: the Books
    model at 1m did), the same table; at one row more the driver writes it, and with no limit (0)."""
    import nbspark.spine.training as training
    from nbspark.settings.capabilities import DRIVER_ROW_BYTES

    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})

    def written_by_spark(out, limit):
        monkeypatch.setattr(training, "max_result_bytes", lambda _spark: limit)
        train(spark, cfg, resolve_input(cfg.train, None), tmp_path / out)
        rows, by_spark = _written(tmp_path / out)
        return rows, by_spark == {True}

    rows, by_spark = written_by_spark("none", 0)
    assert not by_spark
    assert written_by_spark("low", (len(rows) - 1) * DRIVER_ROW_BYTES) == (rows, True)
    assert written_by_spark("fits", len(rows) * DRIVER_ROW_BYTES) == (rows, False)
