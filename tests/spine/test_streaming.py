"""Streaming training (issue 37): a model that grows by versions, each file counted exactly once.

The invariant: streaming files in any order, any batch split, with restarts between batches (and a
SIGKILL in a commit), gives the table a batch train on all the files gives, row for row."""

import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nbspark
from nbspark.app.stream import stream_main
from nbspark.backoff.events import count_ddl
from nbspark.backoff.jobs import BACKOFF, train
from nbspark.errors import InputError, OutputError
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.naive_bayes.jobs import NAIVE_BAYES, train_nb
from nbspark.settings.config import load_config
from nbspark.spine.committing import compact
from nbspark.spine.streaming import plan_stream, run_stream
from nbspark.spine.training import check_recount
from nbspark.storage.counts import read_count_table
from nbspark.storage.locations import location
from nbspark.storage.manifests import counted_files, load_manifest

from ..conftest import ROOT
from ..naive_bayes.test_jobs_one_label import WEATHER

pytestmark = pytest.mark.spark

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def nb_lines(n: int, seed: int) -> list[str]:
    """``n`` tsv documents over a small vocabulary (a plain-Python generator), with one bad line."""
    rng = random.Random(seed)
    lines = [
        f"d{i}\t{rng.choice('xyz')}\t{' '.join(rng.choices(WORDS, k=rng.randint(1, 6)))}\n" for i in range(n)
    ]
    lines.insert(n // 2, "a line without tabs\n")
    return lines


FAMILIES = {
    "backoff": (BACKOFF, {"train.format": "ngrams"}, count_ddl("ABCDE")),
    "naive_bayes": (
        NAIVE_BAYES,
        {"task": "naive_bayes", "train.format": "tsv", "nb.tokenizer": "words"},
        COUNT_DDL,
    ),
}


def source_lines(name: str) -> list[str]:
    if name == "backoff":
        return (ROOT / "tests" / "data" / "ngrams.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    return nb_lines(30, 5)


def rows(model) -> list[tuple]:
    model = location(model)
    manifest = load_manifest(model, ("nbspark.backoff-counts", "nbspark.nb-counts"))
    ddl = COUNT_DDL if manifest["kind"] == "nbspark.nb-counts" else count_ddl("ABCDE")
    table = read_count_table(model, ddl, manifest)
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=lambda r: tuple(map(str, r)))


def batch_model(spark, name: str, folder: Path, out: Path) -> list[tuple]:
    family, settings_, _ = FAMILIES[name]
    cfg = load_config(None, {**settings_, "train.path": str(folder)})
    trainer = train if name == "backoff" else train_nb
    trainer(spark, cfg, resolve_input(cfg.train, None), out)
    return rows(out)


def stream(spark, name: str, watch, model, checkpoint=None, **options):
    family, settings_, _ = FAMILIES[name]
    cfg = load_config(None, {**settings_, **options.pop("settings", {})})
    plan = plan_stream(cfg, family, model, watch, checkpoint, available_now=True, **options)
    return run_stream(spark, plan)


def write_parts(lines: list[str], folder: Path, parts: int) -> list[Path]:
    """The lines in ``parts`` files, written in a side folder (moved into the watched one whole)."""
    folder.mkdir(parents=True, exist_ok=True)
    size = -(-len(lines) // parts)
    paths = []
    for i in range(parts):
        path = folder / f"part-{i}.txt"
        path.write_text("".join(lines[i * size : (i + 1) * size]), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.mark.parametrize("name", FAMILIES)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_streamed_in_any_order_and_split_equals_the_batch_train(spark, name, data):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        parts = write_parts(source_lines(name), tmp / "side", 3)
        want = batch_model(spark, name, tmp / "side", tmp / "batch")
        order = data.draw(st.permutations(parts))
        cut = data.draw(st.integers(1, 3))  # files in the first round; the rest in a restarted stream
        below = data.draw(st.sampled_from([0.0, 64.0]))  # each batch counted by Spark, or in process
        (tmp / "watch").mkdir()
        for round_ in (order[:cut], order[cut:]):
            for path in round_:
                # moved in whole, at the top or in a subdirectory (read as a batch train reads them)
                into = tmp / "watch" / data.draw(st.sampled_from(["", "2026/11"]))
                into.mkdir(parents=True, exist_ok=True)
                path.rename(into / path.name)
            if round_:
                files = data.draw(st.integers(1, 2))
                stream(spark, name, tmp / "watch", tmp / "model", max_files=files, in_process_below_mb=below)
        assert rows(tmp / "model") == want
        manifest = load_manifest(location(tmp / "model"), FAMILIES[name][0].kind)
        assert manifest["stats"]["lines_read"] == len(source_lines(name))
        assert manifest["version"] == len(
            manifest.get("parts", [None])
        )  # one version per batch, a delta each


def test_an_nbspark_output_under_the_watched_directory_is_left_out_as_a_batch_train_leaves_it(
    spark, tmp_path
):
    """The stream reads subdirectories, as training does; results written inside the watched
    directory (a marker beside Parquet) are not read as text by either."""
    watch = tmp_path / "watch"
    write_parts(source_lines("naive_bayes"), watch, 2)
    results = watch / "2026" / "scored"
    results.mkdir(parents=True)
    (results / "_nbspark.json").write_text("{}")
    (results / "part-00000.parquet").write_bytes(b"PAR1\x00\x01 d1\tx\tnot text at all\n")
    want = batch_model(spark, "naive_bayes", watch, tmp_path / "batch")
    stream(spark, "naive_bayes", watch, tmp_path / "model")
    assert rows(tmp_path / "model") == want
    held = counted_files(load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind)["inputs"])
    assert sorted(location(f).name for f in held) == ["part-0.txt", "part-1.txt"]


def test_a_watched_directory_named_with_glob_characters_is_watched_literally(spark, tmp_path):
    """``in[1]`` beside ``in1``: Spark's file source globs its path, and unescaped watched ``in1``,
    counting another directory's files in silence."""
    lines = source_lines("naive_bayes")
    write_parts(lines[:20], tmp_path / "in[1]", 2)
    write_parts(lines[20:], tmp_path / "in1", 1)
    want = batch_model(spark, "naive_bayes", tmp_path / "in[1]", tmp_path / "batch")
    stream(spark, "naive_bayes", tmp_path / "in[1]", tmp_path / "model")
    assert rows(tmp_path / "model") == want
    held = counted_files(load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind)["inputs"])
    assert sorted(str(location(f).parent) for f in held) == [str(tmp_path / "in[1]")] * 2


def test_a_batchs_files_are_read_from_sparks_checkpoint_as_its_frame_holds_them(spark, tmp_path, monkeypatch):
    """``spine.streaming._logged_files``: each batch's files from the checkpoint's logs (no Spark job)
    equal its frame's rows (paths, modification times, sizes), for names Spark's log encodes (a
    space, brackets, ``%``, non-ASCII), across the file-source log's compaction (every 10 of its
    batches) and for a batch of several files; the frame is read only where the logs are not there."""
    import nbspark.spine.streaming as streaming

    seen, asked = [], []
    logged_files = streaming._logged_files

    def both(checkpoint, frame, batch_id):
        logged = logged_files(checkpoint, batch_id)
        collected = [
            (location(r.path).uri, r.modificationTime.timestamp(), r.length) for r in frame.collect()
        ]
        seen.append((batch_id, sorted(logged), sorted(collected)))
        return logged

    def none_logged(checkpoint, batch_id):
        asked.append(batch_id)

    monkeypatch.setattr(streaming, "_batch_files", both)
    lines = source_lines("naive_bayes")
    names = ["a b.txt", "in[1].txt", "100%.txt", "ü.txt"] + [f"p{i}.txt" for i in range(8)]
    (tmp_path / "in").mkdir()
    for i, name in enumerate(names):
        (tmp_path / "in" / name).write_text("".join(lines[2 * i : 2 * i + 2]), encoding="utf-8")
    stream(spark, "naive_bayes", tmp_path / "in", tmp_path / "model", max_files=1)
    for i in range(3):
        (tmp_path / "in" / f"more{i}.txt").write_text(lines[25 + i], encoding="utf-8")
    stream(spark, "naive_bayes", tmp_path / "in", tmp_path / "model")
    assert [b for b, _, _ in seen] == list(range(len(names) + 1))
    assert all(logged == collected for _, logged, collected in seen)
    assert sorted(location(f).name for _, logged, _ in seen for f, _, _ in logged) == sorted(
        names + [f"more{i}.txt" for i in range(3)]
    )
    assert (
        len(seen[-1][1]) == 3
        and (tmp_path / "model.stream" / "checkpoint" / "sources" / "0" / "9.compact").exists()
    )
    want = batch_model(spark, "naive_bayes", tmp_path / "in", tmp_path / "batch")
    monkeypatch.undo()
    monkeypatch.setattr(streaming, "_logged_files", none_logged)  # the frame's rows instead
    stream(spark, "naive_bayes", tmp_path / "in", tmp_path / "again")
    assert asked == [0] and rows(tmp_path / "again") == rows(tmp_path / "model") == want


def test_a_watched_directory_that_goes_is_said_once_and_once_when_it_is_back(tmp_path, caplog):
    """Spark's file source lists a missing directory as empty: a stream whose directory was removed
    counted nothing and said nothing. The stream's loop looks each second (``_watch_gone``)."""
    from nbspark.spine.streaming import _watch_gone

    watch = tmp_path / "inbox"
    watch.mkdir()
    caplog.set_level("INFO", logger="nbspark")
    gone = False
    for step in ("there", "remove", "still gone", "back", "still there"):
        if step == "remove":
            watch.rmdir()
        elif step == "back":
            watch.mkdir()
        gone = _watch_gone(location(watch), gone)
        assert gone == (step in ("remove", "still gone")), step
    assert [r.getMessage() for r in caplog.records] == [
        f"{watch}: the watched directory is gone; no file is counted until it is back",
        f"{watch}: the watched directory is back",
    ]


def test_a_checkpoint_or_progress_file_in_the_watched_directory_is_refused(tmp_path):
    """Both would be written where the stream reads its input: Spark's offsets and the progress JSON
    counted as documents."""
    (tmp_path / "watch").mkdir()
    family, settings_, _ = FAMILIES["naive_bayes"]
    cfg = load_config(None, settings_)
    for where in ({"checkpoint": tmp_path / "watch" / "state"}, {"progress": tmp_path / "watch" / "p.json"}):
        checkpoint = where.pop("checkpoint", None)
        options = {k: location(v) for k, v in where.items()}
        with pytest.raises(OutputError, match="would lie in the watched directory"):
            plan_stream(cfg, family, tmp_path / "model", tmp_path / "watch", checkpoint, **options)
    assert plan_stream(
        cfg, family, tmp_path / "model", tmp_path / "watch", progress=location(tmp_path / "p.json")
    )


def test_a_watched_path_that_is_no_directory_is_refused_for_what_it_is(tmp_path):
    family, settings_, _ = FAMILIES["naive_bayes"]
    cfg = load_config(None, settings_)
    with pytest.raises(InputError, match="watch: the watched directory does not exist"):
        plan_stream(cfg, family, tmp_path / "model", tmp_path / "watch")
    (tmp_path / "watch").write_text("d1\tx\ta line\n")
    with pytest.raises(InputError, match="watch: a file, not a directory; watch the directory files are"):
        plan_stream(cfg, family, tmp_path / "model", tmp_path / "watch")


def test_a_batch_replayed_after_its_commit_adds_nothing(spark, tmp_path):
    """Spark's commit log is written after foreachBatch returns: a driver dying between the two
    replays the batch, with the same id and files; the model holds it already."""
    write_parts(source_lines("backoff"), tmp_path / "watch", 3)
    stream(spark, "backoff", tmp_path / "watch", tmp_path / "model", max_files=1)
    before = load_manifest(location(tmp_path / "model"), BACKOFF.kind)
    commits = tmp_path / "model.stream" / "checkpoint" / "commits"
    (commits / "2").unlink()  # the last batch's commit lost: Spark replays batch 2
    checkpoint = tmp_path / "model.stream" / "checkpoint"  # written without Hadoop's checksums, its
    assert not list(checkpoint.rglob("*.crc"))  # file source's log too (made when its first batch is planned)
    assert stream(spark, "backoff", tmp_path / "watch", tmp_path / "model", max_files=1) == 0
    after = load_manifest(location(tmp_path / "model"), BACKOFF.kind)
    assert after["version"] == before["version"] == 3
    assert rows(tmp_path / "model") == batch_model(spark, "backoff", tmp_path / "watch", tmp_path / "batch")
    assert (commits / "2").exists()


def test_a_batch_of_empty_and_blank_files_commits_no_version(spark, tmp_path, caplog, capsys):
    """A version records what its batch counted; files that hold nothing but blank lines give it
    nothing to record, so the model stays at its version (issue 37: a batch that counted something),
    and a new model waits for files that hold something (a first batch of them stopped the stream,
    and its restart replayed the same batch)."""
    watch = tmp_path / "watch"
    watch.mkdir()
    (watch / "first.txt").write_text("\n")
    sets = ("task=naive_bayes", "train.format=tsv", "nb.tokenizer=words")
    argv = [
        *(a for s in sets for a in ("--set", s)),
        "--watch",
        str(watch),
        "--model",
        str(tmp_path / "model"),
    ]
    assert stream_main([*argv, "--available-now"], prog="nbspark stream") == 0
    said = capsys.readouterr().out
    assert said == f"{tmp_path / 'model'}: 0 version(s) committed by this run; " + (
        "no model yet: no file held a line to count\n"
    )
    assert not (tmp_path / "model").exists()
    write_parts(nb_lines(10, 3)[:4], watch, 1)
    assert stream(spark, "naive_bayes", watch, tmp_path / "model") == 1
    (watch / "empty.txt").write_text("")
    (watch / "blank.txt").write_text("\n  \n\n")
    with caplog.at_level("INFO", logger="nbspark"):
        assert stream(spark, "naive_bayes", watch, tmp_path / "model") == 0
    assert "2 file(s) with nothing to count; its 3 lines are all blank; no new version" in caplog.text
    assert load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind)["version"] == 1
    assert not (tmp_path / "model" / "versions").exists()
    (watch / "more.txt").write_text("d50\tx\talpha beta\n")
    assert stream(spark, "naive_bayes", watch, tmp_path / "model") == 1
    assert load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind)["version"] == 2


