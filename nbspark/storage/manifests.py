"""Model manifests (``manifest.json``): what a model directory holds, made by which run.

Every manifest starts with the same header (kind, schema version, nbspark version, creation
time, the resolved config); each family adds its own fields. This module also owns the rules
of ``--update`` (settings compared, statistics added, inputs listed) and the one loader that
refuses anything that is not a complete model of the expected kind and version. No pyspark: it reads through
``storage``.
"""

from __future__ import annotations

import datetime as _dt
import json

from nbspark._version import __version__
from nbspark.errors import InputError, OutputError
from nbspark.storage.locations import Location, location
from nbspark.storage.tables import MARKER, await_commit, check_marker, read_json
from nbspark.storage.versions import newest_deltas

__all__ = [
    "BACKOFF_KIND",
    "DENSITY_KIND",
    "MANIFEST_FIELDS",
    "NB_KIND",
    "SCHEMA_VERSION",
    "check_update",
    "confusion_sets",
    "counted_files",
    "counted_signatures",
    "fold_stream_updates",
    "folded_manifest",
    "json_type",
    "load_manifest",
    "manifest_problem",
    "manifest_header",
    "merged_manifest",
    "model_version",
    "recorded_config",
    "set_of_word",
]

BACKOFF_KIND = "nbspark.backoff-counts"
NB_KIND = "nbspark.nb-counts"
DENSITY_KIND = "nbspark.density-counts"
TASK_OF_KIND = {
    BACKOFF_KIND: "backoff",
    NB_KIND: "naive_bayes",
    DENSITY_KIND: "density",
}  # the config's task that trains each
SCHEMA_VERSION = 1

#: What a manifest must hold to be read, by kind: each field (a dotted path into the JSON) and its
#: type. A model whose manifest lacks one, or holds another type, is refused naming the field.
_NUMBER = (int, float)
_COMMON_FIELDS = {
    "config": dict,
    "config.train": dict,
    "config.train.format": str,
    "config.train.splits": list,
    "config.train.holdout": _NUMBER,
    "config.train.seed": int,
    "count_rows": int,
    "stats": dict,
}
MANIFEST_FIELDS = {
    BACKOFF_KIND: {
        **_COMMON_FIELDS,
        "letters": str,
        "subsets": list,
        "config.width": int,
        "config.lowercase": bool,
        "config.confusion_set": list,
    },
    NB_KIND: {
        **_COMMON_FIELDS,
        "model": str,
        "label_counts": dict,
        "features": int,
        "config.nb": dict,
        "config.nb.alpha": _NUMBER,
        "config.nb.var_smoothing": _NUMBER,
        "config.nb.tokenizer": str,
    },
    DENSITY_KIND: {
        **_COMMON_FIELDS,
        "columns": list,
        "total": _NUMBER,
        "config.density": dict,
        "config.density.model": str,
        "config.density.m": _NUMBER,
    },
}


#: How a message names each JSON type.
_JSON_NAMES = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    dict: "an object",
    list: "a list",
}


def _type_name(types) -> str:
    types = types if isinstance(types, tuple) else (types,)
    return "a number" if types == _NUMBER else " or ".join(_JSON_NAMES[t] for t in types)


def manifest_problem(manifest, kind: str) -> str | None:
    """What makes ``manifest`` unreadable as a model of ``kind`` (``MANIFEST_FIELDS``), or None."""
    if not isinstance(manifest, dict):
        return f"a JSON {type(manifest).__name__}, expected an object"
    for path, types in MANIFEST_FIELDS.get(kind, {}).items():
        value = manifest
        for part in path.split("."):
            value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
        if value is _MISSING:
            return f"field {path!r} is missing ({_type_name(types)})"
        wanted = types if isinstance(types, tuple) else (types,)
        if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
            return f"field {path!r} is {json_type(value)}, expected {_type_name(types)}"
    if isinstance(manifest.get("count_rows"), int) and manifest["count_rows"] < 0:
        return f"field 'count_rows' is {manifest['count_rows']}, expected a count >= 0"
    return None


