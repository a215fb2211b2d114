"""Streaming training against a batch train of the same files, and against River, in one process.

    python scripts/bench_stream.py [--copies 50] [--files 20] [--lag-files 5] [--trigger 2] [--json F]

Workload: Reuters-21578 ModApte top-10 training stories (as ``scripts/bench.py``: ``label TAB
text`` lines, the ``sms`` format, multinomial naive Bayes, the words tokenizer), written
``--copies`` times over and cut into ``--files`` equal files.

* ``batch_seconds``: ``train_nb`` on the directory of those files (the arrow engine).
* ``stream_seconds``: ``nbspark stream --available-now --max-files-per-batch 1`` over the same
  directory (one version per file), from the query's start to its end, after an untimed stream
  of two of the files (the JVM's first query, as the batch's first job is); ``throughput_ratio`` =
  batch_seconds / stream_seconds (the stream's rate over the batch's; goal >= 0.5);
  ``tables_equal``: the two count tables, row for row.
* ``median_commit_lag_seconds``: a stream with ``--trigger-seconds`` running, ``--lag-files`` of the
  files moved in one at a time (each after the previous one's version): from the file's
  modification time to its version being readable (goal <= trigger + 5 s on local[2]).
* ``river_seconds``: River's ``naive_bayes.MultinomialNB(alpha=1)`` learning the same documents one
  by one (``learn_one`` of the words tokenizer's counts), one process; ``ratio_vs_river`` =
  river_seconds / stream_seconds (goal >= 2). Both models then classify the 2,499 test stories:
  ``accuracy_nbspark`` and ``accuracy_river``, test words never seen in training dropped for both
  (nbspark's default ``nb.unseen = drop``; River, which would smooth them, is given the seen ones),
  so the two must be equal.

``--bounded N``: only the memory check, N micro-batches of one small file each over a fixed
vocabulary (``--vocabulary``, 500 words; ``--compact-every``, 50): ``rss_ratio`` and
``disk_ratio`` (the model and ``MODEL.stream/``) after batch N over after batch 20 (goal <= 1.2);
beside them the JVM's (``jvm_rss_ratio``, and ``jvm_heap_ratio``: its heap in use after a full
collection; and that heap after batch N over after batch 40, once Spark's status store is full),
and every measure every 20 batches (``*_by_batch``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import load_stories

import nbspark
from nbspark.inputs.resolve import resolve_data_dir, resolve_input
from nbspark.inputs.tokens import tokenizer
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.naive_bayes.jobs import NAIVE_BAYES, train_nb
from nbspark.settings.config import load_config
from nbspark.spark.session import get_spark, quiet_while
from nbspark.spine.streaming import SESSION_DEFAULTS, STOP_QUIET, plan_stream, run_stream
from nbspark.storage.counts import read_count_table
from nbspark.storage.locations import location
from nbspark.storage.manifests import NB_KIND, load_manifest

SETTINGS = {"task": "naive_bayes", "nb.tokenizer": "words", "train.format": "sms"}


def write_files(folder: Path, docs, copies: int, files: int) -> int:
    """The documents ``copies`` times over as ``label TAB text`` lines, cut into ``files`` files."""
    lines = [f"{label}\t{text}\n" for label, text in docs] * copies
    size = -(-len(lines) // files)
    folder.mkdir(parents=True)
    for i in range(files):
        (folder / f"part-{i:03d}.txt").write_text("".join(lines[i * size : (i + 1) * size]), encoding="utf-8")
    return len(lines)


def table(model: Path) -> list:
    manifest = load_manifest(location(model), NB_KIND)
    rows = read_count_table(location(model), COUNT_DDL, manifest).to_pylist()
    return sorted((tuple(r.values()) for r in rows), key=lambda r: tuple(map(str, r)))


def stream(spark, watch: Path, model: Path, **options) -> float:
    cfg = load_config(None, SETTINGS)
    plan = plan_stream(cfg, NAIVE_BAYES, model, watch, **options)
    start = time.perf_counter()
    run_stream(spark, plan)
    return time.perf_counter() - start


def drip(spark, plan, watch: Path, files, on_batch, wait_s: float) -> None:
    """Run ``plan``'s stream in a thread and move ``files`` (``(name, bytes)``) into ``watch`` one at
    a time, each once the one before has its version (``on_batch(summary)`` runs for each); then
    stop the stream."""
    committed = threading.Event()

    def batch(summary):
        on_batch(summary)
        committed.set()

    runner = threading.Thread(target=run_stream, args=(spark, plan, batch))
    runner.start()
    try:
        for name, data in files:
            committed.clear()
            (watch / f".{name}").write_bytes(data)
            os.rename(watch / f".{name}", watch / name)  # landed whole: its modification time
            if not committed.wait(wait_s):
                raise RuntimeError(f"no version within {wait_s:g} s")
    finally:
        with quiet_while(spark, STOP_QUIET):  # as the stream's own stop: no warnings of its cancels
            for query in spark.streams.active:
                query.stop()
            runner.join()


def commit_lags(spark, side: Path, work: Path, count: int, trigger: float) -> list[float]:
    """Move ``count`` files in one at a time while a stream runs; each file's lag to its version."""
    watch, model = work / "lag-watch", work / "lag-model"
    watch.mkdir()
    lags = []
    plan = plan_stream(load_config(None, SETTINGS), NAIVE_BAYES, model, watch, trigger_seconds=trigger)
    files = ((path.name, path.read_bytes()) for path in sorted(side.iterdir())[:count])
    drip(spark, plan, watch, files, lambda summary: lags.append(summary["max_lag_seconds"]), 120)
    return lags


