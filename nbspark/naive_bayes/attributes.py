"""scikit-learn's fitted attributes of a naive Bayes model, read from its count table: the names
and shapes of ``MultinomialNB``, ``BernoulliNB``, ``ComplementNB``, ``CategoricalNB`` and
``GaussianNB`` (``class_count_``, ``class_log_prior_``, ``feature_count_``, ``feature_log_prob_``,
``category_count_``, ``theta_``, ``var_``, …), every per-class one in ``classes_``' order.

Each is what scores (``naive_bayes.model.NBModel``) or the counts it was built from, never a second
computation of a smoothing rule: a value the scorer does not hold (a Bernoulli model's
``log P(w | y)``, the class prior of a complement model, which scores without one) comes from the
rule's own function in ``naive_bayes.model``. An attribute that another kind of model has is an
AttributeError naming the kinds that have it, as scikit-learn's models have only their own."""

from __future__ import annotations

import numpy as np

from nbspark.naive_bayes.model import bernoulli_log_probs, class_log_priors
from nbspark.settings.capabilities import TEXT_MODELS
from nbspark.spine.predictor import array_names

__all__ = ["FittedAttributes"]

_TABLE_CATEGORIES = ("categorical", "mixed")
_NUMERIC = ("gaussian", "mixed")


class FittedAttributes:
    """The fitted attributes of ``NBPredictor`` (a mixin: it reads the predictor's ``model`` and the
    counts it is built from, ``_arrays``, class order ``_order()`` and columns ``feature_names_in_``)."""

    def _only(self, name: str, kinds) -> None:
        if self.kind not in kinds:
            named = f"{', '.join(kinds[:-1])} or {kinds[-1]}" if len(kinds) > 1 else kinds[0]
            raise AttributeError(f"{name} is a {named} model's; this is a {self.kind} model")

    def _counted(self):
        """The counts the scorer is built from (``count_table.CountArrays``: documents per class, all
        documents, ``C(y, feature)`` as a matrix in the model's classes' and vocabulary's order), with
        what ``partial_fit`` counted since (``model`` adds it)."""
        _ = self.model
        return self._arrays

    @property
    def class_count_(self) -> np.ndarray:
        """Examples counted per class (scikit-learn's ``class_count_``)."""
        docs = self._counted().docs
        return np.array([docs.get(c, 0) for c in self._names()], dtype=np.float64)

    @property
    def class_log_prior_(self) -> np.ndarray:
        """``log P(y)`` (scikit-learn's ``class_log_prior_``): the model's prior
        (``naive_bayes.model.class_log_prior``, with its ``prior_alpha``); a complement model, which
        scores without one, has it as ``ComplementNB`` does, from its class counts."""
        arrays = self._counted()
        counts = np.array([arrays.docs.get(c, 0) for c in self.model.classes], dtype=np.float64)
        return class_log_priors(counts, arrays.total_docs, self.prior_alpha)[self._order()]

    @property
    def class_prior_(self) -> np.ndarray:
        """``P(y)`` of a model with numeric columns (``GaussianNB.class_prior_``)."""
        self._only("class_prior_", _NUMERIC)
        return np.exp(self.class_log_prior_)

    @property
    def epsilon_(self) -> float:
        """What every variance was raised by: ``var_smoothing`` times the largest variance of a numeric
        column over all classes (``GaussianNB.epsilon_``)."""
        self._only("epsilon_", _NUMERIC)
        return self.model.epsilon

    @property
    def vocabulary_(self) -> dict[str, int]:
        """A text model's tokens -> their column in ``feature_log_prob_`` (``CountVectorizer``'s name)."""
        if not self.text:
            raise AttributeError(f"a {self.kind} model scores table rows; it has no vocabulary_")
        return {token: at for at, token in enumerate(self.get_feature_names_out())}

    def _text_columns(self) -> list[int]:
        """The model's vocabulary columns in the order a text model presents them: a count matrix's
        where it was fitted on one (column j the token ``xj``), else the tokens sorted (the model
        keeps a token first counted by ``partial_fit`` at its end: ``count_table.CountArrays``)."""
        vocab = self.model.vocab
        if self.matrix_columns is not None and len(vocab) == self.matrix_columns:
            return [vocab[name] for name in array_names(self.matrix_columns)]
        return [vocab[token] for token in sorted(vocab)]

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """A text model's tokens in the order of ``feature_count_``'s and ``feature_log_prob_``'s
        columns (``CountVectorizer.get_feature_names_out``): sorted, or a count matrix's column
        names ``x0``, ``x1``, … where it was fitted on one."""
        if not self.text:
            raise AttributeError(f"a {self.kind} model scores table rows; its columns are feature_names_in_")
        names = np.empty(len(self.model.vocab), dtype=object)
        for token, at in self.model.vocab.items():
            names[at] = token
        return names[self._text_columns()]

    def _yx(self) -> np.ndarray:
        """``C(y, feature)``, classes × the model's vocabulary, in ``classes_``' order."""
        return self._counted().counts[self._order()]

    @property
    def feature_count_(self) -> np.ndarray:
        """Per class and token (columns as ``feature_log_prob_``'s): the tokens counted (multinomial,
        complement), or the documents holding the token (Bernoulli), as scikit-learn's ``feature_count_``."""
        self._only("feature_count_", TEXT_MODELS)
        return self._yx()[:, self._text_columns()]

    @property
    def feature_all_(self) -> np.ndarray:
        """Each token's count over every class (``ComplementNB.feature_all_``)."""
        self._only("feature_all_", ("complement",))
        return self.feature_count_.sum(axis=0)

    @property
    def feature_log_prob_(self) -> np.ndarray | list[np.ndarray]:
        """What a feature weighs per class, as scikit-learn's ``feature_log_prob_``: ``log P(token | y)``
        (multinomial, Bernoulli; columns by ``vocabulary_``, or by a count matrix's where it was
        fitted on one), a complement model's weights (``ComplementNB``'s), or, per categorical column
        (``CategoricalNB``'s list, columns in ``feature_names_in_``'s order), ``log P(value | y)``
        over that column's ``categories_``."""
        if self.kind in _TABLE_CATEGORIES:
            return [self.model.weights[self._order()][:, at] for at in self._category_columns()]
        self._only("feature_log_prob_", (*TEXT_MODELS, *_TABLE_CATEGORIES))
        if self.kind == "bernoulli":  # it scores with log p − log(1 − p): p from the rule itself
            with np.errstate(divide="ignore"):
                return bernoulli_log_probs(
                    self.feature_count_, self.class_count_[:, None], self.alpha, np.log
                )[0]
        return self.model.weights[self._order()][:, self._text_columns()]

    def _categories(self) -> dict[str, list[tuple[str, int]]]:
        """Each categorical column (in ``feature_names_in_``'s order) -> its values, sorted as text
        (``categories_``' order), each with its column in the model's vocabulary."""
        by_column: dict[str, list] = {}
        for (column, value), at in sorted(
            (f, at) for f, at in self.model.vocab.items() if isinstance(f, tuple)
        ):
            by_column.setdefault(column, []).append((value, at))
        return {c: by_column[c] for c in self.feature_names_in_ if c in by_column}

    def _category_columns(self) -> list[list[int]]:
        return [[at for _, at in pairs] for pairs in self._categories().values()]

    @property
    def categories_(self) -> list[np.ndarray]:
        """Per categorical column (``feature_names_in_``'s order), its values, the order of
        ``category_count_``'s and ``feature_log_prob_``'s columns (``OrdinalEncoder.categories_``:
        what scikit-learn's ``CategoricalNB`` takes as codes 0, 1, …)."""
        self._only("categories_", _TABLE_CATEGORIES)
        return [np.array([v for v, _ in pairs], dtype=object) for pairs in self._categories().values()]

    @property
    def category_count_(self) -> list[np.ndarray]:
        """Per categorical column, the examples of each class holding each of its ``categories_``
        (``CategoricalNB.category_count_``; a missing cell counts for no value)."""
        self._only("category_count_", _TABLE_CATEGORIES)
        counts = self._yx()
        return [counts[:, at] for at in self._category_columns()]

    @property
    def n_categories_(self) -> np.ndarray:
        """Per categorical column, its number of values: those seen in training and those its
        declared domain names (``CategoricalNB.n_categories_``), what ``alpha`` smooths over."""
        self._only("n_categories_", _TABLE_CATEGORIES)
        return np.array([len(at) for at in self._category_columns()], dtype=np.int64)

    @property
    def theta_(self) -> np.ndarray:
        """Per class, each numeric column's mean (``GaussianNB.theta_``; columns in
        ``feature_names_in_``'s order)."""
        if self.model.theta is None:
            raise AttributeError(f"theta_ is a model with numeric columns'; this {self.kind} model has none")
        return self._uncounted_as(self.model.theta, 0.0)

    @property
    def var_(self) -> np.ndarray:
        """Per class, each numeric column's variance plus ``var_smoothing`` times the largest
        (``GaussianNB.var_``)."""
        if self.model.var is None:
            raise AttributeError(f"var_ is a model with numeric columns'; this {self.kind} model has none")
        return self._uncounted_as(self.model.var, self.model.epsilon)

    def _numeric_order(self) -> list[int]:
        """The model's numeric columns (by name) in ``feature_names_in_``'s order."""
        at = {c: j for j, c in enumerate(self.model.numeric)}
        return [at[c] for c in self.feature_names_in_ if c in at]

    def _uncounted_as(self, per_class: np.ndarray, value: float) -> np.ndarray:
        """``per_class`` (theta or var) in ``classes_`` order and ``feature_names_in_``'s, a class of
        no example yet (``partial_fit``'s ``classes``) holding ``value``, as scikit-learn's
        ``GaussianNB`` holds it (a mean of 0, a variance of its ``epsilon_``), not 0/0."""
        out = per_class[self._order()][:, self._numeric_order()]
        out[self.class_count_ == 0] = value
        return out