def test_sigkill_in_a_commit_then_a_restart_equals_the_batch_train(spark, tmp_path):
    """The driver dies in its second batch's commit with the delta staged but not in place; the
    restart replays that batch and dies in its commit again, the version now in place but not in
    Spark's commit log. The next restart on the same checkpoint ends as a batch train."""
    parts = write_parts(nb_lines(40, 11), tmp_path / "side", 4)
    (tmp_path / "watch").mkdir()
    parts[0].rename(tmp_path / "watch" / parts[0].name)
    stream(spark, "naive_bayes", tmp_path / "watch", tmp_path / "model")  # version 1, the base
    for path in parts[1:]:
        path.rename(tmp_path / "watch" / path.name)
    args = [
        sys.executable, "-m", "nbspark", "stream", "--watch", str(tmp_path / "watch"), "--model",
        str(tmp_path / "model"), "--available-now", "--max-files-per-batch", "1",
        "--set", "task=naive_bayes", "--set", "train.format=tsv", "--set", "nb.tokenizer=words",
        "--conf", "spark.ui.enabled=false",
    ]  # fmt: skip
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    for point, version in (("staged", 1), ("committed", 2)):
        (tmp_path / point).mkdir()
        killed = subprocess.run(
            args,
            env={**env, "NBSPARK_FAULT": f"kill-driver@{point}:{tmp_path / point}"},
            capture_output=True,
            timeout=300,
        )
        said = killed.stderr.decode()[-2000:]
        assert killed.returncode == -9 and (tmp_path / point / "fired").exists(), said
        assert load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind)["version"] == version
    resumed = subprocess.run(args, env=env, capture_output=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    assert load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind)["version"] == 4
    assert rows(tmp_path / "model") == batch_model(
        spark, "naive_bayes", tmp_path / "watch", tmp_path / "batch"
    )
    staged = [p.name for p in (tmp_path / "model" / "versions").iterdir() if p.name.startswith(".")]
    assert staged == []  # what the killed runs staged was removed


