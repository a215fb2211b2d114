"""A learning curve's files, one rule for every family's curve (``backoff.curves``,
``naive_bayes.curves``, ``density.curves``): ``curve.json`` (its rows and what made them),
``curve.csv`` (one line a fraction, flat columns, for ``pd.read_csv``) and ``curve.png``."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence

from nbspark.storage.tables import write_json

__all__ = ["write_curve"]


def write_curve(
    stage, document: dict, header: Sequence[str], table: Sequence[Sequence], plot: Callable[[object], None]
) -> None:
    """Write into ``stage`` (a directory being staged) ``curve.json`` (``document``), ``curve.csv``
    (``header``, then each row of ``table`` as Python's ``csv`` writes it: a number as ``str`` gives
    it, every digit kept, and None an empty cell) and ``curve.png`` (``plot(path)``)."""
    write_json(stage / "curve.json", document)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(["" if v is None else v for v in row] for row in table)
    (stage / "curve.csv").write_text(text.getvalue())
    plot(stage / "curve.png")
