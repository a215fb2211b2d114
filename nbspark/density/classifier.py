"""Classifying by density, the lecture's way: pick a class column ``y`` of a density model's table
and predict, for a row's other values ``x``, the class of greatest ``P̂(x, y)``. Pure.

* ``joint``: the joint counts of ``(x, y)``, with backoff over column subsets when ``x`` was never
  seen: the chain drops the last column at a time (``x1 x2 … xk`` → ``x1 … xk-1`` → … → the prior),
  and the first subset whose values were seen decides, with ``P(y | x_S) = c(x_S, y) / c(x_S)``.
  This is Cohen's n-gram backoff generalised from positions to columns, and it runs on the backoff
  family's own machinery (``backoff.model.model_from_counts``, ``backoff.predict.predict``): the
  columns are its letters.
* ``naive``: ``P̂(x, y) = P(y) Π P(x_i | y)``, which is categorical naive Bayes: the naive Bayes
  family's model (``naive_bayes.model.build_nb_model``, kind ``categorical``, smoothing ``alpha``)
  built from the class's marginals of the same joint counts, scored by its maths.

Both come from the density model's one count table (its ``J`` rows): nothing is counted again.
"""

from __future__ import annotations

import math
import string
from collections.abc import Iterable, Mapping

import numpy as np

from nbspark.backoff.model import model_from_counts
from nbspark.backoff.predict import UNSEEN, predict
from nbspark.density.model import DensityModel, row_cells
from nbspark.naive_bayes.model import build_nb_model, log_posteriors
from nbspark.naive_bayes.table_scores import score_rows
from nbspark.settings.config import DENSITY_MODELS
from nbspark.spine.predictor import accuracy, as_batch, refuse_clone, refuse_unknown_columns

__all__ = ["DensityClassifier"]


