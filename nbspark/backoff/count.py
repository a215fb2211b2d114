"""The backoff family's counting engines, behind one function: ``count_ngrams(spark, cfg, inputs, engine)
-> counting.Counted`` with the count table in ``events.count_ddl(letters)``.

* ``pairs`` / ``combine``: examples (``backoff.inputs``) flatMapped into ``((subset, *context,
  label), weight)`` events and summed by ``spine.counting.count_events``; statistics ride the shuffle.
* ``dataframe``: Google Books shards scanned whole by RE2 in Python, or their lines filtered in
  the JVM (``backoff.google_filter``): only the lines that might be centred on the set, or malformed, are
  parsed, as ``combine`` parses them.
* ``local`` (``nbspark train --in-process``, ``nbspark.fit``): without Spark, the arrow engine's
  rule where it applies (``ngrams`` without sampling; ``engine = combine`` or ``pairs`` asks for the
  other), else ``combine``'s over the same readers' records of local files
  (``backoff.inputs.local_examples``).
* ``arrow``: ``ngrams`` lines read by Spark SQL, each Arrow batch parsed and counted by pyarrow
  (``backoff.arrow_events.ngram_events``), summed in the task, then by ``groupBy``; statistics are rows
  whose subset starts with ``MARK``, and the first malformed lines are found afterwards.

Which engine applies, and what ``auto`` picks, is ``settings.capabilities.resolve_engine``.
"""

from __future__ import annotations

from nbspark.backoff.events import count_columns, count_ddl, example_events, in_sample
from nbspark.backoff.google_filter import UNREADABLE, google_examples
from nbspark.backoff.google_scan import UnreadableShardError
from nbspark.backoff.inputs import examples_rdd, google_summed
from nbspark.inputs.files import text_frame
from nbspark.inputs.parsers import MAX_COUNT, blank_line, parse_google_v2, parse_google_v3, parse_ngram_line
from nbspark.inputs.stats import MARK, STAT, first_malformed_lines, is_stat, run_failfast, split_stats
from nbspark.settings.capabilities import engine_problem
from nbspark.spark.faults import maybe_inject
from nbspark.spark.session import cache_coalescable
from nbspark.spine.counting import Counted, combine_partition, count_events
from nbspark.spine.frames import schema_of

__all__ = ["count_ngrams"]


def count_ngrams(spark, cfg, inputs, engine: str) -> Counted:
    """Count the examples of ``inputs`` into every subset of ``cfg.counted_subsets`` with ``engine``
    (resolved by the plan: ``settings.capabilities.resolve_engine``)."""
    if engine == "arrow":
        return _arrow_counts(spark, cfg, inputs)
    if engine == "local":  # the arrow engine's rule where it applies, unless the config names another
        if cfg.engine in ("auto", "arrow") and engine_problem(cfg, "arrow") is None:
            return _local_arrow_counts(cfg, inputs)
        return _local_counts(cfg, inputs)
    return _python_counts(spark, cfg, inputs, engine)


def _pairs_of(cfg):
    """The events of a record (``backoff.events.example_events``, every counted subset), or the
    record itself for a statistic; an example left out of the sample is counted as one."""
    letters, subsets = cfg.letters, cfg.counted_subsets
    fraction, seed = cfg.sample, cfg.sample_seed

    def to_pairs(record):
        if is_stat(record):
            return [record]
        if fraction < 1.0 and not in_sample(record, seed, fraction):
            return [((STAT, "examples_not_sampled"), 1)]
        return example_events(record, subsets, letters)

    return to_pairs


def _local_counts(cfg, inputs) -> Counted:
    """The Python engines without Spark: the records of ``backoff.inputs.local_examples`` (the Spark
    readers' partition functions over local files), their events summed in a dict as the
    ``combine`` engine sums a partition's (``spine.counting.combine_partition``); statistics, the
    first malformed lines and the manifest's fields (``_stats_and_summary``) as from one partition."""
    from nbspark.backoff.inputs import local_examples
    from nbspark.storage.counts import rows_table

    to_pairs = _pairs_of(cfg)

    def reduce():
        records = local_examples(
            inputs, cfg.centres, cfg.width, cfg.lowercase, cfg.mode, cfg.max_bad_examples
        )
        pairs = (pair for record in records for pair in to_pairs(record))
        return dict(combine_partition(pairs))

    sums = run_failfast(reduce, cfg.mode)  # failfast's error, as the Spark engines raise it
    collected = list(_stats_and_summary(sums.items()))
    stats, bad = split_stats([r for r in collected if r[0] != SUMMARY], cfg.max_bad_examples)
    _check_weight(stats)
    table = rows_table([_count_row(kv) for kv in sums.items() if not is_stat(kv)], count_ddl(cfg.letters))
    return Counted("local", table, stats, bad, _known([r[1] for r in collected if r[0] == SUMMARY]))


