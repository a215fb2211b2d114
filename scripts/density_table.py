"""Write a real categorical table for density work: scikit-learn's bundled breast cancer data
(569 tumours, no download), six measurements binned into terciles (low/mid/high, cut at the
training rows' 1/3 and 2/3 quantiles) and the diagnosis, split 80/20 by a seeded hash of the row's
number (``inputs.parsers.holdout_part``) into ``OUT/train.csv`` and ``OUT/test.csv``.

    python scripts/density_table.py out/cancer
    nbspark curve --set task=density --set train.format=csv --set train.path=$PWD/out/cancer/train.csv \\
        --set test.format=csv --set test.path=$PWD/out/cancer/test.csv --set density.m=1 \\
        --out out/cancer/curve
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nbspark.inputs.parsers import holdout_part

FEATURES = ("mean radius", "mean texture", "mean smoothness", "mean concavity", "mean symmetry", "worst area")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="directory to write train.csv and test.csv into")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    names = list(data.feature_names)
    part = np.array([holdout_part(str(i), args.seed, 0.2) for i in range(len(data.target))])
    train = part == "train"
    columns = [names.index(f) for f in FEATURES]
    cells = []
    for j in columns:
        low, high = np.quantile(data.data[train, j], [1 / 3, 2 / 3])
        cells.append(
            np.where(data.data[:, j] <= low, "low", np.where(data.data[:, j] <= high, "mid", "high"))
        )
    diagnosis = np.array(data.target_names)[data.target]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    header = [f.replace(" ", "_") for f in FEATURES] + ["diagnosis"]
    for name, keep in (("train", train), ("test", ~train)):
        with open(out / f"{name}.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            for i in np.flatnonzero(keep):
                writer.writerow([c[i] for c in cells] + [diagnosis[i]])
        print(f"{out / (name + '.csv')}: {int(keep.sum())} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