def rss_mb(pid: int | str = "self") -> float:
    """A process's resident memory now (``/proc/PID/status``: VmRSS), in MB: the driver's by default."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def jvm_heap_mb(spark) -> float:
    """The JVM's heap in use after a full collection, in MB: what it holds, whatever heap the
    collector chose to keep (its RSS)."""
    runtime = spark._jvm.java.lang.Runtime.getRuntime()
    spark._jvm.java.lang.System.gc()
    return (runtime.totalMemory() - runtime.freeMemory()) / 1e6


def disk_mb(*paths: Path) -> float:
    return sum(f.stat().st_size for p in paths if p.exists() for f in p.rglob("*") if f.is_file()) / 1e6


def bounded(spark, work: Path, batches: int, compact_every: int, vocabulary: int = 500) -> dict:
    """``batches`` micro-batches of one small file each over a fixed vocabulary of ``vocabulary``
    words (the same documents, new files: 50, or one per 10 words, of 30 words each): the driver's
    RSS, the JVM's, its heap, and the model and checkpoint on disk every 20 batches and after the
    last."""
    import random

    rng = random.Random(1)
    words = [f"w{i}" for i in range(vocabulary)]
    docs = [
        f"{rng.choice('abc')}\t{' '.join(rng.choices(words, k=30))}\n"
        for _ in range(max(50, vocabulary // 10))
    ]
    watch, model = work / "bounded-watch", work / "bounded-model"
    watch.mkdir()
    cfg = load_config(None, SETTINGS)
    plan = plan_stream(cfg, NAIVE_BAYES, model, watch, trigger_seconds=0.2, compact_every=compact_every)
    seen = {}

    def on_batch(summary):
        if summary["version"] % 20 == 0 or summary["version"] == batches:
            state = work / "bounded-model.stream"
            seen[summary["version"]] = {
                "rss_mb": round(rss_mb(), 1),
                "jvm_rss_mb": round(rss_mb(spark.sparkContext._gateway.proc.pid), 1),
                "jvm_heap_mb": round(jvm_heap_mb(spark), 1),
                "disk_mb": round(disk_mb(model, state), 3),
                "model_mb": round(disk_mb(model), 3),
                "checkpoint_mb": {
                    p.name: round(disk_mb(p), 3) for p in (state / "checkpoint").iterdir() if p.is_dir()
                },
            }

    text = "".join(docs).encode()
    drip(spark, plan, watch, ((f"f{i:04d}.txt", text) for i in range(batches)), on_batch, 60)
    first, last = seen[20], seen[batches]
    return {
        "batches": batches,
        "compact_every": compact_every,
        "vocabulary": vocabulary,
        "file_bytes": len(text),
        "after_20": first,
        f"after_{batches}": last,
        # the JVM's heap fills while Spark's status store (100 jobs, stages, SQL runs: SESSION_DEFAULTS),
        # its metric reservoirs and its loaded and generated classes fill, then stays flat
        "jvm_heap_mb_by_batch": {v: m["jvm_heap_mb"] for v, m in sorted(seen.items())},
        "jvm_rss_mb_by_batch": {v: m["jvm_rss_mb"] for v, m in sorted(seen.items())},
        "rss_mb_by_batch": {v: m["rss_mb"] for v, m in sorted(seen.items())},
        "disk_mb_by_batch": {v: m["disk_mb"] for v, m in sorted(seen.items())},
        "rss_ratio": round(last["rss_mb"] / first["rss_mb"], 3),
        "jvm_rss_ratio": round(last["jvm_rss_mb"] / first["jvm_rss_mb"], 3),
        "jvm_heap_ratio": round(last["jvm_heap_mb"] / first["jvm_heap_mb"], 3),
        "jvm_heap_ratio_after_40": round(last["jvm_heap_mb"] / seen[min(40, batches)]["jvm_heap_mb"], 3),
        "disk_ratio": round(last["disk_mb"] / first["disk_mb"], 3),
    }


def river_run(train, test, tok) -> tuple[float, float]:
    from river.naive_bayes import MultinomialNB

    start = time.perf_counter()
    model = MultinomialNB(alpha=1.0)
    for label, text in train:
        model.learn_one(Counter(tok(text)), label)
    seconds = time.perf_counter() - start
    seen = model.feature_counts  # a word never seen is dropped, as nb.unseen = drop does (River smooths it)
    right = sum(
        model.predict_one(Counter(w for w in tok(text) if w in seen)) == label for label, text in test
    )
    return seconds, right / len(test)


def measure(
    spark, train_docs, test_docs, work: Path, copies: int, files: int, lag_files: int, trigger: float
) -> dict:
    """The figures of the module's docstring but ``--bounded``'s, in ``spark`` (a session made as the
    stream command makes its own), with ``work`` for the files and models."""
    side = work / "files"
    n_docs = write_files(side, train_docs, copies, files)
    size = sum(p.stat().st_size for p in side.iterdir())
    print(f"{n_docs:,} documents, {size / 1e6:.1f} MB in {files} files", flush=True)
    cfg = load_config(None, {**SETTINGS, "train.path": str(side)})
    train_nb(spark, cfg, resolve_input(cfg.train, None), work / "warm")  # the JVM's first job, untimed
    start = time.perf_counter()
    train_nb(spark, cfg, resolve_input(cfg.train, None), work / "batch")
    batch_seconds = time.perf_counter() - start
    print(f"batch train: {batch_seconds:.1f} s", flush=True)
    warm = work / "warm-files"  # the JVM's first stream, untimed too: two of the files
    warm.mkdir()
    for path in sorted(side.iterdir())[:2]:
        os.link(path, warm / path.name)
    stream(spark, warm, work / "warm-stream", available_now=True, max_files=1)
    stream_seconds = stream(spark, side, work / "streamed", available_now=True, max_files=1)
    print(f"stream, {files} batches: {stream_seconds:.1f} s", flush=True)
    equal = table(work / "streamed") == table(work / "batch")
    lags = commit_lags(spark, side, work, lag_files, trigger)
    print(f"commit lags (trigger {trigger} s): {', '.join(f'{x:.1f}' for x in lags)} s", flush=True)
    tok = tokenizer("words")
    river_seconds, river_accuracy = river_run(train_docs * copies, test_docs, tok)
    print(f"River, one by one: {river_seconds:.1f} s", flush=True)
    model = nbspark.load(work / "streamed")
    predicted = model.predict([text for _, text in test_docs])
    accuracy = sum(p == label for p, (label, _) in zip(predicted, test_docs)) / len(test_docs)
    return {
        "documents": n_docs,
        "megabytes": round(size / 1e6, 1),
        "files": files,
        "batch_seconds": round(batch_seconds, 2),
        "stream_seconds": round(stream_seconds, 2),
        "throughput_ratio": round(batch_seconds / stream_seconds, 3),
        "trigger_seconds": trigger,
        "median_commit_lag_seconds": round(statistics.median(lags), 2),
        "tables_equal": equal,
        "river_seconds": round(river_seconds, 2),
        "ratio_vs_river": round(river_seconds / stream_seconds, 2),
        "accuracy_nbspark": round(accuracy, 4),
        "accuracy_river": round(river_accuracy, 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=50)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--lag-files", type=int, default=5)
    parser.add_argument("--trigger", type=float, default=2.0)
    parser.add_argument("--data-dir")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument(
        "--bounded",
        type=int,
        metavar="N",
        help="only the memory check: N one-file batches over a fixed vocabulary",
    )
    parser.add_argument("--compact-every", type=int, default=50)
    parser.add_argument(
        "--vocabulary", type=int, default=500, help="with --bounded: the words the documents are drawn from"
    )
    args = parser.parse_args()
    if args.bounded:
        work = Path(tempfile.mkdtemp(prefix="nbspark-bench-stream-"))
        try:
            spark = get_spark(  # as the stream command's session is
                "nbspark-bench-stream",
                {"spark.master": args.master, "spark.ui.enabled": "false", **SESSION_DEFAULTS},
            )
            result = bounded(spark, work, args.bounded, args.compact_every, args.vocabulary)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(json.dumps(result, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        return 0
    train_docs, test_docs = load_stories(resolve_data_dir("reuters21578", args.data_dir))
    work = Path(tempfile.mkdtemp(prefix="nbspark-bench-stream-"))
    try:
        spark = get_spark(
            "nbspark-bench-stream",
            {"spark.master": args.master, "spark.ui.enabled": "false", **SESSION_DEFAULTS},
        )
        result = measure(
            spark, train_docs, test_docs, work, args.copies, args.files, args.lag_files, args.trigger
        )
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["tables_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
