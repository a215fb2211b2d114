"""The density family as ``pyspark.ml`` stages: ``CountingDensity``, an Estimator that counts a
DataFrame's rows into the lecture's joint and naive density estimators, and ``CountingDensityModel``,
the Transformer that adds each row's log density, fitted or made from a density model trained by
``nbspark train`` or ``nbspark.fit`` (``fromModelDir``), as ``nbspark.load``'s ``score_samples``
gives it.

``inputCols`` (default: every string column but ``weightCol``) are the modelled columns; each is a
string column (a cell is text as the table writes it, null for an empty cell:
``density.model.row_cells``), and a DataFrame that lacks one, or types one otherwise, is refused
before any task runs. Fitting counts as the train job counts (``density.count.count_frame``): a
``weightCol`` weighs each row (a count), and a weight that is not a number >= 0 is refused, naming
the row. ``bins`` cuts number columns into categories as ``density.bins`` does (``inputs.bins``:
``["age=30,50,65"]``, or ``["age=quantiles:4"]`` with edges from the rows fitted, as the train job
settles them: ``density.edges.frame_edges``); a binned column may hold numbers or text, and a row
whose binned cell is no number is refused. ``logDensityCol`` (default ``log_density``) is
``log P(row)``, ``-inf`` where the density is 0 (a row never seen, unsmoothed); ``estimator`` is
``joint`` or ``naive``, ``m`` the smoothing (Dirichlet, ``DensitySpec.m``). Every other column is
kept. The model saves as MLlib models do, with
the count table and manifest in ``PATH/nbspark`` (``ml.persist``), which ``nbspark.load`` reads.
"""

from __future__ import annotations

from pyspark import keyword_only
from pyspark.ml.base import Estimator, Model
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import HasWeightCol
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable

from nbspark.density.model import COUNT_DDL
from nbspark.density.predictor import DensityPredictor
from nbspark.ml.labels import new_columns
from nbspark.ml.persist import CountTableStage, model_dir_manifest
from nbspark.settings.config import DENSITY_MODELS
from nbspark.spine.frames import named_column
from nbspark.storage.counts import table_rows
from nbspark.storage.manifests import DENSITY_KIND

__all__ = ["CountingDensity", "CountingDensityModel"]


class _Params(HasWeightCol):
    inputCols = Param(
        Params._dummy(),
        "inputCols",
        "the modelled columns, text (default: every string column but weightCol)",
        typeConverter=TypeConverters.toListString,
    )
    m = Param(
        Params._dummy(),
        "m",
        "Dirichlet smoothing, (# + m q) / (N + m); 0: the maximum-likelihood estimate",
        typeConverter=TypeConverters.toFloat,
    )
    logDensityCol = Param(
        Params._dummy(),
        "logDensityCol",
        "output column: log P(row), -inf where the density is 0",
        typeConverter=TypeConverters.toString,
    )
    bins = Param(
        Params._dummy(),
        "bins",
        'numbers cut into bins (density.bins): ["age=30,50,65"], or ["age=quantiles:4"], edges from the data',
        typeConverter=TypeConverters.toListString,
    )
    estimator = Param(
        Params._dummy(),
        "estimator",
        "joint (the table's own frequencies) or naive (the product of the columns' marginals)",
        typeConverter=TypeConverters.toString,
    )

    def __init__(self, *args):
        super().__init__(*args)
        self._setDefault(logDensityCol="log_density", estimator="joint", inputCols=[], m=0.0, bins=[])

    def setEstimator(self, value: str):
        if value not in DENSITY_MODELS:
            raise ValueError(f"estimator must be 'joint' or 'naive', got {value!r}")
        return self._set(estimator=value)

    def setLogDensityCol(self, value: str):
        return self._set(logDensityCol=value)


