"""What scikit-learn's shape of an estimator needs, for both counting families
(``naive_bayes.estimator.NaiveBayes``, ``density.estimator.Density``): settings by name
(``get_params``, ``set_params``, so scikit-learn's ``clone`` makes a new one), the fitted model's
attributes, and ``save``: the counts made in this process written as a whole model directory, as a
train writes one.

An estimator fits by making an empty model of its settings (the model ``nbspark.load`` gives) and
counting the examples into it with that model's ``partial_fit``: the one rule of counting in this
process. The fitted model is ``model_``. scikit-learn's ``BaseEstimator`` is a base where
scikit-learn is installed (its tags, its HTML repr); nothing here needs it.
"""

from __future__ import annotations

import time

__all__ = ["BASES", "CLASSIFIER", "DENSITY", "CountingEstimator", "NotFittedError", "columns_of"]

try:  # scikit-learn's base classes where it is installed: its tags and checks know the estimator
    from sklearn.base import BaseEstimator, ClassifierMixin, DensityMixin

    BASES: tuple = (BaseEstimator,)
    CLASSIFIER: tuple = (ClassifierMixin,)  # a classifier: stratified folds, accuracy
    DENSITY: tuple = (DensityMixin,)  # a density estimator
    from sklearn.exceptions import NotFittedError
except ImportError:  # pragma: no cover - scikit-learn is optional
    BASES = CLASSIFIER = DENSITY = ()

    class NotFittedError(ValueError, AttributeError):
        """A call that needs a fitted estimator, before ``fit`` (scikit-learn's, where it is installed)."""


