"""Gaussian naive Bayes on a table: nbspark's train against MLlib's fit, in one Spark session.

    python scripts/bench_table.py [--rows 1000000] [--repeat 3] [--warmup 1] [--master local[2]] [--json FILE]

A table of ``--rows`` rows is generated (seeded, never committed): six numeric columns, normal
around a mean that depends on a class of three, written as one CSV with a header. In one session,
in rounds (one untimed to warm the JVM, then ``--repeat`` timed, the contenders alternating within
each round):

* nbspark: ``train_nb`` with a Gaussian model (the ``combine`` engine, as ``auto`` picks for a
  table), the count table and manifest written as the job writes them;
* MLlib: the CSV read with ``inferSchema`` (as nbspark finds its numeric columns), then
  StringIndexer + VectorAssembler + ``NaiveBayes(modelType="gaussian")``, fit;

and once, nbspark in process (``train_nb_in_process``: no Spark). Both models must agree: each
class's mean and variance of each column (``models_agree``: relative difference under 1e-9).
Then, in rounds as well, each model classifies the same table: nbspark's classify job (the model
read, predictions, metrics and report written) against MLlib's ``transform`` of the CSV read with
``inferSchema``, its label, prediction and probabilities written as Parquet; their accuracies
must be equal. The nbspark model as a Pipeline stage (``CountingTableNaiveBayesModel``) transforms the
same DataFrame as MLlib's and writes the same three columns (``stage_ratio_vs_mllib``, its accuracy
equal too). Prints the medians, ``train_ratio_vs_mllib``, ``classify_ratio_vs_mllib`` and
``stage_ratio_vs_mllib`` (nbspark's seconds over MLlib's, lower is faster); ``--json`` writes them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

COLUMNS = ("a", "b", "c", "d", "e", "f")


def generate(path: Path, rows: int, seed: int = 7) -> None:
    """``rows`` rows of ``a..f,label``, written in chunks of 200,000."""
    import numpy as np

    rng = np.random.default_rng(seed)
    with path.open("w") as out:
        out.write(",".join(COLUMNS) + ",label\n")
        done = 0
        while done < rows:
            n = min(200_000, rows - done)
            label = rng.integers(0, 3, n)
            x = rng.normal(size=(n, len(COLUMNS))) * (1 + label[:, None]) + label[:, None] * 0.5
            out.writelines(",".join(f"{v:.6g}" for v in x[j]) + f",y{label[j]}\n" for j in range(n))
            done += n


def mllib_fit(spark, table: Path):
    from pyspark.ml import Pipeline
    from pyspark.ml.classification import NaiveBayes
    from pyspark.ml.feature import StringIndexer, VectorAssembler

    df = spark.read.csv(str(table), header=True, inferSchema=True)
    stages = [
        StringIndexer(inputCol="label", outputCol="y"),
        VectorAssembler(inputCols=list(COLUMNS), outputCol="x"),
        NaiveBayes(featuresCol="x", labelCol="y", modelType="gaussian"),
    ]
    return Pipeline(stages=stages).fit(df)


def agree(model_dir: Path, fitted) -> bool:
    """Each class's mean and variance of each column, nbspark's against MLlib's: both smooth the
    variances as scikit-learn does (``1e-9`` times the largest variance of a column)."""
    import numpy as np

    import nbspark

    ours = nbspark.load(model_dir)
    labels = list(fitted.stages[0].labels)
    nb = fitted.stages[-1]
    order = [labels.index(c) for c in ours.classes_]
    theta, sigma = nb.theta.toArray()[order], nb.sigma.toArray()[order]
    return bool(np.allclose(ours.theta_, theta, rtol=1e-9, atol=1e-12)) and bool(
        np.allclose(ours.var_, sigma, rtol=1e-9)
    )


def rounds(runs: dict, repeat: int, warmup: int = 1) -> dict[str, list[float]]:
    """Each of ``runs`` (``name -> run(round)``) once a round: ``warmup`` rounds untimed (they warm
    the JVM), then ``repeat`` timed rounds; the seconds of each timed run."""
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for k in range(warmup + repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            run(k)
            if k >= warmup:
                seconds[name].append(time.perf_counter() - start)
    return seconds


def accuracy_of(spark, written: Path, labels) -> float:
    """The share of rows whose prediction (a class's index into ``labels``: MLlib's indexer's, or the
    stage's classes) names its label."""
    from pyspark.sql import functions as F

    labels = F.array(*[F.lit(str(x)) for x in labels])
    right = F.element_at(labels, F.col("prediction").cast("int") + 1) == F.col("label")
    return spark.read.parquet(str(written)).agg(F.avg(right.cast("double"))).first()[0]


def measure(spark, table: Path, work: Path, repeat: int = 3, warmup: int = 1) -> dict:
    """The rounds of training and classifying ``table`` (``generate``'s) in the session ``spark``,
    and nbspark's training in process: the result's figures (``main`` adds the table's size)."""
    import nbspark
    from nbspark.inputs.resolve import resolve_input
    from nbspark.naive_bayes.jobs import classify_nb, train_nb, train_nb_in_process
    from nbspark.settings.config import load_config

    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "gaussian",
            "nb.label_column": "label",
            "train.format": "csv",
            "train.path": str(table),
        },
    )
    test = load_config(
        None,
        {"task": "naive_bayes", "nb.label_column": "label", "test.format": "csv", "test.path": str(table)},
    )
    fitted = mllib_fit(spark, table)
    last = warmup + repeat - 1

    def classified(k: int) -> None:
        classify_nb(spark, test, work / f"nb-{last}", resolve_input(test.test, None), work / f"out-{k}")

    def transformed(k: int) -> None:
        df = spark.read.csv(str(table), header=True, inferSchema=True)
        written = fitted.transform(df).select("label", "prediction", "probability")
        written.write.parquet(str(work / f"mllib-out-{k}"))

    seconds = rounds(
        {
            "nbspark": lambda k: train_nb(spark, cfg, resolve_input(cfg.train, None), work / f"nb-{k}"),
            "mllib": lambda k: mllib_fit(spark, table),
        },
        repeat,
        warmup,
    )

    def staged(k: int) -> None:  # the model as a Pipeline stage, on the DataFrame MLlib transforms
        from nbspark.ml import CountingTableNaiveBayesModel

        stage = CountingTableNaiveBayesModel.fromModelDir(str(work / f"nb-{last}"))
        df = spark.read.csv(str(table), header=True, inferSchema=True)
        stage.transform(df).select("label", "prediction", "probability").write.parquet(
            str(work / f"stage-{k}")
        )

    seconds |= rounds(
        {"nbspark_classify": classified, "mllib_transform": transformed, "stage_transform": staged},
        repeat,
        warmup,
    )
    agreed = agree(work / f"nb-{last}", fitted)
    accuracy = {
        "nbspark": json.loads((work / f"out-{last}" / "metrics.json").read_text())["accuracy"],
        "mllib": accuracy_of(spark, work / f"mllib-out-{last}", fitted.stages[0].labels),
        "stage": accuracy_of(spark, work / f"stage-{last}", nbspark.load(work / f"nb-{last}").classes_),
    }
    start = time.perf_counter()
    train_nb_in_process(cfg, work / "local")
    in_process = time.perf_counter() - start
    median = {name: statistics.median(s) for name, s in seconds.items()}
    return {
        "nbspark_seconds": round(median["nbspark"], 2),
        "mllib_seconds": round(median["mllib"], 2),
        "nbspark_runs": [round(s, 2) for s in seconds["nbspark"]],
        "mllib_runs": [round(s, 2) for s in seconds["mllib"]],
        "in_process_seconds": round(in_process, 2),
        "train_ratio_vs_mllib": round(median["nbspark"] / median["mllib"], 3),
        "models_agree": agreed,
        "classify_seconds": round(median["nbspark_classify"], 2),
        "mllib_transform_seconds": round(median["mllib_transform"], 2),
        "classify_ratio_vs_mllib": round(median["nbspark_classify"] / median["mllib_transform"], 3),
        "accuracy_nbspark": accuracy["nbspark"],
        "accuracy_mllib": accuracy["mllib"],
        "stage_transform_seconds": round(median["stage_transform"], 2),
        "stage_ratio_vs_mllib": round(median["stage_transform"] / median["mllib_transform"], 3),
        "accuracy_stage": accuracy["stage"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from nbspark.spark.session import get_spark

    work = Path(tempfile.mkdtemp(prefix="bench-table-"))
    try:
        table = work / "table.csv"
        started = time.perf_counter()
        generate(table, args.rows)
        size = table.stat().st_size / 1e6
        print(f"{args.rows:,} rows generated in {time.perf_counter() - started:.1f} s ({size:.0f} MB)")
        spark = get_spark(
            "bench-table", {"spark.master": args.master, "spark.ui.showConsoleProgress": "false"}
        )
        measured = measure(spark, table, work, args.repeat, args.warmup)
        spark.stop()
        result = {"rows": args.rows, "megabytes": round(size, 1), "master": args.master, **measured}
        accuracy = {"nbspark": result["accuracy_nbspark"], "mllib": result["accuracy_mllib"]}
        print(
            f"Gaussian naive Bayes, {args.rows:,} rows × {len(COLUMNS)} columns on {args.master}: "
            f"nbspark {result['nbspark_seconds']} s, MLlib {result['mllib_seconds']} s (medians of "
            f"{args.repeat}), nbspark / MLlib = {result['train_ratio_vs_mllib']}; in process "
            f"{result['in_process_seconds']} s; models agree: {result['models_agree']}\n"
            f"classify (the job: model read, predictions and metrics written) {result['classify_seconds']} "
            f"s, MLlib transform (predictions written) {result['mllib_transform_seconds']} s: nbspark / "
            f"MLlib = {result['classify_ratio_vs_mllib']}; accuracy {accuracy['nbspark']:.4f} and "
            f"{accuracy['mllib']:.4f}\n"
            f"the model as a Pipeline stage (CountingTableNaiveBayesModel) transform "
            f"{result['stage_transform_seconds']} s: stage / MLlib = {result['stage_ratio_vs_mllib']}; "
            f"accuracy {result['accuracy_stage']:.4f}"
        )
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
