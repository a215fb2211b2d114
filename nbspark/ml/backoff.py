"""The backoff family as a ``pyspark.ml`` stage: ``CountingBackoff``, an Estimator over windows.

``windowsCol`` is an ``array<string>`` of ``width`` tokens (default 5) whose centre is the label
(the word written there), with an optional ``weightCol`` (an n-gram line's count). Fitting counts
every context subset of the chain once (``backoff.frames.count_windows``, Spark SQL only) and keeps the
count table; the model decides each window with Cohen's backoff chain (``backoff.predict.predict``), as
the classify job and ``nbspark.load`` do, and adds ``predictionCol`` (the label, a string),
``probabilityCol`` (its probability at the deciding level, a double) and ``levelCol`` (that level's
letters, ``""`` for the prior, ``"unseen"`` when no level saw the context).

A window competes within the confusion set of its centre word (``confusionSets``, each a string of
words; by default one set of every label seen in training); a centre ``_`` lets every label
compete, and any other centre is refused (the task fails, naming it), as is a null window or token.
Fitting refuses a dataset with no windows, or whose windows are all centred on one word when
``confusionSets`` does not name the others. ``setBackoff`` on a fitted model reuses the counts (any chain of
counted subsets). The
model saves as MLlib models do, with the count table and a backoff manifest in ``PATH/nbspark``,
which ``nbspark.load`` reads. Tokens are used as given (no lower-casing).
"""

from __future__ import annotations

from pyspark import keyword_only
from pyspark.ml.base import Estimator, Model
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import HasPredictionCol, HasProbabilityCol, HasWeightCol
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable

from nbspark.backoff.events import count_columns, count_ddl
from nbspark.backoff.frames import count_windows
from nbspark.backoff.predictor import BackoffPredictor, checked_chain
from nbspark.ml.labels import new_columns
from nbspark.ml.persist import CountsPersisted, model_dir_manifest
from nbspark.settings.config import ExperimentConfig
from nbspark.spine.frames import collect_checked
from nbspark.storage.counts import read_count_rows
from nbspark.storage.manifests import BACKOFF_KIND, manifest_header

__all__ = ["CountingBackoff", "CountingBackoffModel"]


class _Params(HasWeightCol, HasPredictionCol, HasProbabilityCol):
    windowsCol = Param(
        Params._dummy(),
        "windowsCol",
        "array<string> windows, the label at the centre",
        typeConverter=TypeConverters.toString,
    )
    levelCol = Param(
        Params._dummy(), "levelCol", "the deciding level's letters", typeConverter=TypeConverters.toString
    )
    width = Param(
        Params._dummy(), "width", "tokens per window (odd, >= 3)", typeConverter=TypeConverters.toInt
    )
    backoff = Param(
        Params._dummy(),
        "backoff",
        "the chain of context subsets, most specific first",
        typeConverter=TypeConverters.toListString,
    )
    confusionSets = Param(
        Params._dummy(),
        "confusionSets",
        "confusion sets, each a string of words",
        typeConverter=TypeConverters.toListString,
    )
    lowercase = Param(
        Params._dummy(),
        "lowercase",
        "lower-case each window's tokens before deciding (a model trained on lower-cased text)",
        typeConverter=TypeConverters.toBoolean,
    )

    def __init__(self, *args):
        super().__init__(*args)
        self._setDefault(
            windowsCol="window",
            levelCol="level",
            width=5,
            backoff=list(ExperimentConfig().backoff),
            confusionSets=[],
            lowercase=False,
        )

    def config(self, labels=()) -> ExperimentConfig:
        """The settings as an experiment config (validated: the chain fits the width, sets have two words)."""
        sets = tuple(tuple(s.split()) for s in self.getOrDefault(self.confusionSets)) or (
            tuple(sorted(labels)),
        )
        return ExperimentConfig(
            name="pyspark.ml",
            confusion_sets=sets,
            width=self.getOrDefault(self.width),
            lowercase=self.getOrDefault(self.lowercase),
            backoff=tuple(self.getOrDefault(self.backoff)),
        )


class CountingBackoff(Estimator, _Params, DefaultParamsReadable, DefaultParamsWritable):
    """Cohen's backoff classifier by counting, as a ``pyspark.ml`` Estimator (see the module docstring)."""

    @keyword_only
    def __init__(
        self,
        *,
        windowsCol="window",
        weightCol=None,
        predictionCol="prediction",
        probabilityCol="probability",
        levelCol="level",
        width=5,
        backoff=None,
        confusionSets=None,
    ):
        super().__init__()
        self._set(**{k: v for k, v in self._input_kwargs.items() if v is not None})

    def _fit(self, dataset) -> CountingBackoffModel:
        width = self.getOrDefault(self.width)
        if self.getOrDefault(self.confusionSets):
            self.config()  # refuse bad settings before any work
        subsets = ExperimentConfig(
            width=width, confusion_set=("a", "b"), backoff=tuple(self.getOrDefault(self.backoff))
        ).counted_subsets
        weight = self.getWeightCol() if self.isDefined(self.weightCol) and self.getWeightCol() else None
        table = count_windows(
            dataset, self.getOrDefault(self.windowsCol), weight, width=width, subsets=subsets
        )
        rows = [tuple(r) for r in collect_checked(table)]
        labels = sorted({r[-2] for r in rows})
        if not labels:
            raise ValueError("CountingBackoff: the dataset has no windows to fit")
        if len(labels) < 2 and not self.getOrDefault(
            self.confusionSets
        ):  # a model of one word has nothing to decide
            raise ValueError(
                f"CountingBackoff: every window is centred on {labels[0]!r}; fit on windows of two words "
                "or more, "
                "or name the words with confusionSets"
            )
        return self._copyValues(CountingBackoffModel(rows, subsets))


