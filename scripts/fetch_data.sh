#!/usr/bin/env bash
# Download the corpora into a data dir laid out like ../shared/data (for users who are online).
#   scripts/fetch_data.sh [DIR]        (default: ./data; then pass --data-dir DIR or set NBSPARK_DATA)
# Sources: the UCI Machine Learning Repository (Reuters-21578, data set 137; SMS Spam Collection,
# data set 228), NLTK's data index (brown), and the affect/effect 5-grams published with William
# Cohen's 10-605 sample code (set AEFFECT_URL to where your copy of aeffect-train.txt lives).
set -euo pipefail
DIR="${1:-data}"
mkdir -p "$DIR"/reuters21578 "$DIR"/smsspam "$DIR"/nltk "$DIR"/aeffect
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
get() { echo "fetching $1" >&2; curl -fL --retry 3 -o "$2" "$1"; }

get "https://archive.ics.uci.edu/static/public/137/reuters+21578+text+categorization+collection.zip" "$TMP/r.zip"
(cd "$TMP" && unzip -q r.zip && tar -xzf reuters21578.tar.gz -C "$OLDPWD/$DIR/reuters21578" 2>/dev/null \
    || tar -xzf "$(find . -name 'reuters21578.tar.gz' | head -1)" -C "$OLDPWD/$DIR/reuters21578")

get "https://archive.ics.uci.edu/static/public/228/sms+spam+collection.zip" "$TMP/s.zip"
unzip -q -o "$TMP/s.zip" SMSSpamCollection -d "$DIR/smsspam"

get "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/brown.zip" "$DIR/nltk/brown.zip"

if [ -n "${AEFFECT_URL:-}" ]; then
    get "$AEFFECT_URL" "$DIR/aeffect/aeffect-train.txt"
else
    echo "aeffect-train.txt: set AEFFECT_URL to the file from Cohen's 10-605 sample code and rerun" >&2
fi
echo "data in $DIR" >&2
