"""An input's files, found before Spark starts: ``resolve_input(spec, data_dir) -> Inputs``.

Absolute paths (and ``file:`` URIs) are used as given, relative ones are looked up under the data
dir (``resolve_data_dir``: ``--data-dir``, else ``$NBSPARK_DATA``, ``./data``, ``../shared/data``). ``sklearn`` inputs name a dataset scikit-learn ships, not a path.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .config import InputSpec
from .errors import ConfigError, InputError
from .readers import list_files, reuters_files
from .tables import local_path

__all__ = ["DATA_ENV", "SKLEARN_DATASETS", "DataNotFound", "Inputs", "data_dir_candidates", "refuse_remote", "resolve_data_dir", "resolve_input"]

DATA_ENV = "NBSPARK_DATA"

#: The classification tables that scikit-learn ships, by the name ``sklearn`` inputs take.
SKLEARN_DATASETS = ("breast_cancer", "digits", "iris", "wine")


@dataclass(frozen=True)
class Inputs:
    """An input spec with its root path and its files (in name order)."""

    spec: InputSpec
    root: Path
    files: tuple[Path, ...] = field(default_factory=tuple)


def resolve_input(spec: InputSpec, data_dir: str | None) -> Inputs:
    """Find an input's files: absolute paths as given, relative ones under the data dir.

    Raises ``InputError`` for a missing input or one without files.
    """
    for text, what in ((spec.path, "input"), (data_dir or "", "--data-dir")):
        refuse_remote(text, what)
    if spec.format == "sklearn":
        if spec.path not in SKLEARN_DATASETS:
            raise InputError(f"sklearn input {spec.path!r} is not one of the classification tables scikit-learn ships: {', '.join(SKLEARN_DATASETS)}")
        if importlib.util.find_spec("sklearn") is None:
            raise ConfigError("sklearn inputs need scikit-learn: pip install scikit-learn")
        return Inputs(spec, Path(f"sklearn:{spec.path}"), ())
    if Path(spec.path).is_absolute() or spec.path.startswith("file:"):
        root = local_path(spec.path)
        if not root.exists():
            raise InputError(f"{root}: input does not exist")
    else:
        try:
            root = resolve_data_dir(spec.path, data_dir) / spec.path
        except DataNotFound as exc:
            raise InputError(str(exc)) from None
    if spec.format == "parquet":
        return Inputs(spec, root, (root,))
    files = reuters_files(root) if spec.format in ("reuters", "reuters_topics") else list_files(root)
    if not files:
        raise InputError(f"{root}: no input files ({'*.sgm ' if spec.format.startswith('reuters') else ''}not starting with _ or .)")
    return Inputs(spec, root, tuple(files))


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def refuse_remote(text: str, what: str) -> None:
    """Refuse, with one line naming the scheme, a URI of storage other than the local file system
    (``hdfs://``, ``s3a://``, ``gs://``, ``abfss://``, ``viewfs://`` …): it is never looked up as a
    path under the data dir."""
    found = _SCHEME.match(text)
    if found and found.group(1).lower() != "file":
        raise InputError(
            f"{text}: {what} on {found.group(1)}:// storage is not supported by this version of nbspark, which reads and "
            "writes local paths and file: URIs only; copy the data to a local or shared-mount path"
        )


class DataNotFound(Exception):
    """No candidate data directory holds the corpus; the message names where we looked."""


def data_dir_candidates(cli: str | None, env: dict | None = None, cwd: Path | None = None) -> list[tuple[str, Path]]:
    """Where corpora are looked for, in order: --data-dir, $NBSPARK_DATA, ./data, ../shared/data."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    if cli:
        return [("--data-dir", Path(cli))]
    out = []
    if env.get(DATA_ENV):
        out.append((f"${DATA_ENV}", Path(env[DATA_ENV])))
    out.append(("./data", cwd / "data"))
    out.append(("../shared/data", cwd.parent / "shared" / "data"))
    return out


def resolve_data_dir(relative: str, cli: str | None = None, env: dict | None = None, cwd: Path | None = None) -> Path:
    """Return the first data dir under which ``relative`` exists.

    An ``--data-dir`` given explicitly is the only place looked at. Raises ``DataNotFound``
    naming every place tried and ``scripts/fetch_data.sh``.
    """
    candidates = data_dir_candidates(cli, env, cwd)
    for _, base in candidates:
        if (base / relative).exists():
            return base
    looked = ", ".join(f"{label} ({base / relative})" for label, base in candidates)
    raise DataNotFound(
        f"cannot find {relative!r}; looked in {looked}; "
        "run scripts/fetch_data.sh to download the corpora, or pass --data-dir"
    )
