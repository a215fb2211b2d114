"""Google Books n-gram files at decompression speed: only the lines that might be centred on the
confusion set, or might be malformed, reach Python's parser; every shard is read once.

Two readers, chosen per file, give the same records and statistics:

* **whole shards** (gzip, as Hadoop names it (``.gz``), or not compressed; at most
  ``train.whole_file_mb`` MB, 256 by default): Spark's ``binaryFiles`` reads each through Hadoop's FileSystem
  and hands its bytes to a Python task, which decompresses them and tests whole pieces of lines
  with RE2 (``backoff.google_scan``);
* **streamed lines** (larger files, other codecs): Spark SQL's text source reads the lines, and a
  predicate decides in the JVM the lines that are *certainly* well formed, carry no stand-alone tag
  token and whose centre is not a confusion-set word; those are only counted, as
  ``lines_not_in_confusion_set``. Identical kept lines are grouped with their multiplicity before
  Python sees them.

Every line either reader cannot settle goes through the same Python rule as the ``combine`` engine
(``inputs.parsers.google_line``), so the statistics and the table equal that engine's, line for line
(tested). The first malformed lines are named afterwards by a scan that stops early
(``inputs.stats.first_malformed_lines``), only when there are any.

The JVM predicate is conservative by construction: a dropped v2 line matches
``tok( tok){W-1} TAB digits TAB 1-18 digits TAB [^TAB]*`` and a dropped v3 line
``tok( tok){W-1}( TAB digits,1-18 digits,[^,TAB]*)+`` (``tok``: no space or TAB), which Python
parses too (``candidate_predicate`` says what each test costs); ``backoff.google_scan`` uses the same shapes.
"""

from __future__ import annotations

import re

from nbspark.inputs.files import binary_files, extension, text_frame
from nbspark.inputs.parsers import POS_TAGS, PSEUDO_TAGS, MalformedLine, google_line
from nbspark.inputs.stats import STAT, PartitionStats
from nbspark.spark.faults import maybe_inject
from nbspark.spark.session import cache_coalescable
from nbspark.storage.uris import shown_uri

__all__ = ["UNREADABLE", "candidate_predicate", "google_examples"]

