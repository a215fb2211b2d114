"""scikit-learn's shapes of ``X`` and ``y`` for a naive Bayes model of this process
(``NBPredictor``, and the ``NaiveBayes`` estimator over it): a count matrix as texts of its columns'
tokens (``matrix_texts``), and class numbers as class names (``Labels``). A model keeps both in its
manifest (``matrix_columns`` with ``matrix_names``, ``label_numbers``), so that one saved and loaded
again takes and gives what the estimator took and gave.
"""

from __future__ import annotations

import math
import warnings
from numbers import Real as numbers_Real

import numpy as np

from nbspark.naive_bayes.count_table import YX
from nbspark.spine.predictor import array_names, matrix_of, refuse_width

__all__ = ["Labels", "frame_names", "matrix_texts", "matrix_vocabulary"]


def _conversion_warning() -> type[Warning]:
    """scikit-learn's warning of a column vector y where it is installed, imported only when one is
    warned of: importing scikit-learn takes about a second (scipy.stats, pandas), which every
    ``nbspark predict`` of a naive Bayes model paid for this one class."""
    try:
        from sklearn.exceptions import DataConversionWarning
    except ImportError:  # pragma: no cover - scikit-learn is optional
        return UserWarning
    return DataConversionWarning


def frame_names(X) -> list[str] | None:
    """The column names of a pandas DataFrame whose every name is text (scikit-learn's
    ``feature_names_in_``), else None (an array, a list of rows, a DataFrame of numbered columns)."""
    if not (hasattr(X, "to_dict") and hasattr(X, "columns")):
        return None
    names = list(X.columns)
    return names if all(isinstance(n, str) for n in names) else None


def matrix_texts(X, width: int, call: str, names: list[str] | None = None) -> list[str]:
    """The rows of a count matrix as texts: column j's count c as the token ``xj`` (``array_names``)
    c times (the tokenizers keep it whole). Counts are whole numbers >= 0, as a token's are: a fraction
    (``TfidfVectorizer``'s weights) is refused, as is a matrix of another width. A model fitted on a
    count matrix (``NaiveBayes.fit``) keeps its width (``matrix_columns``) and takes matrices so; fitted
    on a DataFrame of named columns, it keeps their ``names`` too (``matrix_names``), and a DataFrame of
    other names, or of the same in another order, is refused: by position its columns would be counted
    as others, in silence (scikit-learn refuses it too). An array, or a DataFrame of unnamed columns, is
    taken by position."""
    import scipy.sparse

    given = frame_names(X)
    X = matrix_of(X)
    rows, columns = X.shape
    if columns != width:
        refuse_width(columns, width)
    if names is not None and given is not None and given != list(names):
        wrong = [f"{a!r} for {b!r}" for a, b in zip(given, names) if a != b]
        raise ValueError(
            f"{call} takes the columns that fit took, in its order (feature_names_in_); the DataFrame "
            f"has {', '.join(wrong[:3])}{', …' if len(wrong) > 3 else ''}"
        )
    if isinstance(X, np.ndarray) and X.dtype.kind not in "biuf":  # text, None: not counts
        odd = [c for c in X.ravel().tolist() if not isinstance(c, numbers_Real)]
        if odd:
            raise ValueError(f"{call} takes a matrix of counts, whole numbers >= 0, got {odd[0]!r}")
        X = X.astype(np.float64)
    csr = scipy.sparse.csr_matrix(X)
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(csr.data) & (csr.data >= 0) & (csr.data == np.floor(csr.data)))
    if bad.any():
        raise ValueError(
            f"{call} takes a matrix of counts, whole numbers >= 0 (CountVectorizer's), got "
            f"{float(csr.data[bad][0])!r}: nbspark counts whole tokens (TfidfVectorizer's weights are none)"
        )
    tokens, texts = array_names(width), []
    for i in range(rows):
        start, end = csr.indptr[i], csr.indptr[i + 1]
        cells = zip(csr.indices[start:end].tolist(), csr.data[start:end].tolist())
        texts.append(" ".join(tokens[j] for j, c in cells for _ in range(int(c))))
    return texts


