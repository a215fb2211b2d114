"""The model's writer lock (``storage.versions.take_writer_lock``): taken by one writer of several
racing for it (an exclusive create, on the local file system and on Hadoop's), given back whole."""

import hashlib
import json
import multiprocessing
import os
import socket
import subprocess
import sys

import pytest

from nbspark.errors import OutputError
from nbspark.storage.locations import location
from nbspark.storage.tables import json_text
from nbspark.storage.versions import lock_location, take_writer_lock


def _race(model: str, start, results) -> None:
    start.wait()
    try:
        take_writer_lock(location(model))
        results.put(("took", os.getpid()))
    except OutputError as exc:
        results.put(("refused", str(exc)))
    start.wait()  # hold it until every racer has tried


@pytest.mark.parametrize("before", ["no lock", "a dead holder's lock"])
def test_of_writers_racing_for_the_lock_one_takes_it(tmp_path, before):
    """Six writers at once, on a free model or on one whose lock a killed writer left: one takes it
    (the takeover of a dead holder's lock is an exclusive create too)."""
    model = str(tmp_path / "model")
    os.mkdir(model)
    if before != "no lock":
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
        lock = lock_location(location(model))
        os.mkdir(os.path.dirname(str(lock)))
        held = {"checkpoint": None, "host": socket.gethostname(), "pid": int(dead.stdout), "started": "x"}
        with open(str(lock), "w") as fh:
            json.dump(held, fh)
    # fresh interpreters: a forked child of a test process whose JVM runs would share its gateway
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(6), context.Queue()
    racers = [context.Process(target=_race, args=(model, start, results)) for _ in range(6)]
    for p in racers:
        p.start()
    for p in racers:
        p.join(30)
    outcomes = [results.get(timeout=5) for _ in racers]
    took = [who for what, who in outcomes if what == "took"]
    assert len(took) == 1, outcomes
    assert all(
        "writes this model" in why or "lock just now" in why for what, why in outcomes if what == "refused"
    )


def test_an_exclusive_create_refuses_what_exists(tmp_path):
    target = location(str(tmp_path / "lock.json"))
    assert target.create_new(b"first") is True
    assert target.create_new(b"second") is False and target.read_bytes() == b"first"


@pytest.mark.spark
def test_an_exclusive_create_on_hadoops_file_systems(spark, viewfs):
    from nbspark.storage.locations import use_hadoop

    use_hadoop()
    uri, behind = viewfs
    target = location(f"{uri}/lock.json")
    assert target.create_new(b"first") is True
    assert target.create_new(b"second") is False and (behind / "lock.json").read_bytes() == b"first"
    local = location(f"file://{behind}/local.json")
    assert local.create_new(b"a") is True and local.create_new(b"b") is False


def test_giving_the_lock_back_leaves_nothing_beside_the_model(tmp_path):
    (tmp_path / "model").mkdir()
    release = take_writer_lock(location(str(tmp_path / "model")))
    assert lock_location(location(str(tmp_path / "model"))).is_file()
    release()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    # a dead holder's lock taken over, then given back: nothing left either (its taken- file goes)
    lock = lock_location(location(str(tmp_path / "model")))
    lock.parent.mkdir()
    lock.write_bytes(b'{"checkpoint": null, "host": "%s", "pid": 999999999}' % socket.gethostname().encode())
    take_writer_lock(location(str(tmp_path / "model")))()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    # and a writer killed between its claim (taken-…) and the lock itself does not block the next
    lock.parent.mkdir()
    lock.write_bytes(b'{"checkpoint": null, "host": "%s", "pid": 999999999}' % socket.gethostname().encode())
    held = json.loads(lock.read_bytes())
    claim = lock.parent / f"taken-{hashlib.sha1(json_text(held).encode()).hexdigest()[:16]}"
    claim.write_bytes(b'{"host": "%s", "pid": 999999998}' % socket.gethostname().encode())
    take_writer_lock(location(str(tmp_path / "model")))()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