#: The statistic a task returns for a shard it cannot read (then its path and why): the driver
#: refuses the run with it (``backoff.count``), and no task fails, is retried or logs a traceback.
UNREADABLE = "unreadable shard: "


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
    tail = (
        "\\t[0-9]+\\t[0-9]{1,18}\\t[^\\t]*$" if fmt == "google_v2" else "(\\t[0-9]+,[0-9]{1,18},[^\\t,]*)+$"
    )
    ngram = F.substring_index(v, "\t", 1)
    centre = F.substring_index(F.substring_index(ngram, " ", width // 2 + 1), " ", -1)
    folded = F.lower(centre) if lowercase else centre
    keep = F.lit(False)
    for word in sorted(centres):
        keep = keep | folded.startswith(word)
    keep = keep | (F.octet_length(centre) != F.length(centre))
    if strip:
        alone = "|".join(re.escape(t) for t in sorted(POS_TAGS | PSEUDO_TAGS))
        keep = keep | (
            (ngram.startswith("_") | (F.instr(ngram, " _") > 0)) & ngram.rlike(f"(^| )_({alone})_( |$)")
        )
    return keep | ~v.rlike(head + tail)


def _parse_grouped(rows, fmt, width, strip, lowercase, centres, year_min, year_max):
    """``(line, n)`` -> ``(("ngram", tokens), count × n)`` and the statistics of those lines, each
    weighted by ``n`` (the malformed ones named later, not here)."""
    maybe_inject()
    stats = PartitionStats(0)
    for line, n in rows:
        try:
            outcome, tokens, count = google_line(
                line, fmt, width, strip, lowercase, centres, year_min, year_max
            )
        except MalformedLine as exc:
            stats.add("malformed", n)
            stats.add(f"malformed.{exc.reason}", n)
            continue
        if outcome == "ngram":
            yield ("ngram", tokens), count * n
        else:
            stats.add(outcome, n)
    yield from stats.records()


def _codec_extensions(spark) -> list[str]:
    """The file-name extensions of the compression codecs this Hadoop configuration registers."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    classes = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory.getCodecClasses(conf)
    utils = jvm.org.apache.hadoop.util.ReflectionUtils
    return [str(utils.newInstance(c, conf).getDefaultExtension()) for c in classes]


def _whole_files(spark, files, limit_mb: float) -> list:
    """The files read whole: at most ``limit_mb`` MB (``train.whole_file_mb``; a larger shard is
    streamed, no task holds it whole) and gzip (``.gz``, Hadoop's ``GzipCodec``) or of no codec
    Hadoop knows (read as plain text, as the text source reads them)."""
    others = tuple(e for e in _codec_extensions(spark) if e != ".gz")
    limit = limit_mb * (1 << 20) if limit_mb > 0 else -1  # 0: every file streamed, an empty one too
    # binaryFiles takes one comma-separated list, where a comma or brace in a name would split it
    return [
        f
        for f in files
        if not re.search("[,{}]", f.uri)
        and (extension(f.name) == ".gz" or extension(f.name) not in others)
        and f.stat()[0] <= limit
    ]


def _scan_partition(shards, rules):
    """``(path, bytes)`` of whole shards -> the records of ``_parse_grouped``, the n-grams summed in the
    task."""
    from collections import Counter

    from nbspark.backoff.google_scan import UnreadableShardError, scan_shard

    maybe_inject()
    stats = PartitionStats(0)
    ngrams: Counter = Counter()
    for path, data in shards:
        try:
            scan_shard(data, extension(path) == ".gz", rules, stats, ngrams)
        except UnreadableShardError as exc:  # back as a statistic, not a failed task: the driver refuses
            said = f"{UNREADABLE}{shown_uri(path)}: {exc}"  # the file named as the reader in process names it
            yield (STAT, said), 1
            return
    for tokens, count in ngrams.items():
        yield ("ngram", tokens), count
    yield from stats.records()


def google_examples(spark, inputs, cfg):
    """The ``combine`` engine's Google records (``(("ngram", tokens), count)`` and statistics
    records, before the sum by n-gram), with only the unsettled lines parsed in Python; also the
    cached Spark data to release afterwards (a list)."""
    from nbspark.backoff.google_scan import GoogleRules

    spec = inputs.spec
    rules = GoogleRules(
        spec.format, cfg.width, spec.pos == "strip", cfg.lowercase, cfg.centres, spec.year_min, spec.year_max
    )
    whole = _whole_files(spark, inputs.files, spec.whole_file_mb)
    chosen = {f.uri for f in whole}  # a set: a list test is quadratic in the shards
    streamed = [f for f in inputs.files if f.uri not in chosen]
    parts, cached = [], []
    if whole:
        # each shard's bytes straight to its Python task (the JVM holds one shard at a time),
        # two shards to a task where there are enough to keep every core busy, else one (binary_files)
        shards = binary_files(spark.sparkContext, whole)
        parts.append(shards.mapPartitions(lambda it: _scan_partition(it, rules)))
    if streamed:
        records, grouped = _streamed_examples(spark, streamed, rules, cfg.partitions)
        parts.append(records)
        cached.append(grouped)
    return (spark.sparkContext.union(parts) if len(parts) > 1 else parts[0]), cached


def _streamed_examples(spark, files, rules, partitions):
    """Spark SQL's text source over ``files``, filtered in the JVM (``candidate_predicate``)."""
    from pyspark.sql import functions as F

    fmt, width, strip, lowercase, centres, year_min, year_max = rules.args
    lines = text_frame(spark, files)
    keep = candidate_predicate(fmt, width, strip, lowercase, centres)
    # the few kept lines in as many partitions as the input has (not spark.sql.shuffle.partitions:
    # the RDD side below would run a Python task for each)
    parts = partitions or lines.rdd.getNumPartitions()
    grouped = cache_coalescable(
        lines.groupBy(F.when(keep, F.col("value")).alias("line")).count().coalesce(parts)
    )
    try:
        total = grouped.agg(
            F.sum("count").alias("all"),
            F.sum(F.when(F.col("line").isNull(), F.col("count"))).alias("dropped"),
        ).first()
    except BaseException:
        grouped.unpersist()
        raise
    stats = [((STAT, "lines_read"), int(total["all"] or 0))]
    if total["dropped"]:
        stats.append(((STAT, "lines_not_in_confusion_set"), int(total["dropped"])))
    parsed = (
        grouped.where(F.col("line").isNotNull())
        .rdd.map(lambda r: (r["line"], r["count"]))
        .mapPartitions(
            lambda it: _parse_grouped(it, fmt, width, strip, lowercase, centres, year_min, year_max)
        )
    )
    return spark.sparkContext.parallelize(stats, 1).union(parsed), grouped
