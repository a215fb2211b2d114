"""Outputs that are whole or absent, and reads that check what they get.

Spark's ``mode("overwrite")`` deletes the target before the job runs, so a failed run would
lose yesterday's model (../shared/SPARK_NOTES.md §1). nbspark instead writes every output
directory in a staging directory beside it (``.NAME.staging-<id>``) and renames it into place
when everything in it is written, with a marker file ``_nbspark.json`` naming what it holds.
A failed run removes its staging directory and leaves the old output as it was.

Rename is atomic on a local POSIX file system; outputs are local paths (or ``file:`` URIs)
in this version, which on a multi-node cluster means a shared file system mounted at the
same path everywhere.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import socket
import uuid
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

from .errors import OutputError

__all__ = [
    "MARKER",
    "check_output",
    "check_table",
    "ddl_columns",
    "local_path",
    "parquet_rows",
    "read_json",
    "read_parquet_checked",
    "staged_output",
    "write_json",
]

MARKER = "_nbspark.json"
log = logging.getLogger("nbspark")


def local_path(path: str | os.PathLike) -> Path:
    """A local path from a plain path or a ``file:`` URI; other schemes are refused."""
    text = os.fspath(path)
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif text.startswith("file:"):
        text = text[len("file:") :]
    elif "://" in text:
        raise OutputError(f"{text}: only local paths (or file: URIs) are supported for outputs and models")
    return Path(text).expanduser().absolute()


def _related(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def check_output(path: str | os.PathLike, overwrite: bool, inputs: Iterable[str | os.PathLike] = ()) -> Path:
    """Refuse an output path before any work is done; return it resolved.

    Refused: ``/`` and the home directory; a path that equals, contains or lies inside an
    input; an existing non-empty directory unless ``overwrite``; and, even with
    ``overwrite``, a non-empty directory that nbspark did not write (no ``_nbspark.json``).
    """
    out = local_path(path)
    real = Path(os.path.realpath(out))
    if real == Path("/") or real == Path(os.path.realpath(Path.home())):
        raise OutputError(f"{out}: refusing to write an output to / or the home directory")
    for item in inputs:
        try:
            src = Path(os.path.realpath(local_path(item)))
        except OutputError:
            continue
        if _related(real, src):
            raise OutputError(f"{out}: output overlaps the input {src}; choose another output directory")
    if out.exists():
        if not out.is_dir():
            raise OutputError(f"{out}: exists and is not a directory")
        if any(out.iterdir()):
            if not overwrite:
                raise OutputError(f"{out}: already holds something; pass --overwrite to replace it")
            if not (out / MARKER).is_file():
                raise OutputError(f"{out}: not an nbspark output (no {MARKER}); refusing to overwrite it")
    _check_creatable(out)
    return out


def _check_creatable(out: Path) -> None:
    """Refuse, before any work, an output whose directory cannot be made: a parent that is a file,
    or a nearest existing ancestor that cannot be written (the staging directory is made there)."""
    parent = out.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{out}: cannot be created, {parent} is a file")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{out}: cannot be created, {parent} is not writable")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _clean_dead_runs(path: Path) -> None:
    """Remove what runs killed on this host (SIGKILL, a lost machine) left beside ``path``: their
    staging directories, and their ``.old-`` copies, which go back into place when a run died
    between its two renames and ``path`` is missing. Directories of live runs or other hosts stay."""
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(staging|old)-(\d+)@(.+)-[0-9a-f]{{12}}$")
    host = socket.gethostname()
    for item in sorted(path.parent.iterdir()) if path.parent.is_dir() else []:
        found = pattern.match(item.name)
        if not found or found.group(3) != host or _alive(int(found.group(2))):
            continue
        if found.group(1) == "old" and not path.exists():
            os.rename(item, path)
            log.warning("%s: restored from %s, left by a run that died", path, item.name)
        else:
            shutil.rmtree(item, ignore_errors=True)
            log.info("%s: removed %s, left by a run that died", path.parent, item.name)


@contextmanager
def staged_output(path: Path, kind: str):
    """Yield a fresh staging directory; on success rename it to ``path`` (replacing it).

    On any exception the staging directory is removed and ``path`` is left as it was. Staging
    directories are named ``.NAME.staging-PID@HOST-TOKEN``; those of runs that died on this host
    are cleaned up by the next run (``_clean_dead_runs``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _clean_dead_runs(path)
    token = f"{os.getpid()}@{socket.gethostname()}-{uuid.uuid4().hex[:12]}"
    staging = path.parent / f".{path.name}.staging-{token}"
    staging.mkdir()
    try:
        yield staging
        write_json(staging / MARKER, {"kind": kind})
        old = None
        if path.exists():
            old = path.parent / f".{path.name}.old-{token}"
            os.rename(path, old)
        os.rename(staging, path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False) + "\n", encoding="utf-8")


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


