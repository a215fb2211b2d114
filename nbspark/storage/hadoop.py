"""Hadoop's ``FileSystem`` API through the JVM (py4j): the ``storage`` interface for every scheme the
Spark installation has a connector for (``file:``, ``hdfs:``, ``s3a:``, ``gs:``, ``abfss:``, ``viewfs:`` …).

The bytes of a file that nbspark reads or writes itself (inputs counted in the driver, markers,
manifests, reports, plots, Parquet footers) under a path that resolves to ``file:`` (also through
ViewFS) are read and written by the OS (``storage.local``), as Hadoop's raw local file system would
(no ``.crc`` checksum file beside them, and a file edited by hand never refused for a stale one)
without carrying them through py4j, which copies every byte through a socket. A ``file:`` path is
also looked up and listed by the OS (``_answered``), as Hadoop's local file system answers (its
checksum files left out of listings), without py4j's three round trips a file. Directories are
made, renamed and deleted by Hadoop; Spark's own table writes keep its checksums.
"""

from __future__ import annotations

import io

from nbspark.errors import StorageError
from nbspark.spark.session import quick_replies, start_jvm
from nbspark.storage.local import LocalStorage
from nbspark.storage.uris import join_uri, name_of, normal_uri, parent_uri, scheme_of

__all__ = ["HadoopStorage"]

#: What a Spark installation needs for the common schemes (the one-line error names it).
_CONNECTORS = {
    "s3a": "the S3A connector: hadoop-aws of the same version as Spark's Hadoop, and its AWS SDK bundle",
    "s3": "the S3A connector (hadoop-aws); Hadoop reads S3 as s3a://, not s3://",
    "s3n": "the S3A connector (hadoop-aws); Hadoop reads S3 as s3a://, not s3n://",
    "gs": "the Google Cloud Storage connector (gcs-connector, hadoop3 build)",
    "abfs": "the Azure connector (hadoop-azure)",
    "abfss": "the Azure connector (hadoop-azure)",
    "wasb": "the Azure connector (hadoop-azure)",
    "wasbs": "the Azure connector (hadoop-azure)",
}

#: The first look at a file system (``HadoopStorage.filesystem``) waits this little for a server that
#: does not answer, and does not retry: Hadoop's defaults wait 60 s per call and retry for minutes.
#: A key the user set (``--conf spark.hadoop.KEY=...``, a site file) is left as they set it, and
#: the work after the first look runs with Hadoop's own settings.
PROBE_SETTINGS = {
    "ipc.client.connect.timeout": "3000",
    "ipc.client.connect.max.retries": "0",
    "ipc.client.connect.max.retries.on.timeouts": "0",
    "ipc.client.rpc-timeout.ms": "4000",
    "dfs.webhdfs.socket.connect-timeout": "3s",
    "dfs.webhdfs.socket.read-timeout": "4s",
    "dfs.http.client.retry.policy.enabled": "false",
    "fs.s3a.connection.establish.timeout": "3s",
    "fs.s3a.connection.timeout": "4s",
    "fs.s3a.attempts.maximum": "1",
    "fs.s3a.retry.limit": "0",
    "fs.gs.http.connect-timeout": "3000",
    "fs.gs.http.read-timeout": "4000",
    "fs.gs.http.max.retry": "0",
    "fs.azure.io.retry.max.retries": "0",
}


def _java_error(exc) -> tuple[str, str]:
    """``(simple class name, first message line)`` of a Py4J Java error."""
    try:
        java = exc.java_exception
        name = java.getClass().getSimpleName()
        message = java.getMessage() or ""
    except Exception:  # not a Py4JJavaError
        return type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""
    return name, (message.splitlines()[0] if message else "")


