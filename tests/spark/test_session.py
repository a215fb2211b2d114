"""What makes a Spark process start and stop faster: bytecode in pyspark.zip
(scripts/pyspark_bytecode.py) and a stop that does not wait for the accumulator server
(session.stop_spark). Each is checked by what it changes, never by a time."""

import importlib.util
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT


def _bytecode_module():
    spec = importlib.util.spec_from_file_location(
        "pyspark_bytecode", ROOT / "scripts" / "pyspark_bytecode.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(code: str, path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={"PYTHONPATH": str(path)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_zip_given_bytecode_imports_it_and_still_shows_its_source(tmp_path):
    """A made-up package in a zip, as pyspark.zip holds PySpark: after the rewrite its modules load
    from their .pyc (no compile), run as before, and a traceback still quotes the source line;
    the marker makes a second call a no-op."""
    tool = _bytecode_module()
    zipped = tmp_path / "lib.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("pkg/__init__.py", "VALUE = 41 + 1\n")
        zf.writestr("pkg/fail.py", "def boom():\n    raise ValueError('the line to quote')\n")
        zf.writestr("pkg/tests/test_x.py", "x = 1\n")
    assert not tool.has_bytecode(zipped)
    assert tool.rewrite(zipped) == 2  # not PySpark's own tests
    assert tool.has_bytecode(zipped)
    with zipfile.ZipFile(zipped) as zf:
        assert {"pkg/__init__.pyc", "pkg/fail.pyc", "pkg/__init__.py", "pkg/fail.py"} <= set(zf.namelist())
        assert "pkg/tests/test_x.pyc" not in zf.namelist()
    proc = _run(
        """
        import traceback, pkg, pkg.fail
        compiled = pkg.__file__.endswith("lib.zip/pkg/__init__.pyc"), pkg.fail.__file__.endswith(".pyc")
        print(pkg.VALUE, *compiled)
        try:
            pkg.fail.boom()
        except ValueError:
            traceback.print_exc()
        """,
        zipped,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["42", "True", "True"]
    assert "raise ValueError('the line to quote')" in proc.stderr and "lib.zip/pkg/fail.py" in proc.stderr


def test_bytecode_of_another_python_is_ignored_and_the_source_runs(tmp_path):
    """A zip shipped to a Python of another version: its bytecode's magic number is not this
    Python's, so the zip importer compiles the source instead (what pyspark.zip did before)."""
    tool = _bytecode_module()
    zipped = tmp_path / "lib.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("pkg/__init__.py", "VALUE = 'from source'\n")
        zf.writestr("pkg/__init__.pyc", b"\x00\x00\x0d\x0a" + bytes(12) + b"not code")
    proc = _run("import pkg; print(pkg.VALUE, pkg.__file__.endswith('.py'))", zipped)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["from", "source", "True"]
    assert not tool.has_bytecode(zipped)


def test_python_workers_import_pyspark_from_bytecode(spark):
    """The venv's pyspark.zip, as scripts/_env.sh leaves it: Spark's Python workers (their path
    puts the zip first) load PySpark from its .pyc files."""
    tool = _bytecode_module()
    if not tool.has_bytecode(tool.pyspark_zip()):
        pytest.skip(
            "pyspark.zip has no bytecode here (run through scripts/test.sh, without "
            "NBSPARK_PYSPARK_BYTECODE=0)"
        )

    def worker_file(_):
        import pyspark.worker

        return pyspark.worker.__file__

    (path,) = spark.sparkContext.parallelize([0], 1).map(worker_file).collect()
    assert path.endswith("pyspark.zip/pyspark/worker.pyc"), path


@pytest.mark.spark
def test_a_stopped_session_leaves_no_accumulator_server_and_a_new_one_works(tmp_path):
    """stop_spark, in a process that goes on: the context is stopped, the accumulator server's
    shutdown finishes on its own thread (its port closed), and a second session's accumulators
    count again."""
    script = tmp_path / "stop.py"
    script.write_text(
        textwrap.dedent("""
        import socket, threading
        from nbspark.spark.session import get_spark, stop_spark
        from pyspark import SparkContext

        def total(spark):
            acc = spark.sparkContext.accumulator(0)
            spark.sparkContext.parallelize(range(10), 2).foreach(lambda x: acc.add(x))
            return acc.value

        conf = {"spark.master": "local[1]", "spark.ui.enabled": "false"}
        spark = get_spark("stop-test", conf)
        server = spark.sparkContext._accumulatorServer
        print(total(spark))
        stop_spark(spark)
        (thread,) = [t for t in threading.enumerate() if t.name == "nbspark-accumulator-server-shutdown"]
        thread.join(10)
        print(SparkContext._active_spark_context is None, thread.is_alive(), server.socket.fileno() == -1)
        spark = get_spark("stop-test-2", conf)
        print(total(spark))
        stop_spark(spark)
        """)
    )
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["45", "True", "False", "True", "45"]


def test_nbspark_logging_goes_to_a_jvm_it_starts_unless_the_users_logging_applies(tmp_path):
    """jvm_log_options: the packaged log4j2.properties (a file: URI, a space percent-encoded), but ""
    where a configuration of the user's is named in SPARK_SUBMIT_OPTS or PYSPARK_SUBMIT_ARGS, or
    sits in Spark's conf directory ($SPARK_CONF_DIR, else $SPARK_HOME/conf)."""
    from nbspark.spark.session import LOG_CONFIG, jvm_log_options

    ours = jvm_log_options({})
    assert ours == "-Dlog4j2.configurationFile=" + Path(LOG_CONFIG).as_uri()
    assert "rootLogger.level = warn" in Path(LOG_CONFIG).read_text()
    assert jvm_log_options({"SPARK_SUBMIT_OPTS": "-Xmx1g"}) == ours
    named = "-Dlog4j2.configurationFile=file:/etc/mine.properties"
    assert jvm_log_options({"SPARK_SUBMIT_OPTS": f"-Xmx1g {named}"}) == ""
    assert jvm_log_options({"PYSPARK_SUBMIT_ARGS": f'--driver-java-options "{named}" pyspark-shell'}) == ""
    conf, home = tmp_path / "my conf", tmp_path / "spark"
    (home / "conf").mkdir(parents=True)
    conf.mkdir()
    assert jvm_log_options({"SPARK_CONF_DIR": str(conf), "SPARK_HOME": str(home)}) == ours
    (home / "conf" / "log4j2.properties").write_text("rootLogger.level = info\n")
    assert jvm_log_options({"SPARK_HOME": str(home)}) == ""
    assert jvm_log_options({"SPARK_CONF_DIR": str(conf), "SPARK_HOME": str(home)}) == ours  # conf dir first
    (conf / "log4j2.properties").write_text("rootLogger.level = info\n")
    assert jvm_log_options({"SPARK_CONF_DIR": str(conf)}) == ""


@pytest.mark.spark
def test_a_jvm_that_nbspark_starts_logs_warnings_only_from_its_first_line(tmp_path):
    """A JVM started by get_spark (a command's session: Spark said its start-up at INFO, six lines
    and a warning, before spark.log.level applied) has the packaged configuration: no line of Spark's
    default profile, none at INFO, Hadoop's native-library warning gone; and this process's
    environment is as it was."""
    code = """
        import os
        from nbspark.spark.session import get_spark
        before = os.environ.get("SPARK_SUBMIT_OPTS")
        spark = get_spark("log-test", {"spark.master": "local[1]"}, defaults={"spark.log.level": "WARN"})
        print(spark.sparkContext._jvm.System.getProperty("log4j2.configurationFile"))
        print(os.environ.get("SPARK_SUBMIT_OPTS") == before)
        spark.stop()
        """
    opts = [
        o for o in os.environ.get("SPARK_SUBMIT_OPTS", "").split() if "log4j" not in o
    ]  # scripts/_env.sh's
    env = {**os.environ, "SPARK_SUBMIT_OPTS": " ".join(opts), "PYSPARK_PYTHON": sys.executable}
    env.pop("SPARK_CONF_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    from nbspark.spark.session import LOG_CONFIG

    assert proc.stdout.split() == [Path(LOG_CONFIG).as_uri(), "True"]
    assert "default log4j profile" not in proc.stderr and " INFO " not in proc.stderr, proc.stderr
    assert "NativeCodeLoader" not in proc.stderr


def test_a_local_session_built_here_talks_to_its_python_workers_over_unix_sockets(spark):
    """LOCAL_BUILT_DEFAULTS: the tests' session, built by get_spark in local mode with settings of its
    own, takes the Unix domain sockets too (over TCP each Python task waited for delayed
    acknowledgements: scripts/bench_small_jobs.py), and a Python task runs and reports through them:
    its result and an accumulator's count."""
    from nbspark.spark.session import LOCAL_BUILT_DEFAULTS

    assert LOCAL_BUILT_DEFAULTS == {"spark.python.unix.domain.socket.enabled": "true"}
    assert spark.sparkContext.getConf().get("spark.python.unix.domain.socket.enabled") == "true"
    acc = spark.sparkContext.accumulator(0)
    rdd = spark.sparkContext.parallelize(range(10), 3).map(lambda x: acc.add(x) or x * x)
    assert rdd.sum() == 285 and acc.value == 45


_IDLE_WORKERS_CLOSED = """
import sys, time
from nbspark.spark.session import get_spark

settings = {"spark.master": "local[1]", "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
spark = get_spark("idle", {**settings, "spark.python.daemon.module": sys.argv[1]})
sc = spark.sparkContext
import os

before = set(sc.parallelize(range(4), 2).map(lambda x: os.getpid()).collect())  # a worker, idle after it
# what the JVM's idle-worker monitor does after a minute (PythonWorkerFactory.cleanupIdleWorkers), now
# (by Java's reflection: py4j's own lists SparkEnv's methods, one of which names a class not on the path)
forName = sc._jvm.java.lang.Class.forName
field = forName("org.apache.spark.SparkEnv").getDeclaredField("pythonWorkers")
field.setAccessible(True)
env = forName("org.apache.spark.SparkEnv$").getField("MODULE$").get(None).get()
factories = field.get(env).values().iterator()
cleanup = forName("org.apache.spark.api.python.PythonWorkerFactory").getDeclaredMethod(
    "org$apache$spark$api$python$PythonWorkerFactory$$cleanupIdleWorkers", None
)
cleanup.setAccessible(True)
while factories.hasNext():
    cleanup.invoke(factories.next(), None)
time.sleep(1)  # the closed worker's end, printed (or not) meanwhile
print("workers closed", file=sys.stderr, flush=True)
after = set(sc.parallelize(range(4), 2).map(lambda x: os.getpid()).collect())
print("workers", len(before), "closed" if before.isdisjoint(after) else "kept", file=sys.stderr, flush=True)
spark.stop()
"""


@pytest.mark.spark
def test_a_python_worker_closed_by_the_jvm_ends_without_a_traceback(tmp_path):
    """PySpark 4's daemon prints a traceback (BrokenPipeError, at pyspark/daemon.py's ``worker``) on
    the driver's stderr for each idle worker whose socket the JVM closes: after a minute idle, in
    every stream and now and then in demo.sh (seen with ``spark.python.daemon.module=pyspark.daemon``
    in this script: one traceback before "workers closed"). nbspark's daemon (spark.daemon, which
    local sessions built here run) ends such a worker quietly: the worker is gone (the next task runs
    in another process) and nothing is printed."""
    from nbspark.spark.session import DAEMON_MODULE

    (tmp_path / "idle.py").write_text(_IDLE_WORKERS_CLOSED)
    run = subprocess.run(
        [sys.executable, str(tmp_path / "idle.py"), DAEMON_MODULE[1]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "workers 1 closed" in run.stderr, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, run.stderr[-3000:]


def test_the_daemon_runs_where_a_fresh_worker_python_imports_it(spark):
    """A local session built here runs nbspark's daemon where the workers' Python, started afresh,
    imports this very module (DAEMON_MODULE); an interpreter that cannot start keeps PySpark's."""
    from nbspark.spark.session import DAEMON_MODULE, daemon_importable

    assert DAEMON_MODULE == ("spark.python.daemon.module", "nbspark.spark.daemon")
    assert spark.sparkContext.getConf().get(DAEMON_MODULE[0]) == DAEMON_MODULE[1]
    assert daemon_importable(sys.executable)
    assert not daemon_importable(str(ROOT / "no-such-python"))
    # what the daemon imports before it forks its workers: the nbspark package, with no thread
    # running and none of the libraries that start one (pyarrow, numpy), as pyspark.daemon requires
    ask = (
        "import sys, threading, nbspark; "
        "print(threading.active_count(), 'pyarrow' in sys.modules, 'numpy' in sys.modules)"
    )
    found = subprocess.run([sys.executable, "-c", ask], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert found.stdout.split() == ["1", "False", "False"], found.stderr[-2000:]


def test_sockets_only_where_their_directory_leaves_room_for_a_socket_path(spark):
    """A Unix socket's path holds 107 bytes: a socket directory deeper than SOCKET_DIR_BYTES (a YARN
    container's temporary directory is) keeps TCP; this session's (the JVM's java.io.tmpdir) is short."""
    from pyspark import SparkConf

    from nbspark.spark.session import SOCKET_DIR_BYTES, _short_socket_dir

    key = "spark.python.unix.domain.socket.dir"
    assert SOCKET_DIR_BYTES == 64 and _short_socket_dir(SparkConf(), {})
    assert _short_socket_dir(SparkConf(), {key: "/tmp/" + "d" * 59})  # 64 bytes
    assert not _short_socket_dir(SparkConf(), {key: "/tmp/" + "d" * 60})
    yarn = "/hadoop/yarn/nm-local-dir/usercache/alice/appcache/application_1700000000000_0001/tmp"
    assert not _short_socket_dir(SparkConf().set(key, yarn), {})


def test_the_jvm_end_of_this_threads_py4j_connection_sends_at_once(spark):
    """session.quick_replies (run by get_spark and by the Hadoop storage): Nagle's algorithm is
    off on the JVM's socket of this thread's py4j connection, so a reply longer than the JVM's
    8 KB write buffer is not held for a delayed acknowledgement. Checked on a new thread, whose
    first py4j call is the storage's (py4j pins a connection to each thread; the test's own
    thread may have been served by another before, in a run of many test files)."""
    import threading

    from pyspark import SparkContext

    from nbspark.storage.hadoop import HadoopStorage

    seen = []

    def probe():
        HadoopStorage()
        callback = SparkContext._gateway.java_gateway_server.getCallbackClient()
        seen.append(callback.getPerThreadConnection().getSocket().getTcpNoDelay())

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(60)
    assert seen == [True]


def test_a_cached_aggregate_may_be_coalesced_unless_the_session_says_otherwise(spark):
    """session.cache_coalescable: the aggregate's 8 shuffle partitions are coalesced by adaptive
    execution (to 1: it is tiny), the session's own setting is restored after the cache; a
    session that sets the key itself keeps its value and its 8 partitions."""
    from pyspark.sql import functions as F

    from nbspark.spark.session import CACHED_PARTITIONS, cache_coalescable

    def partitions_of_cached():
        frame = spark.range(1000).groupBy((F.col("id") % 7).alias("k")).count()
        cached = cache_coalescable(frame)
        try:
            assert sorted(r["count"] for r in cached.collect()) == [142] + [143] * 6
            return cached.rdd.getNumPartitions()
        finally:
            cached.unpersist()

    spark.conf.set("spark.sql.shuffle.partitions", "8")
    try:
        assert partitions_of_cached() == 1
        assert not spark._jsparkSession.sessionState().conf().contains(CACHED_PARTITIONS)
        spark.conf.set(CACHED_PARTITIONS, "false")
        assert partitions_of_cached() == 8
        assert spark.conf.get(CACHED_PARTITIONS) == "false"
    finally:
        spark.conf.unset(CACHED_PARTITIONS)
        spark.conf.set("spark.sql.shuffle.partitions", "2")


def test_a_hadoop_read_on_a_thread_of_its_own_makes_that_threads_connection_quick(
    spark, tmp_path, monkeypatch
):
    """pyarrow reads a file on threads of its own, each with a py4j connection of its own: the
    Hadoop reader turns Nagle's algorithm off on each before it reads. A file on the local disk is
    read by the OS; here it is read as one on any other file system is, through Hadoop's stream
    (written through it first)."""
    import threading

    from pyspark import SparkContext

    from nbspark.storage.hadoop import HadoopStorage
    from nbspark.storage.locations import location, use_hadoop

    use_hadoop()
    monkeypatch.setattr(HadoopStorage, "_local_path", lambda self, uri: None)
    data = bytes(range(256)) * 100
    location(f"file://{tmp_path}/x.bin").write_bytes(data)
    assert (tmp_path / "x.bin").read_bytes() == data
    seen = {}

    def read():
        seen["data"] = location(f"file://{tmp_path}/x.bin").read_bytes()
        connection = SparkContext._gateway.java_gateway_server.getCallbackClient().getPerThreadConnection()
        seen["nodelay"] = connection.getSocket().getTcpNoDelay()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join()
    assert seen == {"data": data, "nodelay": True}


@pytest.mark.spark
def test_spark_loggers_nbspark_speaks_for_are_quieted_unless_configured_or_verbose(spark):
    """session._quiet (run by get_spark for the sessions nbspark builds): each logger gets its level,
    but one the log4j configuration names keeps its own, and under ``-v`` (the nbspark logger at
    DEBUG) none is touched: a failed stream's trace is then Spark's whole."""
    import logging

    from nbspark.spark.session import QUIET_LOGGERS, _quiet

    log4j = spark.sparkContext._jvm.org.apache.logging.log4j
    level = lambda name: log4j.LogManager.getLogger(name).getLevel().toString()  # noqa: E731
    names = {"nbspark.test.quiet.a": "OFF", "nbspark.test.quiet.b": "ERROR"}
    configured = log4j.LogManager.getContext(False).getConfiguration()
    configured.addLogger(
        "nbspark.test.quiet.b", log4j.core.config.LoggerConfig("nbspark.test.quiet.b", log4j.Level.INFO, True)
    )
    nbspark_log = logging.getLogger("nbspark")
    before = nbspark_log.level
    try:
        nbspark_log.setLevel(logging.DEBUG)
        _quiet(spark, names)
        assert level("nbspark.test.quiet.a") != "OFF"
        nbspark_log.setLevel(logging.INFO)
        _quiet(spark, names)
        assert level("nbspark.test.quiet.a") == "OFF"
        assert level("nbspark.test.quiet.b") == "INFO"  # the configuration's
    finally:
        nbspark_log.setLevel(before)
        configured.removeLogger("nbspark.test.quiet.b")
    for name in QUIET_LOGGERS:  # Spark's classes, under these names (they moved in Spark 4)
        spark.sparkContext._jvm.java.lang.Class.forName(name)


def test_loggers_quieted_for_a_block_get_their_levels_back(spark):
    """session.quiet_while (a stream's stop quiets the scheduler's warnings of its own cancels):
    the level within the block, the inherited one after it (and quieted again by the next block),
    and a level the configuration names untouched."""
    from nbspark.spark.session import quiet_while
    from nbspark.spine.streaming import STOP_QUIET

    log4j = spark.sparkContext._jvm.org.apache.logging.log4j
    level = lambda name: log4j.LogManager.getLogger(name).getLevel().toString()  # noqa: E731
    inherited = level("nbspark.test.while.a")
    quiet = "OFF" if inherited != "OFF" else "ERROR"
    configured = log4j.LogManager.getContext(False).getConfiguration()
    configured.addLogger(
        "nbspark.test.while.b", log4j.core.config.LoggerConfig("nbspark.test.while.b", log4j.Level.INFO, True)
    )
    try:
        for _ in range(2):
            with quiet_while(spark, {"nbspark.test.while.a": quiet, "nbspark.test.while.b": "OFF"}):
                assert level("nbspark.test.while.a") == quiet
                assert level("nbspark.test.while.b") == "INFO"
            assert level("nbspark.test.while.a") == inherited
            assert level("nbspark.test.while.b") == "INFO"
    finally:
        configured.removeLogger("nbspark.test.while.b")
    for name in STOP_QUIET:
        spark.sparkContext._jvm.java.lang.Class.forName(name)


def test_what_a_collect_may_bring_back_is_read_as_spark_reads_it(spark):
    """session.max_result_bytes: Spark's own default of ``spark.driver.maxResultSize`` (1g) where
    the session does not set it, in bytes."""
    from nbspark.spark.session import max_result_bytes

    assert spark.sparkContext.getConf().get("spark.driver.maxResultSize") is None
    assert max_result_bytes(spark) == 1 << 30
