"""Output safety without Spark: refusals before any work, staging that leaves old outputs whole."""

from pathlib import Path

import pytest

from nbspark.errors import OutputError
from nbspark.tables import MARKER, check_output, local_path, staged_output


def test_refuses_root_home_and_inputs(tmp_path):
    with pytest.raises(OutputError, match="home directory"):
        check_output("/", overwrite=True)
    with pytest.raises(OutputError, match="home directory"):
        check_output(Path.home(), overwrite=True)
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    for out in (data, data / "sub", tmp_path):  # equal, inside, containing
        with pytest.raises(OutputError, match="overlaps the input"):
            check_output(out, overwrite=True, inputs=[data])
    assert check_output(tmp_path / "elsewhere", overwrite=False, inputs=[data]) == tmp_path / "elsewhere"


def test_existing_output_needs_overwrite_and_marker(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert check_output(out, overwrite=False) == out  # empty directory is fine
    (out / "x").write_text("precious")
    with pytest.raises(OutputError, match="--overwrite"):
        check_output(out, overwrite=False)
    with pytest.raises(OutputError, match="not an nbspark output"):
        check_output(out, overwrite=True)
    (out / MARKER).write_text("{}")
    assert check_output(out, overwrite=True) == out
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        check_output(tmp_path / "file", overwrite=True)


def test_staged_output_replaces_only_on_success(tmp_path):
    out = tmp_path / "model"
    with staged_output(out, "model") as stage:
        (stage / "v").write_text("1")
    assert (out / "v").read_text() == "1" and (out / MARKER).is_file()

    injected = []
    with pytest.raises(RuntimeError):
        with staged_output(out, "model") as stage:
            (stage / "v").write_text("2")
            injected.append(True)
            raise RuntimeError("injected failure")
    assert injected, "the failure was not injected"
    assert (out / "v").read_text() == "1"  # the old output is whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # no staging left behind

    with staged_output(out, "model") as stage:
        (stage / "w").write_text("3")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "w"]  # no stale files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_local_path_schemes(tmp_path):
    assert local_path(f"file://{tmp_path}") == tmp_path
    assert local_path(f"file:{tmp_path}") == tmp_path
    with pytest.raises(OutputError, match="only local paths"):
        local_path("hdfs://nn/x")
