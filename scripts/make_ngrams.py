"""Write a larger n-gram file (``w1 w2 w3 w4 w5 TAB count``) from a real one, for the in-process bound.

    python scripts/make_ngrams.py OUT --mb 64 [--data-dir ../shared/data]

The Books affect/effect 5-grams (``aeffect/aeffect-train.txt``) are written over and over until the
file would pass ``--mb`` megabytes (10^6 bytes), each copy's first and last words suffixed with the
copy's number, so every copy's five-token lines are distinct n-grams with the real centres,
contexts and counts (lines that do not split into five tokens are kept as they are: malformed, as
in the real file). The same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--mb", type=float, default=64.0, help="the file's size at most, in 10^6 bytes")
    parser.add_argument("--data-dir", default="../shared/data")
    args = parser.parse_args()
    lines = (Path(args.data_dir) / "aeffect" / "aeffect-train.txt").read_text(encoding="utf-8").splitlines()
    limit, size, copy = args.mb * 1e6, 0, 0
    with args.out.open("w", encoding="utf-8") as out:
        while True:
            for line in lines:
                gram, tab, count = line.partition("\t")
                tokens = gram.split(" ")
                if len(tokens) == 5:
                    tokens[0], tokens[4] = f"{tokens[0]}{copy}", f"{tokens[4]}{copy}"
                text = f"{' '.join(tokens)}{tab}{count}\n"
                if size + len(text.encode("utf-8")) > limit:
                    print(f"{args.out}: {size:,} bytes, {copy} whole copies and part of one")
                    return 0
                out.write(text)
                size += len(text.encode("utf-8"))
            copy += 1


if __name__ == "__main__":
    raise SystemExit(main())
