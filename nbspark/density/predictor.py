"""A density model in memory, read by ``nbspark.load``: ``probability(values, given=None,
model=...)`` and ``log_density(rows, model=...)`` (``density.model.DensityModel``), with the model's
own estimator and smoothing as defaults; ``score_samples``, ``score`` and ``get_params`` as
scikit-learn's density estimators name them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from nbspark.density.model import COUNT_DDL, DensityModel
from nbspark.spine.predictor import as_batch, refuse_clone
from nbspark.storage.counts import read_count_rows
from nbspark.storage.locations import Location

__all__ = ["DensityPredictor", "density_answer", "read_density"]


class DensityPredictor:
    """``model`` (``"joint"`` or ``"naive"``) defaults to the one the config named; ``m`` is the
    model's smoothing unless ``load`` was given another."""

    kind = "density"
    text = False  # it scores rows (mappings of column -> cell), as a naive Bayes table model does

    def __init__(self, manifest: dict, rows, m: float | None = None):
        density = manifest["config"]["density"]
        self.manifest = manifest
        self.columns = tuple(manifest["columns"])
        self.model = density["model"]
        self.m = float(density["m"] if m is None else m)
        if not (math.isfinite(self.m) and self.m >= 0):
            raise ValueError(f"m must be a finite number >= 0, got {m!r}")
        self.density = DensityModel.from_rows(rows, self.columns, self.m)
        self.classes_ = ()  # no class column: a density is over whole rows

    def probability(
        self,
        values: Mapping[str, str | None],
        given: Mapping[str, str | None] | None = None,
        model: str | None = None,
    ) -> float:
        return self.density.probability(values, given, model or self.model)

    def log_density(
        self,
        rows: Iterable[Mapping[str, str | None]],
        model: str | None = None,
        extra_columns: Iterable[str] = (),
    ) -> list[float]:
        """``log P(row)`` of each row (``density.model.DensityModel.log_density``); a pandas DataFrame
        is its rows. A column the model does not know is refused unless ``extra_columns`` names it."""
        rows = as_batch(rows, "rows", "log_density")
        return self.density.log_density(rows, model or self.model, extra_columns)

    def score_samples(self, X, model: str | None = None, extra_columns: Iterable[str] = ()) -> np.ndarray:
        """``log_density`` as scikit-learn's density estimators give it (``KernelDensity``,
        ``GaussianMixture``): an ndarray of ``log P(row)``, ``-inf`` where the density is 0; sort by it
        to find the least likely rows."""
        return np.array(self.log_density(X, model, extra_columns), dtype=float)

    def score(self, X, y=None, model: str | None = None, extra_columns: Iterable[str] = ()) -> float:
        """The total log-likelihood of the rows (``KernelDensity.score``: the sum of
        ``score_samples``; ``-inf`` if one row has density 0). ``y`` is ignored, as scikit-learn's."""
        return float(math.fsum(self.score_samples(X, model, extra_columns)))

    __sklearn_clone__ = refuse_clone

    def get_params(self, deep: bool = True) -> dict:
        """``model`` (the estimator the config named) and ``m`` (the smoothing)."""
        return {"model": self.model, "m": self.m}

    @property
    def feature_names_in_(self) -> np.ndarray:
        """The model's columns, in its order (what a row names)."""
        return np.array(self.columns, dtype=object)

    @property
    def n_features_in_(self) -> int:
        return len(self.columns)

    def classifier(
        self,
        target: str,
        model: str = "joint",
        alpha: float = 1.0,
        positive: str | None = None,
        threshold: float = 0.5,
    ):
        """A classifier of the column ``target`` from the others, by this model's counts
        (``density.classifier.DensityClassifier``: the joint with backoff over columns, or the naive
        one, which is categorical naive Bayes with smoothing ``alpha``)."""
        from nbspark.density.classifier import DensityClassifier

        return DensityClassifier(self.density, target, model, alpha, positive, threshold)


def read_density(model_dir: Location, manifest: dict, m: float | None = None) -> DensityPredictor:
    """The density model in ``model_dir`` (its ``manifest`` read), its counts checked as every reader
    checks them."""
    return DensityPredictor(manifest, read_count_rows(model_dir, COUNT_DDL, manifest), m)


def density_answer(model: DensityPredictor, values: dict, given: dict, estimator: str | None = None) -> dict:
    """``nbspark query``'s answer of a density model: ``P(values | given)`` with what it was asked."""
    if not values:
        raise ValueError("a density query needs --value COLUMN=CELL (what to give the probability of)")
    estimator = estimator or model.model
    return {
        "values": values,
        "given": given,
        "model": estimator,
        "m": model.m,
        "probability": model.probability(values, given, estimator),
    }
