"""A naive Bayes model of a table (Gaussian, categorical, mixed) trained by ``nbspark train`` or
``nbspark.fit``, as a ``pyspark.ml`` stage: ``CountingTableNaiveBayesModel.fromModelDir(DIR)``.

It reads the model's columns by name from a DataFrame (numbers for its numeric columns, any value for
its categorical ones: a cell is its text, as in training; a null is a missing cell, left out of the
score, as ``nbspark.load`` leaves it), every other column kept, and adds MLlib's three outputs:
``rawPredictionCol`` (the joint log-likelihood of each class, a Vector, as MLlib's), ``probabilityCol``
(a Vector) and ``predictionCol`` (the class's number: ``labels[i]`` names class i, for
``IndexToString``). The model scores each Arrow batch's columns at once with the predictor
``nbspark.load`` gives, as it scores a DataFrame (the same numbers: tested to 1e-12). Saved in a
Pipeline as the other stages are (``ml.persist``): the stage's ``nbspark/`` is a model directory."""

from __future__ import annotations

import numpy as np
from pyspark.ml.base import Model
from pyspark.ml.param.shared import HasPredictionCol, HasProbabilityCol, HasRawPredictionCol

from nbspark.ml.labels import new_columns
from nbspark.ml.persist import CountTableStage, model_dir_manifest
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.naive_bayes.model import log_posteriors
from nbspark.settings.capabilities import TEXT_MODELS
from nbspark.spine.frames import named_column
from nbspark.storage.manifests import NB_KIND

__all__ = ["CountingTableNaiveBayesModel"]


class CountingTableNaiveBayesModel(
    CountTableStage, Model, HasPredictionCol, HasProbabilityCol, HasRawPredictionCol
):
    """A table naive Bayes model's counts as a Pipeline stage (see the module docstring)."""

    KIND, DDL = NB_KIND, COUNT_DDL

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
        import pyarrow as pa
        from pyspark.ml.functions import array_to_vector
        from pyspark.sql import functions as F
        from pyspark.sql.types import ArrayType, DoubleType, StructField, StructType

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
        names = list(dataset.columns)
        at = [names.index(c) for c in columns]
        shared = dataset.sparkSession.sparkContext.broadcast(model)
        k = len(model.classes_)

        def vectors(matrix):  # an (n, k) array as Spark's array<double> column
            offsets = pa.array(np.arange(0, matrix.size + 1, k, dtype=np.int32))
            return pa.ListArray.from_arrays(offsets, pa.array(matrix.ravel(), pa.float64()))

        def scored(batches):  # a batch's columns at once, as nbspark.load scores a DataFrame's
            import pandas as pd

            predictor = shared.value
            for batch in batches:
                frame = pd.DataFrame({c: batch.column(i).to_pandas() for c, i in zip(columns, at)})
                jll = predictor.predict_joint_log_proba(frame) if len(frame) else np.zeros((0, k))
                extra = [
                    vectors(jll),
                    vectors(np.exp(log_posteriors(jll))),  # nbspark.load's rule: no class alive, uniform
                    pa.array(np.argmax(jll, axis=1).astype(np.float64), pa.float64()),
                ]
                yield pa.RecordBatch.from_arrays(
                    [*batch.columns, *extra], [*batch.schema.names, "__raw", "__proba", "__pred"]
                )

        tmp = [f"_{self.uid}_{field}" for field in ("raw", "proba", "pred")]
        schema = StructType(
            [
                *dataset.schema.fields,
                StructField(tmp[0], ArrayType(DoubleType())),
                StructField(tmp[1], ArrayType(DoubleType())),
                StructField(tmp[2], DoubleType()),
            ]
        )
        # positional names in: pyspark's mapInArrow names its input columns unquoted (a dot in a name)
        positional = dataset.select(*(named_column(c).alias(f"__{i}") for i, c in enumerate(names)))
        out = positional.mapInArrow(scored, schema)
        for name, field, vector in zip(outputs, tmp, (True, True, False)):
            if name:
                out = out.withColumn(name, array_to_vector(F.col(field)) if vector else F.col(field))
        return out.drop(*tmp)

    @classmethod
    def fromModelDir(cls, path) -> CountingTableNaiveBayesModel:
        """A Gaussian, categorical or mixed model trained by ``nbspark train`` or ``nbspark.fit``, as a
        Pipeline stage; a text model is ``CountingNaiveBayesModel.fromModelDir``'s."""
        root, manifest = model_dir_manifest(path, NB_KIND)
        if manifest["model"] in TEXT_MODELS:
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
