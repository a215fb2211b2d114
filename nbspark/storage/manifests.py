"""Model manifests (``manifest.json``): what a model directory holds, made by which run.

Every manifest starts with the same header (kind, schema version, nbspark version, creation
time, the resolved config); each family adds its own fields. This module also owns the rules
of ``--update`` (settings compared, statistics added, inputs listed) and the one loader that
refuses anything that is not a complete model of the expected kind and version. No pyspark: it reads through
``storage``.
"""

from __future__ import annotations

import datetime as _dt

from nbspark._version import __version__
from nbspark.errors import InputError, OutputError
from nbspark.storage.locations import Location, location
from nbspark.storage.tables import MARKER, check_marker, read_json

__all__ = [
    "BACKOFF_KIND",
    "NB_KIND",
    "SCHEMA_VERSION",
    "check_update",
    "confusion_sets",
    "load_manifest",
    "manifest_header",
    "merged_manifest",
    "set_of_word",
]

BACKOFF_KIND = "nbspark.backoff.predict-counts"
NB_KIND = "nbspark.naive_bayes.model-counts"
TASK_OF_KIND = {BACKOFF_KIND: "backoff", NB_KIND: "naive_bayes"}  # the config's task that trains each
SCHEMA_VERSION = 1


def confusion_sets(config: dict) -> tuple[tuple[str, ...], ...]:
    """A backoff model's confusion sets, from the config its manifest records: ``confusion_sets``
    if given, else ``(confusion_set,)`` (``ExperimentConfig.sets``'s rule)."""
    return tuple(tuple(s) for s in config.get("confusion_sets") or [config["confusion_set"]])


def set_of_word(sets) -> dict[str, frozenset]:
    """Each word of ``sets`` -> its confusion set (the first that holds it): the words a window's
    centre competes with, for the classify job and ``nbspark.load`` alike."""
    found: dict[str, frozenset] = {}
    for words in sets:
        for w in words:
            found.setdefault(w, frozenset(words))
    return found


def manifest_header(kind: str, cfg) -> dict:
    """The fields every model manifest starts with: what it is, which version, when, and the config."""
    return {
        "kind": kind,
        "schema_version": SCHEMA_VERSION,
        "nbspark_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "config": cfg.to_dict(),
    }


def load_manifest(model_dir: Location | str, kind: str | tuple[str, ...]) -> dict:
    """The manifest of a model directory (on any storage), refusing anything that is not a complete
    model of ``kind`` (``OutputError``, one line)."""
    model_dir = location(model_dir)
    path = model_dir / "manifest.json"
    if not model_dir.is_dir():
        raise OutputError(f"{model_dir}: no such model directory; run jobs/train.py first")
    if not path.is_file():  # an experiment's directory, or a saved pyspark.ml model, holds one a level down
        inside = next(
            (d for d in (model_dir / "model", model_dir / "nbspark") if (d / "manifest.json").is_file()), None
        )
        if (model_dir / MARKER).is_file() and read_json(model_dir / MARKER).get("kind") == "results":
            raise OutputError(
                f"{model_dir}: the results of a classify job (predictions, metrics), not a model; "
                "give the --model that classify was run with"
            )
        raise OutputError(
            f"{model_dir}: not an nbspark model (no manifest.json)"
            + (f"; the model is {inside}" if inside else "")
        )
    check_marker(model_dir)
    try:
        manifest = read_json(path)
    except ValueError:
        raise OutputError(f"{path}: not valid JSON") from None
    kinds = (kind,) if isinstance(kind, str) else kind
    if manifest.get("kind") not in kinds:
        found = manifest.get("kind")
        if found in TASK_OF_KIND and len(kinds) == 1 and kinds[0] in TASK_OF_KIND:  # the other family's model
            task = TASK_OF_KIND[found]
            raise OutputError(
                f"{model_dir}: a {task} model, not a {TASK_OF_KIND[kinds[0]]} one; "
                f'a job runs it with task = "{task}" (--set task={task}, or the config it was trained with)'
            )
        raise OutputError(f"{model_dir}: a model of kind {found!r}, expected {' or '.join(map(repr, kinds))}")
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise OutputError(
            f"{model_dir}: model schema version {manifest.get('schema_version')!r}, this nbspark reads "
            f"{SCHEMA_VERSION}"
        )
    return manifest


def merged_manifest(old: dict | None, manifest: dict) -> dict:
    """The manifest of an updated model: statistics added, the inputs of every update listed."""
    update = {"created": manifest["created"], "inputs": manifest["inputs"], "stats": manifest["stats"]}
    if old is None:
        manifest["updates"] = [update]
        return manifest
    stats = dict(old["stats"])
    for key, value in manifest["stats"].items():
        stats[key] = stats.get(key, 0) + value
    manifest["updates"] = old.get("updates", []) + [update]
    manifest["stats"] = dict(sorted(stats.items()))
    manifest["malformed_examples"] = (old.get("malformed_examples", []) + manifest["malformed_examples"])[:10]
    return manifest


def check_update(old: dict, cfg, keys: tuple[str, ...]) -> None:
    """Refuse to add counts made with other settings to a model (``keys`` like ``"width"``,
    ``"nb.model"``)."""

    def setting(config: dict, key: str):
        value = config
        for part in key.split("."):
            value = value[part]
        return list(value) if isinstance(value, (list, tuple)) else value

    for key in keys:
        theirs, mine = setting(old["config"], key), setting(cfg.to_dict(), key)
        if theirs != mine:
            raise InputError(
                f"cannot update: the model was counted with {key} = {theirs!r}, this run has {mine!r}"
            )
