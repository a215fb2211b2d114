"""Compare Cohen's backoff chain with principled alternatives, tuned on held-out data.

    python scripts/compare_backoff.py [--config TOML] [--data-dir DIR] [--json FILE]

Trains the experiment's training data on Spark once, counting every context subset (all 15,
plus the empty one), then scores the Reuters-21578 affect/effect windows of the LEWISSPLIT=TRAIN
stories (development: where thresholds and orders are chosen) and of the TEST stories (held
out: where the strategies are compared) with:

* Cohen's chain ABDE -> ABD -> BD -> B -> ∅ (the default);
* the same chain with a minimum context count before a level is trusted (k tuned on dev);
* all 15 subsets ordered by development accuracy;
* naive Bayes over the four context positions.

The master comes from PYSPARK_SUBMIT_ARGS (or spark-submit); default local[*].
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tempfile
from pathlib import Path

from nbspark.backoff.events import context_letters, story_examples
from nbspark.backoff.jobs import BACKOFF, train
from nbspark.backoff.strategies import CountTables, all_subsets, evaluate, order_by_dev_accuracy
from nbspark.inputs.parsers import decode_reuters, parse_reuters_sgml
from nbspark.inputs.resolve import resolve_data_dir, resolve_input
from nbspark.settings.config import DEFAULT, load_config
from nbspark.spark.session import get_spark
from nbspark.spine.training import read_counts

THRESHOLDS = (1, 3, 10, 30, 100, 300, 1000, 3000, 10000)


def reuters_windows(data_dir: Path, cfg):
    splits = {"TRAIN": [], "TEST": []}
    for f in sorted(glob.glob(str(data_dir / "reuters21578" / "reut2-*.sgm"))):
        for story in parse_reuters_sgml(decode_reuters(Path(f).read_bytes(), str(f))):
            if story.lewissplit in splits:
                splits[story.lewissplit] += [
                    e.window for e in story_examples(story, cfg.centres, cfg.width, cfg.lowercase)
                ]
    return splits["TRAIN"], splits["TEST"]


def compare(spark, config: str | None = None, data_dir: str | None = None) -> dict:
    """Train once with every subset counted, tune on dev, score dev and test; the result table."""
    base = load_config(config) if config else DEFAULT
    context = context_letters(base.letters)
    cfg = load_config(config, {"extra_subsets": ",".join(all_subsets(context))})
    inputs = resolve_input(cfg.train, data_dir)
    root = Path(str(resolve_data_dir(cfg.train.path, data_dir)))
    dev, test = reuters_windows(root, cfg)
    with tempfile.TemporaryDirectory() as tmp:
        manifest = train(spark, cfg, inputs, Path(tmp) / "model")
        rows = read_counts(spark, Path(tmp) / "model", BACKOFF, manifest).collect()
    tables = CountTables(rows, cfg.letters)
    chain = list(base.backoff)
    dev_k = {k: evaluate(lambda w, k=k: tables.chain(w, chain, k)[0], dev) for k in THRESHOLDS}
    best_k = min(dev_k, key=lambda k: (-dev_k[k], k))
    order = order_by_dev_accuracy(tables, dev, all_subsets(context))
    strategies = {
        "cohen_chain": lambda w: tables.chain(w, chain)[0],
        f"chain_min_count_{best_k}": lambda w: tables.chain(w, chain, best_k)[0],
        "all_subsets_by_dev_accuracy": lambda w: tables.chain(w, order)[0],
        "naive_bayes_positions": tables.naive_bayes,
    }
    results = {
        name: {"dev": evaluate(fn, dev), "test": evaluate(fn, test)} for name, fn in strategies.items()
    }
    return {
        "train": str(inputs.root),
        "dev_windows": len(dev),
        "test_windows": len(test),
        "results": results,
        "best_on_dev": max(results, key=lambda n: (results[n]["dev"], n == "cohen_chain")),
        "best_on_test": max(results, key=lambda n: (results[n]["test"], n == "cohen_chain")),
        "thresholds_dev": dev_k,
        "order": order,
    }


def main(argv=None) -> int:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers: this interpreter
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config")
    parser.add_argument("--data-dir")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    spark = get_spark("nbspark-compare-backoff", {"spark.log.level": "WARN"})
    try:
        out = compare(spark, args.config, args.data_dir)
    finally:
        spark.stop()
    print(
        f"train: {out['train']}; dev: {out['dev_windows']} Reuters TRAIN windows; test: "
        f"{out['test_windows']} Reuters TEST windows"
    )
    print(f"{'strategy':<34}{'dev':>8}{'test':>8}")
    for name, r in out["results"].items():
        marks = [
            m
            for m, key in (("best on dev", "best_on_dev"), ("best on test", "best_on_test"))
            if out[key] == name
        ]
        print(f"{name:<34}{r['dev']:>8.4f}{r['test']:>8.4f}   {', '.join(marks)}")
    print(
        "min-count thresholds on dev: " + ", ".join(f"{k}: {a:.4f}" for k, a in out["thresholds_dev"].items())
    )
    print(f"dev order of the subsets: {' -> '.join(s or '∅' for s in out['order'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
