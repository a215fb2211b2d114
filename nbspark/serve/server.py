"""Run the server: read the models, watch them, serve on uvicorn until SIGTERM or SIGINT.

uvicorn stops on SIGTERM (and Ctrl-C) as a server should: it stops accepting connections, lets the
requests in flight finish (for at most ``GRACE`` seconds), then the command exits 0.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import socket
import sys
import threading
import time

from nbspark.errors import ConfigError
from nbspark.serve.app import REQUESTS, Limits, create_app
from nbspark.serve.deadlines import Deadlines
from nbspark.serve.models import Models, model_names

__all__ = ["GRACE", "LINE_SECONDS", "BatchedLines", "OneWrite", "prepare", "serve"]

log = logging.getLogger("nbspark.serve")

#: seconds that requests in flight get to finish after SIGTERM
GRACE = 30
#: seconds a request's log line may wait to be written with others (nginx's ``access_log … flush=``)
LINE_SECONDS = 1.0
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
    stops here (``NbsparkError``), before any port is opened, and so do ``--factor`` and ``--rule``
    when no model served checks text: they would be ignored."""
    import uvicorn

    models = Models(model_names(specs))
    if (limits.factor is not None or limits.rule is not None) and not any(
        s.backoff for s in models.current.values()
    ):
        raise ConfigError(
            "--factor and --rule set how a backoff model checks text, and no model served is one"
        )
    config = uvicorn.Config(
        create_app(models, limits),
        host=host,
        port=port,
        log_config=None,  # our logging: one line per request (serve.app), no access log twice
        access_log=False,
        proxy_headers=False,  # no X-Forwarded-For rewriting: nothing reads the client's address
        server_header=False,
        http=_protocol(limits.seconds, limits.max_bytes),
        ws="none",  # no WebSocket route: an upgrade request is answered as plain HTTP
        timeout_keep_alive=5,
        timeout_graceful_shutdown=GRACE,
    )
    return uvicorn.Server(config), _listening(host, port, reuse_port), models


def _loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) is this machine's loopback alone."""
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _listening(host: str, port: int, reuse_port: bool) -> socket.socket:
    """A listening socket on ``host:port``; ``OSError`` in one line where the port is taken or the
    address is not this machine's (Python's says ``[Errno 98] … while attempting to bind``)."""
    try:
        sock = socket.create_server((host, port), reuse_port=reuse_port)
    except OSError as exc:
        why = {
            errno.EADDRINUSE: "is in use (choose another --port)",
            errno.EADDRNOTAVAIL: "is not an address of this machine (--host)",
            errno.EACCES: "needs privileges (a port below 1024)",
        }
        raise OSError(
            f"{host}:{port} {why.get(exc.errno, f'cannot be bound ({exc.strerror or exc})')}"
        ) from None
    # An answer leaves at once (Nagle's algorithm off: a body written apart from its head waited for
    # the client's delayed ACK, 44 ms a request). Linux gives accepted sockets the listening
    # socket's TCP_NODELAY.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class OneWrite:
    """A transport whose writes within one turn of the event loop leave together, in one write at
    the end of the turn (or before a ``close``): uvicorn writes an answer's head and its body
    apart, so each answer was two system calls, two TCP segments and two wake-ups of the client
    (9 % of the requests a second on 2 cores, docs/serve.md). What is written once a connection
    is closing is dropped, as the transport itself drops it."""

    __slots__ = ("transport", "loop", "pending")

    def __init__(self, transport, loop):
        self.transport, self.loop, self.pending = transport, loop, []

    def write(self, data: bytes) -> None:
        if not self.pending:
            self.loop.call_soon(self.flush)
        self.pending.append(data)

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        if pending and not self.transport.is_closing():
            self.transport.write(b"".join(pending))

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def __getattr__(self, name):  # is_closing, get_extra_info, pause_reading, resume_reading
        return getattr(self.transport, name)


def _protocol(seconds: float, max_bytes: int):
    """uvicorn's HTTP protocol (httptools' parser where it is installed, as uvicorn's ``auto``
    picks; else h11's, which refuses a head over 16 KiB itself), writing through ``OneWrite``. What
    a connection sends between requests is held to ``seconds`` (to within ``Deadlines``' tick) and
    ``max_bytes``, the body's limit, from its opening or its last answer:

    * a request head not whole within ``seconds`` is answered 408 and the connection closed (a
      client that sends nothing, or its headers a byte at a time, held its connection for ever);
    * a head (line and headers) over ``max_bytes``: 431 and closed (httptools keeps a head whole in
      memory however long it is: 100 MB in 10 s from one client);
    * the rest of a body whose request was answered before it was all received (413, 404) is read
      and dropped, as uvicorn does, so that the client reads its answer, but past either limit the
      connection is closed without a second answer (uvicorn read on for as long as it was sent).
    """
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base
    except ImportError:  # no httptools
        from uvicorn.protocols.http.h11_impl import H11Protocol as base

    heads = Deadlines(seconds)  # each connection's next request head (a worker keeps its own)
    late = (408, "Request Timeout", f"no whole request was received within {seconds:g} s")
    large = (
        431,
        "Request Header Fields Too Large",
        f"the request line and headers are over {max_bytes} bytes",
    )

    class Protocol(base):
        def connection_made(self, transport):
            super().connection_made(OneWrite(transport, self.loop))
            self.head_bytes = 0  # received since the last head or answer
            heads.start(self, self.head_late)

        def data_received(self, data):
            cycle = self.cycle
            super().data_received(data)
            if self.cycle is not cycle:  # a head was read whole
                self.head_bytes = 0
            elif cycle is None or cycle.response_complete:  # a head's, or an answered body's rest
                self.head_bytes += len(data)
                if self.head_bytes > max_bytes:
                    self.refuse(*large)

        def on_response_complete(self):
            self.head_bytes = 0
            heads.start(self, self.head_late)  # the next request's head is due from now
            super().on_response_complete()

        def connection_lost(self, exc):
            heads.stop(self)
            super().connection_lost(exc)

        def head_late(self):
            if self.cycle is None or self.cycle.response_complete:  # no request being served
                self.refuse(*late)

        def refuse(self, status: int, reason: str, why: str):
            """Answer ``status`` in LanguageTool's plain text and close: the head is not whole. After
            an answer given before its request's body was all received, close without one."""
            if self.transport.is_closing():
                return
            if self.cycle is not None and self.cycle.more_body:  # answered, and read on
                log.info(
                    "closed %s: the body of an answered request went on past %d bytes or %g s",
                    *(_peer(self.transport), max_bytes, seconds),
                )
            else:
                log.info("%d: %s: %s", status, _peer(self.transport), why)
                body = f"Error: {why}".encode()
                self.transport.write(
                    b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
                    b"content-length: %d\r\n\r\n%s" % (status, reason.encode(), len(body), body)
                )
            self.transport.close()

    return Protocol