def json_type(value) -> str:
    """How a JSON value is named in a message: its type, and the value itself when short."""
    name = _JSON_NAMES.get(type(value), "null" if value is None else type(value).__name__)
    shown = repr(value)
    return (
        f"{name} ({shown})"
        if value is not None and len(shown) <= 40 and not isinstance(value, (dict, list))
        else name
    )


_MISSING = object()


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
    """The fields every model manifest starts with: what it is, which version, when, and the config
    (an ``ExperimentConfig``, or the dict a manifest recorded)."""
    return {
        "kind": kind,
        "schema_version": SCHEMA_VERSION,
        "nbspark_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "config": cfg if isinstance(cfg, dict) else cfg.to_dict(),
    }


def _staged_models(saved: Location) -> list[str]:
    """The model directories of a saved pyspark.ml Pipeline's or PipelineModel's stages
    (``stages/N_Name_uid/nbspark``), in stage order; none where ``saved`` is no pipeline."""
    if not (saved / "stages").is_dir():
        return []
    stages = (saved / "stages").iterdir()  # named N_uid: in N's order, 10 after 9
    found = (d / "nbspark" for d in sorted(stages, key=lambda d: (len(d.name.split("_")[0]), d.name)))
    return [str(d) for d in found if (d / "manifest.json").is_file()]


def load_manifest(model_dir: Location | str, kind: str | tuple[str, ...]) -> dict:
    """The manifest of a model directory (on any storage), refusing anything that is not a complete
    model of ``kind`` (``OutputError``, one line)."""
    model_dir = location(model_dir)
    path = model_dir / "manifest.json"
    if not model_dir.is_dir() and not await_commit(model_dir):
        raise OutputError(f"{model_dir}: no such model directory (nbspark train writes one)")
    if not path.is_file():  # an experiment's directory, or a saved pyspark.ml model, holds one a level down
        inside = next(
            (d for d in (model_dir / "model", model_dir / "nbspark") if (d / "manifest.json").is_file()), None
        )
        staged = _staged_models(model_dir) if inside is None else []
        if (model_dir / MARKER).is_file() and read_json(model_dir / MARKER).get("kind") == "results":
            raise OutputError(
                f"{model_dir}: the results of a classify job (predictions, metrics), not a model; "
                "give the --model that classify was run with"
            )
        raise OutputError(
            f"{model_dir}: not an nbspark model (no manifest.json)"
            + (f"; the model is {inside}" if inside else "")
            + (f"; a saved pipeline, whose stage's model is {staged[0]}" if len(staged) == 1 else "")
            + (f"; a saved pipeline, whose stages' models are {', '.join(staged)}" if len(staged) > 1 else "")
        )
    check_marker(model_dir)
    marker = read_json(model_dir / MARKER) if (model_dir / MARKER).is_file() else None
    if not isinstance(marker, dict) or marker.get("kind") != "model":
        found = (
            "no " + MARKER
            if marker is None
            else f"a {MARKER} of kind {json_type(marker.get('kind') if isinstance(marker, dict) else marker)}"
        )
        raise OutputError(
            f'{model_dir}: not a complete nbspark model ({found}; a model has one of kind "model")'
        )
    try:
        manifest = read_json(path)
    except ValueError:
        raise OutputError(f"{path}: not valid JSON") from None
    if not isinstance(manifest, dict):
        raise OutputError(f"{path}: {manifest_problem(manifest, '')}")
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
    if problem := manifest_problem(manifest, manifest["kind"]):
        raise OutputError(f"{path}: {problem}")
    for _, delta_dir in newest_deltas(model_dir, model_version(manifest)):
        try:
            delta = read_json(delta_dir / "manifest.json")
        except ValueError:
            raise OutputError(f"{delta_dir / 'manifest.json'}: not valid JSON") from None
        if problem := manifest_problem(delta, manifest["kind"]):
            raise OutputError(f"{delta_dir / 'manifest.json'}: {problem}")
        manifest = folded_manifest(manifest, delta, delta_dir, model_dir)
    return manifest


