"""A density model in memory, read by ``nbspark.load``: ``probability(values, given=None,
model=...)`` and ``log_density(rows, model=...)`` (``density.model.DensityModel``), with the model's
own estimator and smoothing as defaults."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from nbspark.density.model import COUNT_DDL, DensityModel
from nbspark.spine.predictor import as_batch
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
