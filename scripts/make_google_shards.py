"""Write synthetic Google Books 5-gram shards in the real formats, for scale tests.

    python scripts/make_google_shards.py OUT_DIR --version 3 --shards 4 --lines-per-shard 250000

Each shard is gzip text exactly as Google ships it: version 2 (``googlebooks-eng-all-5gram-
20120701-XX.gz``: ``ngram TAB year TAB match_count TAB volume_count``, a line per year) or
version 3 (``5-NNNNN-of-NNNNN.gz``: ``ngram TAB year,match,volume TAB ...``). Words are drawn
from a Zipf-like vocabulary with part-of-speech suffixes on some; a share of the n-grams
(``--centred``) has a confusion-set word in the middle, so the filter in the map has work to do.
Seeded: the same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
from pathlib import Path

WORDS = [f"w{i}" for i in range(5000)] + [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "not",
    "no",
    "cumulative",
    "adverse",
]
TAGS = ["NOUN", "VERB", "ADJ", "ADV", "DET", "ADP"]


def word(rng: random.Random) -> str:
    """A heavy-tailed draw: a few words very common, most rare."""
    return WORDS[(int(rng.paretovariate(0.8)) - 1) % len(WORDS)]


def ngram(rng: random.Random, centre: str | None) -> str:
    words = [word(rng) for _ in range(5)]
    if centre:
        words[2] = centre
    words = [f"{w}_{rng.choice(TAGS)}" if rng.random() < 0.05 else w for w in words]
    return " ".join(words)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--version", type=int, choices=(2, 3), default=3)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--lines-per-shard", type=int, default=100_000, help="n-grams per shard")
    parser.add_argument(
        "--centred", type=float, default=0.2, help="share of n-grams centred on affect/effect"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    total_bytes = 0
    for shard in range(args.shards):
        rng = random.Random(f"{args.seed}:{shard}")
        name = (
            f"googlebooks-eng-all-5gram-20120701-{shard:02d}.gz"
            if args.version == 2
            else f"5-{shard:05d}-of-{args.shards:05d}.gz"
        )
        path = args.out / name
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as fh:
            for _ in range(args.lines_per_shard):
                r = rng.random()
                centre = ("effect" if r < args.centred * 0.8 else "affect") if r < args.centred else None
                text = ngram(rng, centre)
                first = rng.randint(1800, 2000)
                years = [
                    (y, rng.randint(1, 60), rng.randint(1, 9))
                    for y in range(first, first + rng.randint(1, 8))
                ]
                if args.version == 2:
                    fh.writelines(f"{text}\t{y}\t{m}\t{v}\n" for y, m, v in years)
                else:
                    fh.write(text + "\t" + "\t".join(f"{y},{m},{v}" for y, m, v in years) + "\n")
        total_bytes += path.stat().st_size
    print(
        f"wrote {args.shards} version-{args.version} shards, {args.shards * args.lines_per_shard:,} "
        f"n-grams, {total_bytes / 1e6:.1f} MB gzip, to {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