def test_compaction_folds_the_deltas_and_keeps_table_and_version(spark, tmp_path, capsys):
    write_parts(source_lines("backoff"), tmp_path / "watch", 4)
    progress = location(tmp_path / "progress.json")
    stream(
        spark,
        "backoff",
        tmp_path / "watch",
        tmp_path / "model",
        max_files=1,
        compact_every=2,
        progress=progress,
        in_process_below_mb=0.0,  # each batch counted by Spark (by itself it would be in process)
    )
    last = json.loads((tmp_path / "progress.json").read_text())  # the last batch's summary, for a dashboard
    assert {k: last[k] for k in ("version", "batch", "files", "batches_committed", "engine")} == {
        "version": 4,
        "batch": 3,
        "files": 1,
        "batches_committed": 4,
        "engine": "arrow",
    }
    # files of 3, 3, 3 and 2 lines, taken in the file source's order
    assert last["lag_seconds"] >= 0 and last["lines"] in (2, 3) and "examples" in last
    manifest = load_manifest(location(tmp_path / "model"), BACKOFF.kind)
    # versions 1 (the base) 2 3: compacted at 3 (two deltas); 4 a delta again
    assert manifest["version"] == 4 and len(manifest["parts"]) == 2
    assert manifest["compacted"]["parts"] == 3
    want = batch_model(spark, "backoff", tmp_path / "watch", tmp_path / "batch")
    assert rows(tmp_path / "model") == want
    model = str(tmp_path / "model")
    assert stream_main(["--set", "train.format=ngrams", "--model", model, "--compact"]) == 0  # on demand
    assert capsys.readouterr().out.strip() == f"{model}: compacted (version 4)"
    done = load_manifest(location(model), BACKOFF.kind)
    assert done["version"] == 4 and "parts" not in done and "bounds" not in done
    assert not (tmp_path / "model" / "versions").exists()
    batch = load_manifest(location(tmp_path / "batch"), BACKOFF.kind)
    assert done["distinct_events"] == batch["distinct_events"]  # counted again, exact
    assert done["label_counts"] == batch["label_counts"] and done["count_rows"] == batch["count_rows"]
    assert rows(tmp_path / "model") == want
    # the four batches' updates are one, naming the four files; a file of them is refused again
    watched = sorted(str(p) for p in (tmp_path / "watch").iterdir())
    assert [(u["batches"], sorted(counted_files(u["inputs"]))) for u in done["updates"]] == [(4, watched)]
    with pytest.raises(
        InputError, match=r"part-2.txt was already counted into this model \(a stream's batches until"
    ):
        check_recount(done, type("Inputs", (), {"files": [location(watched[2])]}), force=False)
    cfg = load_config(None, FAMILIES["backoff"][1])
    assert compact(spark, location(model), BACKOFF, cfg) is None  # nothing to fold