class HadoopStorage:
    """Any Hadoop ``FileSystem`` (``file:``, ``hdfs:``, ``s3a:``, ``viewfs:`` …) through the JVM.

    ``conf`` is the active SparkContext's Hadoop configuration, or, before one starts, the one
    Spark would build from spark-submit's settings (``SparkHadoopUtil.newConfiguration``).
    """

    def __init__(self):
        from pyspark import SparkConf, SparkContext

        start_jvm()
        # a file's bytes come back as py4j replies: no Nagle wait on each (spark.session.quick_replies)
        quick_replies()
        self._jvm = SparkContext._jvm
        sc = SparkContext._active_spark_context
        if sc is not None:
            self._conf = sc._jsc.hadoopConfiguration()
        else:
            self._conf = self._jvm.org.apache.spark.deploy.SparkHadoopUtil.get().newConfiguration(
                SparkConf()._jconf
            )
        self._fs = {}
        self._os = LocalStorage()  # the bytes of a path on the local disk
        self._Path = self._IOUtils = self._Bounded = None

    def _path(self, uri):
        if self._Path is None:  # each lookup of a class through the gateway is several round trips: once
            self._Path, self._IOUtils = (
                self._jvm.org.apache.hadoop.fs.Path,
                self._jvm.org.apache.commons.io.IOUtils,
            )
            self._Bounded = self._jvm.org.apache.commons.io.input.BoundedInputStream
        return self._Path(uri)

    def _read_chunk(self, stream, n: int) -> bytes:
        """The next ``n`` bytes of a Hadoop stream (fewer at its end), in one py4j reply: as a
        Latin-1 string (one character per byte, every byte value kept), which py4j carries faster
        than a byte array, which it sends as base64. pyarrow reads on threads of its own, each with
        a py4j connection of its own: each is made quick too (``spark.session.quick_replies``)."""
        quick_replies()
        return self._IOUtils.toString(self._Bounded(stream, n), "ISO-8859-1").encode("latin-1")

    def filesystem(self, uri):
        """The Hadoop ``FileSystem`` of ``uri``'s scheme and authority; a missing connector is one line."""
        key = uri.split("/", 3)[:3] if "//" in uri else [scheme_of(uri)]
        key = "/".join(key)
        if key not in self._fs:
            try:
                self._fs[key] = self._path(uri).getFileSystem(self._conf)
            except Exception as exc:
                name, message = _java_error(exc)
                scheme = scheme_of(uri)
                if (
                    name == "UnsupportedFileSystemException"
                    or "No FileSystem for scheme" in message
                    or "ClassNotFoundException" in message
                ):
                    need = _CONNECTORS.get(scheme, f"a Hadoop FileSystem for {scheme}:// (fs.{scheme}.impl)")
                    raise StorageError(
                        f"{uri}: no Hadoop FileSystem for the {scheme}:// scheme in this Spark installation; "
                        f"add {need} (spark-submit --packages or --jars), see docs/scaling.md"
                    ) from None
                raise StorageError(f"{uri}: cannot reach its file system ({name}: {message})") from None
            if scheme_of(uri) != "file":
                self._probe(uri)
        return self._fs[key]

    def _probe(self, uri):
        """Look ``uri`` up once with ``PROBE_SETTINGS`` (on a file system instance of its own, out
        of Hadoop's cache, so that no later call inherits them): a server that does not answer is
        one line within seconds, not after minutes of Hadoop's retries."""
        conf = self._jvm.org.apache.hadoop.conf.Configuration(self._conf)
        for name, value in PROBE_SETTINGS.items():
            sources = conf.getPropertySources(name)
            if sources is None or all(str(s).endswith("-default.xml") for s in sources):
                conf.set(name, value)
        for scheme in ("hdfs", "webhdfs", "swebhdfs", "s3a", "gs", "abfs", "abfss", "viewfs"):
            conf.setBoolean(f"fs.{scheme}.impl.disable.cache", True)  # a mounted one too
        fs = None
        try:
            fs = self._jvm.org.apache.hadoop.fs.FileSystem.newInstance(self._jvm.java.net.URI(uri), conf)
            fs.exists(self._path(uri))
        except Exception as exc:
            name, message = _java_error(exc)
            if name == "FileNotFoundException" or "AccessControlException" in name:
                return  # it answered: what is or is not there is for the caller to say
            slow = (
                "; a slow server: raise the first look's timeouts (docs/scaling.md)"
                if "Timeout" in name
                else ""
            )
            raise StorageError(f"{uri}: cannot reach its file system ({name}: {message}){slow}") from None
        finally:
            if fs is not None:
                fs.close()

    def _call(self, uri, what, fn):
        try:
            return fn(self.filesystem(uri), self._path(uri))
        except StorageError:
            raise
        except Exception as exc:
            name, message = _java_error(exc)
            if name == "FileNotFoundException":
                raise FileNotFoundError(f"{uri}: no such file or directory") from None
            raise StorageError(f"{uri}: cannot {what} ({name}: {message})") from None

    def qualify(self, text: str) -> str:
        """``text`` as Hadoop qualifies it: a plain path on the default file system (``fs.defaultFS``)."""
        path = self._path(text)
        return normal_uri(path.getFileSystem(self._conf).makeQualified(path).toString())

    def _answered(self, uri, what, by_os, by_hadoop):
        """``by_os(uri)`` for a ``file:`` ``uri``: the OS answers as Hadoop's local file system does,
        without py4j's round trips (a listing there costs three a file), its errors told as
        ``_call`` tells Hadoop's; ``by_hadoop()`` for any other scheme."""
        return self._by_os(uri, uri, what, by_os) if scheme_of(uri) == "file" else by_hadoop()

    @staticmethod
    def _by_os(uri, local, what, fn):
        """``fn(local)``, the OS's errors told (naming ``uri``) as ``_call`` tells Hadoop's."""
        try:
            return fn(local)
        except FileNotFoundError:
            raise FileNotFoundError(f"{uri}: no such file or directory") from None
        except OSError as exc:
            raise StorageError(f"{uri}: cannot {what} ({exc.strerror or exc})") from None

    def exists(self, uri):
        return self._answered(
            uri,
            "look it up",
            self._os.exists,
            lambda: self._call(uri, "look it up", lambda fs, p: bool(fs.exists(p))),
        )

    def _status(self, uri):
        """The Hadoop ``FileStatus``, or None when there is nothing at ``uri``."""
        try:
            return self._call(uri, "look it up", lambda fs, p: fs.getFileStatus(p))
        except FileNotFoundError:  # _call's translation of Hadoop's FileNotFoundException
            return None

    def is_dir(self, uri):
        return self._answered(
            uri, "look it up", self._os.is_dir, lambda: self._has_status(uri, "isDirectory")
        )

    def is_file(self, uri):
        return self._answered(uri, "look it up", self._os.is_file, lambda: self._has_status(uri, "isFile"))

    def _has_status(self, uri, kind: str) -> bool:
        """Whether Hadoop's ``FileStatus`` of ``uri`` says ``kind`` (``isFile``, ``isDirectory``)."""
        st = self._status(uri)
        return st is not None and bool(getattr(st, kind)())

    def list(self, uri):
        return self._answered(
            uri,
            "list it",
            self._os.list,
            lambda: [
                s.getPath().toString() for s in self._call(uri, "list it", lambda fs, p: fs.listStatus(p))
            ],
        )

    def entries(self, uri):
        """``(uri, size, modification time, is a directory)`` of a directory's files and
        subdirectories, from one listing."""
        return self._answered(uri, "list it", self._os.entries, lambda: self._listed(uri))

    def _listed(self, uri):
        found = []
        for s in self._call(uri, "list it", lambda fs, p: fs.listStatus(p)):  # a file costs 5 round trips
            if s.isFile():
                found.append((s.getPath().toString(), int(s.getLen()), int(s.getModificationTime()), False))
            elif s.isDirectory():
                found.append((s.getPath().toString(), 0, 0, True))
        return found

    def stat(self, uri):
        return self._answered(uri, "look it up", self._os.stat, lambda: self._hadoop_stat(uri))

    def _hadoop_stat(self, uri):
        st = self._status(uri)
        if st is None:
            raise FileNotFoundError(f"{uri}: no such file or directory")
        return int(st.getLen()), int(st.getModificationTime())

    def mkdirs(self, uri):
        if not self._call(uri, "make the directory", lambda fs, p: fs.mkdirs(p)):
            raise StorageError(f"{uri}: cannot make the directory")

    def rename(self, src, dst):
        """``src`` renamed ``dst``, which must not exist (``StorageError``): Hadoop's ``rename`` moves
        a directory into an existing one and answers that it renamed it, where the callers (a
        commit, the restoring of a killed run's output) rely on the rename failing, as the OS's
        does over a directory that holds files. A rename racing another is left to the storage."""
        if self.exists(dst):
            raise StorageError(f"{src}: cannot rename it to {dst}, which exists")
        if not self._call(src, f"rename it to {dst}", lambda fs, p: fs.rename(p, self._path(dst))):
            raise StorageError(f"{src}: cannot rename it to {dst}")

    def delete(self, uri):
        self._call(uri, "delete it", lambda fs, p: fs.delete(p, True))

    def read_bytes(self, uri):
        with self.open(uri) as fh:
            return fh.read()

    def _local_path(self, uri) -> str | None:
        """``file:`` and the path that ``uri`` resolves to on the local file system (``file:``, or a
        ViewFS mount of it), else None."""
        real = self.real(uri)
        return real if scheme_of(real) == "file" else None

    def _on_disk(self, uri, what, fn):
        """``fn(local uri)`` through ``LocalStorage`` for a ``uri`` that resolves to the local disk,
        its errors told as ``_call`` tells Hadoop's; None (nothing done) for any other ``uri``."""
        local = self._local_path(uri)
        return None if local is None else (self._by_os(uri, local, what, fn),)

    def write_bytes(self, uri, data):
        self._write(uri, data, overwrite=True)

    def create_new(self, uri, data):
        return self._write(uri, data, overwrite=False)

    def _write(self, uri, data, overwrite: bool) -> bool:
        """Write the whole file; without ``overwrite``, an exclusive create (False when the file
        exists, nothing written). A path on the local disk is written by the OS (``LocalStorage``:
        the bytes Hadoop's raw local file system would write, no ``.crc`` beside them, without
        carrying them through py4j)."""
        write = self._os.write_bytes if overwrite else self._os.create_new
        done = self._on_disk(uri, "write it" if overwrite else "create it", lambda local: write(local, data))
        if done is not None:
            return done[0] is not False

        def hadoop_write(fs, p):
            try:
                out = fs.create(p, overwrite)
            except Exception as exc:
                if not overwrite and _java_error(exc)[0] == "FileAlreadyExistsException":
                    return False
                raise
            try:
                for start in range(0, len(data), 8 << 20):
                    out.write(bytearray(data[start : start + (8 << 20)]))
            finally:
                out.close()
            return True

        return self._call(uri, "write it" if overwrite else "create it", hadoop_write)

    def open(self, uri):
        """A reader of the file's bytes; a path on the local disk is read by the OS (``_write``)."""
        done = self._on_disk(uri, "open it", self._os.open)
        if done is not None:
            return done[0]
        size = self.stat(uri)[0]
        stream = self._call(uri, "open it", lambda fs, p: fs.open(p))
        return io.BufferedReader(_HadoopReader(stream, size, self._read_chunk), 1 << 20)

    def real(self, uri):
        if scheme_of(uri) == "file":  # Hadoop's answer, without the round trips: the OS resolves links
            return self._os.real(uri)
        missing, there = [], uri
        while not self.exists(there):  # not there yet: resolve the nearest ancestor that is
            if parent_uri(there) is None:
                return uri
            missing.append(name_of(there))
            there = parent_uri(there)
        resolved = normal_uri(self._call(there, "resolve it", lambda fs, p: fs.resolvePath(p).toString()))
        if scheme_of(resolved) == "file":
            resolved = self._os.real(resolved)
        for name in reversed(missing):
            resolved = join_uri(resolved, name)
        return resolved

    def writable(self, uri):
        real = self.real(uri)
        if scheme_of(real) == "file":
            return self._os.writable(real)

        def access(fs, p):
            try:
                fs.access(p, self._jvm.org.apache.hadoop.fs.permission.FsAction.WRITE)
                return True
            except Exception as exc:
                if _java_error(exc)[0] == "AccessControlException":
                    return False
                raise

        return self._call(uri, "check write permission", access)

    def home(self, uri):
        return self.real(
            normal_uri(
                self._call(uri, "find the home directory", lambda fs, p: fs.getHomeDirectory().toString())
            )
        )


class _HadoopReader(io.RawIOBase):
    """A seekable reader over a Hadoop ``FSDataInputStream`` (bytes cross py4j in chunks)."""

    def __init__(self, stream, size: int, read_chunk):
        self._in, self._size, self._pos, self._read = stream, size, 0, read_chunk

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def _next(self, limit: int) -> bytes:
        """Up to ``limit`` bytes from the position (16 MB at most a call), the position moved past them."""
        n = min(limit, self._size - self._pos, 16 << 20)
        if n <= 0:
            return b""
        self._in.seek(self._pos)
        data = self._read(self._in, n)
        self._pos += len(data)
        return data

    def readinto(self, buffer):
        data = self._next(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readall(self):
        """The rest of the file (``RawIOBase.readall`` would ask for 8 KB at a time, a py4j round trip
        each)."""
        chunks = []
        while chunk := self._next(self._size):
            chunks.append(chunk)
        return b"".join(chunks)

    def close(self):
        if not self.closed:
            self._in.close()
        super().close()
