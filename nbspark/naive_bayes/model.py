"""Naive Bayes by counting: models built from the counts, scoring as dot products.

Pure (numpy and scipy only). ``build_nb_model`` builds a model from the count rows of the events
(``naive_bayes.events``); scoring a partition is ``score_docs`` / ``table_scores.score_rows``.

Smoothing, in log space throughout:

* multinomial: ``log P(w|y) = log(C(y,w) + α) − log(C(y,ANY) + α|V|)``, Cohen's Dirichlet prior
  with ``q = 1/|V|`` and ``m = α|V|`` (``α = 1``: add-one), as scikit-learn's MultinomialNB;
* Bernoulli: ``p(w|y) = (df(y,w) + α) / (N_y + 2α)``; absent words count through ``log(1 − p)``;
* categorical: ``P(X_j=v|y) = (C(y,j,v) + α) / (N_y + α n_j)``, ``n_j`` the values of j seen in
  training;
* Gaussian: mean and variance from (n, Σx, Σx²), plus ``var_smoothing`` times the largest
  feature variance of all training data, as scikit-learn's GaussianNB.

Class priors are ``log(C(Y=y) / C(Y=ANY))``. Posteriors are normalised with log-sum-exp;
ties go to the class that sorts first.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from nbspark.naive_bayes.count_table import CountArrays

if TYPE_CHECKING:  # scipy is imported where a CSR matrix is built: a Spark worker that only parses
    from scipy import sparse  # and counts lines, and nbspark.load, start without it

__all__ = [
    "NBModel",
    "bernoulli_log_probs",
    "class_log_prior",
    "class_log_priors",
    "scalar_log",
    "complement_log_weights",
    "multinomial_log_prob",
    "partial_models",
    "vocabulary_sums",
    "build_nb_model",
    "csr_rows",
    "text_jll",
    "log_posteriors",
    "ranked_columns",
    "score_docs",
    "top_labels",
    "unexplained",
]

# ---------------------------------------------------------------- smoothing, defined once
# ``log`` is ``scalar_log`` for numbers, np.log for arrays or pyspark's F.log for columns: the
# broadcast scorer's arrays and the join scorer's SQL are both derived from these formulas.


def scalar_log(x) -> float:
    """``math.log``, but log 0 = −inf, as numpy's log gives it: the prior of a class of no example
    (``partial_fit``'s ``classes``), a factor of ``alpha`` 0."""
    return math.log(x) if x != 0 else -math.inf


def class_log_prior(class_count, total, log=scalar_log, prior_alpha: float = 0.0, n_classes: int = 0):
    """``log P(y) = log(C(Y=y) + a) − log(C(Y=ANY) + K·a)``: the maximum-likelihood prior with
    ``prior_alpha`` a = 0 (scikit-learn's), MLlib's smoothed prior with a = λ, Cohen's v1/v2 with a = 1."""
    return log(class_count + prior_alpha) - log(total + n_classes * prior_alpha)


def class_log_priors(class_count: np.ndarray, total_docs, prior_alpha: float = 0.0) -> np.ndarray:
    """``class_log_prior`` of every class from the counts of a table: ``total_docs`` its Y=ANY count
    (the class counts' sum where it has none); a class of no example, −inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return class_log_prior(
            class_count, total_docs or class_count.sum(), np.log, prior_alpha, len(class_count)
        )


def multinomial_log_prob(count, class_total, alpha: float, vocab_size: int, log=scalar_log):
    """``log P(w|y) = log(C(y,w) + α) − log(C(y,ANY) + α|V|)``."""
    return log(count + alpha) - log(class_total + alpha * vocab_size)


def bernoulli_log_probs(df, docs, alpha: float, log=scalar_log):
    """``(log p, log(1 − p))`` with ``p = (df(y,w) + α) / (N_y + 2α)``."""
    return log(df + alpha) - log(docs + 2 * alpha), log(docs - df + alpha) - log(docs + 2 * alpha)


def complement_log_weights(counts, alpha: float, norm: bool = False, totals=None, size: int | None = None):
    """Complement naive Bayes (Rennie et al. 2003), as scikit-learn's ``ComplementNB``: from each
    class's token counts ``C(y,w)`` (classes × vocabulary), the complement counts
    ``C(¬y,w) = Σ_y' C(y',w) − C(y,w)``, ``θ(¬y,w) = log((C(¬y,w) + α) / Σ_w (C(¬y,w) + α))``, and the
    weights ``−θ`` (a document scores high where the other classes' words are rare), or with
    ``norm`` ``θ / Σ_w θ`` (scikit-learn's ``norm=True``; MLlib's ``complement`` does not normalise). No
    class prior is added.

    The denominator is ``Σ_y' C(y',ANY) + α|V| − C(y,ANY)`` (the sum over the vocabulary, in closed
    form), from the class totals ``totals`` (``C(y,ANY)``; ``counts``' row sums unless given) and the
    vocabulary's ``size`` (``counts``' width unless given): ``counts`` may then be some of the
    vocabulary's columns, each weighed as in the whole model (``build_nb_model``'s ``features``; with
    ``norm``, given the sums over every word that ``vocabulary_sums.VocabularySums`` keeps)."""
    return _complement(counts, alpha, norm, totals, size)[0]


def _complement(counts, alpha, norm, totals=None, size=None, sums=None):
    """``complement_log_weights``, and with ``norm`` the sums ``Σ_w log(C(¬y,w) + α)`` per class that
    ``Σ_w θ`` is made of (``sums``, where ``counts`` is some of the vocabulary's columns; else summed
    from them), to keep (``vocabulary_sums.VocabularySums``)."""
    totals = counts.sum(axis=1) if totals is None else totals
    size = counts.shape[1] if size is None else size
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(counts.sum(axis=0, keepdims=True) + alpha - counts)
        denominator = np.log(totals.sum() + alpha * size - totals)
        if not norm:
            return denominator[:, None] - logs, None
        sums = logs.sum(axis=1) if sums is None else sums
        return (logs - denominator[:, None]) / (sums - size * denominator)[:, None], sums


@dataclass(frozen=True)
class NBModel:
    """Arrays for scoring: ``jll = X @ weights.T + bias + class_log_prior (+ Gaussian part)``.

    ``vocab`` maps a token (multinomial, Bernoulli) or a ``(feature, value)`` pair
    (categorical) to its column of ``weights``.
    """

    kind: str
    classes: tuple[str, ...]
    class_log_prior: np.ndarray
    vocab: dict = field(default_factory=dict)
    weights: np.ndarray | None = None  # (C, V)
    bias: np.ndarray | None = None  # (C,)
    categorical: tuple[str, ...] = ()
    numeric: tuple[str, ...] = ()
    theta: np.ndarray | None = None  # (C, F)
    var: np.ndarray | None = None  # (C, F)
    epsilon: float = 0.0
    # Bernoulli with alpha = 0: (C, V) 1 where p = 1 (a document without the word has probability 0)
    required: np.ndarray | None = None
    # multinomial, unseen = "smooth" (Cohen's v2): the class token totals and alpha
    unseen_totals: np.ndarray | None = None
    alpha: float = 1.0
    # the vocabulary's size where ``vocab`` holds only some of it (``build_nb_model``'s ``features``)
    vocab_size: int | None = None

    def __post_init__(self) -> None:
        # kept column-major, so that ``X @ weights.T`` (``text_jll``) and a feature's row of
        # ``weights.T`` (``table_scores``) read contiguous memory: scipy copied a strided ``weights.T``
        # whole at every product, 0.6 ms for a one-text predict on 78,000 words of 5 classes
        for name in ("weights", "required"):
            array = getattr(self, name)
            if array is not None and not array.T.flags.c_contiguous:
                object.__setattr__(self, name, np.asfortranarray(array))

    def nbytes(self) -> int:
        arrays = (self.class_log_prior, self.weights, self.bias, self.theta, self.var)
        return sum(a.nbytes for a in arrays if a is not None)


def partial_models(kind: str, norm: bool = False, alpha: float = 1.0) -> bool:
    """Whether a model of ``kind`` can be built over some of its words (``build_nb_model``'s
    ``features``), each scored as in the whole model: multinomial, and complement without ``norm``
    (their denominators are class totals); Bernoulli, and complement with ``norm``, whose bias or
    divisor is a sum over every word that the caller keeps (``vocabulary_sums.VocabularySums``),
    with ``alpha > 0``."""
    return (
        kind == "multinomial"
        or (kind == "complement" and not norm)
        or (kind in ("bernoulli", "complement") and alpha > 0)
    )


def vocabulary_sums(kind: str, norm: bool) -> bool:
    """Whether a model of some words of ``kind`` needs ``vocabulary_sums.VocabularySums``."""
    return kind == "bernoulli" or (kind == "complement" and norm)


def build_nb_model(
    rows: Iterable[Sequence] | CountArrays,
    kind: str,
    alpha: float = 1.0,
    var_smoothing: float = 1e-9,
    prior_alpha: float = 0.0,
    unseen: str = "drop",
    domains: dict | None = None,
    norm: bool = False,
    features=None,
    sums=None,  # a vocabulary_sums.VocabularySums (which imports this module)
) -> NBModel:
    """Build an ``NBModel`` of ``kind`` from count rows ``(event, label, feature, value, n, sum, sumsq)``
    (rows of one key summed), the count table itself as a pyarrow Table (faster: its YX rows are not
    looked at one by one), or a table already summed into ``CountArrays`` (a model in memory keeps
    them, and adds what it learns to them) (``prior_alpha``: see ``class_log_prior``; ``unseen``,
    ``domains``: see ``settings.naive_bayes``). ``alpha = 0`` is the maximum-likelihood estimate: a
    zero count gives log 0 = −inf. ``features`` (tokens, where ``partial_models``): the model of those
    only, every other token unknown to it, each scored as the whole model scores it (the same
    totals and vocabulary size): a few texts scored after ``partial_fit`` cost their tokens, not the
    vocabulary (``NBPredictor``). A Bernoulli model's, and a complement one's with ``norm``, take
    their sums over the whole vocabulary from ``sums`` (``vocabulary_sums``), which a whole build
    given them keeps."""
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    arrays = rows if isinstance(rows, CountArrays) else CountArrays().add(rows)
    if not arrays.docs:
        raise ValueError("the count table has no class counts (Y rows)")
    classes = arrays.classes
    class_count = np.array([arrays.docs[c] for c in classes], dtype=np.float64)
    prior = class_log_priors(class_count, arrays.total_docs, prior_alpha)
    if kind == "complement":  # no class prior, as in scikit-learn's ComplementNB and MLlib's complement model
        prior = np.zeros(len(classes))
    out = {"kind": kind, "classes": classes, "class_log_prior": prior, "alpha": alpha}
    if kind in ("categorical", "mixed"):
        arrays.declare(domains or {})
    counts, vocab, kept = arrays.counts, arrays.vocab, None
    if features is not None:
        if not partial_models(kind, norm, alpha) or (vocabulary_sums(kind, norm) and sums is None):
            raise ValueError(
                f"a model of some features only is not a {kind} model's (norm={norm}, alpha={alpha})"
            )
        kept = sums.of(arrays) if vocabulary_sums(kind, norm) else None
        at = {f: vocab[f] for f in features if f in vocab}
        counts, vocab = counts[:, list(at.values())], dict(zip(at, range(len(at))))
        out["vocab_size"] = len(arrays.vocab)
    if kind in ("multinomial", "bernoulli", "complement", "categorical", "mixed") and (
        vocab or kind != "mixed"
    ):
        with np.errstate(divide="ignore", invalid="ignore"):
            out.update(
                _weights(
                    kind,
                    counts,
                    class_count,
                    arrays.yx_any,
                    classes,
                    vocab,
                    alpha,
                    unseen,
                    domains or {},
                    norm,
                    len(arrays.vocab),
                    kept,
                )
            )
        whole_sums = out.pop("sums", None)
        if features is None and sums is not None and whole_sums is not None:
            sums.keep(classes, whole_sums)
        out["vocab"] = arrays.handed_vocab() if features is None else vocab
    if kind in ("gaussian", "mixed") and arrays.yg:
        out.update(_gaussian_part(arrays.yg, classes, var_smoothing))
    if kind == "gaussian" and not arrays.yg:
        raise ValueError("a Gaussian model needs numeric features (YG rows)")
    return NBModel(**out)


def _weights(
    kind, counts, class_count, yx_any, classes, vocab, alpha, unseen, domains, norm, size, kept
) -> dict:
    """``weights`` and ``bias`` (and ``required``, ``unseen_totals``) from the counts, by the formulas
    above; ``size``: the vocabulary's (``vocab`` may be some of it, whose sums over the vocabulary
    are ``kept``, ``vocabulary_sums.VocabularySums``), and the sums that a whole build keeps
    (``sums``)."""
    totals = np.array([yx_any.get(c, 0) for c in classes], dtype=np.float64)  # C(y,ANY)
    if kind == "complement":
        weights, sums = _complement(counts, alpha, norm, totals, size, kept)
        return {"weights": weights, "bias": np.zeros(len(classes)), "sums": sums}
    if kind == "multinomial":
        weights = multinomial_log_prob(counts, totals[:, None], alpha, size, np.log)
        weights[np.isnan(weights)] = -np.inf  # alpha = 0 and a class without tokens: 0/0 (in place: no copy)
        return {
            "weights": weights,
            "bias": np.zeros(len(classes)),
            "unseen_totals": totals if unseen == "smooth" else None,
        }
    if kind == "bernoulli":
        p_log, q_log = bernoulli_log_probs(counts, class_count[:, None], alpha, np.log)
        must = np.isneginf(q_log)  # p = 1 (only when alpha = 0): absent means probability 0
        bias = np.where(must, 0.0, q_log).sum(axis=1) if kept is None else np.asarray(kept, dtype=np.float64)
        return {
            "weights": np.where(must, p_log, p_log - q_log),
            "bias": bias,
            "sums": bias,
            "required": must.astype(np.float64) if must.any() else None,
        }
    names = sorted({f[0] for f in vocab})
    n_values = Counter(f[0] for f in vocab)
    weights = np.empty_like(counts)
    for f, i in vocab.items():
        weights[:, i] = np.log(counts[:, i] + alpha) - np.log(class_count + alpha * n_values[f[0]])
    return {"weights": weights, "bias": np.zeros(len(classes)), "categorical": tuple(names)}


def _gaussian_part(yg: dict, classes: tuple[str, ...], var_smoothing: float) -> dict:
    """Means and variances per (class, feature) from ``(n, Σx, Σx²)``, plus ``var_smoothing`` times
    the largest variance of all training data (scikit-learn's GaussianNB)."""
    cidx = {c: i for i, c in enumerate(classes)}
    names = tuple(sorted({f for _, f in yg}))
    fidx = {f: i for i, f in enumerate(names)}
    n = np.zeros((len(classes), len(names)))
    s = np.zeros_like(n)
    ss = np.zeros_like(n)
    for (label, f), (cn, cs, css) in yg.items():
        n[cidx[label], fidx[f]], s[cidx[label], fidx[f]], ss[cidx[label], fidx[f]] = cn, cs, css
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = s / n
        var = np.maximum(ss / n - theta**2, 0.0)
        all_n, all_s, all_ss = n.sum(0), s.sum(0), ss.sum(0)
        pooled = np.maximum(all_ss / all_n - (all_s / all_n) ** 2, 0.0)
    epsilon = var_smoothing * float(np.nanmax(pooled)) if len(names) else 0.0
    return {"numeric": names, "theta": theta, "var": var + epsilon, "epsilon": epsilon}


# ---------------------------------------------------------------- scoring


def csr_rows(rows: np.ndarray, cols: np.ndarray, n_rows: int, width: int, binary: bool) -> sparse.csr_matrix:
    """The sparse count matrix of ``(row, col)`` entries given in row order (no sort: a repeated
    entry stays repeated, and the matrix product sums it). ``binary`` keeps one entry per pair."""
    from scipy import sparse

    if binary:
        keys = np.unique(rows * width + cols)
        rows, cols = keys // width, keys % width
    # int32 indices where they fit, as scipy keeps them: given int64, it reads them all to see whether
    # they fit (a third of a one-text predict's matrix)
    index = np.int32 if max(len(cols), width) < 2**31 - 1 else np.int64
    indptr = np.zeros(n_rows + 1, index)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return sparse.csr_matrix(
        (np.ones(len(cols)), cols.astype(index, copy=False), indptr), shape=(n_rows, width)
    )


def _csr(model: NBModel, docs: Sequence[Sequence], binary: bool) -> tuple[sparse.csr_matrix, int, np.ndarray]:
    """Sparse count rows of ``docs`` over the model's vocabulary; also the unknown-feature count,
    and per row the unknown tokens and (for ``unseen = smooth``) the distinct ones, ``(2, n)``.

    One dictionary look-up per token, in a single pass over the whole batch; tokens stay in
    document order, so the CSR arrays are built directly. Bernoulli rows are made 0/1.
    """
    get = model.vocab.get
    lengths = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
    cols = np.fromiter((get(t, -1) for d in docs for t in d), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(docs), dtype=np.int64), lengths)
    known = cols >= 0
    per_row = np.zeros((2, len(docs)))
    if model.unseen_totals is not None:
        per_row[0] = np.bincount(rows[~known], minlength=len(docs))
        per_row[1] = [len({t for t in d if t not in model.vocab}) for d in docs]
    X = csr_rows(rows[known], cols[known], len(docs), len(model.vocab), binary)
    return X, int(len(known) - known.sum()), per_row