def test_a_batch_trained_model_is_streamed_into_and_the_stream_updated(spark, tmp_path):
    parts = write_parts(source_lines("naive_bayes"), tmp_path / "side", 3)
    cfg = load_config(None, {**FAMILIES["naive_bayes"][1], "train.path": str(parts[0])})
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "model")
    (tmp_path / "watch").mkdir()
    parts[1].rename(tmp_path / "watch" / parts[1].name)
    stream(spark, "naive_bayes", tmp_path / "watch", tmp_path / "model")
    assert load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind)["version"] == 2  # 1: the batch train
    cfg = load_config(None, {**FAMILIES["naive_bayes"][1], "train.path": str(parts[2])})
    updated = train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "model", update=True)
    assert (
        updated["version"] == 3 and "parts" not in updated and not (tmp_path / "model" / "versions").exists()
    )
    everything = tmp_path / "all"
    everything.mkdir()
    for path in (parts[0], tmp_path / "watch" / parts[1].name, parts[2]):
        shutil.copy(path, everything / path.name)
    assert rows(tmp_path / "model") == batch_model(spark, "naive_bayes", everything, tmp_path / "batch")
    # a new checkpoint would count the watched file again: refused, as --update refuses it
    with pytest.raises(InputError, match="already counted into this model"):
        stream(spark, "naive_bayes", tmp_path / "watch", tmp_path / "model", tmp_path / "other-checkpoint")
    assert load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind)["version"] == 3


def test_permissive_names_bad_lines_failfast_stops_and_keeps_the_last_version(spark, tmp_path):
    watch = tmp_path / "watch"
    write_parts(nb_lines(10, 3)[:4], watch, 1)
    stream(spark, "naive_bayes", watch, tmp_path / "model")
    (tmp_path / "bad.txt").write_text("d90\tx\talpha\nno tabs here\n")
    (tmp_path / "bad.txt").rename(watch / "bad.txt")
    with pytest.raises(InputError, match=r"bad.txt:2"):
        stream(spark, "naive_bayes", watch, tmp_path / "model", settings={"mode": "failfast"})
    assert load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind).get("version") == 1
    stream(spark, "naive_bayes", watch, tmp_path / "model")  # permissive: counted, the line named
    delta = json.loads((tmp_path / "model" / "versions" / "v00000002" / "manifest.json").read_text())
    assert delta["stats"]["malformed"] == 1 and delta["stats"]["documents"] == 1
    assert [(Path(b["source"]).name, b["line_number"]) for b in delta["malformed_examples"]] == [
        ("bad.txt", 2)
    ]


