"""A naive Bayes count table read by event, as ``naive_bayes.model.build_nb_model`` builds a model
from it: the count rows ``(event, label, feature, value, n, sum, sumsq)``
(``naive_bayes.events.COUNT_DDL``), or the table itself as a pyarrow Table, whose YX rows (nearly
all) are taken as columns instead of one by one; and the manifest's fields of such a table
(``table_fields``); ``CountArrays``, the table summed into the arrays a model is built from, to which
more rows add in place. numpy; pyarrow only for a Table."""

from __future__ import annotations

import bisect

import numpy as np

__all__ = [
    "CountArrays",
    "Y",
    "YG",
    "YX",
    "YX_ANY",
    "Y_ANY",
    "refuse_outside_domains",
    "table_fields",
    "token_pairs",
]

#: The events of naive Bayes count rows: all documents, documents per class, (class, feature)
#: counts, all of a class's feature counts, a class's numeric column sums.
Y_ANY, Y, YX, YX_ANY, YG = "Y=ANY", "Y", "YX", "YX=ANY", "YG"


def table_fields(table) -> dict:
    """The manifest's ``label_counts`` (each class's documents: its ``Y`` row) and ``features``
    (distinct ``(feature, value)`` pairs of the ``YX`` and ``YG`` rows) of a count table in pyarrow:
    a table counted or updated in this process, or ``partial_fit``'s. In Spark,
    ``naive_bayes.jobs._fields`` reads the same from the written table (its SQL twin)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    y = table.filter(pc.equal(table["event"], Y))
    x = table.filter(pc.is_in(table["event"], pa.array([YX, YG])))
    return {
        "label_counts": dict(sorted(zip(y["label"].to_pylist(), y["n"].to_pylist()))),
        "features": x.group_by(["feature", "value"]).aggregate([]).num_rows,
    }


def _sums(rows, pairs: bool = True):
    """The count rows (or table) by event: documents per class, all documents, YX, YX=ANY and YG
    sums, rows of one key summed (``CountArrays.add``). ``pairs`` False leaves a table's YX rows out
    (``token_pairs`` reads them as columns)."""
    if hasattr(rows, "column"):  # a pyarrow Table
        return _collect_table(rows, pairs)
    docs: dict[str, int] = {}
    total_docs = 0
    yx: dict[tuple, int] = {}
    yx_any: dict[str, int] = {}
    yg: dict[tuple, tuple[int, float, float]] = {}
    for event, label, feature, value, n, s, ss in rows:
        if event == Y_ANY:
            total_docs += n
        elif event == Y:
            docs[label] = docs.get(label, 0) + n
        elif event == YX:
            key = (label, _yx_feature(feature, value))
            yx[key] = yx.get(key, 0) + n
        elif event == YX_ANY:
            yx_any[label] = yx_any.get(label, 0) + n
        elif event == YG:
            had = yg.get((label, feature))
            yg[(label, feature)] = (n, s, ss) if had is None else (had[0] + n, had[1] + s, had[2] + ss)
        else:
            raise ValueError(f"unknown event {event!r} in a naive Bayes count table")
    return docs, total_docs, yx, yx_any, yg


def _yx_feature(feature, value):
    """A YX row's feature: a token or column name alone, or ``(column, value)`` for a categorical value."""
    return feature if value is None else (feature, value)


def _collect_table(table, with_pairs: bool):
    """``_sums`` of a count table in pyarrow: the YX rows (nearly all) as columns, the others row by
    row."""
    import pyarrow.compute as pc

    is_yx = pc.equal(table.column("event"), YX)
    others = table.filter(pc.invert(is_yx))
    docs, total_docs, _, yx_any, yg = _sums(
        zip(*(others.column(i).to_pylist() for i in range(others.num_columns)))
    )
    if not with_pairs:
        return docs, total_docs, {}, yx_any, yg
    pairs = table.filter(is_yx)
    labels, features, n = (pairs.column(c).to_pylist() for c in ("label", "feature", "n"))
    if pairs.column("value").null_count < pairs.num_rows:
        features = [_yx_feature(f, v) for f, v in zip(features, pairs.column("value").to_pylist())]
    yx = dict(zip(zip(labels, features), n))
    if len(yx) < len(n):  # a pair counted in two rows: summed, as the rows' loop sums it
        yx = {}
        for key, count in zip(zip(labels, features), n):
            yx[key] = yx.get(key, 0) + count
    return docs, total_docs, yx, yx_any, yg


