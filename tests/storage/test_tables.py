"""Output safety without Spark: refusals before any work, staging that leaves old outputs whole."""

import json
from pathlib import Path

import pytest

from nbspark.errors import OutputError, StorageError
from nbspark.storage.locations import location
from nbspark.storage.manifests import load_manifest
from nbspark.storage.tables import MARKER, check_output, staged_output


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
    assert str(check_output(tmp_path / "elsewhere", overwrite=False, inputs=[data])) == str(
        tmp_path / "elsewhere"
    )
    link = tmp_path / "link"
    link.symlink_to(data)
    with pytest.raises(OutputError, match="overlaps the input"):  # compared after links are resolved
        check_output(link / "out", overwrite=True, inputs=[data])


def test_existing_output_needs_overwrite_and_marker(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert str(check_output(out, overwrite=False)) == str(out)  # empty directory is fine
    (out / "x").write_text("precious")
    with pytest.raises(OutputError, match="--overwrite"):
        check_output(out, overwrite=False)
    with pytest.raises(OutputError, match="not an nbspark output"):
        check_output(out, overwrite=True)
    (out / MARKER).write_text("{}")
    assert str(check_output(out, overwrite=True)) == str(out)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        check_output(tmp_path / "file", overwrite=True)


def test_staged_output_replaces_only_on_success(tmp_path):
    out = tmp_path / "model"
    with staged_output(out, "model") as stage:
        (stage / "v").write_text("1")
    assert (out / "v").read_text() == "1" and (out / MARKER).is_file()

    injected = []
    with pytest.raises(RuntimeError), staged_output(out, "model") as stage:
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


def test_staged_output_loses_a_race_in_one_line(tmp_path, monkeypatch):
    """Two runs replacing one output: the one whose second rename finds the other's output in place
    stops with one line, and leaves that output whole and nothing of its own beside it (the OS's
    rename had said only "Directory not empty")."""
    import nbspark.storage.tables as tables

    out = tmp_path / "model"
    with staged_output(out, "model") as stage:
        (stage / "v").write_text("1")

    def other_run_commits(point):  # between this run's two renames, the other run's commit lands
        if point == "commit-aside":
            out.mkdir()
            (out / "v").write_text("other")
            (out / MARKER).write_text("{}")

    monkeypatch.setattr(tables, "maybe_kill_driver", other_run_commits)
    race = pytest.raises(OutputError, match=r"another run wrote it meanwhile; that output stands")
    with race, staged_output(out, "model") as stage:
        (stage / "v").write_text("2")
    assert (out / "v").read_text() == "other"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # no staging, no old copy


def test_locations_of_paths_and_uris(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text in (f"file://{tmp_path}", f"file:{tmp_path}", f"file:///{tmp_path}/", str(tmp_path), "."):
        loc = location(text)
        assert loc.uri == f"file:{tmp_path}" and str(loc) == str(tmp_path)
    sub = location(tmp_path) / "a" / "b"
    assert sub.uri == f"file:{tmp_path}/a/b" and sub.name == "b" and sub.parent.uri == f"file:{tmp_path}/a"
    assert location("/").is_root() and location("/").parent is None
    with pytest.raises(StorageError, match="empty path"):
        location(" ")


@pytest.mark.parametrize("atomic", [True, False], ids=["rename", "marker-last"])
def test_both_commit_rules_leave_old_or_new(tmp_path, atomic):
    """The rename rule (file:, HDFS) and the object-store rule (marker written last) give the same
    result, and a failure before the commit leaves the old output as it was under either."""
    out = tmp_path / "model"
    for value in ("1", "2"):
        with staged_output(out, "model", atomic=atomic) as stage:
            (stage / "v").write_text(value)
    assert (out / "v").read_text() == "2" and sorted(p.name for p in out.iterdir()) == [MARKER, "v"]
    assert json.loads((out / MARKER).read_text()) == {"kind": "model"}
    with pytest.raises(RuntimeError), staged_output(out, "model", atomic=atomic) as stage:
        (stage / "v").write_text("3")
        raise RuntimeError("injected failure")
    assert (out / "v").read_text() == "2" and sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_a_commit_that_died_is_refused_and_overwritable(tmp_path):
    """On an object store a run killed while moving its output into place leaves the marker that
    says so: models are refused with one line, and --overwrite may replace the output."""
    out = tmp_path / "model"
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"kind": "nbspark.nb-counts", "schema_version": 1}))
    (out / MARKER).write_text(json.dumps({"kind": "model", "state": "committing"}))
    with pytest.raises(OutputError, match="died while moving it into place"):
        load_manifest(out, "nbspark.nb-counts")
    assert str(check_output(out, overwrite=True)) == str(out)
