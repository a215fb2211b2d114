#!/usr/bin/env bash
# Set up .venv if needed and run the whole test suite (Spark in local mode; real-data tests
# run when the data dir is found: --data-dir is not available here, use $NBSPARK_DATA).
source "$(dirname "$0")/_env.sh"
# The server's page is tested in a real headless browser: Debian's Chromium, installed here when
# missing and this is root with apt (CI); elsewhere the page test is skipped, saying why.
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Chromium for the page test (apt-get; log in .venv/chromium.log)" >&2
    { apt-get install -y --no-install-recommends chromium || { apt-get update && apt-get install -y --no-install-recommends chromium; }; } > .venv/chromium.log 2>&1 || echo "Chromium could not be installed: the page test will say so" >&2
fi
# Two pytest processes, each test file whole in one (its module fixtures made once), and the test
# JVMs compiling with C1 only: a test's Spark jobs are small, and C2's compiling was most of their
# JVM's CPU (docs/performance.md). C1 alone sizes the code cache at 48 MB, not the 240 MB of the
# default JVM, and one worker's JVM runs half the suite: it filled up ("Out of space in CodeCache for
# adapters", a failed job), so the default's size is given back. NBSPARK_TEST_WORKERS=0 runs in this
# process; your own SPARK_SUBMIT_OPTS come after the flags, so -XX:TieredStopAtLevel=4 there gives C2 back.
export SPARK_SUBMIT_OPTS="-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m${SPARK_SUBMIT_OPTS:+ $SPARK_SUBMIT_OPTS}"
exec python -m pytest --numprocesses "${NBSPARK_TEST_WORKERS:-2}" --dist loadfile "$@"
