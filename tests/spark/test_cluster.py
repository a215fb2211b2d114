"""A real standalone cluster (master + worker JVMs on 127.0.0.1, REST off) from scripts/cluster.sh:
train and classify submitted with nbspark shipped as --py-files give local mode's outputs, the
train's executor killed under it (nbspark.spark.faults, ../shared/SPARK_NOTES.md §1, §6): the worker
starts another, the lost tasks and shuffle output are made again, and the table is a clean run's."""

import subprocess

import pytest
from pyspark.testing import assertDataFrameEqual

from nbspark.backoff.events import count_ddl
from nbspark.backoff.jobs import classify, train
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from nbspark.storage.tables import read_parquet_checked
from tests.conftest import ROOT

pytestmark = [pytest.mark.spark, pytest.mark.cluster]
CLUSTER = ROOT / "scripts" / "cluster.sh"


def sh(*args, timeout=240):
    return subprocess.run(
        [str(CLUSTER), *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def test_standalone_cluster_equals_local_mode(spark, fixtures, tmp_path):
    overrides = {
        "train.path": str(fixtures / "ngrams.txt"),
        "test.path": str(fixtures / "mini.sgm"),
        "partitions": "3",
    }
    cfg = load_config(None, overrides)
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "local_model")
    classify(spark, cfg, tmp_path / "local_model", resolve_input(cfg.test, None), tmp_path / "local_results")

    state = tmp_path / "cluster"
    started = sh("start", state)
    try:
        assert started.returncode == 0, started.stderr[-2000:]
        assert started.stdout.strip().startswith("spark://127.0.0.1:")
        sets = [x for k, v in overrides.items() for x in ("--set", f"{k}={v}")]
        marker = tmp_path / "marker"
        marker.mkdir()
        kill = ["--conf", f"spark.executorEnv.NBSPARK_FAULT=kill-executor-once:{marker}"]
        proc = sh("submit", state, *kill, "jobs/train.py", *sets, "--out", tmp_path / "model")
        assert (marker / "fired").is_file(), "the executor was not killed, so the fault proves nothing"
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert len(list((state / "work").glob("app-*/*/stderr"))) >= 2, "no second executor was started"
        proc = sh(
            "submit",
            state,
            "jobs/classify.py",
            *sets,
            "--model",
            tmp_path / "model",
            "--out",
            tmp_path / "results",
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "accuracy: 0.5000" in proc.stdout
        assert list((state / "work").glob("app-*")), "no application ran on the worker"
    finally:
        sh("stop", state)
    for pid_file in ("master.pid", "worker.pid"):
        assert not (state / pid_file).exists()
    ddl = count_ddl("ABCDE")
    assertDataFrameEqual(
        read_parquet_checked(spark, tmp_path / "model" / "counts", ddl),
        read_parquet_checked(spark, tmp_path / "local_model" / "counts", ddl),
        checkRowOrder=False,
    )
    assertDataFrameEqual(
        spark.read.parquet(str(tmp_path / "results" / "predictions")),
        spark.read.parquet(str(tmp_path / "local_results" / "predictions")),
        checkRowOrder=False,
    )
