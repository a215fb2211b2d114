"""An input's files, found before Spark starts: ``resolve_input(spec, data_dir) -> Inputs``.

Paths with a scheme (``hdfs://``, ``s3a://``, ``viewfs://``, ``file:``) and absolute paths are used
as given; relative ones are looked up under the data dir (``resolve_data_dir``: ``--data-dir``,
else ``$NBSPARK_DATA``, ``./data``, ``../shared/data``), which may itself be a URI. Everything is
listed through ``storage`` (Hadoop's FileSystem in the jobs). ``sklearn`` inputs name a dataset
scikit-learn ships, not a path.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path

from nbspark.errors import ConfigError, InputError
from nbspark.inputs.files import bytes_to_read, list_files, reuters_files
from nbspark.inputs.spec import InputSpec
from nbspark.storage.locations import Location, location
from nbspark.storage.uris import scheme_of

__all__ = [
    "DATA_ENV",
    "InputSpec",
    "SKLEARN_DATASETS",
    "DataNotFound",
    "Inputs",
    "data_dir_candidates",
    "input_bytes",
    "parquet_layout_problem",
    "resolve_data_dir",
    "resolve_input",
]

DATA_ENV = "NBSPARK_DATA"


#: The classification tables that scikit-learn ships, by the name ``sklearn`` inputs take.
SKLEARN_DATASETS = ("breast_cancer", "digits", "iris", "wine")


@dataclass(frozen=True)
class Inputs:
    """An input spec with its root and its files (``storage.locations.Location``s, in path order,
    subdirectories
    included)."""

    spec: InputSpec
    root: Location
    files: tuple[Location, ...] = field(default_factory=tuple)

    @property
    def named(self) -> Location:
        """What a message on the input's columns or rows names: its one file, else its root (a
        stream's batch of one file names that file, not the watched directory)."""
        return self.files[0] if len(self.files) == 1 else self.root


def resolve_input(spec: InputSpec, data_dir: str | None) -> Inputs:
    """Find an input's files: URIs and absolute paths as given, relative ones under the data dir.

    Raises ``InputError`` for a missing input or one without files, ``StorageError`` for a scheme
    this Spark cannot reach (one line naming it; never looked up under the data dir).
    """
    if spec.format == "sklearn":
        if spec.path not in SKLEARN_DATASETS:
            raise InputError(
                f"sklearn input {spec.path!r} is not one of the classification tables scikit-learn ships: "
                f"{', '.join(SKLEARN_DATASETS)}"
            )
        if importlib.util.find_spec("sklearn") is None:
            raise ConfigError("sklearn inputs need scikit-learn: pip install scikit-learn")
        return Inputs(spec, Location(f"sklearn:{spec.path}", None), ())
    if scheme_of(spec.path) or os.path.isabs(os.path.expanduser(spec.path)):
        root = location(spec.path)
        if not root.exists():
            glob = (
                " (a glob pattern is not expanded: give a file, or a directory of the files)"
                if any(c in spec.path for c in "*?[{")
                else ""
            )
            raise InputError(f"{root}: input does not exist{glob}")
    else:
        try:
            root = resolve_data_dir(spec.path, data_dir) / spec.path
        except DataNotFound as exc:
            raise InputError(str(exc)) from None
    if spec.format == "parquet":
        if problem := parquet_layout_problem(root):
            raise InputError(problem)
        return Inputs(spec, root, (root,))
    files = reuters_files(root) if spec.format in ("reuters", "reuters_topics") else list_files(root)
    if not files:
        sgml = "*.sgm, *.sgm.gz or *.sgm.bz2; " if spec.format.startswith("reuters") else ""
        raise InputError(f"{root}: no input files ({sgml}not starting with _ or .)")
    return Inputs(spec, root, tuple(files))


def parquet_layout_problem(root: Location) -> str | None:
    """Why a Parquet directory would be read differently by Spark and in process, or None. A table
    is its files (names starting with ``_`` or ``.`` aside), all at one depth, in partition
    directories (``name=value``, whose values become a column) if in any: Spark reads files beside a
    subdirectory that is not a partition without the subdirectory's (pyarrow reads both), and
    refuses a directory of such subdirectories alone; neither is said."""
    if root.is_file():
        return None
    top, depths = root.uri.rstrip("/"), set()
    for f in root.files(skip=lambda name: name.startswith(("_", "."))):
        folders = f.uri[len(top) + 1 :].split("/")[:-1]
        if plain := [d for d in folders if "=" not in d[1:]]:
            return (
                f"{root}: {f.name} lies in {'/'.join(folders)}, and {plain[0]!r} is not a partition "
                "directory (name=value): give the directory of the table's files, or name partitions "
                "name=value"
            )
        depths.add(len(folders))
    if len(depths) > 1:
        return (
            f"{root}: the table's files lie at {len(depths)} depths; a partitioned table has them all in "
            "its partitions"
        )
    return None


class DataNotFound(Exception):
    """No candidate data directory holds the corpus; the message names where we looked."""


def data_dir_candidates(
    cli: str | None, env: dict | None = None, cwd: Path | None = None
) -> list[tuple[str, Location]]:
    """Where corpora are looked for, in order: --data-dir, $NBSPARK_DATA, ./data, ../shared/data."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    if cli:
        return [("--data-dir", location(cli))]
    out = []
    if env.get(DATA_ENV):
        out.append((f"${DATA_ENV}", location(env[DATA_ENV])))
    out.append(("./data", location(cwd / "data")))
    out.append(("../shared/data", location(cwd.parent / "shared" / "data")))
    return out


def resolve_data_dir(
    relative: str, cli: str | None = None, env: dict | None = None, cwd: Path | None = None
) -> Location:
    """Return the first data dir under which ``relative`` exists.

    An ``--data-dir`` given explicitly is the only place looked at. Raises ``DataNotFound``
    naming every place tried and ``scripts/fetch_data.sh``.
    """
    candidates = data_dir_candidates(cli, env, cwd)
    for _, base in candidates:
        if (base / relative).exists():
            return base
    looked = ", ".join(f"{label} ({base / relative})" for label, base in candidates)
    here = (cwd or Path.cwd()) / relative
    if here.exists():  # a path of the user's own, meant from the working directory: say so, never guess
        raise DataNotFound(
            f"cannot find {relative!r} under the data dir ({looked}); relative input paths are read under "
            "the data dir: for the one in the working directory, pass its absolute path "
            f"{str(here.resolve())!r}"
        )
    raise DataNotFound(
        f"cannot find {relative!r}; looked in {looked}; "
        "run scripts/fetch_data.sh to download the corpora, or pass --data-dir"
    )


def input_bytes(inputs: Inputs, model=None) -> int:
    """The bytes to read of an input's files (a directory's, for a Parquet table; a compressed file
    counts what it holds, ``inputs.files.bytes_to_read``), and of the files of the ``model``
    directory it updates, if any (counting in process reads its tables whole)."""
    files = [f for x in inputs.files for f in (x.files() if x.is_dir() else [x])]
    if model and (model := location(model)).is_dir():
        files += model.files()
    return sum(bytes_to_read(f.name, f.stat()[0]) for f in files)
