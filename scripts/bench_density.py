"""The density counting pass against the naive Bayes train of the same table, in one Spark session.

    python scripts/bench_density.py [--rows 10000000] [--master local[2]] [--json FILE]

A table of ``--rows`` rows is generated (seeded, never committed): four categorical columns of 3
to 12 values and a class of 3, drawn so that the columns depend on the class, written as one CSV.
Then, in one session, each once untimed (the JVM warms up) and then timed: ``train_density`` (the
joint and the marginals of the four columns and the class) and ``train_nb`` with a categorical
model (the class column as the label), both with Spark. Prints both times and
``density_over_nb``, the density pass's time over the naive Bayes train's; ``--json`` writes them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARITIES = (3, 5, 8, 12)


def generate(path: Path, rows: int, seed: int = 7) -> None:
    """``rows`` rows of ``c0..c3,label``, written in chunks of a million."""
    import numpy as np

    rng = np.random.default_rng(seed)
    with path.open("w") as out:
        out.write(",".join(f"c{i}" for i in range(len(ARITIES))) + ",label\n")
        done = 0
        while done < rows:
            n = min(1_000_000, rows - done)
            label = rng.integers(0, 3, n)
            cols = [(rng.integers(0, k, n) + label) % k for k in ARITIES]
            lines = (",".join(f"v{c[j]}" for c in cols) + f",y{label[j]}\n" for j in range(n))
            out.writelines(lines)
            done += n


def measure(spark, table: Path, work: Path) -> dict[str, float]:
    """Each of the two passes over ``table`` (``generate``'s) in the session ``spark``, once untimed
    (the JVM warms up), then timed: ``{"density": s, "naive_bayes": s}``."""
    from nbspark.density.jobs import train_density
    from nbspark.inputs.resolve import resolve_input
    from nbspark.naive_bayes.jobs import train_nb
    from nbspark.settings.config import load_config

    common = {"train.format": "csv", "train.path": str(table)}
    density = load_config(None, {"task": "density", **common})
    nb = load_config(None, {"task": "naive_bayes", "nb.model": "categorical", **common})

    def timed(name, run):
        run(work / f"{name}-warm")
        start = time.perf_counter()
        run(work / name)
        return time.perf_counter() - start

    return {
        "density": timed(
            "density", lambda out: train_density(spark, density, resolve_input(density.train, None), out)
        ),
        "naive_bayes": timed("nb", lambda out: train_nb(spark, nb, resolve_input(nb.train, None), out)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from nbspark.spark.session import get_spark

    work = Path(tempfile.mkdtemp(prefix="bench-density-"))
    try:
        table = work / "table.csv"
        started = time.perf_counter()
        generate(table, args.rows)
        size = table.stat().st_size / 1e6
        print(f"{args.rows:,} rows generated in {time.perf_counter() - started:.1f} s ({size:.0f} MB)")
        spark = get_spark(
            "bench-density", {"spark.master": args.master, "spark.ui.showConsoleProgress": "false"}
        )
        seconds = measure(spark, table, work)
        spark.stop()
        result = {
            "rows": args.rows,
            "master": args.master,
            "density_seconds": round(seconds["density"], 2),
            "naive_bayes_seconds": round(seconds["naive_bayes"], 2),
            "density_over_nb": round(seconds["density"] / seconds["naive_bayes"], 3),
        }
        print(
            f"density count {result['density_seconds']} s, naive Bayes (categorical) train "
            f"{result['naive_bayes_seconds']} s: density / naive Bayes = {result['density_over_nb']}"
        )
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
