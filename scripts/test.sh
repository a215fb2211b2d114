#!/usr/bin/env bash
# Set up .venv if needed and run the whole test suite (Spark in local mode; real-data tests
# run when the data dir is found: --data-dir is not available here, use $NBSPARK_DATA).
# The server's page is tested in a real headless browser: Debian's Chromium, installed in the
# background when missing and this is root with apt (CI; scripts/chromium.sh), while the venv is set
# up and the tests run; the page test waits for it. Elsewhere the page test is skipped, saying why.
"$(dirname "$0")/chromium.sh" --background > /dev/null || true
source "$(dirname "$0")/_env.sh"
# Two pytest processes, each test file whole in one (its module fixtures made once), and the test
# JVMs compiling with C1 only: a test's Spark jobs are small, and C2's compiling was most of their
# JVM's CPU (docs/performance.md). C1 alone sizes the code cache at 48 MB, not the 240 MB of the
# default JVM, and one worker's JVM runs half the suite: it filled up ("Out of space in CodeCache for
# adapters", a failed job), so the default's size is given back. NBSPARK_TEST_WORKERS=0 runs in this
# process; your own SPARK_SUBMIT_OPTS come after the flags, so -XX:TieredStopAtLevel=4 there gives C2 back.
# The serial collector: two test JVMs share two cores, and G1's helper threads cost more than they
# save on small jobs (docs/performance.md); not where your SPARK_SUBMIT_OPTS names a collector (a JVM
# given two refuses to start).
JVM_OPTS="-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
if [[ "${SPARK_SUBMIT_OPTS:-}" != *-XX:+Use*GC* ]]; then JVM_OPTS="$JVM_OPTS -XX:+UseSerialGC"; fi
export SPARK_SUBMIT_OPTS="$JVM_OPTS${SPARK_SUBMIT_OPTS:+ $SPARK_SUBMIT_OPTS}"
exec python -m pytest --numprocesses "${NBSPARK_TEST_WORKERS:-2}" --dist loadfile "$@"
