"""The objects a prediction is reported as, by ``nbspark predict --json`` and the server's
``/v1/predict`` alike: one home, so the two never drift. Pure (no Spark).

* A backoff model scores a window (``width`` tokens with ``_`` at the centre): ``text``, ``label``,
  ``probability``, ``level`` (the deciding subset, ``""`` the prior) and ``window``; any other text
  gives one object per confusion-set word in it (with ``written``), scored in its window, and none
  when it holds no such word (counted as unscored).
* A naive Bayes model scores a text (text models) or a row (table models: a mapping of column ->
  value, or a list of the cells of its columns in order): ``text`` (the item as given), ``label``,
  ``probability`` and ``probabilities`` by class; a row also ``unseen``: its categories the model
  never saw in their column, left out of the score.
* A density model scores a row (a mapping of column -> cell, or a list of them in order): ``text``
  (the row as given), ``density`` (its probability under the model's estimator),
  ``log_density`` (null where the density is 0) and ``unseen``: its cells the model never counted
  in their column (what makes a density 0 unless smoothed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from nbspark.backoff.predictor import BackoffPredictor
from nbspark.density.predictor import DensityPredictor
from nbspark.errors import ConfigError

__all__ = ["csv_row_batches", "json_row", "prediction_objects", "scores_texts"]


def prediction_objects(model, items: Sequence, shown: Sequence | None = None, extra_columns=()):
    """``(objects, unscored)``: the prediction objects of ``items`` (texts, windows or rows) and how
    many items gave none. ``shown`` is what each object's ``text`` echoes (default: the item).
    ``extra_columns`` (columns of a row to leave out: an id) apply to a table model's rows (naive
    Bayes or density) only; given for a backoff model they are refused (a naive Bayes text model
    refuses them itself), not ignored."""
    shown = items if shown is None else shown
    if isinstance(model, BackoffPredictor):
        if extra_columns:
            raise ConfigError(
                "extra_columns name columns of a table model's rows; a backoff model takes none"
            )
        return _backoff_objects(model, items, shown)
    if isinstance(model, DensityPredictor):
        rows = list(items)
        logs = model.log_density(rows, extra_columns=extra_columns)
        return [
            {
                "text": t,
                "density": math.exp(lp),
                "log_density": lp if math.isfinite(lp) else None,
                "unseen": u,
            }
            for t, lp, u in zip(shown, logs, model.unseen(rows))
        ], 0
    explained = model.explain(list(items), extra_columns)
    return [{"text": t, **e} for t, e in zip(shown, explained)], 0


def _backoff_objects(
    model: BackoffPredictor, texts: Sequence[str], shown: Sequence
) -> tuple[list[dict], int]:
    out, unscored = [], 0
    for text, echo in zip(texts, shown):
        if not isinstance(text, str):
            raise ValueError(f"a backoff model scores texts or windows (strings), got {text!r}"[:200])
        tokens = text.split()
        if len(tokens) == model.width and (tokens[model.width // 2] == "_"):
            out.append({"text": echo, **_shown(model.explain([text])[0])})
            continue
        found = model.check(text)
        unscored += not found
        windows = model.explain([f["window"] for f in found])
        out.extend({"text": echo, "written": f["written"], **_shown(e)} for f, e in zip(found, windows))
    return out, unscored


def _shown(explained: dict) -> dict:
    return {k: explained[k] for k in ("label", "probability", "level", "window")}


def scores_texts(model) -> bool:
    """Whether ``model`` scores texts (a backoff model, a naive Bayes text model), not rows (a table or
    density model)."""
    return isinstance(model, BackoffPredictor) or model.text


def json_row(text: str) -> dict | list:
    """A table model's row, given as a JSON object of column -> value, or as a JSON array of its
    cells in the model's column order (``feature_names_in_``, the ``columns`` of ``/v1/models``), as
    ``/v1/predict`` and ``predict(X)`` take a row."""
    try:
        row = json.loads(text)
    except ValueError:
        row = None
    if not isinstance(row, dict | list):
        raise ValueError(
            "a table model scores rows: give each as a JSON object of column -> value, or a JSON array "
            f"of its cells in the model's column order, got {text[:60]!r}"
        )
    return row


def csv_row_batches(f, line_batches, model, delimiter: str | None = None):
    """The rows of a CSV file (``f``: what messages name it; ``line_batches``: its lines, by
    ``inputs.files.line_value_batches``) for a table or density model, in batches as they are read,
    each ``(number of its first row, the header row 1, rows)``: read as a train reads its CSV
    (``inputs.tables.csv_batches``: the header, Spark's rules for short and long rows, an empty
    cell missing), every cell as text. Cells are separated by ``delimiter``, default the model's
    ``train.delimiter``; a naive Bayes model counted from numbers written with a decimal comma
    (``train.decimal = ","``) reads its numeric columns' cells so (``naive_bayes.events.number_cell``):
    the rows it was trained on score as they were counted."""
    from nbspark.inputs.tables import csv_batches

    if scores_texts(model):
        raise ConfigError("a CSV's rows are for a table or density model; this model scores texts")
    train = model.manifest["config"]["train"]
    delimiter = delimiter or train.get("delimiter", ",")
    comma = train.get("decimal", ".") == "," and not isinstance(model, DensityPredictor)
    numeric = set(model.manifest.get("columns", {}).get("numeric", ())) if comma else set()
    for number, table in csv_batches(f, line_batches, delimiter, setting="--delimiter"):
        rows = table.to_pylist()
        if numeric:
            from nbspark.naive_bayes.events import number_cell

            for i, row in enumerate(rows):
                for c in numeric & set(row):
                    try:
                        row[c] = number_cell(row[c], ",")
                    except ValueError as exc:
                        raise ValueError(f"{f} row {number + i}, column {c!r}: {exc}") from None
        yield number, rows
