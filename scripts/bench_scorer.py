"""Benchmark: the vectorised naive Bayes scorer against a per-token dictionary loop.

Both score the same partition's documents with the same model (Reuters-21578 ModApte top-10,
multinomial, add-one, the ``words`` tokenizer) in this one process, without Spark: the work a
classify task does inside ``mapPartitions``. Prints the median of --repeat runs of each, the
ratio, and checks that both give the same predictions.

    python scripts/bench_scorer.py [--data-dir DIR] [--copies N] [--repeat R] [--json FILE]
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
import time
from pathlib import Path

from baselines import loop_model, score_loop

from nbspark.inputs.parsers import decode_reuters, parse_reuters_sgml
from nbspark.inputs.resolve import resolve_data_dir
from nbspark.inputs.tokens import tokenizer
from nbspark.naive_bayes.events import add_values, doc_events, event_row
from nbspark.naive_bayes.inputs import REUTERS_TOP10
from nbspark.naive_bayes.model import build_nb_model, log_posteriors, score_docs
from nbspark.naive_bayes.scoring import BATCH


def load(data_dir):
    tok = tokenizer("words")
    train, test = [], []
    for f in sorted(glob.glob(str(data_dir / "reuters21578" / "reut2-*.sgm"))):
        for s in parse_reuters_sgml(decode_reuters(Path(f).read_bytes(), f)):
            if (
                s.topics_attr == "YES"
                and s.topics
                and s.topics[0] in REUTERS_TOP10
                and s.lewissplit in ("TRAIN", "TEST")
            ):
                (train if s.lewissplit == "TRAIN" else test).append(((s.topics[0],), tok(s.text)))
    return train, test


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir")
    parser.add_argument(
        "--copies", type=int, default=4, help="the test set repeated N times as one partition (default 4)"
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    data_dir = resolve_data_dir("reuters21578", args.data_dir)
    train, test = load(data_dir)
    table = {}
    for labels, toks in train:
        for key, value in doc_events(labels, toks, "multinomial"):
            table[key] = add_values(table[key], value) if key in table else value
    model = build_nb_model([event_row(k, v) for k, v in table.items()], "multinomial", 1.0)
    tables = loop_model(model)
    docs = [toks for _, toks in test] * args.copies
    tokens = sum(map(len, docs))

    def vectorised():
        preds = []
        for i in range(0, len(docs), BATCH):
            jll, _ = score_docs(model, docs[i : i + BATCH])
            preds.extend(log_posteriors(jll).argmax(axis=1).tolist())
        return [model.classes[p] for p in preds]

    def loop():
        out = []
        for toks in docs:
            scores = score_loop(tables, toks)
            out.append(min(scores, key=lambda c: (-scores[c], c)))
        return out

    pv, tv = timed(vectorised, args.repeat)
    pl, tl = timed(loop, args.repeat)
    if pv != pl:
        print("predictions differ between the scorers", file=sys.stderr)
        return 1
    mv, ml = statistics.median(tv), statistics.median(tl)
    result = {
        "documents": len(docs),
        "tokens": tokens,
        "classes": len(model.classes),
        "vocabulary": len(model.vocab),
        "vectorised_s": mv,
        "loop_s": ml,
        "vectorised_tokens_per_s": tokens / mv,
        "loop_tokens_per_s": tokens / ml,
        "scoring_speedup_vs_loop": ml / mv,
    }
    print(
        f"{len(docs):,} documents, {tokens:,} tokens, {len(model.classes)} classes, |V| = "
        f"{len(model.vocab):,}; median of {args.repeat}"
    )
    print(f"{'scorer':<28}{'seconds':>10}{'tokens/s':>14}")
    print(
        f"{'sparse product (nbspark)':<28}{mv:>10.3f}{tokens / mv:>14,.0f}   range "
        f"{min(tv):.3f}-{max(tv):.3f}"
    )
    print(
        f"{'per-token dictionary loop':<28}{ml:>10.3f}{tokens / ml:>14,.0f}   range "
        f"{min(tl):.3f}-{max(tl):.3f}"
    )
    print(f"speed-up: {ml / mv:.1f}x (same predictions)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
