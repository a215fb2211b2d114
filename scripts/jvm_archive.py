"""A JVM class-data archive of Spark's classes, so that each local spark-submit starts faster.

    python scripts/jvm_archive.py           # build it if missing or stale, print the JVM options that use it
    python scripts/jvm_archive.py --remove  # delete it

A Spark driver JVM loads and verifies thousands of classes from Spark's jars as it starts a session
and runs its first jobs (10,000 from ``org.apache.spark`` alone in a small train job). Java's class-data
sharing (AppCDS) maps them from an archive instead.
This script runs one small nbspark workload in a driver JVM started with
``-XX:ArchiveClassesAtExit``: both model families trained and applied on the test fixtures, with
Parquet, Arrow and whole-file reads. It then prints the options that use the archive, for
``SPARK_SUBMIT_OPTS``. ``scripts/_env.sh`` does this for every script (demo, tests). A user's
``--driver-java-options`` come after ``SPARK_SUBMIT_OPTS`` on the JVM's command line, so the
user's flags win.

Measured on the development machine (docs/scaling.md): a ``spark-submit`` that starts a session,
runs one RDD job, writes Parquet and stops took 9.9–10.7 s without the archive and 6.5–6.9 s with it.

The archive is rebuilt when the Java runtime, Spark's home or its jars change. A JVM that cannot
use it (another Java, a class path that differs, such as ``spark.driver.extraClassPath``, or
a non-empty ``$SPARK_HOME/conf``) runs without it, silently, as before. The archive is not put in
``spark-defaults.conf``: that file would sit in the conf directory, which is on the class path,
and the JVM maps an archive only while every directory on the class path is empty.
``NBSPARK_JVM_ARCHIVE=0`` skips all this (the script then prints nothing). ``scripts/bench_google.py``
runs it too, to time the train job as the scripts launch it.
"""

from __future__ import annotations

import argparse
import fcntl
import gzip
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / ".venv" / "spark-classes.jsa"
KEY = ARCHIVE.with_suffix(".key")  # what the archive was built for: a different key rebuilds it
QUIET = "-Xlog:cds*=off"  # a JVM that cannot map the archive runs without it, silently
FIXTURES = ROOT / "tests" / "data"


def current_key() -> str:
    from pyspark.find_spark_home import _find_spark_home

    home = Path(_find_spark_home()).resolve()
    java = Path(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    version = subprocess.run([str(java), "-version"], capture_output=True, text=True, check=True).stderr
    jars = sorted(p.name for p in (home / "jars").glob("*.jar"))
    return hashlib.sha256("\n".join([version, str(home), str(ARCHIVE), *jars]).encode()).hexdigest()


def workload(tmp: str) -> int:
    """Run under spark-submit: each kind of job once, in one driver JVM, to load the classes they use."""
    from nbspark.app.cli import classify_main, train_main
    from nbspark.spark.session import get_spark, stop_spark

    spark = get_spark(
        "nbspark-jvm-archive", conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
    )
    shard = Path(tmp, "google", "5-00000-of-00001.gz")  # a gzip shard, read whole (google_scan)
    shard.parent.mkdir()
    shard.write_bytes(gzip.compress((FIXTURES / "google_v3.txt").read_bytes()))
    backoff = [
        "--set",
        f"train.path={FIXTURES / 'ngrams.txt'}",
        "--set",
        f"test.path={FIXTURES / 'mini.sgm'}",
    ]
    google = ["--set", "train.format=google_v3", "--set", f"train.path={shard.parent}"]
    nb = [
        "--set",
        "task=naive_bayes",
        "--set",
        "engine=arrow",
        "--set",
        "nb.tokenizer=words",
        "--set",
        "train.format=tsv",
        "--set",
        f"train.path={FIXTURES / 'china_train.tsv'}",
        "--set",
        "test.format=tsv",
        "--set",
        f"test.path={FIXTURES / 'china_test.tsv'}",
    ]
    runs = [
        (train_main, [*backoff, "--out", f"{tmp}/backoff"]),
        (classify_main, [*backoff, "--model", f"{tmp}/backoff", "--out", f"{tmp}/backoff-results"]),
        (train_main, [*google, "--out", f"{tmp}/google-model"]),
        (train_main, [*nb, "--out", f"{tmp}/nb"]),
        (classify_main, [*nb, "--model", f"{tmp}/nb", "--out", f"{tmp}/nb-results"]),
    ]
    for main, argv in runs:
        if main(argv) != 0:
            return 1
    stop_spark(spark)
    return 0


def build(key: str) -> None:
    """Dump the archive from the workload's JVM (to a temporary name, renamed once complete)."""
    staged = ARCHIVE.with_suffix(".jsa.tmp")
    staged.unlink(missing_ok=True)
    env = {
        **os.environ,
        "SPARK_SUBMIT_OPTS": "",
        "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
        "PYSPARK_PYTHON": sys.executable,
    }
    submit = Path(sys.executable).parent / "spark-submit"
    with tempfile.TemporaryDirectory(prefix="nbspark-jvm-archive-") as tmp:
        cmd = [
            str(submit),
            "--master",
            "local[2]",
            "--driver-java-options",
            f"-XX:ArchiveClassesAtExit={staged} {QUIET}",
            str(Path(__file__).resolve()),
            "--workload",
            tmp,
        ]
        proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
    if proc.returncode != 0 or not staged.is_file():
        staged.unlink(missing_ok=True)
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the workload exited {proc.returncode}: {last}")
    staged.replace(ARCHIVE)
    KEY.write_text(key + "\n", encoding="utf-8")


def remove() -> None:
    for path in (ARCHIVE, KEY):
        path.unlink(missing_ok=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--remove", action="store_true", help="delete the archive")
    parser.add_argument("--workload", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.workload:
        return workload(args.workload)
    if args.remove:
        remove()
        return 0
    if os.environ.get("NBSPARK_JVM_ARCHIVE", "1") == "0":  # asked for no archive: no options
        return 0
    if any(c.isspace() for c in str(ARCHIVE)):  # SPARK_SUBMIT_OPTS is split at spaces
        print(f"jvm_archive: no archive under a path with a space ({ARCHIVE.parent})", file=sys.stderr)
        return 0
    try:
        key = current_key()
    except (OSError, subprocess.SubprocessError) as exc:  # no java: Spark will say so itself
        print(f"jvm_archive: no archive, cannot run java -version ({exc})", file=sys.stderr)
        return 0
    try:
        with open(ARCHIVE.with_suffix(".lock"), "w") as lock:
            fcntl.flock(
                lock, fcntl.LOCK_EX
            )  # two scripts started at once: one builds, the other waits for it
            if not (ARCHIVE.is_file() and KEY.is_file() and KEY.read_text(encoding="utf-8").strip() == key):
                remove()
                print(
                    "building a JVM class-data archive of Spark's classes, for faster starts (once, about "
                    "40 s; "
                    "NBSPARK_JVM_ARCHIVE=0 skips it)",
                    file=sys.stderr,
                )
                build(key)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:  # a read-only venv, a failed workload
        print(f"jvm_archive: no archive, Spark starts at its usual speed ({exc})", file=sys.stderr)
        return 0
    print(f"-XX:SharedArchiveFile={ARCHIVE} {QUIET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
