#!/usr/bin/env bash
# A one-machine Spark standalone cluster from the pip pyspark, bound to 127.0.0.1, REST off.
#
#   scripts/cluster.sh start [DIR]     master + one worker; state (pids, logs, ports) under DIR
#                                      (default .cluster/); prints the master URL when ready
#   scripts/cluster.sh submit DIR [SPARK-SUBMIT OPTIONS...] JOB.py [ARGS...]
#                                      spark-submit to it, with nbspark shipped as --py-files;
#                                      options before JOB.py go to spark-submit after ours: the
#                                      same option given twice, theirs wins (--executor-memory 2g)
#   scripts/cluster.sh stop [DIR]      stop both daemons by their pid files
#
# Environment: CLUSTER_CORES (2), CLUSTER_MEMORY (2g). See ../shared/SPARK_NOTES.md §3.
source "$(dirname "$0")/_env.sh"
cmd="${1:-}"; shift || true
DIR="$(mkdir -p "${1:-.cluster}" && cd "${1:-.cluster}" && pwd)"; [ $# -gt 0 ] && shift
export SPARK_HOME="$(python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"

free_port() { python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

case "$cmd" in
start)
    mkdir -p "$DIR/logs" "$DIR/work"
    port=$(free_port); ui=$(free_port); wui=$(free_port)
    echo "spark://127.0.0.1:$port" > "$DIR/master_url"
    echo "$ui" > "$DIR/master_ui_port"
    nohup "$SPARK_HOME/bin/spark-class" -Dspark.master.rest.enabled=false org.apache.spark.deploy.master.Master \
        --host 127.0.0.1 --port "$port" --webui-port "$ui" > "$DIR/logs/master.log" 2>&1 &
    echo $! > "$DIR/master.pid"
    nohup "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --webui-port "$wui" \
        --cores "${CLUSTER_CORES:-2}" --memory "${CLUSTER_MEMORY:-2g}" --work-dir "$DIR/work" \
        "spark://127.0.0.1:$port" > "$DIR/logs/worker.log" 2>&1 &
    echo $! > "$DIR/worker.pid"
    for _ in $(seq 1 60); do
        alive=$(python - "$ui" <<'PY' 2>/dev/null || echo 0
import json, sys, urllib.request
print(json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/json/", timeout=2))["aliveworkers"])
PY
)
        if [ "${alive:-0}" -ge 1 ]; then cat "$DIR/master_url"; exit 0; fi
        sleep 1
    done
    echo "cluster.sh: the worker did not register within 60 s; see $DIR/logs" >&2
    exit 1
    ;;
submit)
    options=()  # spark-submit's: each --name takes a value but its two flags
    while [ $# -gt 0 ] && [[ "$1" == --* ]]; do
        case "$1" in
        --verbose|--supervise) options+=("$1"); shift ;;
        *) [ $# -ge 2 ] || { echo "cluster.sh: submit: $1 needs a value" >&2; exit 2; }
           options+=("$1" "$2"); shift 2 ;;
        esac
    done
    if [ $# -eq 0 ]; then echo "cluster.sh: submit: no JOB.py given" >&2; exit 2; fi
    job="$1"; shift
    rm -f "$DIR/nbspark.zip"
    python -m zipfile -c "$DIR/nbspark.zip" nbspark/
    exec spark-submit --master "$(cat "$DIR/master_url")" --conf spark.ui.enabled=false \
        --conf spark.pyspark.python="$PYSPARK_PYTHON" \
        --executor-memory 1g --total-executor-cores "${CLUSTER_CORES:-2}" \
        --py-files "$DIR/nbspark.zip" ${options[@]+"${options[@]}"} "$job" "$@"
    ;;
stop)
    for d in worker master; do
        if [ -f "$DIR/$d.pid" ]; then kill "$(cat "$DIR/$d.pid")" 2>/dev/null || true; rm -f "$DIR/$d.pid"; fi
    done
    ;;
*)
    sed -n '2,12p' "$0"; exit 2 ;;
esac
