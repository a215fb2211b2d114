"""Count tables summed on Arrow inside a task, for the arrow engines of both families: in-mapper
combining (``PartialCounts``), a sum that refuses to overflow (``checked_sum``), and counting in
this process on a thread per core (``count_on_threads``) over local files' lines (``local_batches``).
Pure pyarrow."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc

from nbspark.inputs.parsers import MAX_COUNT

__all__ = [
    "LOCAL_BATCH",
    "LOCAL_BATCH_BYTES",
    "PartialCounts",
    "checked_sum",
    "count_on_threads",
    "local_batches",
]


class PartialCounts:
    """In-mapper combining (Lin and Dyer): partial count tables summed by ``keys`` inside the
    task until they hold ``limit`` rows, so the shuffle carries one row per distinct key per
    flush instead of one per key per batch. Memory stays bounded by ``limit``."""

    def __init__(self, keys=("label", "token"), value: str = "n", limit: int = 2_000_000):
        self.keys, self.value, self.limit = list(keys), value, limit
        self.tables: list[pa.Table] = []
        self.rows = 0

    def add(self, table: pa.Table) -> list[pa.Table]:
        """Keep ``table``; returns what to emit now (the summed tables once over the limit)."""
        self.tables.append(table)
        self.rows += table.num_rows
        if self.rows < self.limit:
            return []
        return self.flush()

    def flush(self) -> list[pa.Table]:
        if not self.tables:
            return []
        merged = pa.concat_tables(self.tables)
        self.tables, self.rows = [], 0
        if merged.num_rows == 0:
            return []
        summed = checked_sum(merged, self.keys, self.value)
        return [
            pa.table(
                [summed[k] for k in self.keys] + [summed[f"{self.value}_sum"]], names=[*self.keys, self.value]
            ).cast(merged.schema)
        ]


def checked_sum(table: pa.Table, keys: list[str], value: str) -> pa.Table:
    """``table`` grouped by ``keys`` with ``value`` (non-negative int64) summed, as
    ``KEYS…, VALUE_sum``; pyarrow's sum wraps around on overflow, so a sum past ``MAX_COUNT`` is
    refused (``OverflowError``) rather than stored negative. When the largest value times the rows
    cannot reach 2**63 (nearly always), the plain sum runs alone."""
    if (pc.max(table[value]).as_py() or 0) * table.num_rows <= MAX_COUNT:
        return table.group_by(keys).aggregate([(value, "sum")])
    as_float = pc.cast(table[value], pa.float64(), safe=False)
    summed = (
        table.append_column("__as_float", as_float)
        .group_by(keys)
        .aggregate([(value, "sum"), ("__as_float", "sum")])
    )
    # a float sum above 2**63 or a negative (wrapped) integer sum: past MAX_COUNT (2**63 − 1)
    if summed.num_rows and (
        pc.max(summed["__as_float_sum"]).as_py() > 2.0**63 or pc.min(summed[f"{value}_sum"]).as_py() < 0
    ):
        raise OverflowError(
            f"count overflow: counts of one event sum past {MAX_COUNT}, the largest 64-bit count"
        )
    return summed.drop_columns(["__as_float_sum"])


def count_on_threads(
    batches: Iterable, count: Callable[[Iterator], Iterable[pa.RecordBatch]], workers: int | None = None
) -> list[pa.RecordBatch]:
    """``count(batches)`` spread over ``workers`` threads (one per core by default): each thread runs
    its own ``count`` over the batches it pulls from the shared ``batches`` (taken one at a time,
    under a lock), as each Spark task runs it over its partition; what they return, together. The
    counts do not depend on which thread took which batch. pyarrow's and numpy's kernels let go of
    the GIL, so the threads count at once."""
    batches, lock = iter(batches), threading.Lock()

    def pulled() -> Iterator:
        while True:
            with lock:
                batch = next(batches, None)
            if batch is None:
                return
            yield batch

    workers = workers or os.cpu_count() or 1
    if workers == 1:
        return list(count(pulled()))
    with ThreadPoolExecutor(workers, thread_name_prefix="nbspark-count") as pool:
        return [b for part in pool.map(lambda _: list(count(pulled())), range(workers)) for b in part]


#: Arrow batches when counting in process, of at most this many lines and about this many bytes (the
#: counts do not depend on them): a file of a few MB is already counted on every core
LOCAL_BATCH, LOCAL_BATCH_BYTES = 65_536, 1 << 21


def local_batches(files):
    """Every file's lines (``inputs.files.local_line_values``: as Spark's text reader gives them) in
    Arrow batches of ``value`` strings, for an arrow engine's rule run in this process."""
    import numpy as np

    from nbspark.inputs.files import local_line_values

    for f in files:
        lines = local_line_values(f)
        ends = np.cumsum(np.fromiter(map(len, lines), np.int64, len(lines)) + 1)
        by_bytes = np.searchsorted(
            ends, np.arange(LOCAL_BATCH_BYTES, ends[-1] if len(ends) else 0, LOCAL_BATCH_BYTES)
        )
        cuts = sorted({0, len(lines), *by_bytes.tolist(), *range(0, len(lines), LOCAL_BATCH)})
        for a, b in zip(cuts, cuts[1:]):
            yield pa.record_batch([pa.array(lines[a:b], pa.binary()).view(pa.string())], names=["value"])
