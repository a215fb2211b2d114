"""The jobs as users run them: spark-submit, exit codes, one-line errors, nothing half-written."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, spark_submit

# Even the checks made "before Spark" list paths through Hadoop's FileSystem, in the JVM.
pytestmark = pytest.mark.spark

JOBS = ROOT / "jobs"


def run_job(job, *args, cwd=None, env_extra=None, timeout=300):
    """Run a job through its main, in a fresh interpreter (errors before the SparkSession still
    start the JVM: paths are checked through Hadoop)."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", **(env_extra or {})}
    return subprocess.run(
        [sys.executable, str(JOBS / f"{job}.py"), *map(str, args)],
        cwd=cwd or ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_line_error(proc):
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    return lines[-1]


def test_missing_data_names_where_it_looked(tmp_path):
    proc = run_job(
        "train", "--out", tmp_path / "m", cwd=tmp_path, env_extra={"NBSPARK_DATA": str(tmp_path / "nodata")}
    )
    err = one_line_error(proc)
    assert err.startswith("train.py: error: cannot find 'aeffect/aeffect-train.txt'")
    assert (
        "$NBSPARK_DATA" in err
        and "./data" in err
        and "../shared/data" in err
        and "scripts/fetch_data.sh" in err
    )
    assert proc.returncode == 1 and not (tmp_path / "m").exists()


def test_output_that_holds_something_is_refused(tmp_path, fixtures):
    out = tmp_path / "m"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    proc = run_job("train", "--set", f"train.path={fixtures / 'ngrams.txt'}", "--out", out)
    assert "already holds something; pass --overwrite" in one_line_error(proc)
    proc = run_job("train", "--set", f"train.path={fixtures / 'ngrams.txt'}", "--out", out, "--overwrite")
    assert "not an nbspark output" in one_line_error(proc)
    proc = run_job("train", "--set", f"train.path={fixtures / 'ngrams.txt'}", "--out", fixtures)
    assert "overlaps the input" in one_line_error(proc)
    assert (out / "keep.txt").read_text() == "mine"


def test_bad_config_and_not_a_model(tmp_path):
    proc = run_job("train", "--set", "mode=sloppy")
    assert proc.returncode == 2 and "mode must be one of" in proc.stderr
    proc = run_job("classify", "--model", tmp_path)
    assert "not an nbspark model (no manifest.json)" in one_line_error(proc)
    proc = run_job("query", "--model", tmp_path / "nope", "--C", "_")
    assert "no such model directory" in one_line_error(proc)


def test_end_to_end_with_spark_submit(tmp_path, fixtures):
    model, results = tmp_path / "model", tmp_path / "results"
    common = ["--set", f"train.path={fixtures / 'ngrams.txt'}", "--set", f"test.path={fixtures / 'mini.sgm'}"]
    proc = spark_submit("train", *common, "--out", model)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "lines read: 11   malformed (skipped): 3" in proc.stdout
    assert "INFO DAGScheduler" not in proc.stderr  # the jobs' default log level is WARN (after start-up)
    assert f"{fixtures / 'ngrams.txt'}:8 (tokens)" in proc.stdout

    proc = spark_submit("classify", *common, "--model", model, "--out", results)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "accuracy: 0.5000   majority baseline (effect): 0.5000" in proc.stdout
    assert json.loads((results / "metrics.json").read_text())["examples"] == 4

    # spark-submit's settings win over the jobs' defaults: --conf spark.log.level=INFO was ignored before
    proc = spark_submit(
        "query",
        "--model",
        model,
        "--B",
        "_",
        "--C",
        "affect",
        "--json",
        tmp_path / "q.json",
        conf={"spark.log.level": "INFO"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "matching count: 11 of 34" in proc.stdout
    assert "INFO DAGScheduler" in proc.stderr
    assert json.loads((tmp_path / "q.json").read_text())["top"][0]["values"] == {"B": "not"}


def test_a_query_json_path_that_cannot_be_written_is_refused_before_spark(tmp_path, fixtures):
    proc = run_job("query", "--ngrams", fixtures / "ngrams.txt", "--C", "_", "--json", tmp_path)
    assert proc.returncode == 1 and "--json names a file to write" in one_line_error(proc)


def test_failfast_stops_with_its_one_line_and_no_worker_traceback(tmp_path, fixtures):
    """The first malformed line is the one line; Spark's executor and task-set loggers printed the
    worker's traceback twice above it (a hundred lines, the failed task expected in failfast mode).
    Line 5 of the fixture has no TAB (tests/data/README.md)."""
    proc = run_job(
        "train",
        "--set",
        "task=naive_bayes",
        "--set",
        "train.format=tsv",
        "--set",
        "engine=combine",  # a Python engine: the line fails a task (the arrow engine finds it after)
        "--set",
        f"train.path={fixtures / 'china_train.tsv'}",
        "--mode",
        "failfast",
        "--out",
        tmp_path / "m",
    )
    assert one_line_error(proc) == (
        f"train.py: error: {fixtures / 'china_train.tsv'}:5: malformed line (fields): 'no tabs in this line'"
    )
    said = proc.stderr
    assert "NBSPARK-MALFORMED" not in said and " ERROR " not in said and "Lost task" not in said, said[-3000:]
    assert not (tmp_path / "m").exists()
