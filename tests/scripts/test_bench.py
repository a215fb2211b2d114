"""The benchmarks run in CI at their smallest size: they must work and agree, not be fast here."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.spark, pytest.mark.realdata, pytest.mark.bench]


def run(script, *args, timeout=600):
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), *map(str, args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_bench_scorer(data_dir, tmp_path):
    proc = run(
        "bench_scorer.py",
        "--data-dir",
        data_dir,
        "--copies",
        "1",
        "--repeat",
        "1",
        "--json",
        tmp_path / "s.json",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "s.json").read_text())
    assert result["documents"] == 2499 and result["scoring_speedup_vs_loop"] > 1


def test_bench_smallest_scale(spark, data_dir, tmp_path):
    """The script's command at its smallest, in the tests' own session (``main(argv, spark)``)."""
    argv = ["--data-dir", data_dir, "--scales", "1", "--repeat", "1", "--warmup", "0", "--test-copies", "1"]
    # --books-scales "": the affect/effect part, whose engines against plain Python are
    # tests/backoff/test_count.py's
    argv += ["--books-scales", "", "--json", tmp_path / "b.json"]
    assert _script("bench").main(list(map(str, argv)), spark=spark) == 0
    result = json.loads((tmp_path / "b.json").read_text())
    row = result["rows"][0]
    # the same features and smoothing everywhere: the same accuracy on the 2,499 test stories
    assert row["nbspark_accuracy"] == row["mllib_accuracy"] == row["sklearn_accuracy"]
    for key in (
        "train_ratio_vs_mllib",
        "train_ratio_vs_sklearn",
        "classify_throughput_ratio_vs_mllib",
        "scoring_speedup_vs_loop",
    ):
        assert isinstance(result[key], float) and result[key] > 0
    for key in ("nbspark_score_x10", "nbspark_classify_x10", "mllib_transform_x10"):
        assert row[key]["median_s"] > 0
    assert result["classify_job_throughput_ratio_vs_mllib"] > 0 and result["books"] == []


def test_bench_google_smallest(tmp_path):
    proc = run("bench_google.py", "--gb", "0.01", "--shards", "2", "--json", tmp_path / "g.json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    result = json.loads((tmp_path / "g.json").read_text())
    # the job's table equals a plain-Python count of the same shards
    assert result["tables_equal"] is True and result["cores"] == 2
    assert 9e6 < result["uncompressed_bytes"] < 11e6
    assert result["zcat_seconds"] > 0 and result["per_core_ratio_vs_zcat"] > 0
    # the job's own clock starts after the JVM and its session: less than the whole spark-submit
    row = result["engines"][0]
    assert (
        0 < row["job_seconds"] < result["nbspark_seconds"]
        and row["per_core_ratio_vs_zcat_inside_job"] > result["per_core_ratio_vs_zcat"]
    )
    assert result["spark_submit_opts"] == os.environ.get(
        "SPARK_SUBMIT_OPTS", ""
    )  # the archive, when scripts/_env.sh set it
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "pyspark_bytecode.py"), "--check"])
    assert result["pyspark_bytecode"] is (check.returncode == 0)


def test_bench_serve_smallest(spark, data_dir, tmp_path):
    """The server under load for half a second per case, and swapped ten times under 8 clients: no
    request fails (the fixture model: the checker's work is small, the HTTP path is what runs)."""
    from tests.serve.conftest import train_checker

    model = train_checker(spark, tmp_path / "bench" / "model")
    proc = run(
        "bench_serve.py",
        "--model",
        model,
        "--data-dir",
        data_dir,
        "--seconds",
        "0.5",
        "--json",
        tmp_path / "s.json",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "s.json").read_text())
    assert [(r["size"], r["clients"]) for r in result["runs"]] == [
        (size, n) for size in ("1KB", "20KB") for n in (1, 8, 32)
    ]
    assert result["errors"] == 0 and result["reload_failed_requests"] == 0 and result["reload_requests"] > 0
    assert all(r["rps"] > 0 and r["p99_ms"] >= r["p50_ms"] > 0 for r in result["runs"])
    # the CPU a request cost: the clients' (this process), and the server's from /proc (Linux)
    assert all(r["client_cpu_us"] > 0 for r in result["runs"])
    assert sys.platform != "linux" or all(r["server_user_us"] > 0 for r in result["runs"])
    # the connections each of the default two workers held, counted from /proc: every client's
    assert result["workers"] == 2
    assert sys.platform != "linux" or all(
        len(r["connections_per_worker"]) == 2 and sum(r["connections_per_worker"]) == r["clients"]
        for r in result["runs"]
    )


