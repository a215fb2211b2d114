"""Numbers cut into categories (a density's ``density.bins``): the one rule of which bin a cell falls
in and what the bin is called, in Python here and in Spark SQL by ``density.count.binned_columns``,
from the same edges and labels. Pure.

``bins = ["age=30,50,65"]`` cuts the column ``age`` at 30, 50 and 65: a number below 30 is ``<30``,
from 30 up to (not including) 50 is ``[30, 50)``, then ``[50, 65)``, and 65 or more is ``>=65``. A
cell is a number: text that ``NUMBER_TEXT`` reads (as a CSV writes it), or a number of a typed
column; an empty cell (None) stays empty; anything else (``n/a``, NaN, a date) is not a number of
the column, and the row is malformed (``malformed.bin``), as a row whose weight is not a number.

``bins = ["age=quantiles:4"]`` asks the training data for the edges: ``quantile_edges`` of the
column's numbers, over the rows the count keeps, weighted as counted. The model records the edges
it was counted with, and every later reader, update, stream and ``partial_fit`` cuts by those.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Iterable

__all__ = [
    "NUMBER_TEXT",
    "bin_cell",
    "bin_labels",
    "bins_text",
    "cell_number",
    "crossings",
    "edges_crossed",
    "no_edge",
    "parse_bins",
    "quantile_edges",
    "quantile_thresholds",
    "quantiles_asked",
    "quantiles_settled",
    "row_edges",
    "settled_bins",
]

#: A number written as text: a decimal number, maybe with an exponent, spaces or tabs around it.
#: Python's ``float`` and Spark's cast each read more, and not the same more (``1_000`` and other
#: scripts' digits only Python, ``5d`` and ``0x1p3`` only Java), so a text cell is a number only
#: when it matches this, in process and in Spark alike (a density's weights and its binned cells).
NUMBER_TEXT = r"[ \t]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*"
_NUMBER = re.compile(NUMBER_TEXT)


#: ``COLUMN=quantiles:K``: edges that cut the training data's numbers into ``K`` bins of equal weight;
#: ``COLUMN=quantiles:K=EDGE,EDGE,…`` the edges they settled (what a model's manifest records).
_QUANTILES = re.compile(r"[ \t]*quantiles:[ \t]*([0-9]+)[ \t]*(?:=(.*))?", re.DOTALL)
MAX_QUANTILES = 1000


def parse_bins(items: Iterable[str], key: str = "density.bins") -> dict[str, tuple[float, ...] | int]:
    """``["age=30,50,65", "income=quantiles:4", …]`` -> ``{"age": (30.0, 50.0, 65.0), "income": 4}``:
    a column's edges, or the number of quantile bins asked (``quantile_edges`` settles the edges from
    the training data, recorded as ``income=quantiles:4=EDGE,…``, read as its edges); the edges also
    separated by ``|`` (``--set density.bins=age=30|50|65,income=quantiles:4``). ``ValueError``
    naming ``key`` for an item that is neither, edges that are not finite numbers rising strictly,
    quantiles not from 2 to ``MAX_QUANTILES``, or a column named twice."""
    out: dict[str, tuple[float, ...] | int] = {}
    for item in items:
        column, sep, edges = item.partition("=")
        column = column.strip()
        if column in out:
            raise ValueError(f"{key}: column {column!r} is binned twice")
        if column and (asked := _QUANTILES.fullmatch(edges)):
            if not 2 <= int(asked.group(1)) <= MAX_QUANTILES:
                raise ValueError(f"{key}: {item!r} asks for 2 to {MAX_QUANTILES} quantile bins")
            if asked.group(2) is None:
                out[column] = int(asked.group(1))
                continue
            edges = asked.group(2)
        texts = [e.strip() for e in edges.replace("|", ",").split(",")] if sep else []
        if not column or not texts or not all(_NUMBER.fullmatch(e) for e in texts):
            raise ValueError(
                f'{key}: {item!r} is not COLUMN=EDGE,EDGE,… (numbers, e.g. "age=30,50,65") '
                'or COLUMN=quantiles:K ("age=quantiles:4")'
            )
        numbers = tuple(float(e) for e in texts)
        if not all(math.isfinite(e) for e in numbers) or any(a >= b for a, b in zip(numbers, numbers[1:])):
            raise ValueError(f"{key}: the edges of {column!r} must be finite numbers, each above the last")
        out[column] = numbers
    return out


def quantiles_asked(bins: dict) -> dict[str, int]:
    """The columns of ``parse_bins``' answer whose edges the training data settles, with their K."""
    return {c: k for c, k in bins.items() if isinstance(k, int)}


