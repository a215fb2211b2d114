"""PySpark's daemon (``pyspark.daemon``, which forks the Python workers of a Spark executor), without
the traceback it prints when the JVM has closed a worker's socket first.

The JVM closes the socket of every Python worker that has been idle for a minute (``PythonWorkerFactory``'s
idle-worker monitor, a fixed 60 s), and of the idle ones as the application stops. PySpark 4's worker
then reads the end of its input, writes an error for a reader that is gone, and fails to flush it:
the daemon's child prints ``BrokenPipeError`` with a traceback on the driver's stderr (at
``daemon.py``, in ``worker``) and exits. Nothing was lost and nobody is waiting for an answer,
but a run that succeeded showed a traceback: in a stream every minute its workers sat idle, in
``demo.sh`` now and then. Here that one failure, a broken or reset connection, ends the worker
quietly, as its ``os._exit`` would have after the traceback; any other error is PySpark's as before.

``spark.session.get_spark`` runs it (``spark.python.daemon.module``) in local mode where a fresh
worker interpreter finds this package (``daemon_importable``) and nothing else named a daemon.
Run as ``python -m``, it imports the ``nbspark`` package first (pure modules: no pyarrow, numpy or
thread, for the daemon forks its workers), then PySpark's daemon.
"""

from __future__ import annotations

import pyspark.daemon as _pyspark_daemon

__all__ = ["worker"]

_worker = _pyspark_daemon.worker


def worker(sock, authenticated):
    """``pyspark.daemon.worker``; a non-zero code (the daemon's child then ends) where the JVM had
    closed the socket when the worker wrote its last bytes."""
    try:
        return _worker(sock, authenticated)
    except (BrokenPipeError, ConnectionResetError):
        return 1


if __name__ == "__main__":
    _pyspark_daemon.worker = worker  # the daemon's loop calls it by its module's name
    _pyspark_daemon.manager()
