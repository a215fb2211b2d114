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
import sys
import tempfile
from pathlib import Path

from nbspark.config import DEFAULT, load_config
from nbspark.corpora import decode_reuters, parse_reuters_sgml
from nbspark.events import context_letters, story_examples
from nbspark.pipeline import read_counts, resolve_input, train
from nbspark.session import get_spark
from nbspark.strategies import CountTables, all_subsets, evaluate, order_by_dev_accuracy

THRESHOLDS = (1, 3, 10, 30, 100, 300, 1000, 3000, 10000)


def reuters_windows(data_dir: Path, cfg):
    splits = {"TRAIN": [], "TEST": []}
    for f in sorted(glob.glob(str(data_dir / "reuters21578" / "reut2-*.sgm"))):
        for story in parse_reuters_sgml(decode_reuters(Path(f).read_bytes())):
            if story.lewissplit in splits:
                splits[story.lewissplit] += [e.window for e in story_examples(story, cfg.centres, cfg.width, cfg.lowercase)]
    return splits["TRAIN"], splits["TEST"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config")
    parser.add_argument("--data-dir")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    base = load_config(args.config) if args.config else DEFAULT
    context = context_letters(base.letters)
    cfg = load_config(args.config, {"extra_subsets": ",".join(all_subsets(context))})
    inputs = resolve_input(cfg.train, args.data_dir)
    data_dir = Path(args.data_dir) if args.data_dir else inputs.root.parents[len(Path(cfg.train.path).parts) - 1]
    dev, test = reuters_windows(data_dir, cfg)
    spark = get_spark("nbspark-compare-backoff", {"spark.log.level": "WARN"})
    try:
        with tempfile.TemporaryDirectory() as tmp:
            manifest = train(spark, cfg, inputs, Path(tmp) / "model", log=lambda *_: None)
            rows = read_counts(spark, Path(tmp) / "model", manifest).collect()
    finally:
        spark.stop()
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
    results = {name: {"dev": evaluate(fn, dev), "test": evaluate(fn, test)} for name, fn in strategies.items()}
    winner = max(results, key=lambda n: (results[n]["dev"], n == "cohen_chain"))
    print(f"train: {cfg.train.format} {inputs.root}; dev: {len(dev)} Reuters TRAIN windows; test: {len(test)} Reuters TEST windows")
    print(f"{'strategy':<34}{'dev':>8}{'test':>8}")
    for name, r in results.items():
        print(f"{name:<34}{r['dev']:>8.4f}{r['test']:>8.4f}{'   <- best on dev' if name == winner else ''}")
    print(f"min-count thresholds on dev: " + ", ".join(f"{k}: {a:.4f}" for k, a in dev_k.items()))
    print(f"dev order of the subsets: {' -> '.join(s or '∅' for s in order)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "winner": winner, "thresholds_dev": dev_k, "order": order}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
