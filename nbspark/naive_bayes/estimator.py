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
from nbspark.naive_bayes.shapes import frame_names
from nbspark.spine.estimator import CLASSIFIER, CountingEstimator, columns_of
from nbspark.spine.predictor import is_matrix, matrix_of

__all__ = ["NaiveBayes"]


def _table_columns(nb, rows: list) -> tuple[list[str], list[str]]:
    """``(numeric, categorical)`` feature columns of rows in memory (``spine.estimator.columns_of``):
    the settings', else every column by its cells and the model, by the rule of every table reader
    (``naive_bayes.tables.table_columns``)."""
    from nbspark.naive_bayes.tables import table_columns

    names, numeric = columns_of(rows, f"a {nb.model} model")
    if nb.label_column in names:
        raise ValueError(
            f"the rows hold a column {nb.label_column!r}, the label column's name: the labels are y; "
            "name another label_column, or leave the column out"
        )
    return table_columns(SimpleNamespace(named="the rows"), nb, [*names, nb.label_column], numeric, {})


class NaiveBayes(*CLASSIFIER, CountingEstimator):
    """Naive Bayes by counting, trained in this process: ``NaiveBayes(model="multinomial",
    alpha=1.0).fit(texts, labels)``, then ``predict``, ``predict_proba``, ``predict_log_proba``,
    ``score``, ``explain``, ``partial_fit`` and the fitted model's attributes (``classes_``,
    ``class_count_``, ``feature_count_``, ``feature_log_prob_``, ``theta_``, …:
    ``naive_bayes.attributes``), as ``nbspark.load`` gives them; ``save(DIR)`` writes the model
    directory. The settings are the config's ``[nb]`` keys of the same names. A table model
    (``categorical``, ``gaussian``, ``mixed``) fits rows: a pandas DataFrame or mappings of column ->
    value, its feature columns those named, else every column by its cells and the model, as a CSV
    table's are (``naive_bayes.tables.table_columns``)."""

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
        """Count the examples ``X`` (texts, or rows of a table: a DataFrame, mappings, or a 2-D array)
        with their labels ``y`` into a new model, what was fitted before forgotten; ``sample_weight``
        as ``partial_fit`` takes it. Labels are class names, or numbers (``naive_bayes.shapes.Labels``)."""
        self._refuse_no_weight(sample_weight)
        model, X = self._empty(X, "fit")
        self.model_ = model._learn(X, y, None, sample_weight, "fit")
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None) -> NaiveBayes:
        """Count more examples into the fitted model (the first call makes an empty one of the
        settings): scikit-learn's ``partial_fit``, by the rules of ``nbspark.load``'s
        (``NBPredictor.partial_fit``, which checks ``classes`` too)."""
        if "model_" in self.__dict__:
            model = self._fitted()  # which learns nothing but the matrices it was fitted on, if so
        else:
            model, X = self._empty(X, "partial_fit")
        self.model_ = model._learn(X, y, classes, sample_weight, "partial_fit")
        return self

    def _given(self, X, call: str) -> tuple[NBPredictor, object]:
        """The fitted model, and ``X`` for it to score: where it was fitted on a count matrix, a matrix
        it takes as it would a saved one (``NBPredictor``: its width, and its columns' names where
        fit's were a DataFrame's), and texts refused, as scikit-learn's estimators take no texts (the
        saved model scores texts of its tokens; neither learns them, ``NBPredictor._batch``);
        anything else as it is."""
        model = self._fitted()
        if model.matrix_columns is not None and not is_matrix(X):
            raise TypeError(
                f"{call} takes a count matrix of {model.matrix_columns} columns, as this "
                f"{type(self).__name__} was fitted on one, not texts"
            )
        return model, X

    def _empty(self, X, call: str) -> tuple[NBPredictor, object]:
        """A model of the settings that has counted nothing, and ``X`` as it learns it (a table
        model's rows as a list: its columns are read from them; a count matrix, which a text model is
        fitted on, as it is: the model reads it as texts of its columns' tokens (``matrix_texts``),
        keeps its width and a DataFrame's column names, ``matrix_columns`` and ``matrix_names``, and
        takes such matrices, saved too, and learns nothing else). ``X`` of no example is refused
        (``call`` named): a model of none has no class."""
        from nbspark.naive_bayes.events import COUNT_DDL
        from nbspark.settings.capabilities import TEXT_MODELS
        from nbspark.spine.predictor import as_batch
        from nbspark.storage.manifests import NB_KIND, manifest_header

        cfg = self._config()
        columns = {}
        table = cfg.nb.model not in TEXT_MODELS
        matrix = matrix_of(X) if not table and is_matrix(X) else None  # converted once
        width = None if matrix is None else matrix.shape[1]
        names = None if matrix is None else frame_names(X)
        X = X if matrix is None else matrix  # the model reads it as texts of its columns' tokens
        X = as_batch(X, "rows", call) if table else X
        if (len(X) if matrix is None else matrix.shape[0]) == 0:
            raise ValueError(f"{call} takes at least one example: a model of none has no class to predict")
        if table:
            numeric, categorical = _table_columns(cfg.nb, X)
            columns = {"numeric": numeric, "categorical": categorical}
        manifest = {
            **manifest_header(NB_KIND, cfg),
            "model": cfg.nb.model,
            "columns": columns,
            "count_schema": COUNT_DDL,
            **({} if width is None else {"matrix_columns": width}),
            **({} if names is None else {"matrix_names": names}),
        }
        return NBPredictor(manifest, []), X

    def __sklearn_tags__(self):
        """scikit-learn's tags: a missing cell (None, NaN; an infinite one too) is left out of a table
        row, as training and classify leave it out; a text model learns strings, not a 2-D array."""
        from nbspark.settings.capabilities import TEXT_MODELS

        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        if self.model in TEXT_MODELS:
            tags.input_tags.two_d_array, tags.input_tags.string = False, True
        return tags

    def predict(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        model, X = self._given(X, "predict")
        return model.predict(X, extra_columns)

    def predict_proba(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        model, X = self._given(X, "predict_proba")
        return model.predict_proba(X, extra_columns)

    def predict_log_proba(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        model, X = self._given(X, "predict_log_proba")
        return model.predict_log_proba(X, extra_columns)

    def predict_joint_log_proba(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        model, X = self._given(X, "predict_joint_log_proba")
        return model.predict_joint_log_proba(X, extra_columns)

    def score(self, X, y, sample_weight=None, extra_columns: Iterable[str] = ()) -> float:
        """Accuracy on ``X`` against ``y`` (scikit-learn's ``score``), each example weighing its
        ``sample_weight`` where given."""
        from nbspark.spine.predictor import accuracy

        return accuracy(self.predict(X, extra_columns), y, "example", sample_weight)

    def explain(self, X, extra_columns: Iterable[str] = ()) -> list[dict]:
        """``NBPredictor.explain``'s."""
        model, X = self._given(X, "explain")
        return model.explain(X, extra_columns)
