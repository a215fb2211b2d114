"""The spark-submit entry points, installed with the package: ``spark-submit "$(nbspark --jobs-dir)/train.py"
…``
(in a clone, ``jobs/`` links here). Each is a thin shim over ``nbspark.app.cli``."""

from pathlib import Path

__all__ = ["DIR"]

#: The directory holding ``train.py``, ``classify.py``, ``query.py``, ``learning_curve.py`` and ``check.py``.
DIR = Path(__file__).parent
