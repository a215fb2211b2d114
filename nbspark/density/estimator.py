"""A density estimator in scikit-learn's shape (``nbspark.Density``): made from its settings, fitted
on rows in memory (a pandas DataFrame, or mappings of column -> cell), cloned by scikit-learn's
model selection (``GridSearchCV`` over ``m`` by held-out log-likelihood, as ``KernelDensity``'s
bandwidth is chosen), and saved as an nbspark model directory that the command line, the pyspark.ml
stage and ``nbspark.load`` read (``spine.estimator``).

``fit`` makes an empty model of its settings (``DensityPredictor``, what ``nbspark.load`` gives) and
counts the rows into it with ``partial_fit``. No Spark, no JVM.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from nbspark.density.predictor import DensityPredictor
from nbspark.spine.estimator import DENSITY, CountingEstimator, columns_of

__all__ = ["Density"]


class Density(*DENSITY, CountingEstimator):
    """The lecture's density estimators by counting, trained in this process:
    ``Density(model="joint", m=1.0).fit(rows)``, then ``score_samples`` (``log P(row)``), ``score``
    (their sum), ``probability``, ``log_density``, ``partial_fit`` and ``feature_names_in_``, as
    ``nbspark.load`` gives them; ``save(DIR)`` writes the model directory. The settings are the
    config's ``[density]`` keys of the same names: ``model`` (``joint`` or ``naive``), ``m`` (Dirichlet
    smoothing; 0 gives an unseen row density 0, so held-out scores need ``m`` > 0), ``columns`` (the
    columns modelled; empty: every column of the rows, in their order), ``bins`` (numbers cut into
    categories: ``["age=30,50,65"]``, or ``["age=quantiles:4"]``: edges from the rows ``fit`` counts,
    ``inputs.bins``). Cells are text, as a table writes them
    (``None`` an empty one), or a binned column's numbers."""

    PARAMS = {"model": "joint", "m": 0.0, "columns": (), "bins": ()}
    SECTION, KIND = "density", "density"

    def __init__(
        self, model: str = "joint", m: float = 0.0, columns: Iterable[str] = (), bins: Iterable[str] = ()
    ):
        self.model = model
        self.m = m
        self.columns = columns
        self.bins = bins

    def fit(self, X, y=None, sample_weight=None) -> Density:
        """Count the rows ``X`` into a new model, what was fitted before forgotten; ``y`` is ignored,
        as scikit-learn's density estimators ignore it; ``sample_weight`` each row's weight (finite,
        >= 0; default 1)."""
        from nbspark.density.model import COUNT_DDL
        from nbspark.spine.predictor import as_batch
        from nbspark.storage.manifests import DENSITY_KIND, manifest_header

        self._refuse_no_weight(sample_weight)
        rows = as_batch(X, "rows", "fit")
        if len(rows) == 0:
            raise ValueError("fit takes at least one row: a density of none has no total to divide by")
        names, _ = columns_of(rows, "a density model")
        columns = list(self.columns) or list(names)
        if not columns:
            raise ValueError("fit takes rows with at least one column")
        cfg = _settled(self._config({"density.columns": columns}), rows, sample_weight)
        manifest = {**manifest_header(DENSITY_KIND, cfg), "columns": columns, "count_schema": COUNT_DDL}
        model = DensityPredictor(manifest, [])
        model.partial_fit(rows, sample_weight, extra_columns=[c for c in names if c not in columns])
        self.model_ = model
        return self

    def partial_fit(self, X, y=None, sample_weight=None, extra_columns: Iterable[str] = ()) -> Density:
        """Count more rows into the fitted model (the first call fits one), by the rules of
        ``nbspark.load``'s (``DensityPredictor.partial_fit``)."""
        if "model_" not in self.__dict__:
            return self.fit(X, y, sample_weight)
        self.model_.partial_fit(X, sample_weight, extra_columns)
        return self

    def score_samples(self, X, model: str | None = None, extra_columns: Iterable[str] = ()) -> np.ndarray:
        return self._fitted().score_samples(X, model, extra_columns)

    def score(self, X, y=None, model: str | None = None, extra_columns: Iterable[str] = ()) -> float:
        """The total log-likelihood of the rows (``KernelDensity.score``): what ``GridSearchCV``
        maximises over ``m``; ``-inf`` where a row has density 0."""
        return self._fitted().score(X, y, model, extra_columns)

    def log_density(self, X, model: str | None = None, extra_columns: Iterable[str] = ()) -> list[float]:
        return self._fitted().log_density(X, model, extra_columns)

    def probability(self, values: Mapping, given: Mapping | None = None, model: str | None = None) -> float:
        return self._fitted().probability(values, given, model)


def _settled(cfg, rows, sample_weight):
    """``cfg`` with each ``quantiles:K`` of its bins cut at ``inputs.bins.quantile_edges`` of the
    column's numbers in ``rows``, weighted by ``sample_weight`` (``inputs.bins.row_edges``, as
    ``density.edges.settle_bins`` settles a table's); a row ``partial_fit`` refuses (a column it
    lacks, a cell that is no number) weighs in no edge."""
    import dataclasses

    from nbspark.density.model import row_cells
    from nbspark.inputs.bins import parse_bins, quantiles_asked, row_edges, settled_bins
    from nbspark.spine.predictor import whole_weights

    bins = parse_bins(cfg.density.bins)
    if not quantiles_asked(bins):
        return cfg
    weights = whole_weights(sample_weight, len(rows), "row", "fit", least=0, whole=False)

    def cells(i, row):
        try:
            return row_cells(row, i, list(bins))
        except ValueError:  # a column it lacks: partial_fit refuses the row, naming all it lacks
            return None

    edges = row_edges(bins, ((cells(i, row), w) for i, (row, w) in enumerate(zip(rows, weights))))
    settled = settled_bins(cfg.density.bins, edges)
    return dataclasses.replace(cfg, density=dataclasses.replace(cfg.density, bins=settled))