def _local_arrow_counts(cfg, inputs) -> Counted:
    """The arrow engine without Spark: every file's lines as Spark's text reader gives them
    (``spine.arrow_counts.local_batches``) through ``_arrow_batches`` (the engine's own rule, a task's
    work) on a thread per core, summed by pyarrow as the engine's ``groupBy`` sums them; statistics
    are its marked rows, and the first malformed lines are found afterwards, as in Spark."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from nbspark.backoff.arrow_events import ngram_schema
    from nbspark.backoff.model import table_fields
    from nbspark.spine.arrow_counts import checked_sum, count_on_threads, local_batches
    from nbspark.storage.tables import arrow_schema

    letters, names, width = cfg.letters, count_columns(cfg.letters), cfg.width
    rule = (width, tuple(cfg.centres), cfg.lowercase, tuple(cfg.counted_subsets), letters)
    batches = count_on_threads(local_batches(inputs.files), lambda it: _arrow_batches(it, *rule))
    agg = checked_sum(pa.Table.from_batches(batches, ngram_schema(letters)), names[:-1], "count")
    marker = pc.starts_with(agg["subset"], MARK)
    marked = agg.filter(marker)
    stats = _marked_stats(zip(marked["subset"].to_pylist(), marked["count_sum"].to_pylist()))
    events = agg.filter(pc.invert(marker))
    table = events.rename_columns(names).cast(arrow_schema(count_ddl(letters)))
    bad = first_malformed_lines(
        None,
        inputs.files,
        lambda line: blank_line(line) or parse_ngram_line(line, width),
        stats,
        cfg.mode,
        cfg.max_bad_examples,
    )
    return Counted("local", table, stats, bad, {**table_fields(table), "rows": table.num_rows})


def _check_weight(stats: dict) -> None:
    """The total weight is stored as one 64-bit number, as the arrow engine's statistics are."""
    if stats.get("weight", 0) > MAX_COUNT:
        raise OverflowError(f"count overflow: the total weight passes {MAX_COUNT}, the largest 64-bit count")


def _python_counts(spark, cfg, inputs, engine: str) -> Counted:
    letters = cfg.letters
    to_pairs = _pairs_of(cfg)
    cached = []
    if engine == "dataframe":  # Google Books: only the lines that might be centred or malformed parsed
        records, cached = google_examples(spark, inputs, cfg)
        mixed = google_summed(records, cfg.train.min_count, cfg.max_bad_examples, cfg.partitions)
    else:
        mixed = examples_rdd(
            spark.sparkContext,
            inputs,
            cfg.centres,
            cfg.width,
            cfg.lowercase,
            cfg.mode,
            cfg.max_bad_examples,
            cfg.partitions,
        )
    reduced = count_events(
        mixed.flatMap(to_pairs), cfg.partitions, "combine" if engine == "dataframe" else engine
    ).cache()
    try:
        collected = run_failfast(lambda: reduced.mapPartitions(_stats_and_summary).collect(), cfg.mode)
        stats, bad = split_stats([r for r in collected if r[0] != SUMMARY], cfg.max_bad_examples)
        if unreadable := sorted(k[len(UNREADABLE) :] for k in stats if k.startswith(UNREADABLE)):
            raise UnreadableShardError(unreadable[0])
        known = _known([r[1] for r in collected if r[0] == SUMMARY])
        if engine == "dataframe":
            for data in cached:
                data.unpersist()
            parse = parse_google_v2 if cfg.train.format == "google_v2" else parse_google_v3
            width = cfg.width
            bad = first_malformed_lines(
                spark.sparkContext,
                inputs.files,
                lambda line: blank_line(line) or parse(line, width),
                stats,
                cfg.mode,
                cfg.max_bad_examples,
            )
        _check_weight(stats)
        rows = reduced.filter(lambda kv: not is_stat(kv)).map(_count_row)
        counts = spark.createDataFrame(rows, schema=schema_of(count_ddl(letters)))
        return Counted(engine, counts, stats, bad, known, reduced, rows)
    except BaseException:
        reduced.unpersist()
        for data in cached:
            data.unpersist()
        raise


SUMMARY = "summary"  # the tag of each partition's summary record (never a statistics key tuple)


def _stats_and_summary(pairs):
    """A partition of summed events -> its statistics records, then ``(SUMMARY, (events per
    subset, prior label counts))``: what the manifest says of the table, without reading it back."""
    from collections import Counter

    per_subset: Counter = Counter()
    labels: Counter = Counter()
    for pair in pairs:
        if is_stat(pair):
            yield pair
            continue
        key, n = pair
        per_subset[key[0]] += 1
        if key[0] == "":
            labels[key[-1]] += n
    yield SUMMARY, (per_subset, labels)