@pytest.mark.parametrize("in_process_below_mb", [64.0, 0.0])
def test_a_gz_cut_short_stops_the_stream_naming_it_and_the_model_keeps_its_version(
    spark, tmp_path, in_process_below_mb
):
    """Issue 37: a truncated file gets a clear error. Counted by Spark, Hadoop's reader names no file."""
    import gzip

    watch = tmp_path / "watch"
    write_parts(nb_lines(10, 3)[:4], watch, 1)
    stream(spark, "naive_bayes", watch, tmp_path / "model")
    packed = gzip.compress("".join(nb_lines(3000, 4)).encode())
    (tmp_path / "cut.txt.gz").write_bytes(packed[: len(packed) // 2])
    (tmp_path / "cut.txt.gz").rename(watch / "cut.txt.gz")
    with pytest.raises(InputError, match=r"cut\.txt\.gz: cannot be read as gzip \(Compressed file ended"):
        stream(spark, "naive_bayes", watch, tmp_path / "model", in_process_below_mb=in_process_below_mb)
    assert load_manifest(location(tmp_path / "model"), NAIVE_BAYES.kind)["version"] == 1


def test_a_second_stream_on_a_model_is_refused_unless_it_resumes(spark, tmp_path):
    write_parts(source_lines("backoff"), tmp_path / "watch", 2)
    stream(spark, "backoff", tmp_path / "watch", tmp_path / "model")
    lock = tmp_path / "model.stream" / "lock.json"
    checkpoint = location(tmp_path / "model.stream" / "checkpoint").uri
    alive = subprocess.Popen(["sleep", "60"])
    try:
        held = {"checkpoint": checkpoint, "host": os.uname().nodename, "pid": alive.pid}
        lock.write_text(json.dumps({**held, "checkpoint": "file:/elsewhere"}))
        with pytest.raises(
            OutputError,
            match=r"a stream \(checkpoint file:/elsewhere, .*\) writes this model; resume that stream",
        ):
            stream(spark, "backoff", tmp_path / "watch", tmp_path / "model")
        lock.write_text(json.dumps(held))
        with pytest.raises(OutputError, match="this checkpoint's stream runs already"):
            stream(spark, "backoff", tmp_path / "watch", tmp_path / "model")
        cfg = load_config(None, {**FAMILIES["backoff"][1], "train.path": str(tmp_path / "watch")})
        with pytest.raises(OutputError, match="a stream writes this model .* cannot --update it"):
            train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "model", update=True, force=True)
        with pytest.raises(OutputError, match=r"cannot --overwrite it meanwhile: stop it first$"):
            train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "model", overwrite=True)
    finally:
        alive.kill()
        alive.wait()
    assert stream(spark, "backoff", tmp_path / "watch", tmp_path / "model") == 0  # its process died: resumed
    assert not lock.exists()


def test_a_model_fitted_on_a_count_matrix_is_refused_to_a_stream_and_an_update(spark, tmp_path):
    """A model ``nbspark.NaiveBayes`` fitted on a count matrix has the matrix's columns for its
    vocabulary; a training input's words (here one column's token among others) would become features
    of no column, scored in every matrix in silence. Refused before anything is counted."""
    X = [[1, 0, 2], [0, 3, 1], [2, 2, 0]]
    nbspark.NaiveBayes(tokenizer="words").fit(X, ["x", "y", "x"]).save(tmp_path / "model")
    (tmp_path / "watch").mkdir()
    (tmp_path / "watch" / "f.tsv").write_text("d1\ty\tx1 x1 x2\nd2\tx\tx0 hello\n")
    refused = "cannot update: the model was fitted on a count matrix of 3 columns"
    with pytest.raises(InputError, match=refused):
        stream(spark, "naive_bayes", tmp_path / "watch", tmp_path / "model")
    cfg = load_config(None, {**FAMILIES["naive_bayes"][1], "train.path": str(tmp_path / "watch")})
    with pytest.raises(InputError, match=refused):
        train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "model", update=True)
    loaded = nbspark.load(tmp_path / "model")
    assert loaded.manifest["version"] == 1 and sorted(loaded.model.vocab) == ["x0", "x1", "x2"]


@pytest.mark.parametrize("where", ["local", "viewfs"])
def test_readers_see_versions_that_only_go_up_each_whole(spark, tmp_path, viewfs, where):
    side = tmp_path / "side"
    write_parts(nb_lines(99, 2), side, 50)  # 100 lines, 2 a file: 50 commits
    base = viewfs[0] if where == "viewfs" else str(tmp_path)
    local = viewfs[1] if where == "viewfs" else tmp_path
    (local / "watch").mkdir()
    seen, errors, done = [], [], threading.Event()

    def reader():
        while not done.is_set():
            try:
                if (local / "model" / "manifest.json").exists():
                    # every part's rows are checked against its manifest's count_rows as it is read
                    model = nbspark.load(f"{base}/model")
                    model.predict(["alpha beta"])
                    seen.append(model.manifest["version"])
            except Exception as exc:
                errors.append(exc)
            time.sleep(0.05)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for path in sorted(side.iterdir()):
            shutil.copy(path, local / "watch" / f".{path.name}")
            (local / "watch" / f".{path.name}").rename(local / "watch" / path.name)
        stream(spark, "naive_bayes", f"{base}/watch", f"{base}/model", max_files=1, compact_every=7)
    finally:
        done.set()
        thread.join()
    assert not errors, errors[:3]
    assert seen == sorted(seen) and len(set(seen)) >= 10 and seen[-1] <= 50
    assert load_manifest(location(f"{base}/model"), NAIVE_BAYES.kind)["version"] == 50


def test_the_python_api_and_a_stream_take_turns_on_one_model(spark, tmp_path):
    """``update`` (backoff windows) and ``save`` between two streams: the table equals the batch
    train on everything. The windows are lines 1-5 of ngrams.txt, parsed by hand."""
    lines = source_lines("backoff")
    write_parts(lines[5:8], tmp_path / "watch", 1)
    stream(spark, "backoff", tmp_path / "watch", tmp_path / "model")
    model = nbspark.load(tmp_path / "model")
    by_hand = [line.split("\t") for line in lines[:5]]
    model.update([text.split() for text, _ in by_hand], [int(n) for _, n in by_hand])
    assert model.predict(["would not _ the outcome"]).tolist() == ["affect"]
    assert model.save() == 2
    write_parts(lines[8:], tmp_path / "more", 1)[0].rename(tmp_path / "watch" / "part-1.txt")
    stream(spark, "backoff", tmp_path / "watch", tmp_path / "model")
    manifest = load_manifest(location(tmp_path / "model"), BACKOFF.kind)
    assert manifest["version"] == 3 and manifest["stats"]["weight"] == 34
    assert manifest["label_counts"] == {"affect": 11, "effect": 23}
    everything = tmp_path / "all"
    write_parts(lines, everything, 1)
    assert rows(tmp_path / "model") == batch_model(spark, "backoff", everything, tmp_path / "batch")
    with pytest.raises(ValueError, match="window 0: its centre is '_'"):
        model.update(["would not _ the outcome"])


