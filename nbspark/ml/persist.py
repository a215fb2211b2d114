"""Saving and loading the pyspark.ml models of every family, one way: MLlib's ``metadata/`` for
the params, and the counts as an nbspark model in ``PATH/nbspark`` (``counts/`` + manifest +
marker), which ``nbspark.load`` reads too.

A model class inherits ``CountsPersisted``, names its manifest's ``KIND``, and gives
``counts_table()`` -> ``(pyarrow table, manifest)`` to be written and ``from_counts(root,
manifest)`` -> a model built from a checked ``PATH/nbspark``.
"""

from __future__ import annotations

from pyspark.ml.util import (
    DefaultParamsReader,
    DefaultParamsWriter,
    MLReadable,
    MLReader,
    MLWritable,
    MLWriter,
)

from nbspark.storage.locations import location, use_hadoop
from nbspark.storage.manifests import BACKOFF_KIND, DENSITY_KIND, NB_KIND, TASK_OF_KIND, load_manifest
from nbspark.storage.tables import MARKER, write_json

__all__ = [
    "STAGE_OF_KIND",
    "CountTableStage",
    "CountsPersisted",
    "CountsReader",
    "CountsWriter",
    "model_dir_manifest",
]

#: the stage whose ``fromModelDir`` reads a model directory of each kind
STAGE_OF_KIND = {
    NB_KIND: "CountingNaiveBayesModel",
    BACKOFF_KIND: "CountingBackoffModel",
    DENSITY_KIND: "CountingDensityModel",
}


def model_dir_manifest(path, kind: str):
    """``(root, manifest)`` of a model directory that ``fromModelDir`` of the stage of ``kind`` reads:
    refused as ``nbspark.load`` refuses what is not a complete model, and a model of another family
    refused naming the stage that reads it (a job's hint, ``--set task=``, means nothing here)."""
    root = location(path)
    manifest = load_manifest(root, tuple(STAGE_OF_KIND))
    found = manifest["kind"]
    if found != kind:
        raise ValueError(
            f"{root}: a {TASK_OF_KIND[found]} model, which {STAGE_OF_KIND[found]}.fromModelDir reads; "
            f"{STAGE_OF_KIND[kind]} reads a {TASK_OF_KIND[kind]} one"
        )
    return root, manifest


def _root(path: str):
    """``PATH/nbspark`` where MLlib writes ``PATH``: a plain path is qualified by Hadoop's default
    file system, as MLlib's own ``metadata/`` is (``hdfs:`` on a cluster, ``file:`` locally)."""
    return location(use_hadoop().qualify(path)) / "nbspark"


class CountsWriter(MLWriter):
    """Params as MLlib writes them, then the model's ``counts_table()`` in ``PATH/nbspark``."""

    def __init__(self, instance):
        super().__init__()
        self.instance = instance

    def saveImpl(self, path: str) -> None:
        import io

        import pyarrow.parquet as pq

        DefaultParamsWriter.saveMetadata(self.instance, path, self.sparkSession)
        table, manifest = self.instance.counts_table()
        out = _root(path)
        (out / "counts").mkdir()
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        (out / "counts" / "part-00000-nbspark.parquet").write_bytes(buffer.getvalue())
        (out / "counts" / "_SUCCESS").write_text("")
        write_json(out / "manifest.json", manifest)
        write_json(out / MARKER, {"kind": "model"})


class CountsReader(MLReader):
    """A model of ``cls`` from ``PATH/nbspark`` (refused as ``nbspark.load`` refuses a model that is
    not a complete one of ``kind``), with the params MLlib saved."""

    def __init__(self, cls, kind: str):
        super().__init__()
        self.cls, self.kind = cls, kind

    def load(self, path: str):
        metadata = DefaultParamsReader.loadMetadata(path, self.sparkSession)
        root = _root(path)
        model = self.cls.from_counts(root, load_manifest(root, self.kind))
        model._resetUid(metadata["uid"])
        DefaultParamsReader.getAndSetParams(model, metadata)
        return model


class CountsPersisted(MLReadable, MLWritable):
    """What makes a model saved and loaded as above: ``write()`` and ``read()`` for a class whose
    ``KIND`` is its manifest's kind."""

    KIND = ""

    def write(self) -> MLWriter:
        return CountsWriter(self)

    @classmethod
    def read(cls) -> MLReader:
        return CountsReader(cls, cls.KIND)


class CountTableStage(CountsPersisted):
    """A stage that holds a model directory's count table (``DDL``, a pyarrow table) and manifest as
    they were read, and the predictor built from them: kept by ``copy``, written by ``CountsWriter``
    (``counts_table``), read back by ``from_counts``, the counts checked as every reader checks them
    (the density stage, the table naive Bayes stage). Listed before ``Model`` in a stage's bases, so
    that its ``copy`` is the one called."""

    DDL = ""

    def __init__(self, table=None, manifest: dict | None = None):
        super().__init__()
        self.table, self.manifest = table, manifest
        self._predictor = None

    def copy(self, extra=None):
        model = super().copy(extra)
        model.table, model.manifest, model._predictor = self.table, self.manifest, self._predictor
        return model

    def counts_table(self):
        """The count table and manifest as ``nbspark train`` wrote them, for ``CountsWriter``."""
        return self.table, self.manifest

    @classmethod
    def from_counts(cls, root, manifest: dict):
        """The model of a checked ``PATH/nbspark`` (``CountsReader``) or model directory."""
        from nbspark.storage.counts import read_count_table

        return cls(read_count_table(root, cls.DDL, manifest), manifest)
