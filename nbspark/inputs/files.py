"""Input files to RDDs: n-gram lines with their byte offsets, Reuters stories from raw bytes.

* Listing: a path is a file, or a directory whose files, and those of its subdirectories at any
  depth, are read in path order, skipping files and directories whose names start with ``_`` or
  ``.`` (Spark's and Hadoop's hidden-file convention), and all under such a directory, and
  subdirectories that are nbspark outputs (a model or results inside a corpus). File
  names with glob characters or commas (``a[1].txt``, ``b{x},y.txt``) are escaped before
  Hadoop sees them, so they are read literally (except SGML files with a comma in the name,
  which ``binaryFiles`` cannot name, and are refused).
* n-gram files: Hadoop's ``TextInputFormat`` through ``newAPIHadoopRDD``, one RDD over all the
  files, every line carrying ``(file, byte offset, text)`` (the file of its partition's split); gzip
  (``.gz``) is decompressed
  transparently; bytes that are not UTF-8 become U+FFFD (Hadoop's ``Text`` decoding) and are
  counted as ``decode_replacements``.
* Reuters: ``binaryFiles`` and an explicit Latin-1 decode (``inputs.parsers.decode_reuters``);
  Spark's text readers would silently replace non-UTF-8 bytes.
"""

from __future__ import annotations

import bz2
import gzip
import itertools
import logging
import zlib
from contextlib import contextmanager
from typing import NamedTuple

from nbspark.errors import InputError
from nbspark.storage.uris import hadoop_escape, shown_uri

__all__ = [
    "EXPANSION",
    "extension",
    "binary_files",
    "damaged_file",
    "damaged_files_named",
    "head_line_values",
    "bytes_to_read",
    "BINARY_PROBE",
    "Decoded",
    "UTF16_BOMS",
    "decode_text",
    "decompressed",
    "hadoop_input_dir",
    "in_nbspark_output",
    "line_number",
    "line_numbers",
    "list_files",
    "line_value_batches",
    "local_line_values",
    "opened",
    "local_lines",
    "names_by_path",
    "ngram_lines",
    "parquet_frame",
    "spark_paths",
    "reuters_files",
    "SGML_NAMES",
    "sgml_texts",
    "text_frame",
    "utf8_text",
    "whole_line_chunks",
]

log = logging.getLogger(__name__)


def spark_paths(files: list) -> list[str]:
    """What a Spark reader is handed for ``files`` (``Location``s): their URIs, read as written
    (``storage.uris.hadoop_escape``). A path holding ``:`` is refused (``InputError`` naming it):
    Hadoop's readers take what comes before the colon in a file or directory name for a URI scheme
    and fail ("Relative path in absolute URI", HADOOP-3257); Python's readers (training in process)
    open it."""
    for f in files:
        if ":" in f.path:
            raise InputError(
                f"{f}: Hadoop's readers cannot open a path with ':' in a file or directory name; rename "
                "it (training in process, --in-process, reads it)"
            )
    return [hadoop_escape(f.uri) for f in files]


def text_frame(spark, files: list):
    """Spark SQL's text source over ``files`` (``storage.locations.Location``: their URIs, any scheme, read
    literally): a DataFrame of one ``value`` per line."""
    return spark.read.text(spark_paths(files))


def parquet_frame(spark, files: list):
    """Spark SQL's Parquet source over ``files`` (``Location``s, read literally): a table input."""
    return spark.read.parquet(*spark_paths(files))


