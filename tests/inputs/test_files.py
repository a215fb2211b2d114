"""``inputs.files.head_line_values``: the whole lines at the head of a file, by the whole file's rule."""

import bz2
import gzip

from nbspark.inputs.files import head_line_values, local_line_values
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
        # the whole file fits: every line, as the whole file's reader gives them
        assert head_line_values(f) == local_line_values(f) == [b"a,b", b"", b"1,2", b"3,4", b"last"]
        # a limit inside "1,2": the lines before it, never a cut one (the BOM's 3 bytes count)
        assert head_line_values(f, limit=10) == [b"a,b", b""]
    (tmp_path / "t.zip").write_bytes(b"PK\x03\x04")
    assert head_line_values(location(tmp_path / "t.zip")) is None  # not read as text
