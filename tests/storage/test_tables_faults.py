"""Faults while a model is written (``storage.tables.staged_output``): a SIGKILL in the middle of an
``--update``'s commit, a full disk, and readers in a loop while ``train --overwrite`` swaps the model.
Each leaves one whole model, the old or the new, and nothing a reader trusts beside it."""

import os
import random
import subprocess
import sys
import threading
import time
import uuid

import numpy as np
import pytest

import nbspark
from nbspark.app.command import main as nbspark_main

TSV = ["--set", "task=naive_bayes", "--set", "train.format=tsv", "--set", "nb.tokenizer=words", "-q"]
PROBE = ["w1 w2 w3", "w30 w40 w45 w1"]


def corpus(path, seed: int, documents: int, words: int = 50) -> str:
    """A tsv corpus of two classes, each drawing its words from a vocabulary of its own bias."""
    rng = random.Random(seed)
    lines = []
    for i in range(documents):
        label = rng.choice("ab")
        base = 0 if label == "a" else words // 2
        text = " ".join(f"w{(base + rng.randrange(words)) % words}" for _ in range(8))
        lines.append(f"d{i}\t{label}\t{text}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


def seen(model) -> tuple:
    """What a reader sees of a model: its class counts and the posteriors of two probe texts."""
    loaded = nbspark.load(str(model))
    return tuple(loaded.class_count_), tuple(np.round(loaded.predict_proba(PROBE), 12).ravel())


def command(*args, fault: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    if fault:
        env["NBSPARK_FAULT"] = fault
    cmd = [sys.executable, "-m", "nbspark.app.command", *args]
    return subprocess.run(cmd, env=env, capture_output=True, timeout=300)


def beside(model) -> list[str]:
    """What stands next to the model: nothing of a run's staging, old copy or lock."""
    return sorted(p.name for p in model.parent.iterdir() if p.name != "in")


def test_a_sigkill_during_an_updates_commit_leaves_the_old_model(tmp_path):
    """Killed with everything written and nothing moved (``commit-staged``), then with the old model
    renamed aside and the new one not yet in place (``commit-aside``): the old model is read whole
    (in the second case the first reader puts it back), and the next update counts everything once.
    The runs count in process (no JVM): the commit is ``staged_output``'s, as under Spark, where a
    killed driver is tests/storage/test_hadoop_viewfs.py's."""
    (tmp_path / "in").mkdir()
    a, b = corpus(tmp_path / "in" / "a.tsv", 1, 40), corpus(tmp_path / "in" / "b.tsv", 2, 40)
    model = tmp_path / "m"
    assert nbspark_main(["train", *TSV, "--set", f"train.path={a}", "--out", str(model)]) == 0
    old = seen(model)
    for point in ("commit-staged", "commit-aside"):
        marker = tmp_path / point
        marker.mkdir()
        killed = command(
            "train",
            *TSV,
            "--set",
            f"train.path={b}",
            "--update",
            str(model),
            fault=f"kill-driver@{point}:{marker}",
        )
        assert killed.returncode == -9 and (marker / "fired").exists(), killed.stderr.decode()[-2000:]
        assert model.exists() == (point == "commit-staged")
        assert seen(model) == old  # read whole: as it was, or put back by this first reader
    # the next update in this process: counted here (a small local input), no JVM of its own
    assert nbspark_main(["train", *TSV, "--set", f"train.path={b}", "--update", str(model)]) == 0
    assert (
        nbspark_main(
            ["train", *TSV, "--set", f"train.path={tmp_path / 'in'}", "--out", str(tmp_path / "all")]
        )
        == 0
    )
    assert seen(model) == seen(tmp_path / "all")
    assert beside(model) == ["all", "commit-aside", "commit-staged", "m"]  # no staging, old copy or lock


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs (root only: CI runs as root)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.fixture
def filled(small_disk, tmp_path):
    """``(model, big corpus, what a reader saw of the model)``: a model of 40 documents fits in the
    1 MiB disk; one of 60,000 documents over a million words (~3 MB of counts) does not."""
    model = small_disk / "m"
    (tmp_path / "in").mkdir()
    small = corpus(tmp_path / "in" / "small.tsv", 1, 40)
    big = corpus(tmp_path / "in" / "big.tsv", 2, 60000, words=1_000_000)
    assert nbspark_main(["train", *TSV, "--set", f"train.path={small}", "--out", str(model)]) == 0
    return model, big, seen(model)


def test_a_full_disk_while_a_model_is_written_leaves_the_old_model(filled, capsys):
    """The big model's overwrite fails with one line naming the model, and the old model stays,
    with no staging directory beside it."""
    model, big, old = filled
    capsys.readouterr()
    args = ["train", *TSV, "--set", f"train.path={big}", "--out", str(model), "--overwrite"]
    assert nbspark_main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"nbspark train: error: {model}: no space left on its device while writing it; the old output, "
        "if any, is as it was"
    ]
    assert seen(model) == old and beside(model) == ["m"]


@pytest.mark.spark
def test_a_full_disk_under_spark_leaves_the_old_model(filled):
    """The same with Spark's writers: the job fails with one line naming the device, the old model
    stays, and Spark's staging directory is gone."""
    model, big, old = filled
    # a table of more than one file's rows is Spark's to write (one file's is collected and written
    # by the driver, as in the test above: spine.training.write_counts)
    many = ["--set", "rows_per_file=1000"]
    failed = command(
        "train",
        *TSV,
        *many,
        "--set",
        f"train.path={big}",
        "--out",
        str(model),
        "--overwrite",
        "--spark",
        "--conf",
        "spark.ui.enabled=false",
    )
    lines = failed.stderr.decode().strip().splitlines()
    assert failed.returncode == 1 and "No space left on device" in lines[-1], lines[-5:]
    assert lines[-1].startswith("nbspark train: error: Spark job failed:")
    assert seen(model) == old and beside(model) == ["m"]


def test_readers_in_a_loop_while_overwrite_swaps_the_model_see_one_whole_model(tmp_path):
    """Ten ``train --overwrite`` runs alternate two corpora whose models differ; a reader loops
    ``nbspark.load`` + ``predict_proba`` meanwhile: every read is one of the two models, whole
    (its class counts and its posteriors belong together), and none fails."""
    (tmp_path / "in").mkdir()
    paths = [corpus(tmp_path / "in" / f"{i}.tsv", 10 + i, 30 + 20 * i) for i in range(2)]
    model = tmp_path / "m"
    models = []
    for i, path in enumerate(paths):
        assert (
            nbspark_main(["train", *TSV, "--set", f"train.path={path}", "--out", str(tmp_path / f"ref{i}")])
            == 0
        )
        models.append(seen(tmp_path / f"ref{i}"))
    assert models[0] != models[1]
    assert nbspark_main(["train", *TSV, "--set", f"train.path={paths[0]}", "--out", str(model)]) == 0
    reads, stop = [], threading.Event()

    def reader():
        while not stop.is_set():
            try:
                reads.append(seen(model))
            except Exception as exc:  # any failure is a finding
                reads.append(f"{type(exc).__name__}: {exc} ({uuid.uuid4().hex[:4]})")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for run in range(int(os.environ.get("SWAPS", 10))):
            before = len(reads)
            while len(reads) == before and thread.is_alive():  # a read between each two swaps, at least
                time.sleep(0.001)
            path = paths[(run + 1) % 2]
            assert (
                nbspark_main(
                    ["train", *TSV, "--set", f"train.path={path}", "--out", str(model), "--overwrite"]
                )
                == 0
            )
    finally:
        stop.set()
        thread.join(30)
    assert len(reads) > 10
    assert [r for r in reads if r not in models] == []
    assert {models.index(r) for r in reads} == {0, 1}
