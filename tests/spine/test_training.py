"""The train skeleton's writer rules, in process (no JVM): an ``--overwrite`` of an existing model
holds the model's writer lock, as an update does."""

import json
import os
import subprocess

import pytest

import nbspark
from nbspark.errors import OutputError
from nbspark.naive_bayes.jobs import train_nb_in_process
from nbspark.settings.config import load_config
from nbspark.spine import training
from nbspark.storage.versions import take_writer_lock

SMS = {"task": "naive_bayes", "train.format": "sms"}


def test_an_overwrite_holds_the_models_lock(tmp_path, monkeypatch):
    """Two ``--overwrite`` runs of one model took no lock: the later commit won and the other failed
    at its very end. A live writer's lock (a stream, an update, another overwrite) now refuses an
    overwrite before it counts, and a finished overwrite leaves nothing beside the model."""
    (tmp_path / "a.tsv").write_text("spam\tcheap pills\nham\tlunch at noon\n")
    (tmp_path / "b.tsv").write_text("spam\twin cash\nham\tsee you\nham\tcall me\n")
    cfg = {
        name: load_config(None, {**SMS, "train.path": str(tmp_path / name)}) for name in ("a.tsv", "b.tsv")
    }
    train_nb_in_process(cfg["a.tsv"], tmp_path / "m")
    lock = tmp_path / "m.stream" / "lock.json"
    lock.parent.mkdir()
    alive = subprocess.Popen(["sleep", "30"])
    try:
        for checkpoint, says in (
            (None, r"another writer \(an update, an --overwrite or a save\) writes this model .*cannot "
             r"--overwrite it meanwhile: run it again once it is done"),
            ("file:/ck", r"a stream writes this model .*cannot --overwrite it meanwhile: stop it first"),
        ):  # fmt: skip
            lock.write_text(
                json.dumps({"checkpoint": checkpoint, "host": os.uname().nodename, "pid": alive.pid})
            )
            with pytest.raises(OutputError, match=says):
                train_nb_in_process(cfg["b.tsv"], tmp_path / "m", overwrite=True)
            assert nbspark.load(tmp_path / "m").class_count_.tolist() == [1, 1]  # a's model, whole
    finally:
        alive.kill()
        alive.wait()
    lock.unlink()
    taken = []

    def recorded(model_dir, checkpoint=None):
        taken.append(str(model_dir))
        return take_writer_lock(model_dir, checkpoint)

    monkeypatch.setattr(training, "take_writer_lock", recorded)
    train_nb_in_process(cfg["b.tsv"], tmp_path / "m", overwrite=True)
    assert taken == [str(tmp_path / "m")]  # held through the run
    train_nb_in_process(cfg["a.tsv"], tmp_path / "new")  # a new output: nothing to hold
    assert taken == [str(tmp_path / "m")]
    train_nb_in_process(cfg["b.tsv"], tmp_path / "new", overwrite=True)
    assert nbspark.load(tmp_path / "m").class_count_.tolist() == [2, 1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tsv", "b.tsv", "m", "new"]  # locks given back
