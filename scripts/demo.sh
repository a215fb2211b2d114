#!/usr/bin/env bash
# Set up .venv if needed, then reproduce the affect/effect experiment on the default data:
# train on the Google Books 5-grams, classify every affect/effect 5-gram of Reuters-21578.
# Extra arguments go to both jobs (e.g. --data-dir DIR). Master: $NBSPARK_MASTER or local[*].
source "$(dirname "$0")/_env.sh"
MASTER="${NBSPARK_MASTER:-local[*]}"
spark-submit --master "$MASTER" jobs/train.py --overwrite "$@"
spark-submit --master "$MASTER" jobs/classify.py --overwrite "$@"
