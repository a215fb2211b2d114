"""A density model in memory, read by ``nbspark.load``: ``probability(values, given=None,
model=...)`` and ``log_density(rows, model=...)`` (``density.model.DensityModel``), with the model's
own estimator and smoothing as defaults; ``score_samples``, ``score`` and ``get_params`` as
scikit-learn's density estimators name them."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping

import numpy as np

from nbspark.density.model import COUNT_DDL, DensityModel, count_rows, counted_cell, row_cells
from nbspark.inputs.bins import parse_bins
from nbspark.spine.predictor import (
    LearnsInMemory,
    as_batch,
    refuse_clone,
    refuse_unknown_columns,
    save_rows,
    storable,
    summed_rows,
    whole_weights,
)
from nbspark.storage.counts import read_count_rows, table_rows
from nbspark.storage.locations import Location

__all__ = ["DensityPredictor", "density_answer", "read_density"]


class DensityPredictor(LearnsInMemory):
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
        self._rows, self._pending, self._counted = list(rows), {}, 0
        self.bins = parse_bins(density.get("bins", ()))  # a manifest written before bins has none
        self._density = DensityModel.from_rows(self._rows, self.columns, self.m, self.bins)
        self._unbuilt: dict = {}  # what partial_fit counted since the densities were last used
        self.classes_ = ()  # no class column: a density is over whole rows
        self.path = None  # where nbspark.load read it: where save() commits

    @property
    def density(self) -> DensityModel:
        """The densities (``density.model.DensityModel``), with what ``partial_fit`` counted since they
        were last used added to them (``DensityModel.with_rows``)."""
        self._catch_up(self._take)
        return self._density

    def _take(self, unbuilt: dict) -> None:
        self._density = self._density.with_rows([(*key, n) for key, n in unbuilt.items()])

    def partial_fit(self, X, sample_weight=None, extra_columns: Iterable[str] = ()):
        """Count more rows into the model, as training counts a table's (``density.model.count_rows``):
        each names every column of the model, its cells text as a table writes them (None an empty
        one), a column the model does not know refused unless ``extra_columns`` names it;
        ``sample_weight`` their weights (default 1; finite numbers >= 0, as a weight column's). A
        pandas DataFrame is its rows. The model scores with them at once; ``save()`` commits them.
        A row that cannot be counted is refused, naming it, and nothing of the batch is counted."""
        rows = as_batch(X, "rows", "partial_fit", self.columns)
        cells = [
            row_cells(row, i, self.columns, ": a density is of whole rows") for i, row in enumerate(rows)
        ]
        refuse_unknown_columns(rows, set(self.columns), self.columns, extra_columns)
        cells = [
            tuple(counted_cell(self.bins, c, cell, f"row {i}") for c, cell in zip(self.columns, values))
            for i, values in enumerate(cells)
        ]  # as the counts name them: a binned column's number its bin
        for i, values in enumerate(cells):
            for column, cell in zip(self.columns, values):
                if cell is not None:
                    storable(cell, f"row {i}, column {column!r}")
        weights = whole_weights(sample_weight, len(rows), "row", "partial_fit", least=0, whole=False)
        counted = count_rows(zip(cells, weights), self.columns)
        events = [(r[:3], r[3]) for r in counted]
        with self._counts_lock():  # all read and checked: count it
            self._count(events, operator.add)  # the densities take them when next used
            self._counted += len(rows)
        return self

    def _all_rows(self) -> list[tuple]:
        """The count table: the rows read with what ``partial_fit`` counted since added by key
        (``summed_rows``), as ``save`` keeps it and an estimator's ``save`` writes it."""
        if not self._pending:
            return self._rows
        return summed_rows(self._rows, [(*key, n) for key, n in self._pending.items()], COUNT_DDL)

    def save(self) -> int:
        """Commit what ``partial_fit`` counted since the last save as the model's next version, a delta
        beside its table where the model was read (``storage.versions``), under the model's writer
        lock; the version (as ``NBPredictor.save``)."""
        from nbspark.storage.manifests import DENSITY_KIND

        with self._counts_lock():  # what is counted meanwhile waits
            rows = [(*key, n) for key, n in self._pending.items()]
            stats = {"rows_read": self._counted, "rows": self._counted}
            version, self.manifest = save_rows(
                self.path,
                DENSITY_KIND,
                rows,
                COUNT_DDL,
                self.manifest_fields,
                stats,
                "partial_fit",
                self.manifest,
            )
            if rows:  # the same counts: the densities built from them stand
                self._rows, self._pending, self._counted = self._all_rows(), {}, 0
            return version

    def manifest_fields(self, table) -> dict:
        """This model's manifest fields of a count table in pyarrow: its rows (a version's summed:
        upper bounds), or a compacted version's."""
        from nbspark.density.count import MANIFEST_FIELDS, rows_fields

        known = rows_fields(list(self.columns), table_rows(table))
        return {k: known[k] for k in MANIFEST_FIELDS}

    def whole_stats(self) -> dict:
        """The statistics of the whole model: the read one's and what ``partial_fit`` counted since."""
        stats = self.manifest.get("stats", {})
        return {k: stats.get(k, 0) + self._counted for k in ("rows_read", "rows")}

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
        rows = as_batch(rows, "rows", "log_density", self.columns)
        return self.density.log_density(rows, model or self.model, extra_columns)

    def unseen(self, rows: Iterable[Mapping[str, str | None]]) -> list[dict]:
        """Each row's cells the model never counted in their column (``density.model.DensityModel.unseen``):
        why a row's density is 0 at m = 0."""
        return self.density.unseen(as_batch(rows, "rows", "unseen", self.columns))

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
    predictor = DensityPredictor(manifest, read_count_rows(model_dir, COUNT_DDL, manifest), m)
    predictor.path = model_dir.uri
    return predictor


def density_answer(model: DensityPredictor, values: dict, given: dict, estimator: str | None = None) -> dict:
    """``nbspark query``'s answer of a density model: ``P(values | given)`` with what it was asked."""
    if not values:
        raise ValueError("a density query needs --value COLUMN=CELL (what to give the probability of)")
    estimator = estimator or model.model
    answer = {
        "values": values,
        "given": given,
        "model": estimator,
        "m": model.m,
        "probability": model.probability(values, given, estimator),
        # why a probability is 0: a value asked that its column never held (given ones refuse above)
        "unseen": model.density.never_counted(values),
    }
    asked = [*values.items(), *(given or {}).items()]
    binned = [(c, v) for c, v in asked if c in model.bins and v is not None]
    if binned:  # each binned column's number, and the bin it counts in
        answer["bins"] = {c: {} for c, _ in binned}
        for c, v in binned:
            answer["bins"][c][v] = model.density.cell(c, v, "values")
    return answer
