"""``inputs.files.head_line_values`` and ``line_value_batches``: the whole lines at the head of a
file, and a stream's lines in batches as they are read, by the whole file's rule."""

import bz2
import gzip
import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbspark.errors import InputError
from nbspark.inputs.files import (
    HADOOP_CODEC_FRAME,
    damaged_file,
    damaged_files_named,
    head_line_values,
    line_value_batches,
    local_line_values,
    opened,
)
from nbspark.storage.locations import location


def test_the_head_of_a_file_is_its_first_whole_lines_plain_or_compressed(tmp_path):
    data = b"\xef\xbb\xbfa,b\r\n\n1,2\r3,4\nlast"
    for name, content in (
        ("t.csv", data),
        ("t.csv.gz", gzip.compress(data)),
        ("t.csv.BZ2", bz2.compress(data)),
    ):
        (tmp_path / name).write_bytes(content)
        f = location(tmp_path / name)
        # the whole file fits: every line, as the whole file's reader gives them, and as a stream's
        assert head_line_values(f) == local_line_values(f) == [b"a,b", b"", b"1,2", b"3,4", b"last"]
        with opened(f) as stream:
            assert [line for batch in line_value_batches(stream, 4) for line in batch] == local_line_values(f)
        # a limit inside "1,2": the lines before it, never a cut one (the BOM's 3 bytes count)
        assert head_line_values(f, limit=10) == [b"a,b", b""]
    (tmp_path / "t.zip").write_bytes(b"PK\x03\x04")
    assert head_line_values(location(tmp_path / "t.zip")) is None  # not read as text


def test_a_codec_failure_in_spark_is_named_by_the_first_damaged_compressed_file(tmp_path):
    """Hadoop's line reader says ``java.io.EOFException`` of a ``.gz`` cut short, naming no file: the
    compressed inputs are read again here and the first that cannot be read to its end is named."""
    data = b"".join(b"line %d\n" % i for i in range(20000))
    good, cut_gz, cut_bz2 = tmp_path / "a.txt.gz", tmp_path / "b.txt.gz", tmp_path / "c.txt.bz2"
    good.write_bytes(gzip.compress(data))
    cut_gz.write_bytes(gzip.compress(data)[:-40])
    cut_bz2.write_bytes(bz2.compress(data)[:500])
    (tmp_path / "d.txt").write_bytes(b"not compressed\n")
    files = [location(p) for p in sorted(tmp_path.iterdir())]
    assert damaged_file(files[:1] + files[3:]) is None
    assert str(damaged_file(files)).startswith(f"{cut_gz}: cannot be read as gzip (")
    assert str(damaged_file(files[2:])).startswith(f"{cut_bz2}: cannot be read as bzip2 (")
    trace = (
        "java.io.EOFException: Unexpected end of input stream\n\tat "
        + HADOOP_CODEC_FRAME
        + "DecompressorStream"
    )
    with pytest.raises(InputError, match=r"b\.txt\.gz: cannot be read as gzip"), damaged_files_named(files):
        raise RuntimeError(trace)
    with (
        pytest.raises(RuntimeError, match="EOFException"),
        damaged_files_named(files[:1]),
    ):  # no file explains it: raised as itself
        raise RuntimeError(trace)
    with (
        pytest.raises(RuntimeError, match="^other$"),
        damaged_files_named(files),
    ):  # another failure reads no file
        raise RuntimeError("other")


def hadoop_lines(data: bytes) -> list[bytes]:
    """Spark's text reader's lines, from its documentation: ``\\n``, ``\\r\\n`` or ``\\r`` ends a line, a
    last line without one counts, a UTF-8 byte-order mark opening the data is dropped."""
    bom = data.startswith(b"\xef\xbb\xbf")
    pieces = re.split(rb"\r\n|\r|\n", data[3:] if bom else data)
    if pieces[-1] == b"" and (len(pieces) > 1 or not bom):
        pieces.pop()
    return pieces


class _Reads:
    """A stream with ``read`` alone (no ``read1``), each call giving at most ``size`` bytes."""

    def __init__(self, data: bytes):
        self.stream = io.BytesIO(data)

    def read(self, size: int) -> bytes:
        return self.stream.read(size)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b"bc", b"\r", b"\n", b"\r\n", b",", b"\xef\xbb\xbf"]), max_size=20),
    st.booleans(),
    st.integers(1, 9),
    st.booleans(),
)
def test_a_streams_lines_in_batches_are_the_whole_files_lines(pieces, bom, size, read1):
    """Read ``size`` bytes at a time (a ``\\r\\n`` or a byte-order mark cut between reads), the
    batches' lines in order are the whole data's lines; no batch is empty."""
    data = (b"\xef\xbb\xbf" if bom else b"") + b"".join(pieces)
    stream = io.BufferedReader(io.BytesIO(data)) if read1 else _Reads(data)
    batches = list(line_value_batches(stream, size))
    assert [line for batch in batches for line in batch] == hadoop_lines(data)
    assert all(batches)


def test_a_compressed_file_of_another_kind_is_refused_when_opened(tmp_path):
    (tmp_path / "t.csv.xz").write_bytes(b"\xfd7zXZ")
    with (
        pytest.raises(InputError, match="a .xz file is not read as text"),
        opened(location(tmp_path / "t.csv.xz")),
    ):
        pass