#: Fields a delta adds to its model's: summed (counts by name), or numbers summed. ``features`` and
#: ``distinct_events`` count distinct keys, so the sum over a base and its deltas is an upper bound
#: until a compaction counts them again.
_SUMMED_MAPS = ("stats", "label_counts", "distinct_events", "values")
_SUMMED_NUMBERS = ("features", "count_rows", "total", "distinct_rows")
#: The summed fields that are upper bounds until a compaction counts them again (a key in two parts
#: counted twice): naive Bayes features, backoff events, density rows and values.
_BOUNDS = ("features", "distinct_events", "distinct_rows", "values")


def recorded_config(model_dir) -> dict | None:
    """The config the model at ``model_dir`` was trained with, as its manifest records it (the last
    run that wrote it whole: a train, or an ``--update``; a version a stream or ``save`` adds keeps
    it); None where no complete model is there (the run's own checks then say why). A model written
    whole in Python or by a pyspark.ml stage read no input: its config's ``train`` and ``test`` are
    the embedded default's, not its own, and are left out."""
    try:
        manifest = load_manifest(model_dir, tuple(TASK_OF_KIND))
    except (OutputError, ValueError):
        return None
    if (manifest.get("inputs") or {}).get("root", "python") == "python":  # of the run that wrote config
        return {k: v for k, v in manifest["config"].items() if k not in ("train", "test")}
    return manifest["config"]


def folded_manifest(manifest: dict, delta: dict, delta_dir: Location, model_dir: Location) -> dict:
    """The manifest of a model's newer version: ``manifest`` with the delta at ``delta_dir`` added.

    ``parts`` lists every count table of the version with its rows (``versions.count_parts``), and
    ``count_rows`` is their sum; ``version`` and ``streams`` (each stream's last committed batch)
    are the delta's; updates and malformed examples are appended; ``bounds`` names the fields that
    are upper bounds until a compaction."""
    out = dict(manifest)
    if "parts" not in out:
        out["parts"] = [[(location(model_dir) / "counts").uri, manifest["count_rows"]]]
    out["parts"] = out["parts"] + [[(delta_dir / "counts").uri, delta["count_rows"]]]
    for key in _SUMMED_MAPS:
        if key in out and key in delta:
            out[key] = _added(out[key], delta[key])
    for key in _SUMMED_NUMBERS:
        if key in out and key in delta:
            out[key] = out[key] + delta[key]
    out["bounds"] = [k for k in _BOUNDS if k in out]
    out["updates"] = out.get("updates", []) + delta.get("updates", [])
    out["malformed_examples"] = (out.get("malformed_examples", []) + delta.get("malformed_examples", []))[:10]
    out["version"] = delta["version"]
    out["streams"] = {**out.get("streams", {}), **delta.get("streams", {})}
    return out


def _added(a: dict, b: dict) -> dict:
    """Two maps of counts, summed by key (sorted); a nested map is summed in the same way."""
    out = dict(a)
    for key, value in b.items():
        out[key] = _added(out.get(key, {}), value) if isinstance(value, dict) else out.get(key, 0) + value
    return dict(sorted(out.items()))


def counted_signatures(inputs: dict) -> list[list]:
    """``[path, size, modification time]`` of each file a run (or a stream, folded) counted, from the
    ``inputs`` of its manifest or update; a folded stream names them under its ``root``."""
    signatures = inputs.get("signatures", [])
    if not inputs.get("relative"):
        return signatures
    root = inputs["root"].rstrip("/")
    return [[f"{root}/{name}", size, mtime] for name, size, mtime in signatures]


def counted_files(inputs: dict) -> list[str]:
    """The files a run (or a folded stream) counted, or its root when it named none."""
    if inputs.get("relative"):
        return [path for path, _, _ in counted_signatures(inputs)]
    return inputs.get("files") or [inputs.get("root")]