def test_bench_density_smallest(spark, tmp_path):
    """The density counting pass against the naive Bayes train of a generated table, in the tests'
    own session (the script's ``measure``), each model's counts as the table holds them."""
    import pyarrow.parquet as pq

    bench = _script("bench_density")
    bench.generate(tmp_path / "t.csv", 2000)
    seconds = bench.measure(spark, tmp_path / "t.csv", tmp_path)
    assert seconds["density"] > 0 and seconds["naive_bayes"] > 0
    nb = pq.read_table(str(tmp_path / "nb" / "counts")).to_pylist()
    assert sum(r["n"] for r in nb if r["event"] == "Y") == 2000


def _script(name: str):
    """``scripts/NAME.py`` as a module, for its functions; its folder on the path, as when it runs
    as a script (its sibling modules imported by name)."""
    import importlib.util

    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_table_smallest(spark, tmp_path):
    """Gaussian naive Bayes on a generated table against MLlib's, in the tests' own session (the
    script's ``measure``; ``main`` only adds its session and printing): the two models agree, and
    so do their predictions' accuracies (a row on a class boundary aside)."""
    bench = _script("bench_table")
    bench.generate(tmp_path / "t.csv", 3000)
    result = bench.measure(spark, tmp_path / "t.csv", tmp_path, repeat=1, warmup=0)
    assert result["models_agree"] is True
    assert abs(result["accuracy_nbspark"] - result["accuracy_mllib"]) <= 1 / 3000
    assert result["accuracy_nbspark"] > 0.5  # three classes, their means apart
    assert result["train_ratio_vs_mllib"] > 0 and result["classify_ratio_vs_mllib"] > 0
    assert result["accuracy_stage"] == result["accuracy_nbspark"] and result["stage_ratio_vs_mllib"] > 0


def test_bench_read_checks_smallest(spark, tmp_path):
    """The count checks' cost against the read, on a generated table, in the tests' own session
    (the script's ``measure``; ``main`` only adds its session, the Books model and printing)."""
    bench = _script("bench_read_checks")
    result = bench.measure(spark, bench.generated_model(tmp_path, 2000))
    assert result["rows"] == 2000
    assert result["spark_check_seconds"] > 0 and result["arrow_check_seconds"] > 0
    assert result["arrow_check_share"] > 0 and result["spark_check_share"] > 0


def test_bench_stream_smallest(spark, data_dir, tmp_path):
    """Streaming against the batch train and River, at one copy in 3 files, in the tests' own
    session (the script's ``measure``): equal tables, equal accuracy (the same smoothing), a lag per
    file moved in."""
    bench = _script("bench_stream")
    train_docs, test_docs = bench.load_stories(data_dir)
    result = bench.measure(
        spark, train_docs, test_docs, tmp_path, copies=1, files=3, lag_files=2, trigger=2.0
    )
    assert result["tables_equal"] is True and result["documents"] == 6376
    assert result["accuracy_nbspark"] == result["accuracy_river"] > 0.8
    assert result["throughput_ratio"] > 0 and result["median_commit_lag_seconds"] >= 0


def test_bench_estimator_smallest():
    """``nbspark.NaiveBayes`` on arrays against scikit-learn's, no Spark: both models predict alike."""
    result = _script("bench_estimator").measure(2000, 3, 1)
    for name in ("gaussian", "categorical"):
        assert result[name]["agreement"] == 1.0
        assert result[name]["fit_ratio"] > 0 and result[name]["predict_ratio"] > 0


@pytest.mark.parametrize("kind", ["multinomial", "bernoulli", "complement"])
def test_bench_trickle_smallest(data_dir, kind):
    """One message a call against River's learn_one, no Spark: both classify the messages learnt in
    turns alike (the same counts; nbspark drops a word never seen, River is given the seen ones)."""
    bench = _script("bench_trickle")
    items = bench.messages(str(data_dir))
    assert len(items) == 5574 and {y for y, _ in items} == {"ham", "spam"}
    result = bench.measure(items[:600], 100, kind)
    assert result["start"] == 500 and result["examples"] == 100
    assert result["nbspark_accuracy"] == result["river_accuracy"] > 0.8
    assert result["learn_ratio"] > 0 and result["turns_ratio"] > 0