def _peer(transport) -> str:
    peer = transport.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "a client"


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
    if not _loopback(host):
        log.warning(
            "listening on %s, not loopback: whoever reaches this machine's port %d can use the server "
            "(it has no authentication)",
            host,
            sock.getsockname()[1],
        )
    log.info(
        "serving on http://%s:%d with %d worker%s (models re-read within %g s of a change)",
        f"[{host}]" if ":" in host else host,  # an IPv6 address, as a URL writes it
        sock.getsockname()[1],
        workers,
        "s" if workers > 1 else "",
        reload_seconds,
    )
    with _batched_request_lines() as lines:
        if workers == 1:
            return _run(server, sock, models, reload_seconds, lines)
        children = []
        for k in range(workers):
            pid = os.fork()
            if pid == 0:  # a worker: serve, then leave without running the parent's exit handlers
                code = 1
                try:
                    mine = sock if k == 0 else _listening(host, sock.getsockname()[1], reuse_port=True)
                    code = _run(server, mine, models, reload_seconds, lines)
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


class BatchedLines(logging.Handler):
    """Log lines written to stderr (whatever ``sys.stderr`` is then) in batches: when the next line
    would take the batch past ``PIPE_BUF`` (4,096 bytes: a write that size is whole even on a pipe
    shared with other workers), when the first line waiting is ``seconds`` old (checked at each
    line, and every ``seconds`` by the server), and when the server stops. The request lines of
    ``nbspark serve``: a write per line cost 8 % of the requests a second (docs/serve.md). A line
    waits at most about ``seconds``; a server killed with SIGKILL loses the lines waiting."""

    def __init__(self, formatter: logging.Formatter, seconds: float = LINE_SECONDS):
        super().__init__()
        self.setFormatter(formatter)
        self.seconds, self.lines, self.size, self.since = seconds, [], 0, 0.0

    def emit(self, record):
        try:
            line = self.format(record) + "\n"
        except Exception:  # a record that cannot be formatted: reported as logging reports it
            self.handleError(record)
            return
        if self.size + len(line) > 4096:
            self.flush()
        if not self.lines:
            self.since = time.monotonic()
        self.lines.append(line)
        self.size += len(line)
        if time.monotonic() - self.since >= self.seconds:
            self.flush()

    def flush(self):
        with self.lock:  # the server's timer thread flushes too
            if self.lines:
                text, self.lines, self.size = "".join(self.lines), [], 0
                with contextlib.suppress(OSError, ValueError):  # stderr closed: as logging, no crash
                    sys.stderr.write(text)
                    sys.stderr.flush()


@contextlib.contextmanager
def _batched_request_lines():
    """The request lines (``REQUESTS``) through a ``BatchedLines`` with the ``nbspark`` logger's
    format, not line by line; as they were again at the end."""
    requests, formats = logging.getLogger(REQUESTS), logging.getLogger("nbspark").handlers
    lines = BatchedLines(next((h.formatter for h in formats if h.formatter), logging.Formatter()))
    requests.addHandler(lines)
    requests.propagate = False
    try:
        yield lines
    finally:
        lines.flush()
        requests.removeHandler(lines)
        requests.propagate = True


def _run(server, sock, models: Models, reload_seconds: float, lines: BatchedLines) -> int:
    models.watch(reload_seconds)
    stop = threading.Event()
    threading.Thread(target=_flush_every, args=(lines, stop), name="nbspark-lines", daemon=True).start()
    # uvicorn drains on SIGTERM / SIGINT, then raises the signal again to the handlers it found:
    # these take it, so that a drained server exits 0 (not killed by the signal, nor a traceback)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    try:
        server.run(sockets=[sock])
    finally:
        models.stop()
        stop.set()
        lines.flush()
    if os.getpid() == _PARENT:
        log.info("stopped")
    return 0


def _flush_every(lines: BatchedLines, stop: threading.Event) -> None:
    while not stop.wait(lines.seconds):
        lines.flush()