def fold_stream_updates(updates: list[dict]) -> list[dict]:
    """A model's ``updates`` with each run of one stream's batches (marked ``stream``, in a row) as one
    entry: the last batch's time, ``batches``, the statistics summed, and every file's signature with
    its name under the watched folder (``relative``). What ``--update`` refuses and what the overlap
    check finds are unchanged (``counted_signatures``, ``counted_files``); a compaction folds, so the
    manifest grows by one short line per file streamed, not a record per batch."""
    out: list[dict] = []
    for update in updates:
        named = _under_root(update) if update.get("stream") else None
        last = out[-1] if out else None
        if (
            named is not None
            and last is not None
            and last.get("stream") == update["stream"]
            and last["inputs"].get("relative")
            and last["inputs"]["format"] == named["format"]
            and last["inputs"]["root"].rstrip("/") == named["root"].rstrip("/")
        ):
            out[-1] = {
                "created": update["created"],
                "stream": update["stream"],
                "batches": last.get("batches", 1) + update.get("batches", 1),
                "inputs": {
                    **last["inputs"],
                    "signatures": last["inputs"]["signatures"] + named["signatures"],
                },
                "stats": _added(last["stats"], update["stats"]),
            }
        else:
            out.append(
                update if named is None else {**update, "batches": update.get("batches", 1), "inputs": named}
            )
    return out


def _under_root(update: dict) -> dict | None:
    """An update's inputs with every signature named under its root, or None when one is not under it."""
    inputs = update["inputs"]
    if inputs.get("relative"):
        return inputs
    root = inputs["root"].rstrip("/") + "/"
    signatures = inputs.get("signatures", [])
    if not all(path.startswith(root) for path, _, _ in signatures):
        return None
    return {
        "format": inputs["format"],
        "root": inputs["root"],
        "relative": True,
        "signatures": [[path[len(root) :], size, mtime] for path, size, mtime in signatures],
    }


def model_version(manifest: dict) -> int:
    """A model's version: one per commit (a train, an ``--update``, a stream's batch, ``save``); a
    model written before versions were recorded has one per run that counted into it."""
    return int(manifest.get("version") or len(manifest.get("updates") or ()) or 1)


def merged_manifest(old: dict | None, manifest: dict) -> dict:
    """The manifest of an updated model: statistics added, the inputs of every update listed, the
    next version (``storage.versions``)."""
    update = {"created": manifest["created"], "inputs": manifest["inputs"], "stats": manifest["stats"]}
    if old is None:
        manifest["updates"] = [update]
        manifest["version"] = 1
        return manifest
    manifest["updates"] = old.get("updates", []) + [update]
    manifest["stats"] = _added(old["stats"], manifest["stats"])
    manifest["version"] = model_version(old) + 1  # the deltas of a streamed model are folded in
    if "streams" in old:
        manifest["streams"] = old["streams"]
    for key in ("matrix_columns", "matrix_names", "label_numbers"):  # what Python fitted it on, kept
        if key in old:
            manifest.setdefault(key, old[key])
    manifest["malformed_examples"] = (old.get("malformed_examples", []) + manifest["malformed_examples"])[:10]
    return manifest


def check_update(old: dict, cfg, keys: tuple[str, ...]) -> None:
    """Refuse to add counts made with other settings to a model (``keys`` like ``"width"``,
    ``"nb.model"``)."""

    def setting(config: dict, key: str):
        value = config
        for part in key.split("."):
            value = value[part]
        return json.loads(json.dumps(value))  # tuples as lists, at every depth: as the manifest has them

    for key in keys:
        theirs, mine = setting(old["config"], key), setting(cfg.to_dict(), key)
        if theirs != mine:
            raise InputError(
                f"cannot update: the model was counted with {key} = {theirs!r}, this run has {mine!r}"
            )