def list_files(path, suffix: str = "") -> list:
    """The input files of ``path`` (a ``storage.locations.Location``; see the module docstring); empty when
    it has
    none."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        if path.exists():  # /dev/null, a FIFO, a shell's <(…): nothing Spark or a listing can read
            raise ValueError(f"{path}: neither a file nor a directory (a pipe or a device)")
        raise FileNotFoundError(f"{path}: no such file or directory")
    # one listing gives the names, kinds, sizes and times: no lookup per file (a request each on an object
    # store)
    # subdirectories too: Spark SQL's readers take them, Hadoop's FileInputFormat fails on them; none skips
    # them silently
    return [
        p
        for p in path.files(skip=lambda name: name.startswith(("_", ".")), prune=_nbspark_output)
        if p.name.endswith(suffix)
    ]


def _nbspark_output(uri: str, names: list[str]) -> bool:
    """Whether a subdirectory of an input is an nbspark output (a model, results: its marker), left
    out of the input: its Parquet and JSON would be read as text."""
    from nbspark.storage.tables import MARKER

    return MARKER in names and _left_out(uri)


def _left_out(uri: str) -> bool:
    """Say that the nbspark output at ``uri`` is not read as input; True."""
    from nbspark.storage.tables import MARKER

    log.warning("%s: an nbspark output (it holds %s), not read as input", uri, MARKER)
    return True


def in_nbspark_output(root, path, looked: dict) -> bool:
    """Whether the file ``path`` lies in an nbspark output below the input directory ``root``: the
    rule of ``list_files``, asked of one file that another lister found (a stream's file source
    walks the directory itself). ``looked`` remembers each directory's answer across calls."""
    from nbspark.storage.tables import MARKER

    folder = path.parent
    while folder is not None and folder.uri.startswith(root.uri.rstrip("/") + "/"):
        if folder.uri not in looked:
            looked[folder.uri] = (folder / MARKER).is_file() and _left_out(folder.uri)
        if looked[folder.uri]:
            return True
        folder = folder.parent
    return False


#: Text files decompressed by their extension, as Hadoop's text source does for the line inputs.
#: The codecs read as text, by extension: their name and their module (``decompress`` for a whole
#: file's bytes, ``open`` for a stream read as it goes).
_DECOMPRESS = {".gz": ("gzip", gzip), ".bz2": ("bzip2", bz2)}
#: How many times its size a ``.gz`` or ``.bz2`` text file is taken to hold, in deciding whether an
#: input is small enough to read in one process (it is read whole, decompressed): text compresses
#: about three to eight times, and the larger guess errs toward Spark.
EXPANSION = 8


def bytes_to_read(name: str, size: int) -> int:
    """What a file of ``size`` bytes named ``name`` gives to read: ``EXPANSION`` times its size when
    it is decompressed (``_DECOMPRESS``)."""
    return size * EXPANSION if extension(name) in _DECOMPRESS else size


def extension(name: str) -> str:
    """A file name's last extension, lower-cased, with its dot (``.gz`` of ``a.GZ``), or ``""``: what
    decides how it is read, in any case, as Hadoop's codecs are found (``CompressionCodecFactory``
    lower-cases the name: Spark read ``a.GZ`` as gzip, and in process it was noise)."""
    return "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""


#: Compressed files that would be read as their raw bytes: Hadoop's other codecs, and archives.
_COMPRESSED = (
    ".deflate",
    ".lz4",
    ".snappy",
    ".zst",
    ".xz",
    ".lzma",
    ".lzo",
    ".br",
    ".z",
    ".zip",
    ".7z",
    ".tgz",
    ".tar",
)


class Decoded(NamedTuple):
    """A text file's bytes read as text (``decode_text``)."""

    #: the text; empty for a binary file
    text: str
    #: undecodable byte sequences read as U+FFFD
    replaced: int
    #: whether the bytes are not text at all (``BINARY_PROBE``; ``inputs.decoding.BINARY_SIGN``), and
    #: so were not read
    binary: bool = False


#: How many bytes of a file are looked at for a NUL, git's and grep's sign of a binary file (an
#: image, a PDF, an archive): no text in UTF-8 holds one.
BINARY_PROBE = 8000


def decode_text(data: bytes, name: str) -> Decoded:
    """A text file's bytes (``.gz`` and ``.bz2`` decompressed) as UTF-8, undecodable bytes read as
    U+FFFD, and how many such sequences there were (a U+FFFD the file itself holds is not one): the
    rule of ``nbspark check``, ``predict -``, the check job and the ``text`` input alike. A UTF-8
    byte-order mark opening the text is dropped, as Hadoop's line reader drops it (it would be a
    token, and shift the first line's columns). A text opening with a UTF-16 byte-order mark (what
    Windows' Notepad saves as "Unicode") is read as UTF-16: as UTF-8 its every other byte was a NUL
    that split each word into letters, and nothing was checked. Other bytes with a NUL in their
    first ``BINARY_PROBE`` are a binary file (``binary``, no text): read as UTF-8, a picture in a
    folder of essays was thousands of U+FFFD and a warning asking whether it was UTF-8; each caller
    says what it skipped.

    ``InputError`` naming the file for a compressed file that cannot be read: cut short or
    corrupt, or compressed in another way (``.zst``, ``.zip``, …), which would be read as noise."""
    data = decompressed(data, name)
    if data.startswith(UTF16_BOMS):  # Windows' "Unicode", never UTF-8's bytes
        text = data.decode("utf-16", "replace")
        return Decoded(text, text.count("\ufffd") - data.decode("utf-16", "ignore").count("\ufffd"))
    if b"\x00" in data[:BINARY_PROBE]:
        return Decoded("", 0, binary=True)
    return utf8_text(data, "utf-8-sig")