def text_jll(model: NBModel, X, unknown: np.ndarray | None = None) -> np.ndarray:
    """Joint log-likelihoods ``(n, C)`` of text count rows ``X`` (the one place text is scored).

    Bernoulli with ``alpha = 0``: a document lacking a word every training document of a class
    had scores −inf there. ``unseen = smooth`` (Cohen's v2; ``unknown``: per row the unknown
    tokens and the distinct ones, ``u``): the vocabulary is ``|V| + u`` for that document, so
    each token scores ``log(C(y,w) + α) − log(C(y,ANY) + α(|V| + u))``, an unknown one with C = 0.
    """
    jll = np.asarray(X @ model.weights.T) + model.bias + model.class_log_prior
    if model.required is not None:
        missing = model.required.sum(axis=1)[None, :] - np.asarray(X @ model.required.T)
        jll[missing > 0.5] = -np.inf
    if model.unseen_totals is not None:
        n_known = np.asarray(X.sum(axis=1)).ravel()
        size = len(model.vocab) if model.vocab_size is None else model.vocab_size
        a, totals = model.alpha, model.unseen_totals[None, :]
        n_unknown, distinct = unknown[0][:, None], unknown[1][:, None]
        jll += (
            n_known[:, None] * np.log(totals + a * size)
            - (n_known[:, None] + n_unknown) * np.log(totals + a * (size + distinct))
            + n_unknown * np.log(a)
        )
    return jll