def _known(summaries) -> dict:
    """The partitions' summaries summed: ``distinct_events``, ``label_counts`` and ``rows``."""
    from collections import Counter

    per_subset: Counter = Counter()
    labels: Counter = Counter()
    for subsets, label_counts in summaries:
        per_subset.update(subsets)
        labels.update(label_counts)
    return {
        "distinct_events": dict(per_subset),
        "label_counts": dict(labels),
        "rows": sum(per_subset.values()),
    }


def _count_row(pair) -> tuple:
    """A summed event as a count row; a sum past 64 bits is an error, never a wrapped count."""
    key, n = pair
    if n > MAX_COUNT:
        raise OverflowError(
            f"count overflow: counts of one event sum past {MAX_COUNT}, the largest 64-bit count"
        )
    return (*key, n)


def _arrow_batches(batches, width, centres, lowercase, subsets, letters):
    """mapInArrow: the events of whole batches of n-gram lines (``backoff.arrow_events.ngram_events``),
    summed inside the task, then the task's statistics as rows ``(MARK + name, …, "", n)``. A count
    overflow is one of them (``overflow``): the task ends well, and the driver refuses the run."""
    from collections import Counter

    import pyarrow as pa

    from nbspark.backoff.arrow_events import ngram_events, ngram_schema
    from nbspark.spine.arrow_counts import PartialCounts

    maybe_inject()
    names = count_columns(letters)
    partial = PartialCounts(names[:-1], "count")
    stats: Counter = Counter()
    try:
        for batch in batches:
            table, batch_stats = ngram_events(
                batch.column("value"), width, centres, lowercase, subsets, letters
            )
            stats.update(batch_stats)
            for summed in partial.add(table):
                yield from summed.to_batches()
        for summed in partial.flush():
            yield from summed.to_batches()
    except OverflowError:  # back to the driver as a statistic, not as a failed task (retried, logged)
        stats["overflow"] += 1
    if stats:
        rows = {name: [None] * len(stats) for name in names}
        rows["subset"] = [MARK + k for k in stats]
        rows["label"] = [""] * len(stats)
        rows["count"] = list(stats.values())
        yield from pa.table(rows, schema=ngram_schema(letters)).to_batches()


def _marked_stats(rows) -> dict:
    """The arrow engine's statistics, in Spark or in process, from its summed ``(subset, count)`` rows
    whose subset is ``MARK + name``. A task's ``overflow`` row, or a sum past 64 bits (``NULL``, Spark's
    ``try_sum``), refuses the run."""
    stats = {}
    for subset, count in rows:
        if count is None or subset == MARK + "overflow":
            raise OverflowError(f"count overflow: counts sum past {MAX_COUNT}, the largest 64-bit count")
        if subset.startswith(MARK):
            stats[subset[1:]] = count
    return dict(sorted(stats.items()))


def _arrow_counts(spark, cfg, inputs) -> Counted:
    """The arrow engine for ``ngrams`` input: the same table and statistics as the Python engines
    (tested); the first malformed lines are named afterwards, only when there are any."""
    from pyspark.sql import functions as F

    letters, names = cfg.letters, count_columns(cfg.letters)
    lines = text_frame(spark, inputs.files)
    if cfg.partitions:
        lines = lines.repartition(cfg.partitions)
    width, centres, lowercase, subsets = (
        cfg.width,
        tuple(cfg.centres),
        cfg.lowercase,
        tuple(cfg.counted_subsets),
    )
    partial = lines.mapInArrow(
        lambda it: _arrow_batches(it, width, centres, lowercase, subsets, letters),
        count_ddl(letters).replace(" NOT NULL", ""),
    )
    # try_sum: a sum past 64 bits across tasks is NULL (then refused below), not a failed task
    agg = cache_coalescable(partial.groupBy(*names[:-1]).agg(F.try_sum("count").alias("count")))
    try:
        marker = F.col("subset").startswith(MARK)
        found = agg.where(marker | F.col("count").isNull()).select("subset", "count").collect()
        stats = _marked_stats((r["subset"], r["count"]) for r in found)
        bad = first_malformed_lines(
            spark.sparkContext,
            inputs.files,
            lambda line: blank_line(line) or parse_ngram_line(line, width),
            stats,
            cfg.mode,
            cfg.max_bad_examples,
        )
        return Counted("arrow", agg.where(~marker), stats, bad, {}, agg)
    except BaseException:
        agg.unpersist()
        raise