#: The byte-order marks of UTF-16 (little and big endian) that open a text ``decode_text`` reads so.
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def utf8_text(data: bytes, codec: str = "utf-8") -> Decoded:
    """Bytes as UTF-8 (``codec``: ``utf-8-sig`` drops a byte-order mark), undecodable sequences read as
    U+FFFD and counted (a U+FFFD the bytes themselves hold is not one): ``decode_text``'s reading of
    a whole text, and of the rest of a stream after its start (``nbspark predict -``)."""
    text = data.decode(codec, "replace")
    return Decoded(text, text.count("\ufffd") - data.count("\ufffd".encode()))


def decompressed(data: bytes, name: str) -> bytes:
    """A file's bytes, ``.gz`` and ``.bz2`` decompressed; ``InputError`` for one that cannot be."""
    ext = extension(name)
    if ext in _DECOMPRESS:
        codec, module = _DECOMPRESS[ext]
        with _codec_errors(name, codec):
            return module.decompress(data)
    _refuse_compressed(name)
    return data


def _refuse_compressed(name: str) -> None:
    """``InputError`` for a compressed file that is not decompressed (``_COMPRESSED``)."""
    if (ext := extension(name)) in _COMPRESSED:
        raise InputError(
            f"{name}: a {ext} file is not read as text (only .gz and .bz2 are decompressed); decompress "
            "it first"
        )


@contextmanager
def _codec_errors(name: str, codec: str):
    """A compressed file that cannot be decompressed as ``codec``: ``InputError`` naming it."""
    try:
        yield
    except (OSError, EOFError, ValueError, zlib.error) as exc:
        raise InputError(f"{name}: cannot be read as {codec} ({exc})") from None


#: A frame of Hadoop's codecs in a failed job's trace: a compressed file it could not read to its
#: end (``java.io.EOFException: Unexpected end of input stream`` for a ``.gz`` cut short), which
#: Hadoop's line reader reports without naming the file.
HADOOP_CODEC_FRAME = "org.apache.hadoop.io.compress."


def damaged_file(files) -> InputError | None:
    """The first ``.gz`` or ``.bz2`` file among ``files`` that cannot be decompressed to its end, as
    the reader in process says it (``_codec_errors``), read as it streams; None where all can be."""
    for f in files:
        if extension(f.name) in _DECOMPRESS:
            try:
                with opened(f) as stream:
                    while stream.read(1 << 20):
                        pass
            except InputError as exc:
                return exc
    return None


@contextmanager
def damaged_files_named(files):
    """A Spark job reading ``files`` that fails in Hadoop's codec (``HADOOP_CODEC_FRAME``) raises the
    first damaged file's ``InputError`` instead (``damaged_file``: each compressed file read again
    here, on this failure only); any other failure, or one no file explains, raises as itself."""
    try:
        yield
    except Exception as exc:
        if HADOOP_CODEC_FRAME not in str(exc):
            raise
        log.info("a compressed input could not be read to its end; looking for it")
        found = damaged_file(files)
        if found is None:
            raise
        raise found from None


def local_line_values(f) -> list[bytes]:
    """Every line of a file (a ``Location``) as Spark's text reader gives them, read in this
    process: ``\n``, ``\r\n`` or a lone ``\r`` ends a line and is not kept (``bytes.splitlines``
    ends lines at those three alone), a last line without one counts, a UTF-8 byte-order mark
    opening the file is dropped (a file of nothing else is one empty line); ``.gz`` and ``.bz2`` are
    decompressed and other compressed files refused, as ``decode_text`` refuses them. The bytes are
    not decoded (Spark's lines are not either)."""
    return _split_lines(decompressed(f.read_bytes(), str(f)))[1]


