"""The one classify skeleton of both model families, and its plan.

``plan_classify`` decides, before Spark starts, everything a classify run will do: the model and
its manifest, the settings the model fixes, the scorer, the overlap of test and training records
(refused unless the test data are exactly the training data), and the checked output. The jobs
follow the ``ClassifyPlan`` and decide nothing again.

A run whose plan says ``in_process`` (``nbspark classify`` on local test files that fit,
``settings.capabilities.classify_here_problem``) starts no JVM: its scorer reads and scores in this
process and returns the predictions as a pyarrow Table, which ``write_results`` writes as Spark's
writer leaves a table (``storage.tables.write_arrow_table``); the metrics read it back as they read
any small table, so both ways write the same files.

The skeleton: predictions written into a staging
directory, the run's statistics read once the write is done, metrics computed from what was
written, ``metrics.json`` and ``report.txt`` beside them, and the directory renamed into place.

Each family's scorer returns a ``Scored``: the predictions DataFrame and ``stats()``, called
after the write (statistics counted by that job are complete then), which returns the same keys
for every scorer: ``input_stats``, ``malformed_examples`` and ``unknown_features``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from nbspark.errors import ConfigError, InputError
from nbspark.report.format import (
    UNEXPLAINED,
    held_out,
    malformed_lines,
    malformed_reasons,
    missing_cells,
    nothing_found,
    stories,
    undecodable,
)
from nbspark.report.metrics import flat_metrics
from nbspark.settings.capabilities import classify_here_problem, resolve_scoring, training_overlap
from nbspark.storage.locations import Location, location
from nbspark.storage.manifests import load_manifest
from nbspark.storage.tables import check_output, read_arrow, staged_output, write_arrow_table, write_json
from nbspark.storage.uris import hadoop_escape

log = logging.getLogger("nbspark")

__all__ = [
    "ClassifyPlan",
    "Scored",
    "Written",
    "plan_classify",
    "predictions_table",
    "scored_here",
    "results_report",
    "write_metrics",
    "write_results",
]


@dataclass(frozen=True)
class ClassifyPlan:
    """What a classify run will do, decided before Spark starts (``plan_classify``).

    ``cfg`` is the run's config with what the model fixes (naive Bayes: ``model_settings``);
    ``scorer`` the resolved scorer (never ``auto``); ``overlap`` the verdict of
    ``settings.capabilities.training_overlap`` (``"none"`` or ``"all"``); ``out`` the checked results
    directory; ``in_process`` whether it scores in this process, without Spark (``spark`` None in the
    job); ``details`` what a family decided besides (naive Bayes: the binary decision)."""

    cfg: object
    model_dir: Location
    manifest: dict
    inputs: object
    out: Location
    scorer: str
    overlap: str
    details: dict = field(default_factory=dict)
    in_process: bool = False


def plan_classify(
    cfg,
    model_dir,
    inputs,
    out,
    kind: str,
    settings: Callable | None = None,
    model_bytes: Callable[[dict], int] | None = None,
    overwrite: bool = False,
    where: str = "spark",
) -> ClassifyPlan:
    """Decide a classify run with a model of ``kind``, in this order: read its manifest, apply
    ``settings(manifest, cfg) -> cfg`` (what the model fixes; it refuses what it must), resolve the
    scorer for a model of ``model_bytes(manifest)`` bytes, take the test ``inputs`` (or call them, a
    function that resolves them), refuse test records that are training records, check ``out``, and
    decide ``where`` it scores: ``"spark"``, ``"here"`` (in this process, refused where it cannot:
    ``settings.capabilities.classify_here_problem``) or ``"auto"`` (in process where it can and the
    test input fits, logged)."""
    model_dir = location(model_dir)
    manifest = load_manifest(model_dir, kind)
    run = settings(manifest, cfg) if settings is not None else cfg
    scorer = resolve_scoring(run, model_bytes(manifest) if model_bytes is not None else 0)
    inputs = inputs() if callable(inputs) else inputs
    overlap = training_overlap(manifest, inputs)
    out = check_output(out, overwrite, [inputs.root, model_dir])
    in_process = False
    if where != "spark":
        from nbspark.inputs.resolve import input_bytes

        why_not = classify_here_problem(run, scorer, None if where == "here" else input_bytes(inputs))
        if why_not is None and inputs.spec.format == "parquet":  # typed as Spark types it, or Spark
            from nbspark.inputs.tables import parquet_here_problem

            why_not = parquet_here_problem(inputs.files)
        if where == "here" and why_not:
            raise ConfigError(f"cannot score in process: {why_not}")
        if where == "auto":  # the decision taken here is said (one asked for is not), as train's
            log.info(
                "scoring %s",
                "in process (--spark scores with Spark)" if why_not is None else f"with Spark: {why_not}",
            )
        in_process = why_not is None
    return ClassifyPlan(run, model_dir, manifest, inputs, out, scorer, overlap, in_process=in_process)


@dataclass
class Scored:
    """What every scorer returns (the one scoring contract): ``predictions`` a DataFrame, or a pyarrow
    Table where the run scores in process."""

    predictions: object
    stats: Callable[[], dict]
    release: Callable[[], None] = lambda: None
    #: the number of partitions of ``predictions``, where the scorer knows it without planning
    #: them (those of its input); None: ``write_results`` plans the predictions to count them
    partitions: Callable[[], int] | None = None
    #: list columns of one element each, written as that element (single-label predictions: a
    #: string for pandas, not a list); the metrics read them back as lists (``Written.lists``)
    scalars: tuple[str, ...] = ()


def write_results(
    spark,
    out: Location,
    scored: Scored,
    metrics_of: Callable,
    report_of: Callable[[dict], str],
    extra: dict,
    started: float,
    files_of: Callable[[Location, dict], None] | None = None,
    *,
    empty: tuple[str, str, str],
) -> dict:
    """Write ``scored.predictions`` and the metrics (``metrics_of(written predictions)`` plus the
    scorer's statistics and ``extra``) into ``out``, staged; ``files_of(stage, metrics)`` may add
    files (plots) beside them. Return the metrics. A run that scored nothing (``empty``: the
    metric that counts what was scored, why an input might give none, and the input's format)
    writes nothing and fails (``InputError``), as a training run with nothing to count does. With
    ``spark`` None the predictions are a pyarrow Table, written in this process as one file."""
    try:
        if scored.scalars:
            scored.predictions = _first_elements(scored.predictions, scored.scalars, spark is None)
        with staged_output(out, "results") as stage:
            if spark is None:
                write_arrow_table(scored.predictions, stage / "predictions")
            else:
                _few_files(spark, scored).write.parquet((stage / "predictions").uri)
            stats = scored.stats()
            written = _read_back(spark, stage / "predictions", scored.predictions.schema, scored.scalars)
            metrics = metrics_of(written)
            metrics.update(extra)
            metrics.update(stats)
            if not metrics.get(empty[0]):
                raise InputError(_nothing_scored(metrics, *empty))
            metrics["seconds"] = round(time.time() - started, 2)
            write_metrics(stage, metrics)
            (stage / "report.txt").write_text(results_report(report_of, metrics) + "\n")
            if files_of is not None:
                files_of(stage, metrics)
    finally:
        scored.release()
    return metrics


def _first_elements(predictions, columns: tuple[str, ...], arrow: bool):
    """``predictions`` with each of ``columns`` (lists) as its first element, null for an empty list
    (Spark's ``get``): a DataFrame, or a pyarrow Table (``arrow``)."""
    if not arrow:
        from pyspark.sql import functions as F

        return predictions.withColumns({c: F.get(c, 0) for c in columns})
    import pyarrow as pa

    for c in columns:
        column = predictions.column(c)
        first = [v[0] if v else None for v in column.to_pylist()]
        at = predictions.schema.get_field_index(c)
        predictions = predictions.set_column(at, c, pa.array(first, column.type.value_type))
    return predictions


#: Prediction rows made a pyarrow table at a time in process (``scored_here``).
ROWS_A_CHUNK = 65_536


def predictions_table(batches, schema):
    """The prediction batches a scorer made in this process (its Spark ``mapInArrow`` function run
    here) as one pyarrow Table of ``schema``, each batch cast to it (a column that holds only nulls
    in a batch comes typed null); none: an empty table of it."""
    import pyarrow as pa

    tables = [pa.Table.from_batches([b]).cast(schema) for b in batches]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def scored_here(records, score: Callable, ddl: str, mode: str, keep_bad: int) -> tuple:
    """In this process, what a Spark scorer does with its records (examples or documents, the
    reader's statistics records among them), in one pass: each statistics record set aside as it
    comes, the others scored by ``score(records) -> prediction rows`` (the scorer's own partition
    function), the rows made a pyarrow Table of ``ddl`` ``ROWS_A_CHUNK`` at a time (memory: the
    predictions, not the records). ``(predictions, statistics, first malformed records)``, the
    statistics summed as ``count_events`` sums them; failfast's error as the Spark jobs raise it."""
    from itertools import islice

    import pyarrow as pa

    from nbspark.inputs.stats import is_stat, run_failfast, split_stats
    from nbspark.spine.counting import combine_partition
    from nbspark.storage.counts import rows_table

    stat_records = []

    def examples():
        for record in records:
            if is_stat(record):
                stat_records.append(record)
            else:
                yield record

    def table():
        rows, chunks = score(examples()), []
        while chunk := list(islice(rows, ROWS_A_CHUNK)):
            chunks.append(rows_table(chunk, ddl))
        return pa.concat_tables(chunks) if chunks else rows_table([], ddl)

    predictions = run_failfast(table, mode)
    return (predictions, *split_stats(combine_partition(stat_records), keep_bad))


def write_metrics(stage: Location, metrics: dict) -> None:
    """``metrics.json`` and its flat companion ``metrics.csv`` (``report.metrics.flat_metrics``) in
    ``stage``: every job that reports metrics writes both, here."""
    write_json(stage / "metrics.json", metrics)
    (stage / "metrics.csv").write_text(flat_metrics(metrics))


def _nothing_scored(metrics: dict, unit: str, why: str, fmt: str) -> str:
    found = nothing_found(metrics.get("input_stats") or {}, metrics.get("malformed_examples", []), fmt)
    return f"{metrics.get('test_input')}: no test {unit} to score ({why}{found}); nothing written"


def results_report(report_of: Callable[[dict], str], metrics: dict) -> str:
    """The report of a classify job's ``metrics``, as report.txt holds it and the command prints it:
    the task's report, then what the scores left out (skipped records, unseen features)."""
    stats, notes = metrics.get("input_stats") or {}, []
    if stats.get("malformed"):
        reasons = malformed_reasons(stats)
        notes.append(
            f"malformed records skipped: {stats['malformed']:,}" + (f" ({reasons})" if reasons else "")
        )
        notes += malformed_lines(metrics.get("malformed_examples", [])[:3], width=100)
    notes += held_out(stats, "test") + stories(stats, "test") + missing_cells(stats) + undecodable(stats)
    if metrics.get("unknown_features"):
        notes.append(
            f"tokens or values the model never saw (left out of the scores): {metrics['unknown_features']:,}"
        )
    if metrics.get("unexplained_documents"):
        notes.append(
            f"documents no class can explain ({UNEXPLAINED}): "
            f"{metrics['unexplained_documents']:,}; each got equal posteriors and the first class in order"
        )
    if metrics.get("test_is_training_data"):
        notes.append(
            "note: the test records are the records the model was trained on: these figures are on the "
            "training data, not on held-out data"
        )
    return "\n".join([report_of(metrics)] + ([""] + notes if notes else []))


@dataclass
class Written:
    """The predictions just written, as ``metrics_of`` reads them: ``frame``, a DataFrame over them
    with their schema (inferring it would run a job over the footers; made when first asked for),
    ``counts``, ``distinct`` and ``totals``. A table written in process (``spark`` None), or one that
    fits one file partition (``spark.sql.files.maxPartitionBytes``), is small: its frame is read in
    one task (a group-by
    then needs no shuffle), and ``counts`` and ``totals`` read it in the driver, the columns that
    ``preload`` names in one read (each read of the part files through Hadoop's streams has a
    fixed cost, whatever its columns)."""

    spark: object
    table: Location
    schema: object
    parts: list
    small: bool
    lists: tuple[str, ...] = ()  # columns written as strings (``Scored.scalars``), read as lists of one
    _columns: dict = field(default_factory=dict)  # a small table's columns read so far

    def preload(self, columns: list[str]) -> None:
        """Read ``columns`` of a small table now, in one read (nothing for a larger one)."""
        if self.small:
            self._arrow(columns)

    def _arrow(self, columns: list[str]):
        """``columns`` of a small table as one pyarrow Table, reading only those not read before."""
        import pyarrow as pa

        missing = list(dict.fromkeys(c for c in columns if c not in self._columns))  # each column read once
        if missing:
            table = read_arrow(self.parts, missing).combine_chunks()
            self._columns.update(
                (c, _one_element_lists(v.combine_chunks()) if c in self.lists else v)
                for c, v in zip(missing, table.columns)
            )
        return pa.table({c: self._columns[c] for c in columns})

    @cached_property
    def frame(self):
        from pyspark.sql import functions as F

        frame = self.spark.read.schema(self.schema).parquet(hadoop_escape(self.table.uri))
        if self.lists:
            frame = frame.withColumns({c: F.array(c) for c in self.lists})
        return frame.coalesce(1) if self.small else frame

    def arrow(self, columns: list[str]):
        """``columns`` of every prediction as one pyarrow Table in the driver: a small table's read
        here, a larger one's collected by Spark (``toArrow``)."""
        if self.small:
            return self._arrow(columns)
        return self.frame.select(*columns).toArrow()

    def totals(self, columns: list[str], in_arrow: Callable, in_spark: Callable) -> dict:
        """One row of totals over the predictions, as a dict: ``in_arrow(table)`` of a small
        table's ``columns`` read by pyarrow in the driver, else the aggregate columns
        ``in_spark()`` over ``frame`` (two implementations of one rule: tests hold them equal)."""
        if self.small:
            return in_arrow(self._arrow(columns))
        return self.frame.agg(*in_spark()).first().asDict()

    def counts(self, columns: list[str]) -> list[tuple]:
        """How many predictions share each value of ``columns`` (strings, or lists of strings):
        ``(value, ..., count)`` tuples, a list value as a tuple. A small table is counted by
        pyarrow in the driver (no Spark job to plan and run), a larger one by a Spark group-by."""
        if not self.small:
            return [
                tuple(tuple(v) if isinstance(v, list) else v for v in r)
                for r in self.frame.groupBy(*columns).count().collect()
            ]
        return _arrow_counts(self._arrow(columns))

    def distinct(self, columns: list[str]) -> int:
        """How many distinct rows ``columns`` hold, nulls equal (Spark's ``distinct``): a small
        table's by pyarrow in the driver, a larger one's by Spark (tests hold them equal)."""
        if self.small:
            return self._arrow(columns).group_by(columns).aggregate([]).num_rows
        return self.frame.select(*columns).distinct().count()


def _read_back(spark, table: Location, schema, lists: tuple[str, ...] = ()) -> Written:
    parts = table.files(skip=lambda name: name.startswith(("_", ".")))
    if spark is None:  # written in this process: read back in it, whatever its size
        return Written(None, table, schema, parts, True, lists)
    limit = spark.sparkContext._jvm.org.apache.spark.network.util.JavaUtils.byteStringAsBytes(
        spark.conf.get("spark.sql.files.maxPartitionBytes")
    )
    return Written(spark, table, schema, parts, sum(f.stat()[0] for f in parts) <= limit, lists)


def _one_element_lists(values):
    """A pyarrow array as a list array, each value a list of itself (``Written.lists``)."""
    import numpy as np
    import pyarrow as pa

    return pa.ListArray.from_arrays(pa.array(np.arange(len(values) + 1, dtype=np.int32)), values)


def _arrow_counts(table) -> list[tuple]:
    """``Written.counts`` of a pyarrow Table of the counted columns (one chunk each): grouped by
    each column's value, a list column by its elements in order (each element spelt ``S`` + its
    length in ten digits + itself, or ``N`` for a null, so that no two lists share a key), a null
    as a group of its own, as Spark's group-by groups them."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not table.num_rows:
        return []
    columns = table.column_names
    keys = {}
    for i, name in enumerate(columns):
        column = table.column(name).chunk(0)
        if pa.types.is_list(column.type):
            values = column.flatten()
            length = pc.utf8_lpad(pc.cast(pc.binary_length(values), pa.string()), 10, "0")
            sized = pc.if_else(pc.is_null(values), "N", pc.binary_join_element_wise("S", length, values, ""))
            offsets = pc.subtract(column.offsets, column.offsets[0])
            column = pc.binary_join(pa.ListArray.from_arrays(offsets, sized, mask=column.is_null()), "")
        keys[f"k{i}"] = column
    keys["row"] = pa.array(np.arange(table.num_rows))
    groups = (
        pa.table(keys)
        .group_by([f"k{i}" for i in range(len(columns))])
        .aggregate([("row", "min"), ("row", "count")])
    )
    firsts = table.take(groups.column("row_min")).to_pylist()
    return [
        (*(tuple(r[c]) if isinstance(r[c], list) else r[c] for c in columns), n)
        for r, n in zip(firsts, groups.column("row_count").to_pylist())
    ]


def _few_files(spark, scored: Scored):
    """Predictions in more partitions than the session has cores (one per input split: 22 for
    Reuters) are rebalanced by AQE into partitions of ``spark.sql.adaptive.advisoryPartitionSizeInBytes``,
    so a small result is one file and a large one keeps its tasks; fewer partitions than that are
    written as they are (no shuffle). The partitions are the scorer's count where it has one
    (planning the predictions only to count them costs every classify job)."""
    predictions = scored.predictions
    partitions = scored.partitions() if scored.partitions is not None else predictions.rdd.getNumPartitions()
    if partitions > spark.sparkContext.defaultParallelism:
        return predictions.hint("rebalance")
    return predictions
