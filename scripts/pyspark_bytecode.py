"""Bytecode in the venv's ``pyspark.zip``, so that Spark's Python processes stop compiling PySpark.

    python scripts/pyspark_bytecode.py            # add it if missing (prints nothing when done before)
    python scripts/pyspark_bytecode.py --check    # exit 0 if the zip has it, 1 if not

``spark-submit`` puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on the ``PYTHONPATH`` of the
Python driver it starts, and Spark puts it there for every Python worker daemon too. The zip of
the pip package holds only sources, and Python never writes bytecode into a zip, so each of
those processes compiles every PySpark module it imports, every time. Measured on the
development machine (docs/scaling.md): importing ``pyspark.sql`` took 0.59–0.62 s from the zip
and 0.12–0.14 s from compiled files; a worker daemon's imports 0.83–1.07 s against 0.23–0.30 s,
paid before the first Python task of every application.

This writes, beside each module's source in the zip, its compiled ``.pyc`` (the layout Python's
zip importer reads; an unchecked-hash pyc, since the zip is rewritten whole whenever PySpark
is). The sources stay, for tracebacks. The new zip is written under a temporary name and renamed
over the old one, under a lock (two scripts at once: one writes, the other waits). It carries a
marker entry naming this Python's bytecode version, so it is written once; a reinstalled PySpark
brings back its own zip, and the next run adds the bytecode again. (A Spark job already running
while the zip is replaced, which only the first run or one after a reinstall can do, may fail
to import a module it had not yet imported: the zip it indexed has moved.) A Python of another version
(a cluster's executors given this zip) finds bytecode it cannot use, ignores it and compiles the
sources, as before.

Only a zip inside this interpreter's environment (``sys.prefix``: the project's ``.venv``) is
rewritten, never a Spark installation elsewhere. ``scripts/_env.sh`` runs this for every script,
and ``scripts/bench_google.py`` before its train job; ``NBSPARK_PYSPARK_BYTECODE=0`` makes it do
nothing. On any failure the zip is left as it was, with one line on stderr.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib.util
import marshal
import os
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

MARKER = "nbspark-bytecode.txt"  # an entry of the rewritten zip: the bytecode's magic number


def pyspark_zip() -> Path:
    """The zip of the pyspark package this interpreter imports (the pip package's ``python/lib``)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        raise RuntimeError("pyspark is not installed in this Python")
    return Path(spec.origin).resolve().parent / "python" / "lib" / "pyspark.zip"


def marker_text() -> str:
    return importlib.util.MAGIC_NUMBER.hex() + "\n"


def has_bytecode(path: Path) -> bool:
    with zipfile.ZipFile(path) as zf:
        try:
            return zf.read(MARKER).decode() == marker_text()
        except KeyError:
            return False


def rewrite(path: Path) -> int:
    """Write ``path`` again with a ``.pyc`` beside each ``.py``; returns the modules compiled."""
    compiled = 0
    fd, staged = tempfile.mkstemp(prefix=".pyspark-", suffix=".zip", dir=path.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                data = src.read(info)
                dst.writestr(info, data)
                if (
                    not info.filename.endswith(".py") or "/tests/" in info.filename
                ):  # PySpark's own tests are never imported by a job
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter(
                        "ignore"
                    )  # SyntaxWarnings in PySpark's sources are PySpark's to fix
                    # the file name a traceback shows: the source inside the final zip
                    code = compile(data, f"{path}/{info.filename}", "exec", dont_inherit=True)
                pyc = zipfile.ZipInfo(info.filename + "c", info.date_time)
                pyc.compress_type = zipfile.ZIP_DEFLATED
                # PEP 552: magic, flags (1: hash-based, not checked against the source), the source's hash,
                # the code
                dst.writestr(
                    pyc,
                    importlib.util.MAGIC_NUMBER
                    + (1).to_bytes(4, "little")
                    + importlib.util.source_hash(data)
                    + marshal.dumps(code),
                )
                compiled += 1
            dst.writestr(MARKER, marker_text())
        os.chmod(staged, os.stat(path).st_mode & 0o777)
        os.replace(staged, path)
    finally:
        if os.path.exists(staged):
            os.unlink(staged)
    return compiled


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 0 if the zip has this Python's bytecode, else 1"
    )
    args = parser.parse_args(argv)
    if not args.check and os.environ.get("NBSPARK_PYSPARK_BYTECODE", "1") == "0":
        return 0
    try:
        path = pyspark_zip()
        if args.check:
            return 0 if has_bytecode(path) else 1
        if not path.is_relative_to(Path(sys.prefix).resolve()):
            print(f"pyspark_bytecode: {path} is not inside {sys.prefix}; left as it is", file=sys.stderr)
            return 0
        if has_bytecode(path):
            return 0
        with open(
            Path(sys.prefix) / ".pyspark-bytecode.lock", "w"
        ) as lock:  # beside the venv, not in the package pip owns
            fcntl.flock(
                lock, fcntl.LOCK_EX
            )  # two scripts started at once: one writes, the other waits for it
            if not has_bytecode(path):
                print(
                    f"adding bytecode to {path.name} ({rewrite(path)} modules; once, a few seconds; "
                    "NBSPARK_PYSPARK_BYTECODE=0 skips it)",
                    file=sys.stderr,
                )
    except (OSError, RuntimeError, zipfile.BadZipFile, SyntaxError, ValueError) as exc:
        print(
            f"pyspark_bytecode: left {locals().get('path', 'pyspark.zip')} as it was ({exc})", file=sys.stderr
        )
        return 0 if not args.check else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
