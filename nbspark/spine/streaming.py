"""Cohen's streaming classifier on Spark Structured Streaming: a model that grows by versions.

``plan_stream(...) -> StreamPlan`` decides before Spark starts (the family, engine, model, watched
directory, checkpoint, trigger), with the refusals of ``--update``: a model counted with other
settings, a density model. ``run_stream(spark, plan)`` then lets Spark's file source find new files
and its checkpoint remember which ones each micro-batch held (``binaryFile``, paths only: no
content is read there); each micro-batch's files are counted by the family's own batch counting
(``Family.count``, every input format) and committed by ``commit_batch`` as the model's next
version (``storage.versions``): a delta of what the batch counted, the base itself for a new model.

Exactly once: Spark replays a micro-batch that did not finish with the same batch id and files;
each version records ``streams`` (checkpoint -> last batch committed), and a replayed batch the
model holds already commits nothing, and neither does a batch whose files hold nothing a version
records (empty or blank files: ``_anything_read``; a new model waits for a batch that does). Past
``compact_every`` deltas, ``spine.committing.compact`` sums the parts into a new base of the same
version. One writer at a time: ``MODEL.stream/lock.json`` names the stream's checkpoint
(``storage.versions.take_writer_lock``).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import logging
import signal
import statistics
import threading
import time
from dataclasses import dataclass
from functools import partial

from nbspark.errors import ConfigError, EmptyTable, InputError, NbsparkError, OutputError
from nbspark.inputs.files import SGML_NAMES, bytes_to_read, damaged_files_named, in_nbspark_output
from nbspark.inputs.resolve import Inputs
from nbspark.report.format import nothing_found, undecodable
from nbspark.settings.capabilities import IN_PROCESS_BELOW_MB, in_process_below_mb, resolve_engine
from nbspark.settings.config import check_number
from nbspark.spark.faults import maybe_kill_driver
from nbspark.spark.session import quiet_while, settings_while
from nbspark.spine.committing import COMPACT_EVERY, compact, compaction_due
from nbspark.spine.counting import Counted
from nbspark.spine.training import (
    Family,
    check_recount,
    nothing_counted,
    run_manifest,
    write_counts,
)
from nbspark.storage.locations import Location, location
from nbspark.storage.manifests import (
    check_update,
    load_manifest,
    model_version,
)
from nbspark.storage.tables import check_output, overlapping, write_json
from nbspark.storage.uris import decoded_uri, hadoop_escape
from nbspark.storage.versions import DELTA, delta_location, take_writer_lock

__all__ = [
    "SESSION_DEFAULTS",
    "STOP_QUIET",
    "TRIGGER_SECONDS",
    "StreamPlan",
    "check_stream_options",
    "commit_batch",
    "plan_stream",
    "run_stream",
]

log = logging.getLogger("nbspark")

#: The file source's schema (Spark's binaryFile); only path, modification time and length are selected.
BINARY_DDL = "path STRING, modificationTime TIMESTAMP, length BIGINT, content BINARY"
#: The stream's own defaults of Spark's checkpoint settings (a session's, spark-submit's or --conf's
#: win): the offsets and commits of 10 batches (Spark keeps 100; a restart needs the last), and the
#: file source's logs of seen files deleted as soon as a newer compacted log holds them (Spark waits
#: 10 minutes, for other readers; this stream's query is the log's only reader, and each compacted
#: log holds every file seen, so a fast stream kept a copy of that list per 10 batches).
CHECKPOINT_DEFAULTS = {
    "spark.sql.streaming.minBatchesToRetain": "10",
    "spark.sql.streaming.fileSource.log.cleanupDelay": "0s",
}
#: Hadoop's local file system without checksum files for the checkpoint (Spark reaches it through
#: ``FileContext``): each offsets and commits entry is one file written and renamed, not two
#: (docs/streaming.md). Only where Hadoop's own ``LocalFs`` is set.
RAW_LOCAL_CHECKPOINT = (
    "fs.AbstractFileSystem.file.impl",
    "org.apache.hadoop.fs.local.LocalFs",
    "org.apache.hadoop.fs.local.RawLocalFs",
)
#: A stream's own session, where nothing else set them: Spark's status store keeps this many jobs,
#: stages and SQL runs (1,000 each by default, with or without the UI; a stream runs 3 to 5 jobs a
#: batch), so the JVM's heap stays flat over a long stream; and no console progress bar, whose
#: stages of a second or two ran into the line each committed batch logs.
SESSION_DEFAULTS = {
    "spark.ui.retainedJobs": "100",
    "spark.ui.retainedStages": "100",
    "spark.sql.ui.retainedExecutions": "100",
    "spark.ui.showConsoleProgress": "false",
}
#: Spark's loggers quieted while a stream stops: the query's end cancels its job group twice (the
#: stop, then the query's own thread), and the scheduler warns that no job was running to cancel.
STOP_QUIET = {"org.apache.spark.scheduler.DAGScheduler": "ERROR"}
#: How often a running stream looks for new files (``--trigger-seconds``).
TRIGGER_SECONDS = 5.0


def _scheduled(spark) -> None:
    """Return once Spark's scheduler has handled what was asked of it before: it takes requests (a
    job group's cancel) in order on a thread of its own, and logs there, so a job run now ends
    after them. A stop's cancels were logged after ``quiet_while`` had handed the logger back, now
    and then (one warning in a CI run). Best effort: a context stopping under SIGTERM skips it."""
    try:
        spark.sparkContext.parallelize([0], 1).count()
    except Exception as exc:
        log.debug("the scheduler was not waited for: %s", exc)


@dataclass(frozen=True)
class StreamPlan:
    """What a stream will do, decided before Spark starts (``plan_stream``)."""

    cfg: object
    family: Family
    engine: str
    model: Location
    watch: Location
    checkpoint: Location
    trigger_seconds: float = TRIGGER_SECONDS
    available_now: bool = False
    max_files: int | None = None
    compact_every: int = COMPACT_EVERY
    progress: Location | None = None
    force: bool = False
    in_process_below_mb: float = IN_PROCESS_BELOW_MB
    local: bool = False  # the family counts in this process (``resolve_engine(cfg, in_process=True)``)

    @property
    def state(self) -> Location:
        """``MODEL.stream/``: the stream's lock (and its checkpoint unless one is given)."""
        return self.model.parent / f"{self.model.name}.stream"