class CountingDensity(Estimator, _Params, DefaultParamsReadable, DefaultParamsWritable):
    """The lecture's density estimators by counting, as a ``pyspark.ml`` Estimator (see the module
    docstring)."""

    @keyword_only
    def __init__(
        self,
        *,
        inputCols=None,
        weightCol=None,
        estimator="joint",
        m=0.0,
        logDensityCol="log_density",
        bins=None,
    ):
        super().__init__()
        kwargs = {k: v for k, v in self._input_kwargs.items() if v is not None}
        if "estimator" in kwargs:
            self.setEstimator(kwargs["estimator"])
        self._set(**kwargs)

    def _fit(self, dataset) -> CountingDensityModel:
        import math

        from nbspark.density.count import (
            MANIFEST_FIELDS,
            TEXT_TYPES,
            bin_expressions,
            cell_types,
            count_frame,
            rows_fields,
        )
        from nbspark.density.edges import frame_edges
        from nbspark.errors import InputError
        from nbspark.inputs.bins import parse_bins, quantiles_asked, settled_bins
        from nbspark.settings.config import DensitySpec, ExperimentConfig
        from nbspark.storage.counts import rows_table
        from nbspark.storage.manifests import manifest_header

        weight = self.getWeightCol() if self.isDefined(self.weightCol) and self.getWeightCol() else ""
        m = self.getOrDefault(self.m)
        if not (math.isfinite(m) and m >= 0):
            raise ValueError(f"CountingDensity: m must be a finite number >= 0, got {m!r}")
        types = dict(dataset.dtypes)
        if weight and weight not in types:
            raise ValueError(f"CountingDensity: the DataFrame has no weight column {weight!r}")
        bins = parse_bins(self.getOrDefault(self.bins), "CountingDensity: bins")
        columns = list(self.getOrDefault(self.inputCols)) or [
            c for c, t in types.items() if c != weight and (t in TEXT_TYPES or c in bins)
        ]
        if not columns:
            raise ValueError("CountingDensity: no string column to model; name them with inputCols")
        _text_columns("CountingDensity", types, columns, bins)
        try:  # each binned column modelled, of numbers or text (density.count's rule of a table's columns)
            cell_types(types, columns, bins, "CountingDensity")
        except InputError as exc:
            raise ValueError(str(exc)) from None
        settled = tuple(self.getOrDefault(self.bins))
        if quantiles_asked(bins):  # edges from the rows counted (density.edges' rule)
            settled = settled_bins(settled, frame_edges(dataset, weight, bins))
            bins = parse_bins(settled)
        counts, read, bad, example = count_frame(dataset, columns, weight, *bin_expressions(dataset, bins))
        try:
            if bad["weight"] or bad["bin"]:
                why = (
                    f"weigh no number >= 0 in {weight!r}"
                    if bad["weight"]
                    else "hold no number in a binned column"
                )
                raise ValueError(f"CountingDensity: {sum(bad.values()):,} row(s) {why}, the first {example}")
            rows = [tuple(r) for r in counts.select("event", "column", "value", "n").collect()]
        finally:
            counts.unpersist()
        if read == 0:
            raise ValueError("CountingDensity: the DataFrame has no rows to count")
        fields = rows_fields(columns, rows)
        density = DensitySpec(
            model=self.getOrDefault(self.estimator),
            columns=tuple(columns),
            weight_column=weight,
            m=m,
            bins=settled,
        )
        manifest = {
            **manifest_header(
                DENSITY_KIND, ExperimentConfig(name="pyspark.ml", task="density", density=density)
            ),
            "engine": "pyspark.ml",
            **{k: fields[k] for k in MANIFEST_FIELDS},
            "count_schema": COUNT_DDL,
            "count_rows": len(rows),
            "stats": {"rows_read": read, "rows": read},
            "malformed_examples": [],
        }
        table = rows_table(rows, COUNT_DDL)
        return self._copyValues(CountingDensityModel(table, manifest))


def _text_columns(who: str, types: dict, columns, bins=()) -> None:
    """Refuse (``ValueError``) ``columns`` that a DataFrame of ``types`` lacks or does not hold as text
    (but for the binned ones, ``bins``, whose numbers the model cuts into its bins)."""
    if missing := [c for c in columns if c not in types]:
        raise ValueError(
            f"{who}: the DataFrame has no column(s) {', '.join(missing)} "
            f"(the model's columns: {', '.join(columns)})"
        )
    from nbspark.density.count import not_text

    if typed := not_text(types, [c for c in columns if c not in bins]):
        raise ValueError(
            f"{who}: column(s) {', '.join(typed)} are not text: a density model's cells are text as the "
            "table writes them; cast them to string first"
        )


class CountingDensityModel(CountTableStage, Model, _Params):
    """A density model's counts as a Pipeline stage (see the module docstring)."""

    KIND, DDL = DENSITY_KIND, COUNT_DDL

    def predictor(self) -> DensityPredictor:
        """The model as ``nbspark.load`` gives it."""
        if self._predictor is None:
            self._predictor = DensityPredictor(self.manifest, table_rows(self.table))
        return self._predictor

    def _transform(self, dataset):
        import pyarrow as pa
        from pyspark.sql.types import DoubleType, StructField, StructType

        model = self.predictor()
        columns, estimator = list(model.columns), self.getOrDefault(self.estimator)
        out = self.getOrDefault(self.logDensityCol)
        types = dict(dataset.dtypes)
        _text_columns("CountingDensityModel", types, columns, model.bins)
        new_columns("CountingDensityModel", types, [out])
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

    @classmethod
    def fromModelDir(cls, path) -> CountingDensityModel:
        """A density model trained by ``nbspark train`` or ``nbspark.fit``, as a Pipeline stage with the
        estimator the model's config named."""
        root, manifest = model_dir_manifest(path, DENSITY_KIND)
        density = manifest["config"]["density"]
        return cls.from_counts(root, manifest)._set(
            estimator=density["model"], m=float(density["m"]), inputCols=list(manifest["columns"])
        )
