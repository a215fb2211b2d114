"""The models a server holds, each swapped whole when its directory gets a new version. No Spark.

A model is read with ``nbspark.load``, which checks it whole (``storage.manifests``,
``storage.counts``). ``Models.poll`` reads each directory's fingerprint (``storage.versions``:
its ``manifest.json`` and the names of its deltas); when it changed (a ``train --overwrite``, an
``--update``, a stream's batch), the model is read again and, once read whole,
swapped in: ``Models.current`` is a new mapping, never one changed in place, so a request that took
it once sees one version of every model from start to end. A directory that cannot be read (a swap in
progress, a damaged write) keeps the version being served; it is tried ``RETRIES`` polls, then logged
once and left until its fingerprint changes again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from nbspark.backoff.predictor import BackoffPredictor
from nbspark.describing import summary
from nbspark.errors import ConfigError, NbsparkError
from nbspark.loading import load
from nbspark.serve.languagetool import rule_id_clash, rules
from nbspark.storage.locations import location
from nbspark.storage.manifests import model_version
from nbspark.storage.versions import fingerprint

__all__ = ["Models", "Served", "model_names"]

log = logging.getLogger("nbspark.serve")

#: polls that read a changed manifest before its model is given up on (until the manifest changes again)
RETRIES = 3
#: the state of a model whose manifest cannot be read at all (its directory removed, say)
GONE = "gone"


@dataclass(frozen=True)
class Served:
    """One version of one model: the predictor, its manifest's bytes (what a change is seen by),
    and, for a backoff model, its rules by confusion-set word."""

    name: str
    path: str
    model: object
    fingerprint: bytes
    rule_of: dict = field(default_factory=dict)

    @property
    def backoff(self) -> bool:
        return isinstance(self.model, BackoffPredictor)

    @property
    def version(self) -> int:
        """The model's version (``storage.manifests.model_version``)."""
        return model_version(self.model.manifest)

    def info(self) -> dict:
        """What ``/v1/models`` says of the model: its name and path, ``describing.summary`` (kind,
        classes, version, when trained, a table's columns), and a backoff model's rules."""
        out = {"name": self.name, "path": self.path, **summary(self.model)}
        if self.backoff:
            out["rules"] = rules(self.model.sets, self.name)
        return out


def model_names(specs: list[str]) -> dict[str, str]:
    """``NAME=DIR`` or ``DIR`` -> ``{name: dir}``; a name left out is the directory's name, or its
    parent's when that is ``model`` (``out/affect_effect/model`` is ``affect_effect``)."""
    out = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            path = spec
            parts = [p for p in spec.rstrip("/").split("/") if p]
            name = parts[-2] if len(parts) > 1 and parts[-1] == "model" else parts[-1] if parts else spec
        if not name or name in out:
            raise ConfigError(
                f"--model {spec}: {'an empty name' if not name else f'two models named {name!r}'}"
            )
        out[name] = path
    return out


def _read(name: str, path: str) -> Served:
    try:
        before = fingerprint(location(path))
    except (OSError, NbsparkError):
        before = None  # no model there: load says why
    model = load(path)  # one version, whole (load reads again a model that moved meanwhile)
    rule_of = {}
    if isinstance(model, BackoffPredictor):
        for words, rule in zip(model.sets, rules(model.sets, name)):
            rule_of.update(dict.fromkeys(words, rule))
    return Served(name, path, model, before, rule_of)


class Models:
    """The served models by name (``current``), read at start; ``poll`` swaps in new versions."""

    def __init__(self, paths: Mapping[str, str]):
        self.current: dict[str, Served] = {name: _read(name, path) for name, path in paths.items()}
        seen: dict[str, str] = {}
        for s in self.current.values():
            for word in s.rule_of:
                if word in seen:
                    raise ConfigError(
                        f"models {seen[word]!r} and {s.name!r} both check {word!r}: serve one model per "
                        "confusion set"
                    )
                seen[word] = s.name
        sets = [s.model.sets for s in self.current.values() if s.backoff]
        if clash := rule_id_clash(words for model_sets in sets for words in model_sets):
            raise ConfigError(
                f"{clash}: a client could not tell them apart; serve them from separate servers"
            )
        self._failed: dict[str, tuple[bytes, int]] = {}  # name -> (manifest, tries) that did not read
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def poll(self) -> list[str]:
        """Read every model whose manifest changed; swap in those read whole. The names swapped."""
        swapped = []
        with self._lock:
            current = dict(self.current)
            for name, served in self.current.items():
                try:
                    now = fingerprint(location(served.path))
                except (OSError, NbsparkError) as exc:  # mid-swap (a rename), or gone: keep serving
                    self._failing(name, GONE, served, exc)
                    continue
                failed, tries = self._failed.get(name, (None, 0))
                if now == served.fingerprint:  # as served (again, after a removal undone, say)
                    self._failed.pop(name, None)
                    continue
                if now == failed and tries >= RETRIES:
                    continue
                try:
                    fresh = _read(name, served.path)
                    if set(fresh.rule_of) != set(served.rule_of):
                        raise NbsparkError("its confusion sets changed; restart the server to serve them")
                except (NbsparkError, OSError, ValueError) as exc:
                    self._failing(name, now, served, exc)
                    continue
                self._failed.pop(name, None)
                current[name] = fresh
                swapped.append(name)
                log.info("%s: now serving version %s (%s)", name, fresh.version, served.path)
            self.current = current  # one assignment: a request sees the old mapping or the new one
        return swapped

    def _failing(self, name: str, state, served: Served, exc: Exception) -> None:
        """One more poll that found ``name`` in ``state`` (its manifest, or ``GONE``) and could not
        read it: said once, at the ``RETRIES``-th poll in a row (a swap in progress reads whole a
        poll later; a damaged or removed model never), and again only once its state changes."""
        failed, tries = self._failed.get(name, (None, 0))
        tries = tries + 1 if state == failed else 1
        self._failed[name] = (state, tries)
        if tries == RETRIES:
            log.warning("%s: keeping version %s: %s", name, served.version, exc)

    def watch(self, seconds: float) -> threading.Thread:
        """Poll every ``seconds`` in a daemon thread until ``stop``."""

        def loop():
            while not self._stop.wait(seconds):
                try:
                    self.poll()
                except Exception:  # a watcher that dies would serve stale models in silence
                    log.exception("watching the models failed; trying again in %s s", seconds)

        thread = threading.Thread(target=loop, name="nbspark-models", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