_PART = re.compile(r"part-[0-9]+.*\.parquet$")
_ARROW_TYPES = {"string": "string", "large_string": "string", "int64": "bigint", "double": "double", "int32": "int"}


def ddl_columns(ddl: str) -> dict[str, str]:
    """``{column: type}`` of a flat DDL string (``"n BIGINT NOT NULL, sum DOUBLE"`` -> ``{"n": "bigint", …}``)."""
    return {part.split()[0]: part.split()[1].lower() for part in ddl.split(", ")}


def parquet_rows(path: Path) -> int:
    """The rows of a Parquet table directory, from its part files' footers (no data read)."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(path.iterdir()) if _PART.match(f.name))


def check_table(path: Path, ddl: str, rows: int | None = None) -> list[Path]:
    """Check a Parquet table nbspark wrote and return its part files (pyarrow only, no Spark).

    The table must be complete (``_SUCCESS`` present, no ``_temporary``). Every part file's footer
    must have every column of ``ddl`` with its type and no other (Spark infers a table's schema from
    one footer, so another file with a renamed or missing column would read as NULLs); no file that
    is not a part file may stand among them; and when ``rows`` (the manifest's count) is given, the
    footers' rows must add up to it. Anything else raises ``OutputError`` naming the file.
    """
    import pyarrow.parquet as pq

    if not (path / "_SUCCESS").is_file() or (path / "_temporary").exists():
        raise OutputError(f"{path}: incomplete table (no _SUCCESS marker); retrain or rewrite it")
    want = ddl_columns(ddl)
    parts, total = [], 0
    for f in sorted(path.iterdir()):
        if f.name.startswith(("_", ".")):
            continue
        if not _PART.match(f.name):
            raise OutputError(f"{f}: not a part file of this table; remove it or retrain")
        try:
            meta = pq.ParquetFile(f).metadata
        except Exception as exc:  # pyarrow raises ArrowInvalid or OSError for a damaged footer
            raise OutputError(f"{f}: not a readable Parquet file ({str(exc).splitlines()[0]}); retrain or rewrite it") from None
        schema = meta.schema.to_arrow_schema()
        have = {n: _ARROW_TYPES.get(str(schema.field(n).type), str(schema.field(n).type)) for n in schema.names}
        for name, kind in want.items():
            if name not in have:
                raise OutputError(f"{f}: column {name!r} is missing (has {', '.join(have)})")
            if have[name] != kind:
                raise OutputError(f"{f}: column {name!r} is {have[name]}, expected {kind}")
        extra = set(have) - set(want)
        if extra:
            raise OutputError(f"{f}: unexpected column(s) {', '.join(sorted(extra))}")
        parts.append(f)
        total += meta.num_rows
    if rows is not None and total != rows:
        raise OutputError(f"{path}: holds {total:,} rows, its manifest recorded {rows:,}; a part file is missing, extra or damaged")
    return parts


def read_parquet_checked(spark, path: Path, ddl: str, rows: int | None = None):
    """Read a Parquet table written by nbspark after ``check_table``, as exactly ``ddl``'s columns."""
    check_table(path, ddl, rows)
    return spark.read.parquet(str(path)).select(list(ddl_columns(ddl)))
