"""A naive Bayes model in memory (``NBPredictor``), read by ``nbspark.load`` and scored with the
classify job's maths: ``predict`` and ``predict_proba`` (all classes, rows summing to 1, columns in
``classes_`` order) of texts (text models) or rows: mappings of column -> value, or a pandas
DataFrame (table models)."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence

import numpy as np

from nbspark.errors import OutputError
from nbspark.inputs.tokens import tokenizer
from nbspark.naive_bayes.attributes import FittedAttributes
from nbspark.naive_bayes.count_table import YX, CountArrays, Y, refuse_outside_domains, table_fields
from nbspark.naive_bayes.events import COUNT_DDL, add_values, doc_events, event_row, scaled
from nbspark.naive_bayes.model import (
    build_nb_model,
    log_posteriors,
    partial_models,
    score_docs,
    unexplained,
    vocabulary_sums,
)
from nbspark.naive_bayes.row_cells import Cells, read_cells
from nbspark.naive_bayes.shapes import Labels, matrix_texts, matrix_vocabulary
from nbspark.naive_bayes.table_batches import count_columns
from nbspark.naive_bayes.table_scores import score_columns
from nbspark.naive_bayes.vocabulary_sums import VocabularySums
from nbspark.report.format import UNEXPLAINED
from nbspark.settings.capabilities import TEXT_MODELS
from nbspark.settings.naive_bayes import COUNTED_AS, model_options, read_as
from nbspark.spine.predictor import (
    LearnsInMemory,
    accuracy,
    as_batch,
    is_matrix,
    refuse_clone,
    refuse_unknown_columns,
    save_rows,
    storable,
    summed_rows,
    whole_weights,
)
from nbspark.storage.counts import read_count_rows
from nbspark.storage.locations import Location

log = logging.getLogger(__name__)

__all__ = ["NBPredictor", "read_nb"]


class NBPredictor(FittedAttributes, LearnsInMemory):
    """A naive Bayes model in memory (``naive_bayes.model.NBModel``), scored with the classify job's maths."""

    _stale, _partial_work = False, 0  # (``__init__`` sets both; a pickle of before them reads these)
    _sums: VocabularySums | None = None  # made when a model of some words first needs them

    def __init__(
        self,
        manifest: dict,
        rows: Iterable[Sequence],
        alpha: float | None = None,
        var_smoothing: float | None = None,
        model: str | None = None,
        norm: bool | None = None,
    ):
        nb = dict(manifest["config"]["nb"])
        if manifest.get("weighted"):
            raise OutputError(
                "this model was counted with non-integer weights (pyspark.ml weightCol); load it with "
                "CountingNaiveBayesModel.load"
            )
        self.manifest = manifest
        self.kind = read_as(manifest["model"], model)  # one count table, maybe read as another kind
        if norm is not None:
            nb["norm"] = bool(norm)
        self.text = self.kind in TEXT_MODELS  # scores texts; else table rows
        self.alpha = nb["alpha"] if alpha is None else float(alpha)
        self.var_smoothing = nb["var_smoothing"] if var_smoothing is None else float(var_smoothing)
        if not (
            math.isfinite(self.alpha)
            and self.alpha >= 0
            and math.isfinite(self.var_smoothing)
            and self.var_smoothing >= 0
        ):
            raise ValueError(
                f"alpha and var_smoothing must be finite and >= 0; got {self.alpha}, {self.var_smoothing}"
            )
        self.prior_alpha = nb.get("prior_alpha", 0.0)
        self._options = model_options({**nb, "alpha": self.alpha, "var_smoothing": self.var_smoothing})
        self._rows = list(rows)
        self._pending: dict = {}  # what partial_fit counted since the last save, by event key
        # the counts summed as the scorer is built from them, the scorer (None before any example; a
        # table it cannot score is refused here, by nbspark.load), and what partial_fit counted since
        # it was built: added to them when it is next used (``model``)
        self._arrays, self._unbuilt = CountArrays().add(self._rows), {}
        self._model = build_nb_model(self._arrays, self.kind, **self._options) if self._rows else None
        self._stale, self._partial_work = False, 0  # whether counts were taken since; words scored so
        # the class names held (each Y row's): partial_fit checks against them without a model built
        self._held = {row[1] for row in self._rows if row[0] == Y}
        self._matrix_known: set | None = None  # a matrix model's columns counted (partial_fit)
        # no rows: a model of no examples yet, which partial_fit fills (nbspark.NaiveBayes.fit)
        self._labels = Labels(manifest.get("label_numbers"), bool(self._held))
        # where ``save`` commits: where it was read (``read_nb``), as a URI (a Location does not pickle)
        self.path: str | None = None
        self._examples = 0
        self._tokenize = tokenizer(nb["tokenizer"])
        columns = manifest.get("columns") or {}
        self._numeric, self._categorical = (
            list(columns.get("numeric", ())),
            list(columns.get("categorical", ())),
        )
        self._binary = frozenset(nb.get("bernoulli_columns", ()))
        #: a text model fitted on a count matrix (``NaiveBayes.fit``): its width; it takes such matrices
        self.matrix_columns: int | None = manifest.get("matrix_columns")
        #: and the names of its columns, where that matrix was a DataFrame of named columns
        self.matrix_names: list[str] | None = manifest.get("matrix_names")

    def partial_fit(self, X: Iterable, y: Iterable, classes=None, sample_weight=None) -> NBPredictor:
        """Count more labelled examples into the model, as training counts them (scikit-learn's
        ``partial_fit``): ``X`` texts (text models) or rows (table models, as ``predict`` takes them),
        ``y`` one label each (a text's may be a list of labels: it counts once per label, as a
        multilabel line does). The model scores with them at once; ``save()`` commits them.

        ``classes``, which scikit-learn asks for at the first call, is checked, not needed (the model
        already holds its classes, and a new label adds one): every label of ``y`` must be among
        them, and so must every class the model holds. Each class it names is one of the model's
        from then on, counted or not, as in scikit-learn: a class of no example yet is in
        ``classes_``, with a count of 0 in the count table (saved so), and its probability 0 (but a
        complement model's, which has no prior, as ``ComplementNB``'s). ``sample_weight``: one whole
        number >= 0 per example (``spine.predictor.whole_weights``), an example of weight k counted
        as k copies of it (scikit-learn's result for whole weights). Labels are class names, or
        numbers (``naive_bayes.shapes.Labels``), given back as numbers."""
        return self._learn(X, y, classes, sample_weight, "partial_fit")

    @property
    def model(self):
        """The scorer (``naive_bayes.model.NBModel``; None before any example), with what
        ``partial_fit`` counted since it was last used added to its arrays (``count_table.CountArrays``)
        and built again from them: once for any number of calls before."""
        self._catch_up(self._take)
        if self._stale:
            with self._counts_lock():
                if self._stale:
                    self._model = build_nb_model(self._arrays, self.kind, sums=self._sums, **self._options)
                    self._stale, self._partial_work = False, 0
        return self._model

    def _take(self, unbuilt: dict) -> None:
        rows = [event_row(k, v) for k, v in unbuilt.items()]
        if self._sums is None:
            self._arrays.add(rows)
        else:
            self._sums.take(self._arrays, rows)
        self._stale = True  # the model is built again when next needed whole (``model``)

    def _text_scorer(self, docs: Sequence[Sequence[str]]):
        """The model to score the token lists ``docs`` with: ``model``, or, where it would be built again
        for them (``partial_fit`` counted since) and they hold few of the words (``model.partial_models``),
        the model of their words only (``build_nb_model``'s ``features``): predicting after each
        example learnt costs the example's words, not the vocabulary's (82 classes × 30,000 words of
        Reuters: 66 ms a story, ``scripts/bench_trickle.py``), and where the model needs sums over the
        vocabulary (``VocabularySums``) the row of each class to sum again. Such partial builds are
        given, in all, the cost of the words of the vocabulary, then ``model`` is built whole."""
        norm = self._options["norm"]
        if (
            self._sums is None
            and vocabulary_sums(self.kind, norm)
            and partial_models(self.kind, norm, self.alpha)
        ):
            self._sums = VocabularySums(self.kind, self.alpha)  # empty: the next of them sums every class
        self._catch_up(self._take)
        if self._stale and partial_models(self.kind, norm, self.alpha):
            words = {t for d in docs for t in d}
            with self._counts_lock():
                size = len(self._arrays.vocab)
                work = len(words) + (0 if self._sums is None else self._sums.cost(self._arrays.classes, size))
                if self._stale and self._partial_work + work <= size:
                    self._partial_work += work
                    return build_nb_model(
                        self._arrays, self.kind, features=words, sums=self._sums, **self._options
                    )
        return self.model

    def _learn(self, X, y, classes, sample_weight, call: str) -> NBPredictor:
        """``partial_fit``, its refusals naming ``call`` (``NaiveBayes.fit`` learns by it too)."""
        X = self._batch(X, call, learning=True)
        learnt = self._labels.copy()  # this model's only once the whole batch is counted
        y = learnt.names(y, call)
        if len(X) != len(y):
            raise ValueError(f"{call} takes one label per example: {len(X)} examples, {len(y)} labels")
        weights = whole_weights(sample_weight, len(X), "example", call, least=0)
        declared = None if classes is None else set(learnt.names(classes, call))
        if declared is not None and (left := sorted(self._held - declared)):
            raise ValueError(f"classes leaves out {[learnt.value(c) for c in left]}, which the model holds")
        counted_as = COUNTED_AS.get(self.manifest["model"], self.manifest["model"])
        events, counted = [], set()  # counted: the classes of the examples of weight > 0
        checked: dict[str, tuple] = {}  # a class name is checked once a batch
        for i, (label, weight) in enumerate(zip(y, weights)):
            labels = checked.get(label) if type(label) is str else None
            if labels is None:
                labels = _class_names(i, label, declared)
                if type(label) is str:
                    checked[label] = labels
            if self.text:
                if not isinstance(x := X[i], str):
                    raise TypeError(
                        f"a {self.kind} model learns texts (str); item {i} is a {type(x).__name__}"
                    )
                mine = doc_events(labels, self._tokenize(storable(x, f"text {i}")), counted_as)
                if weight == 1:  # most examples: their events as they are
                    events.extend(mine)
                elif weight:
                    events.extend((key, scaled(value, weight)) for key, value in mine)
            elif len(labels) != 1:
                raise ValueError(f"label {i}: a table row has one label, got {len(labels)}")
            if weight:
                counted.update(labels)
        if not self.text:  # the rows read by column, and counted by column: each key once
            cells = self._cells(X, learning=True)
            one = [v if isinstance(v, str) else v[0] for v in y]
            count_columns(one, cells.numbers, cells.categories, lambda *event: events.append(event), weights)
        if declared:  # every class named is the model's, counted or not (0), as scikit-learn's
            held = counted | self._held
            events += [
                ((Y, storable(c, "a class of classes"), None, None), 0) for c in sorted(declared - held)
            ]
        if self.matrix_columns is not None:  # every column in the vocabulary, counted or not
            if self._matrix_known is None:  # read once from the model, then kept by each batch
                self._matrix_known = set(self.model.vocab) if self.model is not None else set()
            events += matrix_vocabulary(
                self.matrix_columns, self._matrix_known, [v for v, w in zip(y, weights) if w]
            )
        refuse_outside_domains((key for key, _ in events if key[0] == YX), self._options["domains"])
        with self._counts_lock():  # the whole batch is read and checked: count it
            self._count(events, add_values)  # the scorer takes them when next used
            if self._matrix_known is not None:
                self._matrix_known.update(key[2] for key, _ in events if key[0] == YX)
            self._held.update(key[1] for key, _ in events if key[0] == Y)
            self._examples, self._labels = self._examples + sum(weights), learnt
        return self

    def _all_rows(self) -> list:
        """The count table: the rows read with what ``partial_fit`` counted since added by key
        (``summed_rows``), as ``save`` keeps it and an estimator's ``save`` writes it."""
        if not self._pending:
            return self._rows
        return summed_rows(self._rows, [event_row(k, v) for k, v in self._pending.items()], COUNT_DDL)

    def save(self) -> int:
        """Commit what ``partial_fit`` counted since the last save as the model's next version, a delta
        beside its table where the model was read (``storage.versions``), under the model's writer
        lock; the version. A stream may commit versions between two saves: counts add, neither loses
        the other's (``nbspark.load`` again to score with the stream's too)."""
        from nbspark.storage.manifests import NB_KIND

        with self._counts_lock():  # what is counted meanwhile waits
            rows = [event_row(k, v) for k, v in self._pending.items()]
            stats = {"documents": self._examples}
            version, self.manifest = save_rows(
                self.path, NB_KIND, rows, COUNT_DDL, self.manifest_fields, stats, "partial_fit", self.manifest
            )
            if rows:  # the same counts: the scorer built from them stands
                self._rows, self._pending, self._examples = self._all_rows(), {}, 0
            return version

    def whole_stats(self) -> dict:
        """The statistics of the whole model: the read one's and what ``partial_fit`` counted since."""
        return {"documents": self.manifest.get("stats", {}).get("documents", 0) + self._examples}

    def manifest_fields(self, table) -> dict:
        """This model's manifest fields of a count table in pyarrow (its rows, or a delta's)."""
        return {
            "model": self.manifest["model"],
            "columns": self.manifest.get("columns", {}),
            **({} if self.matrix_columns is None else {"matrix_columns": self.matrix_columns}),
            **({} if self.matrix_names is None else {"matrix_names": self.matrix_names}),
            **({} if self._labels.numbers is None else {"label_numbers": self._labels.numbers}),
            **table_fields(table),
        }

    def _jll(self, items: Sequence, extra_columns=()) -> tuple[np.ndarray, Cells | None]:
        """Joint log-likelihoods of ``items``, and a table model's rows as scored (``_cells``; None for
        texts)."""
        if self.text:
            if extra_columns:  # columns of rows, for a model of texts: refused, never ignored
                raise ValueError(
                    f"extra_columns name columns of a naive Bayes table model's rows; a {self.kind} model "
                    "scores texts"
                )
            for i, t in enumerate(items):
                if not isinstance(t, str):
                    raise TypeError(
                        f"a {self.kind} model scores texts (str); item {i} is a {type(t).__name__}"
                    )
            docs = [self._tokenize(t) for t in items]
            return score_docs(self._text_scorer(docs), docs)[0], None
        cells = self._cells(items)
        known = {*self._numeric, *self._categorical, self.manifest["config"]["nb"]["label_column"]}
        refuse_unknown_columns(items, known, sorted(self._numeric + self._categorical), extra_columns)
        return score_columns(self.model, cells.n, cells.numbers, cells.categories)[0], cells

    def _cells(self, rows: Sequence, learning: bool = False) -> Cells:
        """A table model's ``rows`` by column (``row_cells.read_cells``). ``learning``: a category the
        model has not seen yet is a new one, not a mistake."""
        vocab = None if learning else self.model.vocab
        return read_cells(rows, self._numeric, self._categorical, self._binary, self.kind, vocab)

    def predict_proba(self, items: Iterable, extra_columns: Iterable[str] = ()) -> np.ndarray:
        """Posteriors ``(n, len(classes_))``, each row summing to 1. A row's column that the model does
        not know is refused, unless ``extra_columns`` names it (an id, say)."""
        return np.exp(self.predict_log_proba(items, extra_columns))

    def predict_log_proba(self, items: Iterable, extra_columns: Iterable[str] = ()) -> np.ndarray:
        """Log posteriors ``(n, len(classes_))`` (scikit-learn's name): ``predict_proba``'s, in logs."""
        return self._log_posteriors(items, extra_columns)[0]

    def _log_posteriors(self, items: Iterable, extra_columns=()) -> tuple[np.ndarray, list | None]:
        """``predict_log_proba``'s array, and a table model's rows as scored (``_jll``)."""
        items = self._batch(items)
        if not items:
            return np.zeros((0, len(self._names()))), []
        jll, rows = self._jll(items, extra_columns)  # log P(y) + log P(x | y)
        dead = unexplained(jll)
        if dead:
            log.warning(
                "%d of %d %s: no class can explain them (%s); each got equal posteriors and the first class",
                dead,
                len(items),
                "texts" if self.text else "rows",
                UNEXPLAINED,
            )
        return log_posteriors(jll)[:, self._order()], rows

    @property
    def classes_(self):
        """The classes (scikit-learn's ``classes_``), the order of ``predict_proba``'s columns and of
        every per-class attribute: class names sorted (a tuple), or the numbers ``y`` gave, sorted
        as numbers (an array)."""
        names = self._names()
        return names if self._labels.numbers is None else self._labels.values(names)

    def _names(self) -> tuple:
        """The class names in ``classes_``' order."""
        names = sorted(self._held)
        return tuple(names[i] for i in self._order())

    def _order(self) -> np.ndarray:
        """The model's classes (class names, sorted as text) in ``classes_``' order."""
        return self._labels.order(tuple(sorted(self._held)))

    def predict_joint_log_proba(self, items: Iterable, extra_columns: Iterable[str] = ()) -> np.ndarray:
        """``log P(x, y)`` of each item for each class, ``(n, len(classes_))``: the prior and the
        likelihood before the posteriors are normalised (scikit-learn's name)."""
        items = self._batch(items, "predict_joint_log_proba")
        if not items:
            return np.zeros((0, len(self._names())))
        return self._jll(items, extra_columns)[0][:, self._order()]

    def score(self, items: Iterable, labels: Iterable[str], extra_columns: Iterable[str] = ()) -> float:
        """The accuracy of ``predict`` against ``labels`` (scikit-learn's ``score``)."""
        return accuracy(self.predict(items, extra_columns), labels, "item")

    __sklearn_clone__ = refuse_clone

    def get_params(self, deep: bool = True) -> dict:
        """The settings the model scores with (scikit-learn's ``get_params``)."""
        return {
            "model": self.kind,
            "alpha": self.alpha,
            "var_smoothing": self.var_smoothing,
            "prior_alpha": self.prior_alpha,
            "norm": bool(self._options.get("norm", False)),
        }

    @property
    def feature_names_in_(self) -> np.ndarray:
        """A table model's columns (scikit-learn's ``feature_names_in_``), what the columns of a 2-D
        array of rows are: the numeric ones (``theta_``'s columns), then the categorical ones, each in
        the order the training table had them (its header's, or the config's where it named them); a
        text model has none (AttributeError, as scikit-learn's models fitted without names), but one
        fitted on a DataFrame of counts has its columns' names (``matrix_names``)."""
        if self.text and self.matrix_names is not None:
            return np.array(self.matrix_names, dtype=object)
        if self.text:
            raise AttributeError(f"a {self.kind} model scores texts; it has no feature_names_in_")
        if self._numeric or self._categorical:  # the manifest's, as the model was defined
            return np.array([*self._numeric, *self._categorical], dtype=object)
        return np.array([*self.model.numeric, *self.model.categorical], dtype=object)

    @property
    def n_features_in_(self) -> int:
        """A table model's number of columns (scikit-learn's ``n_features_in_``): a 2-D array's width;
        a text model's, where it was fitted on a count matrix."""
        if self.text and self.matrix_columns is not None:
            return self.matrix_columns
        return len(self.feature_names_in_)

    def predict(self, items: Iterable, extra_columns: Iterable[str] = ()) -> np.ndarray:
        """The most probable class of each text or row, an array (scikit-learn's shape; ties: the
        class that sorts first, as the jobs)."""
        best = np.argmax(self.predict_log_proba(items, extra_columns), axis=1)
        return self._labels.values(self._names())[best]  # classes_[best], as scikit-learn's

    def _batch(self, items, call: str | None = None, learning: bool = False) -> list:
        """The items of a call as a list (``spine.predictor.as_batch``), a count matrix as texts where
        the model was fitted on one (``matrix_texts``). Such a model scores texts of its tokens (``x0``,
        ``x1``, …: the command line, the server, the classify job) but learns only matrices: its
        vocabulary is the matrix's columns, and a text's other words would be features of no column,
        in every score of a matrix from then on (a job's update of it is refused by the same rule,
        ``naive_bayes.jobs``)."""
        if self.matrix_columns is not None:
            if is_matrix(items):
                return matrix_texts(items, self.matrix_columns, call or "predict", self.matrix_names)
            if learning:
                raise TypeError(
                    f"{call} takes a count matrix of {self.matrix_columns} columns, as this model was "
                    "fitted on one, not texts"
                )
        return as_batch(items, "texts" if self.text else "rows", call, *self._array_columns())

    def _array_columns(self) -> tuple[list[str] | None, bool]:
        """What the columns of a 2-D array of rows are (``spine.predictor.array_rows``): a table model's
        ``feature_names_in_``, in order (None for a text model or one that has no columns yet), and
        whether an array may give them by position: not a mixed model's named columns, whose numeric
        and categorical ones are kept apart (the training table's order between them is not kept)."""
        if self.text or not self._held:
            return None, True
        return list(self.feature_names_in_), not (self._numeric and self._categorical)

    def explain(self, items: Iterable, extra_columns: Iterable[str] = ()) -> list[dict]:
        """Per text or row, what ``predict`` decided from: ``label``, ``probability`` and
        ``probabilities`` by class (``predict_proba``'s row); for a table row also ``unseen``, its
        categories the model never saw in their column, by column: those features are left out of
        the score, as a missing cell is (the classify job counts them in ``unknown_features``)."""
        log_post, rows = self._log_posteriors(items, extra_columns)
        classes = [self._labels.value(c) for c in self._names()]
        found = [
            {
                "label": classes[int(p.argmax())],
                "probability": float(p.max()),
                "probabilities": dict(zip(classes, map(float, p))),
            }
            for p in np.exp(log_post)
        ]
        for said, unseen in zip(found, rows.unseen(self.model.vocab) if rows else ()):  # as scored
            said["unseen"] = unseen
        return found