def check_stream_options(options: dict) -> None:
    """Refuse the numbers of ``StreamPlan`` that cannot be (``ConfigError``, one line): a trigger
    that is not a finite number of seconds above 0, fewer than 1 file a batch or delta before a
    compaction, a negative in-process bound. Pure: the command asks before Spark starts."""
    check_number(
        "--trigger-seconds", options.get("trigger_seconds", StreamPlan.trigger_seconds), 0, low_open=True
    )
    check_number("--compact-every", options.get("compact_every", COMPACT_EVERY), 1)
    check_number("--in-process-below", options.get("in_process_below_mb", IN_PROCESS_BELOW_MB), 0)
    if options.get("max_files") is not None:
        check_number("--max-files-per-batch", options["max_files"], 1)


def plan_stream(cfg, family: Family, model, watch, checkpoint=None, **options) -> StreamPlan:
    """Decide a stream (any family): refuse an engine or input format that
    cannot count, a watched directory that does not exist or overlaps the model, and an existing
    model counted with other settings (``--update``'s refusals). ``checkpoint`` defaults to
    ``MODEL.stream/checkpoint``; ``options`` are ``StreamPlan``'s fields."""
    check_stream_options(options)
    options = {"in_process_below_mb": in_process_below_mb(cfg), **options}  # the family's bound by default
    engine = resolve_engine(cfg)
    try:
        local = resolve_engine(cfg, in_process=True) == "local"
    except ConfigError:  # an engine that must be Spark's
        local = False
    model, watch = location(model), location(watch)
    if not watch.is_dir():
        if watch.exists():  # a file: the files to count are moved into a directory, not appended to one
            raise InputError(f"{watch}: a file, not a directory; watch the directory files are moved into")
        raise InputError(f"{watch}: the watched directory does not exist (create it, then move files in)")
    if (model / "manifest.json").is_file():
        old = load_manifest(model, family.kind)
        check_update(old, cfg, family.update_keys)
        if family.check_old is not None:
            family.check_old(old, cfg)
        check_output(model, True, [watch])
    else:
        check_output(model, False, [watch])
    plan = StreamPlan(
        cfg, family, engine, model, watch, location(checkpoint or model), **{"local": local, **options}
    )
    if checkpoint is None:
        plan = StreamPlan(**{**plan.__dict__, "checkpoint": plan.state / "checkpoint"})
    for option, where in (("--checkpoint", plan.checkpoint), ("--progress", plan.progress)):
        if where is not None and overlapping(where.real(), watch.real()):
            raise OutputError(
                f"{where}: {option} would lie in the watched directory {watch}, whose files the stream "
                "counts; put it elsewhere"
            )
    return plan