def whole_line_chunks(stream, size: int = 1 << 16, head: bytes = b""):
    """A binary ``stream``'s bytes as they are read, cut after their last ``\\n``: each read's whole
    lines (``size`` bytes a read, ``read1`` where the stream has it: a pipe's line is given once it
    is written; a ``\\r\\n`` cut between reads is joined), then what follows the last line end.
    ``head``: bytes already read from the stream's start, cut first."""
    read, pending = getattr(stream, "read1", stream.read), b""
    for chunk in itertools.chain([head], iter(lambda: read(size), b"")):
        lines, end, pending = (pending + chunk).rpartition(b"\n")
        if end:
            yield lines + end
    if pending:
        yield pending


def line_value_batches(stream, size: int = 1 << 16):
    """``local_line_values``' lines of a binary ``stream`` (already decompressed: ``opened``), in
    batches as they are read (``whole_line_chunks``), so that memory holds one batch."""
    for i, chunk in enumerate(whole_line_chunks(stream, size)):
        yield _split_lines(chunk)[1] if i == 0 else chunk.splitlines()


@contextmanager
def opened(f):
    """A file (a ``Location``) as a binary stream of its text's bytes: ``.gz`` and ``.bz2``
    decompressed as they are read (a read that cannot be: ``InputError`` by ``_codec_errors``; an
    error of the caller's is its own), other compressed files refused as ``decompressed`` refuses them."""
    _refuse_compressed(str(f))
    with f.open() as raw:
        if extension(f.name) not in _DECOMPRESS:
            yield raw
            return
        codec, module = _DECOMPRESS[extension(f.name)]
        with module.open(raw) as stream:
            yield _Decompressed(stream, str(f), codec)


class _Decompressed:
    """A decompressing stream whose reads raise ``_codec_errors``' ``InputError``."""

    def __init__(self, stream, name: str, codec: str):
        self.stream, self.name, self.codec = stream, name, codec

    def read(self, size: int = -1) -> bytes:
        with _codec_errors(self.name, self.codec):
            return self.stream.read(size)

    def read1(self, size: int = -1) -> bytes:
        with _codec_errors(self.name, self.codec):
            return self.stream.read1(size)


def head_line_values(f, limit: int = 1 << 20) -> list[bytes] | None:
    """The whole lines among the first ``limit`` bytes of a file, by ``local_line_values``' rule
    (``.gz`` and ``.bz2`` decompressed as they are read, not the whole file); a last line cut by the
    limit is left out. None for another compressed file (``decode_text`` refuses it read whole)."""
    if extension(f.name) in _COMPRESSED:
        return None
    with opened(f) as stream:
        head = stream.read(limit + 1)
    lines = _split_lines(head[:limit])[1]
    return lines[:-1] if len(head) > limit else lines


def local_lines(f) -> list[tuple[int, bytes]]:
    """``(byte offset, line)`` of every line of ``local_line_values(f)``; offsets count decompressed
    bytes, and the first line keeps offset 0 behind a byte-order mark, as Hadoop's does."""
    data = decompressed(f.read_bytes(), str(f))
    bom, lines = _split_lines(data)
    starts = list(itertools.accumulate(map(len, data[bom:].splitlines(keepends=True)), initial=bom))
    return list(zip([0, *starts[1:]], lines))


def _split_lines(data: bytes) -> tuple[int, list[bytes]]:
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    return bom, data[bom:].splitlines() or ([b""] if bom else [])


def reuters_files(path) -> list:
    """The SGML files of a Reuters-21578 directory (``*.sgm``, compressed too: ``*.sgm.gz``,
    ``*.sgm.bz2``, read by ``decompressed``), or the file itself."""
    return [f for f in list_files(path) if f.uri == path.uri or f.name.lower().endswith(SGML_NAMES)]


#: How a Reuters-21578 SGML file's name ends, as written or compressed.
SGML_NAMES = (".sgm", ".sgm.gz", ".sgm.bz2")


def hadoop_input_dir(path) -> str:
    """The value of ``mapreduce.input.fileinputformat.inputdir`` that names ``path`` literally.

    Two layers of escaping, undone in turn by Hadoop: glob characters for ``globStatus``, then
    commas and backslashes for the comma-separated input list (``StringUtils.escapeString``).
    """
    return spark_paths([path])[0].replace("\\", "\\\\").replace(",", "\\,")


