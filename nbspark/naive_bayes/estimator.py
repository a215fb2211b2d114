"""A naive Bayes estimator in scikit-learn's shape (``nbspark.NaiveBayes``): made from its settings,
fitted on examples in memory (texts, or rows of a table), cloned by scikit-learn (``clone``,
``cross_val_score``, ``GridSearchCV``, a ``Pipeline``), and saved as an nbspark model directory that
the command line, the pyspark.ml stages and ``nbspark.load`` read.

It is a thin face over the model ``nbspark.load`` gives (``NBPredictor``): ``fit`` makes an empty
model of its settings and counts the examples into it with ``partial_fit``, the one rule of
counting in this process, so a fitted estimator scores as a model trained by ``nbspark train`` on
the same examples. Its settings are the config's ``[nb]`` keys of the same names, checked by the
config's rules (``settings.config.load_config``). No Spark, no JVM.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from types import SimpleNamespace

import numpy as np

from nbspark.naive_bayes.predictor import NBPredictor

__all__ = ["NaiveBayes"]

try:  # scikit-learn's base classes where it is installed: its tags call this a classifier
    from sklearn.base import BaseEstimator, ClassifierMixin

    _BASES: tuple = (ClassifierMixin, BaseEstimator)
except ImportError:  # pragma: no cover - scikit-learn is optional
    _BASES = ()

#: The settings of the estimator, each the config's ``nb.`` key of that name, with its default.
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


class NaiveBayes(*_BASES):
    """Naive Bayes by counting, trained in this process: ``NaiveBayes(model="multinomial",
    alpha=1.0).fit(texts, labels)``, then ``predict``, ``predict_proba``, ``predict_log_proba``,
    ``score``, ``explain``, ``partial_fit`` and the fitted model's attributes (``classes_``,
    ``class_count_``, ``feature_log_prob_``, ``vocabulary_``, ``theta_``, ``var_``,
    ``feature_names_in_``), as ``nbspark.load`` gives them; ``save(DIR)`` writes the model
    directory. A table model (``categorical``, ``gaussian``, ``mixed``) fits rows: a pandas DataFrame
    or mappings of column -> value, its feature columns those named, else every column by its type
    and the model, as a CSV table's are (``naive_bayes.inputs.table_columns``)."""

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

    def get_params(self, deep: bool = True) -> dict:
        """The settings (scikit-learn's ``get_params``): what ``clone`` makes a new estimator of."""
        return {name: getattr(self, name) for name in PARAMS}

    def set_params(self, **params) -> NaiveBayes:
        """Change settings (scikit-learn's ``set_params``); an unknown one is refused. The next
        ``fit`` uses them."""
        if unknown := sorted(set(params) - set(PARAMS)):
            raise ValueError(f"NaiveBayes has no setting {unknown[0]!r} (settings: {', '.join(PARAMS)})")
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if v != PARAMS[k]]
        return f"NaiveBayes({', '.join(changed)})"

    def _config(self):
        """The settings as an experiment config, checked by its rules (``ConfigError``)."""
        from nbspark.settings.config import load_config, overrides_of

        settings = {"task": "naive_bayes", **{f"nb.{k}": v for k, v in self.get_params().items()}}
        for key in ("nb.numeric_columns", "nb.categorical_columns", "nb.bernoulli_columns"):
            settings[key] = list(settings[key])
        return load_config(None, overrides_of(settings))

    def fit(self, X, y, sample_weight=None) -> NaiveBayes:
        """Count the examples ``X`` (texts, or rows of a table) with their labels ``y`` into a new
        model, what was fitted before forgotten; ``sample_weight`` as ``partial_fit`` takes it."""
        cfg = self._config()
        from nbspark.settings.capabilities import TEXT_MODELS
        from nbspark.spine.predictor import as_batch
        from nbspark.storage.manifests import NB_KIND, manifest_header

        nb = cfg.nb
        columns = {}
        if nb.model not in TEXT_MODELS:
            X = as_batch(X, "rows", "fit")
            numeric, categorical = _table_columns(nb, X)
            columns = {"numeric": numeric, "categorical": categorical}
        manifest = {**manifest_header(NB_KIND, cfg), "model": nb.model, "columns": columns}
        model = NBPredictor(manifest, [])
        model.partial_fit(X, y, sample_weight=sample_weight)
        self.model_ = model
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None) -> NaiveBayes:
        """Count more examples into the fitted model (the first call fits one): scikit-learn's
        ``partial_fit``, the rules of ``nbspark.load``'s (``NBPredictor.partial_fit``)."""
        if not hasattr(self, "model_"):
            self.fit(X, y, sample_weight)
            if classes is not None and (left := sorted(set(self.model_.classes_) - set(classes))):
                del self.model_
                raise ValueError(f"labels {left} are not among classes")
            return self
        self.model_.partial_fit(X, y, classes=classes, sample_weight=sample_weight)
        return self

    def _fitted(self) -> NBPredictor:
        if not hasattr(self, "model_"):
            raise AttributeError("this NaiveBayes is not fitted yet: call fit(X, y) first")
        return self.model_

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

    def __getattr__(self, name: str):
        # the fitted model's attributes (classes_, class_count_, vocabulary_, …), once fitted
        if name.endswith("_") and not name.startswith("_") and name != "model_" and "model_" in self.__dict__:
            return getattr(self.__dict__["model_"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def save(self, path, overwrite: bool = False) -> dict:
        """Write the fitted model as an nbspark model directory at ``path`` (any file system nbspark
        writes to), whole or not at all, as ``nbspark train`` writes one: ``nbspark predict``,
        ``classify``, ``CountingNaiveBayesModel.fromModelDir`` and ``nbspark.load`` read it. An
        existing directory is replaced only with ``overwrite``. The manifest; the fitted model is
        then the one at ``path`` (its ``save()`` commits later counts there as versions)."""
        import pyarrow as pa

        from nbspark.naive_bayes.model import COUNT_DDL
        from nbspark.spine.streaming import counted_here
        from nbspark.spine.training import write_counts
        from nbspark.storage.manifests import NB_KIND, merged_manifest
        from nbspark.storage.tables import arrow_schema, check_output
        from nbspark.storage.versions import refuse_live_stream

        model = self._fitted()
        started = time.time()
        out = check_output(path, overwrite)
        refuse_live_stream(out, "replace it")
        rows = model._all_rows()
        table = pa.table([list(c) for c in zip(*rows)], schema=arrow_schema(COUNT_DDL))

        def manifest_of(stage, written):
            config, fields = model.manifest["config"], model.manifest_fields(table)
            stats = {"documents": model.manifest.get("stats", {}).get("documents", 0) + model._examples}
            return merged_manifest(
                None, counted_here(NB_KIND, config, fields, COUNT_DDL, stage, stats, "partial_fit", started)
            )

        rows_per_file = model.manifest["config"].get("rows_per_file", 1 << 62)
        manifest = write_counts(None, table, out, "model", rows_per_file, None, manifest_of)
        fresh = NBPredictor(manifest, rows)
        fresh.path = out.uri
        self.model_ = fresh
        return manifest


def _table_columns(nb, rows: list) -> tuple[list[str], list[str]]:
    """``(numeric, categorical)`` feature columns of rows in memory (mappings, or a pandas DataFrame's
    records): the settings', else every column by its type and the model, by the rule of every table
    reader (``naive_bayes.inputs.table_columns``). A column is numeric when each of its cells that is
    not missing is a number (not a bool)."""
    from numbers import Real

    from nbspark.naive_bayes.inputs import table_columns

    names: dict[str, None] = {}
    numeric: dict[str, bool] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(
                f"a {nb.model} model learns rows, each a mapping of column -> value; item {i} is a "
                f"{type(row).__name__}"
            )
        for c, v in row.items():
            names.setdefault(c, None)
            if v is not None and not (isinstance(v, float) and v != v):
                numeric[c] = numeric.get(c, True) and isinstance(v, Real) and not isinstance(v, bool)
    if nb.label_column in names:
        raise ValueError(
            f"the rows hold a column {nb.label_column!r}, the label column's name: the labels are y; "
            "name another label_column, or leave the column out"
        )
    where = SimpleNamespace(named="the rows")
    kinds = {c for c, is_number in numeric.items() if is_number}
    return table_columns(where, nb, [*names, nb.label_column], kinds, {})
