"""A naive Bayes model of a table (Gaussian, categorical, mixed) trained by ``nbspark train`` or
``nbspark.fit``, as a ``pyspark.ml`` stage: ``CountingTableNaiveBayesModel.fromModelDir(DIR)``.

It reads the model's columns by name from a DataFrame (numbers for its numeric columns, any value for
its categorical ones: a cell is its text, as in training; a null is a missing cell, left out of the
score, as ``nbspark.load`` leaves it), every other column kept, and adds MLlib's three outputs:
``rawPredictionCol`` (the joint log-likelihood of each class, a Vector, as MLlib's), ``probabilityCol``
(a Vector) and ``predictionCol`` (the class's number: ``labels[i]`` names class i, for
``IndexToString``). The model scores each row with the predictor ``nbspark.load`` gives (the same
numbers: tested to 1e-12). Saved in a Pipeline as the other stages are (``ml.persist``): the stage's
``nbspark/`` is a model directory."""

from __future__ import annotations

import numpy as np
from pyspark.ml.base import Model
from pyspark.ml.param.shared import HasPredictionCol, HasProbabilityCol, HasRawPredictionCol

from nbspark.ml.labels import new_columns
from nbspark.ml.persist import CountsPersisted, model_dir_manifest
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.spine.frames import named_column
from nbspark.storage.manifests import NB_KIND

__all__ = ["CountingTableNaiveBayesModel"]

#: The table models (``naive_bayes.model``'s kinds that score rows, not texts).
TABLE_KINDS = ("gaussian", "categorical", "mixed")


class CountingTableNaiveBayesModel(
    Model, HasPredictionCol, HasProbabilityCol, HasRawPredictionCol, CountsPersisted
):
    """A table naive Bayes model's counts as a Pipeline stage (see the module docstring)."""

    KIND = NB_KIND

    def __init__(self, table=None, manifest: dict | None = None):
        super().__init__()
        self.table, self.manifest = table, manifest
        self._predictor = None

    def predictor(self):
        """The model as ``nbspark.load`` gives it (``naive_bayes.predictor.NBPredictor``)."""
        if self._predictor is None:
            from nbspark.naive_bayes.predictor import NBPredictor
            from nbspark.storage.counts import table_rows

            self._predictor = NBPredictor(self.manifest, table_rows(self.table))
        return self._predictor

    @property
    def labels(self) -> list[str]:
        """Class i's name (``IndexToString(labels=model.labels)``): the model's classes in order."""
        return [str(c) for c in self.predictor().classes_]

    @property
    def numClasses(self) -> int:
        return len(self.labels)

    def _transform(self, dataset):
        from pyspark.ml.linalg import DenseVector, VectorUDT
        from pyspark.sql import functions as F
        from pyspark.sql.types import DoubleType, StructField, StructType

        model = self.predictor()
        columns = [str(c) for c in model.feature_names_in_]
        if missing := [c for c in columns if c not in dataset.columns]:
            raise ValueError(
                f"CountingTableNaiveBayesModel: the DataFrame has no column(s) {', '.join(missing)} "
                f"(the model's columns: {', '.join(columns)})"
            )
        outputs = [
            self.getOrDefault(p) for p in (self.rawPredictionCol, self.probabilityCol, self.predictionCol)
        ]
        new_columns("CountingTableNaiveBayesModel", dataset.columns, outputs)
        shared = dataset.sparkSession.sparkContext.broadcast(model)

        def score(row):
            cells = {c: v for c, v in zip(columns, row) if v is not None}  # a null: a missing cell
            jll = shared.value.predict_joint_log_proba([cells])[0]
            top = jll.max()
            log_post = jll - (top + np.log(np.exp(jll - top).sum()))
            return DenseVector(jll), DenseVector(np.exp(log_post)), float(np.argmax(jll))

        schema = StructType(
            [
                StructField("raw", VectorUDT()),
                StructField("proba", VectorUDT()),
                StructField("pred", DoubleType()),
            ]
        )
        tmp = f"_{self.uid}_scored"
        cells = F.struct(*(named_column(c).alias(f"_{i}") for i, c in enumerate(columns)))
        out = dataset.withColumn(tmp, F.udf(score, schema)(cells))
        for name, field in zip(outputs, ("raw", "proba", "pred")):
            if name:
                out = out.withColumn(name, F.col(f"{tmp}.{field}"))
        return out.drop(tmp)

    def copy(self, extra=None):
        model = super().copy(extra)
        model.table, model.manifest, model._predictor = self.table, self.manifest, self._predictor
        return model

    def counts_table(self):
        """The count table and manifest as ``nbspark train`` wrote them, for ``ml.persist.CountsWriter``."""
        return self.table, self.manifest

    @classmethod
    def from_counts(cls, root, manifest: dict) -> CountingTableNaiveBayesModel:
        """The model of a checked ``PATH/nbspark`` (``ml.persist.CountsReader``) or model directory,
        its counts checked as every reader checks them."""
        from nbspark.storage.counts import read_count_table

        return cls(read_count_table(root, COUNT_DDL, manifest), manifest)

    @classmethod
    def fromModelDir(cls, path) -> CountingTableNaiveBayesModel:
        """A Gaussian, categorical or mixed model trained by ``nbspark train`` or ``nbspark.fit``, as a
        Pipeline stage; a text model is ``CountingNaiveBayesModel.fromModelDir``'s."""
        root, manifest = model_dir_manifest(path, NB_KIND)
        if manifest["model"] not in TABLE_KINDS:
            raise ValueError(
                f"{root}: a {manifest['model']} text model, which CountingNaiveBayesModel.fromModelDir "
                "reads; CountingTableNaiveBayesModel reads a table's (gaussian, categorical, mixed)"
            )
        return cls.from_counts(root, manifest)

    def setPredictionCol(self, value: str) -> CountingTableNaiveBayesModel:
        return self._set(predictionCol=value)

    def setProbabilityCol(self, value: str) -> CountingTableNaiveBayesModel:
        return self._set(probabilityCol=value)

    def setRawPredictionCol(self, value: str) -> CountingTableNaiveBayesModel:
        return self._set(rawPredictionCol=value)
