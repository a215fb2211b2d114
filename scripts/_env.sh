# Sourced by the other scripts: make .venv if it is missing, install nbspark into it, and put
# it on PATH (spark-submit finds SPARK_HOME through the venv's python).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "setting up .venv (first run: downloads pyspark, a few minutes)" >&2
    "$PY" -m venv .venv
fi
# Reinstall when pyproject.toml is newer than the last install.
if [ ! -f .venv/.nbspark-installed ] || [ pyproject.toml -nt .venv/.nbspark-installed ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip >&2
    .venv/bin/python -m pip install --quiet -e ".[test]" >&2
    touch .venv/.nbspark-installed
fi
export PATH="$ROOT/.venv/bin:$PATH"
# Every Spark listener on loopback (../shared/SPARK_NOTES.md §5).
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$ROOT/.venv/bin/python}"