def token_pairs(table):
    """The YX rows of a count table (pyarrow) whose features are all tokens (no ``value``), as
    numpy columns: ``(labels, label_codes, tokens, token_codes, n)``, the distinct labels and
    tokens (tokens sorted as Python sorts strings: UTF-8 byte order is code point order) and each
    row's index among them. None when some YX row has a value (a categorical model's)."""
    import pyarrow.compute as pc

    pairs = table.filter(pc.equal(table.column("event"), YX))
    if pairs.column("value").null_count < pairs.num_rows:
        return None
    if pairs.column("label").null_count or pairs.column("feature").null_count or pairs.column("n").null_count:
        raise ValueError("the count table has YX rows without a label, feature or count")
    labels = pc.dictionary_encode(pairs.column("label").combine_chunks())
    tokens = pc.unique(pairs.column("feature"))
    tokens = tokens.take(pc.array_sort_indices(tokens))
    codes = pc.index_in(pairs.column("feature"), value_set=tokens)
    return (
        labels.dictionary.to_pylist(),
        labels.indices.to_numpy(),
        tokens.to_pylist(),
        codes.to_numpy(),
        pairs.column("n").to_numpy(),
    )


def refuse_outside_domains(keys, domains: dict) -> None:
    """Refuse a categorical count (a YX key ``(event, label, column, value)``) of a value outside
    its column's declared domain (``ValueError``): the one check of training's counts
    (``CountArrays.declare``) and of what ``partial_fit`` counts, before it counts any of its batch."""
    if not domains:
        return
    for _event, _label, column, value in keys:
        if value is not None and column in domains and value not in domains[column]:
            raise ValueError(
                f"column {column!r}: value {value!r} was counted in training but is outside its declared "
                f"domain {list(domains[column])}"
            )


def _feature_key(feature):
    """The order of a model's features: tokens and column names as text, ``(column, value)`` pairs
    as tuples, a name sorting as ``(name,)``."""
    return (feature,) if isinstance(feature, str) else feature


