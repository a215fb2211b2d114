"""Table rows scored by a naive Bayes model (``naive_bayes.model.NBModel``): the categorical
weights of each ``(column, value)`` and the Gaussian density of each number, summed with the class
prior into joint log-likelihoods. Pure; numpy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nbspark.naive_bayes.model import NBModel
from nbspark.naive_bayes.row_cells import Coded

__all__ = ["score_columns", "score_rows"]


def score_rows(model: NBModel, rows: Sequence[tuple[dict, dict]]) -> tuple[np.ndarray, int]:
    """Joint log-likelihoods of table rows ``(categorical dict, numeric dict)``; unknown values counted:
    ``score_columns`` of the rows' columns."""
    numbers = {f: np.array([num.get(f, np.nan) for _, num in rows], np.float64) for f in model.numeric}
    names = dict.fromkeys(c for cat, _ in rows for c in cat)
    categories = {c: [cat.get(c) for cat, _ in rows] for c in names}
    return score_columns(model, len(rows), numbers, categories)


def score_columns(model: NBModel, n: int, numbers: dict, categories: dict) -> tuple[np.ndarray, int]:
    """Joint log-likelihoods of ``n`` table rows given by columns: ``numbers`` (column -> float64
    array, NaN where the row has no finite value), ``categories`` (column -> text values, None
    where missing, a list; or ``row_cells.Coded``); the values the model never saw counted.
    ``score_rows``, ``nbspark.load``'s rows and the classify job's batches of a table
    (``naive_bayes.scoring``) score by it."""
    jll = np.tile(model.class_log_prior, (n, 1))
    unknown = 0
    if model.weights is not None and model.categorical:
        for c, values in categories.items():  # each row's weights of its value, column by column
            seen = _values_of(model, c)
            if isinstance(values, Coded):  # each distinct value looked up once (-1: a missing cell)
                index = np.array([seen.get(v, -1) for v in values.values] + [-2], np.int64)[values.codes]
            else:
                index = np.array([seen.get(v, -1) if v is not None else -2 for v in values], np.int64)
            unknown += int((index == -1).sum())
            at = np.flatnonzero(index >= 0)
            if len(at) == n:  # every row holds a value the model saw: no rows picked
                jll += model.weights.T[index]
            else:
                jll[at] += model.weights.T[index[at]]
    if model.theta is not None:
        x = np.full((n, len(model.numeric)), np.nan)
        for j, f in enumerate(model.numeric):
            if f in numbers:
                x[:, j] = numbers[f]
        # -0.5 Σ log(2π var) - 0.5 Σ (x-θ)²/var, summed over the features present in the row. A value
        # so far out that this overflows has density 0. A variance of 0 (every training value of every
        # column the same, so var_smoothing adds nothing; or var_smoothing=0) makes the term NaN
        # (0/0, or log 0 + inf): that column says nothing for that class, as a missing cell.
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            diff = (x[:, None, :] - model.theta[None, :, :]) ** 2 / model.var[None, :, :]
            term = np.log(2.0 * np.pi * model.var)[None, :, :] + diff
        jll += -0.5 * np.nansum(np.where(np.isnan(x)[:, None, :], np.nan, term), axis=2)
    return jll, unknown


def _values_of(model: NBModel, column: str) -> dict:
    """``value -> its column of the weights`` for a categorical ``column`` (``model.vocab``'s
    ``(column, value)`` keys), made once a model and column."""
    cache = model.__dict__.setdefault("_values_of", {})
    if column not in cache:
        cache[column] = {v: i for (f, v), i in model.vocab.items() if f == column}
    return cache[column]
