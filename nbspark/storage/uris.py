"""URIs as text: schemes, normal forms, joins and parents. Pure; ``locations`` and ``hadoop`` build on it."""

from __future__ import annotations

import os
import posixpath
import re

__all__ = [
    "atomic_rename_schemes",
    "decoded_uri",
    "hadoop_escape",
    "is_local",
    "normal_uri",
    "parent_uri",
    "join_uri",
    "link_loop",
    "name_of",
    "scheme_of",
    "shown_uri",
]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_GLOB_CHARS = re.compile(r"([\[\]{}*?\\])")

#: Schemes whose directory rename is atomic (after ViewFS resolution); elsewhere (object stores,
#: unknown schemes) outputs are committed with the marker rule (``storage.tables.staged_output``).
atomic_rename_schemes = frozenset({"file", "hdfs", "webhdfs", "swebhdfs"})


def scheme_of(text: str) -> str | None:
    """``"s3a"`` for ``s3a://bucket/x``; None for a plain path (a Windows drive letter is no scheme)."""
    found = _SCHEME.match(text)
    return found.group(1).lower() if found and len(found.group(1)) > 1 else None


def is_local(path) -> bool:
    """Whether a path is one this process reads with the OS: no scheme, or ``file:`` (every other
    scheme is Hadoop's to reach, through the JVM)."""
    return scheme_of(str(path)) in (None, "file")


def hadoop_escape(uri: str) -> str:
    """``uri`` with Hadoop's glob characters escaped, so that a reader that globs (every Spark reader
    of files: ``spark.read``, ``readStream``, Hadoop's input formats) opens that one path: a model
    at ``out/m[1]`` unescaped is the pattern ``out/m1`` (another model, read in silence), and a
    file ``t[1].csv`` is ``t1.csv``. Every path handed to a Spark reader goes through it."""
    return _GLOB_CHARS.sub(r"\\\1", uri)


def _local_uri(path: str) -> str:
    return "file:" + os.path.abspath(os.path.expanduser(path))


def normal_uri(uri: str) -> str:
    """``file:///x`` and ``file://localhost/x`` as ``file:/x`` (Hadoop's own form); no trailing ``/``."""
    if uri.startswith("file:"):
        rest = uri[len("file:") :]
        rest = rest[len("//localhost") :] if rest.startswith("//localhost/") else rest
        uri = "file:/" + rest.lstrip("/") if rest.startswith("/") else _local_uri(rest)
    while uri.endswith("/") and not uri.endswith(":/") and not uri.endswith("//") and uri.count("/") > 1:
        uri = uri[:-1]
    return uri


def decoded_uri(encoded: str) -> str:
    """A URI in its encoded form (Hadoop's ``Path.toUri().toString()``, as Spark's file-source log
    holds it: ``in%5B1%5D``, ``a%20b``) in nbspark's (Hadoop's ``Path.toString()``: ``in[1]``,
    ``a b``), normal (``normal_uri``): only the path is decoded, not the scheme or the authority."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(encoded)
    path = unquote(parts.path)
    return normal_uri(f"{parts.scheme}://{parts.netloc}{path}" if parts.netloc else f"{parts.scheme}:{path}")


def shown_uri(uri: str) -> str:
    """A URI as the user sees it: the local path for ``file:`` (``file:///x`` and
    ``file://host/x`` too), else the URI."""
    if not uri.startswith("file:"):
        return uri
    rest = uri[len("file:") :]
    return "/" + rest[2:].partition("/")[2] if rest.startswith("//") else rest


def _split(uri: str) -> tuple[str, str]:
    """``("hdfs://nn", "/x/y")`` of ``hdfs://nn/x/y``; ``("file:", "/x")`` of ``file:/x``."""
    scheme, _, rest = uri.partition(":")
    if rest.startswith("//"):
        authority, _, path = rest[2:].partition("/")
        return f"{scheme}://{authority}", "/" + path
    return scheme + ":", rest or "/"


def join_uri(uri: str, name: str) -> str:
    return uri.rstrip("/") + "/" + name if _split(uri)[1] != "/" else _split(uri)[0] + "/" + name


def name_of(uri: str) -> str:
    """The last name of ``uri``'s path (``y`` of ``hdfs://nn/x/y/``)."""
    return uri.rstrip("/").rsplit("/", 1)[-1]


def parent_uri(uri: str) -> str | None:
    prefix, path = _split(uri)
    return None if path == "/" else prefix + posixpath.dirname(path.rstrip("/"))


def link_loop(parent: str, child: str) -> bool:
    """Whether the local directory ``child`` of ``parent`` is a symbolic link to ``parent`` or to a
    directory above it: listing it would never end (both storages skip it)."""
    return os.path.islink(child) and (os.path.realpath(parent) + os.sep).startswith(
        os.path.realpath(child).rstrip(os.sep) + os.sep
    )
