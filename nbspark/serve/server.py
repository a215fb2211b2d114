"""Run the server: read the models, watch them, serve on uvicorn until SIGTERM or SIGINT.

uvicorn stops on SIGTERM (and Ctrl-C) as a server should: it stops accepting connections, lets the
requests in flight finish (for at most ``GRACE`` seconds), then the command exits 0.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket

from nbspark.serve.app import Limits, create_app
from nbspark.serve.models import Models, model_names

__all__ = ["GRACE", "prepare", "serve"]

log = logging.getLogger("nbspark.serve")

#: seconds that requests in flight get to finish after SIGTERM
GRACE = 30
_PARENT = os.getpid()


def prepare(
    specs: list[str],
    host: str = "127.0.0.1",
    port: int = 8081,
    limits: Limits = Limits(),
    reuse_port: bool = False,
):
    """``(server, socket, models)``: the models of ``specs`` (``DIR`` or ``NAME=DIR``) read, and a
    uvicorn server for them with its socket bound (port 0: a free one). A model that cannot be read
    stops here (``NbsparkError``), before any port is opened."""
    import uvicorn

    models = Models(model_names(specs))
    config = uvicorn.Config(
        create_app(models, limits),
        host=host,
        port=port,
        log_config=None,  # our logging: one line per request (serve.app), no access log twice
        access_log=False,
        proxy_headers=False,  # no X-Forwarded-For rewriting: nothing reads the client's address
        server_header=False,
        timeout_keep_alive=5,
        timeout_graceful_shutdown=GRACE,
    )
    return uvicorn.Server(config), _listening(host, port, reuse_port), models


def _listening(host: str, port: int, reuse_port: bool) -> socket.socket:
    sock = socket.create_server((host, port), reuse_port=reuse_port)
    # uvicorn writes a response's head and body apart: with Nagle's algorithm on, the body of every
    # answer on a kept-alive connection waited for the client's delayed ACK (44 ms a request).
    # Linux gives accepted sockets the listening socket's TCP_NODELAY.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def serve(
    specs: list[str],
    host: str = "127.0.0.1",
    port: int = 8081,
    limits: Limits = Limits(),
    reload_seconds: float = 2.0,
    workers: int = 1,
) -> int:
    """Serve the models of ``specs`` until SIGTERM or SIGINT, each re-read within ``reload_seconds``
    of getting a new version; the exit status (0: drained and stopped).

    ``workers`` > 1 forks that many processes after the models are read (they share its pages
    until a model is swapped); each listens on the port with its own socket (``SO_REUSEPORT``: the
    kernel spreads the connections; on one shared socket, one worker took them all), watches the
    models and drains on its own. SIGTERM to the parent goes to every worker."""
    server, sock, models = prepare(specs, host, port, limits, reuse_port=workers > 1)
    for s in models.current.values():
        covers = ", ".join(sorted({r["id"] for r in s.rule_of.values()}))
        log.info(
            "%s: version %s from %s%s", s.name, s.version, s.path, f", checks {covers}" if covers else ""
        )
    log.info(
        "serving on http://%s:%d with %d worker%s (models re-read within %g s of a change)",
        host,
        sock.getsockname()[1],
        workers,
        "s" if workers > 1 else "",
        reload_seconds,
    )
    if workers == 1:
        return _run(server, sock, models, reload_seconds)
    children = []
    for k in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: serve, then leave without running the parent's exit handlers
            code = 1
            try:
                mine = sock if k == 0 else _listening(host, sock.getsockname()[1], reuse_port=True)
                code = _run(server, mine, models, reload_seconds)
            finally:
                os._exit(code)
        children.append(pid)
    sock.close()  # the first worker's now: no connection queued on it is lost

    def forward(sig, _frame):
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the workers from the terminal itself
    failed = sum(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0 for pid in children)
    log.info("stopped (%d worker%s)", workers, "s" if workers > 1 else "")
    return 1 if failed else 0


def _run(server, sock, models: Models, reload_seconds: float) -> int:
    models.watch(reload_seconds)
    # uvicorn drains on SIGTERM / SIGINT, then raises the signal again to the handlers it found:
    # these take it, so that a drained server exits 0 (not killed by the signal, nor a traceback)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    try:
        server.run(sockets=[sock])
    finally:
        models.stop()
    if os.getpid() == _PARENT:
        log.info("stopped")
    return 0
