"""The one place a SparkSession is built (jobs and tests both call ``get_spark``).

The master is never set here: ``spark-submit --master ...`` (or ``PYSPARK_SUBMIT_ARGS``, or a
test's ``conf``) decides where the job runs. Under plain ``python`` without either, Spark's own
default applies (``local[*]``).
"""

from __future__ import annotations

import logging
import os
import pathlib
import sys
import threading
from contextlib import contextmanager

__all__ = [
    "CACHED_PARTITIONS",
    "DAEMON_MODULE",
    "active_session",
    "daemon_importable",
    "cache_coalescable",
    "failures_expected",
    "get_spark",
    "jvm_log_options",
    "max_result_bytes",
    "quick_replies",
    "quiet_while",
    "start_jvm",
    "settings_while",
    "stop_spark",
]

log = logging.getLogger(__name__)

#: The setting that lets adaptive execution coalesce the partitions of a cached plan (off by default).
CACHED_PARTITIONS = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"
_QUICK = threading.local()  # quick_replies ran on this thread's py4j connection
#: What every session built here in local mode is given, unless spark-submit, ``--conf``, a properties
#: file or ``PYSPARK_SUBMIT_ARGS`` set it (``get_spark``): the JVM and its Python workers talk over
#: Unix domain sockets, not TCP on loopback. Over TCP each Python task waited about 40 ms twice (as it
#: starts and as it ends: Nagle's algorithm holding a small write until Linux's delayed
#: acknowledgement of the one before), so a job of small tasks paid some 80 ms a task: a map over
#: four partitions took 190 ms, 118 ms over sockets; a shuffle 385 ms, 196 ms (docs/performance.md).
#: Only in local mode, where the executor is this JVM and its socket directory is known to be short
#: enough (``_short_socket_dir``): a socket's path holds at most 107 bytes, and a cluster's executors
#: may keep their temporary files deeper (YARN's container directories), where every Python task
#: would fail.
LOCAL_BUILT_DEFAULTS = {"spark.python.unix.domain.socket.enabled": "true"}
#: PySpark's daemon without the traceback of a worker whose socket the JVM closed first
#: (``spark.daemon``), for a session built here in local mode where the workers' Python imports it.
DAEMON_MODULE = ("spark.python.daemon.module", "nbspark.spark.daemon")
#: The longest socket directory that leaves room for Spark's socket name in it (``/.<uuid>.sock``,
#: 43 bytes) within the 107 bytes of a Unix socket's path.
SOCKET_DIR_BYTES = 107 - 43


#: The JVM's logging configuration where nbspark starts it (``jvm_log_options``): Spark's defaults,
#: warnings and errors only from the first line (its start-up said six lines at INFO and a warning
#: before ``spark.log.level`` applied).
LOG_CONFIG = pathlib.Path(__file__).resolve().with_name("log4j2.properties")


def jvm_log_options(environ=os.environ) -> str:
    """The JVM option that gives a JVM started from ``environ`` nbspark's logging (``LOG_CONFIG``), or
    "" where a configuration of the user's applies: one named in ``SPARK_SUBMIT_OPTS`` or
    ``PYSPARK_SUBMIT_ARGS`` (``--driver-java-options``), or ``log4j2.properties`` in Spark's conf
    directory (``$SPARK_CONF_DIR``, else ``$SPARK_HOME/conf``). A ``--driver-java-options`` or
    ``spark.driver.extraJavaOptions`` of the user's comes after it on the JVM's command line, so it
    wins there too."""
    named = environ.get("SPARK_SUBMIT_OPTS", "") + environ.get("PYSPARK_SUBMIT_ARGS", "")
    if "log4j2.configurationFile" in named or "log4j.configurationFile" in named:
        return ""
    home = environ.get("SPARK_HOME")
    conf_dir = environ.get("SPARK_CONF_DIR") or (os.path.join(home, "conf") if home else None)
    if conf_dir and os.path.isfile(os.path.join(conf_dir, "log4j2.properties")):
        return ""
    return f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"  # a space is %20 there


def _import_pyspark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        # A Spark install without the pip package: findspark puts $SPARK_HOME's python on sys.path.
        import findspark

        findspark.init()


def active_session():
    """The SparkSession already running in this process (a notebook's, a test's), or None."""
    _import_pyspark()
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


