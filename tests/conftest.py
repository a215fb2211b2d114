"""One SparkSession per pytest process (local[2], 2 shuffle partitions, UI and progress off;
scripts/test.sh runs two processes), and the paths of the hand-made fixtures and of the real
data dir (when present)."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers use this venv, as scripts/test.sh sets

HERE = Path(__file__).parent
FIXTURES = HERE / "data"
ROOT = HERE.parent


def command_alone(args: list[str]) -> tuple[int, bool, str]:
    """``nbspark ARGS`` in a process of its own, without a ``PYSPARK_SUBMIT_ARGS`` (which a user sets
    to ask for Spark; an earlier command of a test process sets one too): ``(exit status, whether no
    JVM gateway was started, stderr)``."""
    code = (
        "import sys; from nbspark.app.command import main; rc = main(sys.argv[1:]); "
        "p = sys.modules.get('pyspark'); print(rc, p is None or p.SparkContext._gateway is None)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_SUBMIT_ARGS"}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=env
    )
    last = done.stdout.splitlines()[-1].split() if done.stdout.strip() else ["-1", "False"]
    return int(last[0]), last[1] == "True", done.stderr


def classify_results(out) -> tuple:
    """What a classify run wrote into ``out``, less its seconds: the metrics, the report, the metrics'
    flat file and the predictions' schema and rows, sorted (each row's JSON)."""
    import json

    import pyarrow.parquet as pq

    metrics = json.loads((out / "metrics.json").read_text())
    metrics.pop("seconds")
    table = pq.read_table(str(out / "predictions"))
    rows = sorted(json.dumps(r, sort_keys=True, default=repr) for r in table.to_pylist())
    report = (out / "report.txt").read_text()
    flat = [x for x in (out / "metrics.csv").read_text().splitlines() if not x.startswith("seconds,")]
    return metrics, report, flat, table.schema.remove_metadata(), rows


def failures_in_spark_and_here(spark, tmp_path, plan_of, run) -> list[str]:
    """The messages of the error (nbspark's ``InputError``) that a classify run planned for Spark and
    the same run planned in process raise (``plan_of(out, where)``, run by ``run(session, plan)``),
    each leaving no results directory."""
    from nbspark.errors import InputError

    errors = []
    for where, session in (("spark", spark), ("here", None)):
        plan = plan_of(tmp_path / where, where)
        with pytest.raises(InputError) as caught:
            run(session, plan)
        errors.append(str(caught.value))
        assert not (tmp_path / where).exists()
    return errors


def real_data_dir() -> Path | None:
    """$NBSPARK_DATA, else ../shared/data seen from the project root, when it holds the corpora."""
    for candidate in (os.environ.get("NBSPARK_DATA"), ROOT.parent / "shared" / "data"):
        if (
            candidate
            and (Path(candidate) / "reuters21578").is_dir()
            and (Path(candidate) / "aeffect").is_dir()
        ):
            return Path(candidate)
    return None


#: A ViewFS mount table for the whole run: ``viewfs://nbt/t/...`` is this local directory,
#: ``viewfs://nbt/fixtures/...`` the fixtures and, where they are found, ``viewfs://nbt/data/...`` the
#: real corpora. Any ``os`` call on such a path fails (or finds nothing), so a run that works there
#: used Hadoop's FileSystem API for every path.
_DATA = real_data_dir()
VIEWFS_DIR = Path(tempfile.mkdtemp(prefix="nbspark-viewfs-"))
atexit.register(shutil.rmtree, VIEWFS_DIR, True)
VIEWFS_CONF = {
    "spark.hadoop.fs.viewfs.mounttable.nbt.link./t": f"file://{VIEWFS_DIR}",
    "spark.hadoop.fs.viewfs.mounttable.nbt.link./fixtures": f"file://{FIXTURES}",
    **({"spark.hadoop.fs.viewfs.mounttable.nbt.link./data": f"file://{_DATA.resolve()}"} if _DATA else {}),
}

TEST_SPARK_CONF = {
    "spark.master": "local[2]",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.log.level": "WARN",
    "spark.driver.host": "127.0.0.1",
    **VIEWFS_CONF,
}


def pytest_collection_modifyitems(items):
    """A test that takes the ``spark`` fixture starts a JVM: it carries the ``spark`` mark."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) and item.get_closest_marker("spark") is None:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def _no_java(tmp_path_factory) -> Path:
    """A directory whose ``java`` fails loudly, naming the rule it enforces."""
    shim = tmp_path_factory.mktemp("no-java")
    java = shim / "java"
    java.write_text("#!/bin/sh\necho 'java started by a test without the spark mark' >&2\nexit 97\n")
    java.chmod(0o755)
    return shim


@pytest.fixture(autouse=True)
def _jvm_only_when_marked(request, monkeypatch, _no_java):
    """A test that starts a JVM (in process or through spark-submit) carries the ``spark`` mark: the
    others run with no ``java`` to find, so ``pytest -m "not spark"`` needs none."""
    if request.node.get_closest_marker("spark") is None:
        monkeypatch.setenv("PATH", f"{_no_java}:{os.environ['PATH']}")
        monkeypatch.delenv("JAVA_HOME", raising=False)
    yield


@pytest.fixture(scope="session")
def spark():
    from nbspark.spark.session import get_spark

    session = get_spark("nbspark-tests", {**TEST_SPARK_CONF, "spark.ui.showConsoleProgress": "false"})
    yield session
    session.stop()


@pytest.fixture
def viewfs():
    """A fresh directory on ViewFS: ``(viewfs://nbt/t/NAME, the local directory behind it)``."""
    name = uuid.uuid4().hex[:12]
    (VIEWFS_DIR / name).mkdir()
    yield f"viewfs://nbt/t/{name}", VIEWFS_DIR / name
    shutil.rmtree(VIEWFS_DIR / name, ignore_errors=True)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    found = real_data_dir()
    if found is None:
        pytest.skip("real corpora not found (set NBSPARK_DATA or provide ../shared/data)")
    return found


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def spark_submit(
    job: str,
    *args,
    master: str = "local[2]",
    conf: dict | None = None,
    env: dict | None = None,
    timeout: int = 300,
):
    """Run ``jobs/JOB.py`` through the venv's spark-submit; returns the CompletedProcess."""
    submit = Path(sys.executable).parent / "spark-submit"
    full_env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PATH": f"{submit.parent}:{os.environ['PATH']}",
        **(env or {}),
    }
    confs = [
        x for k, v in {"spark.ui.enabled": "false", **(conf or {})}.items() for x in ("--conf", f"{k}={v}")
    ]
    return subprocess.run(
        [str(submit), "--master", master, *confs, str(ROOT / "jobs" / f"{job}.py"), *map(str, args)],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