class DensityClassifier:
    """Predict ``target`` from a row's other columns by ``model`` (``"joint"`` or ``"naive"``), in
    scikit-learn's shapes: ``classes_``, ``predict``, ``predict_proba``, ``score``, ``explain``.
    ``positive`` and ``threshold``: the binary rule (predict ``positive`` when its probability is
    above ``threshold``; the other class otherwise), for a class column of two values."""

    def __init__(
        self,
        density: DensityModel,
        target: str,
        model: str = "joint",
        alpha: float = 1.0,
        positive: str | None = None,
        threshold: float = 0.5,
    ):
        if target not in density.columns:
            raise ValueError(
                f"no class column {target!r}; the model's columns are {', '.join(density.columns)}"
            )
        if model not in DENSITY_MODELS:
            raise ValueError(f"model must be 'joint' or 'naive', got {model!r}")
        at = density.columns.index(target)
        self.target, self.kind, self._cell = target, model, density.cell
        self._binned = target in density.bins  # its classes are bins: a number given is its bin
        self.features = tuple(c for c in density.columns if c != target)
        if len(self.features) > len(string.ascii_uppercase):
            raise ValueError(
                f"the joint classifier backs off over at most 26 columns, got {len(self.features)}"
            )
        joint = [(row[:at] + row[at + 1 :], row[at], w) for row, w in density.joint.items() if w > 0]
        self.classes_ = tuple(sorted({y for _, y, _ in joint if y is not None}))
        if positive is not None and (len(self.classes_) != 2 or positive not in self.classes_):
            raise ValueError(
                f"the binary rule needs two classes, {positive!r} one of them; got {self.classes_}"
            )
        self.positive, self.threshold, self.alpha = positive, float(threshold), float(alpha)
        self.letters = string.ascii_uppercase[: len(self.features)]
        self.chain = tuple(self.letters[:k] for k in range(len(self.letters), -1, -1))
        if model == "joint":
            tables: dict = {s: {} for s in self.chain}
            for x, y, w in joint:
                if y is None:
                    continue
                for s in self.chain:
                    labels = tables[s].setdefault(x[: len(s)], {})
                    labels[y] = labels.get(y, 0.0) + w
            self._tables = tables
            self._backoff = model_from_counts(tables, self.letters, self.chain)
        else:
            self._nb = build_nb_model(_nb_rows(joint, self.features), "categorical", alpha=alpha)

    def explain(self, rows: Iterable[Mapping], extra_columns: Iterable[str] = ()) -> list[dict]:
        """Per row: ``label``, ``probability``, ``probabilities`` by class and, for the joint,
        ``level``: the columns of the subset that decided (``[]`` the prior). A row may hold the
        target; a column the model does not know is refused unless ``extra_columns`` names it
        (``spine.predictor.refuse_unknown_columns``)."""
        rows = as_batch(rows, "rows")
        xs = [  # as the counts name them: a binned column's number its bin
            tuple(
                self._cell(c, v, f"row {i}") for c, v in zip(self.features, row_cells(row, i, self.features))
            )
            for i, row in enumerate(rows)
        ]
        columns = (*self.features, self.target)
        refuse_unknown_columns(rows, set(columns), columns, extra_columns)
        if self.kind == "naive":  # the rows scored together, as naive Bayes scores a batch
            cats = [({c: v for c, v in zip(self.features, x) if v is not None}, {}) for x in xs]
            posteriors = np.exp(log_posteriors(score_rows(self._nb, cats)[0])) if xs else []
            out = [{"probabilities": dict(zip(self._nb.classes, map(float, p)))} for p in posteriors]
        else:
            out = []
            for x in xs:
                decision = predict(self._backoff, x)
                level = () if decision.subset == UNSEEN else tuple(self.features[: len(decision.subset)])
                counts = self._tables.get(decision.subset, {}).get(x[: len(decision.subset)], {})
                total = math.fsum(counts.values())
                p = {c: counts.get(c, 0.0) / total if total else 0.0 for c in self.classes_}
                out.append({"probabilities": p, "level": list(level)})
        for e in out:
            e["label"] = self._decide(e["probabilities"])
            e["probability"] = e["probabilities"].get(e["label"], 0.0) if e["label"] is not None else 0.0
        return out

    def _decide(self, p: dict) -> str | None:
        if not any(p.values()):
            return None
        if self.positive is not None:
            other = next(c for c in self.classes_ if c != self.positive)
            return self.positive if p.get(self.positive, 0.0) > self.threshold else other
        best = max(p.get(c, 0.0) for c in self.classes_)
        return next(c for c in self.classes_ if p.get(c, 0.0) == best)  # ties: the first in order

    __sklearn_clone__ = refuse_clone

    def get_params(self, deep: bool = True) -> dict:
        """The settings it was made with (``DensityPredictor.classifier``'s arguments)."""
        keys = ("target", "model", "alpha", "positive", "threshold")
        return dict(zip(keys, (self.target, self.kind, self.alpha, self.positive, self.threshold)))

    @property
    def feature_names_in_(self) -> np.ndarray:
        """The columns it classifies from (the model's, less the class column)."""
        return np.array(self.features, dtype=object)

    def predict(self, rows: Iterable[Mapping], extra_columns: Iterable[str] = ()) -> np.ndarray:
        return np.array([e["label"] for e in self.explain(rows, extra_columns)], dtype=object)

    def predict_proba(self, rows: Iterable[Mapping], extra_columns: Iterable[str] = ()) -> np.ndarray:
        """``(n, len(classes_))``, each row summing to 1."""
        explained = self.explain(rows, extra_columns)
        return np.array([[e["probabilities"].get(c, 0.0) for c in self.classes_] for e in explained])

    def score(
        self, rows: Iterable[Mapping], labels: Iterable[str], extra_columns: Iterable[str] = ()
    ) -> float:
        """The accuracy of ``predict`` against ``labels`` (``spine.predictor.accuracy``), each a
        class, or a number of a binned class column (``gold``)."""
        return accuracy(self.predict(rows, extra_columns), self.gold(labels), "row")

    def gold(self, labels: Iterable):
        """``labels`` as the classes name them: a binned class column's numbers (or text that is one)
        as their bins, the model's cell rule (``DensityModel.cell``; None, an empty cell, stays None);
        the labels of another class column as given."""
        if not self._binned:
            return labels
        return [
            self._cell(self.target, y, f"label {i}")
            for i, y in enumerate(as_batch(labels, "labels", "score"))
        ]


def _nb_rows(joint: list, features: tuple[str, ...]) -> list[tuple]:
    """The naive Bayes family's count rows (``event, label, feature, value, n, sum, sumsq``) of the
    joint counts: each distinct row's weight added to its class and to each of its cells."""
    counts: dict = {}
    for x, y, w in joint:
        if y is None:
            continue
        keys = [("Y=ANY", None, None, None), ("Y", y, None, None)]
        keys += [("YX", y, f, v) for f, v in zip(features, x) if v is not None]
        for key in keys:
            counts[key] = counts.get(key, 0.0) + w
    return [(*key, n, None, None) for key, n in counts.items()]
