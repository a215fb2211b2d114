"""Fault injection for the reliability tests: off unless ``NBSPARK_FAULT`` is set.

``NBSPARK_FAULT=ACTION:DIR`` makes the first task of partition 0 that reads examples (train,
classify) misbehave once:

* ``crash-once``: the Python worker exits (``os._exit(3)``) on attempt 0;
* ``kill-executor-once``: the executor's JVM (the first ``java`` ancestor of the Python worker)
  is killed with SIGKILL on attempt 0 (only on a cluster master: on ``local`` the executor is
  the driver);
* ``always-raise``: every attempt of every task raises ``RuntimeError``.

* ``kill-driver@POINT``: the driver kills itself with SIGKILL once it reaches ``POINT``
  (``maybe_kill_driver``): of a stream's commit, ``staged`` (the batch's table written but not
  in place) or ``committed`` (the version in place but the batch not yet in Spark's checkpoint);
  of any output's commit (``storage.tables.staged_output``), ``commit-staged`` (everything
  written, nothing moved) or ``commit-aside`` (the old output renamed aside, the new one not yet
  in its place).

The once-only actions create ``DIR/fired`` before acting (atomically, so two tasks cannot both
fire), which the tests read to prove that the fault happened. On a cluster, pass the variable to
executors with ``--conf spark.executorEnv.NBSPARK_FAULT=...``.
"""

from __future__ import annotations

import os
import signal

__all__ = ["ENV", "maybe_inject", "maybe_kill_driver"]

ENV = "NBSPARK_FAULT"


def _java_ancestor(pid: int) -> int | None:
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
        except OSError:
            return None
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name == "java":
            return pid
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
    return None


def maybe_inject() -> None:
    """Called where a partition starts reading examples; does nothing unless ``NBSPARK_FAULT`` is set."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    action, _, marker_dir = spec.partition(":")
    if action == "always-raise":
        raise RuntimeError(f"injected failure ({ENV}=always-raise)")
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None or ctx.partitionId() != 0 or ctx.attemptNumber() != 0:
        return
    if not _fire(action, marker_dir):
        return
    if action == "crash-once":
        os._exit(3)
    if action == "kill-executor-once":
        java = _java_ancestor(os.getppid())
        if java is not None:
            os.kill(java, signal.SIGKILL)
        return
    raise ValueError(f"{ENV}: unknown action {action!r}")


def _fire(action: str, marker_dir: str) -> bool:
    """Create ``DIR/fired`` (atomically); False when it was there: a once-only action fired before."""
    try:
        fd = os.open(os.path.join(marker_dir, "fired"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(fd, f"{action} pid={os.getpid()}\n".encode())
    os.close(fd)
    return True


def maybe_kill_driver(point: str) -> None:
    """Called by a commit at ``point``; SIGKILLs this process once when ``NBSPARK_FAULT`` is
    ``kill-driver@POINT:DIR``, does nothing otherwise."""
    action, _, marker_dir = os.environ.get(ENV, "").partition(":")
    if action == f"kill-driver@{point}" and _fire(action, marker_dir):
        os.kill(os.getpid(), signal.SIGKILL)
