"""Outputs that are whole or absent, and reads that check what they get, on any storage.

Spark's ``mode("overwrite")`` deletes the target before the job runs, so a failed run would
lose yesterday's model (../shared/SPARK_NOTES.md §1). nbspark instead writes every output
directory in a staging directory beside it (``.NAME.staging-<id>``) and moves it into place
when everything in it is written, with a marker file ``_nbspark.json`` naming what it holds.
A failed run removes its staging directory and leaves the old output as it was.

Every path is a ``storage.locations.Location`` (Hadoop's FileSystem in the jobs). The commit rule depends on
whether a directory rename is atomic there (``Location.atomic_rename``):

* ``file:`` and HDFS (also through ViewFS): the old output is renamed aside, the staging
  directory (marker included) renamed into place, the old one deleted. Readers see the old
  output or the new one, whole: one that finds neither, between the two renames, waits for the
  commit, or puts back the old output of a run that died there (``await_commit``).
* Object stores (S3, GCS, Azure blob) and unknown schemes, where a rename is a copy: the staging
  directory carries a marker that says ``"state": "committing"``; the old output's marker is
  overwritten with that one first, the old output deleted, the staging directory moved into
  place, and the marker overwritten last with the complete one (one object write, atomic on
  those stores). Readers trust only a complete marker (``check_marker``), so nothing half-written
  is ever read: until the commit starts the old output is whole; a run killed during the commit
  leaves an output that every reader refuses, which ``--overwrite`` replaces.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import socket
import time
import uuid
from collections.abc import Iterable
from contextlib import contextmanager

from nbspark.errors import OutputError, StorageError
from nbspark.spark.faults import maybe_kill_driver
from nbspark.storage.locations import Location, location
from nbspark.storage.uris import hadoop_escape

__all__ = [
    "MARKER",
    "arrow_input",
    "arrow_schema",
    "await_commit",
    "check_marker",
    "check_output",
    "check_table",
    "ddl_columns",
    "ddl_fields",
    "json_text",
    "overlapping",
    "parquet_rows",
    "process_alive",
    "read_arrow",
    "read_json",
    "read_parquet_checked",
    "staged_output",
    "write_arrow_table",
    "write_json",
]

MARKER = "_nbspark.json"
COMMITTING = "committing"  # the marker's state while an object store commits
log = logging.getLogger("nbspark")


def overlapping(a: str, b: str) -> bool:
    """Whether two paths (URIs, resolved) are one, or one lies inside the other."""
    a, b = a.rstrip("/"), b.rstrip("/")
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def check_output(path, overwrite: bool, inputs: Iterable = ()) -> Location:
    """Refuse an output path before any work is done; return its ``Location``.

    Refused: ``/`` and the home directory; a path that equals, contains or lies inside an
    input (compared after ViewFS mounts and symbolic links are resolved); an existing non-empty
    directory unless ``overwrite``; and, even with ``overwrite``, a non-empty directory that
    nbspark did not write (no ``_nbspark.json``).
    """
    out = location(path)
    real = out.real()
    if out.is_root() or Location(real, out.fs).is_root() or real == out.home():
        raise OutputError(f"{out}: refusing to write an output to / or the home directory")
    for item in inputs:
        try:
            src = location(item).real()
        except (StorageError, FileNotFoundError):  # not a file system path (sklearn:iris)
            continue
        if overlapping(real, src):
            raise OutputError(
                f"{out}: output overlaps the input {location(item)}; choose another output directory"
            )
    if out.exists():
        if not out.is_dir():
            raise OutputError(f"{out}: exists and is not a directory")
        if out.iterdir():
            if not overwrite:
                raise OutputError(f"{out}: already holds something; pass --overwrite to replace it")
            if not (out / MARKER).is_file():
                raise OutputError(f"{out}: not an nbspark output (no {MARKER}); refusing to overwrite it")
    _check_creatable(out)
    return out


def _check_creatable(out: Location) -> None:
    """Refuse, before any work, an output whose directory cannot be made: a parent that is a file,
    or a nearest existing ancestor that cannot be written (the staging directory is made there)."""
    parent = out.parent
    while parent is not None and not parent.exists():
        parent = parent.parent
    if parent is None:
        return
    if not parent.is_dir():
        raise OutputError(f"{out}: cannot be created, {parent} is a file")
    if not parent.writable():
        raise OutputError(f"{out}: cannot be created, {parent} is not writable")


def check_marker(path: Location) -> None:
    """Refuse an output whose commit did not finish (its marker says ``committing``)."""
    marker = path / MARKER
    if marker.is_file():
        try:
            state = read_json(marker).get("state")
        except ValueError:
            raise OutputError(f"{marker}: not valid JSON") from None
        if state == COMMITTING:
            raise OutputError(f"{path}: a run died while moving it into place; write it again (--overwrite)")


def process_alive(pid) -> bool:
    """Whether process ``pid`` of this host lives (not an int: no)."""
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _runs(path: Location):
    """``(what, item, dead)`` for each directory a run left beside ``path``: its ``staging``
    directory, or its ``old`` copy of ``path`` (renamed aside, not yet deleted); ``dead`` when the
    run was on this host and its process is gone (another host's runs are never called dead)."""
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(staging|old)-(\d+)@(.+)-[0-9a-f]{{12}}$")
    host = socket.gethostname()
    for item in path.parent.iterdir() if path.parent.is_dir() else []:
        if found := pattern.match(item.name):
            yield found.group(1), item, found.group(3) == host and not process_alive(int(found.group(2)))


def _restore_dead_commit(path) -> bool:
    """Put back the old output that a run killed between its commit's two renames left aside, when
    ``path`` is missing; True when it did. Readers call it too (``await_commit``): the old output is
    the whole one."""
    path = location(path)
    if path.exists():
        return False
    for what, item, dead in _runs(path):
        if what == "old" and dead:
            try:
                item.rename(path)
            except (OSError, StorageError):  # another reader or writer put it back first
                return path.exists()
            log.warning("%s: restored from %s, left by a run that died", path, item.name)
            return True
    return False


def await_commit(path, wait: float = 5.0) -> bool:
    """For a reader that finds ``path`` missing: True once it is there again. A run killed between
    its commit's two renames left the old output aside (put back: ``_restore_dead_commit``); a live
    run between them is waited for (two renames take milliseconds; ``wait`` seconds at most). False
    when no run is committing it."""
    path = location(path)
    deadline = time.monotonic() + wait
    while not (_restore_dead_commit(path) or path.exists()):
        committing = any(what == "old" and not dead for what, _, dead in _runs(path))
        if not committing or time.monotonic() > deadline:
            return path.exists()
        time.sleep(0.002)
    return True


def _clean_dead_runs(path: Location) -> None:
    """Remove what runs killed on this host (SIGKILL, a lost machine) left beside ``path``: their
    staging directories, and their ``.old-`` copies, once ``path`` is back in place
    (``_restore_dead_commit``). Directories of live runs or other hosts stay."""
    _restore_dead_commit(path)
    for _, item, dead in _runs(path):
        if dead:
            item.rmtree()
            log.info("%s: removed %s, left by a run that died", path.parent, item.name)


@contextmanager
def staged_output(path, kind: str, atomic: bool | None = None):
    """Yield a fresh staging directory (a ``Location``); on success move it to ``path`` (replacing it).

    On any exception the staging directory is removed and ``path`` is left as it was. Staging
    directories are named ``.NAME.staging-PID@HOST-TOKEN``; those of runs that died on this host
    are cleaned up by the next run (``_clean_dead_runs``). ``atomic`` picks the commit rule (see
    the module docstring); left out, the storage decides.
    """
    path = location(path)
    path.parent.mkdir()
    _clean_dead_runs(path)
    token = f"{os.getpid()}@{socket.gethostname()}-{uuid.uuid4().hex[:12]}"
    staging = path.parent / f".{path.name}.staging-{token}"
    staging.mkdir()
    atomic = path.atomic_rename() if atomic is None else atomic
    try:
        yield staging
        maybe_kill_driver("commit-staged")
        if atomic:
            write_json(staging / MARKER, {"kind": kind})
            old = None
            if path.exists():
                old = path.parent / f".{path.name}.old-{token}"
                path.rename(old)
                maybe_kill_driver("commit-aside")
            replaced = False
            try:
                staging.rename(path)
            except (OSError, StorageError):
                if not path.exists():
                    raise
                replaced = True  # another run committed between our two renames: its output stands
            if old is not None:
                old.rmtree()
            if replaced:
                raise OutputError(
                    f"{path}: another run wrote it meanwhile; that output stands and this run's is "
                    "discarded (run again to replace it)"
                )
        else:
            write_json(staging / MARKER, {"kind": kind, "state": COMMITTING})
            if path.exists():
                write_json(path / MARKER, {"kind": kind, "state": COMMITTING})
                path.rmtree()
            staging.rename(path)
            write_json(path / MARKER, {"kind": kind})
    except BaseException as exc:
        staging.rmtree()
        if _no_space(exc):
            raise OutputError(
                f"{path}: no space left on its device while writing it; the old output, if any, is as it was"
            ) from None
        raise


def _no_space(exc: BaseException) -> bool:
    """Whether a write failed for a full disk or quota: Python's ``OSError``, or Hadoop's error
    through the JVM (``storage.hadoop``), which says so in its message."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(exc, StorageError) and "No space left on device" in str(exc)


def json_text(obj) -> str:
    """How nbspark writes a JSON file (manifests, markers, metrics, locks): indented by two spaces,
    UTF-8 as is, and a list that holds no list or object on one line (a file's signature, a count
    table's part): a model's manifest grows by one line per file it counted, not five."""
    return _json_lines(obj, 0) + "\n"


def _json_lines(obj, depth: int) -> str:
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(obj, dict) and obj:
        keys = (k if isinstance(k, str) else json.dumps(k) for k in obj)  # as json names a number key
        items = (
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {_json_lines(v, depth + 1)}"
            for k, v in zip(keys, obj.values())
        )
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(obj, list | tuple) and any(isinstance(v, dict | list | tuple) for v in obj):
        return "[\n" + ",\n".join(inner + _json_lines(v, depth + 1) for v in obj) + f"\n{pad}]"
    return json.dumps(obj, ensure_ascii=False)


def write_json(path: Location, obj) -> None:
    path.write_text(json_text(obj))


def read_json(path: Location) -> dict:
    return json.loads(path.read_text())


_PART = re.compile(r"part-[0-9]+.*\.parquet$")
_ARROW_TYPES = {
    "string": "string",
    "large_string": "string",
    "int64": "bigint",
    "double": "double",
    "int32": "int",
}


def ddl_fields(ddl: str) -> list[tuple[str, str, bool]]:
    """``(column, TYPE, nullable)`` of each column of a flat DDL string (``"n BIGINT NOT NULL, sum
    DOUBLE"``)."""
    fields = []
    for column in ddl.split(", "):
        name, kind, *rest = column.split(" ")
        if rest not in ([], ["NOT", "NULL"]):
            raise ValueError(f"cannot read the DDL column {column!r}")
        fields.append((name, kind, not rest))
    return fields


def arrow_schema(ddl: str):
    """The pyarrow schema of a flat DDL string (STRING, BIGINT, INT, DOUBLE columns, and ARRAY<…>
    of one of them)."""
    import pyarrow as pa

    kinds = {"STRING": pa.string(), "BIGINT": pa.int64(), "INT": pa.int32(), "DOUBLE": pa.float64()}
    kinds |= {f"ARRAY<{k}>": pa.list_(v) for k, v in kinds.items()}
    return pa.schema([pa.field(name, kinds[kind], nullable) for name, kind, nullable in ddl_fields(ddl)])


def write_arrow_table(table, path) -> None:
    """A table written in this process as Spark's writer leaves one: a directory with one part file
    (Parquet, snappy) and ``_SUCCESS``, so every reader (``check_table``, Spark) takes it alike."""
    import io

    import pyarrow.parquet as pq

    path = location(path)
    path.mkdir()
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="snappy")
    (path / f"part-00000-{uuid.uuid4()}-c000.snappy.parquet").write_bytes(buffer.getvalue())
    (path / "_SUCCESS").write_bytes(b"")


def ddl_columns(ddl: str) -> dict[str, str]:
    """``{column: type}`` of a flat DDL string (``"n BIGINT NOT NULL, sum DOUBLE"`` -> ``{"n": "bigint",
    …}``)."""
    return {name: kind.lower() for name, kind, _ in ddl_fields(ddl)}


@contextmanager
def arrow_input(part: Location):
    """What pyarrow reads ``part`` from: its local path (pyarrow opens it itself), or an Arrow file
    over the storage's stream, closed when the block ends (nothing pyarrow keeps may outlive it)."""
    from nbspark.storage.locations import LocalStorage

    if isinstance(part.fs, LocalStorage):
        yield str(part)
        return
    import pyarrow as pa

    with part.open() as raw, pa.PythonFile(raw, mode="r") as source:
        yield source


def read_arrow(parts: list[Location], columns: list[str]):
    """``columns`` of the Parquet files ``parts`` as one pyarrow Table, read in the driver (no
    Spark); a table of no rows when there are no parts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = []
    for part in parts:
        with arrow_input(part) as source:
            tables.append(pq.read_table(source, columns=columns))
    return pa.concat_tables(tables) if tables else pa.table({c: [] for c in columns})


def _footer(part: Location) -> tuple[int, object]:
    """``(rows, Arrow schema)`` of a Parquet file, from its footer."""
    import pyarrow.parquet as pq

    with arrow_input(part) as source:
        meta = pq.ParquetFile(source).metadata
        return meta.num_rows, meta.schema.to_arrow_schema()


def parquet_rows(path) -> int:
    """The rows of a Parquet table directory, from its part files' footers (no data read)."""
    return sum(_footer(f)[0] for f in location(path).iterdir() if _PART.match(f.name))


def check_table(path, ddl: str, rows: int | None = None) -> list[Location]:
    """Check a Parquet table nbspark wrote and return its part files (pyarrow only, no Spark).

    The table must be complete (``_SUCCESS`` present, no ``_temporary``). Every part file's footer
    must have every column of ``ddl`` with its type and no other (Spark infers a table's schema from
    one footer, so another file with a renamed or missing column would read as NULLs); no file that
    is not a part file may stand among them; and when ``rows`` (the manifest's count) is given, the
    footers' rows must add up to it. Anything else raises ``OutputError`` naming the file.
    """
    path = location(path)
    if not (path / "_SUCCESS").is_file() or (path / "_temporary").exists():
        raise OutputError(f"{path}: incomplete table (no _SUCCESS marker); retrain or rewrite it")
    want = ddl_columns(ddl)
    parts, total = [], 0
    for f in path.iterdir():
        if f.name.startswith(("_", ".")):
            continue
        if not _PART.match(f.name):
            raise OutputError(f"{f}: not a part file of this table; remove it or retrain")
        try:
            num_rows, schema = _footer(f)
        except Exception as exc:  # pyarrow raises ArrowInvalid or OSError for a damaged footer
            raise OutputError(
                f"{f}: not a readable Parquet file ({str(exc).splitlines()[0]}); retrain or rewrite it"
            ) from None
        have = {
            n: _ARROW_TYPES.get(str(schema.field(n).type), str(schema.field(n).type)) for n in schema.names
        }
        for name, kind in want.items():
            if name not in have:
                raise OutputError(f"{f}: column {name!r} is missing (has {', '.join(have)})")
            if have[name] != kind:
                raise OutputError(f"{f}: column {name!r} is {have[name]}, expected {kind}")
        extra = set(have) - set(want)
        if extra:
            raise OutputError(f"{f}: unexpected column(s) {', '.join(sorted(extra))}")
        parts.append(f)
        total += num_rows
    if rows is not None and total != rows:
        raise OutputError(
            f"{path}: holds {total:,} rows, its manifest recorded {rows:,}; a part file is missing, extra "
            "or damaged"
        )
    return parts


def read_parquet_checked(spark, path, ddl: str, rows: int | None = None, *more):
    """Read a Parquet table written by nbspark after ``check_table``, as exactly ``ddl``'s columns
    (given to Spark, whose own inference of a table's schema from a footer is a job: ``check_table``
    has read every footer already). ``more``: ``(path, rows)`` of further tables of the same
    schema, read with it in one scan (one plan, however many tables)."""
    paths = [(location(path), rows)] + [(location(p), r) for p, r in more]
    for where, count in paths:
        check_table(where, ddl, count)
    # its columns in ddl's order
    return spark.read.schema(ddl).parquet(*[hadoop_escape(where.uri) for where, _ in paths])
