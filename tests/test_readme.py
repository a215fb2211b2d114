"""The README's "Use a model", "Check your own text" and "Serve the checker" sections, run as a
reader runs them: every bash line and Python block in order, from the project's root, after the
demo's model is trained (the README's first command; here the same job, in the test's Spark). The
server starts on a free port (``--port 0``) and the ``curl`` lines ask that port."""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.spark, pytest.mark.realdata]

README = (ROOT / "README.md").read_text()


def _section(title: str) -> list[tuple[str, str]]:
    """``(language, code)`` of each fenced block of the README's section ``title``."""
    body = README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", body, re.S)


def _lines(code: str) -> list[str]:
    """A bash block's commands: comments dropped, continued lines joined."""
    code = code.replace("\\\n", " ")
    return [line.split("  # ")[0].strip() for line in code.splitlines() if line.strip()]


def _env() -> dict:
    """The reader's shell: the venv on the PATH, and no PYSPARK_PYTHON (nbspark names its workers'
    Python itself on a local master)."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    env.pop("PYSPARK_PYTHON", None)
    return env


def _bash(line: str, ok=(0,)) -> str:
    done = subprocess.run(
        ["bash", "-c", line], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode in ok, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done.stdout


def _background(line: str) -> subprocess.Popen:
    """A line run as a reader runs it with ``&``: in its own process group (signalled whole), its
    stderr read by the test."""
    return subprocess.Popen(
        ["bash", "-c", line], cwd=ROOT, env=_env(), stderr=subprocess.PIPE, text=True, start_new_session=True
    )


@pytest.fixture(scope="module")
def books(spark, data_dir):
    """The demo's model, where the README's later sections read it."""
    from nbspark.backoff.jobs import train
    from nbspark.inputs.resolve import resolve_input
    from nbspark.settings.config import load_config

    cfg = load_config(None)
    out = ROOT / cfg.model_dir
    train(spark, cfg, resolve_input(cfg.train, str(data_dir)), out, overwrite=out.exists())
    return out


def test_use_a_model(books):
    blocks = _section("Use a model")
    assert [lang for lang, _ in blocks] == ["bash", "python", "bash"]
    for line in _lines(blocks[0][1]):
        _bash(line)
    done = subprocess.run(
        [sys.executable, "-c", blocks[1][1]],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outputs = [_bash(line) for line in _lines(blocks[2][1])]
    assert "affect" in outputs[0] and '"level"' in outputs[0]  # the window as JSON
    assert [x.split()[0] for x in outputs[2].splitlines()] == [
        "spam",
        "ham",
    ]  # "free entry to win", "see you at 6"


def test_check_your_own_text(books):
    (ROOT / "my_essay.txt").write_text("This would not effect the finance minister's plans.\n")
    try:
        (block,) = _section("Check your own text")
        lines = [x for x in _lines(block[1]) if not x.startswith("./scripts/demo.sh")]  # the fixture's model
        first = _bash(lines[0])
        assert first.strip() == (
            "my_essay.txt:1:16: 'effect' → 'affect'? (ratio 57.9, level ABD) This would not effect the "
            "finance minister's p…"
        )
        _bash(lines[1], ok=(1,))  # --fail-on-flag: a flag, exit 1
    finally:
        (ROOT / "my_essay.txt").unlink()


def test_serve_the_checker(books):
    _bash(".venv/bin/nbspark train --in-process --config conf/experiments/sms_multinomial.toml --overwrite")
    (block,) = _section("Serve the checker to editors")
    serve, *asks = _lines(block[1])
    server = _background(f"exec {serve} --port 0")
    try:
        address = None
        deadline = time.monotonic() + 60
        while address is None and time.monotonic() < deadline:
            line = server.stderr.readline()
            if found := re.search(r"serving on http://(\S+)", line):
                address = found.group(1)
        assert address, "the server did not start"
        check, predict = (_bash(x.replace("127.0.0.1:8081", address)) for x in asks)
        assert '"replacements":[{"value":"affect"}]' in check and '"offset":15' in check
        assert '"label":"spam"' in predict
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)


def test_learn_as_data_arrives(books):
    """The stream started, a file dropped in, a prediction from its first version meanwhile; then
    SIGTERM to its process group, as ``timeout`` and systemd send it, stops the stream cleanly (no
    scheduler warnings of the stop's own job cancels), its lock given back: the JVM, in a session of
    its own (``spark.session.start_jvm``), is not killed under it (it was: ``[Errno 111] Connection
    refused``, exit 1). Ctrl-C's SIGINT to the group takes the same path (PySpark's JVM ignores it)."""
    (block,) = _section("Learn as data arrives")
    start, drop, predict = _lines(block[1])
    made = [ROOT / "out" / name for name in ("inbox", "sms_stream", "sms_stream.stream")]
    for path in made:
        shutil.rmtree(path, ignore_errors=True)
    assert start.endswith(" &")
    stream = _background(start[:-2])
    try:
        deadline = time.monotonic() + 60
        while not (ROOT / "out" / "inbox").is_dir() and time.monotonic() < deadline:
            time.sleep(0.2)
        _bash(drop)
        deadline = time.monotonic() + 180
        while not (ROOT / "out" / "sms_stream" / "manifest.json").exists() and time.monotonic() < deadline:
            assert stream.poll() is None, stream.stderr.read()[-3000:]
            time.sleep(0.5)
        assert _bash(predict).startswith("spam")
    finally:
        os.killpg(stream.pid, signal.SIGTERM)
        stream.wait(60)
    log = stream.stderr.read()
    assert stream.returncode == 0, log[-3000:]
    assert "version 1 (batch 0): 1 file(s), 5,574 lines" in log and "stopping the stream" in log, log[-3000:]
    assert "Failed to cancel job group" not in log, log[-3000:]  # the stop's own cancels, not news
    assert not (ROOT / "out" / "sms_stream.stream" / "lock.json").exists()
    for path in made:
        shutil.rmtree(path, ignore_errors=True)