def quantiles_settled(items: Iterable[str]) -> dict[str, int]:
    """The columns of ``density.bins`` items (read by ``parse_bins``) whose edges quantiles settled
    (``COLUMN=quantiles:K=EDGE,…``), with their K."""
    out = {}
    for item in items:
        column, _, edges = item.partition("=")
        if (settled := _QUANTILES.fullmatch(edges)) and settled.group(2) is not None:
            out[column.strip()] = int(settled.group(1))
    return out


def bins_text(bins: dict[str, tuple[float, ...]], quantiles: dict[str, int] | None = None) -> list[str]:
    """Edges as the config writes them, ``["age=30,50,65"]``, those that ``quantiles`` settled as
    ``age=quantiles:4=30,50,65``: ``parse_bins`` reads back the same numbers (what a model's manifest
    records)."""
    quantiles = quantiles or {}
    return [
        f"{c}={f'quantiles:{quantiles[c]}=' if c in quantiles else ''}{','.join(_edge(e) for e in edges)}"
        for c, edges in bins.items()
    ]


def quantile_edges(numbers: Iterable[tuple[float, float]], k: int, column: str = "") -> tuple[float, ...]:
    """The edges that cut weighted numbers into ``k`` bins of about equal weight: ``numbers`` are
    ``(number, weight)`` pairs, a number given again adding its weight. The j-th edge (j = 1 … k-1)
    is the smallest number below which lies at least j/k of the total weight (to 1e-9 of it, so
    that weights summed in another order settle the same edges), so that 1, 2, …, 100 in 4 bins
    are ``<26``, ``[26, 51)``, ``[51, 76)``, ``>=76``. Edges that fall on one number are one: a
    column of few values gets fewer bins; an infinite number (a float column's) weighs in no edge.
    ``ValueError`` naming ``column`` when no edge is left (``no_edge``). The numbers in memory;
    ``density.edges`` cuts a column of Spark's by the same ``quantile_thresholds`` and ``crossings``,
    a piece at a time."""
    weights: dict[float, float] = {}
    for x, w in numbers:
        weights[x] = weights.get(x, 0.0) + w
    values = sorted(x for x, w in weights.items() if w > 0 and math.isfinite(x))  # ±inf: the end bins
    thresholds = quantile_thresholds(math.fsum(weights[x] for x in values), k)
    crossed = crossings(((x, weights[x]) for x in values), thresholds)
    return edges_crossed(crossed) or no_edge(column, len(values), values[-1] if values else None)


def quantile_thresholds(total: float, k: int) -> list[float]:
    """The weight below each of the ``k - 1`` edges of ``k`` quantile bins of ``total`` weight, less
    1e-9 of it (``quantile_edges``)."""
    return [total * j / k * (1 - 1e-9) for j in range(1, k)]


def crossings(pairs: Iterable[tuple[float, float]], thresholds: list[float], below: float = 0.0):
    """``(j, x)`` for each index j of ``thresholds`` (``quantile_thresholds``) reached in ``pairs``
    (``(number, weight)``, the numbers rising, each once): x is the first number with at least
    ``thresholds[j]`` of weight below it, ``below`` being the weight of the numbers before ``pairs``.
    The one rule of where an edge falls, over all the numbers at once or over a range of them."""
    j = 0
    for x, w in pairs:
        while j < len(thresholds) and below >= thresholds[j]:
            yield j, x
            j += 1
        below += w


def edges_crossed(crossed: Iterable[tuple[int, float]]) -> tuple[float, ...]:
    """The edges of ``crossings``' answers, given in the order of their numbers (the ranges of a
    column in order): the first number found for each threshold, equal edges merged."""
    first: dict[int, float] = {}
    for j, x in crossed:
        first.setdefault(j, x)
    edges: list[float] = []
    for j in sorted(first):
        if not edges or edges[-1] != first[j]:
            edges.append(first[j])
    return tuple(edges)


