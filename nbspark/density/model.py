"""Density estimation by counting, the lecture's two estimators of a table's rows. Pure.

One count table serves both (``COUNT_DDL``): ``N`` the total weight of the rows, ``X`` each column's
weight per value (its marginal), ``J`` each distinct row's weight (the joint; its values as a key,
``row_key``). A row's weight is 1, or its weight column's number.

* ``joint``: ``P(x_S) = (c(x_S) + m·Π_{i∈S} q_i) / (N + m)``, ``c(x_S)`` the weight of the rows that
  hold the values ``x_S`` of the columns ``S`` (any others summed over);
* ``naive``: ``P(x_S) = Π_{i∈S} (c_i(x_i) + m·q_i) / (N + m)``, each column counted alone;

where ``q_i = 1 / k_i``, ``k_i`` the distinct values seen in column ``i`` (a Dirichlet prior, uniform
over them), and ``m = 0`` is the maximum-likelihood estimate, ``# / N``. A conditional is a ratio of
two of these: ``P(x_S | x_G) = P(x_S, x_G) / P(x_G)``. Values are cells as the table writes them
(text), ``None`` for an empty cell.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from nbspark.inputs.bins import bin_cell
from nbspark.report.format import cells_said
from nbspark.settings.config import DENSITY_MODELS
from nbspark.spine.predictor import refuse_unknown_columns

__all__ = ["COUNT_DDL", "DensityModel", "count_rows", "counted_cell", "row_cells", "row_key", "text_cell"]

COUNT_DDL = "event STRING NOT NULL, column STRING, value STRING, n DOUBLE NOT NULL"


def row_key(values: Sequence[str | None]) -> str:
    """A row's values as one key: a compact JSON list (``["a",null]``); the one encoding of every
    counter and reader."""
    return json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))


def count_rows(rows: Iterable[tuple[Sequence[str | None], float]], columns: Sequence[str]) -> list[tuple]:
    """The count table of ``(values, weight)`` rows, ``values`` in the order of ``columns``: its rows
    in ``COUNT_DDL``'s order (``N`` first, then ``X`` by column and value, then ``J`` by key). The
    weights of each key are added with ``math.fsum``, so weights written as probabilities (0.30,
    0.05, …) add to what they say."""
    joint: dict[str, list[float]] = {}
    for values, weight in rows:
        joint.setdefault(row_key(values), []).append(weight)
    summed = {key: math.fsum(ws) for key, ws in joint.items()}
    marginal: list[dict] = [{} for _ in columns]
    for key, w in summed.items():
        for i, v in enumerate(json.loads(key)):
            marginal[i].setdefault(v, []).append(w)
    out = [("N", None, None, math.fsum(summed.values()))]
    for c, counts in zip(columns, marginal):
        out += [
            ("X", c, v, math.fsum(ws))
            for v, ws in sorted(counts.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))
        ]
    out += [("J", None, key, w) for key, w in sorted(summed.items())]
    return out


def text_cell(value, column: str, what: str):
    """``value``, a cell of ``column``: text as the table writes it, or None for an empty one;
    ``ValueError`` naming ``what`` (the row) otherwise (a number says how to give it: as text, binned
    first where it is a measurement, as a Parquet number column is refused)."""
    if value is not None and not isinstance(value, str):
        hint = (
            " (a density counts categories: give a number as text, or bin its column: density.bins)"
            if isinstance(value, int | float)
            else ""
        )
        raise ValueError(
            f"{what}: a cell is text as the table writes it, or None for an empty one; got "
            f"{value!r} for {column!r}{hint}"
        )
    return value


def row_cells(row, i: int, columns: Sequence[str], why: str = "") -> tuple:
    """The cells of ``columns`` in row ``i``, a mapping of column -> cell: ``TypeError`` for a row
    that is not one, ``ValueError`` naming the columns it lacks (and ``why`` they are needed)."""
    if not isinstance(row, Mapping):
        raise TypeError(f"rows are mappings of column -> cell; row {i} is a {type(row).__name__}")
    if missing := [c for c in columns if c not in row]:
        raise ValueError(f"row {i} lacks column(s) {', '.join(missing)}{why}")
    return tuple(row[c] for c in columns)


def counted_cell(bins: Mapping, column: str, value, what: str) -> str | None:
    """``value`` of ``column`` as the counts name it: its bin's label in a binned column (``bins``: the
    binned columns' edges; a number, or text that is one; ``inputs.bins.bin_cell``), else the text
    itself (``text_cell``); ``ValueError`` naming ``what`` (the row) for one that is neither."""
    if column not in bins:
        return text_cell(value, column, what)
    try:
        return bin_cell(value, bins[column])
    except ValueError:
        raise ValueError(
            f"{what}: {value!r} in {column!r} is not a number, and the column is binned (density.bins)"
        ) from None


@dataclass(frozen=True)
class DensityModel:
    """The joint and naive densities of a count table (``from_rows``)."""

    columns: tuple[str, ...]
    total: float
    marginals: tuple[dict, ...]  # per column: value -> weight
    joint: dict  # row (a tuple of values) -> weight
    m: float = 0.0
    # the binned columns' edges (``density.bins``, ``inputs.bins``): a number given is its bin's label
    bins: dict = field(default_factory=dict)

    @classmethod
    def from_rows(
        cls, rows: Iterable[Sequence], columns: Sequence[str], m: float = 0.0, bins: Mapping | None = None
    ) -> DensityModel:
        """The model of count rows ``(event, column, value, n)``, rows of one key summed (a model's rows
        read, then what ``partial_fit`` counted since); ``bins`` its binned columns' edges."""
        empty = cls(tuple(columns), 0.0, tuple({} for _ in columns), {}, m, dict(bins or {}))
        return empty.with_rows(rows)

    def with_rows(self, rows: Iterable[Sequence]) -> DensityModel:
        """This model with more count rows ``(event, column, value, n)`` counted in, rows of one key
        summed: a new model (the weights copied, then added to; this one stays as it was), so that
        what ``partial_fit`` counted is added without reading every count again."""
        at = {c: i for i, c in enumerate(self.columns)}
        total, marginals, joint = self.total, [dict(seen) for seen in self.marginals], dict(self.joint)
        for event, column, value, n in rows:
            if event == "N":
                total += n
            elif event == "X":
                seen = marginals[at[column]]
                seen[value] = seen.get(value, 0) + n
            else:
                key = tuple(json.loads(value))
                joint[key] = joint.get(key, 0) + n
        return replace(self, total=total, marginals=tuple(marginals), joint=joint)

    def cell(self, column: str, value, what: str) -> str | None:
        """``value`` of ``column`` as the counts name it (``counted_cell`` with this model's bins)."""
        return counted_cell(self.bins, column, value, what)

    def _at(self, values: Mapping[str, str | None], what: str) -> dict[int, str | None]:
        """Column positions of ``values`` as the counts name them (``cell``), refusing an unknown
        column or a value that is not a cell."""
        if not isinstance(values, Mapping):
            raise TypeError(
                f"{what}: a mapping of column -> cell, got {type(values).__name__} (the log of each of "
                "many rows: log_density or score_samples)"
            )
        out = {}
        for column, value in values.items():
            if column not in self.columns:
                raise ValueError(
                    f"{what}: no column {column!r}; the model's columns are {', '.join(self.columns)}"
                )
            out[self.columns.index(column)] = self.cell(column, value, what)
        return out

    def never_counted(self, values: Mapping[str, str | None], what: str = "values") -> dict:
        """The cells of ``values`` (column -> cell, as given) that the model never counted in their
        column, binned as counted: each makes a probability that holds it 0 unless smoothed."""
        at = self._at(values, what)  # position -> the cell as counted; unknown columns refused there
        return {
            c: v
            for c, v in values.items()
            if at[self.columns.index(c)] not in self.marginals[self.columns.index(c)]
        }

    def _mass(self, at: dict[int, str | None], model: str) -> float:
        """P(x_S) of the columns and values ``at`` (position -> value) under ``model``."""
        n, m = self.total, self.m
        if model == "naive":
            p = 1.0
            for i, v in at.items():
                p *= (self.marginals[i].get(v, 0.0) + m / len(self.marginals[i])) / (n + m)
            return p
        if len(at) == len(self.columns):  # a whole row: its own count, looked up
            seen = self.joint.get(tuple(at[i] for i in range(len(self.columns))), 0.0)
        else:
            seen = sum(w for row, w in self.joint.items() if all(row[i] == v for i, v in at.items()))
        q = math.prod(1 / len(self.marginals[i]) for i in at)
        return (seen + m * q) / (n + m)

    def probability(
        self,
        values: Mapping[str, str | None],
        given: Mapping[str, str | None] | None = None,
        model: str = "joint",
        what: str = "values",
    ) -> float:
        """``P(values | given)`` under the ``joint`` or ``naive`` estimator (the module docstring).
        ``ValueError`` for an unknown column or model, and for ``given`` values never seen together
        (their probability is 0, and the conditional is undefined: smooth with ``m > 0``); ``what``
        names ``values`` in a refusal."""
        if model not in DENSITY_MODELS:
            raise ValueError(f"model must be 'joint' or 'naive', got {model!r}")
        both = self._at(values, what)
        cond = self._at(given or {}, "given")
        if any(i in both and both[i] != v for i, v in cond.items()):
            return 0.0  # a column asked two different values
        both.update(cond)
        if not cond:
            return self._mass(both, model)
        below = self._mass(cond, model)
        if below == 0:
            unseen = cells_said(self.never_counted(given, "given"))
            why = (
                f"never counted in its column: {unseen}"
                if unseen
                else "the given values were never seen together"
            )
            raise ValueError(
                f"P(given) = 0 under the {model} model ({why}): the conditional is undefined; smooth "
                "with m > 0 (density.m, load(..., m=), query --m)"
            )
        return self._mass(both, model) / below

    def unseen(self, rows: Sequence[Mapping[str, str | None]]) -> list[dict]:
        """Each row's cells (as given) that the model never counted in their column, binned as
        counted: ``{column: cell}``, where a row's density is 0 unless smoothed (m > 0), under either
        estimator. The rows as ``log_density`` takes them, checked there."""
        return [
            self.never_counted(
                dict(zip(self.columns, row_cells(row, i, self.columns, ": a density is of whole rows"))),
                f"row {i}",
            )
            for i, row in enumerate(rows)
        ]

    def log_density(
        self,
        rows: Sequence[Mapping[str, str | None]],
        model: str = "joint",
        extra_columns: Iterable[str] = (),
    ) -> list[float]:
        """``log P(row)`` of each row (every column of the model given): ``-inf`` where the row has
        probability 0 (never seen, under the unsmoothed joint). A column the model does not know is
        refused unless ``extra_columns`` names it (an id), as a naive Bayes table model refuses it
        (``spine.predictor.refuse_unknown_columns``)."""
        cells = [
            row_cells(row, i, self.columns, ": a density is of whole rows") for i, row in enumerate(rows)
        ]
        refuse_unknown_columns(rows, set(self.columns), self.columns, extra_columns)
        out = []
        for i, x in enumerate(cells):
            p = self.probability(dict(zip(self.columns, x)), model=model, what=f"row {i}")
            out.append(math.log(p) if p > 0 else -math.inf)
        return out
