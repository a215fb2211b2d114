"""The training shuffle: ``(event, weight)`` pairs summed by key, with exact run statistics.

Mappers emit two kinds of keyed records through one ``reduceByKey``:

* events: tuples whose first item is a context subset name (``"ABDE"``, ``""`` …);
* statistics: ``(STAT, name)`` (lines read, malformed lines by reason …) and
  ``(BAD, source, offset, reason, line)`` for the first few offending lines of each partition.

Statistics ride the same shuffle instead of accumulators because accumulators updated in
transformations may count a retried task twice; a reduced value counts each record once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

__all__ = ["BAD", "ENGINES", "MARK", "STAT", "PartitionStats", "combine_partition", "count_events", "is_stat", "split_stats"]

STAT = "__stat__"
BAD = "__bad__"
#: Prefix of the statistics rows that the arrow and dataframe engines sum beside their counts
#: (never in a token, a label or a subset name).
MARK = "\u0000"


class PartitionStats:
    """Per-partition counters and the first ``keep_bad`` offending records, emitted at the end."""

    def __init__(self, keep_bad: int):
        self.counts: Counter = Counter()
        self.keep_bad = keep_bad
        self.bad: list[tuple] = []

    def add(self, name: str, n: int = 1) -> None:
        self.counts[name] += n

    def bad_record(self, source: str, offset: int, reason: str, line: str) -> None:
        self.counts[f"malformed.{reason}"] += 1
        self.counts["malformed"] += 1
        if len(self.bad) < self.keep_bad:
            self.bad.append((BAD, source, offset, reason, line[:300]))

    def records(self) -> Iterator[tuple[tuple, int]]:
        for name, n in self.counts.items():
            yield (STAT, name), n
        for rec in self.bad:
            yield rec, 1


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
    """Sum an RDD of ``(key, weight)`` pairs by key: the one counting contract.

    ``engine``: ``pairs``, the literal ``reduceByKey`` (PySpark's own map-side merge, one Python
    call per pair); ``combine``, a plain dict per partition first, then ``reduceByKey`` over
    distinct keys only. Both give the same table; ``add`` must be associative and commutative.
    """
    if engine == "combine":
        pairs = pairs.mapPartitions(lambda it: combine_partition(it, add))
    elif engine != "pairs":
        raise ValueError(f"counting engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    return pairs.reduceByKey(add, numPartitions=partitions or None)


def split_stats(stat_rows: Iterable[tuple[tuple, int]], keep_bad: int) -> tuple[dict, list[dict]]:
    """Statistics and the first ``keep_bad`` offending records (by source, then offset)."""
    stats: dict[str, int] = {}
    bad = []
    for key, n in stat_rows:
        if key[0] == STAT:
            stats[key[1]] = n
        else:
            bad.append({"source": key[1], "offset": key[2], "reason": key[3], "line": key[4]})
    bad.sort(key=lambda b: (b["source"], b["offset"]))
    return dict(sorted(stats.items())), bad[:keep_bad]


def is_stat(record) -> bool:
    """Whether ``record`` is a statistics record ``((STAT | BAD, ...), n)``, not an event pair
    or an example (examples are tuples too, so the shape is checked before the tag)."""
    return (
        isinstance(record, tuple)
        and len(record) == 2
        and isinstance(record[0], tuple)
        and bool(record[0])
        and record[0][0] in (STAT, BAD)
    )