def no_edge(column: str, numbers: int, largest: float | None):
    """``ValueError``: ``column`` has no edge to cut at, holding ``numbers`` distinct numbers of
    positive weight, the largest ``largest``."""
    if numbers == 0:
        held = "no number"
    elif numbers == 1:
        held = f"one number ({_edge(largest)})"
    else:  # nearly all the weight on the largest: no number has j/k of it below
        held = f"nearly all its weight on its largest number ({_edge(largest)})"
    raise ValueError(f"density.bins: {column!r} holds {held} in the rows counted: no quantile to cut it at")


def row_edges(bins: dict, rows: Iterable[tuple]) -> dict[str, tuple[float, ...]]:
    """``quantile_edges`` of each quantile column of ``bins`` (``parse_bins``' answer) over ``rows``,
    each ``(cells, weight)``: the cells of ``bins``' columns in their order, or None for a row that
    is not counted, and its weight, None where it is no weight. A row is left out where it is not
    counted, or where a binned cell is no number (``cell_number``), as a count leaves it out; an
    empty cell weighs in no edge. The one loop of the edges of rows in memory (``density.edges``
    cuts Spark's); ``ValueError`` naming a column that cannot be cut."""
    asked = quantiles_asked(bins)
    numbers: dict[str, list] = {c: [] for c in asked}
    for cells, w in rows:
        if cells is None or w is None:
            continue
        try:
            xs = [cell_number(x) for x in cells]
        except ValueError:
            continue
        for c, x in zip(bins, xs):
            if c in asked and x is not None:
                numbers[c].append((x, w))
    return {c: quantile_edges(numbers[c], k, c) for c, k in asked.items()}


def settled_bins(items: Iterable[str], edges: dict[str, tuple[float, ...]]) -> tuple[str, ...]:
    """``density.bins`` ``items`` as a model records them (``bins_text``): each ``COLUMN=quantiles:K``
    cut at ``edges[COLUMN]`` (``row_edges``, or Spark's ``density.edges.frame_edges``) and written
    ``COLUMN=quantiles:K=EDGE,…``, the others as they were (edges settled before keep their K)."""
    items = list(items)
    bins = parse_bins(items)
    asked = quantiles_asked(bins)
    for column in asked:
        bins[column] = edges[column]
    return tuple(bins_text(bins, {**quantiles_settled(items), **asked}))


def cell_number(value) -> float | None:
    """A cell as the number it holds, None for an empty cell; ``ValueError`` for a cell that is not
    a number (text ``NUMBER_TEXT`` does not read, NaN, a bool, anything else): the one rule of what
    a binned column may hold."""
    if value is None:
        return None
    if isinstance(value, str):
        if not _NUMBER.fullmatch(value):
            raise ValueError(value)
        x = float(value)
    elif isinstance(value, bool) or not isinstance(value, int | float) and not hasattr(value, "__float__"):
        raise ValueError(value)
    else:
        x = float(value)
    if math.isnan(x):
        raise ValueError(value)
    return x


def _edge(e: float) -> str:
    return str(int(e)) if e.is_integer() and abs(e) < 1e15 else repr(e)


def bin_labels(edges: tuple[float, ...]) -> list[str]:
    """The names of the ``len(edges) + 1`` bins, lowest first: ``<a``, ``[a, b)``, …, ``>=z``."""
    return list(_labels(edges))


@functools.lru_cache(maxsize=256)
def _labels(edges: tuple[float, ...]) -> tuple[str, ...]:
    """``bin_labels``, made once per edges: ``bin_cell`` names every cell it bins by them."""
    inner = [f"[{_edge(a)}, {_edge(b)})" for a, b in zip(edges, edges[1:])]
    return (f"<{_edge(edges[0])}", *inner, f">={_edge(edges[-1])}")


def bin_cell(value, edges: tuple[float, ...]) -> str | None:
    """The bin of ``value`` (its label, ``bin_labels``), None for an empty cell; ``ValueError`` for
    a cell that is not a number (``cell_number``)."""
    x = cell_number(value)
    return None if x is None else _labels(edges)[bisect.bisect_right(edges, x)]