def score_docs(model: NBModel, docs: Sequence[Sequence[str]]) -> tuple[np.ndarray, int]:
    """Joint log-likelihoods ``(n, C)`` of token lists, and the count of out-of-vocabulary tokens."""
    X, unknown, per_row = _csr(model, docs, binary=model.kind == "bernoulli")
    return text_jll(model, X, per_row), unknown


def log_posteriors(jll: np.ndarray) -> np.ndarray:
    """Normalise joint log-likelihoods to log-posteriors with log-sum-exp. A row whose classes
    all score −inf (``alpha = 0``: every class has a zero factor) gets uniform posteriors."""
    top = jll.max(axis=1, keepdims=True)
    dead = np.isneginf(top)
    jll = np.where(dead, 0.0, jll)
    top = np.where(dead, 0.0, top)
    return jll - (top + np.log(np.exp(jll - top).sum(axis=1, keepdims=True)))


def unexplained(jll: np.ndarray) -> int:
    """Rows whose every class scores −inf (``report.format.UNEXPLAINED``: ``alpha = 0`` and each class
    has a factor of zero, or a Gaussian column's value so far out that ``(x - θ)² / σ²`` overflows).
    ``log_posteriors`` gives them equal posteriors, and ranking then puts the first class first."""
    return int(np.isneginf(jll.max(axis=1)).sum()) if jll.size else 0


