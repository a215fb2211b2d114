"""Run the server: read the models, watch them, serve on uvicorn until SIGTERM or SIGINT.

uvicorn stops on SIGTERM (and Ctrl-C) as a server should: it stops accepting connections, lets the
requests in flight finish (for at most ``GRACE`` seconds), then the command exits 0.
"""

from __future__ import annotations

import logging
import signal
import socket

from nbspark.serve.app import Limits, create_app
from nbspark.serve.models import Models, model_names

__all__ = ["GRACE", "prepare", "serve"]

log = logging.getLogger("nbspark.serve")

#: seconds that requests in flight get to finish after SIGTERM
GRACE = 30


def prepare(
    specs: list[str],
    host: str = "127.0.0.1",
    port: int = 8081,
    limits: Limits = Limits(),
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
        timeout_keep_alive=5,
        timeout_graceful_shutdown=GRACE,
    )
    sock = socket.create_server((host, port))
    return uvicorn.Server(config), sock, models


def serve(
    specs: list[str],
    host: str = "127.0.0.1",
    port: int = 8081,
    limits: Limits = Limits(),
    reload_seconds: float = 2.0,
) -> None:
    """Serve the models of ``specs`` until SIGTERM or SIGINT, each re-read within ``reload_seconds``
    of getting a new version."""
    server, sock, models = prepare(specs, host, port, limits)
    for s in models.current.values():
        covers = ", ".join(sorted({r["id"] for r in s.rule_of.values()}))
        log.info(
            "%s: version %s from %s%s", s.name, s.version, s.path, f", checks {covers}" if covers else ""
        )
    log.info(
        "serving on http://%s:%d (models re-read within %g s of a change)",
        host,
        sock.getsockname()[1],
        reload_seconds,
    )
    models.watch(reload_seconds)
    # uvicorn drains on SIGTERM / SIGINT, then raises the signal again to the handlers it found:
    # these take it, so that a drained server exits 0 (not killed by the signal, nor a traceback)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    try:
        server.run(sockets=[sock])
    finally:
        models.stop()
    log.info("stopped")
