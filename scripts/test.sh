#!/usr/bin/env bash
# Set up .venv if needed and run the whole test suite (Spark in local mode; real-data tests
# run when the data dir is found: --data-dir is not available here, use $NBSPARK_DATA).
source "$(dirname "$0")/_env.sh"
exec python -m pytest "$@"
