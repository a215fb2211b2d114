"""Fault injection (../shared/SPARK_NOTES.md §1, §6): faults inside tasks, each asserted to have
fired, must leave tables equal to a clean run's, or fail the job fast leaving the old model whole."""

import time

import pytest
from pyspark.testing import assertDataFrameEqual

from nbspark.backoff.events import count_ddl
from nbspark.backoff.jobs import train
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from nbspark.storage.tables import read_parquet_checked
from tests.conftest import spark_submit

pytestmark = [pytest.mark.spark, pytest.mark.faults]


@pytest.fixture(scope="module")
def clean(spark, tmp_path_factory):
    """A clean run on the fixture, in-process, as the reference table."""
    from tests.conftest import FIXTURES

    out = tmp_path_factory.mktemp("clean") / "model"
    cfg = load_config(None, {"train.path": str(FIXTURES / "ngrams.txt"), "partitions": "3"})
    train(spark, cfg, resolve_input(cfg.train, None), out)
    return read_parquet_checked(spark, out / "counts", count_ddl("ABCDE"))


def train_args(fixtures, out):
    return ["--set", f"train.path={fixtures / 'ngrams.txt'}", "--set", "partitions=3", "--out", out]


def test_a_python_worker_that_crashes_once_recovers_exactly(spark, clean, fixtures, tmp_path):
    """Its task is retried (``local[2,2]``: two attempts). An executor killed under a job is
    tests/spark/test_cluster.py's: it takes a cluster, and that test starts one."""
    marker = tmp_path / "marker"
    marker.mkdir()
    proc = spark_submit(
        "train",
        *train_args(fixtures, tmp_path / "m"),
        master="local[2,2]",
        env={"NBSPARK_FAULT": f"crash-once:{marker}"},
    )
    assert (marker / "fired").is_file(), "the fault was not injected, so this test proves nothing"
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = read_parquet_checked(spark, tmp_path / "m" / "counts", count_ddl("ABCDE"))
    assertDataFrameEqual(got, clean, checkRowOrder=False)
    assert (tmp_path / "m" / "counts" / "_SUCCESS").is_file()


def test_permanent_failure_fails_fast_and_keeps_the_old_model(spark, clean, fixtures, tmp_path):
    model = tmp_path / "m"
    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt"), "partitions": "3"})
    train(spark, cfg, resolve_input(cfg.train, None), model)  # the model the failing run would replace
    before = sorted(map(tuple, read_parquet_checked(spark, model / "counts", count_ddl("ABCDE")).collect()))
    started = time.monotonic()
    proc = spark_submit(
        "train",
        *train_args(fixtures, model),
        "--overwrite",
        master="local[2,4]",
        env={"NBSPARK_FAULT": f"always-raise:{tmp_path}"},
    )
    elapsed = time.monotonic() - started
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    errors = [line for line in output.splitlines() if line.startswith("train.py: error:")]
    assert errors == [
        "train.py: error: Spark job failed: RuntimeError: injected failure (NBSPARK_FAULT=always-raise)"
    ]
    assert "failed 4 times; aborting job" in output  # Spark's log: every attempt was made
    assert elapsed < 120
    after = sorted(map(tuple, read_parquet_checked(spark, model / "counts", count_ddl("ABCDE")).collect()))
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no staging directory left