@pytest.mark.parametrize("in_process_below_mb", [64.0, 0.0])
def test_a_streamed_table_without_the_label_column_names_its_file(spark, tmp_path, in_process_below_mb):
    """Counted in this process or by Spark, the batch's one file is named, not the watched
    directory (a directory of files arriving all day): the user knows which file to fix."""
    (tmp_path / "watch").mkdir()
    (tmp_path / "watch" / "t.csv").write_text(
        "outlook,temperature,humidity,windy,result\nsunny,85,85,no,no\n"
    )
    cfg = load_config(None, {**WEATHER, "train.format": "csv"})
    plan = plan_stream(
        cfg,
        NAIVE_BAYES,
        tmp_path / "model",
        tmp_path / "watch",
        available_now=True,
        in_process_below_mb=in_process_below_mb,
    )
    with pytest.raises(InputError, match=rf"^{tmp_path}/watch/t.csv: no label column 'play' \(columns: "):
        run_stream(spark, plan)
    assert not (tmp_path / "model").exists()


@pytest.mark.parametrize("in_process_below_mb", [64.0, 0.0])
def test_a_batch_of_empty_table_files_commits_nothing_and_a_new_model_waits(
    spark, tmp_path, caplog, in_process_below_mb
):
    """An empty CSV file has no header, so no label column: the stream stopped ("no label column
    'play' (columns: )") and, the batch replayed on restart, stopped again until the file was
    removed. Now, as for empty text files, such a batch commits nothing, counted in this process
    or by Spark, and the model waits for a batch that holds a row (version 1, then 2)."""
    watch, model = tmp_path / "watch", tmp_path / "model"
    watch.mkdir()
    (watch / "a.csv").write_text("")
    cfg = load_config(None, {**WEATHER, "train.format": "csv"})

    def run():
        plan = plan_stream(
            cfg, NAIVE_BAYES, model, watch, available_now=True, in_process_below_mb=in_process_below_mb
        )
        return run_stream(spark, plan)

    with caplog.at_level("INFO", logger="nbspark"):
        assert run() == 0
    assert "batch 0: 1 file(s) with nothing to count; its files are empty; no model yet" in caplog.text
    assert not (model / "manifest.json").exists()
    (watch / "b.csv").write_text("outlook,temperature,humidity,windy,play\nsunny,85,85,no,no\n")
    assert run() == 1
    (watch / "c.csv").write_text("\n")
    assert run() == 0
    (watch / "d.csv").write_text("outlook,temperature,humidity,windy,play\nrainy,70,96,no,yes\n")
    assert run() == 1
    manifest = load_manifest(location(model), NAIVE_BAYES.kind)
    assert manifest["version"] == 2 and manifest["label_counts"] == {"no": 1, "yes": 1}


@pytest.mark.parametrize("name", FAMILIES)
def test_the_classify_job_on_a_streamed_model_equals_it_on_the_batch_model(spark, tmp_path, name):
    """The Spark readers sum the parts too: the classify job's metrics on a model of a base and deltas
    equal those on the batch-trained model."""
    from nbspark.backoff.jobs import classify
    from nbspark.naive_bayes.jobs import classify_nb

    write_parts(source_lines(name), tmp_path / "watch", 3)
    stream(spark, name, tmp_path / "watch", tmp_path / "model", max_files=1, in_process_below_mb=0.0)
    assert len(load_manifest(location(tmp_path / "model"), FAMILIES[name][0].kind)["parts"]) == 3
    batch_model(spark, name, tmp_path / "watch", tmp_path / "batch")
    if name == "backoff":
        test = {
            "test.format": "reuters",
            "test.path": str(ROOT / "tests" / "data" / "mini.sgm"),
            "test.splits": "TRAIN,TEST",
        }
        job = classify
    else:
        (tmp_path / "test.tsv").write_text("".join(nb_lines(12, 99)))
        test = {"test.format": "tsv", "test.path": str(tmp_path / "test.tsv")}
        job = classify_nb
    cfg = load_config(None, {**FAMILIES[name][1], **test})
    metrics = [
        job(
            spark, cfg, location(tmp_path / m), resolve_input(cfg.test, None), location(tmp_path / f"{m}-out")
        )
        for m in ("model", "batch")
    ]
    run = ("seconds", "created", "model", "results", "model_dir")  # what names the run, not the answer
    same = [{k: v for k, v in m.items() if k not in run} for m in metrics]
    assert same[0] == same[1] and metrics[0].get("examples", metrics[0].get("documents", 0)) > 0


