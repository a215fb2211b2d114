"""The server's routes (Starlette, an ASGI application run by uvicorn), over ``Models``. No Spark.

* ``GET /``: a page to paste text into and check.
* ``GET /v2/languages``, ``GET|POST /v2/check``: LanguageTool's API (``serve.languagetool``).
* ``GET /v1/models``: every model served, with its kind, classes, version and when it was trained.
* ``POST /v1/predict``: ``{"model": NAME, "texts"|"windows"|"rows": [...], "extra_columns": [...]}``
  answers ``{"model", "version", "results", "unscored"}``, ``results`` the objects of
  ``nbspark predict --json`` (``nbspark.predictions``). ``model`` may be left out when one model
  is served.

Every request is bounded: a body over ``Limits.max_bytes`` is answered 413 without being read
further, and a body not received within ``Limits.seconds`` (to within a second) 408. A request
over ``INLINE`` is worked in a thread and answered 503 when that takes longer than
``Limits.seconds`` (the work is not interrupted: a thread cannot be; the client is answered); a
smaller one, a few milliseconds of work, is answered in the event loop.
Errors are plain text, as LanguageTool's (``Error: …``). One log line per request on the
``nbspark.serve.requests`` logger (``REQUESTS``): method, path, status, bytes sent, milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from importlib import resources
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route

from nbspark.errors import NbsparkError
from nbspark.predictions import prediction_objects
from nbspark.serve.deadlines import Deadlines
from nbspark.serve.languagetool import (
    LANGUAGES,
    RequestError,
    check_request,
    json_value,
    matches,
    response,
)
from nbspark.serve.models import Models

__all__ = ["REQUESTS", "Limits", "create_app"]

#: the logger of the line per request (``nbspark serve`` writes its lines in batches: ``serve.server``)
REQUESTS = "nbspark.serve.requests"
log = logging.getLogger(REQUESTS)

_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_NOT_UTF8 = "Error: the request is not valid UTF-8"
#: requests up to this many characters (a check) or bytes (a prediction) are answered in the event loop
INLINE = 8192


@dataclass(frozen=True)
class Limits:
    """What one request may cost: ``max_bytes`` of body (1 MiB), ``seconds`` to send it and, again,
    to answer it (10 s); ``factor`` and ``rule`` override the models' check settings;
    ``allow_origins`` are the web origins whose pages may call the server (none: only this page
    and programs, as LanguageTool's ``--allow-origin`` left out)."""

    max_bytes: int = 1 << 20
    seconds: float = 10.0
    factor: float | None = None
    rule: str | None = None
    allow_origins: tuple[str, ...] = ()  # pages of these origins may call the API from a browser (CORS)


def _header(scope, name: bytes) -> str | None:
    """A request header's value (the last one sent), or None."""
    found = None
    for key, value in scope["headers"]:  # lower-cased by the ASGI server
        if key == name:
            found = value
    return None if found is None else found.decode("latin-1")


class _Bodies:
    """Reads request bodies within ``limits``: ``max_bytes`` (413 past it) and ``seconds`` for the
    whole body (408, to within ``Deadlines``' tick)."""

    def __init__(self, limits: Limits):
        self.limits, self.deadlines = limits, Deadlines(limits.seconds)

    async def read(self, scope, receive) -> bytes:
        limits = self.limits
        too_big = RequestError(
            413, f"Error: the request body is over the limit of {limits.max_bytes:,} bytes"
        )
        declared = _header(scope, b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limits.max_bytes):
            raise too_big
        task, chunks, size = asyncio.current_task(), [], 0
        self.deadlines.start(task, task.cancel)
        try:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise RequestError(400, "Error: the client left before sending the whole body")
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limits.max_bytes:
                    raise too_big
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
        except asyncio.CancelledError:
            if self.deadlines.pending(task):
                raise  # not the deadline's: the server stopping
            task.uncancel()
            raise RequestError(
                408, f"Error: the request body was not received within {limits.seconds:g} s"
            ) from None
        finally:
            self.deadlines.stop(task)


def _decoded(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RequestError(400, _NOT_UTF8) from None


def _form(encoded: str) -> list[tuple[str, str]]:
    """Url-encoded fields, in order (a %-escape that is not UTF-8: ``RequestError`` 400)."""
    try:
        return parse_qsl(encoded, keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        raise RequestError(400, _NOT_UTF8) from None


async def _fields(scope, receive, bodies: _Bodies) -> dict[str, str]:
    """A request's form fields: the query string's, then a url-encoded body's."""
    fields = dict(_form(scope["query_string"].decode("latin-1")))
    if scope["method"] == "POST":
        body = await bodies.read(scope, receive)
        kind = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
        if body and kind not in ("", "application/x-www-form-urlencoded"):
            raise RequestError(
                415, f"Error: send the fields as application/x-www-form-urlencoded, not {kind}"
            )
        fields.update(_form(_decoded(body)))
    return fields


async def _answer(send, status: int, kind: bytes, body: bytes) -> None:
    """Write a whole answer: ``status``, its content type ``kind`` and length, and ``body``."""
    head = [(b"content-type", kind), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def _json(send, answer) -> None:
    """Answer 200 with ``answer`` as JSON (every JSON answer of the server), as Starlette's
    ``JSONResponse`` writes it. A lone UTF-16 surrogate, which a JSON request may hold as an escape
    (``"\\ud83d"``: half an emoji, as a JavaScript string can end), has no UTF-8: such an answer is
    written with every character past ASCII escaped, so that the client reads back its own string."""
    try:
        body = _ENCODER.encode(answer).encode("utf-8")
    except UnicodeEncodeError:
        body = json.dumps(answer, allow_nan=False, separators=(",", ":")).encode("ascii")
    await _answer(send, 200, b"application/json", body)


class _Endpoint:
    """A route answered by an ASGI function ``fn(scope, receive, send)``, which reads the request
    and writes its answer itself: no Starlette ``Request`` or ``Response`` between the wire and the
    work (their making cost about 15 µs a request, a quarter of a 1 KB check). A ``RequestError``
    it raises is answered here, in plain text, as LanguageTool answers (every refusal the server
    makes). Starlette holds these routes with their ``methods`` (a wrong method is answered 405
    there), and ``_Front`` calls them straight when method and path are theirs."""

    def __init__(self, fn):
        self.fn = fn

    async def __call__(self, scope, receive, send):
        try:
            await self.fn(scope, receive, send)
        except RequestError as exc:
            # a message may quote the request, and a lone surrogate in its JSON has no UTF-8
            said = exc.message.encode("utf-8", "backslashreplace")
            await _answer(send, exc.status, b"text/plain; charset=utf-8", said)


async def _work(limits: Limits, size: int, fn, *args):
    """``fn(*args)``: in the event loop when the request is small (``INLINE`` bytes: a few
    milliseconds of checking, less than a thread's hand-over costs on a 1 KB text), else in a
    thread, answered 503 past ``limits.seconds``."""
    if size <= INLINE:
        return fn(*args)
    try:
        return await asyncio.wait_for(run_in_threadpool(fn, *args), limits.seconds)
    except TimeoutError:
        raise RequestError(503, f"Error: the request took longer than {limits.seconds:g} s") from None


def _check(request, served: dict, limits: Limits) -> dict:
    flags = []
    for s in served.values():
        if not s.backoff or not any(request.wanted(r["id"], r["category"]["id"]) for r in s.rule_of.values()):
            continue
        for flag in s.model.flags(request.plain, limits.factor, limits.rule):
            rule = s.rule_of[flag["written"].lower() if s.model.lowercase else flag["written"]]
            if request.wanted(rule["id"], rule["category"]["id"]):
                flags.append((flag, rule, s.name, s.version))
    return response(request, matches(request, flags))


_PREDICT_KEYS = ("model", "texts", "windows", "rows", "extra_columns")


def _predict(body: dict, served: dict) -> dict:
    if not isinstance(body, dict):
        raise RequestError(400, 'Error: the body is a JSON object: {"model": NAME, "texts": [...]}')
    odd_keys = [k for k in body if k not in _PREDICT_KEYS]
    if odd_keys:  # a misspelt 'extra_columns' or 'texts' left out in silence would answer wrongly
        raise RequestError(
            400,
            f"Error: unknown key(s) {', '.join(map(repr, odd_keys))[:200]}; "
            f"the keys: {', '.join(_PREDICT_KEYS)}",
        )
    name = body.get("model")
    if name is None and len(served) == 1:
        name = next(iter(served))
    if not isinstance(name, str | None):
        raise RequestError(400, f"Error: 'model' is a model's name, a string, not {repr(name)[:100]}")
    if name is None:
        raise RequestError(400, f"Error: name the model to use in 'model': one of {', '.join(served)}")
    if name not in served:
        raise RequestError(404, f"Error: no model {name!r}; models: {', '.join(served)}")
    given = [k for k in ("texts", "windows", "rows") if k in body]
    items = body.get(given[0]) if len(given) == 1 else None
    if not isinstance(items, list):
        raise RequestError(400, "Error: give exactly one of 'texts', 'windows' and 'rows', as a JSON list")
    s = served[name]
    takes = ("texts", "windows") if s.backoff else ("texts",) if s.model.text else ("rows",)
    if given[0] not in takes:
        raise RequestError(400, f"Error: model {name!r} scores {' or '.join(takes)}, not {given[0]}")
    odd = next((i for i, item in enumerate(items) if given[0] != "rows" and not isinstance(item, str)), None)
    if odd is not None:  # said as JSON names it: Python's refusal speaks of lists and matrices
        raise RequestError(
            400, f"Error: each of '{given[0]}' is a JSON string; item {odd} is {json.dumps(items[odd])[:100]}"
        )
    try:
        if given[0] == "windows":  # each item must be a window, not a text holding set words
            for item in items:
                s.model.window(item)
        results, unscored = prediction_objects(s.model, items, extra_columns=body.get("extra_columns") or ())
    except (NbsparkError, ValueError, TypeError) as exc:
        raise RequestError(400, f"Error: {exc}") from None
    return {"model": name, "version": s.version, "results": results, "unscored": unscored}


def _page() -> str:
    return resources.files("nbspark.serve").joinpath("page.html").read_text(encoding="utf-8")


def create_app(models: Models, limits: Limits = Limits()) -> Starlette:
    """The server's ASGI application."""
    page, bodies = _page(), _Bodies(limits)

    async def index(request):
        return HTMLResponse(page)

    async def languages(scope, receive, send):
        await _json(send, LANGUAGES)

    async def check(scope, receive, send):
        served = models.current  # once: one version of every model for the whole request
        parsed = check_request(await _fields(scope, receive, bodies))
        await _json(send, await _work(limits, len(parsed.plain), _check, parsed, served, limits))

    async def listed(scope, receive, send):
        await _json(send, {"models": [s.info() for s in models.current.values()]})

    async def predict(scope, receive, send):
        served = models.current
        body = await bodies.read(scope, receive)
        parsed = json_value(_decoded(body), "the body")
        await _json(send, await _work(limits, len(body), _predict, parsed, served))

    async def health(request):
        return PlainTextResponse("OK")

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/v2/languages", _Endpoint(languages), methods=["GET"]),
            Route("/v2/check", _Endpoint(check), methods=["GET", "POST"]),
            Route("/v2/healthcheck", health),
            Route("/v1/models", _Endpoint(listed), methods=["GET"]),
            Route("/v1/predict", _Endpoint(predict), methods=["POST"]),
        ]
    )
    if limits.allow_origins:  # then every request goes through Starlette, and its CORS middleware
        app.add_middleware(
            CORSMiddleware, allow_origins=list(limits.allow_origins), allow_methods=["GET", "POST"]
        )
    return _Front(app, direct=not limits.allow_origins)


class _Front:
    """The application as uvicorn calls it: a request for an ``_Endpoint`` route, by its method and
    path, goes straight to it (Starlette's middleware and route matching cost about 8 µs a request);
    any other (and every request when ``direct`` is false: a browser's CORS preflight), to
    Starlette. Each is logged in one line: method, path, status, bytes of body sent
    (none to a ``HEAD``: the server drops the body it is given), milliseconds."""

    def __init__(self, app: Starlette, direct: bool = True):
        self.app = app
        self.direct = {
            (method, route.path): route.endpoint
            for route in app.routes
            if direct and isinstance(route.endpoint, _Endpoint)
            for method in route.methods
        }

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, method = time.perf_counter(), scope["method"]
        seen = _Sent(send, method == "HEAD")
        try:
            await self.direct.get((method, scope["path"]), self.app)(scope, receive, seen.send)
        finally:
            log.info(
                "%s %s %s %d %.1f ms",
                method,
                scope["path"],
                seen.status or 500,
                seen.bytes,
                (time.perf_counter() - start) * 1000,
            )


class _Sent:
    """``send``, noting the status and the bytes of body sent."""

    __slots__ = ("to", "head", "status", "bytes")

    def __init__(self, to, head: bool):
        self.to, self.head, self.status, self.bytes = to, head, 0, 0

    async def send(self, message):
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body" and not self.head:
            self.bytes += len(message.get("body", b""))
        await self.to(message)