def top_labels(log_post: np.ndarray, classes: Sequence[str], k: int, threshold: float = 0.0):
    """Per row: the ranked ``(label, probability)`` pairs predicted (top ``k``, plus any label
    whose posterior reaches ``threshold`` when it is above 0): ``ranked_columns`` spelled out."""
    order, probs, picked = ranked_columns(log_post, k, threshold, ranked=0)
    return [
        [(classes[order[r, i]], float(probs[r, i])) for i in range(picked[r])] for r in range(len(log_post))
    ]


def ranked_columns(log_post: np.ndarray, k: int, threshold: float = 0.0, ranked: int = 5):
    """The one ranking of posteriors (``top_labels`` is its list form; the join scorer's SQL twin is
    ``naive_bayes.join_scorer._ranked_predictions``): per row the class indices by falling posterior
    (``order``, at most ``ranked`` columns), their probabilities, and how many of them are
    predicted (the top ``k`` plus any whose posterior reaches ``threshold`` when it is above 0;
    the probabilities fall, so the predicted ones are a prefix)."""
    order = np.argsort(-log_post, axis=1, kind="stable")  # ties: first class in order
    probs = np.exp(np.take_along_axis(log_post, order, axis=1))
    n_classes = log_post.shape[1]
    picked = np.full(len(log_post), min(k, n_classes), np.int64)
    if threshold > 0:
        picked = np.maximum(picked, (probs >= threshold).sum(axis=1))
    keep = max(min(ranked, n_classes), int(picked.max(initial=0)))
    return order[:, :keep], probs[:, :keep], picked
