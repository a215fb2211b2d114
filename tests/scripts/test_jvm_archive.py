"""scripts/jvm_archive.py: the class-data archive that scripts/_env.sh puts in SPARK_SUBMIT_OPTS.

A JVM that cannot map the archive runs without it in silence (by design: a user's changed class
path must not break a job), so the one way to know it helps is to ask a job's JVM where its
classes came from.
"""

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, spark_submit


@pytest.mark.spark
def test_a_job_launched_as_the_scripts_launch_it_loads_spark_from_the_archive(tmp_path, fixtures):
    if "SharedArchiveFile" not in os.environ.get("SPARK_SUBMIT_OPTS", ""):
        pytest.skip(
            "no class-data archive in SPARK_SUBMIT_OPTS (run through scripts/test.sh, without "
            "NBSPARK_JVM_ARCHIVE=0)"
        )
    log = tmp_path / "classes.log"
    proc = spark_submit(
        "train",
        "--set",
        f"train.path={fixtures / 'ngrams.txt'}",
        "--out",
        tmp_path / "m",
        conf={"spark.driver.extraJavaOptions": f"-Xlog:class+load=info:file={log}"},
    )
    assert proc.returncode == 0, proc.stderr
    # Spark's classes as the JVM loaded them: from the archive, or read from a jar (lambdas and
    # generated classes are made at run time either way)
    sources = [
        line.rsplit(" source: ", 1)[1]
        for line in log.read_text().splitlines()
        if " org.apache.spark." in line and " source: " in line and "$$Lambda$" not in line
    ]
    archived = sources.count("shared objects file (top)")
    from_jars = sum(1 for s in sources if s.startswith(("jar:", "file:")))
    assert archived > 3000 and from_jars < 0.05 * archived, (archived, from_jars)


@pytest.mark.spark
def test_a_second_call_reuses_the_archive_and_prints_the_options_env_sh_exported():
    """The options printed are those _env.sh exports; a second call reuses the archive (no rebuild)."""
    if "SharedArchiveFile" not in os.environ.get("SPARK_SUBMIT_OPTS", ""):
        pytest.skip("no class-data archive built here")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "jvm_archive.py")], capture_output=True, text=True, timeout=60
    )
    assert (
        proc.returncode == 0 and proc.stderr == ""
    )  # nothing built: the archive matches this Java and Spark
    # scripts/test.sh puts its JIT flag before them (docs/performance.md), a user's options come after
    assert proc.stdout.strip() and f" {proc.stdout.strip()} " in f" {os.environ['SPARK_SUBMIT_OPTS']} "
