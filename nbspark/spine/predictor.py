"""What the in-process predictors of both families share."""

from __future__ import annotations

import math
import numbers
import re
import threading
from collections.abc import Mapping, Sequence

__all__ = [
    "Grid",
    "LearnsInMemory",
    "add_events",
    "accuracy",
    "array_names",
    "array_rows",
    "as_batch",
    "is_matrix",
    "matrix_of",
    "refuse_clone",
    "refuse_unknown_columns",
    "refuse_width",
    "save_rows",
    "some_names",
    "storable",
    "summed_rows",
    "whole_weights",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


def as_batch(
    items, what: str, call: str | None = None, columns: Sequence[str] | None = None, by_position: bool = True
) -> Sequence:
    """A call's items as a list (rows of an array or a DataFrame: a ``Grid``). One text, window or
    row is refused, as scikit-learn refuses a lone string: iterating it would score its characters
    (or a row's keys), silently. A pandas DataFrame is ``rows``, kept by column (a ``Grid``; a
    missing cell is None: ``pd.read_csv`` reads an empty cell as NaN), and refused for anything
    else: iterating it gives its column names, which were scored as texts. ``call`` names the
    method in the refusal (left out where several public methods share the helper that asks).

    ``rows`` may also be a 2-D array (numpy's, or a list of equal lists), scikit-learn's ``X``: its
    columns are ``columns`` in order (a fitted model's ``feature_names_in_``; another width is
    refused, as scikit-learn refuses it), or ``x0``, ``x1``, … (``array_names``) where no model names
    them yet or the model was fitted on an array (``array_rows``, a ``Grid`` too). ``by_position=False``:
    the model's named columns have no order an array could follow, and an array is refused."""
    said = f"{call} takes" if call else "expected"
    if isinstance(items, Grid):  # rows already read (a model's fit, then its partial_fit)
        return items
    if what == "texts" and is_matrix(items):  # CountVectorizer's output, to a model that counts texts itself
        raise TypeError(
            f"{said} texts (str), not a matrix: the model counts a text's tokens itself, as CountVectorizer "
            "would; pass the texts"
        )
    if hasattr(items, "to_dict") and hasattr(items, "columns"):  # a pandas DataFrame
        if what == "rows" and not all(isinstance(c, str) for c in items.columns):
            return array_rows(items.to_numpy(dtype=object), columns, by_position)  # unnamed: by position
        if what == "rows" and not items.columns.is_unique:  # a row would hold one of each, in silence
            twice = sorted({str(c) for c in items.columns[items.columns.duplicated()]})
            raise ValueError(f"{said} rows of distinct columns; the DataFrame repeats {some_names(twice, 6)}")
        if what == "rows":  # by column; pandas' missing cells (NaN, NA, NaT) are None, an empty cell
            return Grid({c: _frame_column(items[c]) for c in items.columns}, len(items))
        raise TypeError(
            f"{said} a list of {what}, got a DataFrame (iterating it gives its column names); pass one "
            "of its columns, df[NAME]"
        )
    if type(items).__module__.startswith("scipy.sparse"):  # before Mapping: a dok_matrix is a dict
        raise TypeError(f"{said} {what}; sparse input is not supported: pass a dense array (X.toarray())")
    if isinstance(items, (str, bytes, Mapping)):
        raise TypeError(f"{said} a list of {what}, got one {type(items).__name__}; wrap it in a list")
    if what == "rows" and (grid := _grid(items, said)) is not None:
        return array_rows(grid, columns, by_position)
    if what == "rows" and isinstance(items, list | tuple):
        return _rows_by_name(items, columns, by_position, said)
    if hasattr(items, "__array__") and not hasattr(items, "__iter__"):  # an array-like, not a sequence
        import numpy as np

        return np.asarray(items).tolist()
    return list(items)


def is_matrix(items) -> bool:
    """Whether ``items`` is a matrix (scipy's sparse, a 2-D numpy array, a list of rows of numbers,
    as scikit-learn reads ``[[2, 0], [0, 1]]``, or a pandas DataFrame whose every column holds
    numbers) rather than a list of items (another DataFrame is rows, or refused, by ``as_batch``; a
    list of token lists is not numbers). Only a text model takes a matrix (of counts): a table
    model reads a DataFrame as rows, by ``as_batch``, before asking."""
    if hasattr(items, "to_dict") and hasattr(items, "columns"):
        return len(items.columns) > 0 and all(d.kind in "biuf" for d in items.dtypes)
    if isinstance(items, list | tuple):  # a list of rows: a matrix where its cells are numbers
        if not all(isinstance(r, list | tuple) or getattr(r, "ndim", 0) == 1 for r in items):
            return False  # texts (or nothing): the first text ends the look
        cells = next((r for r in items if len(r)), None)
        return cells is not None and isinstance(cells[0], numbers.Number)
    return type(items).__module__.startswith("scipy.sparse") or getattr(items, "ndim", 1) == 2


def matrix_of(items):
    """A matrix (``is_matrix``) with a ``shape``: a list of rows, or a DataFrame (its columns by
    position), as a 2-D numpy array (rows of unequal widths refused), anything else as it is."""
    if hasattr(items, "to_dict") and hasattr(items, "columns"):
        return items.to_numpy()
    if not isinstance(items, list | tuple):
        return items
    import numpy as np

    widths = sorted({len(r) for r in items})
    if len(widths) > 1:
        raise ValueError(f"a count matrix's rows are of one width; got rows of {widths} cells")
    grid = np.asarray(items)
    return np.array([list(r) for r in items], dtype=object) if grid.dtype.kind in "USO" else grid


def _grid(items, said: str):
    """``items`` as a 2-D numpy array of objects when they are one (an array, or a list of lists,
    tuples or arrays), else None (rows as mappings); a 1-D or 3-D array is refused."""
    import numpy as np

    if isinstance(items, list | tuple):
        if not items or not all(isinstance(r, list | tuple | np.ndarray) for r in items):
            return None
        widths = sorted({len(r) for r in items})
        if len(widths) > 1:
            raise ValueError(f"{said} a 2-D array of rows, all of one width; got rows of {widths} cells")
        items = np.array([list(r) for r in items] or [[]], dtype=object)
    elif not hasattr(items, "__array__"):
        return None
    grid = np.asarray(items)
    if grid.ndim != 2:
        raise ValueError(
            f"{said} a 2-D array of rows (one row per example), got a {grid.ndim}-D array"
            + (
                ". Reshape your data: X.reshape(-1, 1) if it is one feature, X.reshape(1, -1) if one row"
                if grid.ndim == 1
                else ""
            )
        )
    if np.iscomplexobj(grid):
        raise ValueError(f"Complex data not supported: {said} real numbers or text")
    return grid


def _rows_by_name(items: Sequence, columns, by_position: bool, said: str) -> list:
    """Rows given each its own way, some as mappings of column -> cell and some as lists of cells
    (``nbspark predict``'s lines, ``/v1/predict``'s rows): every row a mapping, each list read as an
    array's row is (``array_rows``: the model's columns in order, its width checked)."""
    import numpy as np

    at = [i for i, r in enumerate(items) if isinstance(r, list | tuple | np.ndarray)]
    rows = list(items)
    if at:
        named = array_rows(_grid([items[i] for i in at], said), columns, by_position)
        for i, row in zip(at, named):
            rows[i] = row
    return rows


def array_rows(grid, columns: Sequence[str] | None, by_position: bool = True) -> Grid:
    """The rows of a 2-D array, a ``Grid`` of its columns: column j is ``array_names``' j-th where no
    model names the columns (``columns`` None) or the model was fitted on an array (its columns are
    those names), else ``columns[j]`` (a model's, in ``feature_names_in_``'s order). An array of
    another width than ``columns`` is refused, and so is any array but one of ``array_names`` where
    not ``by_position``. A row's cell is a plain Python value (numpy's scalars too), a float NaN
    None: a missing cell, as a DataFrame's is."""
    width = grid.shape[1]
    if width == 0:
        raise ValueError(f"0 feature(s) (shape={grid.shape}) while a minimum of 1 is required: no columns")
    if columns is not None and width != len(columns):
        refuse_width(width, len(columns), f" (the model's columns, in order: {some_names(columns, 12)})")
    names = array_names(width)
    if columns is not None and set(columns) != set(names):  # named columns (else fitted on an array)
        if not by_position:
            raise TypeError(
                f"the model's columns ({some_names(columns, 12)}) are named and have no order an array could "
                "follow: give rows by name (a DataFrame, or mappings of column -> value)"
            )
        names = list(columns)
    return Grid({n: grid[:, j] for j, n in enumerate(names)}, len(grid))


class Grid(Sequence):
    """Rows of a 2-D array or a pandas DataFrame, kept by column (``columns``: name -> the column's
    cells, a numpy array, typed where the source was, for readers that take a column at once:
    ``naive_bayes.row_cells``), and a sequence of rows as mappings of column -> cell, each cell a
    plain Python value (numpy's scalars too), a missing one (a float NaN, pandas' NA, NaT) None."""

    def __init__(self, columns: dict, n: int):
        self.columns, self.n = columns, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return {c: _plain_cell(v[i]) for c, v in self.columns.items()}

    def __iter__(self):
        if not self.columns:  # rows of no cell
            return iter([{} for _ in range(self.n)])
        names = list(self.columns)
        return (dict(zip(names, cells)) for cells in zip(*(self.cells(c) for c in names)))

    def cells(self, column: str) -> list:
        """A column's cells as the rows give them (``_plain_cell``); None each where it has none."""
        values = self.columns.get(column)
        if values is None:
            return [None] * self.n
        return [v if type(v) is str else _plain_cell(v) for v in values.tolist()]


def _frame_column(column):
    """A DataFrame's column as numpy's: a time's cells as pandas gives them (a ``Timestamp``, which no
    model reads as a number or a category), not numpy's nanoseconds since 1970 as integers."""
    values = column.to_numpy()
    return column.to_numpy(dtype=object) if values.dtype.kind in "mM" else values


def _plain_cell(value):
    """A cell of an array or a DataFrame as a plain Python value, a missing one None (``_cell``)."""
    return _cell(value.item() if hasattr(value, "item") else value)


def refuse_width(width: int, expected: int, more: str = "") -> None:
    """An ``X`` of ``width`` columns where the model takes ``expected``: refused in scikit-learn's
    words (a table's rows, a count matrix), ``more`` said after them."""
    raise ValueError(f"X has {width} features, but it is expecting {expected} features as input{more}")


def array_names(width: int) -> list[str]:
    """The names of a 2-D array's columns where no model names them: ``x0``, ``x1``, …, as
    scikit-learn's ``get_feature_names_out`` names them."""
    return [f"x{j}" for j in range(width)]


def some_names(names: Sequence[str], most: int) -> str:
    """The first ``most`` of ``names``, joined, and ``…`` where there are more: a refusal's list."""
    return ", ".join(names[:most]) + (", …" if len(names) > most else "")


def _cell(value):
    """A DataFrame cell, pandas' marks of a missing one (a float NaN, ``pd.NA``, ``pd.NaT``) as None."""
    if (isinstance(value, float) and math.isnan(value)) or type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


def refuse_unknown_columns(
    rows: Sequence[Mapping], known: set, columns: Sequence[str], extra_columns
) -> None:
    """Refuse a column of ``rows`` that is neither ``known`` to the model nor named in
    ``extra_columns`` (an id): a misspelt column would be a missing cell in every row, and the
    prediction would move in silence (``ValueError``, listing the model's ``columns``). The rule of
    every model that scores table rows; ``TypeError`` for ``extra_columns`` that is not a list of
    names (a string would be its letters)."""
    if isinstance(extra_columns, str) or not all(isinstance(c, str) for c in extra_columns):
        raise TypeError(f"extra_columns is a list of column names, not {extra_columns!r}")
    given = rows.columns if isinstance(rows, Grid) else {k for r in rows for k in r}
    if unknown := sorted({str(k) for k in given} - set(known) - set(extra_columns)):
        raise ValueError(
            f"column(s) the model does not know: {some_names(list(map(repr, unknown)), 6)}; its columns: "
            f"{some_names(columns, 12)} (name columns to leave out with extra_columns)"
        )


def add_events(pending: dict, events, add) -> None:
    """Add ``events`` (``(key, value)``) into ``pending`` (event key -> value) by ``add``, in place:
    what ``partial_fit`` or ``update`` counts, added only once the whole batch is read and checked
    (the caller's list of events), so that a batch refused part way counts nothing. A call costs
    what its batch holds, not what the model holds (a copy of everything counted since the last
    save, and a model rebuilt, made a one-document ``partial_fit`` of an SMS model 43 ms)."""
    for key, value in events:
        pending[key] = add(pending[key], value) if key in pending else value


class LearnsInMemory:
    """What the predictors that learn in memory share (``partial_fit``, ``update``): what a batch
    counted goes to what is to save (``_pending``) and to what the scorer has not taken yet
    (``_unbuilt``), both event key -> value (``_count``); the scorer takes the latter when next
    used (``_catch_up``). A lock keeps counting apart from that, so that a thread that predicts
    while another learns sees whole counts (they are added in place: ``add_events``), and a
    ``save`` commits exactly what it then forgets. A pickle or a deepcopy leaves the lock out: each
    copy makes its own."""

    def _count(self, events, add) -> None:
        """Add a batch's ``events`` (all read and checked) by ``add`` to ``_pending`` and ``_unbuilt``;
        the caller holds ``_counts_lock()``, with its own statistics of the batch."""
        add_events(self._pending, events, add)
        add_events(self._unbuilt, events, add)

    def _catch_up(self, take) -> None:
        """Hand what was counted since the scorer last took it (``_unbuilt``) to ``take``, once, under
        the lock: a thread that counts meanwhile waits, and of two threads that would both bring the
        scorer up to date, the second finds nothing left."""
        if self._unbuilt:
            with self._counts_lock():
                if self._unbuilt:
                    take(self._unbuilt)
                    self._unbuilt = {}

    def _counts_lock(self):
        lock = self.__dict__.get("_lock")
        if lock is None:  # made when first needed, once: setdefault is atomic
            lock = self.__dict__.setdefault("_lock", threading.RLock())
        return lock

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_lock", None)
        return state

    def __repr__(self) -> str:
        """What a notebook shows of a loaded model: its kind, classes, version and where it was read
        from (``nbspark show`` says the rest); never an error, whatever the model lacks."""
        from nbspark.storage.manifests import model_version
        from nbspark.storage.uris import shown_uri

        said = [getattr(self, "kind", None) or "backoff"]
        try:
            classes = [str(c) for c in self.classes_]
            if classes:
                shown = ", ".join(classes[:6]) + (f", … ({len(classes)})" if len(classes) > 6 else "")
                said.append(f"classes: {shown}")
            said.append(f"version {model_version(self.manifest)}")
        except (AttributeError, KeyError, TypeError, ValueError):
            pass
        if path := getattr(self, "path", None):
            said.append(f"from {shown_uri(str(path))}")
        if self.__dict__.get("_pending"):
            said.append("counts not saved yet")
        return f"<{type(self).__name__} {'; '.join(said)}>"


def storable(text: str, what: str) -> str:
    """``text``, which ``partial_fit`` or ``update`` is to count; ``ValueError`` naming ``what`` when it
    holds a lone UTF-16 surrogate (half an emoji, from JSON or a file name): not Unicode text, so no
    count table (Parquet's UTF-8) can hold it. Read from a file, such bytes are U+FFFD."""
    if found := _SURROGATE.search(text):
        raise ValueError(
            f"{what} holds a lone surrogate ({found.group()!r} at {found.start()}), which is not text: "
            "a count table cannot hold it"
        )
    return text


def whole_weights(weights, n: int, noun: str, call: str, least: int, whole: bool = True) -> list:
    """One weight per item of a batch of ``n`` ``noun``s (None: 1 each), as ints: counts are whole
    numbers, so a weight is an int (numpy's too) or a float without a fraction (scikit-learn's
    ``sample_weight`` is often float), at least ``least``; anything else is refused (``ValueError``),
    as a list of another length is. ``whole=False`` (a density's rows, weighed by any number, as a
    weight column weighs them): finite floats >= ``least``."""
    if weights is None:
        return [1 if whole else 1.0] * n
    weights = as_batch(weights, "weights", call)
    if len(weights) != n:
        raise ValueError(f"{call} takes one weight per {noun}: {n} {noun}s, {len(weights)} weights")
    out = []
    for i, w in enumerate(weights):
        if isinstance(w, bool) or not isinstance(w, numbers.Real):
            counts = False
        elif not whole:
            counts = math.isfinite(w)
        else:  # numpy's ints are Integral; a float counts when it has no fraction
            counts = isinstance(w, numbers.Integral) or (math.isfinite(w) and w == int(w))
        if not counts or w < least:
            raise ValueError(
                f"weight {i}: {w!r} is not a whole count >= {least} (nbspark counts whole "
                "examples; a weight of k counts k copies)"
                if whole
                else f"weight {i}: {w!r} is not a finite number >= {least}"
            )
        out.append(int(w) if whole else float(w))
    return out


def refuse_clone(model):
    """scikit-learn's ``clone`` of a loaded model (``__sklearn_clone__``): refused in one line. clone
    makes an estimator that ``fit`` trains; an nbspark model is trained by counting (``nbspark.fit``,
    ``nbspark train``), and a copy of this one is ``copy.deepcopy``."""
    learns = [name for name in ("partial_fit", "update") if hasattr(model, name)]
    raise TypeError(
        f"an nbspark {type(model).__name__} is not an estimator to clone and fit: train one with "
        "nbspark.fit (or nbspark train), copy this one with copy.deepcopy"
        + (f", learn more with {learns[0]}" if learns else "")
    )


def accuracy(predicted: Sequence, labels, what: str, weights=None) -> float:
    """The share of ``predicted`` equal to ``labels`` (scikit-learn's ``score``; NaN for none), each
    weighing its ``weights`` where given, one label per item of ``what`` (``ValueError`` otherwise: a
    shorter list would be scored in silence), of the kind the predictions are (``_refuse_other_kind``)."""
    labels = as_batch(labels, "labels", "score")
    if len(predicted) != len(labels):
        raise ValueError(f"score takes one label per {what}: {len(predicted)} {what}s, {len(labels)} labels")
    _refuse_other_kind(predicted, labels)
    right = [p == y for p, y in zip(predicted, labels)]
    if weights is not None:
        import numpy as np

        return float(np.average(right, weights=np.asarray(weights, dtype=float)))
    return sum(right) / len(labels) if labels else float("nan")


def _refuse_other_kind(predicted: Sequence, labels: Sequence) -> None:
    """Refuse labels that no prediction can equal: numbers against a model whose classes are names
    (a model trained from a file names its classes as text, ``"0"``, ``"1"``), or names against one
    of class numbers. Scored, they were an accuracy of 0 in silence."""
    import numbers

    def kinds(values) -> set:
        return {
            "names" if isinstance(v, str) else "numbers"
            for v in values
            if isinstance(v, str) or (isinstance(v, numbers.Real) and not isinstance(v, bool))
        }

    theirs, mine = kinds(labels), kinds(predicted)
    if len(mine) == 1 and theirs and not theirs & mine:
        (kind,) = mine
        hint = "as text, y.astype(str)" if kind == "names" else "as the numbers the model was fitted on"
        raise ValueError(
            f"score compares predictions with labels: this model's classes are {kind}, the labels "
            f"{'numbers' if kind == 'names' else 'names'}, so none can be equal; give the labels {hint}"
        )


def summed_rows(rows: Sequence[Sequence], more: Sequence[Sequence], ddl: str) -> list[tuple]:
    """Count rows in the schema ``ddl`` with ``more`` added, rows of equal keys summed by the one rule
    (``storage.counts.summed_table``): what a model's ``partial_fit`` or ``update`` adds to what it read."""
    from nbspark.storage.counts import rows_table, summed_table, table_rows

    both = [*rows, *more]
    if not both:
        return []
    return table_rows(summed_table(rows_table(both, ddl)))


def save_rows(path, kind: str, rows: list, ddl: str, fields, stats: dict, engine: str, manifest: dict):
    """Commit count ``rows`` made in this process (``partial_fit``, ``update``; the schema ``ddl``) as
    the next version of the model read from ``path``: a delta (``spine.committing.commit_counts``,
    compacted past ``COMPACT_EVERY`` deltas; ``fields(table)``: the family's manifest fields of a
    count table as a pyarrow table, these rows' or the compacted version's; and
    ``stats``). ``(version, manifest)``: the new version and
    ``manifest`` (the model's in memory) with the delta folded in; no rows, no version. A model not
    read from a directory has nowhere to save (``ValueError``)."""
    if path is None:
        raise ValueError("this model was not read from a directory (nbspark.load): there is nowhere to save")
    from nbspark.storage.manifests import folded_manifest, model_version

    if not rows:
        return model_version(manifest), manifest
    from nbspark.spine.committing import commit_counts
    from nbspark.storage.counts import rows_table
    from nbspark.storage.locations import location
    from nbspark.storage.versions import delta_location

    model_dir = location(path)
    table = rows_table(rows, ddl)
    delta, compacted = commit_counts(model_dir, kind, table, fields, stats, engine)
    if compacted is not None:  # past COMPACT_EVERY deltas: one table again
        return delta["version"], compacted
    where = delta_location(model_dir, delta["version"])
    return delta["version"], folded_manifest(manifest, delta, where, model_dir)
