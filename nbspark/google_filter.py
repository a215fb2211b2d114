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

The predicate is conservative by construction: a dropped v2 line matches
``tok( tok){W-1} TAB digits TAB 1-18 digits TAB [^TAB]*`` and a dropped v3 line
``tok( tok){W-1}( TAB digits,1-18 digits,[^,TAB]*)+`` (``tok``: no space or TAB), which Python
parses too (``candidate_predicate`` says what each test costs).
"""

from __future__ import annotations

import re

from .corpora import MalformedLine, POS_TAGS, PSEUDO_TAGS, google_line
from .faults import maybe_inject
from .readers import hadoop_escape
from .runstats import STAT, PartitionStats

__all__ = ["candidate_predicate", "google_examples"]


def candidate_predicate(fmt: str, width: int, strip: bool, lowercase: bool, centres):
    """The Spark SQL column that is false only for lines Python would count as not centred
    (``lines_not_in_confusion_set``): certainly well formed, no stand-alone tag token, and a centre
    that cannot be a confusion-set word. Each test is the cheapest that is still exact or
    conservative (measured on 383 MB of v3 text; a regex first decodes the line into a Java string):

    * the centre, the ``width // 2 + 1``-th space-separated token (byte-level ``substring_index``), is
      a candidate when, lower-cased as the config says, it starts with a set word: that covers
      ``effect_NOUN`` and ``Effect`` and lets Python strip the suffix exactly, as it does for
      every kept line; a centre with a non-ASCII character is kept too (Java's and Python's
      lower-casing may differ there);
    * a stand-alone tag token (``_NOUN_``, ``_START_``) needs a token starting with ``_``: the regex
      runs only on such lines;
    * the shape: one anchored regex.
    """
    from pyspark.sql import functions as F

    v = F.col("value")
    tok = "[^ \\t]+"
    head = f"^{tok}( {tok}){{{width - 1}}}"
    tail = "\\t[0-9]+\\t[0-9]{1,18}\\t[^\\t]*$" if fmt == "google_v2" else "(\\t[0-9]+,[0-9]{1,18},[^\\t,]*)+$"
    ngram = F.substring_index(v, "\t", 1)
    centre = F.substring_index(F.substring_index(ngram, " ", width // 2 + 1), " ", -1)
    folded = F.lower(centre) if lowercase else centre
    keep = F.lit(False)
    for word in sorted(centres):
        keep = keep | folded.startswith(word)
    keep = keep | (F.octet_length(centre) != F.length(centre))
    if strip:
        alone = "|".join(re.escape(t) for t in sorted(POS_TAGS | PSEUDO_TAGS))
        keep = keep | ((ngram.startswith("_") | (F.instr(ngram, " _") > 0)) & ngram.rlike(f"(^| )_({alone})_( |$)"))
    return keep | ~v.rlike(head + tail)


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
    lines = spark.read.text([hadoop_escape(f.uri) for f in inputs.files])
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


