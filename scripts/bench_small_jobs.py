"""What a small Spark job costs, with the JVM and its Python workers talking over TCP on loopback
(Spark's default) and over Unix domain sockets (``spark.python.unix.domain.socket.enabled``, which
every session nbspark builds in local mode takes: ``spark.session.LOCAL_BUILT_DEFAULTS``).

    python scripts/bench_small_jobs.py [--master local[2]] [--repeat 9] [--json FILE]

Each setting runs in a process of its own (the setting is read as the JVM starts): a map over four
partitions and a shuffle of PySpark RDDs, then nbspark's jobs on the test fixtures (a backoff train
of ``tests/data/ngrams.txt`` by the ``pairs`` and ``combine`` engines, a naive Bayes train of
``china_train.tsv`` and its classify by the ``arrow`` and ``broadcast`` scorers), each timed
``--repeat`` times after one untimed run, in one session. Prints the median seconds of each under
both settings and their ratio (Unix sockets over TCP: below 1 is faster), and checks that both
wrote the same predictions; ``--json`` writes them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "data"
from nbspark.spark.session import LOCAL_BUILT_DEFAULTS  # noqa: E402 (after the path above)

(SETTING,) = LOCAL_BUILT_DEFAULTS  # the setting the sessions nbspark builds in local mode take


def median_seconds(fn, repeat: int) -> float:
    fn()  # untimed: the JVM's code, the Python workers
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(master: str, unix: bool, repeat: int, work: Path) -> dict:
    """The median seconds of each job in one session of the given setting, and the predictions."""
    from operator import add

    from nbspark.backoff.jobs import train
    from nbspark.inputs.resolve import resolve_input
    from nbspark.naive_bayes.jobs import classify_nb, train_nb
    from nbspark.settings.config import load_config
    from nbspark.spark.session import get_spark

    spark = get_spark(
        "bench-small-jobs",
        {
            "spark.master": master,
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.log.level": "ERROR",
            "spark.sql.shuffle.partitions": "2",
            SETTING: str(unix).lower(),
        },
    )
    sc = spark.sparkContext
    runs = iter(range(1 << 30))

    def out(name: str) -> Path:
        return work / f"{name}-{next(runs)}"

    nb = {
        "task": "naive_bayes",
        "nb.tokenizer": "words",
        "train.format": "tsv",
        "train.path": str(FIXTURES / "china_train.tsv"),
        "test.format": "tsv",
        "test.path": str(FIXTURES / "china_test.tsv"),
    }
    nb_cfg = load_config(None, nb)
    model = work / "nb-model"
    train_nb(spark, nb_cfg, resolve_input(nb_cfg.train, None), model)

    def backoff(engine: str):
        cfg = load_config(None, {"train.path": str(FIXTURES / "ngrams.txt"), "engine": engine})
        return lambda: train(spark, cfg, resolve_input(cfg.train, None), out(engine))

    def classify(scoring: str):
        cfg = load_config(None, {**nb, "scoring": scoring})
        return lambda: classify_nb(spark, cfg, model, resolve_input(cfg.test, None), out(scoring))

    jobs = {
        "rdd_map_4_partitions": lambda: sc.parallelize(range(100), 4).map(lambda x: x + 1).collect(),
        "rdd_shuffle": lambda: (
            sc.parallelize(range(100), 3).map(lambda x: (x % 7, 1)).reduceByKey(add, 3).collect()
        ),
        "backoff_train_pairs": backoff("pairs"),
        "backoff_train_combine": backoff("combine"),
        "nb_train": lambda: train_nb(spark, nb_cfg, resolve_input(nb_cfg.train, None), out("nb")),
        "nb_classify_arrow": classify("arrow"),
        "nb_classify_broadcast": classify("broadcast"),
    }
    seconds = {name: round(median_seconds(fn, repeat), 4) for name, fn in jobs.items()}
    cfg = load_config(None, {**nb, "scoring": "arrow"})
    classify_nb(spark, cfg, model, resolve_input(cfg.test, None), work / "check")
    predictions = sorted(
        (r["id"], r["predicted"][0], round(r["probability"], 12))
        for r in spark.read.parquet(str(work / "check" / "predictions")).collect()
    )
    spark.stop()
    return {"seconds": seconds, "predictions": predictions}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--json", help="write the result here")
    parser.add_argument("--child", choices=["tcp", "unix"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # one setting, in this process: its result as JSON on stdout's last line
        with tempfile.TemporaryDirectory(prefix="nbspark-bench-small-") as work:
            result = measure(args.master, args.child == "unix", args.repeat, Path(work))
        print(json.dumps(result))
        return 0
    results = {}
    for setting in ("tcp", "unix"):
        cmd = [
            sys.executable,
            __file__,
            "--child",
            setting,
            "--master",
            args.master,
            "--repeat",
            str(args.repeat),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            return 1
        results[setting] = json.loads(done.stdout.strip().splitlines()[-1])
    tcp, unix = results["tcp"]["seconds"], results["unix"]["seconds"]
    result = {
        "master": args.master,
        "repeat": args.repeat,
        "tcp_seconds": tcp,
        "unix_seconds": unix,
        "ratio_unix_over_tcp": {name: round(unix[name] / tcp[name], 3) for name in tcp},
        "predictions_equal": results["tcp"]["predictions"] == results["unix"]["predictions"],
    }
    print(f"{'job':<24}{'TCP s':>9}{'Unix s':>9}{'ratio':>8}")
    for name in tcp:
        print(f"{name:<24}{tcp[name]:>9.3f}{unix[name]:>9.3f}{result['ratio_unix_over_tcp'][name]:>8.2f}")
    print(f"predictions equal: {result['predictions_equal']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["predictions_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
