"""An input's files, found before Spark starts: ``resolve_input(spec, data_dir) -> Inputs``.

Absolute paths (and ``file:`` URIs) are used as given, relative ones are looked up under the data
dir (``config.resolve_data_dir``). ``sklearn`` inputs name a dataset scikit-learn ships, not a path.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from .config import DataNotFound, InputSpec, resolve_data_dir
from .errors import ConfigError, InputError
from .readers import list_files, reuters_files
from .tables import local_path

__all__ = ["SKLEARN_DATASETS", "Inputs", "resolve_input"]

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
