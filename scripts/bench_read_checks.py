"""What the count checks cost a model's read (counts >= 0, each key once: ``storage.counts``).

    python scripts/bench_read_checks.py [--rows 10000000] [--books out/affect_effect/model] [--json FILE]

Two tables: the Books model that ``./scripts/demo.sh`` writes (67,358 rows; skipped when absent)
and a naive Bayes count table of ``--rows`` generated rows (seeded, in a temporary directory,
never committed: ten labels, distinct tokens). For each, the read as the readers make it and the
checks alone, each timed after one untimed run:

* pyarrow (``nbspark.load``, ``predict``, ``check``, the classify jobs' broadcast scorers): the
  part files read (``check_table`` + ``read_arrow``) against ``check_counts``;
* Spark (the join scorer, ``--update``, a stream's compaction, the query job): the table read and
  every column scanned once (``read_parquet_checked`` + a count of each column) against
  ``check_counts_spark`` (one aggregation job), in one ``local[2]`` session.

Prints seconds and each check's share of its read; ``--json`` writes them.
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


def timed(fn) -> float:
    fn()  # untimed: caches, the JVM's code
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def generated_model(root: Path, rows: int) -> Path:
    """A naive Bayes model whose count table is ``rows`` generated rows (a trained model's marker
    and manifest, ``count_rows`` set to the rows)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nbspark.app.command import main

    model = root / "nb"
    fixture = ROOT / "tests" / "data" / "china_train.tsv"
    sets = ["--set", "task=naive_bayes", "--set", "train.format=tsv", "--set", "nb.tokenizer=words"]
    assert main(["-q", "train", *sets, "--set", f"train.path={fixture}", "--out", str(model)]) == 0
    rng = np.random.default_rng(7)
    index = np.arange(rows)
    table = pa.table(
        {
            "event": pa.array(np.full(rows, "YX", dtype=object), pa.string()),
            "label": pa.array((np.char.add("c", (index % 10).astype(str))).astype(object), pa.string()),
            "feature": pa.array((np.char.add("w", (index // 10).astype(str))).astype(object), pa.string()),
            "value": pa.nulls(rows, pa.string()),
            "n": pa.array(rng.integers(1, 1000, rows), pa.int64()),
            "sum": pa.nulls(rows, pa.float64()),
            "sumsq": pa.nulls(rows, pa.float64()),
        }
    )
    for part in (model / "counts").glob("part-*"):
        part.unlink()
    pq.write_table(table, model / "counts" / "part-00000.parquet", row_group_size=1 << 20)
    manifest = json.loads((model / "manifest.json").read_text())
    manifest["count_rows"] = rows
    (model / "manifest.json").write_text(json.dumps(manifest))
    return model


def measure(spark, model: Path) -> dict:
    from pyspark.sql import functions as F

    from nbspark.backoff.jobs import BACKOFF
    from nbspark.naive_bayes.jobs import NAIVE_BAYES
    from nbspark.storage.counts import check_counts, check_counts_spark
    from nbspark.storage.locations import location
    from nbspark.storage.manifests import load_manifest
    from nbspark.storage.tables import check_table, ddl_columns, read_arrow, read_parquet_checked
    from nbspark.storage.versions import count_parts

    manifest = load_manifest(location(str(model)), (BACKOFF.kind, NAIVE_BAYES.kind))
    family = BACKOFF if manifest["kind"] == BACKOFF.kind else NAIVE_BAYES
    ddl = family.ddl(manifest["config"])
    ((where, rows),) = count_parts(location(str(model)), manifest)
    table = read_arrow(check_table(where, ddl, rows), list(ddl_columns(ddl)))
    frame = read_parquet_checked(spark, where, ddl, rows)
    found = {
        "rows": table.num_rows,
        "arrow_read_seconds": timed(
            lambda: read_arrow(check_table(where, ddl, rows), list(ddl_columns(ddl)))
        ),
        "arrow_check_seconds": timed(lambda: check_counts(table, where)),
        "spark_read_seconds": timed(
            lambda: (
                read_parquet_checked(spark, where, ddl, rows)
                .agg(*[F.count(c) for c in frame.columns])
                .first()
            )
        ),
        "spark_check_seconds": timed(lambda: check_counts_spark(frame, where)),
    }
    found["arrow_check_share"] = found["arrow_check_seconds"] / found["arrow_read_seconds"]
    found["spark_check_share"] = found["spark_check_seconds"] / found["spark_read_seconds"]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--books", default=str(ROOT / "out" / "affect_effect" / "model"))
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    from nbspark.spark.session import get_spark

    root = Path(tempfile.mkdtemp(prefix="nbspark-read-checks-"))
    try:
        spark = get_spark("bench-read-checks", defaults={"spark.master": "local[2]"})
        results = {}
        if (Path(args.books) / "manifest.json").is_file():
            results["books"] = measure(spark, Path(args.books))
        else:
            print(f"{args.books}: no Books model (run ./scripts/demo.sh); skipped", file=sys.stderr)
        results["generated"] = measure(spark, generated_model(root, args.rows))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for name, r in results.items():
        print(
            f"{name}: {r['rows']:,} rows; pyarrow read {r['arrow_read_seconds']:.3f} s, checks "
            f"{r['arrow_check_seconds']:.3f} s ({r['arrow_check_share']:.0%}); "
            f"Spark read {r['spark_read_seconds']:.3f} s, "
            f"checks {r['spark_check_seconds']:.3f} s ({r['spark_check_share']:.0%})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