@pytest.mark.parametrize(
    "fmt, source, settings_",
    [
        ("reuters", "mini.sgm", {"train.format": "reuters", "train.splits": "TRAIN,TEST"}),
        ("csv", "weather.csv", {**WEATHER, "train.format": "csv"}),
        ("parquet", "weather.csv", {**WEATHER, "train.format": "parquet"}),
    ],
)
def test_other_input_formats_stream_as_they_train(spark, tmp_path, fmt, source, settings_):
    """Reuters SGML (only *.sgm, .sgm.gz and .sgm.bz2 are read: a README beside them is not) and a
    CSV table: streamed equals batch. The table's columns are named: inferred, they are the first
    batch's inference (later batches read with the model's, as --update does), which a batch train
    over every row may not share (weather.csv's last row has temperature "warm")."""
    family = BACKOFF if fmt == "reuters" else NAIVE_BAYES
    (tmp_path / "watch").mkdir()
    (tmp_path / "side").mkdir()
    text = (ROOT / "tests" / "data" / source).read_bytes()
    if fmt == "reuters":
        shutil.copy(ROOT / "tests" / "data" / source, tmp_path / "watch" / "a.sgm")
        (tmp_path / "watch" / "README.txt").write_text("not SGML <REUTERS> at all\n")
        shutil.copy(ROOT / "tests" / "data" / source, tmp_path / "side" / "a.sgm")
        for where in ("watch", "side"):  # compressed, read by the same rule (a .sgm.gz was left out)
            (tmp_path / where / "b.sgm.gz").write_bytes(gzip.compress(text))
    else:
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        lines = text.decode().splitlines(keepends=True)
        for i, part in enumerate((lines[1:8], lines[8:])):
            table = (lines[0] + "".join(part)).encode()
            for where in ("watch", "side"):
                if fmt == "csv":
                    (tmp_path / where / f"t{i}.csv").write_bytes(table)
                else:  # every cell as its text; a batch of one file each (a stream read them all: 11)
                    header = lines[0].strip().split(",")
                    types = pacsv.ConvertOptions(column_types={c: pa.string() for c in header})
                    parsed = pacsv.read_csv(pa.BufferReader(table), convert_options=types)
                    pq.write_table(parsed, str(tmp_path / where / f"t{i}.parquet"))
    cfg = load_config(None, settings_)
    run_stream(
        spark,
        plan_stream(cfg, family, tmp_path / "model", tmp_path / "watch", available_now=True, max_files=1),
    )
    batch = load_config(None, {**settings_, "train.path": str(tmp_path / "side")})
    (train if fmt == "reuters" else train_nb)(
        spark, batch, resolve_input(batch.train, None), tmp_path / "batch"
    )
    assert rows(tmp_path / "model") == rows(tmp_path / "batch")
    streamed = load_manifest(location(tmp_path / "model"), family.kind)
    files = [Path(f).name for u in streamed["updates"] for f in u["inputs"]["files"]]
    assert sorted(files) == {"reuters": ["a.sgm", "b.sgm.gz"], "csv": ["t0.csv", "t1.csv"]}.get(
        fmt, ["t0.parquet", "t1.parquet"]
    )  # a version a file
    assert streamed["version"] == len(files)


@pytest.mark.parametrize(
    "family, settings_, files",
    [
        (  # c.txt's byte 0xff is not UTF-8: read as U+FFFD, and its batch's line says so
            BACKOFF,
            {"train.format": "text"},
            {
                "a.txt": "Would the cuts affect the outcome?\n",
                "b.txt": None,
                "c.txt": b"Its effect \xff was nil.\n",
            },
        ),
        (NAIVE_BAYES, {"task": "naive_bayes", "train.format": "reuters_topics"}, {"a.sgm": "mini.sgm"}),
    ],
    ids=["text", "reuters_topics"],
)
@pytest.mark.parametrize("below", [0.0, 64.0])
def test_plain_text_and_reuters_topics_stream_as_they_train(
    spark, tmp_path, caplog, family, settings_, files, below
):
    """The formats the other stream tests leave out: a backoff model of plain text files, and a
    naive Bayes model of Reuters' topics, each file a batch counted by Spark or in process: the batch
    train's table."""
    from ..backoff.test_in_process import TEXT

    watch = tmp_path / "watch"
    watch.mkdir()
    for name, content in files.items():
        if content is None:
            (watch / name).write_text(TEXT)
        elif isinstance(content, bytes):
            (watch / name).write_bytes(content)
        elif content.endswith(".sgm"):
            shutil.copy(ROOT / "tests" / "data" / content, watch / name)
        else:
            (watch / name).write_text(content)
    cfg = load_config(None, {**settings_, "train.path": str(watch)})
    trainer = train if family is BACKOFF else train_nb
    trainer(spark, cfg, resolve_input(cfg.train, None), tmp_path / "batch")
    plan = plan_stream(
        load_config(None, settings_),
        family,
        tmp_path / "m",
        watch,
        available_now=True,
        max_files=1,
        in_process_below_mb=below,
    )
    with caplog.at_level("INFO", logger="nbspark"):
        assert run_stream(spark, plan) == len(files)
    assert rows(tmp_path / "m") == rows(tmp_path / "batch") != []
    said = [r.getMessage().split("; ")[-1] for r in caplog.records if "undecodable" in r.getMessage()]
    assert said == (
        ["undecodable bytes replaced by U+FFFD: 1 (is the input UTF-8?)"] if "c.txt" in files else []
    )


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("below", [0.0, 64.0])  # each batch counted by Spark, then in process
def test_google_shards_stream_as_they_train(spark, tmp_path, version, below):
    """Google Books shards, a plain one and a gzip one, one a batch (the gzip one's size looked up
    from Spark's log): the batch train's table, statistics and malformed lines alike."""
    from ..backoff.test_google_filter import shards

    folder = shards(tmp_path, version)
    settings_ = {"train.format": f"google_v{version}", "train.year_min": "1800", "train.min_count": "0"}
    cfg = load_config(None, {**settings_, "train.path": str(folder)})
    batch = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "batch")
    plan = plan_stream(
        load_config(None, settings_),
        BACKOFF,
        tmp_path / "m",
        folder,
        available_now=True,
        max_files=1,
        in_process_below_mb=below,
    )
    assert run_stream(spark, plan) == 2
    assert rows(tmp_path / "m") == rows(tmp_path / "batch")
    streamed = load_manifest(location(tmp_path / "m"), BACKOFF.kind)
    assert streamed["stats"]["lines_read"] == batch["stats"]["lines_read"]
    assert streamed["stats"]["malformed"] == batch["stats"]["malformed"] >= 4
    assert (streamed["engine"] == "local") == (below > 0)


