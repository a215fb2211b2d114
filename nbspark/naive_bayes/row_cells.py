"""A table model's rows in memory read by column (``nbspark.load``'s ``predict``, ``explain`` and
``partial_fit``, ``NaiveBayes.fit``), as the classify job reads a table's cells: a missing, None, NaN
or non-finite number is left out (naive Bayes skips that feature); a number column's cell is a
number or its text (``number_cell``); a category is its text, ``str(value)``; a Bernoulli column's
``"0"`` or ``"1"`` (``binary_cell``: 1, 1.0, "1" and True are "1").

Rows are mappings of column -> value, or a ``spine.predictor.Grid`` (a 2-D array's or a pandas
DataFrame's columns), whose number columns of a numeric type are read whole by numpy, whose integer
categories are made text once per distinct value (``Coded``), and whose text columns are taken as
they are; mappings are read cell by cell. ``table_batches.count_columns`` counts what is read, and
``table_scores.score_columns`` scores it. A refusal names the first row at fault, in the order: a row
that is no mapping, a row with none of the model's columns, a cell that is neither text nor a
number, a number column's cell that is no number, a category that cannot be counted or scored.
Pure; numpy.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from nbspark.naive_bayes.events import binary_cell, number_cell
from nbspark.spine.predictor import Grid, some_names, storable

__all__ = ["Cells", "Coded", "read_cells"]


class Coded(NamedTuple):
    """A categorical column given by codes: row i's text is ``values[codes[i]]``, missing where the
    code is -1 (an integer column read whole: its distinct values made text once, not each cell)."""

    codes: np.ndarray
    values: list

    def tolist(self) -> list:
        return [None if k < 0 else self.values[k] for k in self.codes.tolist()]


class Cells(NamedTuple):
    """``n`` rows by column: ``numbers`` (column -> float64 array, NaN where the row's cell is left
    out) and ``categories`` (column -> text, None where missing), as ``table_scores.score_columns``
    scores them and ``table_batches.count_columns`` counts them."""

    n: int
    numbers: dict
    categories: dict

    def unseen(self, vocab) -> list[dict]:
        """Each row's categories that ``vocab`` (a model's ``(column, value)`` pairs) does not hold."""
        out: list[dict] = [{} for _ in range(self.n)]
        for c, values in self.categories.items():
            for i, v in enumerate(values.tolist() if isinstance(values, Coded) else values):
                if v is not None and (c, v) not in vocab:
                    out[i][c] = v
        return out


def read_cells(
    rows: Sequence, numeric: list[str], categorical: list[str], binary, kind: str, vocab=None
) -> Cells:
    """``rows`` read by the module's rule: ``numeric`` and ``categorical`` columns (``binary``: those
    of them that are Bernoulli columns), ``kind`` the model's name in a refusal. ``vocab``: when
    scoring, the model's ``(column, value)`` pairs, and a category that is not text must be one of
    them (True against a CSV's ``"TRUE"``, 3.0 against ``"3"``: never scored as unseen in silence);
    None when learning, where a category the model has not seen is a new one, and must be
    storable (no lone surrogate)."""
    columns = [*numeric, *categorical]
    if isinstance(rows, Grid):
        if len(rows) and not any(c in rows.columns for c in columns):
            _refuse_none_of(0, columns, list(rows.columns))
        given = {c: rows.columns.get(c) for c in columns}
        given = {c: v if v is None or v.dtype.kind in "iufU" else rows.cells(c) for c, v in given.items()}
    else:
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise TypeError(
                    f"a {kind} model scores rows, each a mapping of column -> value "
                    f"({some_names(columns, 6)}); item {i} is a {type(row).__name__}"
                )
            if not any(c in row for c in columns):  # every key misspelt: scored on the prior alone
                _refuse_none_of(i, columns, list(row))
        given = {c: [row.get(c) for row in rows] for c in columns}
    n = len(rows)
    given = {c: [None] * n if v is None else v for c, v in given.items()}
    _first(  # a dict or a list is no one value, a number's nor a category's
        (
            (i, j, f"row {i}, column {c!r}: argument must be a string or a number, not {type(v).__name__}")
            for j, c in enumerate(columns)
            if isinstance(given[c], list)
            for i, v in enumerate(given[c])
            if type(v) is not str and not isinstance(v, str | numbers.Number | None)
        ),
        TypeError,
    )
    numbers_ = {c: _numbers(c, j, given[c]) for j, c in enumerate(numeric)}
    _first((found for found in numbers_.values() if isinstance(found, tuple)), ValueError)
    categories = {}
    for c in categorical:
        values = given[c]
        if isinstance(values, np.ndarray) and values.dtype.kind in "iu" and c not in binary:
            distinct, codes = np.unique(values, return_inverse=True)
            text = distinct.astype(str).tolist()  # str(v): numpy writes an integer as Python does
            if vocab is not None and (unseen := [k for k, v in enumerate(text) if (c, v) not in vocab]):
                i = int(np.flatnonzero(np.isin(codes, unseen))[0])
                _refuse_unseen(c, i, values[i].item(), vocab)
            categories[c] = Coded(codes.astype(np.int64).ravel(), text)
            continue
        cells = values.tolist() if isinstance(values, np.ndarray) else values
        if c not in binary and all(type(v) is str for v in cells):  # text, every cell: as it is
            categories[c] = cells
            if vocab is None:
                _storable(c, cells)
        else:
            categories[c] = _categories(c, cells, c in binary, vocab)
    return Cells(n, numbers_, categories)


def _refuse_none_of(i: int, columns: list[str], keys: list) -> None:
    raise ValueError(
        f"row {i} has none of the model's columns ({some_names(columns, 6)}); "
        + (f"its keys: {', '.join(map(repr, keys[:6]))}" if keys else "it is empty")
    )


def _first(found, error: type[Exception]) -> None:
    """Raise ``error`` of the first ``(row, column's place, message)`` of ``found``, if any."""
    if first := min(found, default=None):
        raise error(first[2])


def _numbers(column: str, j: int, values) -> np.ndarray | tuple:
    """A number column's cells as float64, NaN where left out; or ``(row, j, message)`` of its
    first cell that is no number."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        x = values.astype(np.float64)
    else:
        x = np.full(len(values), np.nan)
        for i, cell in enumerate(values.tolist() if isinstance(values, np.ndarray) else values):
            try:
                v = number_cell(cell)
            except (TypeError, ValueError):
                return (i, j, f"row {i}, column {column!r}: {cell!r} is not a number")
            if v is not None:
                x[i] = v
    x[~np.isfinite(x)] = np.nan
    return x


def _categories(column: str, cells: list, binary: bool, vocab) -> list:
    """A categorical column's cells as text, None where missing (the module's rule)."""
    out = []
    for i, v in enumerate(cells):
        if v is None or (isinstance(v, float) and math.isnan(v)):  # a NaN cell of a pandas frame
            out.append(None)
            continue
        if binary:  # as training read it: 1, 1.0, "1" and True are "1"
            try:
                v = binary_cell(v)
            except (TypeError, ValueError):
                raise ValueError(
                    f"row {i}, column {column!r}: {v!r} is not 0 or 1 (a Bernoulli column)"
                ) from None
        elif vocab is not None and not isinstance(v, str) and (column, str(v)) not in vocab:
            _refuse_unseen(column, i, v, vocab)
        if v is None:
            out.append(None)
        else:
            out.append(str(v) if vocab is not None else storable(str(v), f"row {i}, column {column!r}"))
    return out


def _refuse_unseen(column: str, i: int, v, vocab) -> None:
    seen = sorted(x for f, x in vocab if f == column)
    raise ValueError(
        f"row {i}, column {column!r}: {v!r} is not a value the model saw there "
        f"({some_names(list(map(repr, seen)), 6)}); give a category as the training data wrote it, "
        "as text"
    )


def _storable(column: str, values: list[str]) -> None:
    """Each text of a column is storable (``storable``): looked for in all of them at once."""
    try:
        storable("".join(values), "")
    except ValueError:
        for i, v in enumerate(values):
            storable(v, f"row {i}, column {column!r}")
