"""A model that grows by versions: the layout, and what a reader takes as the newest whole version.

A model trained in batch is one directory (``counts/``, ``manifest.json``, the marker). A stream
(``spine.streaming``) or ``save`` after ``partial_fit`` adds to it without rewriting its table:
each commit writes only what the batch counted, as a *delta* beside the base::

    MODEL/
      counts/  manifest.json  _nbspark.json      the base: version B (a batch train: 1)
      versions/v00000007/                         a delta: version 7
        counts/  manifest.json  _nbspark.json     ({"kind": "delta"})

Version numbers only go up, one per commit. A delta is written whole or not at all (staged and
renamed into place, ``storage.tables.staged_output``), and only after every lower one, so a
reader takes the base and the complete deltas numbered B+1, B+2, … up to the first gap
(``newest_deltas``): the counts of that version are the sum of those parts. A compaction
(``spine.committing.compact``) writes the summed table as a new base of the same version and the
deltas it folded go with the old base (the whole directory is replaced): a reader that listed
them before gets a file that vanished, reads the model again and sees the compacted version
(``loading.load`` does, three times at most).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import socket

from nbspark.errors import OutputError
from nbspark.storage.locations import Location, location
from nbspark.storage.tables import COMMITTING, MARKER, json_text, process_alive, read_json, write_json

__all__ = [
    "DELTA",
    "VERSIONS",
    "count_parts",
    "delta_location",
    "fingerprint",
    "lock_location",
    "newest_deltas",
    "refuse_live_stream",
    "take_writer_lock",
]

VERSIONS = "versions"
DELTA = "delta"  # the marker kind of a delta directory
_NAME = re.compile(r"v(\d{8})")


def delta_location(model_dir: Location, version: int) -> Location:
    """Where version ``version``'s delta lives."""
    return location(model_dir) / VERSIONS / f"v{version:08d}"


def newest_deltas(model_dir: Location, base_version: int) -> list[tuple[int, Location]]:
    """The complete deltas above the base's version, in order, up to the first gap: a delta still
    being staged, or one an object store is committing, is not read, nor anything above it."""
    root = location(model_dir) / VERSIONS
    if not root.is_dir():
        return []
    found = {}
    for item in root.iterdir():
        name = _NAME.fullmatch(item.name)
        if name and int(name.group(1)) > base_version:
            found[int(name.group(1))] = item
    out = []
    version = base_version + 1
    while version in found:
        marker = found[version] / MARKER
        try:
            state = read_json(marker) if marker.is_file() else None
        except (ValueError, FileNotFoundError):
            state = None
        if not isinstance(state, dict) or state.get("kind") != DELTA or state.get("state") == COMMITTING:
            break
        out.append((version, found[version]))
        version += 1
    return out


def count_parts(model_dir: Location, manifest: dict) -> list[tuple[Location, int | None]]:
    """The count tables that make a model's version, each with the rows its manifest recorded: the
    base's ``counts/`` alone, or with the deltas' (``manifest["parts"]``, set by ``load_manifest``)."""
    if "parts" in manifest:
        return [(location(uri), rows) for uri, rows in manifest["parts"]]
    return [(location(model_dir) / "counts", manifest.get("count_rows"))]


def fingerprint(model_dir: Location) -> bytes:
    """What changes when a model gets a new version: its manifest's bytes and the names of its
    deltas (a server reloads on a change)."""
    model_dir = location(model_dir)
    root = model_dir / VERSIONS
    names = sorted(i.name for i in root.iterdir() if _NAME.fullmatch(i.name)) if root.is_dir() else []
    return (model_dir / "manifest.json").read_bytes() + "\n".join(names).encode()


def lock_location(model_dir: Location) -> Location:
    """``MODEL.stream/lock.json``: which writer holds the model (``take_writer_lock``)."""
    model_dir = location(model_dir)
    return model_dir.parent / f"{model_dir.name}.stream" / "lock.json"