def ngram_lines(sc, files: list):
    """RDD of ``(file name, byte offset, line)`` over every line of ``files`` (any file name).

    One Hadoop RDD reads them all: making it costs one Spark job (PySpark's pickling check), not
    one per file (minutes for Google Books v3's 19,423 shards). Each partition
    is one input split of one file; its file is the split's, asked of the JVM once per partition.
    """
    rdd = sc.newAPIHadoopRDD(
        "org.apache.hadoop.mapreduce.lib.input.TextInputFormat",
        "org.apache.hadoop.io.LongWritable",
        "org.apache.hadoop.io.Text",
        conf={"mapreduce.input.fileinputformat.inputdir": ",".join(hadoop_input_dir(f) for f in files)},
    )
    name_of = names_by_path(files)
    names = [
        name_of(p.serializableHadoopSplit().value().getPath().toString())
        for p in rdd._jrdd.rdd().partitions()
    ]
    return rdd.mapPartitionsWithIndex(
        lambda i, pairs: ((names[i], offset, line) for offset, line in pairs), preservesPartitioning=True
    )


def names_by_path(files: list, encoded: bool = False):
    """``path -> what records call the file`` (``str`` of its ``Location``), for the path Hadoop
    reads it by: the one a listing gave, as ``Location.uri`` is, or with ``encoded`` that URI
    percent-encoded, as Spark SQL's ``_metadata.file_path`` gives it (``t%20%5B1%5D.csv``); any
    other path (a file of a directory given) as ``Location`` shows it (decoded)."""
    from urllib.parse import unquote

    names = {f.uri: str(f) for f in files}
    if encoded:
        return lambda path: names.get(unquote(path)) or shown_uri(unquote(path))
    return lambda path: names.get(path) or shown_uri(path)


def binary_files(sc, files: list):
    """``binaryFiles`` over ``files`` (``storage.locations.Location``, no comma in their names): ``(path as
    Hadoop lists it, bytes)``, every core busy.

    binaryFiles packs files into a partition until it passes ``max(openCost, total bytes /
    minPartitions)`` (``spark.files.openCostInBytes``, 4 MB). With the file count as
    minPartitions, files of about equal size go two to a task, and each task reads its second file
    while it scans the first, faster than one to a task.
    With fewer than two files per core that pairing idles cores (two 50 MB shards on 2 cores were
    one task), so there every file of at least openCost bytes is a task of its own (a
    minPartitions of total / openCost makes the bound openCost); smaller files share a partition.
    """
    min_partitions = len(files)
    if len(files) < 2 * sc.defaultParallelism:
        open_cost = sc._jsc.sc().conf().getSizeAsBytes("spark.files.openCostInBytes", "4m")
        total = sum(f.stat()[0] for f in files) + open_cost * len(files)  # as binaryFiles counts them
        min_partitions = min(2**31 - 1, max(len(files), -(-total // open_cost)))
    return sc.binaryFiles(",".join(spark_paths(files)), min_partitions)


def sgml_texts(sc, files: list):
    """RDD of ``(file name, bytes)``, one record per SGML or text file, read by one ``binary_files``
    (no RDD per file; small files share a partition).
    ``binaryFiles`` splits its argument on commas, so a file name with a comma is refused.
    """
    for f in files:
        if "," in str(f):
            raise ValueError(f"{f}: SGML file names with a comma cannot be read; rename the file")
    name_of = names_by_path(files)
    return binary_files(sc, files).map(lambda kv: (name_of(kv[0]), kv[1]))


def line_number(path, offset: int) -> int | None:
    """The 1-based line number at byte ``offset`` of a (possibly gzip) file, or None: ``path`` is a
    ``storage.locations.Location`` or the name records carry (``str`` of one: a local path or a URI)."""
    return line_numbers(path, [offset])[offset]


def line_numbers(path, offsets) -> dict[int, int | None]:
    """``line_number`` at each of ``offsets`` of one file, in one read up to the last of them (the
    first malformed lines are often many in one file: each read from the start again decompressed
    it once per line, and on an object store fetched it as often). None where it cannot be read."""
    from nbspark.storage.locations import location

    found: dict[int, int] = {}
    try:
        path = location(path)
        with path.open() as raw:
            fh = gzip.GzipFile(fileobj=raw) if extension(path.name) == ".gz" else raw
            lines, position = 1, 0
            for offset in sorted(set(offsets)):
                while position < offset:
                    chunk = fh.read(min(offset - position, 8 << 20))
                    if not chunk:
                        break
                    lines += chunk.count(b"\n")
                    position += len(chunk)
                found[offset] = lines
    except (OSError, EOFError):
        pass
    return {offset: found.get(offset) for offset in offsets}