def matrix_vocabulary(width: int, known, labels: list) -> list[tuple[tuple, int]]:
    """The columns of a count matrix of ``width`` (its tokens, ``array_names``) that a model has not
    counted yet (``known``: its vocabulary), as events of count 0 of a class the batch counts (the
    first of ``labels``; none without one): every column of the matrix is in the vocabulary, counted
    or not, so that the smoothing is over all of them, as scikit-learn's ``MultinomialNB``,
    ``BernoulliNB`` and ``ComplementNB`` smooth over ``n_features_in_``; every scorer reads them from
    the count table."""
    if not labels:
        return []
    label = labels[0] if isinstance(labels[0], str) else labels[0][0]
    return [((YX, label, name, None), 0) for name in array_names(width) if name not in known]


class Labels:
    """The labels a model learnt, as it holds them: class names (``str``; a text's list of
    them) are themselves; numbers (scikit-learn's ``y`` of ints, and floats without a fraction, and
    bools) are held as their text (``str(3)``) and given back as the numbers, ``classes_`` sorted
    as numbers. One ``y`` holds one kind; a float with a fraction is a regression target, refused
    as scikit-learn refuses it, and so are NaN and infinity."""

    def __init__(self, numbers: dict | None = None, held: bool = False) -> None:
        """``numbers``: a saved model's (its manifest's ``label_numbers``); ``held``: whether the model
        holds classes already (class names, where it has no ``numbers``)."""
        self.numbers: dict[str, object] | None = dict(numbers) if numbers else None  # text -> number
        self.kind: str | None = "numbers" if numbers else ("names" if held else None)

    def copy(self) -> Labels:
        """Another, to change apart from this one (``numbers`` maps text to ints, floats and bools,
        which do not change: ``copy.deepcopy`` of it cost about 30 µs, a fifth of a message learnt)."""
        other = Labels()
        other.numbers, other.kind = None if self.numbers is None else dict(self.numbers), self.kind
        return other

    def names(self, y, call: str) -> list:
        """``y`` as the model's class names."""
        from nbspark.spine.predictor import as_batch

        if y is None:
            raise ValueError(f"{call} requires y to be passed, but the target y is None")
        if getattr(y, "ndim", 1) == 2 and y.shape[1] == 1:  # a column vector: its one column
            said = "A column-vector y was passed when a 1d array was expected"
            warnings.warn(_conversion_warning()(said), stacklevel=3)
            y = np.asarray(y).ravel()
        whole = isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iu" and len(y) > 0
        if whole:  # integers: each distinct one named once
            kind = "numbers"
        else:
            y = y.tolist() if isinstance(y, np.ndarray) and y.ndim == 1 else as_batch(y, "labels", call)
            y = [v.item() if isinstance(v, np.generic) else v for v in y]
            numbers = [isinstance(v, numbers_Real) for v in y]
            kind = "numbers" if y and all(numbers) else "names" if not any(numbers) else "mixed"
        if kind == "mixed" or (self.kind and len(y) and kind != self.kind):
            raise ValueError("Mix of label input types (string and number): y holds class names or numbers")
        if kind == "names":
            self.kind = self.kind or ("names" if y else None)
            return y
        if whole:
            self.kind = "numbers"
            self.numbers = {**(self.numbers or {}), **{str(v): v for v in np.unique(y).tolist()}}
            return y.astype(str).tolist()  # str(v) of each: numpy writes an integer as Python does
        for i, v in enumerate(y):
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"Input y contains {'NaN' if v != v else 'infinity'} (label {i})")
            if isinstance(v, float) and v != int(v):
                raise ValueError(
                    f"Unknown label type: continuous (label {i} is {v!r}): a classifier's labels are "
                    "classes, not a quantity to regress"
                )
        self.kind, self.numbers = "numbers", {**(self.numbers or {}), **{str(v): v for v in y}}
        return [str(v) for v in y]

    def value(self, name: str):
        """A class name of the model as ``y`` gave it; in a model of numbers, a class that the command
        line's ``--update`` added (named as text: ``"3"``) as the number it names, where it is one."""
        if self.numbers is None:
            return name
        if name in self.numbers:
            return self.numbers[name]
        for number in (int, float):
            try:
                return number(name)
            except ValueError:
                continue
        return name

    def values(self, names) -> np.ndarray:
        """Class names of the model as ``y`` gave them, an array."""
        if self.numbers is None:
            return np.asarray(names, dtype=object)
        values = [self.value(n) for n in names]
        return np.array(values) if values else np.array([], np.asarray(list(self.numbers.values())).dtype)

    def order(self, classes) -> np.ndarray:
        """The positions of the model's ``classes`` in ``classes_``' order (as numbers, where they are)."""
        if self.numbers is None:
            return np.arange(len(classes))
        return np.argsort(self.values(classes), kind="stable")