def commit_batch(spark, plan: StreamPlan, files: list[tuple[str, float, int]], batch_id: int) -> dict | None:
    """Count one micro-batch's ``files`` (``(path, modification time in s, bytes)``) and commit them
    as the model's next version; the batch's summary, or None for a replayed batch the model holds.
    A batch of at most ``plan.in_process_below_mb`` MB is counted in this process (the ``local``
    engine, where the family has it: the same table, without a Spark job's fixed cost)."""
    started = time.time()
    cfg, family, model = plan.cfg, plan.family, plan.model
    old = load_manifest(model, family.kind) if (model / "manifest.json").is_file() else None
    checkpoint = plan.checkpoint.uri
    if old is not None and old.get("streams", {}).get(checkpoint, -1) >= batch_id:
        log.info(
            "batch %d: committed before (version %d); replayed, nothing added", batch_id, model_version(old)
        )
        return None
    looked: dict = {}  # an nbspark output under the watched directory is left out, as a batch train leaves it
    files = [f for f in sorted(files) if not in_nbspark_output(plan.watch, location(f[0]), looked)]
    if not files:
        log.info("batch %d: only files of nbspark outputs; nothing to count", batch_id)
        return None
    # each file with its size and time as the batch's listing saw them: no second lookup of each
    listed = (dataclasses.replace(location(p), known=(size, round(t * 1000))) for p, t, size in files)
    inputs = Inputs(cfg.train, plan.watch, tuple(listed))
    if old is not None:
        check_recount(old, inputs, plan.force)
    counting = family.update_settings(old, cfg) if old is not None and family.update_settings else cfg
    small = (
        plan.local
        and plan.in_process_below_mb > 0
        and sum(bytes_to_read(f[0], f[2]) for f in files) <= plan.in_process_below_mb * 1e6
    )
    session, engine = (None, "local") if small else (spark, plan.engine)
    with damaged_files_named(inputs.files):  # a .gz cut short: Hadoop's error names no file
        counted, empty = _batch_count(family, session, counting, inputs, engine)
        if counted is None:  # no version: one would record nothing but the files' names
            log.info(
                "batch %d: %d file(s) with nothing to count%s; %s",
                batch_id,
                len(files),
                empty,
                "no new version" if old is not None else "no model yet",
            )
            return None
        try:
            version = model_version(old) + 1 if old is not None else 1
            extra = {"version": version, "streams": {checkpoint: batch_id}}
            if old is None:
                if not counted.stats.get(family.unit):
                    raise InputError(
                        f"{plan.watch}: no training {family.unit} in the first files "
                        f"({nothing_counted(cfg, counted)}); "
                        "nothing written"
                    )
                out, kind = model, "model"
            else:
                out, kind = delta_location(model, version), DELTA

            def manifest_of(stage, written):
                maybe_kill_driver("staged")
                manifest = run_manifest(
                    session, cfg, family, counted, inputs, stage, written, None, started, extra
                )
                manifest["updates"][-1]["stream"] = checkpoint  # a compaction folds a stream's batches
                return manifest

            rows = counted.known.get("rows")
            collect = partial(counted.arrow, family.ddl(cfg.to_dict()))
            manifest = write_counts(
                session, counted.counts, out, kind, cfg.rows_per_file, rows, manifest_of, collect
            )
        finally:
            counted.release()
    maybe_kill_driver("committed")
    committed = time.time()
    lags = [committed - f[1] for f in files]
    stats = manifest["stats"]
    summary = {
        "version": version,
        "batch": batch_id,
        "files": len(files),
        "engine": counted.engine,
        "lines": stats.get("lines_read", stats.get("rows_read", 0)),  # a table's: its rows read
        "malformed": stats.get("malformed", 0),
        "held_out": stats.get("held_out", 0),
        "decode_replacements": stats.get("decode_replacements", 0),  # bytes that were not UTF-8
        family.unit: stats.get(family.unit, 0),
        "count_rows": manifest["count_rows"],
        "seconds": round(committed - started, 2),
        "lag_seconds": round(statistics.median(lags), 2),
        "max_lag_seconds": round(max(lags), 2),
        "committed": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    if old is not None and compaction_due(old, plan.compact_every):
        compact(spark, model, family, cfg)
        summary["compacted"] = True
    return summary


def run_stream(spark, plan: StreamPlan, on_batch=None) -> int:
    """Run the stream until it ends (``available_now``), fails, or is stopped (SIGINT, SIGTERM); the batches
    committed. Each committed batch is logged in one line, written to ``plan.progress`` as JSON,
    and passed to ``on_batch(summary)``. A batch's failure (failfast input, a vanished file) stops
    the stream and is raised as itself: the model keeps its last whole version."""
    release = take_writer_lock(plan.model, plan.checkpoint.uri)  # one writer: this checkpoint's stream
    failure: list[BaseException] = []
    committed = [0]
    stopping = _stop_on_signals()
    busy = threading.Lock()  # held through a batch: a stop waits for the batch in flight

    def each(frame, batch_id):
        with busy:
            if stopping.is_set():  # fail it: Spark keeps it for the next run, not as done
                raise RuntimeError("the stream is stopping")
            _each(frame, batch_id)

    def _each(frame, batch_id):
        try:
            files = _batch_files(plan.checkpoint, frame, batch_id)
            if not files:
                return
            summary = commit_batch(spark, plan, files, batch_id)
            if summary is None:
                return
            committed[0] += 1
            log.info(_batch_line(summary, plan.family.unit))
            if plan.progress is not None:
                _write_progress(plan, summary, committed[0])
            if on_batch is not None:
                on_batch(summary)
        except BaseException as exc:
            failure.append(exc)
            raise

    # the watched directory's subdirectories too, as a batch train reads them (``inputs.files.list_files``)
    reader = spark.readStream.format("binaryFile").schema(BINARY_DDL).option("recursiveFileLookup", "true")
    if plan.max_files is not None:
        reader = reader.option("maxFilesPerTrigger", plan.max_files)
    if plan.cfg.train.format in ("reuters", "reuters_topics"):
        reader = reader.option("pathGlobFilter", "*{" + ",".join(SGML_NAMES) + "}")  # as reuters_files
    frame = reader.load(hadoop_escape(plan.watch.uri)).select("path", "modificationTime", "length")
    writer = frame.writeStream.foreachBatch(each).option("checkpointLocation", plan.checkpoint.uri)
    if plan.available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{plan.trigger_seconds} seconds")
    log.info("streaming %s into %s (checkpoint %s)", plan.watch, plan.model, plan.checkpoint)
    settings = dict(CHECKPOINT_DEFAULTS)
    key, hadoops, raw = RAW_LOCAL_CHECKPOINT
    if spark._jsc.hadoopConfiguration().get(key) == hadoops:
        settings[key] = raw  # Spark copies its SQL settings over its Hadoop ones for the query
    # held while the query runs: the query copies them when it starts, but its file source (and its
    # log of the files seen) is made with the session's settings when its first batch is planned
    with settings_while(spark, settings):
        query = writer.start()
        try:
            gone = False
            while query.isActive and not stopping.is_set():
                query.awaitTermination(1)
                gone = _watch_gone(plan.watch, gone)
            if stopping.is_set():
                log.info("stopping the stream; the model keeps its last whole version")
                with busy, quiet_while(spark, STOP_QUIET):
                    query.stop()
                    query.awaitTermination()
                    _scheduled(spark)
            query.awaitTermination()
        except Exception:
            if failure:
                raise failure[0] from None
            if not stopping.is_set():
                raise
        finally:
            stopping.restore()
            release()
    if failure:
        raise failure[0]
    return committed[0]


def _watch_gone(watch: Location, was_gone: bool) -> bool:
    """Whether the watched directory is gone now, said once when it goes and once when it is back:
    Spark's file source lists a missing directory as empty, so a stream whose directory was
    removed (or unmounted) counted nothing, and said nothing, until it was stopped."""
    try:
        gone = not watch.is_dir()
    except (OSError, NbsparkError):  # the storage did not answer this time: as it was
        return was_gone
    if gone and not was_gone:
        log.warning("%s: the watched directory is gone; no file is counted until it is back", watch)
    elif was_gone and not gone:
        log.info("%s: the watched directory is back", watch)
    return gone


def _batch_files(checkpoint: Location, frame, batch_id: int) -> list[tuple[str, float, int]]:
    """The files of micro-batch ``batch_id``, ``(path, modification time in s, bytes)``: as Spark's
    file source logged them before the batch ran (``_logged_files``), else from the batch's frame,
    one Spark job (about 45 ms a batch in local mode, a fifth of a one-file batch's commit)."""
    logged = _logged_files(checkpoint, batch_id)
    if logged is not None:
        return logged
    log.debug("batch %d: no file-source log entry of Spark's form; its files are collected", batch_id)
    return [(r.path, r.modificationTime.timestamp(), r.length) for r in frame.collect()]


def _logged_files(checkpoint: Location, batch_id: int) -> list[tuple[str, float, int]] | None:
    """The files of micro-batch ``batch_id`` as Spark's checkpoint logged them before the batch ran:
    the query's offsets of this batch and the one before (``offsets/ID``: the file source's
    ``logOffset``) bound the source's own batches, whose files its log lists (``sources/0/N``, or
    ``N.compact``: a JSON entry a file, with its path, modification time in ms and batch ``N``).
    Each file's size is looked up (a file gone since fails the batch, as reading it would). None
    where an entry is not there in that form (``v1``), and the frame is asked instead."""
    try:
        start = _source_offset(checkpoint, batch_id - 1) if batch_id > 0 else -1
        end = _source_offset(checkpoint, batch_id)
        if start is None or end is None or end <= start:
            return None
        found = []
        for source_batch in range(start + 1, end + 1):
            lines = _log_lines(checkpoint / "sources" / "0", source_batch)
            entries = [json.loads(line) for line in lines or ()]
            mine = [(e["path"], e["timestamp"]) for e in entries if e["batchId"] == source_batch]
            if not mine:
                return None
            found += mine
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    files = []
    for path, millis in found:
        where = location(decoded_uri(path))
        files.append((where.uri, millis / 1000, where.stat()[0]))
    return files


def _source_offset(checkpoint: Location, batch_id: int) -> int | None:
    """The file source's offset (its log's batch) at the end of the query's batch ``batch_id``."""
    lines = _log_lines(checkpoint / "offsets", batch_id)
    return int(json.loads(lines[1])["logOffset"]) if lines is not None and len(lines) == 2 else None


def _log_lines(folder: Location, batch_id: int) -> list[str] | None:
    """The lines after the version line ``v1`` of a Spark metadata log's entry ``batch_id``
    (``ID``, or ``ID.compact`` where the log compacted it); None where there is none of that form."""
    for name in (str(batch_id), f"{batch_id}.compact"):
        try:
            lines = (folder / name).read_text().splitlines()
        except FileNotFoundError:
            continue
        return lines[1:] if lines and lines[0] == "v1" else None
    return None


class _Stopping(threading.Event):
    def restore(self) -> None:
        for signum, handler in getattr(self, "previous", {}).items():
            signal.signal(signum, handler)


def _stop_on_signals() -> _Stopping:
    """An event set by SIGINT or SIGTERM (in the main thread; elsewhere never): the stream stops
    between two polls, its batch in flight finished or not started, and gives its lock back."""
    stopping = _Stopping()
    if threading.current_thread() is threading.main_thread():
        stopping.previous = {
            signum: signal.signal(signum, lambda *_: stopping.set())
            for signum in (signal.SIGINT, signal.SIGTERM)
        }
    return stopping


def _batch_count(family, session, cfg, inputs: Inputs, engine: str) -> tuple[Counted | None, str]:
    """A batch's counts, or None and what its files held (``; …`` clauses) where they hold nothing
    a version records (``_anything_read``): empty or blank files, a table's empty files among them,
    which have no header to read a column by (``EmptyTable``)."""
    try:
        counted = family.count(session, cfg, inputs, engine)
    except EmptyTable:
        return None, "; its files are empty"
    if _anything_read(counted.stats, family.unit):
        return counted, ""
    counted.release()
    return None, nothing_found(counted.stats, counted.bad, cfg.train.format)


def _anything_read(stats: dict, unit: str) -> bool:
    """Whether a batch's files held anything a version records: a counted unit, a malformed or
    held-out record, or a line (a table's row) that was not blank. Empty and blank files hold none."""
    read = stats.get("lines_read", stats.get("rows_read", 0)) - stats.get("blank_lines", 0)
    return bool(stats.get(unit) or stats.get("malformed") or stats.get("held_out") or read > 0)


def _batch_line(summary: dict, unit: str) -> str:
    return (
        f"version {summary['version']} (batch {summary['batch']}): {summary['files']:,} file(s), "
        f"{summary['lines']:,} lines, {summary['malformed']:,} malformed, "
        + (f"{summary['held_out']:,} held out, " if summary.get("held_out") else "")
        + f"{summary[unit]:,} {unit}, "
        f"{summary['seconds']} s, lag {summary['lag_seconds']} s"
        + ("; compacted" if summary.get("compacted") else "")
        + "".join(f"; {line}" for line in undecodable(summary))
    )


def _write_progress(plan: StreamPlan, summary: dict, committed: int) -> None:
    """``--progress FILE``: the last batch's summary, rewritten whole (a temporary file renamed)."""
    tmp = plan.progress.parent / f".{plan.progress.name}.tmp"
    write_json(tmp, {"model": str(plan.model), "batches_committed": committed, **summary})
    if plan.progress.exists():
        plan.progress.rmtree()
    tmp.rename(plan.progress)
