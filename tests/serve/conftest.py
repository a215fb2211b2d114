"""Models for the server's tests, trained once (Spark), and a server on a free loopback port."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from nbspark.backoff.jobs import train
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import train_nb
from nbspark.serve.app import Limits
from nbspark.serve.server import prepare
from nbspark.settings.config import load_config
from tests.conftest import FIXTURES

#: the fixture model's counts are few: the checker's defaults (factor 50) flag nothing in them
FIXTURE_LIMITS = Limits(factor=5, rule="chain")


def train_checker(spark, out, path=FIXTURES / "ngrams.txt", **more):
    """A backoff model of ``path`` (two confusion sets) at ``out``."""
    cfg = load_config(None, {"train.path": str(path), "confusion_sets": "affect,effect;their,there"})
    train(spark, cfg, resolve_input(cfg.train, None), out, **more)
    return out


@pytest.fixture(scope="package")
def checker_model(spark, tmp_path_factory):
    """tests/data/ngrams.txt counted: ABDE ``would not _ the outcome`` = affect 6, effect 1."""
    return train_checker(spark, tmp_path_factory.mktemp("serve") / "checker" / "model")


@pytest.fixture(scope="package")
def nb_model(spark, tmp_path_factory):
    """The China fixture's multinomial model (classes c, j)."""
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.tokenizer": "words",
            "train.format": "tsv",
            "train.path": str(FIXTURES / "china_train.tsv"),
        },
    )
    out = tmp_path_factory.mktemp("serve") / "china"
    train_nb(spark, cfg, resolve_input(cfg.train, None), out)
    return out


@contextlib.contextmanager
def running(specs, limits: Limits = FIXTURE_LIMITS, reload_seconds: float | None = None):
    """``(url, models)`` of a server in a thread of this process, on a free loopback port."""
    server, sock, models = prepare([str(s) for s in specs], "127.0.0.1", 0, limits)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    if reload_seconds:
        models.watch(reload_seconds)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", models
    finally:
        models.stop()
        server.should_exit = True
        thread.join(10)