class CountingEstimator(*BASES):
    """The settings (``PARAMS``: name -> default, each the config's key ``SECTION.name``) and the
    fitted model (``model_``) of an estimator; a subclass's ``fit`` makes ``model_``."""

    PARAMS: dict = {}
    SECTION = ""
    KIND = ""  # the manifest's kind of the model it saves

    def get_params(self, deep: bool = True) -> dict:
        """The settings (scikit-learn's ``get_params``): what ``clone`` makes a new estimator of."""
        return {name: getattr(self, name) for name in self.PARAMS}

    def set_params(self, **params):
        """Change settings (scikit-learn's ``set_params``); an unknown one is refused. The next
        ``fit`` uses them."""
        if unknown := sorted(set(params) - set(self.PARAMS)):
            raise ValueError(
                f"{type(self).__name__} has no setting {unknown[0]!r} (settings: {', '.join(self.PARAMS)})"
            )
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if v != self.PARAMS[k]]
        return f"{type(self).__name__}({', '.join(changed)})"

    def _config(self, extra: dict | None = None):
        """The settings as an experiment config of the family's task (the keys of its ``SECTION``,
        or top-level keys without one), checked by its rules (``ConfigError`` naming the key), named
        after the estimator (the manifest's ``config.name``; the embedded experiment's was not it)."""
        from nbspark.settings.config import load_config
        from nbspark.settings.values import overrides_of

        settings = {
            "name": type(self).__name__,
            "task": self.KIND,
            **{
                (f"{self.SECTION}.{k}" if self.SECTION else k): _listed(v)
                for k, v in self.get_params().items()
            },
            **(extra or {}),
        }
        return load_config(None, overrides_of(settings))

    def _refuse_no_weight(self, sample_weight) -> None:
        """``fit``'s refusal of weights that are all zero: it would count nothing, a model of nothing."""
        import numpy as np

        if sample_weight is not None and len(w := np.asarray(sample_weight)) and not np.any(w):
            raise ValueError(f"every sample_weight is zero: {type(self).__name__}.fit would count nothing")

    def _fitted(self):
        if "model_" not in self.__dict__:
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit first")
        return self.model_

    @property
    def classes_(self):
        """The fitted model's classes as scikit-learn's estimators hold them, an array (names as
        objects, numbers as numbers), in ``predict_proba``'s column order: every classifier here
        (``nbspark.load``'s models give names as a tuple); an empty one for a density."""
        import numpy as np

        classes = self._fitted().classes_
        return classes if isinstance(classes, np.ndarray) else np.asarray(classes, dtype=object)

    def __getattr__(self, name: str):
        # the fitted model's attributes (classes_, vocabulary_, feature_names_in_, …), once fitted
        if name.endswith("_") and not name.startswith("_") and name != "model_" and "model_" in self.__dict__:
            return getattr(self.__dict__["model_"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def save(self, path, overwrite: bool = False) -> dict:
        """Write the fitted model as an nbspark model directory at ``path`` (any file system nbspark
        writes to), whole or not at all, as ``nbspark train`` writes one: the command line, the
        pyspark.ml stages' ``fromModelDir`` and ``nbspark.load`` read it. An existing directory is
        replaced only with ``overwrite``. The manifest; the fitted model is then the one at
        ``path`` (its ``save()`` commits later counts there as versions)."""
        from nbspark.spine.committing import counted_here
        from nbspark.spine.training import write_counts
        from nbspark.storage.counts import rows_table
        from nbspark.storage.manifests import merged_manifest
        from nbspark.storage.tables import check_output
        from nbspark.storage.versions import refuse_live_stream

        model = self._fitted()
        started = time.time()
        out = check_output(path, overwrite)
        refuse_live_stream(out, "replace it")
        rows = model._all_rows()
        ddl, config = model.manifest["count_schema"], model.manifest["config"]
        table = rows_table(rows, ddl)

        def manifest_of(stage, written):
            fields, stats = model.manifest_fields(table), model.whole_stats()
            return merged_manifest(
                None,
                counted_here(
                    model.manifest["kind"], config, fields, ddl, stage, stats, "partial_fit", started
                ),
            )

        manifest = write_counts(
            None, table, out, "model", config.get("rows_per_file", 1 << 62), None, manifest_of
        )
        fresh = type(model)(manifest, rows)
        fresh.path = out.uri
        self.model_ = fresh
        return manifest


def _listed(value):
    """A setting as the config takes it: tuples and lists as lists, of lists where they nest (a
    backoff estimator's confusion sets)."""
    return [_listed(v) for v in value] if isinstance(value, tuple | list) else value


def columns_of(rows: list, who: str) -> tuple[list[str], set[str]]:
    """The columns of rows in memory (mappings; a pandas DataFrame's records), in the order they are
    first seen, and those whose every cell that is not missing (None, NaN) is a number (not a bool):
    what a table estimator fits when no columns are named. ``who`` names the model in a refusal of
    an item that is no mapping."""
    from collections.abc import Mapping

    from nbspark.spine.predictor import Grid

    if isinstance(rows, Grid):  # by column: a typed one by its type, numbers when a cell is there
        return list(rows.columns), {c for c in rows.columns if _all_numbers(rows, c)}
    names: dict[str, None] = {}
    numeric: dict[str, bool] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(
                f"{who} learns rows, each a mapping of column -> value; item {i} is a {type(row).__name__}"
            )
        for c, v in row.items():
            names.setdefault(c, None)
            if v is not None and not (isinstance(v, float) and v != v):
                numeric[c] = numeric.get(c, True) and _is_number(v)
    return list(names), {c for c, is_number in numeric.items() if is_number}


def _all_numbers(rows, column: str) -> bool:
    """Whether a ``Grid``'s ``column`` holds a number in some cell and nothing but numbers (not bools)
    where a cell is not missing: ``columns_of``'s rule, by the column's type where it has one."""
    values = rows.columns[column]
    if values.dtype.kind in "iu":
        return len(values) > 0
    if values.dtype.kind == "f":
        return bool((values == values).any())  # a NaN is a missing cell
    if values.dtype.kind != "O":
        return False
    cells = [v for v in rows.cells(column) if v is not None]
    return bool(cells) and all(_is_number(v) for v in cells)


def _is_number(cell) -> bool:
    """A cell that makes its column numeric: a real number, not a bool."""
    from numbers import Real

    return isinstance(cell, Real) and not isinstance(cell, bool)
