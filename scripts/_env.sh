# Sourced by the other scripts: make .venv if it is missing, install nbspark into it, and put
# it on PATH (spark-submit finds SPARK_HOME through the venv's python).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
# A venv without pip is one whose making was cut short (Ctrl-C): made again.
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import pip" 2>/dev/null; then
    echo "setting up .venv (first run: downloads pyspark, a few minutes)" >&2
    "$PY" -m venv --clear .venv
fi
# Reinstall when pyproject.toml is newer than the last install. PySpark comes from PyPI as source, a
# wheel built at each clean install: stored, not deflated (its 450 MB are jars, compressed already;
# docs/performance.md).
if [ ! -f .venv/.nbspark-installed ] || [ pyproject.toml -nt .venv/.nbspark-installed ]; then
    PIP=(.venv/bin/python -m pip install)
    STORED=(--config-settings=--build-option=--compression=stored)
    # (without that setting when a build backend refuses it)
    if ! { "${PIP[@]}" --upgrade pip && { "${PIP[@]}" "${STORED[@]}" -e ".[test]" || "${PIP[@]}" -e ".[test]"; }; } > .venv/install.log 2>&1; then
        cat .venv/install.log >&2
        echo "installing nbspark into .venv failed (log above, also in .venv/install.log)" >&2
        exit 1
    fi
    touch .venv/.nbspark-installed
fi
export PATH="$ROOT/.venv/bin:$PATH"
# nbspark's own bytecode, compiled ahead (only what changed): where PYTHONDONTWRITEBYTECODE is set,
# every process (a job's driver, each Spark Python worker) otherwise compiles what it imports anew.
python -m compileall -q nbspark > /dev/null || true
# Every Spark listener on loopback (../shared/SPARK_NOTES.md §5).
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$ROOT/.venv/bin/python}"
# Spark's Python processes (a spark-submit driver, each worker daemon) import PySpark from
# pyspark.zip, which holds no bytecode: compiled once here, they start about 0.5 s faster each
# (scripts/pyspark_bytecode.py; NBSPARK_PYSPARK_BYTECODE=0 skips it).
python scripts/pyspark_bytecode.py || true
# Each spark-submit starts about 3 s faster from a class-data archive of Spark's classes, built
# once (scripts/jvm_archive.py; NBSPARK_JVM_ARCHIVE=0 makes it print nothing). The user's own
# SPARK_SUBMIT_OPTS and --driver-java-options come after it, so they win.
if [[ "${SPARK_SUBMIT_OPTS:-}" != *SharedArchiveFile* ]]; then
    JVM_ARCHIVE_OPTS="$(python scripts/jvm_archive.py)" || JVM_ARCHIVE_OPTS=""
    if [ -n "$JVM_ARCHIVE_OPTS" ]; then
        export SPARK_SUBMIT_OPTS="$JVM_ARCHIVE_OPTS${SPARK_SUBMIT_OPTS:+ $SPARK_SUBMIT_OPTS}"
    fi
fi
# Spark said six lines at INFO and a warning as it started, before spark.log.level applied: the
# JVMs that spark-submit starts here log warnings and errors only from their first line, unless a
# logging configuration of yours applies (nbspark.spark.session.jvm_log_options, which nbspark's
# commands follow too; --conf spark.log.level=INFO gives Spark's lines back).
LOG_OPTS="$(python -c 'from nbspark.spark.session import jvm_log_options; print(jvm_log_options())')" || LOG_OPTS=""
if [ -n "$LOG_OPTS" ]; then
    export SPARK_SUBMIT_OPTS="$LOG_OPTS${SPARK_SUBMIT_OPTS:+ $SPARK_SUBMIT_OPTS}"
fi
