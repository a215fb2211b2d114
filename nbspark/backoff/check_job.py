"""The checker as a Spark job (``jobs/check.py``): every file of a text corpus checked in parallel
with a broadcast backoff model, the flags written as Parquet.

Record shapes: text files ``(path, bytes)`` (``inputs.files.sgml_texts``; ``.gz`` decompressed, UTF-8
with undecodable bytes replaced and counted, binary files skipped and counted: ``decode_text``) ->
``backoff.predictor.BackoffPredictor.flags`` per file, the same call as ``nbspark check FILE`` ->
``flags/`` (``FLAG_DDL``) + ``metrics.json`` + ``report.txt``, staged. A file is one document, as the
single-document path reads it, so both give the same flags.
"""

from __future__ import annotations

import time

from nbspark.inputs.files import decode_text, list_files, sgml_texts
from nbspark.report.format import format_check_report
from nbspark.spark.faults import maybe_inject
from nbspark.spine.classifying import write_metrics
from nbspark.spine.counting import Tally
from nbspark.storage.locations import Location, location
from nbspark.storage.manifests import BACKOFF_KIND, NB_KIND, load_manifest
from nbspark.storage.tables import staged_output
from nbspark.storage.uris import hadoop_escape

__all__ = ["FLAG_DDL", "check_corpus"]

FLAG_DDL = (
    "file STRING NOT NULL, line INT NOT NULL, column INT NOT NULL, written STRING NOT NULL, "
    "suggestion STRING NOT NULL, ratio DOUBLE NOT NULL, level STRING NOT NULL, snippet STRING NOT NULL"
)


def _check_files(records, shared, factor, rule, tally):
    maybe_inject()
    model = shared.value
    counts = {"files": 0, "binary_files": 0, "decode_replacements": 0, "flags": 0}
    for name, data in records:  # readers.sgml_texts names each file by its local path
        read = decode_text(data, name)
        if read.binary:  # an image, a PDF: not text, not checked
            counts["binary_files"] += 1
            continue
        counts["files"] += 1
        counts["decode_replacements"] += read.replaced
        for flag in model.flags(read.text, factor, rule):
            counts["flags"] += 1
            yield (
                name,
                flag["line"],
                flag["column"],
                flag["written"],
                flag["suggestion"],
                float(flag["ratio"]),
                flag["level"],
                flag["snippet"],
            )
    tally.add(counts)


def check_corpus(
    spark,
    model_dir: Location,
    text: Location,
    out: Location,
    factor: float | None = None,
    rule: str | None = None,
) -> dict:
    """Flag the confused words of every file under ``text`` with the model in ``model_dir``;
    write ``out`` (staged) and return the metrics."""
    from nbspark.backoff.predictor import read_backoff

    started = time.time()
    model_dir, text = location(model_dir), location(text)
    manifest = load_manifest(model_dir, (BACKOFF_KIND, NB_KIND))
    if manifest["kind"] != BACKOFF_KIND:
        raise ValueError(f"{model_dir}: a naive Bayes model; the checker needs a backoff model")
    model = read_backoff(model_dir, manifest)
    files = list_files(text)
    if not files:
        raise FileNotFoundError(f"{text}: no text files")
    sc = spark.sparkContext
    shared = sc.broadcast(model)
    tally = sc.accumulator({}, Tally())
    rows = sgml_texts(sc, files).mapPartitions(lambda it: _check_files(it, shared, factor, rule, tally))
    with staged_output(out, "checked") as stage:
        spark.createDataFrame(rows, FLAG_DDL).coalesce(max(1, min(len(files), 8))).write.parquet(
            (stage / "flags").uri
        )
        written = spark.read.parquet(hadoop_escape((stage / "flags").uri))
        by_level = {r["level"]: r["count"] for r in written.groupBy("level").count().collect()}
        rules = {" ".join(s): model.rule_for(s, rule, factor) for s in model.sets}
        metrics = {
            "model": str(model_dir),
            "text": str(text),
            **dict(sorted(tally.value.items())),
            "flags_by_level": by_level,
            "rules": {
                k: {"rule": r.name, "m": r.m, "min_evidence": r.min_evidence, "factor": f}
                for k, (r, f) in rules.items()
            },
            "seconds": round(time.time() - started, 2),
        }
        write_metrics(stage, metrics)
        (stage / "report.txt").write_text(format_check_report(metrics) + "\n")
    shared.unpersist()
    return metrics
