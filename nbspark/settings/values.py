"""A setting's value: from a TOML file or a ``--set`` string, checked against its field's type. Pure."""

from __future__ import annotations

import os
import tomllib
import typing

from nbspark.errors import ConfigError

__all__ = ["checked_value", "coerced_value", "close_to", "overrides_of", "toml_file"]


def toml_file(path: str | os.PathLike) -> dict:
    """A settings file read as TOML, which is UTF-8 (a byte-order mark opening it, as Windows'
    Notepad saves "UTF-8 with BOM", is dropped); ``ConfigError`` in one line naming the file for one
    that cannot be read, is not UTF-8 (the byte and where) or is not TOML."""
    try:
        with open(path, "rb") as fh:
            return tomllib.loads(fh.read().decode("utf-8-sig"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start]
        raise ConfigError(
            f"{path}: not valid TOML: not UTF-8 text (byte {byte:#04x} at offset {exc.start})"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc.strerror}") from None


def close_to(names, known, prefix: str = "") -> str:
    """``"; did you mean 'nb.alpha'?"`` for the known names closest to each misspelt one (difflib's
    measure; ``prefix``, a section's ``nb.``, put before the name suggested, not compared), or nothing
    where none is close: an unknown setting's message ends with it."""
    import difflib

    near = [m for n in names for m in difflib.get_close_matches(n, sorted(known), n=1, cutoff=0.75)]
    return f"; did you mean {' or '.join(repr(prefix + m) for m in dict.fromkeys(near))}?" if near else ""


def _type_name(hint) -> str:
    if hint is bool:
        return "true or false"
    if hint is int:
        return "an integer"
    if hint is float:
        return "a number"
    if hint is str:
        return "a string"
    if typing.get_args(hint) == (tuple[str, ...], Ellipsis):
        return "a list of lists of strings"
    return "a list of strings"


def checked_value(key: str, value, hint):
    """``value`` from a TOML file as the field's type (``hint``), or ``ConfigError`` naming the key
    and the type expected. Integers are accepted for floats; nothing else is converted."""
    ok = False
    if hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif hint is str:
        ok = isinstance(value, str)
    elif typing.get_args(hint) == (tuple[str, ...], Ellipsis):
        ok = isinstance(value, list) and all(
            isinstance(v, list) and all(isinstance(w, str) for w in v) for v in value
        )
        value = tuple(tuple(v) for v in value) if ok else value
    else:  # tuple[str, ...]
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        value = tuple(value) if ok else value
    if not ok:
        got = type(value).__name__ if not isinstance(value, (list, tuple)) else "list"
        raise ConfigError(f"{key} must be {_type_name(hint)}, got {got} {value!r}")
    return value


def coerced_value(key: str, value: str, hint):
    """Turn a ``--set key=value`` string into the field's type (``hint``).

    Lists are comma-separated; ``confusion_sets`` is sets separated by ``;``, words by ``,``; or
    either as in the TOML file (``["affect", "effect"]``), read as TOML, not split into ``["affect"``.
    """
    if hint is bool:
        if value.lower() in ("true", "1", "yes"):
            return True
        if value.lower() in ("false", "0", "no"):
            return False
        raise ConfigError(f"{key} must be true or false, got {value!r}")
    if hint is int:
        try:
            return int(value)
        except ValueError:
            raise ConfigError(f"{key} must be an integer, got {value!r}") from None
    if hint is float:
        try:
            return float(value)
        except ValueError:
            raise ConfigError(f"{key} must be a number, got {value!r}") from None
    if hint is str:
        return value
    if value.lstrip().startswith("["):
        try:
            return checked_value(key, tomllib.loads(f"v = {value}")["v"], hint)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(
                f'{key}: {value!r} is not a TOML array ({exc}): write ["a", "b"] or a,b'
            ) from None
    if typing.get_args(hint) == (tuple[str, ...], Ellipsis):
        return tuple(tuple(w.strip() for w in part.split(",")) for part in value.split(";") if part.strip())
    return tuple(v.strip() for v in value.split(",")) if value else ()


def overrides_of(settings) -> dict[str, str]:
    """Settings by key with Python values (``{"nb.alpha": 0.5, "train.path": Path("x")}``) as
    ``--set`` gives them, strings: a string as it is, a path object as its path, anything else as
    JSON writes it (TOML reads it the same: numbers, booleans, lists of strings)."""
    import json
    from collections.abc import Mapping

    if not isinstance(settings, Mapping):
        raise TypeError(f"settings is a dict of setting -> value, not a {type(settings).__name__}")
    return {
        k: v if isinstance(v, str) else os.fspath(v) if isinstance(v, os.PathLike) else json.dumps(v)
        for k, v in settings.items()
    }