#: Spark's loggers that report a failed task, each with its own copy of the worker's traceback
#: (a failfast run printed a hundred lines of them above its one line)
TASK_FAILURE_LOGGERS = {
    "org.apache.spark.executor.Executor": "OFF",
    "org.apache.spark.scheduler.TaskSetManager": "OFF",
    "org.apache.spark.storage.BlockManager": "ERROR",  # a cached partition whose task failed
}


@contextmanager
def failures_expected():
    """For an action whose task fails by design (failfast's first malformed record): the running
    session's loggers of failed tasks quiet while it runs, by ``quiet_while``'s rule (never those the
    logging configuration names, nor at ``-v``); nothing where no session runs (counting in process).
    Yields whether a session's loggers were quieted."""
    spark = active_session() if "pyspark" in sys.modules else None
    if spark is None:
        yield False
        return
    with quiet_while(spark, TASK_FAILURE_LOGGERS):
        yield True


def get_spark(
    app_name: str,
    conf: dict[str, str] | None = None,
    defaults: dict[str, str] | None = None,
    local_defaults: dict[str, str] | None = None,
):
    """Get or create the SparkSession.

    ``conf`` is applied as given (tests). ``defaults`` (and ``LOCAL_BUILT_DEFAULTS``, for a session
    built here in local mode) apply only where nothing else set them:
    not spark-submit's flags, ``--conf``, a properties file nor ``PYSPARK_SUBMIT_ARGS`` (the JVM
    is started first, so its settings can be seen before the session is built; a setting made in
    code would otherwise win over spark-submit's). ``local_defaults`` apply in the same way when
    the master is local (``local``, ``local[N]``, ``local[N,F]``, or none given), as does
    ``PYSPARK_PYTHON`` = this interpreter where nothing names the workers' Python. A session
    already running in the process is returned with its settings untouched, but for ``conf``; a
    session built here with ``defaults`` (the commands' and jobs') quiets ``QUIET_LOGGERS``.
    """
    _import_pyspark()
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    settings = {"spark.app.name": app_name}
    ours = SparkSession.getActiveSession() is None and bool(defaults or local_defaults)
    if SparkSession.getActiveSession() is not None:
        # the caller's session (a notebook's, a test's): its settings are its owner's, and
        # getOrCreate would otherwise set the defaults on it for the rest of the process
        settings = {}
    else:
        start_jvm()  # the gateway JVM, started with spark-submit's settings
        present = SparkConf()
        master = (conf or {}).get("spark.master") or present.get("spark.master", "local[*]")
        wanted = {**settings, **(defaults or {})}
        if master == "local" or master.startswith("local["):
            if _short_socket_dir(present, conf or {}):
                wanted.update(LOCAL_BUILT_DEFAULTS)
            wanted.update(local_defaults or {})
            if "PYSPARK_PYTHON" not in os.environ and not present.contains("spark.pyspark.python"):
                # a local master's Python workers run this interpreter, the one with nbspark and
                # pyarrow, not whatever "python3" the PATH finds (read when the context starts)
                os.environ["PYSPARK_PYTHON"] = sys.executable
            named = DAEMON_MODULE[0] in (conf or {}) or present.contains(DAEMON_MODULE[0])
            if not named and daemon_importable(
                present.get("spark.pyspark.python", os.environ["PYSPARK_PYTHON"])
            ):
                wanted[DAEMON_MODULE[0]] = DAEMON_MODULE[1]
        settings = {k: v for k, v in wanted.items() if not present.contains(k)}
    builder = SparkSession.builder
    for key, value in {**settings, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    quick_replies()
    if ours:
        _quiet(spark, QUIET_LOGGERS)
    return spark


def start_jvm() -> None:
    """Start PySpark's gateway JVM if it is not up (none where spark-submit started this driver: it is
    there already), with nbspark's logging unless the user's applies (``jvm_log_options``). Every
    path to the JVM goes through here: ``get_spark``, and the Hadoop file systems read before it."""
    _import_pyspark()
    from pyspark import SparkContext

    with SparkContext._lock:  # PySpark's own, held while it launches: one JVM however many threads ask
        if SparkContext._gateway is not None:
            return
        option = jvm_log_options()
        before = os.environ.get("SPARK_SUBMIT_OPTS")
        if option:
            os.environ["SPARK_SUBMIT_OPTS"] = option + (f" {before}" if before else "")
        try:
            SparkContext._ensure_initialized(gateway=_own_session_gateway())
        finally:  # read by the launch only: this process's environment is left as it was
            if option and before is None:
                os.environ.pop("SPARK_SUBMIT_OPTS", None)
            elif option:
                os.environ["SPARK_SUBMIT_OPTS"] = before


def _own_session_gateway():
    """PySpark's gateway JVM, started in a session of its own (``setsid``): a signal sent to this
    process's group (SIGTERM from ``timeout``, from systemd to its service's processes, SIGHUP when a
    terminal closes) reaches this process alone, which stops as it would stop (a stream drains its
    batch), not a JVM killed under it (``Connection refused``). The JVM still ends with this process:
    it exits when its standard input, a pipe from here, closes."""
    from pyspark.java_gateway import launch_gateway

    return launch_gateway(popen_kwargs={"start_new_session": True})


def daemon_importable(python: str) -> bool:
    """Whether ``python``, started afresh here as Spark starts the workers' daemon (this directory,
    this environment), finds this very nbspark package, and so ``DAEMON_MODULE``: not where nbspark
    reaches the workers only by ``--py-files`` (added as a task starts, after the daemon), nor where
    that interpreter would find another nbspark. One interpreter start (the package is located, not
    imported), once a session."""
    import subprocess

    package = pathlib.Path(__file__).resolve().parents[1] / "__init__.py"  # nbspark's, this file's package's
    ask = "import importlib.util; s = importlib.util.find_spec('nbspark'); print(s.origin if s else '')"
    try:
        found = subprocess.run(
            [python, "-c", ask], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return False
    origin = found.stdout.strip()
    return found.returncode == 0 and bool(origin) and os.path.realpath(origin) == str(package)


def _short_socket_dir(present, conf: dict) -> bool:
    """Whether the directory Spark makes its Python sockets in (``spark.python.unix.domain.socket.dir``,
    else the driver JVM's ``java.io.tmpdir``) is short enough for a socket's path (``SOCKET_DIR_BYTES``)."""
    from pyspark import SparkContext

    key = "spark.python.unix.domain.socket.dir"
    folder = conf.get(key) or present.get(key, None)
    if not folder:
        folder = SparkContext._jvm.java.lang.System.getProperty("java.io.tmpdir")
    return bool(folder) and len(os.fsencode(str(folder).rstrip("/"))) <= SOCKET_DIR_BYTES


_STREAMING = "org.apache.spark.sql.execution.streaming."
#: Spark's loggers that say, in the normal course of nbspark's jobs, what nbspark says better or
#: what is not so, and the level each is set to in a session nbspark builds, unless the logging
#: configuration names it or the ``nbspark`` logger is at DEBUG (``-v``):
#:
#: * ``FileStreamSink`` looks for a streaming sink's metadata in the one path a reader is given,
#:   and fails with a warning and a stack trace on a path whose glob characters are escaped
#:   (``storage.uris.hadoop_escape``: a model at ``out/m[1]``), which is then read as asked;
#: * ``ResolveWriteToStream`` warns at each stream's start that adaptive execution (on for the
#:   batch jobs) does not apply to a stream, which Spark turns off for it by itself;
#: * ``MicroBatchExecution`` logs a failed stream's whole trace (a hundred lines and more: a bad
#:   line in failfast mode, a file that vanished), which ``nbspark stream`` says in one line;
#: * ``ProcessingTimeExecutor`` warns that a batch took longer than the trigger ("falling behind"),
#:   as a stream's first batch does while the JVM warms up: the stream's own line for each batch
#:   gives its seconds and the lag from a file's landing to its version, which grows where it
#:   falls behind.
QUIET_LOGGERS = {
    _STREAMING + "sinks.FileStreamSink": "ERROR",
    _STREAMING + "runtime.ResolveWriteToStream": "ERROR",
    _STREAMING + "runtime.MicroBatchExecution": "OFF",
    _STREAMING + "runtime.ProcessingTimeExecutor": "ERROR",
}


def _quiet(spark, levels: dict[str, str]) -> list[str]:
    """Set Spark's loggers ``levels`` (log4j's), each unless the logging configuration names it or
    the ``nbspark`` logger is at DEBUG (``-v``); the names set."""
    if logging.getLogger("nbspark").isEnabledFor(logging.DEBUG):
        return []
    jvm = spark.sparkContext._jvm
    done = []
    try:
        log4j = jvm.org.apache.logging.log4j
        configured = log4j.LogManager.getContext(False).getConfiguration().getLoggers()
        for name, level in levels.items():
            if not configured.containsKey(name):
                log4j.core.config.Configurator.setLevel(name, log4j.Level.getLevel(level))
                done.append(name)
    except Exception as exc:  # another logging back end: its lines stay
        log.debug("Spark's loggers left as they are: %s", exc)
    return done


@contextmanager
def quiet_while(spark, levels: dict[str, str]):
    """Spark's loggers at ``levels`` for the block, by ``_quiet``'s rule; after it, those it set
    inherit their level again, as before (and may be quieted again)."""
    done = _quiet(spark, levels)
    try:
        yield
    finally:
        if done:
            context = spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getContext(False)
            for name in done:
                context.getConfiguration().removeLogger(name)
            context.updateLoggers()


def max_result_bytes(spark) -> int:
    """What one collect may bring back to the driver, in bytes (``spark.driver.maxResultSize``, read
    as Spark reads it: 1 GB unless set; 0: no limit)."""
    return int(spark.sparkContext._jsc.sc().conf().getSizeAsBytes("spark.driver.maxResultSize", "1g"))


def cache_coalescable(frame):
    """``frame.cache()``, planned with ``CACHED_PARTITIONS`` on, so that adaptive execution may
    coalesce the cached aggregate's partitions to fit its size, unless the session sets it
    itself (spark-submit, ``--conf``, ``spark.conf.set``: that setting wins). Spark reads the
    setting when the plan is cached, so the session's own value is restored right after.

    Without it a cached aggregate keeps ``spark.sql.shuffle.partitions`` partitions (200 by
    default), and each scan of it (the summary, the write) runs that many tasks."""
    with settings_while(frame.sparkSession, {CACHED_PARTITIONS: "true"}):
        return frame.cache()


@contextmanager
def settings_while(spark, settings: dict[str, str]):
    """Spark SQL ``settings`` of nbspark's own for the block (a plan cached, a query started: what
    reads them then), each only where the session does not set it itself (spark-submit, ``--conf``,
    ``spark.conf.set``: that setting wins); unset again after the block."""
    conf = spark._jsparkSession.sessionState().conf()
    ours = [key for key in settings if not conf.contains(key)]
    for key in ours:
        spark.conf.set(key, settings[key])
    try:
        yield
    finally:
        for key in ours:
            spark.conf.unset(key)


def quick_replies() -> None:
    """Turn Nagle's algorithm off on the JVM's end of this thread's py4j connection.

    The JVM writes a py4j reply through an 8 KB buffer, so a longer one (the bytes of a file
    read through Hadoop's ``FileSystem``, a long string) leaves in several writes. Nagle's
    algorithm holds the last until the first is acknowledged, and Linux delays that
    acknowledgement by up to 40 ms, so every such reply waited that long. Best effort, for the
    calling thread's connection (py4j
    pins one to each Python thread; pyarrow reads a file on threads of its own, so the Hadoop
    reader calls this on each): once a thread. A py4j without these methods, or not in
    pinned-thread mode, is left as it is."""
    from pyspark import SparkContext

    if getattr(_QUICK, "done", False):
        return
    _QUICK.done = True
    try:
        connection = SparkContext._gateway.java_gateway_server.getCallbackClient().getPerThreadConnection()
        if connection is not None:
            connection.getSocket().setTcpNoDelay(True)
    except Exception as exc:  # another py4j: the replies are as fast as it makes them
        log.debug("py4j replies keep Nagle's algorithm: %s", exc)


def stop_spark(spark) -> None:
    """``spark.stop()``, without waiting up to a second for PySpark's accumulator server.

    ``SparkContext.stop`` ends by shutting that server down, and its request handler looks for
    the shutdown once a second, so every stop waited up to a second. Here the context is stopped
    first, as PySpark stops it, and the server is shut down on a daemon thread: done within the
    second if the process goes on, and no wait if it exits. A PySpark without that attribute is
    stopped as usual."""
    import threading

    sc = spark.sparkContext
    server = getattr(sc, "_accumulatorServer", None)
    if server is not None:
        sc._accumulatorServer = None  # SparkContext.stop skips the waiting shutdown; the thread below does it
    try:
        spark.stop()
    finally:
        if server is not None:
            threading.Thread(
                target=server.shutdown, name="nbspark-accumulator-server-shutdown", daemon=True
            ).start()
