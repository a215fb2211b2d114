#!/usr/bin/env bash
# Debian's Chromium for the server's page test (tests/serve/test_page.py), installed when it is
# missing and this is root with apt-get (CI); anywhere else it does nothing and the test says why.
#   scripts/chromium.sh               install now (waits for an install already running)
#   scripts/chromium.sh --background  start the install and return, printing the path of the lock
#                                     the installer holds until it is done (nothing when no install
#                                     runs): .ci/run and scripts/test.sh start it first, so apt's
#                                     download and unpacking overlap the venv's setup and the tests
#   scripts/chromium.sh --which       the browser's path (nothing, exit 0, when there is none), once
#                                     an install running is done (at most 15 min): the page test's
# One install at a time: a second caller waits for the first (an flock).
set -euo pipefail
LOCK="${TMPDIR:-/tmp}/nbspark-chromium.lock"
LOG="${LOCK%.lock}.log"
browser() { command -v chromium || command -v chromium-browser || command -v google-chrome; }
have() { browser >/dev/null; }
if [ "${1:-}" = --which ]; then
    if [ -e "$LOCK" ] && command -v flock >/dev/null; then
        exec 9<"$LOCK"
        flock -s -w 900 9 || { echo "Chromium's install still runs after 900 s ($LOCK)" >&2; exit 1; }
    fi
    browser || true
    exit 0
fi
if have || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || ! command -v flock >/dev/null; then
    exit 0
fi
install() {
    have && return 0
    echo "installing Chromium for the page test (apt-get; log in $LOG)" >&2
    local apt=(apt-get install -y --no-install-recommends chromium)
    { DEBIAN_FRONTEND=noninteractive "${apt[@]}" || { apt-get update && DEBIAN_FRONTEND=noninteractive "${apt[@]}"; }; } > "$LOG" 2>&1 ||
        echo "Chromium could not be installed (log in $LOG): the page test will say so" >&2
}
exec 9>"$LOCK"
if [ "${1:-}" = --background ]; then
    # Taken here, before returning, so that a page test started next waits; the child keeps it.
    if flock -n 9; then
        ( install ) >&2 &
    fi
    echo "$LOCK"  # ours, or the one an install already running holds
    exit 0
fi
flock 9
install
