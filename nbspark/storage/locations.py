"""Where nbspark reads and writes: ``location(text) -> Location``, one interface over two storages.

Every path a user gives (an input, the data dir, a model, an output, ``--json``) becomes a
``Location``: a qualified URI and the ``Storage`` that reaches it. Plain paths are local
(``out/model`` -> ``file:/abs/out/model``), whatever the cluster's default file system is;
anything with a scheme (``hdfs://``, ``s3a://``, ``gs://``, ``abfss://``, ``viewfs://``) is used
as given and never looked up under the data dir.

* ``HadoopStorage`` (``storage.hadoop``): Hadoop's ``FileSystem`` API through the JVM (py4j), for every
scheme the Spark
  installation has a connector for, with the session's Hadoop settings (``spark.hadoop.*``).
  The jobs use it for every path, local ones included (``use_hadoop``), and before the
  SparkSession starts it works from the JVM alone, with the settings spark-submit was given.
* ``LocalStorage`` (``storage.local``): Python's ``os`` for ``file:`` paths, for what runs without a
  JVM (``nbspark predict``/``check``, ``nbspark.load`` of a local model). Any other scheme there
  starts the JVM and goes through ``HadoopStorage``, which reads and writes the bytes of a path that
  resolves to ``file:`` through it too.

Staging, markers, manifests and refusals are written once, over ``Location`` (``tables``). A
scheme with no connector gets one line naming the scheme and what to add (``StorageError``).

Two calls keep their local meaning on the local file system, where Hadoop has none to give:
symbolic links are resolved (``real``) and write permission is asked of the OS (``writable``)
for paths that resolve to ``file:``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from nbspark.errors import StorageError
from nbspark.storage.local import LocalStorage
from nbspark.storage.uris import (
    _local_uri,
    _split,
    atomic_rename_schemes,
    join_uri,
    name_of,
    normal_uri,
    parent_uri,
    scheme_of,
    shown_uri,
)

__all__ = ["LocalStorage", "Location", "location", "resolved", "use_hadoop"]


@dataclass(frozen=True)
class Location:
    """A file or directory on some storage: ``uri`` (qualified) and ``fs`` (its ``Storage``).

    Path-like: ``loc / "counts"``, ``.name``, ``.parent``, ``exists()``, ``iterdir()``, ``files()``,
    ``read_text()``, ``write_text()``; ``uri`` is what Spark's readers and writers take;
    ``str(loc)`` is what the user sees (the local path for ``file:``, else the URI).
    """

    uri: str
    fs: object
    #: ``(size, modification time in ms)`` as the directory listing that found this file saw it
    #: (``files()``); ``stat()`` answers from it, so an input of N files costs one listing, not
    #: N lookups (on an object store each is a request). Not part of a location's identity.
    known: tuple[int, int] | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return shown_uri(self.uri)

    def __repr__(self) -> str:
        return f"Location({self.uri!r})"

    def __truediv__(self, name: str) -> Location:
        return Location(join_uri(self.uri, name), self.fs)

    @property
    def name(self) -> str:
        return name_of(self.uri)

    @property
    def path(self) -> str:
        """The path part of the URI (``/x/y`` of ``hdfs://nn/x/y``)."""
        return _split(self.uri)[1]

    @property
    def parent(self) -> Location | None:
        """The directory above, or None at the root of the file system."""
        up = parent_uri(self.uri)
        return None if up is None else Location(up, self.fs)

    def is_root(self) -> bool:
        return self.path == "/"

    # ---- what the storage does
    def exists(self) -> bool:
        return self.fs.exists(self.uri)

    def is_dir(self) -> bool:
        return self.fs.is_dir(self.uri)

    def is_file(self) -> bool:
        return self.fs.is_file(self.uri)

    def iterdir(self) -> list[Location]:
        """The entries of a directory, sorted by name."""
        return sorted(
            (Location(normal_uri(u), self.fs) for u in self.fs.list(self.uri)), key=lambda loc: loc.name
        )

    def files(self, skip=lambda name: False, prune=lambda uri, names: False) -> list[Location]:
        """The plain files of a directory and of its subdirectories, sorted by path, each with what
        the listing said of it (``known``): one listing per directory. A file or directory whose
        name ``skip`` accepts is left out, with everything under it, and so is a subdirectory
        whose URI and entries' names ``prune`` accepts."""
        found, todo = [], [self.uri]
        while todo:
            here = todo.pop()
            entries = [
                (normal_uri(u), size, mtime, is_dir) for u, size, mtime, is_dir in self.fs.entries(here)
            ]
            if here != self.uri and prune(here, [name_of(u) for u, *_ in entries]):
                continue
            for u, size, mtime, is_dir in entries:
                if skip(name_of(u)):
                    continue
                if is_dir:
                    todo.append(u)
                else:
                    found.append(Location(u, self.fs, (size, mtime)))
        return sorted(found, key=lambda loc: loc.uri)

    def stat(self) -> tuple[int, int]:
        """``(size in bytes, modification time in ms)``: the listing's when this location came
        from ``files()``, else looked up now."""
        return self.known if self.known is not None else self.fs.stat(self.uri)

    def mkdir(self) -> None:
        """Make the directory and its parents (no error if it exists)."""
        self.fs.mkdirs(self.uri)

    def rename(self, to: Location) -> None:
        self.fs.rename(self.uri, to.uri)

    def rmtree(self) -> None:
        """Delete it and everything under it; nothing when it does not exist."""
        self.fs.delete(self.uri)

    def read_bytes(self) -> bytes:
        return self.fs.read_bytes(self.uri)

    def write_bytes(self, data: bytes) -> None:
        """Write the whole file (replacing it)."""
        self.fs.write_bytes(self.uri, data)

    def create_new(self, data: bytes) -> bool:
        """Write the file only if nothing is there, in one step no other writer can split (an
        exclusive create); False when something is there already."""
        return self.fs.create_new(self.uri, data)

    def read_text(self) -> str:
        return self.read_bytes().decode("utf-8")

    def write_text(self, text: str) -> None:
        self.write_bytes(text.encode("utf-8"))

    def open(self):
        """A seekable binary reader (pyarrow reads Parquet footers through it)."""
        return self.fs.open(self.uri)

    def real(self) -> str:
        """The URI with ViewFS mounts and local symbolic links resolved (overlap checks compare these)."""
        if self.fs is None:
            raise StorageError(f"{self}: not a path on any file system")
        return self.fs.real(self.uri)

    def writable(self) -> bool:
        return self.fs.writable(self.uri)

    def home(self) -> str | None:
        """The real URI of the user's home directory on this storage."""
        return self.fs.home(self.uri)

    def atomic_rename(self) -> bool:
        """Whether renaming a directory here is atomic (``file:``, HDFS; not object stores)."""
        return scheme_of(self.real()) in atomic_rename_schemes


def resolved(path: str) -> str:
    """``path`` as ``Location.real`` resolves it (links, mounts, scheme): two names of one file give
    one string. As written where it cannot be resolved (a file since removed, storage out of reach)."""
    try:
        return location(path).real()
    except (StorageError, OSError, ValueError):
        return path


_local = LocalStorage()

_hadoop = None

_hadoop_sc = None


def use_hadoop():
    """From now on every path of this process goes through Hadoop's FileSystem (the jobs call it
    first); the JVM is started (with spark-submit's settings) if it is not running. Rebuilt when
    another SparkContext is active, so that its Hadoop settings apply."""
    global _hadoop, _hadoop_sc
    from pyspark import SparkContext

    from nbspark.storage.hadoop import HadoopStorage

    active = SparkContext._active_spark_context
    if _hadoop is None or (active is not None and active is not _hadoop_sc):
        _hadoop, _hadoop_sc = HadoopStorage(), active
    return _hadoop


def _storage_for(scheme: str):
    """Local ``os`` for ``file:`` in a process that never used Spark (pyspark not even imported),
    else Hadoop's FileSystem."""
    if scheme == "file" and _hadoop is None:
        pyspark = sys.modules.get("pyspark")
        if pyspark is None or pyspark.SparkContext._active_spark_context is None:
            return _local
    return use_hadoop()


def location(text) -> Location:
    """The ``Location`` of a path or URI (a ``Location`` is returned as it is).

    Plain paths are local (``~`` expanded, made absolute); a URI is used as given. Paths go through
    Hadoop's FileSystem once the process uses Spark (``use_hadoop``, or a running SparkContext),
    else local ``file:`` paths through ``os``.
    """
    if isinstance(text, Location):
        return text
    text = os.fspath(text)
    if not text.strip():
        raise StorageError("an empty path names nothing")
    scheme = scheme_of(text)
    uri = normal_uri(text) if scheme else _local_uri(text)
    scheme = scheme or "file"
    fs = _storage_for(scheme)
    if scheme != "file" and "://" in uri:
        fs.filesystem(uri)  # a scheme without its connector: one line now
    return Location(uri, fs)
