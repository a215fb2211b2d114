"""``file:`` paths through Python's ``os``: ``LocalStorage``, the storage of what runs without a JVM
(``nbspark predict``/``check``, ``nbspark.load`` of a local model), and the one that reads and writes
the bytes of a path that Hadoop resolves to the local file system (``storage.hadoop``)."""

from __future__ import annotations

import os
import shutil

from nbspark.storage.uris import link_loop

__all__ = ["LocalStorage"]


class LocalStorage:
    """``file:`` paths through Python's ``os``, for the commands that run without a JVM."""

    @staticmethod
    def _p(uri: str) -> str:
        return uri[len("file:") :]

    def exists(self, uri):
        return os.path.exists(self._p(uri))

    def is_dir(self, uri):
        return os.path.isdir(self._p(uri))

    def is_file(self, uri):
        return os.path.isfile(self._p(uri))

    def list(self, uri):
        """A directory's entries, but Hadoop's checksum files (``_checksum``); a file lists itself, as
        Hadoop's ``listStatus`` does."""
        if os.path.isfile(self._p(uri)):
            return [uri]
        return ["file:" + os.path.join(self._p(uri), n) for n in os.listdir(self._p(uri)) if not _checksum(n)]

    def entries(self, uri):
        """``(uri, size, modification time, is a directory)`` of a directory's files and
        subdirectories; symbolic links followed, as ``os.path.isfile`` and ``os.stat`` follow
        them, except a link to the directory itself or one above it (a loop); Hadoop's checksum
        files left out."""
        if os.path.isfile(self._p(uri)):  # a file lists itself
            return [(uri, *self.stat(uri), False)]
        found = []
        with os.scandir(self._p(uri)) as entries:
            for e in entries:
                if _checksum(e.name):
                    continue
                if e.is_file():
                    st = e.stat()
                    found.append(("file:" + e.path, st.st_size, st.st_mtime_ns // 1_000_000, False))
                elif e.is_dir() and not link_loop(self._p(uri), e.path):
                    found.append(("file:" + e.path, 0, 0, True))
        return found

    def stat(self, uri):
        st = os.stat(self._p(uri))
        return st.st_size, st.st_mtime_ns // 1_000_000

    def mkdirs(self, uri):
        os.makedirs(self._p(uri), exist_ok=True)

    def rename(self, src, dst):
        os.rename(self._p(src), self._p(dst))

    def delete(self, uri):
        path = self._p(uri)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)

    def read_bytes(self, uri):
        with open(self._p(uri), "rb") as fh:
            return fh.read()

    def write_bytes(self, uri, data):
        with open(self._p(uri), "wb") as fh:
            fh.write(data)

    def create_new(self, uri, data):
        try:
            fd = os.open(self._p(uri), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return True

    def open(self, uri):
        return open(self._p(uri), "rb")

    def real(self, uri):
        return "file:" + os.path.realpath(self._p(uri))

    def writable(self, uri):
        return os.access(self._p(uri), os.W_OK | os.X_OK)

    def home(self, uri):
        return "file:" + os.path.realpath(os.path.expanduser("~"))


def _checksum(name: str) -> bool:
    """Whether ``name`` is one of Hadoop's checksum files (``.NAME.crc``, beside what Spark writes on
    the local disk), which Hadoop's local file system leaves out of its listings."""
    return name.startswith(".") and name.endswith(".crc")
