"""The server's transport: an answer's head and body leave in one write, and what HTTP needs written
alone (``100 Continue``, a ``HEAD`` answer's head) still leaves; a request head that never comes
whole is answered 408; its request lines, in batches."""

import asyncio
import contextlib
import logging
import socket
import time

import requests

from nbspark.serve.app import Limits
from nbspark.serve.server import BatchedLines, OneWrite
from tests.serve.conftest import FIXTURE_LIMITS, running


class _Transport:
    """What uvicorn's protocol uses of a transport, recording the writes."""

    def __init__(self):
        self.writes, self.closed = [], False

    def write(self, data):
        self.writes.append(data)

    def is_closing(self):
        return self.closed

    def close(self):
        self.closed = True

    def get_extra_info(self, name, default=None):
        return {"peername": ("127.0.0.1", 5)}.get(name, default)


def test_the_writes_of_one_turn_of_the_loop_leave_as_one():
    async def turns():
        wire = _Transport()
        one = OneWrite(wire, asyncio.get_running_loop())
        one.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        one.write(b"ok")
        assert wire.writes == []  # nothing yet: the turn is not over
        await asyncio.sleep(0)
        assert wire.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]
        one.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        one.close()  # what is pending leaves before the connection closes
        assert wire.writes[-1] == b"HTTP/1.1 400 Bad Request\r\n\r\n" and wire.closed
        one.write(b"late")
        await asyncio.sleep(0)
        assert len(wire.writes) == 2  # written once closing: dropped, as the transport drops it
        assert one.get_extra_info("peername") == ("127.0.0.1", 5)  # the rest is the transport's

    asyncio.run(turns())