@pytest.mark.parametrize("name", ["backoff", "naive_bayes"])
def test_spark_reads_every_part_of_a_version_in_one_scan_and_names_a_damaged_one(spark, tmp_path, name):
    """``read_counts`` (the join scorer, ``--update``, compaction, the query job) reads a streamed
    version's parts together: their sum is the pyarrow reader's, and a delta whose rows repeat a
    key is refused by its own name (a key repeats across parts, never within one)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nbspark.spine.training import read_counts

    family = FAMILIES[name][0]
    write_parts(source_lines(name), tmp_path / "watch", 3)
    stream(spark, name, tmp_path / "watch", tmp_path / "model", max_files=1)
    model = location(tmp_path / "model")
    manifest = load_manifest(model, family.kind)
    assert len(manifest["parts"]) == 3
    read = read_counts(spark, model, family, manifest)
    assert sorted(map(tuple, read.collect()), key=lambda r: tuple(map(str, r))) == rows(model)
    delta = tmp_path / "model" / "versions" / "v00000003" / "counts"
    (part,) = sorted(delta.glob("part-*.parquet"))
    table = pq.read_table(part)
    pq.write_table(pa.concat_tables([table.slice(0, 1), table.slice(0, table.num_rows - 1)]), part)
    (part.parent / f".{part.name}.crc").unlink(missing_ok=True)
    with pytest.raises(OutputError, match=rf"^{delta}: 1 row\(s\) repeat a key"):
        read_counts(spark, model, family, manifest)


@pytest.mark.parametrize("below", [0.0, 64.0])  # each batch counted by Spark, then in process
def test_a_density_model_streams_as_it_trains(spark, tmp_path, below):
    """A table's CSV files streamed into a density model, one a batch and in reverse order, then
    compacted: the table and the manifest's fields are a batch train's on the same files."""
    from nbspark.density.jobs import DENSITY, train_density_in_process
    from nbspark.density.model import COUNT_DDL as DENSITY_DDL
    from tests.density.test_jobs import TRUTH

    lines = TRUTH.splitlines(keepends=True)
    side, watch = tmp_path / "side", tmp_path / "watch"
    side.mkdir()
    watch.mkdir()
    for i, part in enumerate((lines[1:4], lines[4:7], lines[7:])):
        (side / f"t{i}.csv").write_text(lines[0] + "".join(part))
    settings_ = {"task": "density", "train.format": "csv", "density.weight_column": "weight"}
    train_density_in_process(load_config(None, {**settings_, "train.path": str(side)}), tmp_path / "batch")
    cfg = load_config(None, settings_)
    summaries = []
    for name in ("t2.csv", "t1.csv", "t0.csv"):
        shutil.copy(side / name, watch / name)
        plan = plan_stream(
            cfg, DENSITY, tmp_path / "model", watch, available_now=True, in_process_below_mb=below
        )
        assert run_stream(spark, plan, summaries.append) == 1
    assert [(s["lines"], s["rows"]) for s in summaries] == [(2, 2), (3, 3), (3, 3)]  # a table's rows read
    compact(spark, location(tmp_path / "model"), DENSITY, cfg)

    def table(model):
        manifest = load_manifest(location(model), DENSITY.kind)
        got = read_count_table(location(model), DENSITY_DDL, manifest).to_pylist()
        return manifest, sorted((tuple(r.values()) for r in got), key=lambda r: tuple(map(str, r)))

    (streamed, mine), (batch, theirs) = table(tmp_path / "model"), table(tmp_path / "batch")
    assert [r[:3] for r in mine] == [r[:3] for r in theirs]
    assert [r[3] for r in mine] == pytest.approx([r[3] for r in theirs], abs=1e-12)
    assert streamed["version"] == 3 and "parts" not in streamed
    for key in ("columns", "distinct_rows", "values", "count_rows"):
        assert streamed[key] == batch[key], key
    assert streamed["total"] == pytest.approx(batch["total"]) == 1.0
    assert nbspark.load(tmp_path / "model").probability({"A": "1", "B": "1", "C": "0"}) == pytest.approx(0.25)


def test_a_stream_into_a_model_needs_no_settings_its_config_is_the_models(spark, tmp_path, capsys):
    """``nbspark stream --watch W --model M`` and ``--compact`` of an existing naive Bayes model with
    no --config and no --set: the config M was trained with (a tsv of words), not the embedded one
    (n-gram lines into a backoff model, refused); the table equals the batch train's of both files."""
    parts = write_parts(source_lines("naive_bayes"), tmp_path / "side", 2)
    cfg = load_config(None, {**FAMILIES["naive_bayes"][1], "train.path": str(parts[0])})
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "model")
    (tmp_path / "watch").mkdir()
    parts[1].rename(tmp_path / "watch" / parts[1].name)
    model = str(tmp_path / "model")
    argv = ["--watch", str(tmp_path / "watch"), "--model", model, "--available-now"]
    assert stream_main(argv, prog="nbspark stream") == 0
    assert stream_main(["--model", model, "--compact"], prog="nbspark stream") == 0
    assert f"{model}: compacted (version 2)" in capsys.readouterr().out
    everything = tmp_path / "all"
    everything.mkdir()
    for path in (parts[0], tmp_path / "watch" / parts[1].name):
        shutil.copy(path, everything / path.name)
    assert rows(model) == batch_model(spark, "naive_bayes", everything, tmp_path / "batch")
