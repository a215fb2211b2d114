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

from nbspark.naive_bayes.predictor import NBPredictor, matrix_texts
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


def _frame_names(X) -> list[str] | None:
    """The column names of a pandas DataFrame whose every name is text (scikit-learn's
    ``feature_names_in_``), else None."""
    if not (hasattr(X, "to_dict") and hasattr(X, "columns")):
        return None
    names = list(X.columns)
    return names if all(isinstance(n, str) for n in names) else None


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
    _width = None  # the count matrix's width, where a text model was fitted on one (its own, there)
    _names = None  # its columns' names, where that matrix was a DataFrame of them (feature_names_in_)

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
        width, names = self._fresh_width(X), _frame_names(X)
        model, X = self._empty(self._x(X, "fit", width), width)
        self.model_, self._width = model._learn(X, y, None, sample_weight, "fit"), width
        self._names = names if width is not None else None
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None) -> NaiveBayes:
        """Count more examples into the fitted model (the first call makes an empty one of the
        settings): scikit-learn's ``partial_fit``, by the rules of ``nbspark.load``'s
        (``NBPredictor.partial_fit``, which checks ``classes`` too)."""
        fitted = "model_" in self.__dict__
        width = self._width if fitted else self._fresh_width(X)
        names = self._names if fitted else _frame_names(X) if width is not None else None
        X = self._x(X, "partial_fit", width)
        model, X = (self.model_, X) if fitted else self._empty(X, width, "partial_fit")
        self.model_, self._width = model._learn(X, y, classes, sample_weight, "partial_fit"), width
        self._names = names
        return self

    @property
    def classes_(self) -> np.ndarray:
        """The classes, sorted (scikit-learn's ``classes_``; numbers as numbers where ``y`` held
        numbers): the order of ``predict_proba``'s columns and of every per-class attribute."""
        classes = self._fitted().classes_  # names as a tuple, numbers as an array
        return classes if isinstance(classes, np.ndarray) else np.asarray(classes, dtype=object)

    def __getattr__(self, name: str):
        if name == "n_features_in_" and self._width is not None:  # a count matrix's columns
            return self._width
        if name == "feature_names_in_" and self._names is not None:  # a DataFrame of counts' columns
            return np.asarray(self._names, dtype=object)
        return super().__getattr__(name)

    def _fresh_width(self, X) -> int | None:
        """The width of ``X`` where it is a count matrix a text model fits (``CountVectorizer``'s,
        sparse or dense, or a list of rows of counts); None for texts and for a table model's rows."""
        from nbspark.settings.capabilities import TEXT_MODELS

        return matrix_of(X).shape[1] if self.model in TEXT_MODELS and is_matrix(X) else None

    def _x(self, X, call: str, width: int | None):
        """``X`` as the model takes it: where the model counts a count matrix of ``width`` columns,
        the matrix's rows as texts of its columns' tokens (``_matrix_texts``: column j is the token
        ``xj``, as often as the row counts it), and texts refused; anything else as it is."""
        if width is None:
            return X
        if not is_matrix(X):
            raise TypeError(
                f"{call} takes a count matrix of {width} columns, as this {type(self).__name__} was "
                "fitted on one, not texts"
            )
        names = _frame_names(X)
        if names is not None and self._names is not None and names != self._names:
            # by position they would be counted as other columns, in silence (scikit-learn refuses too)
            wrong = [f"{a!r} for {b!r}" for a, b in zip(names, self._names) if a != b]
            raise ValueError(
                f"{call} takes the columns that fit took, in its order (feature_names_in_); the DataFrame "
                f"has {', '.join(wrong[:3])}{', …' if len(wrong) > 3 else ''}"
            )
        return matrix_texts(X, width, call)

    def _empty(self, X, width: int | None = None, call: str = "fit") -> tuple[NBPredictor, object]:
        """A model of the settings that has counted nothing, and ``X`` as it learns it (a table
        model's rows as a list: its columns are read from them); ``width``: the count matrix's that a
        text model is fitted on, which the model keeps (``matrix_columns``: saved, it takes them).
        ``X`` of no example is refused (``call`` named): a model of none has no class."""
        from nbspark.naive_bayes.events import COUNT_DDL
        from nbspark.settings.capabilities import TEXT_MODELS
        from nbspark.spine.predictor import as_batch
        from nbspark.storage.manifests import NB_KIND, manifest_header

        cfg = self._config()
        columns = {}
        table = cfg.nb.model not in TEXT_MODELS
        X = as_batch(X, "rows", call) if table else X
        if len(X) == 0:
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
        return self._fitted().predict(self._x(X, "predict", self._width), extra_columns)

    def predict_proba(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        return self._fitted().predict_proba(self._x(X, "predict_proba", self._width), extra_columns)

    def predict_log_proba(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        return self._fitted().predict_log_proba(self._x(X, "predict_log_proba", self._width), extra_columns)

    def predict_joint_log_proba(self, X, extra_columns: Iterable[str] = ()) -> np.ndarray:
        X = self._x(X, "predict_joint_log_proba", self._width)
        return self._fitted().predict_joint_log_proba(X, extra_columns)

    def score(self, X, y, sample_weight=None, extra_columns: Iterable[str] = ()) -> float:
        """Accuracy on ``X`` against ``y`` (scikit-learn's ``score``), each example weighing its
        ``sample_weight`` where given."""
        from nbspark.spine.predictor import accuracy

        return accuracy(self.predict(X, extra_columns), y, "example", sample_weight)

    def explain(self, X, extra_columns: Iterable[str] = ()) -> list[dict]:
        """``NBPredictor.explain``'s."""
        return self._fitted().explain(self._x(X, "explain", self._width), extra_columns)