def _read_answer(s: socket.socket) -> bytes:
    """One whole answer (head and Content-Length bytes of body) from ``s``."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(x for x in head.split(b"\r\n") if x.lower().startswith(b"content-length:"))[15:])
    while len(body) < length:
        body += s.recv(65536)
    return head + b"\r\n\r\n" + body


def test_what_http_writes_alone_still_leaves_100_continue_and_a_head(checker_model):
    body = b"language=en-US&text=It+would+not+effect+the+outcome."
    with running([checker_model]) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as s:
            post = (
                b"POST /v2/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            )
            s.sendall(post + b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            head, _, json_body = _read_answer(s).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200") and json_body.endswith(b"}")
            assert b'"NBSPARK_AFFECT_EFFECT"' in json_body
            # a client that waits for 100 Continue before sending its body, on the same connection:
            # the server writes it alone, then waits (a write held for another would never leave)
            s.sendall(post + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
            assert s.recv(65536).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
            s.sendall(body)
            assert _read_answer(s).startswith(b"HTTP/1.1 200")
            s.sendall(b"HEAD /v2/languages HTTP/1.1\r\nHost: x\r\n\r\n")  # a head with no body after it
            head = b""
            while b"\r\n\r\n" not in head:
                head += s.recv(65536)
            assert head.startswith(b"HTTP/1.1 200") and head.endswith(b"\r\n\r\n")


class _Stderr:
    def __init__(self):
        self.writes = []

    def write(self, text):
        self.writes.append(text)

    def flush(self):
        pass


def test_request_lines_are_written_in_batches_whole_and_in_order(monkeypatch):
    stderr = _Stderr()
    monkeypatch.setattr("sys.stderr", stderr)
    lines = BatchedLines(logging.Formatter("nbspark: %(message)s"), seconds=3600)

    def line(k, width=40):
        lines.handle(logging.makeLogRecord({"msg": "POST /v2/check 200 %s", "args": (str(k).zfill(width),)}))

    for k in range(3):
        line(k)
    assert stderr.writes == []  # waiting for more
    lines.flush()
    assert stderr.writes == ["".join(f"nbspark: POST /v2/check 200 {str(k).zfill(40)}\n" for k in range(3))]
    for k in range(200):  # 69 bytes a line: 59 lines a batch, written before it would pass 4,096 bytes
        line(k)
    lines.flush()
    written = stderr.writes[1:]
    assert [w.count("\n") for w in written] == [59, 59, 59, 23]
    assert "".join(written).splitlines() == [
        f"nbspark: POST /v2/check 200 {str(k).zfill(40)}" for k in range(200)
    ]
    lines.handle(logging.makeLogRecord({"msg": "%d ms", "args": ("many",)}))  # cannot be formatted
    assert lines.lines == [] and "Logging error" in "".join(stderr.writes[5:])  # said as logging says it
    lines.seconds = 0  # a line as old as ``seconds`` is written at once
    line(7)
    assert stderr.writes[-1].endswith(f"{str(7).zfill(40)}\n") and lines.lines == []


def _until_closed(s: socket.socket) -> bytes:
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data


def test_a_head_that_never_comes_whole_is_answered_408_and_closed(checker_model):
    limits = Limits(seconds=1.0, factor=FIXTURE_LIMITS.factor, rule=FIXTURE_LIMITS.rule)
    head = b"POST /v2/check HTTP/1.1\r\nHost: x\r\n"  # the blank line that ends a head never comes
    with running([checker_model], limits) as (url, _):
        address = url.removeprefix("http://").split(":")
        address = (address[0], int(address[1]))
        with (
            socket.create_connection(address, timeout=10) as silent,
            socket.create_connection(address, timeout=10) as slow,
        ):
            slow.sendall(head)
            start = time.monotonic()
            served = requests.post(f"{url}/v2/check", data={"text": "x", "language": "en-US"}, timeout=5)
            assert served.status_code == 200  # the others are answered meanwhile
            for client in (silent, slow):
                answer = _until_closed(client)
                assert answer.startswith(b"HTTP/1.1 408") and answer.endswith(b"within 1 s")
            assert 1.0 <= time.monotonic() - start < 4
        with socket.create_connection(address, timeout=10) as kept:  # after an answer, the next head
            kept.sendall(
                head + b"Content-Length: 20\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n"
            )
            kept.sendall(b"language=en-US&text=")
            assert kept.recv(65536).startswith(b"HTTP/1.1 200")
            time.sleep(0.5)
            kept.sendall(head)  # is due within the limit of that answer, not the keep-alive's 5 s
            start = time.monotonic()
            assert _until_closed(kept).startswith(b"HTTP/1.1 408") and time.monotonic() - start < 3


def test_a_head_longer_than_the_body_limit_is_answered_431_and_closed(checker_model):
    limits = Limits(max_bytes=64 << 10, factor=FIXTURE_LIMITS.factor, rule=FIXTURE_LIMITS.rule)
    text = "It would not effect the outcome. " * 1000  # 33 KB: a text in the URL, under the limit
    with running([checker_model], limits) as (url, _):
        address = url.removeprefix("http://").split(":")
        address = (address[0], int(address[1]))
        got = requests.get(f"{url}/v2/check", params={"text": text, "language": "en-US"}, timeout=10)
        assert got.status_code == 200 and len(got.json()["matches"]) == 1000
        for head in (
            b"GET /v2/check?text=" + b"a" * (10 << 20),  # a URL that never ends
            b"GET /v2/check?language=en HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * (10 << 20),
            b"GET /v2/healthcheck HTTP/1.1\r\nHost: x\r\n\r\n" + b"GET /" + b"c" * (10 << 20),  # the next
        ):
            with socket.create_connection(address, timeout=10) as client:
                with contextlib.suppress(ConnectionError):  # refused before it is all sent
                    client.sendall(head)
                answer = _until_closed(client)
            assert answer.count(b"HTTP/1.1 431") == 1, answer[-300:]
            assert answer.endswith(b"Error: the request line and headers are over 65536 bytes")
        assert requests.get(f"{url}/v2/healthcheck", timeout=10).text == "OK"  # the others are served


def test_the_rest_of_an_answered_body_is_read_within_the_limits_then_the_connection_closed(checker_model):
    """A request answered before its body was all received (413 from its length, 404): the rest is
    read and dropped so that the client reads its answer, a little more is followed by the next
    request, but no more than the limits allow (uvicorn read on for as long as it was sent)."""
    limits = Limits(max_bytes=64 << 10, seconds=1.0, factor=FIXTURE_LIMITS.factor, rule=FIXTURE_LIMITS.rule)
    with running([checker_model], limits) as (url, _):
        address = url.removeprefix("http://").split(":")
        address = (address[0], int(address[1]))
        for path in (b"/v2/check", b"/nowhere"):  # 10 MB, fast
            with socket.create_connection(address, timeout=10) as client:
                client.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\n\r\n" % path)
                with contextlib.suppress(ConnectionError):  # closed before it is all sent
                    client.sendall(b"a" * (10 << 20))
                answer = _until_closed(client)
            assert answer.count(b"HTTP/1.1 ") == 1 and answer.startswith((b"HTTP/1.1 413", b"HTTP/1.1 404"))
        with socket.create_connection(address, timeout=10) as client:  # the rest, slowly
            client.sendall(b"POST /v2/check HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
            start = time.monotonic()
            with contextlib.suppress(ConnectionError):
                while time.monotonic() - start < 5:
                    client.sendall(b"a")
                    time.sleep(0.1)
            assert time.monotonic() - start < 3  # closed within the time limit and its tick
            answer = _until_closed(client)
            assert answer.count(b"HTTP/1.1 ") == 1 and answer.startswith(b"HTTP/1.1 413")
        with socket.create_connection(address, timeout=10) as client:  # a little over: then the next
            client.sendall(
                b"POST /v2/check HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
                + b"a" * 100_000
                + b"GET /v2/healthcheck HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            answer = _until_closed(client)
            assert answer.startswith(b"HTTP/1.1 413") and b"HTTP/1.1 200" in answer and answer.endswith(b"OK")


def test_only_loopback_is_served_without_a_warning():
    """``--host`` other than loopback is said at start: the server has no authentication."""
    from nbspark.serve.server import _loopback

    assert [_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "localhost")] == [True] * 4
    assert [_loopback(h) for h in ("0.0.0.0", "::", "192.0.2.7", "example.org")] == [False] * 4