class CountingBackoffModel(Model, _Params, CountsPersisted):
    """The fitted count table; the chain is applied when transforming (``setBackoff`` reuses the counts)."""

    KIND = BACKOFF_KIND

    def __init__(self, rows: list[tuple] | None = None, subsets: tuple[str, ...] = ()):
        super().__init__()
        self.rows, self.subsets = rows or [], tuple(subsets)

    def setBackoff(self, chain) -> CountingBackoffModel:
        """Score with another chain of the counted subsets (``backoff.predictor.checked_chain``)."""
        return self._set(backoff=list(checked_chain(chain, self.subsets)))

    def manifest(self) -> dict:
        """The backoff manifest of these counts, as the train job writes it (``nbspark.load`` reads it)."""
        cfg = self.config(labels={r[-2] for r in self.rows})
        prior: dict[str, int] = {}
        per_subset: dict[str, int] = {}
        for r in self.rows:
            per_subset[r[0]] = per_subset.get(r[0], 0) + 1
            if r[0] == "":
                prior[r[-2]] = prior.get(r[-2], 0) + r[-1]
        return {
            **manifest_header(BACKOFF_KIND, cfg),
            "engine": "pyspark.ml",
            "letters": cfg.letters,
            "subsets": list(self.subsets),
            "distinct_events": dict(sorted(per_subset.items())),
            "label_counts": dict(sorted(prior.items())),
            "count_schema": count_ddl(cfg.letters),
            "count_rows": len(self.rows),
            "stats": {},
            "malformed_examples": [],
        }

    def predictor(self) -> BackoffPredictor:
        """The model as ``nbspark.load`` gives it, with the current chain."""
        return BackoffPredictor(self.manifest(), self.rows, tuple(self.getOrDefault(self.backoff)))

    def _transform(self, dataset):
        from pyspark.sql import functions as F
        from pyspark.sql.types import DoubleType, StringType, StructField, StructType

        shared = dataset.sparkSession.sparkContext.broadcast(self.predictor())

        def decide(window):
            return shared.value.decide([window])[0]

        schema = StructType(
            [
                StructField("label", StringType()),
                StructField("p", DoubleType()),
                StructField("level", StringType()),
            ]
        )
        outputs = (self.predictionCol, self.probabilityCol, self.levelCol)
        new_columns("CountingBackoffModel", dataset.columns, [self.getOrDefault(p) for p in outputs])
        tmp = f"_{self.uid}_decided"
        out = dataset.withColumn(tmp, F.udf(decide, schema)(F.col(self.getOrDefault(self.windowsCol))))
        for param, field in (
            (self.predictionCol, "label"),
            (self.probabilityCol, "p"),
            (self.levelCol, "level"),
        ):
            if self.getOrDefault(param):
                out = out.withColumn(self.getOrDefault(param), F.col(f"{tmp}.{field}"))
        return out.drop(tmp)

    def copy(self, extra=None):
        model = super().copy(extra)
        model.rows, model.subsets = self.rows, self.subsets
        return model

    def counts_table(self):
        """The count rows as the train job's table (``backoff.events.count_ddl``) and the manifest, for
        ``ml.persist.CountsWriter``."""
        import pyarrow as pa

        manifest = self.manifest()
        names, rows = count_columns(manifest["letters"]), self.rows
        schema = pa.schema(
            [
                pa.field(
                    n,
                    pa.int64() if n == "count" else pa.string(),
                    nullable=n not in ("subset", "label", "count"),
                )
                for n in names
            ]
        )
        return pa.table([[r[i] for r in rows] for i in range(len(names))], schema=schema), manifest

    @classmethod
    def from_counts(cls, root, manifest: dict) -> CountingBackoffModel:
        """The model of a checked ``PATH/nbspark`` (``ml.persist.CountsReader``) or model directory."""
        return cls(
            read_count_rows(root, count_ddl(manifest["letters"]), manifest), tuple(manifest["subsets"])
        )

    @classmethod
    def fromModelDir(cls, path) -> CountingBackoffModel:
        """A backoff model trained by the command line or the train job (``nbspark train``), as a
        Pipeline stage, read and checked as ``nbspark.load`` reads it, with the model's width, chain,
        confusion sets and lower-casing: it decides each window as ``nbspark.load`` does."""
        from nbspark.storage.manifests import confusion_sets

        root, manifest = model_dir_manifest(path, BACKOFF_KIND)
        cfg = manifest["config"]
        return cls.from_counts(root, manifest)._set(
            width=cfg["width"],
            backoff=list(cfg["backoff"]),
            confusionSets=[" ".join(s) for s in confusion_sets(cfg)],
            lowercase=bool(cfg["lowercase"]),
        )