def _class_names(i: int, label, declared: set | None) -> tuple[str, ...]:
    """Label ``i`` as class names (a text's may be a list of them), each a non-empty ``str``, one of
    ``declared`` (``partial_fit``'s ``classes``, where given) and storable; ``ValueError`` else."""
    if isinstance(label, str):
        labels: tuple = (label,)
    elif isinstance(label, list | tuple):  # a text's several labels
        labels = tuple(label)
    else:  # None, a number: refused below
        labels = ()
    if not labels or not all(isinstance(v, str) and v.strip() for v in labels):
        raise ValueError(f"label {i}: {label!r} is not a class name (a non-empty str, or a list of them)")
    if declared is not None and (outside := [v for v in labels if v not in declared]):
        raise ValueError(f"label {i}: {outside[0]!r} is not one of classes")
    for v in labels:
        storable(v, f"label {i}")
    return labels


def read_nb(
    model_dir: Location,
    manifest: dict,
    alpha: float | None = None,
    var_smoothing: float | None = None,
    model: str | None = None,
    norm: bool | None = None,
) -> NBPredictor:
    """The naive Bayes model in ``model_dir`` (its ``manifest`` already read), counts checked as the jobs
    check them."""
    predictor = NBPredictor(
        manifest, read_count_rows(model_dir, COUNT_DDL, manifest), alpha, var_smoothing, model, norm
    )
    predictor.path = model_dir.uri
    return predictor
