"""nbspark against MLlib, scikit-learn and plain Python on the same work, in one process.

    python scripts/bench.py [--scales 1,10,50] [--repeat 3] [--warmup 1] [--master local[2]] [--json FILE]

Workload: Reuters-21578 ModApte top-10 (``conf/experiments/reuters_top10.toml``'s documents:
title + dateline + body; tokens are lower-cased runs of Unicode word characters), multinomial
naive Bayes, add-one. The training text (6,376 stories, 4.8 MB as ``label TAB text`` lines) is
written ``--scales`` times over (×N: the same stories N times, one file) and trained on; the
2,499 test stories are classified for accuracy, and the ×10 training text is scored as a large
test set for classification throughput. Every contender sees the same files and features:

* nbspark: ``train_nb`` with the ``arrow`` counting engine (``--engine``), then ``classify_nb``
  with ``arrow`` scoring (``--scoring``), predictions and metrics written as the job does, and
  that scorer alone on a loaded model;
* MLlib: RegexTokenizer(``(?U)\\W+``) + CountVectorizer + StringIndexer + NaiveBayes, fit, and
  transform + count;
* scikit-learn: CountVectorizer(token_pattern ``(?u)\\w+``) + MultinomialNB, fit and predict,
  one core;
* plain Python: a Counter per class, one process (the ×1 and ×10 scales only unless
  ``--python-all``), and a per-token dictionary loop for scoring.

Classification is timed two ways on the ×10 text: scoring alone, as MLlib's ``transform`` is
timed (the model in memory, the predictions forced by a sum), and the whole ``classify`` job
as users run it (the model read from disk, predictions written as Parquet, metrics).

The affect/effect task is benchmarked too (``--books-scales``): Google Books 5-grams
(``aeffect/aeffect-train.txt``, 49,413 lines) written N times over, counted by
``backoff.jobs.train`` with the ``arrow`` (the default), ``combine`` and the card's literal
``pairs`` engines, against a
plain-Python Counter over the same events in one process; each model classifies the Reuters
affect/effect windows, and the accuracy must not move with N (the counts only scale).

At each scale the contenders run in rounds, each once a round: ``--warmup`` untimed rounds
(default 1), then ``--repeat`` timed ones, so that none pays the process's one-off costs for
another (a fresh JVM's JIT compiles Spark for minutes: one contender's runs timed after another's
would run in a warmer JVM). Prints a table (median and range over
``--repeat`` runs, tokens/s, peak memory, broadcast size) and the ratios nbspark/MLlib and
nbspark/scikit-learn; ``--json FILE`` writes the same,
with ``train_ratio_vs_mllib``, ``train_ratio_vs_sklearn``,
``classify_throughput_ratio_vs_mllib`` (scoring), ``classify_job_throughput_ratio_vs_mllib``
(the whole job), ``scoring_speedup_vs_loop`` for the largest scale, and ``books`` (the
affect/effect rows).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from baselines import loop_model, score_loop

from nbspark.inputs.parsers import decode_reuters, parse_reuters_sgml
from nbspark.inputs.resolve import resolve_data_dir, resolve_input
from nbspark.inputs.tokens import tokenizer
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.naive_bayes.inputs import REUTERS_TOP10
from nbspark.naive_bayes.jobs import classify_nb, load_nb_manifest, train_nb
from nbspark.naive_bayes.model import build_nb_model, log_posteriors, score_docs
from nbspark.naive_bayes.scoring import BATCH, score
from nbspark.settings.config import load_config
from nbspark.spark.session import get_spark
from nbspark.spine.training import read_counts
from nbspark.storage.counts import read_count_table

ROOT = Path(__file__).resolve().parent.parent


def load_stories(data_dir: Path):
    train, test = [], []
    for f in sorted(glob.glob(str(data_dir / "reuters21578" / "reut2-*.sgm"))):
        for s in parse_reuters_sgml(decode_reuters(Path(f).read_bytes(), f)):
            if (
                s.topics_attr == "YES"
                and s.topics
                and s.topics[0] in REUTERS_TOP10
                and s.lewissplit in ("TRAIN", "TEST")
            ):
                text = s.text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
                (train if s.lewissplit == "TRAIN" else test).append((s.topics[0], text))
    return train, test


def write_lines(path: Path, docs, copies: int = 1, ids: bool = False) -> int:
    """``label TAB text`` lines (the sms format), or with ``ids`` ``id TAB label TAB text`` (tsv: the
    test files, whose predictions are named by their ids)."""
    with open(path, "w", encoding="utf-8") as fh:
        for copy in range(copies):
            if ids:
                fh.writelines(f"d{copy}.{i}\t{label}\t{text}\n" for i, (label, text) in enumerate(docs))
            else:
                fh.writelines(f"{label}\t{text}\n" for label, text in docs)
    return path.stat().st_size


WARMUP = 1  # untimed runs before each timed series (--warmup)


def timed(fn, repeat: int, warmup: int | None = None):
    """``fn()``'s last result and the median and range of ``repeat`` timed runs, after ``warmup``
    untimed ones (default ``WARMUP``): each contender's first run in a process pays one-off costs
    (the JVM's JIT and class loading, Python workers, imports) that whoever runs second would
    otherwise be spared."""
    for _ in range(WARMUP if warmup is None else warmup):
        fn()
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, timing(times)


def timing(times: list[float]) -> dict:
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "runs": len(times),
    }


def interleaved(steps, repeat: int, warmup: int | None = None) -> dict:
    """``{name: (its last result, timing)}`` for each named step of ``steps`` (``(name, fn)``; a
    step named ``None`` runs untimed, to prepare the steps after it), run in rounds: ``warmup``
    untimed rounds (default ``WARMUP``), then ``repeat`` timed ones, each step once a round.

    In rounds, not each contender's runs one series after another, because a fresh JVM's JIT goes
    on compiling Spark for minutes and the series that ran first paid for it: HotSpot's compiler
    threads took 2.1, 1.4 and 1.3 CPU-s of nbspark's first ×50 train runs (on 2 cores), and
    0.6 to 0.7 CPU-s once MLlib's fits had run."""
    warmup = WARMUP if warmup is None else warmup
    results, times = {}, {name: [] for name, _ in steps if name}
    for n in range(warmup + repeat):
        for name, fn in steps:
            start = time.perf_counter()
            results[name] = fn()
            if name and n >= warmup:
                times[name].append(time.perf_counter() - start)
    return {name: (results[name], timing(t)) for name, t in times.items()}


def jvm_heap_mb(spark) -> float:
    bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getMemoryMXBean()
    return bean.getHeapMemoryUsage().getUsed() / 2**20


def main(argv=None, spark=None) -> int:
    """The command; ``spark``: a session to measure in (the tests'), left running, else one of its
    own (``--master``), stopped at the end."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers: this interpreter
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir")
    parser.add_argument("--scales", default="1,10,50")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed runs of each contender before its timed ones (default 1)",
    )
    parser.add_argument(
        "--master", default="local[2]", help="the benchmark's Spark master (default local[2])"
    )
    parser.add_argument("--engine", default="arrow", choices=("pairs", "combine", "dataframe", "arrow"))
    parser.add_argument("--scoring", default="arrow", choices=("broadcast", "join", "arrow"))
    parser.add_argument(
        "--python-all", action="store_true", help="run the plain-Python trainer at every scale"
    )
    parser.add_argument(
        "--test-copies",
        type=int,
        default=10,
        help="the training text scored as a large test set, this many times over (default 10)",
    )
    parser.add_argument(
        "--books-scales",
        default="1,10,50",
        help="affect/effect: the Books 5-grams this many times over ('' to skip)",
    )
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    global WARMUP
    WARMUP = args.warmup
    scales = sorted({int(x) for x in args.scales.split(",")})
    data_dir = resolve_data_dir("reuters21578", args.data_dir)
    train_docs, test_docs = load_stories(data_dir)
    tok = tokenizer("words")
    test_tokens = [tok(t) for _, t in test_docs]
    test_gold = np.array([label for label, _ in test_docs])
    work = Path(tempfile.mkdtemp(prefix="nbspark-bench-"))
    own_session = spark is None
    spark = spark or get_spark(
        "nbspark-bench",
        {
            "spark.master": args.master,
            "spark.ui.enabled": "false",
            "spark.log.level": "ERROR",
            "spark.sql.shuffle.partitions": "8",
            "spark.ui.showConsoleProgress": "false",
        },
    )
    from pyspark.ml import Pipeline
    from pyspark.ml.classification import NaiveBayes
    from pyspark.ml.feature import CountVectorizer, RegexTokenizer, StringIndexer
    from pyspark.sql import functions as F
    from sklearn.feature_extraction.text import CountVectorizer as SkCountVectorizer
    from sklearn.naive_bayes import MultinomialNB

    def as_df(path):
        ids = path.suffix == ".tsv"  # the test files: id TAB label TAB text
        parts = F.split("value", "\t", 3 if ids else 2)
        return spark.read.text(str(path)).select(
            F.get(parts, int(ids)).alias("label"), F.get(parts, int(ids) + 1).alias("text")
        )

    test_path = work / "test.tsv"
    write_lines(test_path, test_docs, ids=True)
    big_test = work / "test_big.tsv"
    write_lines(big_test, train_docs, args.test_copies, ids=True)
    big_test_docs = args.test_copies * len(train_docs)
    results = []
    try:
        for scale in scales:
            train_path = work / f"train_x{scale}.sms"
            size = write_lines(train_path, train_docs, scale)
            n_tokens = scale * sum(len(tok(t)) for _, t in train_docs)
            row = {
                "scale": scale,
                "train_bytes": size,
                "train_docs": scale * len(train_docs),
                "train_tokens": n_tokens,
            }
            print(
                f"\n×{scale}: {row['train_docs']:,} documents, {size / 1e6:.1f} MB, {n_tokens:,} tokens",
                flush=True,
            )

            # nbspark
            cfg = load_config(
                None,
                {
                    "task": "naive_bayes",
                    "nb.tokenizer": "words",
                    "engine": args.engine,
                    "train.format": "sms",
                    "train.path": str(train_path),
                    "test.format": "tsv",
                    "test.path": str(test_path),
                },
            )
            model_dir = work / "model"
            state = {}  # what a step leaves for the steps after it: models

            def nb_train():
                shutil.rmtree(model_dir, ignore_errors=True)
                return train_nb(spark, cfg, resolve_input(cfg.train, None), model_dir)

            def nb_classify(path):
                out = work / "results"
                shutil.rmtree(out, ignore_errors=True)
                run = load_config(
                    None,
                    {
                        "task": "naive_bayes",
                        "nb.tokenizer": "words",
                        "scoring": args.scoring,
                        "test.format": "tsv",
                        "test.path": str(path),
                    },
                )
                return classify_nb(spark, run, model_dir, resolve_input(run.test, None), out)

            big_run = load_config(
                None,
                {
                    "task": "naive_bayes",
                    "nb.tokenizer": "words",
                    "test.format": "tsv",
                    "test.path": str(big_test),
                },
            )

            def nb_score():
                # the scorer alone, as MLlib's transform is timed: the model loaded and broadcast
                # beforehand (untimed), the predictions forced by a sum
                scored = score(
                    spark,
                    big_run,
                    resolve_input(big_run.test, None),
                    "arrow",
                    None,
                    state["model"],
                    len(state["model"].classes),
                )
                try:
                    return scored.predictions.agg(F.sum("probability")).collect()
                finally:
                    scored.release()

            # MLlib
            pipeline = Pipeline(
                stages=[
                    StringIndexer(inputCol="label", outputCol="y"),
                    RegexTokenizer(inputCol="text", outputCol="tokens", pattern="(?U)\\W+", toLowercase=True),
                    CountVectorizer(inputCol="tokens", outputCol="features", vocabSize=1 << 20),
                    NaiveBayes(featuresCol="features", labelCol="y", smoothing=1.0, modelType="multinomial"),
                ]
            )
            train_df, big_df = as_df(train_path), as_df(big_test)

            # scikit-learn, one core
            texts = [t for _, t in train_docs] * scale
            ys = [label for label, _ in train_docs] * scale
            big_texts = [t for _, t in train_docs] * args.test_copies

            def sk_fit():
                cv = SkCountVectorizer(token_pattern=r"(?u)\w+")
                state["sklearn"] = cv, MultinomialNB(alpha=1.0).fit(cv.fit_transform(texts), ys)

            def sk_predict():
                cv, sk = state["sklearn"]
                return sk.predict(cv.transform(big_texts))

            steps = [
                ("nbspark_train", nb_train),
                (None, lambda: state.update(model=nb_model(model_dir))),
                ("nbspark_classify_test", lambda: nb_classify(test_path)),
                ("nbspark_classify_x10", lambda: nb_classify(big_test)),
                *([("nbspark_score_x10", nb_score)] if args.scoring == "arrow" else []),
                (
                    None,
                    lambda: state.update(jvm_heap_mb=jvm_heap_mb(spark)),
                ),  # after nbspark's steps, before MLlib's
                ("mllib_fit", lambda: state.update(mllib=pipeline.fit(train_df))),
                (
                    "mllib_transform_x10",
                    lambda: state["mllib"].transform(big_df).agg(F.sum("prediction")).collect(),
                ),
                ("sklearn_fit", sk_fit),
                ("sklearn_predict_x10", sk_predict),
            ]
            ran = interleaved(steps, args.repeat)
            row.update({name: t for name, (_, t) in ran.items()})
            row.setdefault("nbspark_score_x10", None)
            metrics = ran["nbspark_classify_test"][0]
            row["nbspark_accuracy"] = metrics["accuracy"]
            row["broadcast_bytes"] = metrics["broadcast_bytes"] or 0
            row["jvm_heap_mb"] = state["jvm_heap_mb"]
            labels = state["mllib"].stages[0].labels
            pred = state["mllib"].transform(as_df(test_path)).select("prediction").collect()
            row["mllib_accuracy"] = float(np.mean(np.array([labels[int(r[0])] for r in pred]) == test_gold))
            cv, sk = state["sklearn"]
            row["sklearn_accuracy"] = float(
                np.mean(sk.predict(cv.transform([t for _, t in test_docs])) == test_gold)
            )

            # plain Python
            if scale <= 10 or args.python_all:

                def py_train():
                    counts: dict[str, Counter] = {}
                    for _ in range(scale):
                        for label, text in train_docs:
                            counts.setdefault(label, Counter()).update(tok(text))
                    return counts

                _, row["python_train"] = timed(py_train, 1, 0)  # one process, nothing to warm
            row["python_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            results.append(row)
            print(format_row(row), flush=True)

        # the scorer inside one partition: sparse product vs per-token dictionary loop
        model = nb_model(work / "model")
        docs = test_tokens * 4

        def vectorised():
            return [
                int(i)
                for s in range(0, len(docs), BATCH)
                for i in log_posteriors(score_docs(model, docs[s : s + BATCH])[0]).argmax(1)
            ]

        tables = loop_model(model)

        def loop():
            out = []
            for d in docs:
                sc = score_loop(tables, d)
                out.append(model.classes.index(min(sc, key=lambda c: (-sc[c], c))))
            return out

        pv, tv = timed(vectorised, args.repeat)
        pl, tl = timed(loop, args.repeat)
        assert pv == pl, "the two scorers disagree"
        scorer = {
            "documents": len(docs),
            "vectorised": tv,
            "loop": tl,
            "speedup": tl["median_s"] / tv["median_s"],
        }
        books_scales = sorted({int(x) for x in args.books_scales.split(",") if x.strip()})
        books = bench_books(spark, work, books_scales, args.repeat, args.python_all, args.data_dir)
    finally:
        if own_session:
            spark.stop()
        shutil.rmtree(work, ignore_errors=True)

    largest = results[-1]
    summary = {
        "machine": {
            "master": args.master,
            "engine": args.engine,
            "scoring": args.scoring,
            "repeat": args.repeat,
            "warmup": args.warmup,
        },
        "rows": results,
        "scorer": scorer,
        "train_ratio_vs_mllib": largest["nbspark_train"]["median_s"] / largest["mllib_fit"]["median_s"],
        "train_ratio_vs_sklearn": largest["nbspark_train"]["median_s"] / largest["sklearn_fit"]["median_s"],
        "classify_throughput_ratio_vs_mllib": largest["mllib_transform_x10"]["median_s"]
        / (largest["nbspark_score_x10"] or largest["nbspark_classify_x10"])["median_s"],
        "classify_job_throughput_ratio_vs_mllib": largest["mllib_transform_x10"]["median_s"]
        / largest["nbspark_classify_x10"]["median_s"],
        "scoring_speedup_vs_loop": scorer["speedup"],
        "books": books,
        "growth_x1_to_largest": {
            k: largest[k]["median_s"] / results[0][k]["median_s"]
            for k in ("nbspark_train", "mllib_fit", "sklearn_fit")
        }
        if len(results) > 1
        else None,
    }
    print("\n" + format_summary(summary, big_test_docs))
    if books:
        print(format_books_summary(books))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    return 0


BOOKS_ENGINES = ("arrow", "combine", "pairs")


def nb_model(model_dir: Path):
    """The broadcast model of a naive Bayes model directory (its own smoothing), as classify builds it."""
    manifest = load_nb_manifest(model_dir)
    nb = manifest["config"]["nb"]
    return build_nb_model(
        read_count_table(model_dir, COUNT_DDL, manifest), manifest["model"], nb["alpha"], nb["var_smoothing"]
    )


def bench_books(spark, work: Path, scales, repeat: int, python_all: bool, data_dir: str | None) -> list[dict]:
    """The affect/effect task at each scale: nbspark's engines against a plain-Python count of
    the same events; the tables must be equal, the Reuters accuracy unchanged."""
    from nbspark.backoff.events import example_events, ngram_example
    from nbspark.backoff.jobs import BACKOFF, classify, train
    from nbspark.inputs.parsers import MalformedLine

    base = load_config(None, {})  # the experiment's defaults: Books 5-grams -> Reuters
    text = resolve_input(base.train, data_dir).files[0].read_text()
    test_inputs = resolve_input(base.test, data_dir)
    rows = []
    for scale in scales:
        path = work / f"books_x{scale}.txt"
        path.write_text(text * scale, encoding="utf-8")
        row = {"scale": scale, "bytes": path.stat().st_size, "lines": scale * text.count("\n")}
        print(
            f"\naffect/effect ×{scale}: {row['lines']:,} 5-gram lines, {row['bytes'] / 1e6:.1f} MB",
            flush=True,
        )
        for engine in BOOKS_ENGINES:
            cfg = load_config(None, {"train.path": str(path), "engine": engine})
            model_dir = work / f"books_model_{engine}"

            def fit():
                shutil.rmtree(model_dir, ignore_errors=True)
                return train(spark, cfg, resolve_input(cfg.train, None), model_dir)

            manifest, row[f"nbspark_{engine}"] = timed(fit, repeat)
        row["weight"] = manifest["stats"]["weight"]
        shutil.rmtree(work / "books_results", ignore_errors=True)
        arrow_model = work / "books_model_arrow"  # the default engine
        row["accuracy"] = classify(spark, cfg, arrow_model, test_inputs, work / "books_results")["accuracy"]
        if scale <= 10 or python_all:
            centres = frozenset(cfg.centres)

            def py_count():
                counts = Counter()
                with open(path, encoding="utf-8") as fh:
                    for line in fh:
                        try:
                            example = ngram_example(line.rstrip("\n"), "", centres, cfg.width, cfg.lowercase)
                        except MalformedLine:
                            continue
                        if example is not None:
                            for key, weight in example_events(example, cfg.counted_subsets, cfg.letters):
                                counts[key] += weight
                return counts

            counts, row["python"] = timed(py_count, 1, 0)  # one process, nothing to warm
            for engine in BOOKS_ENGINES:
                table = {
                    tuple(r[:-1]): r[-1]
                    for r in read_counts(spark, work / f"books_model_{engine}", BACKOFF, manifest).collect()
                }
                assert table == dict(counts), (
                    f"the {engine} engine's count table differs from the plain-Python count"
                )
            row["tables_equal_python"] = True
        rows.append(row)
        print(format_books_row(row), flush=True)
    return rows


def format_books_row(row: dict) -> str:
    lines = [f"  {'':<28}{'median (range)':>24}{'lines/s':>14}"]
    names = [(f"nbspark_{e}", f"nbspark train ({e})") for e in BOOKS_ENGINES] + [
        ("python", "plain Python count")
    ]
    for key, name in names:
        if key in row:
            lines.append(f"  {name:<28}{_t(row[key]):>24}{row['lines'] / row[key]['median_s']:>14,.0f}")
    lines.append(
        f"  weight {row['weight']:,}; Reuters accuracy {row['accuracy']:.4f}"
        + ("; table equal to plain Python's" if row.get("tables_equal_python") else "")
    )
    return "\n".join(lines)


def format_books_summary(rows: list[dict]) -> str:
    first, last = rows[0], rows[-1]
    t = {e: last[f"nbspark_{e}"]["median_s"] for e in BOOKS_ENGINES}
    out = [f"affect/effect, Books 5-grams ×{last['scale']} ({last['lines']:,} lines):"]
    if "python" in last:
        out.append(
            "  nbspark / plain Python: "
            + ", ".join(f"{e} {t[e] / last['python']['median_s']:.3f}" for e in BOOKS_ENGINES)
        )
    out.append(
        f"  arrow / pairs = {t['arrow'] / t['pairs']:.3f}, combine / pairs = {t['combine'] / t['pairs']:.3f}"
    )
    if len(rows) > 1:
        out.append(
            f"  time growth ×{first['scale']} -> ×{last['scale']}: "
            + ", ".join(f"{e} {t[e] / first[f'nbspark_{e}']['median_s']:.1f}x" for e in BOOKS_ENGINES)
        )
    out.append(
        "  Reuters accuracy by scale: " + ", ".join(f"×{r['scale']} {r['accuracy']:.4f}" for r in rows)
    )
    return "\n".join(out)


def _t(cell) -> str:
    return f"{cell['median_s']:7.2f}s ({cell['min_s']:.2f}-{cell['max_s']:.2f})" if cell else "-"


def format_row(row: dict) -> str:
    tok = row["train_tokens"]
    lines = [f"  {'':<28}{'median (range)':>24}{'tokens/s':>14}"]
    for key, name in (
        ("nbspark_train", "nbspark train"),
        ("mllib_fit", "MLlib fit"),
        ("sklearn_fit", "scikit-learn fit"),
        ("python_train", "plain Python train"),
    ):
        if key in row:
            lines.append(f"  {name:<28}{_t(row[key]):>24}{tok / row[key]['median_s']:>14,.0f}")
    for key, name in (
        ("nbspark_score_x10", "nbspark scoring ×10 text"),
        ("nbspark_classify_x10", "nbspark classify job ×10"),
        ("mllib_transform_x10", "MLlib transform ×10 text"),
        ("sklearn_predict_x10", "scikit-learn predict ×10"),
    ):
        lines.append(f"  {name:<28}{_t(row.get(key)):>24}")
    lines.append(
        f"  accuracy: nbspark {row['nbspark_accuracy']:.4f}, MLlib {row['mllib_accuracy']:.4f}, "
        f"scikit-learn {row['sklearn_accuracy']:.4f}; "
        f"broadcast {row['broadcast_bytes'] / 1e6:.1f} MB; driver: Python peak RSS "
        f"{row['python_peak_rss_mb']:.0f} MB, JVM heap used {row['jvm_heap_mb']:.0f} MB"
    )
    return "\n".join(lines)


def format_summary(s: dict, big_docs: int) -> str:
    r = s["rows"][-1]
    lines = [
        f"largest scale ×{r['scale']} on {s['machine']['master']}:",
        f"  train: nbspark / MLlib = {s['train_ratio_vs_mllib']:.3f}, nbspark / scikit-learn = "
        f"{s['train_ratio_vs_sklearn']:.3f}",
        f"  classify throughput ({big_docs:,} documents), nbspark / MLlib transform: scoring "
        f"{s['classify_throughput_ratio_vs_mllib']:.2f}x, "
        "whole job (model read, predictions written, metrics) "
        f"{s['classify_job_throughput_ratio_vs_mllib']:.2f}x",
        f"  scorer, sparse product vs per-token loop ({s['scorer']['documents']:,} documents): "
        f"{s['scoring_speedup_vs_loop']:.1f}x",
    ]
    if s["growth_x1_to_largest"]:
        g = s["growth_x1_to_largest"]
        lines.append(
            f"  time growth ×{s['rows'][0]['scale']} -> ×{r['scale']}: nbspark {g['nbspark_train']:.1f}x, "
            f"MLlib {g['mllib_fit']:.1f}x, scikit-learn {g['sklearn_fit']:.1f}x"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
