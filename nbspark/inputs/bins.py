"""Numbers cut into categories (a density's ``density.bins``): the one rule of which bin a cell falls
in and what the bin is called, in Python here and in Spark SQL by ``density.count.binned_columns``,
from the same edges and labels. Pure.

``bins = ["age=30,50,65"]`` cuts the column ``age`` at 30, 50 and 65: a number below 30 is ``<30``,
from 30 up to (not including) 50 is ``[30, 50)``, then ``[50, 65)``, and 65 or more is ``>=65``. A
cell is a number: text that ``NUMBER_TEXT`` reads (as a CSV writes it), or a number of a typed
column; an empty cell (None) stays empty; anything else (``n/a``, NaN, a date) is not a number of
the column, and the row is malformed (``malformed.bin``), as a row whose weight is not a number.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Iterable

__all__ = ["NUMBER_TEXT", "bin_cell", "bin_labels", "parse_bins"]

#: A number written as text: a decimal number, maybe with an exponent, spaces or tabs around it.
#: Python's ``float`` and Spark's cast each read more, and not the same more (``1_000`` and other
#: scripts' digits only Python, ``5d`` and ``0x1p3`` only Java), so a text cell is a number only
#: when it matches this, in process and in Spark alike (a density's weights and its binned cells).
NUMBER_TEXT = r"[ \t]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*"
_NUMBER = re.compile(NUMBER_TEXT)


def parse_bins(items: Iterable[str], key: str = "density.bins") -> dict[str, tuple[float, ...]]:
    """``["age=30,50,65", …]`` -> ``{"age": (30.0, 50.0, 65.0)}``, the edges also separated by ``|``
    (``--set density.bins=age=30|50|65,income=40000|60000``); ``ValueError`` naming ``key`` for
    an item that is not ``COLUMN=EDGE,EDGE,…``, edges that are not finite numbers rising strictly,
    or a column named twice."""
    out: dict[str, tuple[float, ...]] = {}
    for item in items:
        column, sep, edges = item.partition("=")
        column = column.strip()
        texts = [e.strip() for e in edges.replace("|", ",").split(",")] if sep else []
        if not column or not texts or not all(_NUMBER.fullmatch(e) for e in texts):
            raise ValueError(f'{key}: {item!r} is not COLUMN=EDGE,EDGE,… (numbers, e.g. "age=30,50,65")')
        numbers = tuple(float(e) for e in texts)
        if not all(math.isfinite(e) for e in numbers) or any(a >= b for a, b in zip(numbers, numbers[1:])):
            raise ValueError(f"{key}: the edges of {column!r} must be finite numbers, each above the last")
        if column in out:
            raise ValueError(f"{key}: column {column!r} is binned twice")
        out[column] = numbers
    return out


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
    a cell that is not a number (text ``NUMBER_TEXT`` does not read, NaN, a bool, anything else)."""
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
    return _labels(edges)[bisect.bisect_right(edges, x)]