def take_writer_lock(model_dir: Location, checkpoint: str | None = None):
    """Take the model's writer lock (``MODEL.stream/lock.json``) for a stream (its ``checkpoint``) or
    a ``save`` in this process (None), and return a function that gives it back.

    Refused (``OutputError``, one line): while the holder's process lives (on another host: until
    its lock is removed), unless it is this process; and while a stream with another checkpoint holds
    it, even dead (it resumes with its own checkpoint, or its lock is removed by hand). A stream that
    died (SIGKILL) resumes on its checkpoint; a ``save`` that died leaves nothing to wait for.

    The lock is taken by an exclusive create; a dead holder's lock is taken over by the one writer
    whose exclusive create of ``taken-<the dead holder's hash>`` wins and who then still finds that
    holder in the lock (a writer late to the race finds the winner there instead, and is refused).
    The ``taken-`` files go when the lock is given back."""
    lock = lock_location(model_dir)
    mine = {
        "checkpoint": checkpoint,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    held = _holder(lock)
    if held is not None and held.get("pid") != mine["pid"]:
        live = _lives(held)
        stream = held.get("checkpoint")
        if live and stream == checkpoint and stream is not None:
            raise OutputError(
                f"{model_dir}: this checkpoint's stream runs already (pid {held.get('pid')} on "
                f"{held.get('host')}); stop it first"
            )
        if live or (stream is not None and stream != checkpoint):
            who = f"a stream (checkpoint {stream}, " if stream else "a save ("
            raise OutputError(
                f"{model_dir}: {who}pid {held.get('pid')} on {held.get('host')}) writes this model; "
                + ("resume that stream with --checkpoint, or " if stream else "")
                + f"stop it{' and remove ' + str(lock) if not live else ''} first"
            )
    lock.parent.mkdir()
    claim = json_text(mine).encode()
    if held is not None:  # its holder died (one writer takes it over), or it is this process again
        if held.get("pid") != mine["pid"]:
            taken = lock.parent / f"taken-{hashlib.sha1(json_text(held).encode()).hexdigest()[:16]}"
            won = taken.create_new(claim)
            if not won and (taker := _holder(taken)) is not None and not _lives(taker):
                taken.rmtree()  # whoever claimed it died before taking it: the claim goes
                won = taken.create_new(claim)
            if not won or _holder(lock) != held:
                raise OutputError(
                    f"{model_dir}: another writer took over this model's lock just now (its holder, pid "
                    f"{held.get('pid')}, had died); run again once it is done"
                )
        write_json(lock, mine)
    elif not lock.create_new(claim):  # two writers at once: one wins
        other = _holder(lock) or {}
        raise OutputError(
            f"{model_dir}: another writer (pid {other.get('pid')} on {other.get('host')}) took this model's "
            "lock just now; run again once it is done"
        )

    def release():
        try:
            if _holder(lock) == mine:
                lock.rmtree()
                for item in lock.parent.iterdir():  # who took over dead holders' locks: done with
                    if item.name.startswith("taken-"):
                        item.rmtree()
                if not lock.parent.iterdir():  # an update's or a save's: no stream's checkpoint there
                    lock.parent.rmtree()
        except (FileNotFoundError, OSError):
            pass

    return release


def _holder(lock: Location) -> dict | None:
    if not lock.is_file():
        return None
    try:
        held = read_json(lock)
    except (ValueError, FileNotFoundError):
        return {}
    return held if isinstance(held, dict) else {}


def _lives(held: dict) -> bool:
    """Whether a lock's holder may still run: its process lives, or it is on another host (which
    this one cannot ask)."""
    return held.get("host") != socket.gethostname() or process_alive(held.get("pid"))


def refuse_live_stream(model_dir: Location, doing: str, then: str = "") -> None:
    """Refuse to ``doing`` (replace the model whole: ``--update``, ``--overwrite``) while a writer
    whose process lives holds the model's lock: a version it commits meanwhile would be lost
    (``OutputError``; ``then`` follows "stop it first" for a stream). Checked when the run is
    planned, before any work; an update then takes the lock itself (``spine.training.train_model``),
    an overwrite takes none (a lock left by an overwrite killed with its JVM could not be given back)."""
    held = _holder(lock_location(model_dir))
    if not held or held.get("pid") == os.getpid():
        return
    if _lives(held):
        stream = held.get("checkpoint")
        who = "a stream" if stream else "another writer (an update or a save)"
        raise OutputError(
            f"{model_dir}: {who} writes this model (pid {held.get('pid')} on {held.get('host')}); cannot "
            f"{doing} meanwhile: " + (f"stop it first{then}" if stream else "run it again once it is done")
        )
