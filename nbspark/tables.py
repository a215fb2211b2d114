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
import os
import shutil
import uuid
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

from .errors import OutputError

__all__ = [
    "MARKER",
    "check_output",
    "local_path",
    "read_json",
    "read_parquet_checked",
    "staged_output",
    "write_json",
]

MARKER = "_nbspark.json"


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
    return out


@contextmanager
def staged_output(path: Path, kind: str):
    """Yield a fresh staging directory; on success rename it to ``path`` (replacing it).

    On any exception the staging directory is removed and ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:12]
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


def read_parquet_checked(spark, path: Path, ddl: str):
    """Read a Parquet table written by nbspark and check its schema against ``ddl``.

    The table must be complete (``_SUCCESS`` present, no ``_temporary``), and every column of
    ``ddl`` must be there with its type; a missing, renamed or mistyped column raises
    ``OutputError`` naming it (reading with an explicit schema would give NULLs instead).
    """
    if not (path / "_SUCCESS").is_file() or (path / "_temporary").exists():
        raise OutputError(f"{path}: incomplete table (no _SUCCESS marker); retrain or rewrite it")
    from pyspark.sql.types import StructType

    expected = StructType.fromDDL(ddl)
    df = spark.read.parquet(str(path))
    actual = {f.name: f.dataType for f in df.schema.fields}
    for fld in expected.fields:
        if fld.name not in actual:
            raise OutputError(f"{path}: column {fld.name!r} is missing (has {', '.join(actual)})")
        if actual[fld.name] != fld.dataType:
            raise OutputError(
                f"{path}: column {fld.name!r} is {actual[fld.name].simpleString()}, "
                f"expected {fld.dataType.simpleString()}"
            )
    extra = set(actual) - {f.name for f in expected.fields}
    if extra:
        raise OutputError(f"{path}: unexpected column(s) {', '.join(sorted(extra))}")
    return df.select([f.name for f in expected.fields])
