"""The one train skeleton of both model families, and its plan.

``plan_training(cfg, inputs, out, family, update, force, overwrite) -> TrainPlan`` decides, before
Spark starts, everything a run will do: the engine the capability table picks, the checked output,
and for ``--update`` the model's manifest with the refusals of an update made with other settings
or of an input counted before. ``train_model(spark, plan, family)`` follows the plan and decides
nothing again: count with the plan's engine (``Family.count`` returns a ``spine.counting.Counted``),
refuse a run without examples, add the old counts on ``--update``, write the count table and the
manifest into a staging directory and rename it into place (``storage.tables.staged_output``). A
family supplies its counting, its count schema, its update rules and its manifest fields; nothing
is printed here (the command line formats the returned manifest).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from nbspark.errors import ConfigError, InputError, OutputError
from nbspark.inputs.files import damaged_files_named
from nbspark.report.format import nothing_found
from nbspark.settings.capabilities import driver_writes, resolve_engine
from nbspark.spark.session import max_result_bytes
from nbspark.spine.counting import Counted, merge_counts
from nbspark.storage.counts import check_counts_spark, read_count_table, summed_table
from nbspark.storage.locations import Location, location, resolved
from nbspark.storage.manifests import (
    check_update,
    counted_signatures,
    load_manifest,
    manifest_header,
    merged_manifest,
)
from nbspark.storage.tables import (
    check_output,
    parquet_rows,
    read_parquet_checked,
    staged_output,
    write_arrow_table,
    write_json,
)
from nbspark.storage.uris import hadoop_escape
from nbspark.storage.versions import count_parts, refuse_live_stream, take_writer_lock

__all__ = [
    "Family",
    "TrainPlan",
    "input_signatures",
    "check_recount",
    "plan_training",
    "read_counts",
    "refuse_remote",
    "run_manifest",
    "train_in_process",
    "train_model",
    "nothing_counted",
    "why_empty",
    "write_counts",
]

log = logging.getLogger("nbspark")


@dataclass(frozen=True)
class Family:
    """What a model family supplies to the train skeleton.

    ``task``: the config's ``task`` whose models it counts;
    ``count(spark, cfg, inputs, engine) -> Counted``; ``ddl(config_dict) -> str`` the count schema;
    ``sums``: the count columns (added on update); ``unit``: the statistic that must be > 0
    (``"examples"``, ``"documents"``); ``update_keys``: settings that must equal the model's on
    update; ``fields(spark, cfg, counted, written, updated) -> dict``: the family's manifest fields;
    ``check_old(old_manifest, cfg)``: further refusals of an update (``InputError``);
    ``update_settings(old_manifest, cfg) -> cfg``: what an update counts with, where the model
    settled something the run's config leaves open (the manifest still records the run's config).
    """

    kind: str
    task: str  # the config's ``task`` that trains it
    count: Callable
    ddl: Callable[[dict], str]
    sums: tuple[str, ...]
    unit: str
    update_keys: tuple[str, ...]
    fields: Callable
    check_old: Callable | None = None
    update_settings: Callable | None = None


def read_counts(spark, model_dir: Location, family: Family, manifest: dict):
    """A model's count table, checked against the family's schema and the manifest's row count, and
    its counts (>= 0, each key once: ``storage.counts.check_counts_spark``); a version of several
    parts (``storage.versions``) summed by key. ``spark`` None: a pyarrow table, read and checked in
    this process (``storage.counts.read_count_table``, what ``nbspark.load`` reads)."""
    ddl = family.ddl(manifest["config"])
    if spark is None:
        return read_count_table(model_dir, ddl, manifest)
    parts = count_parts(model_dir, manifest)
    frame = read_parquet_checked(spark, parts[0][0], ddl, parts[0][1], *parts[1:])
    if len(parts) == 1:
        check_counts_spark(frame, str(parts[0][0]))
        return frame
    # one scan of every part (a streamed model has up to a hundred), each row with its part's table
    from pyspark.sql import functions as F

    tables = {where.uri: str(where) for where, _ in parts}
    part = F.regexp_extract(F.col("_metadata.file_path"), "^(.*)/[^/]*$", 1)
    check_counts_spark(frame.withColumn("_part", part), lambda uri: tables.get(location(uri).uri, uri))
    return merge_counts(frame, sums=list(family.sums))


def input_signatures(inputs) -> list[list]:
    """``[path, size, modification time (ms, Hadoop's unit)]`` of each input file: what ``--update``
    compares."""
    out = []
    for f in inputs.files:
        size, mtime = f.stat()
        out.append([str(f), size, mtime])
    return out


def _in_ms(sig: list) -> tuple:
    """A signature with its time in ms (models written before 0.2 recorded ns, which no ms time reaches)."""
    path, size, mtime = sig
    return (path, size, mtime // 1_000_000 if mtime > 10**15 else mtime)


def check_recount(old: dict, inputs, force: bool) -> None:
    """Refuse to add an input file a second time (the same file, by any name, with the same size
    and modification time)."""
    if force:
        return
    seen = {  # which run counted it: a folded stream's entry knows its last batch's time only
        _in_ms(sig): f"a stream's batches until {u['created']}"
        if u.get("batches")
        else f"run of {u['created']}"
        for u in old.get("updates", [])
        for sig in counted_signatures(u["inputs"])
    }
    by_stat: dict = {}  # another name of a counted file (a link, a mount, file://) has its size and time
    for path, size, mtime in seen:
        by_stat.setdefault((size, mtime), []).append(path)
    for path, size, mtime in input_signatures(inputs):
        candidates = by_stat.get((size, mtime), [])
        same = [p for p in candidates if p == path]
        if candidates and not same:  # resolved once, and only for a file of a counted size and time
            real = resolved(path)
            same = [p for p in candidates if resolved(p) == real]
        if same:
            raise InputError(
                f"cannot update: {path} was already counted into this model ({seen[(same[0], size, mtime)]}"
                f"{'' if same[0] == path else f', as {same[0]}'}); pass --force (force=True) to count it "
                "again"
            )


@dataclass(frozen=True)
class TrainPlan:
    """What a train run will do, decided before Spark starts (``plan_training``).

    ``cfg`` is the run's config (the manifest records it); ``counting`` what the engine counts with
    (an update's: with what the model settled, ``Family.update_settings``); ``engine`` the resolved
    engine (never ``auto``); ``out`` the checked model directory; ``old`` the manifest of the model
    an update adds to (None: a new model)."""

    cfg: object
    counting: object
    inputs: object
    out: Location
    engine: str
    old: dict | None = None


def plan_training(
    cfg,
    inputs,
    out,
    family: Family,
    update: bool = False,
    force: bool = False,
    overwrite: bool = False,
    in_process: bool = False,
) -> TrainPlan:
    """Decide a train run: refuse a training input, sampling or engine that cannot apply, an output
    that cannot be replaced (``storage.tables.check_output``: only with ``overwrite`` or ``update``,
    only if nbspark wrote it, never overlapping the input), and an update whose settings differ from
    the model's or that counts a file the model holds (unless ``force``). ``inputs`` may be a
    function that resolves them: it is called once the engine is known to apply. ``in_process``: count
    without Spark (``settings.capabilities.resolve_engine``), an update's old counts read by pyarrow."""
    engine = resolve_engine(cfg, in_process)
    if cfg.task != family.task:  # a density config counted as naive Bayes would be silently wrong
        raise ConfigError(f"a config of task = {cfg.task!r} does not train a {family.task} model")
    inputs = inputs() if callable(inputs) else inputs
    old = None
    if update:
        old = load_manifest(location(out), family.kind)
        refuse_live_stream(out, "--update it", " (a stream compacts by itself, --compact-every)")
    elif overwrite:  # the stream's next version would go, or land in the new model
        refuse_live_stream(out, "--overwrite it")
    out = check_output(out, overwrite or update, [inputs.root])
    if old is not None:
        check_update(old, cfg, family.update_keys)
        if family.check_old is not None:
            family.check_old(old, cfg)
        check_recount(old, inputs, force)
    counting = (
        family.update_settings(old, cfg) if old is not None and family.update_settings is not None else cfg
    )
    return TrainPlan(cfg, counting, inputs, out, engine, old)


def refuse_remote(cfg, data_dir, model=None, part: str = "train", out=None) -> None:
    """Running in process reads local files: a URI of another storage (which would start the JVM to
    reach it) is refused, before anything is resolved (``ConfigError``): ``part``'s input (``train``,
    or ``test`` to classify), the data dir, the model (to update, or to score with) and the results
    directory ``out``."""
    from nbspark.storage.uris import is_local

    named = "--update" if part == "train" else "the model"
    paths = (
        (f"{part}.path", getattr(cfg, part).path),
        ("--data-dir", data_dir),
        (named, model),
        ("--out", out),
    )
    for what, path in paths:
        if path and not is_local(path):
            raise ConfigError(f"in process, nbspark reads local files only, not {what} {path}: use Spark")


def train_in_process(
    cfg,
    family: Family,
    out,
    data_dir: str | None = None,
    overwrite: bool = False,
    update: bool = False,
    force: bool = False,
) -> dict:
    """Count ``cfg.train`` (local files) into the model ``out`` of ``family`` in this process, no Spark
    and no JVM (``nbspark.fit``): the plan and skeleton of a Spark run, with the family's ``local``
    engine; the manifest. ``update`` adds the counts to the model ``out`` (``force``: a file it
    holds counted again), as ``nbspark train --update`` does."""
    from nbspark.inputs.resolve import resolve_input

    refuse_remote(cfg, data_dir, out=out)
    plan = plan_training(
        cfg,
        lambda: resolve_input(cfg.train, data_dir),
        out,
        family,
        update,
        force,
        overwrite=overwrite,
        in_process=True,
    )
    return train_model(None, plan, family)


def train_model(spark, plan: TrainPlan, family: Family) -> dict:
    """Count ``plan.inputs`` into the model directory ``plan.out`` (staged here); return the manifest.
    ``spark`` is None for a plan that counts in this process (``plan.engine == "local"``).

    With an update (``plan.old``), the new counts are added to the model's tables (Cohen's
    streaming property: no recounting of the old data) and the model is replaced whole, under the
    model's writer lock (``storage.versions.take_writer_lock``): a second update, a stream or a
    ``save`` meanwhile is refused, and an update whose model changed since its plan read it stops
    (its counts would be added to a model that no longer is)."""
    started = time.time()
    out, old = plan.out, plan.old
    release = take_writer_lock(out) if old is not None else (lambda: None)
    try:
        if old is not None and load_manifest(out, family.kind) != old:
            raise OutputError(
                f"{out}: the model changed since this update read it (another writer); run it again"
            )
        with damaged_files_named(plan.inputs.files):  # a .gz cut short: Hadoop's error names no file
            return _count_and_write(spark, plan, family, started)
    finally:
        release()


def _count_and_write(spark, plan: TrainPlan, family: Family, started: float) -> dict:
    cfg, inputs, out, old = plan.cfg, plan.inputs, plan.out, plan.old
    log.info("counting %s with the %s engine", inputs.root, plan.engine)
    counted: Counted = family.count(spark, plan.counting, inputs, plan.engine)
    try:
        if not counted.stats.get(family.unit):
            raise InputError(
                f"{inputs.root}: no training {family.unit} ({nothing_counted(cfg, counted)}); nothing written"
            )
        counts = counted.counts
        if old is not None:
            counts = _added_counts(spark, counts, read_counts(spark, out, family, old), family)
        rows = counted.known.get("rows") if old is None else None

        def manifest_of(stage, written):
            return run_manifest(spark, cfg, family, counted, inputs, stage, written, old, started)

        collect = None  # how the driver takes a table Spark counted (write_counts); pyarrow's already here
        if spark is not None:
            collect = counts.toArrow if old is not None else partial(counted.arrow, family.ddl(cfg.to_dict()))
        return write_counts(spark, counts, out, "model", cfg.rows_per_file, rows, manifest_of, collect)
    finally:
        counted.release()


def _added_counts(spark, new, old, family: Family):
    """An update's counts added to the model's: in Spark (``spine.counting.merge_counts``) or, for
    pyarrow tables counted in this process, by its twin ``storage.counts.summed_table``."""
    if spark is not None:
        return merge_counts(new, old, sums=list(family.sums))
    import pyarrow as pa

    return summed_table(pa.concat_tables([new, old.select(new.column_names)], promote_options="default"))


def write_counts(
    spark, counts, out, kind: str, rows_per_file: int, rows: int | None, manifest_of, collect=None
) -> dict:
    """Write a count table and its manifest into ``out``, whole or not at all: ``counts`` (a
    DataFrame, or an Arrow table when ``spark`` is None) as ``counts/`` in one file per
    ``rows_per_file`` rows (``rows``: the rows, or a bound on them; None: counted), then
    ``manifest_of(stage, written)`` (``written()`` reads the table back: a DataFrame, or the Arrow
    table written in this process) as ``manifest.json``; staged and renamed into place with a marker
    of ``kind`` (``storage.tables.staged_output``). ``collect``: how this process gets the table as
    pyarrow's (``spine.counting.Counted.arrow``), for a caller whose ``manifest_of`` takes an Arrow
    table from ``written()`` (``storage.counts.is_arrow_table``): a DataFrame within
    ``settings.capabilities.driver_writes`` (one file's rows, at most a million, within
    ``spark.driver.maxResultSize``) is then collected and written here (the same file, without Spark
    SQL's cold Parquet write)."""
    local = spark is None
    if not local:
        rows = counts.count() if rows is None else rows
        if collect is not None and driver_writes(rows, rows_per_file, max_result_bytes(spark)):
            counts, local = collect(), True
        else:
            counts = counts.coalesce(max(1, -(-rows // rows_per_file)))  # coalesce never adds files
    with staged_output(out, kind) as stage:
        if local:
            write_arrow_table(counts, stage / "counts")
        else:
            counts.write.parquet((stage / "counts").uri)

        def written():  # read back only where a family needs it (a schema inference job; or the table)
            return counts if local else spark.read.parquet(hadoop_escape((stage / "counts").uri))

        manifest = manifest_of(stage, written)
        write_json(stage / "manifest.json", manifest)
    return manifest


def run_manifest(
    spark, cfg, family: Family, counted: Counted, inputs, stage, written, old, started, extra=None
):
    """The manifest of a run that counted ``inputs`` into ``stage`` (added to the model of ``old``,
    if any): the header, the family's fields, the count schema and rows, the inputs and their
    signatures, the statistics; ``extra`` fields last."""
    manifest = {
        **manifest_header(family.kind, _settled(cfg, counted.settled)),
        "engine": counted.engine,
        **family.fields(spark, cfg, counted, written, old is not None),
        "count_schema": family.ddl(cfg.to_dict()),
        "count_rows": parquet_rows(stage / "counts"),
        "inputs": {
            "format": inputs.spec.format,
            "root": str(inputs.root),
            "files": [str(f) for f in inputs.files],
            "signatures": input_signatures(inputs),
        },
        "stats": counted.stats,
        "malformed_examples": counted.bad,
        "seconds": round(time.time() - started, 2),
    }
    return {**merged_manifest(old, manifest), **(extra or {})}


def _settled(cfg, settled: dict):
    """``cfg`` with the settings a count settled (``Counted.settled``: dotted key -> value)."""
    import dataclasses

    for key, value in settled.items():
        section, name = key.split(".")
        cfg = dataclasses.replace(
            cfg, **{section: dataclasses.replace(getattr(cfg, section), **{name: value})}
        )
    return cfg


def nothing_counted(cfg, counted: Counted) -> str:
    """Why a training run (a batch train, a stream's first batch) counted nothing: ``why_empty``'s
    rule, then what its input held (``report.format.nothing_found``)."""
    return why_empty(cfg.task, cfg.centres) + nothing_found(counted.stats, counted.bad, cfg.train.format)


def why_empty(task: str, centres=()) -> str:
    """Why an input may give a task nothing to count or score (training and classify say it alike)."""
    if task == "backoff":
        return f"no window centred on {', '.join(centres)}"
    return "no valid document or row"
