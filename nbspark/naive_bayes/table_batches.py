"""A table's training counts a batch of rows at a time (in Spark and in process): the rows whose
outcome under the row rule (``tables.table_partition``) is certain from their columns' types and a
plain form of their cells are read by pyarrow and counted column by column (``count_columns``,
which counts a model's rows in memory too: ``row_cells``); every other row goes through the row
rule itself, in order, with the partition's statistics and malformed rows.

A row is plain when its label is text holding an ASCII letter or digit (never blank, whatever
Python calls a space) or an integer, and each numeric cell is missing, a number column's, or text of
the plain decimal form (``PLAIN_NUMBER``: a sign, digits with one point, an exponent; no space, no
``inf`` or ``nan``, no ``_``), which pyarrow's cast reads as Python's ``float`` does (both round
correctly; a cast that fails sends the batch to the row rule). Categories are text or integers (their
``str`` is pyarrow's cast). A Bernoulli column, a decimal comma, or any other column type sends every
row to the row rule. Pure; pyarrow and numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

import numpy as np

from nbspark.inputs.parsers import kept
from nbspark.inputs.stats import STAT
from nbspark.naive_bayes.count_table import Y_ANY, YG, YX, Y
from nbspark.naive_bayes.events import add_values
from nbspark.naive_bayes.row_cells import Coded

__all__ = [
    "PLAIN_NUMBER",
    "PlainRows",
    "count_columns",
    "plain_rows",
    "read_plain",
    "split_batch",
    "table_batch_sums",
]

#: A number as pyarrow's cast and Python's ``float`` read it alike (and ``number_cell`` gives it).
PLAIN_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def table_batch_sums(batches: Iterable[tuple], rule, kind: str, record_events) -> dict:
    """The summed events of a partition's rows, statistics and malformed rows among them, as
    ``spine.counting.combine_partition`` sums ``record_events`` of ``rule.rows`` (the row rule) over
    every row. ``batches`` are ``(record batch, each row's index, place(j) -> (file, row))``, in
    file order; ``rule`` a ``tables.TableRule``."""
    sums: dict = {}

    def add(key, value) -> None:
        sums[key] = add_values(sums[key], value) if key in sums else value

    def by_the_rule() -> Iterator[tuple]:
        for batch, index, place in batches:
            read, _, records = split_batch(batch, index, place, rule)
            if read is not None:
                _count_plain(read, add)
            yield from records

    for record in rule.rows(by_the_rule()):
        for key, value in record_events(record, kind):
            add(key, value)
    return sums


def plain_rows(batch, rule) -> np.ndarray | None:
    """Which rows of ``batch`` are plain (the module's rule); None when none can be, by the rule's
    settings or a column's type."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if rule.bernoulli or rule.decimal != "." or batch.num_rows == 0:
        return None
    names = set(batch.schema.names)
    if not {rule.label, *rule.numeric, *rule.categorical} <= names:
        return None
    label = batch.column(rule.label)
    if _text(label.type):
        plain = pc.fill_null(pc.match_substring_regex(label, "[0-9A-Za-z]"), False)
    elif pa.types.is_integer(label.type):
        plain = pc.is_valid(label)
    else:
        return None
    for c in rule.numeric:
        cells = batch.column(c)
        if _text(cells.type):
            plain = pc.and_(plain, pc.fill_null(pc.match_substring_regex(cells, PLAIN_NUMBER), True))
        elif not (pa.types.is_integer(cells.type) or pa.types.is_floating(cells.type)):
            return None
    if not all(_text(t) or pa.types.is_integer(t) for t in (batch.column(c).type for c in rule.categorical)):
        return None
    return plain.to_numpy(zero_copy_only=False)


def _text(t) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t)


class PlainRows(NamedTuple):
    """The plain rows of a batch as the row rule reads them (``read_plain``): ``at``, their positions
    in the batch that the hold-out keeps; their ``label``s, ``numbers`` (float64 with null where a
    cell is missing) and ``finite`` masks, ``categories`` (text, null where missing); ``stats``
    (rows read, documents, missing and non-finite cells, as ``table_partition`` counts them)."""

    at: np.ndarray
    label: object
    numbers: dict
    finite: dict
    categories: dict
    stats: dict

    def stat_records(self) -> list[tuple[tuple, int]]:
        """``stats`` as the row rule's statistics records (none of 0, as ``PartitionStats``)."""
        return [((STAT, name), n) for name, n in self.stats.items() if n]


def split_batch(batch, index: np.ndarray, place, rule) -> tuple[PlainRows | None, np.ndarray, list]:
    """A batch's plain rows read by columns (``read_plain``; None when it has none, or when pyarrow's
    cast refuses a cell: then every row is the rule's), the positions of the other rows, and those
    rows as the row rule's records ``(index, row, place)``, in order: training and scoring alike."""
    plain = plain_rows(batch, rule)
    read = read_plain(batch, index, plain, rule) if plain is not None and plain.any() else None
    rest = np.arange(batch.num_rows) if read is None else np.flatnonzero(~plain)
    rows = batch.take(rest).to_pylist() if rest.size else []
    return read, rest, [(int(index[j]), row, place(j)) for j, row in zip(rest.tolist(), rows)]


def read_plain(batch, index: np.ndarray, plain: np.ndarray, rule) -> PlainRows | None:
    """The rows of ``batch`` that ``plain`` marks, read as ``table_partition`` reads them; None when
    pyarrow's cast refuses a numeric cell (then the row rule takes them all)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    at = np.flatnonzero(plain)
    rows = batch.take(at)
    try:
        numbers = {c: pc.cast(rows.column(c), pa.float64(), safe=False) for c in rule.numeric}
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    stats = {"rows_read": len(at)}
    if rule.holdout:
        splits, holdout, seed = rule.splits, rule.holdout, rule.seed
        keep = np.fromiter((kept(splits, holdout, seed, str(i)) for i in index[at].tolist()), bool, len(at))
        stats["held_out"] = int(len(keep) - keep.sum())  # the other part of a seeded hold-out
        at, rows = at[keep], rows.filter(keep)
        numbers = {c: x.filter(keep) for c, x in numbers.items()}
    n = len(at)
    label = rows.column(rule.label)
    label = label if _text(label.type) else pc.cast(label, pa.string())
    finite = {c: pc.fill_null(pc.is_finite(x), False) for c, x in numbers.items()}
    categories = {}
    for c in rule.categorical:
        v = rows.column(c)
        categories[c] = v if _text(v.type) else pc.cast(v, pa.string())
    missing = sum(x.null_count for x in numbers.values()) + sum(v.null_count for v in categories.values())
    non_finite = sum(n - numbers[c].null_count - (pc.sum(f).as_py() or 0) for c, f in finite.items())
    stats |= {"documents": n, "missing_values": missing, "non_finite_values": non_finite}
    return PlainRows(at, label, numbers, finite, categories, stats)


def _count_plain(read: PlainRows, add: Callable) -> None:
    """Count plain rows (``read_plain``'s) as ``table_partition`` then ``naive_bayes.events.row_events``
    would: the statistics, then the rows kept (the hold-out) by ``count_columns``."""
    for key, n in read.stat_records():
        add(key, n)
    numbers = {
        c: np.where(read.finite[c].to_numpy(zero_copy_only=False), x.to_numpy(zero_copy_only=False), np.nan)
        for c, x in read.numbers.items()
    }
    count_columns(read.label, numbers, read.categories, add)


def count_columns(labels, numbers: dict, categories: dict, add: Callable, weights=None) -> None:
    """Count rows given by columns as ``naive_bayes.events.row_events`` counts each row, scaled by its
    whole weight (``weights``, 1 each where None; a row of weight 0 counts nothing): the rows, each
    class's, each numeric column's values by class (count, Σx, Σx²) and each category by class.
    ``labels``: each row's class, text (pyarrow's, or a list); ``numbers``: column -> float64 array,
    NaN where the row's cell is not counted (missing, not finite); ``categories``: column -> text,
    None (null) where missing (a list, pyarrow's, or ``row_cells.Coded``). Sums run in row order
    (``np.bincount``), as the row rule's do."""
    w = None if weights is None else np.asarray(weights, np.int64)
    keep = None if w is None or w.all() else np.flatnonzero(w)  # the rows that count
    w = w if keep is None else w[keep]
    codes, classes = _codes(labels, keep)
    if not len(codes):
        return

    def sums(at, values=None) -> np.ndarray:  # per class, the weights of the rows ``at`` (times values)
        weighed = values if w is None else w[at] if values is None else values * w[at]
        return np.bincount(codes[at], weighed, len(classes))

    add((Y_ANY, None, None, None), len(codes) if w is None else int(w.sum()))
    for k, count in enumerate(sums(slice(None)).tolist()):
        if count:
            add((Y, classes[k], None, None), int(count))
    with np.errstate(over="ignore"):  # x² past a double's range is inf, as Python's x * x is
        for c, x in numbers.items():
            x = x if keep is None else x[keep]
            at = np.flatnonzero(~np.isnan(x))
            xs = x[at]
            found = zip(sums(at).tolist(), sums(at, xs).tolist(), sums(at, xs * xs).tolist())
            for k, (count, sx, sxx) in enumerate(found):
                if count:
                    add((YG, classes[k], c, None), (int(count), sx, sxx))
    for c, values in categories.items():
        value_codes, seen = _codes(values, keep)
        at = np.flatnonzero(value_codes >= 0)
        pairs = codes[at] * len(seen) + value_codes[at]
        counts = np.bincount(pairs, None if w is None else w[at], len(classes) * len(seen))
        for key in np.flatnonzero(counts).tolist():
            add((YX, classes[key // len(seen)], c, seen[key % len(seen)]), int(counts[key]))


def _codes(values, keep: np.ndarray | None = None) -> tuple[np.ndarray, list]:
    """Text values as codes into their distinct values (-1 where missing), and those values; of the
    rows ``keep`` only, where given (a value of the others may stay among the values)."""
    if isinstance(values, Coded):
        codes, distinct = values.codes, values.values
    elif isinstance(values, list):  # in memory: a dictionary, no copy to pyarrow
        index: dict = {}
        codes = np.array([-1 if v is None else index.setdefault(v, len(index)) for v in values], np.int64)
        distinct = list(index)
    else:  # pyarrow's
        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        encoded = pc.dictionary_encode(values)
        codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
        distinct = encoded.dictionary.to_pylist()
    return (codes if keep is None else codes[keep]), distinct
