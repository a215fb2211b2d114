#!/usr/bin/env bash
# The checks before the tests: ruff's format and lint (configured in pyproject.toml), and the
# import graph's floors (scripts/import_graph.py prints it). Sets up .venv if needed.
source "$(dirname "$0")/_env.sh"
ruff format --check --quiet .
ruff check --quiet .
python scripts/import_graph.py > /dev/null
