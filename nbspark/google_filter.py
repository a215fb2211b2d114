"""Google Books n-gram files at decompression speed: lines not centred on the confusion set are
dropped in the JVM, and only the rest reaches Python.

Spark SQL's text source reads each shard once (gzip decompressed in the JVM). A predicate decides,
without Python, the lines that are *certainly* well formed, carry no stand-alone tag token and
whose centre is not a confusion-set word (after the POS suffix is stripped and the word
lower-cased, as the config says); those are only counted, as ``lines_not_in_confusion_set``.
Every other line (centred on the set, malformed, with a tag token, or with a non-ASCII centre,
where Java's and Python's lower-casing might differ) goes through the same Python rule as the
``combine`` engine (``corpora.google_line``), so the statistics and the table equal that engine's,
line for line (tested). Identical such lines are grouped with their multiplicity before Python sees
them. The first malformed lines are named afterwards by a scan that stops early
(``runstats.first_malformed_lines``), only when there are any.

The predicate is conservative by construction: a v2 line must match
``tok( tok){W-1} TAB digits TAB 1-18 digits TAB [^TAB]*`` and a v3 line
``tok( tok){W-1}( TAB digits,1-18 digits,[^,TAB]*)+`` (``tok`` = no space or TAB), which every such
line passes in Python too.
"""

from __future__ import annotations

import re

from .corpora import MalformedLine, POS_TAGS, PSEUDO_TAGS, google_line
from .faults import maybe_inject
from .readers import hadoop_escape
from .runstats import STAT, PartitionStats

__all__ = ["candidate_predicate", "google_examples"]


def candidate_predicate(fmt: str, width: int, strip: bool, lowercase: bool, centres):
    """The Spark SQL column that is false only for lines Python would count as not centred."""
    from pyspark.sql import functions as F

    v = F.col("value")
    tok = "[^ \\t]+"
    head = f"^{tok}( {tok}){{{width - 1}}}"
    tail = "\\t[0-9]+\\t[0-9]{1,18}\\t[^\\t]*$" if fmt == "google_v2" else "(\\t[0-9]+,[0-9]{1,18},[^\\t,]*)+$"
    ngram = F.substring_index(v, "\t", 1)
    centre = F.element_at(F.split(ngram, " "), width // 2 + 1)
    odd = ~v.rlike(head + tail) | centre.rlike("[^\\x00-\\x7F]")
    if strip:
        alone = "|".join(re.escape(t) for t in sorted(POS_TAGS | PSEUDO_TAGS))
        odd = odd | ngram.rlike(f"(^| )_({alone})_( |$)")
        suffix = "|".join(re.escape(t) for t in sorted(POS_TAGS))
        centre = F.regexp_replace(centre, f"^(.+)_({suffix})$", "$1")
    if lowercase:
        centre = F.lower(centre)
    return odd | centre.isin(list(centres))


def _parse_grouped(rows, fmt, width, strip, lowercase, centres, year_min, year_max):
    """``(line, n)`` -> ``(("ngram", tokens), count × n)`` and the statistics of those lines, each
    weighted by ``n`` (the malformed ones named later, not here)."""
    maybe_inject()
    stats = PartitionStats(0)
    for line, n in rows:
        try:
            outcome, tokens, count = google_line(line, fmt, width, strip, lowercase, centres, year_min, year_max)
        except MalformedLine as exc:
            stats.add("malformed", n)
            stats.add(f"malformed.{exc.reason}", n)
            continue
        if outcome == "ngram":
            yield ("ngram", tokens), count * n
        else:
            stats.add(outcome, n)
    yield from stats.records()


def google_examples(spark, inputs, cfg):
    """The ``combine`` engine's Google records (``(("ngram", tokens), count)`` and statistics
    records, before the sum by n-gram), with the filter in the JVM; also the cached aggregate to
    release."""
    from pyspark.sql import functions as F

    spec = inputs.spec
    fmt, width, centres = spec.format, cfg.width, frozenset(cfg.centres)
    strip, lowercase, year_min, year_max = spec.pos == "strip", cfg.lowercase, spec.year_min, spec.year_max
    lines = spark.read.text([hadoop_escape(f"file://{f}") for f in inputs.files])
    keep = candidate_predicate(fmt, width, strip, lowercase, centres)
    # the few kept lines in as many partitions as the input has (not spark.sql.shuffle.partitions:
    # the RDD side below would run a Python task for each)
    parts = cfg.partitions or lines.rdd.getNumPartitions()
    grouped = lines.groupBy(F.when(keep, F.col("value")).alias("line")).count().coalesce(parts).cache()
    try:
        total = grouped.agg(F.sum("count").alias("all"), F.sum(F.when(F.col("line").isNull(), F.col("count"))).alias("dropped")).first()
    except BaseException:
        grouped.unpersist()
        raise
    stats = [((STAT, "lines_read"), int(total["all"] or 0))]
    if total["dropped"]:
        stats.append(((STAT, "lines_not_in_confusion_set"), int(total["dropped"])))
    parsed = grouped.where(F.col("line").isNotNull()).rdd.map(lambda r: (r["line"], r["count"])).mapPartitions(
        lambda it: _parse_grouped(it, fmt, width, strip, lowercase, centres, year_min, year_max))
    return spark.sparkContext.parallelize(stats, 1).union(parsed), grouped


