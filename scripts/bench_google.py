"""nbspark's train job on Google Books 5-gram shards against zcat of the same files, in one run.

    python scripts/bench_google.py [--gb 1.0] [--centred 0.002] [--version 3] [--master local[2]]
    [--submit-args ARGS] [--json FILE]

Writes synthetic version-2 or -3 shards (``scripts/make_google_shards.py``: realistic sparsity, by
default 0.2 % of the n-grams centred on affect/effect) holding about ``--gb`` GB of text, then times
``zcat`` of every shard on one core (output discarded, the decompression a reader cannot avoid),
and ``spark-submit jobs/train.py`` on the shards with each engine asked for (``--engines``,
default: auto, which reads shards whole and parses only the lines that may be centred). The job's count table
is compared with a plain-Python
count of the same shards (gzip + ``inputs.parsers.google_line`` + ``backoff.events.example_events``, no
Spark).

Prints a table: seconds, MB/s and MB/s per core for zcat and each engine;
``per_core_ratio_vs_zcat`` is nbspark's bytes per second per core over zcat's single-core bytes
per second. ``--json FILE`` writes ``uncompressed_bytes``, ``cores``, ``zcat_seconds``,
``nbspark_seconds``, ``per_core_ratio_vs_zcat`` and ``tables_equal`` (for the first engine),
plus every engine's row. ``nbspark_seconds`` is the whole ``spark-submit``, JVM start included,
launched as ``scripts/_env.sh`` launches jobs: PySpark's bytecode in ``pyspark.zip`` and the JVM
class-data archive in ``SPARK_SUBMIT_OPTS`` (``scripts/pyspark_bytecode.py``, ``scripts/jvm_archive.py``;
``NBSPARK_PYSPARK_BYTECODE=0`` and ``NBSPARK_JVM_ARCHIVE=0`` leave them out, and the JSON's
``pyspark_bytecode`` and ``spark_submit_opts`` say what was used);
each row also gives ``job_seconds``, the time the job itself reports (its manifest's ``seconds``:
from its SparkSession until the count table is written), and ``per_core_ratio_vs_zcat_inside_job`` from it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nbspark.backoff.events import Example, example_events  # noqa: E402
from nbspark.inputs.parsers import MalformedLine, google_line  # noqa: E402
from nbspark.settings.config import load_config  # noqa: E402

BYTES_PER_NGRAM = {2: 121, 3: 61}  # text bytes per n-gram in make_google_shards' output (measured)


def plain_count(files, cfg) -> Counter:
    """The count table of the shards in plain Python (summed by n-gram, min_count, then events)."""
    spec = cfg.train
    ngrams: Counter = Counter()
    # a line whose text holds no confusion-set word (in any case) cannot be an example
    maybe = re.compile("|".join(re.escape(w) for w in cfg.centres), re.IGNORECASE).search
    for f in files:
        with gzip.open(f, "rt", encoding="utf-8", errors="replace", newline="\n") as fh:
            for line in fh:
                if not maybe(line):
                    continue
                try:
                    outcome, tokens, count = google_line(
                        line.rstrip("\n"),
                        spec.format,
                        cfg.width,
                        spec.pos == "strip",
                        cfg.lowercase,
                        frozenset(cfg.centres),
                        spec.year_min,
                        spec.year_max,
                    )
                except MalformedLine:
                    continue
                if outcome == "ngram":
                    ngrams[tokens] += count
    table: Counter = Counter()
    for tokens, count in ngrams.items():
        if count >= spec.min_count:
            for key, n in example_events(Example("google", tokens, count), cfg.counted_subsets, cfg.letters):
                table[key] += n
    return table


def text_bytes(path: Path) -> int:
    """The bytes of text in a gzip file (every member)."""
    with gzip.open(path, "rb") as fh:
        return sum(len(chunk) for chunk in iter(lambda: fh.read(1 << 24), b""))


def job_table(model_dir: Path) -> Counter:
    import pyarrow.parquet as pq

    table = pq.read_table(model_dir / "counts")
    names = table.column_names
    return Counter({tuple(r[n] for n in names[:-1]): r[names[-1]] for r in table.to_pylist()})


def startup() -> tuple[str, bool]:
    """``SPARK_SUBMIT_OPTS`` for the train job, and whether ``pyspark.zip`` holds bytecode, after the
    two scripts ``scripts/_env.sh`` runs (each does its work once, and nothing when its
    ``NBSPARK_…=0`` asks so; their messages go to stderr)."""
    scripts = ROOT / "scripts"
    subprocess.run([sys.executable, str(scripts / "pyspark_bytecode.py")], check=False)
    bytecode = (
        subprocess.run(
            [sys.executable, str(scripts / "pyspark_bytecode.py"), "--check"], check=False
        ).returncode
        == 0
    )
    opts = os.environ.get("SPARK_SUBMIT_OPTS", "")
    if "SharedArchiveFile" not in opts:  # a user's own options stay after the archive's, as in _env.sh
        archive = subprocess.run(
            [sys.executable, str(scripts / "jvm_archive.py")], stdout=subprocess.PIPE, text=True, check=False
        ).stdout.strip()
        opts = f"{archive} {opts}".strip()
    return opts, bytecode


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gb", type=float, default=1.0, help="text (uncompressed) to generate, in GB")
    parser.add_argument(
        "--centred", type=float, default=0.002, help="share of n-grams centred on affect/effect"
    )
    parser.add_argument("--version", type=int, choices=(2, 3), default=3)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--engines", default="auto", help="comma-separated train engines (auto, dataframe, combine, pairs)"
    )
    parser.add_argument(
        "--work", type=Path, help="where shards and models go (default: a temporary directory, removed)"
    )
    parser.add_argument(
        "--submit-args",
        default="",
        metavar="ARGS",
        help="more spark-submit arguments for the train job, as one shell-quoted string (recorded in the "
        "JSON); "
        "e.g. --submit-args '--driver-java-options -XX:TieredStopAtLevel=1' (docs/scaling.md)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_google_"))
    shards = work / "shards"
    try:
        per_shard = int(args.gb * 1e9 / BYTES_PER_NGRAM[args.version] / args.shards)
        if not shards.exists():
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "scripts" / "make_google_shards.py"),
                    str(shards),
                    "--version",
                    str(args.version),
                    "--shards",
                    str(args.shards),
                    "--lines-per-shard",
                    str(per_shard),
                    "--centred",
                    str(args.centred),
                ],
                check=True,
            )
        files = sorted(shards.glob("*.gz"))
        size = sum(text_bytes(f) for f in files)  # not timed
        started = time.perf_counter()
        for f in files:  # the output discarded: reading it through a pipe into Python cost 10-30 % more
            subprocess.run(["zcat", str(f)], stdout=subprocess.DEVNULL, check=True)
        zcat = time.perf_counter() - started
        cores = (
            int(args.master.split("[")[1].rstrip("]"))
            if "[" in args.master and args.master.split("[")[1][0].isdigit()
            else os.cpu_count()
        )
        fmt = f"google_v{args.version}"
        cfg = load_config(None, {"train.format": fmt, "train.path": str(shards)})
        expected = plain_count(files, cfg)
        rows = []
        submit_opts, bytecode = startup()
        for engine in args.engines.split(","):
            model = work / f"model-{engine}"
            cmd = [
                str(Path(sys.executable).parent / "spark-submit"),
                "--master",
                args.master,
                "--conf",
                "spark.ui.enabled=false",
                *shlex.split(args.submit_args),
                str(ROOT / "jobs" / "train.py"),
                "--set",
                f"train.format={fmt}",
                "--set",
                f"train.path={shards}",
                "--set",
                f"engine={engine}",
                "--out",
                str(model),
                "--overwrite",
            ]
            started = time.perf_counter()
            env = {
                **os.environ,
                "SPARK_LOCAL_IP": "127.0.0.1",
                "PYSPARK_PYTHON": sys.executable,
                "SPARK_SUBMIT_OPTS": submit_opts,
                "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            }
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            seconds = time.perf_counter() - started
            if done.returncode:
                print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
                return 1
            equal = job_table(model) == expected
            inside = json.loads((model / "manifest.json").read_text())[
                "seconds"
            ]  # the job's own clock, from its session up
            rows.append(
                {
                    "engine": engine,
                    "seconds": seconds,
                    "tables_equal": equal,
                    "per_core_ratio_vs_zcat": (size / seconds / cores) / (size / zcat),
                    "job_seconds": inside,
                    "per_core_ratio_vs_zcat_inside_job": (size / inside / cores) / (size / zcat),
                }
            )
        print(
            f"{len(files)} version-{args.version} shards, {size / 1e6:,.0f} MB of text, "
            f"{args.centred:.2%} centred; {cores} cores for Spark"
            + (f"; spark-submit {args.submit_args}" if args.submit_args else "")
            + f"; JVM class-data archive: {'yes' if 'SharedArchiveFile' in submit_opts else 'no'}"
            + f"; PySpark bytecode: {'yes' if bytecode else 'no'} (docs/scaling.md)"
        )
        print(f"{'what':<34}{'seconds':>9}{'MB/s':>9}{'MB/s/core':>11}{'vs zcat/core':>14}{'table':>8}")
        print(
            f"{'zcat, one core':<34}{zcat:>9.1f}{size / zcat / 1e6:>9.1f}"
            f"{size / zcat / 1e6:>11.1f}{1.0:>14.3f}{'':>8}"
        )
        for r in rows:
            rate = size / r["seconds"] / 1e6
            print(
                f"{'nbspark train, engine ' + r['engine']:<34}{r['seconds']:>9.1f}{rate:>9.1f}"
                f"{rate / cores:>11.1f}"
                f"{r['per_core_ratio_vs_zcat']:>14.3f}{'equal' if r['tables_equal'] else 'DIFFER':>8}"
            )
            rate_inside = size / r["job_seconds"] / 1e6
            print(
                f"{'  of it, inside the job':<34}{r['job_seconds']:>9.1f}{rate_inside:>9.1f}"
                f"{rate_inside / cores:>11.1f}"
                f"{r['per_core_ratio_vs_zcat_inside_job']:>14.3f}"
            )
        print(
            "(an engine's row is the whole spark-submit, JVM start included: per_core_ratio_vs_zcat; "
            "'inside the job'\n"
            " is the time the job reports in its manifest, from its SparkSession until the count table is "
            "written)"
        )
        if args.json:
            first = rows[0]
            args.json.write_text(
                json.dumps(
                    {
                        "uncompressed_bytes": size,
                        "cores": cores,
                        "zcat_seconds": zcat,
                        "nbspark_seconds": first["seconds"],
                        "per_core_ratio_vs_zcat": first["per_core_ratio_vs_zcat"],
                        "tables_equal": first["tables_equal"],
                        "engines": rows,
                        "submit_args": args.submit_args,
                        "spark_submit_opts": submit_opts,
                        "pyspark_bytecode": bytecode,
                    },
                    indent=2,
                )
                + "\n"
            )
        return 0 if all(r["tables_equal"] for r in rows) else 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
