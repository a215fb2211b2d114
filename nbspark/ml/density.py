"""The density family as a ``pyspark.ml`` stage: ``CountingDensityModel``, a Transformer that adds
each row's log density under a density model trained by ``nbspark train`` or ``nbspark.fit``
(``fromModelDir``), as ``nbspark.load``'s ``score_samples`` gives it.

The model's columns are read from the DataFrame by name; each is a string column (a cell is text
as the table writes it, null for an empty cell: ``density.model.row_cells``), and a DataFrame that
lacks one, or types one otherwise, is refused before any task runs. ``logDensityCol`` (default
``log_density``) is ``log P(row)``, ``-inf`` where the density is 0 (a row never seen, unsmoothed);
``estimator`` is the model's own (``joint`` or ``naive``) unless set. Every other column is kept.
The model saves as MLlib models do, with the count table and manifest in ``PATH/nbspark``
(``ml.persist``), which ``nbspark.load`` reads.
"""

from __future__ import annotations

from pyspark.ml.base import Model
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.util import MLReadable, MLReader, MLWritable, MLWriter

from nbspark.density.model import COUNT_DDL
from nbspark.density.predictor import DensityPredictor
from nbspark.ml.persist import CountsReader, CountsWriter
from nbspark.settings.config import DENSITY_MODELS
from nbspark.spine.frames import named_column
from nbspark.storage.manifests import DENSITY_KIND

__all__ = ["CountingDensityModel"]


class _Params(Params):
    logDensityCol = Param(
        Params._dummy(),
        "logDensityCol",
        "output column: log P(row), -inf where the density is 0",
        typeConverter=TypeConverters.toString,
    )
    estimator = Param(
        Params._dummy(),
        "estimator",
        "joint (the table's own frequencies) or naive (the product of the columns' marginals)",
        typeConverter=TypeConverters.toString,
    )

    def __init__(self, *args):
        super().__init__(*args)
        self._setDefault(logDensityCol="log_density", estimator="joint")


class CountingDensityModel(Model, _Params, MLReadable, MLWritable):
    """A density model's counts as a Pipeline stage (see the module docstring)."""

    def __init__(self, table=None, manifest: dict | None = None):
        super().__init__()
        self.table, self.manifest = table, manifest
        self._predictor = None

    def setLogDensityCol(self, value: str) -> CountingDensityModel:
        return self._set(logDensityCol=value)

    def setEstimator(self, value: str) -> CountingDensityModel:
        if value not in DENSITY_MODELS:
            raise ValueError(f"estimator must be 'joint' or 'naive', got {value!r}")
        return self._set(estimator=value)

    def predictor(self) -> DensityPredictor:
        """The model as ``nbspark.load`` gives it."""
        if self._predictor is None:
            rows = zip(*(column.to_pylist() for column in self.table.columns))
            self._predictor = DensityPredictor(self.manifest, list(rows))
        return self._predictor

    def _transform(self, dataset):
        import pyarrow as pa
        from pyspark.sql.types import DoubleType, StructField, StructType

        model = self.predictor()
        columns, estimator = list(model.columns), self.getOrDefault(self.estimator)
        out = self.getOrDefault(self.logDensityCol)
        types = dict(dataset.dtypes)
        if missing := [c for c in columns if c not in types]:
            raise ValueError(
                f"CountingDensityModel: the DataFrame has no column(s) {', '.join(missing)} "
                f"(the model's columns: {', '.join(columns)})"
            )
        if typed := [c for c in columns if types[c] != "string"]:
            raise ValueError(
                f"CountingDensityModel: column {typed[0]!r} is {types[typed[0]]}; a density model's cells "
                f"are text as the table writes them: cast it to string first"
            )
        if out in types:
            raise ValueError(f"CountingDensityModel: the DataFrame has a column {out!r} already")
        names = list(dataset.columns)
        at = [names.index(c) for c in columns]
        shared = dataset.sparkSession.sparkContext.broadcast(model.density)

        def scored(batches):
            density = shared.value
            for batch in batches:
                cells = [batch.column(i).to_pylist() for i in at]
                rows = [dict(zip(columns, row)) for row in zip(*cells)]
                logs = pa.array(density.log_density(rows, estimator), pa.float64())
                yield pa.RecordBatch.from_arrays([*batch.columns, logs], [*batch.schema.names, "__out"])

        # positional names in: pyspark's mapInArrow names its input columns unquoted (a dot in a name)
        positional = dataset.select(*(named_column(c).alias(f"__{i}") for i, c in enumerate(names)))
        schema = StructType([*dataset.schema.fields, StructField(out, DoubleType())])
        return positional.mapInArrow(scored, schema)

    def copy(self, extra=None):
        model = super().copy(extra)
        model.table, model.manifest, model._predictor = self.table, self.manifest, self._predictor
        return model

    def write(self) -> MLWriter:
        return CountsWriter(self)

    @classmethod
    def read(cls) -> MLReader:
        return CountsReader(cls, DENSITY_KIND)

    def counts_table(self):
        """The count table and manifest as ``nbspark train`` wrote them, for ``ml.persist.CountsWriter``."""
        return self.table, self.manifest

    @classmethod
    def from_counts(cls, root, manifest: dict) -> CountingDensityModel:
        """The model of a checked ``PATH/nbspark`` (``ml.persist.CountsReader``) or model directory,
        its counts checked as every reader checks them."""
        from nbspark.storage.counts import read_count_table

        return cls(read_count_table(root, COUNT_DDL, manifest), manifest)

    @classmethod
    def fromModelDir(cls, path) -> CountingDensityModel:
        """A density model trained by ``nbspark train`` or ``nbspark.fit``, as a Pipeline stage with the
        estimator the model's config named."""
        from nbspark.storage.locations import location
        from nbspark.storage.manifests import load_manifest

        root = location(path)
        manifest = load_manifest(root, DENSITY_KIND)
        return cls.from_counts(root, manifest)._set(estimator=manifest["config"]["density"]["model"])
