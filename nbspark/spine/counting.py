"""The training shuffle: ``(event, weight)`` pairs summed by key (the Python engines), and the
merge of two count tables (``--update``).

Mappers emit events and statistics records (``inputs.stats``) through one ``reduceByKey``: events
are tuples whose first item names the event (a context subset ``"ABDE"``, ``""``, or a naive
Bayes event ``"Y"``, ``"YX"`` …); statistics are ``((STAT, name), n)`` and ``((BAD, …), 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ENGINES", "Counted", "LocalTally", "Tally", "combine_partition", "count_events", "merge_counts"]


@dataclass
class Counted:
    """What every counting engine returns (the one counting contract).

    ``counts``: the count DataFrame in the family's count schema; ``stats``: the run statistics
    (lines read, malformed lines by reason, examples …); ``bad``: the first malformed lines
    (``source``, ``offset``, ``line_number``, ``reason``, ``line``); ``known``: values the engine
    learned while counting (label counts, number of features, table columns) so the manifest needs
    no read-back; ``cached``: the cached aggregate behind ``counts``, released by ``release``;
    ``rows``: where the engine summed in Python, the rows ``counts`` was made of (``arrow``);
    ``settled``: settings the count took from the data or the model, by dotted key (a density's
    ``density.bins`` as edges, its quantiles settled), which the manifest records for the run's.
    """

    engine: str
    counts: object
    stats: dict
    bad: list
    known: dict = field(default_factory=dict)
    cached: object = None
    rows: object = None  # the count rows as a Python RDD, where the engine made them in Python
    settled: dict = field(default_factory=dict)

    def arrow(self, ddl: str):
        """The count table in the driver, pyarrow's (``spine.training.write_counts``' ``collect``): the
        engine's Python rows collected where it has them (no Spark SQL), else the DataFrame's."""
        from nbspark.storage.counts import rows_table

        return rows_table(self.rows.collect(), ddl) if self.rows is not None else self.counts.toArrow()

    def release(self) -> None:
        if self.cached is not None:
            self.cached.unpersist()


class Tally:
    """An accumulator's parameter (pyspark's AccumulatorParam protocol): counts by name, summed.
    Update it in a job's result stage, where Spark applies each task's update exactly once."""

    def zero(self, value):
        return {}

    def addInPlace(self, a, b):
        for key, n in b.items():
            a[key] = a.get(key, 0) + n
        return a


class LocalTally:
    """A ``Tally`` accumulator's stand-in for a scorer run in this process: ``add`` and ``value``."""

    def __init__(self):
        self.value: dict = {}

    def add(self, counts: dict) -> None:
        Tally().addInPlace(self.value, counts)


ENGINES = ("pairs", "combine")


def _add(a, b):
    return a + b


def combine_partition(pairs, add=_add):
    """In-mapper combining (Lin's pattern): sum a partition's pairs in a dict, emit each key once."""
    acc: dict = {}
    for key, value in pairs:
        acc[key] = add(acc[key], value) if key in acc else value
    return iter(acc.items())


def count_events(pairs, partitions: int = 0, engine: str = "combine", add=_add):
    """Sum an RDD of ``(key, weight)`` pairs by key.

    ``engine``: ``pairs``, the literal ``reduceByKey`` (PySpark's own map-side merge, one Python
    call per pair); ``combine``, a plain dict per partition first, then ``reduceByKey`` over
    distinct keys only. Both give the same table; ``add`` must be associative and commutative.
    """
    if engine == "combine":
        pairs = pairs.mapPartitions(lambda it: combine_partition(it, add))
    elif engine != "pairs":
        raise ValueError(f"counting engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    return pairs.reduceByKey(add, numPartitions=partitions or None)


def merge_counts(new, *old, sums: list[str]):
    """Add count tables: rows with equal keys (every column but ``sums``; NULLs equal) summed (the
    rule ``storage.counts.summed_table`` follows in pyarrow)."""
    from pyspark.sql import functions as F

    keys = [c for c in new.columns if c not in sums]
    union = new
    for other in old:
        union = union.unionByName(other)
    return union.groupBy(*keys).agg(*[F.sum(c).alias(c) for c in sums]).select(*new.columns)