class CountArrays:
    """A naive Bayes count table summed into the arrays a model is built from
    (``naive_bayes.model.build_nb_model``): documents per class (``docs``), all documents, YX=ANY
    and YG sums, and the YX counts as a matrix ``counts``, classes × features (tokens, column names
    or ``(column, value)`` pairs), ``vocab`` each feature's column. The classes are sorted; the
    features are in the order first counted, those of one ``add`` sorted (``_feature_key``): a
    table read whole is sorted, and a feature first seen later is appended without moving the
    others (the fitted attributes present them sorted: ``naive_bayes.attributes``).

    ``add(rows)`` counts more rows (or a pyarrow count table) into it in place, rows of one key
    summed, so that a model built after a few more examples costs what they hold and a pass of
    numpy over the matrix, not a pass of Python over every count (a model of 8,000 words rebuilt
    for each SMS learnt took 26 ms). A model built keeps the ``vocab`` it was built with: once handed
    to one (``handed_vocab``), it is copied before it changes, and else grows in place (a copy for
    each new word cost 1.2 ms on 78,000 words). The matrix keeps room for more features (a quarter
    more, past the first read), so that a few new words do not copy all of it (82 classes × 30,000
    words of Reuters: 20 MB a learnt story); ``counts`` is its columns in use."""

    def __init__(self) -> None:
        self.docs: dict[str, int] = {}
        self.total_docs = 0
        self.yx_any: dict[str, int] = {}
        self.yg: dict[tuple, tuple] = {}
        self.classes: tuple[str, ...] = ()
        self.vocab: dict = {}
        self._store = np.zeros((0, 0))  # classes × (features and room for more)
        self._handed = False  # whether a model holds ``vocab`` (``handed_vocab``)

    @property
    def counts(self) -> np.ndarray:
        """``C(y, feature)``, classes × features (a view: added to in place)."""
        return self._store[:, : len(self.vocab)]

    def __getstate__(self) -> dict:  # a pickle holds the counts, not the room
        return {**self.__dict__, "_store": np.array(self.counts)}

    def __setstate__(self, state: dict) -> None:
        if "counts" in state:  # pickled before the room: its matrix, its vocabulary maybe a model's
            state = {**state, "_store": state.pop("counts"), "_handed": True}
        self.__dict__.update(state)

    def handed_vocab(self) -> dict:
        """``vocab``, for a model to keep: copied before it next changes."""
        self._handed = True
        return self.vocab

    def add(self, rows) -> CountArrays:
        """Count ``rows`` (count rows, or a count table in pyarrow, whose token rows are read as
        columns: ``token_pairs``) into the arrays; this object."""
        pairs = token_pairs(rows) if hasattr(rows, "column") else None
        docs, total_docs, yx, yx_any, yg = _sums(rows, pairs=pairs is None)
        self.total_docs += total_docs
        for mine, more in ((self.docs, docs), (self.yx_any, yx_any)):
            for key, n in more.items():
                mine[key] = mine.get(key, 0) + n
        for key, (n, s, ss) in yg.items():
            had = self.yg.get(key)
            self.yg[key] = (n, s, ss) if had is None else (had[0] + n, had[1] + s, had[2] + ss)
        self._insert_classes(docs)
        if pairs is not None:
            labels, label_codes, tokens, codes, n = pairs
            self._insert_classes(labels)
            first = not self.vocab  # then the tokens, sorted, are the columns in order
            self._add_features(tokens)
            cidx = {c: i for i, c in enumerate(self.classes)}
            rows_at = np.array([cidx[label] for label in labels], np.int64)[label_codes]
            cols = codes if first else np.array([self.vocab[t] for t in tokens], np.int64)[codes]
            np.add.at(self.counts, (rows_at, cols), n)
        elif yx:
            self._insert_classes({label for label, _ in yx})
            self._add_features({f for _, f in yx})
            cidx, vocab = {c: i for i, c in enumerate(self.classes)}, self.vocab
            at = (np.array([cidx[c] for c, _ in yx], np.int64), np.array([vocab[f] for _, f in yx], np.int64))
            np.add.at(self.counts, at, np.fromiter(yx.values(), np.float64, len(yx)))
        return self

    def declare(self, domains: dict) -> None:
        """Every value of each declared domain a feature of the model (a count of 0 where unseen); a
        counted value outside its column's declared domain is refused (``refuse_outside_domains``)."""
        refuse_outside_domains(((YX, None, *f) for f in self.vocab if isinstance(f, tuple)), domains)
        self._add_features({(column, v) for column, values in domains.items() for v in values})

    def _insert_classes(self, classes) -> None:
        new = sorted(set(classes) - set(self.classes))
        if new:
            at = [bisect.bisect_left(self.classes, c) for c in new]
            self._store = np.insert(self._store, at, 0.0, axis=0)
            self.classes = tuple(sorted((*self.classes, *new)))

    def _add_features(self, features) -> None:
        new = [f for f in features if f not in self.vocab]
        if new:
            new.sort(key=None if all(type(f) is str for f in new) else _feature_key)
            width = len(self.vocab)
            if width + len(new) > self._store.shape[1]:  # the columns past ``width`` are zeros
                room = width + len(new) + (width // 4 + 256 if width else 0)
                store = np.zeros((len(self.classes), room))
                store[:, :width] = self.counts
                self._store = store
            if self._handed:
                self.vocab, self._handed = dict(self.vocab), False
            self.vocab.update(zip(new, range(width, width + len(new))))
