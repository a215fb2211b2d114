"""A naive Bayes estimator in scikit-learn's shape (``nbspark.NaiveBayes``): made from its settings,
fitted on examples in memory (texts, or rows of a table), cloned by scikit-learn (``clone``,
``cross_val_score``, ``GridSearchCV``, a ``Pipeline``), and saved as an nbspark model directory that
the command line, the pyspark.ml stages and ``nbspark.load`` read (``spine.estimator``).

``fit`` makes an empty model of its settings (``NBPredictor``, what ``nbspark.load`` gives) and
counts the examples into it with ``partial_fit``, so a fitted estimator scores as a model trained
by ``nbspark train`` on the same examples. No Spark, no JVM.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace

import numpy as np

from nbspark.naive_bayes.predictor import NBPredictor
from nbspark.spine.estimator import CLASSIFIER, CountingEstimator, columns_of

__all__ = ["NaiveBayes"]


class NaiveBayes(*CLASSIFIER, CountingEstimator):
    """Naive Bayes by counting, trained in this process: ``NaiveBayes(model="multinomial",
    alpha=1.0).fit(texts, labels)``, then ``predict``, ``predict_proba``, ``predict_log_proba``,
    ``score``, ``explain``, ``partial_fit`` and the fitted model's attributes (``classes_``,
    ``class_count_``, ``feature_log_prob_``, ``vocabulary_``, ``theta_``, ``var_``,
    ``feature_names_in_``), as ``nbspark.load`` gives them; ``save(DIR)`` writes the model
    directory. The settings are the config's ``[nb]`` keys of the same names. A table model
    (``categorical``, ``gaussian``, ``mixed``) fits rows: a pandas DataFrame or mappings of column ->
    value, its feature columns those named, else every column by its cells and the model, as a CSV
    table's are (``naive_bayes.inputs.table_columns``)."""

    PARAMS = {
        "model": "multinomial",
        "alpha": 1.0,
        "prior_alpha": 0.0,
        "var_smoothing": 1e-9,
        "norm": False,
        "tokenizer": "nbspark",
        "unseen": "drop",
        "label_column": "label",
        "numeric_columns": (),
        "categorical_columns": (),
        "bernoulli_columns": (),
    }
    SECTION, KIND = "nb", "naive_bayes"

    def __init__(
        self,
        model: str = "multinomial",
        alpha: float = 1.0,
        prior_alpha: float = 0.0,
        var_smoothing: float = 1e-9,
        norm: bool = False,
        tokenizer: str = "nbspark",
        unseen: str = "drop",
        label_column: str = "label",
        numeric_columns: Iterable[str] = (),
        categorical_columns: Iterable[str] = (),
        bernoulli_columns: Iterable[str] = (),
    ):
        self.model = model
        self.alpha = alpha
        self.prior_alpha = prior_alpha
        self.var_smoothing = var_smoothing
        self.norm = norm
        self.tokenizer = tokenizer
        self.unseen = unseen
        self.label_column = label_column
        self.numeric_columns = numeric_columns
        self.categorical_columns = categorical_columns
        self.bernoulli_columns = bernoulli_columns

    def fit(self, X, y, sample_weight=None) -> NaiveBayes:
        """Count the examples ``X`` (texts, or rows of a table) with their labels ``y`` into a new
        model, what was fitted before forgotten; ``sample_weight`` as ``partial_fit`` takes it."""
        model, X = self._empty(X)
        self.model_ = model.partial_fit(X, y, sample_weight=sample_weight)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None) -> NaiveBayes:
        """Count more examples into the fitted model (the first call makes an empty one of the
        settings): scikit-learn's ``partial_fit``, by the rules of ``nbspark.load``'s
        (``NBPredictor.partial_fit``, which checks ``classes`` too)."""
        model, X = (self.model_, X) if "model_" in self.__dict__ else self._empty(X)
        self.model_ = model.partial_fit(X, y, classes=classes, sample_weight=sample_weight)
        return self

    def _empty(self, X) -> tuple[NBPredictor, object]:
        """A model of the settings that has counted nothing, and ``X`` as it learns it (a table
        model's rows as a list: its columns are read from them)."""
        from nbspark.naive_bayes.model import COUNT_DDL
        from nbspark.settings.capabilities import TEXT_MODELS
        from nbspark.spine.predictor import as_batch
        from nbspark.storage.manifests import NB_KIND, manifest_header

        cfg = self._config()
        columns = {}
        if cfg.nb.model not in TEXT_MODELS:
            X = as_batch(X, "rows", "fit")
            numeric, categorical = _table_columns(cfg.nb, X)
            columns = {"numeric": numeric, "categorical": categorical}
        manifest = {
            **manifest_header(NB_KIND, cfg),
            "model": cfg.nb.model,
            "columns": columns,
            "count_schema": COUNT_DDL,
        }
        return NBPredictor(manifest, []), X

    def predict(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        return self._fitted().predict(X, extra_columns)

    def predict_proba(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        return self._fitted().predict_proba(X, extra_columns)

    def predict_log_proba(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        return self._fitted().predict_log_proba(X, extra_columns)

    def score(self, X, y, sample_weight=None, extra_columns: Iterable[str] = ()) -> float:
        """Accuracy on ``X`` against ``y`` (scikit-learn's ``score``), each example weighing its
        ``sample_weight`` where given."""
        if sample_weight is None:
            return self._fitted().score(X, y, extra_columns)
        right = self.predict(X, extra_columns) == np.asarray(list(y), dtype=object)
        return float(np.average(right, weights=np.asarray(sample_weight, dtype=float)))

    def explain(self, X, extra_columns: Iterable[str] = ()) -> list[dict]:
        return self._fitted().explain(X, extra_columns)


def _table_columns(nb, rows: list) -> tuple[list[str], list[str]]:
    """``(numeric, categorical)`` feature columns of rows in memory (``spine.estimator.columns_of``):
    the settings', else every column by its cells and the model, by the rule of every table reader
    (``naive_bayes.inputs.table_columns``)."""
    from nbspark.naive_bayes.inputs import table_columns

    names, numeric = columns_of(rows, f"a {nb.model} model")
    if nb.label_column in names:
        raise ValueError(
            f"the rows hold a column {nb.label_column!r}, the label column's name: the labels are y; "
            "name another label_column, or leave the column out"
        )
    return table_columns(SimpleNamespace(named="the rows"), nb, [*names, nb.label_column], numeric, {})
