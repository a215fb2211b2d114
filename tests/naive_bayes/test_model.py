"""Naive Bayes maths without Spark: the IR-book golden example and scikit-learn as an oracle."""

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from nbspark.naive_bayes.events import add_values, doc_events, event_row, row_events
from nbspark.naive_bayes.model import build_nb_model, log_posteriors, score_docs, top_labels
from nbspark.naive_bayes.table_scores import score_rows
from tests.naive_bayes.test_events import count

sklearn = pytest.importorskip("sklearn")
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB  # noqa: E402

# Manning, Raghavan & Schütze, Introduction to IR, Example 13.1
CHINA = [
    (("c",), ["Chinese", "Beijing", "Chinese"]),
    (("c",), ["Chinese", "Chinese", "Shanghai"]),
    (("c",), ["Chinese", "Macao"]),
    (("j",), ["Tokyo", "Japan", "Chinese"]),
]
TEST_DOC = ["Chinese", "Chinese", "Chinese", "Tokyo", "Japan"]


def test_iir_multinomial_golden():
    rows = count(e for labels, toks in CHINA for e in doc_events(labels, toks, "multinomial"))
    m = build_nb_model(rows, "multinomial", alpha=1.0)
    p = {
        c: dict(zip(sorted(m.vocab, key=m.vocab.get), np.exp(m.weights[i]))) for i, c in enumerate(m.classes)
    }
    assert p["c"]["Chinese"] == pytest.approx(3 / 7)
    assert p["c"]["Tokyo"] == pytest.approx(1 / 14) and p["c"]["Japan"] == pytest.approx(1 / 14)
    assert p["j"]["Chinese"] == pytest.approx(2 / 9)
    assert p["j"]["Tokyo"] == pytest.approx(2 / 9) and p["j"]["Japan"] == pytest.approx(2 / 9)
    assert np.exp(m.class_log_prior).tolist() == pytest.approx([3 / 4, 1 / 4])
    jll, unknown = score_docs(m, [TEST_DOC])
    # the book: P(c|d) ∝ 3/4 (3/7)^3 1/14 1/14 ≈ 0.0003, P(j|d) ∝ 1/4 (2/9)^3 2/9 2/9 ≈ 0.0001
    assert math.exp(jll[0, 0]) == pytest.approx(3 / 4 * (3 / 7) ** 3 / 14 / 14)
    assert math.exp(jll[0, 1]) == pytest.approx(1 / 4 * (2 / 9) ** 5)
    assert unknown == 0
    assert top_labels(log_posteriors(jll), m.classes, 1)[0][0][0] == "c"


def test_iir_bernoulli_golden():
    # IIR Example 13.2: P(Chinese|c) = 4/5, P(Japan|c) = P(Tokyo|c) = 1/5, P(c|d) ≈ 0.005, P(j|d) ≈ 0.022
    rows = count(e for labels, toks in CHINA for e in doc_events(labels, toks, "bernoulli"))
    m = build_nb_model(rows, "bernoulli", alpha=1.0)
    post = np.exp(log_posteriors(score_docs(m, [TEST_DOC])[0]))[0]
    unnorm_c = 3 / 4 * 4 / 5 * 1 / 5 * 1 / 5 * (1 - 2 / 5) * (1 - 2 / 5) * (1 - 2 / 5)
    unnorm_j = 1 / 4 * 2 / 3 * 2 / 3 * 2 / 3 * (1 - 1 / 3) * (1 - 1 / 3) * (1 - 1 / 3)
    assert unnorm_c == pytest.approx(0.005, abs=5e-4) and unnorm_j == pytest.approx(0.022, abs=5e-4)
    assert post[0] == pytest.approx(unnorm_c / (unnorm_c + unnorm_j))


def random_docs(seed, n=200, vocab=40, classes=("a", "b", "c")):
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        y = classes[i % len(classes)]
        bias = classes.index(y) * 5
        toks = [f"w{(int(v) + bias) % vocab}" for v in rng.zipf(1.6, size=rng.integers(1, 30)) % vocab]
        docs.append(((y,), toks))
    return docs


def dense(docs, vocab):
    X = np.zeros((len(docs), len(vocab)))
    for r, (_, toks) in enumerate(docs):
        for t in toks:
            if t in vocab:
                X[r, vocab[t]] += 1
    return X


@pytest.mark.parametrize(
    "kind, alpha", [("multinomial", 1.0), ("multinomial", 0.1), ("bernoulli", 1.0), ("bernoulli", 0.5)]
)
def test_text_models_agree_with_sklearn(kind, alpha):
    train, test = random_docs(1), random_docs(2, n=100)
    m = build_nb_model(
        count(e for labels, toks in train for e in doc_events(labels, toks, kind)), kind, alpha=alpha
    )
    X = dense(train, m.vocab)
    y = [labels[0] for labels, _ in train]
    ref = (
        MultinomialNB(alpha=alpha) if kind == "multinomial" else BernoulliNB(alpha=alpha, binarize=0.0)
    ).fit(X, y)
    assert list(ref.classes_) == list(m.classes)
    ours = log_posteriors(score_docs(m, [toks for _, toks in test])[0])
    theirs = ref.predict_log_proba(dense(test, m.vocab))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    assert [t[0][0] for t in top_labels(ours, m.classes, 1)] == list(ref.predict(dense(test, m.vocab)))
    assert m.weights.T.flags.c_contiguous  # read in place by the product: a strided one was copied whole


def test_categorical_agrees_with_sklearn():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(300, 5))
    y = np.where(X[:, 0] + rng.integers(0, 3, 300) > 3, "yes", "no")
    rows = [({f"f{j}": str(v) for j, v in enumerate(x)}, {}) for x in X]
    m = build_nb_model(
        count(e for (cat, num), label in zip(rows, y) for e in row_events(label, cat, num)),
        "categorical",
        1.0,
    )
    ref = CategoricalNB(alpha=1.0).fit(X, y)
    Xt = rng.integers(0, 4, size=(50, 5))
    ours = log_posteriors(score_rows(m, [({f"f{j}": str(v) for j, v in enumerate(x)}, {}) for x in Xt])[0])
    np.testing.assert_allclose(ours, ref.predict_log_proba(Xt), rtol=0, atol=1e-9)


def test_gaussian_agrees_with_sklearn():
    from sklearn.datasets import load_wine

    data = load_wine()
    X, y = data.data, data.target.astype(str)
    names = [f"x{j:02d}" for j in range(X.shape[1])]  # sorted = column order
    rows = [({}, dict(zip(names, map(float, x)))) for x in X]
    m = build_nb_model(
        count(e for (cat, num), label in zip(rows, y) for e in row_events(label, cat, num)), "gaussian"
    )
    ref = GaussianNB().fit(X, y)  # var_smoothing 1e-9 of the largest variance: the same rule
    ours = log_posteriors(score_rows(m, rows)[0])
    np.testing.assert_allclose(m.theta, ref.theta_, rtol=1e-12)
    np.testing.assert_allclose(m.var, ref.var_, rtol=1e-9)
    np.testing.assert_allclose(ours, ref.predict_log_proba(X), rtol=0, atol=1e-9)  # measured: 6e-12
    assert (np.array([m.classes[i] for i in ours.argmax(1)]) == ref.predict(X)).all()


def test_gaussian_of_constant_columns_predicts_the_prior_in_silence():
    # every training value the same: variance 0 and var_smoothing's share of 0 is 0 (scikit-learn
    # answers NaN). The column tells the classes apart in no way: P(y) by hand, 2 of 3 and 1 of 3,
    # for the training value and any other, and no numpy warning (pytest -W error makes it fail)
    rows = [({}, {"u": 1.0, "v": 2.0})] * 3
    m = build_nb_model(count(e for (c, n), y in zip(rows, "aab") for e in row_events(y, c, n)), "gaussian")
    assert m.epsilon == 0.0 and (m.var == 0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post = np.exp(log_posteriors(score_rows(m, [({}, {"u": 1.0, "v": 2.0}), ({}, {"u": 5.0})])[0]))
    np.testing.assert_allclose(post, [[2 / 3, 1 / 3]] * 2, rtol=1e-12)


def test_mixed_is_gaussian_plus_categorical():
    rows = [
        ({"c": "x"}, {"v": 1.0}),
        ({"c": "y"}, {"v": 2.0}),
        ({"c": "x"}, {"v": 1.5}),
        ({"c": "y"}, {"v": 4.0}),
    ]
    labels = ["p", "q", "p", "q"]
    events = [e for (cat, num), lab in zip(rows, labels) for e in row_events(lab, cat, num)]
    mixed = build_nb_model(count(events), "mixed")
    cat = build_nb_model(count(e for e in events if e[0][0] != "YG"), "categorical")
    gau = build_nb_model(count(e for e in events if e[0][0] != "YX"), "gaussian")
    jm, jc, jg = score_rows(mixed, rows)[0], score_rows(cat, rows)[0], score_rows(gau, rows)[0]
    np.testing.assert_allclose(jm, jc + jg - mixed.class_log_prior, atol=1e-12)


def test_unknown_tokens_and_values_are_counted():
    rows = count(e for labels, toks in CHINA for e in doc_events(labels, toks, "multinomial"))
    m = build_nb_model(rows, "multinomial")
    assert score_docs(m, [["Chinese", "Osaka", "Osaka"]])[1] == 2


def test_loop_scorer_equals_dot_product(monkeypatch):
    """The benchmarks' per-token baseline (scripts/baselines.py) scores as the library does."""
    monkeypatch.syspath_prepend(str(Path(__file__).parents[2] / "scripts"))
    from baselines import loop_model, score_loop

    train = random_docs(5)
    for kind in ("multinomial", "bernoulli"):
        m = build_nb_model(count(e for labels, toks in train for e in doc_events(labels, toks, kind)), kind)
        tables = loop_model(m)
        docs = [toks + ["unseen"] for _, toks in random_docs(6, n=20)]
        jll = score_docs(m, docs)[0]
        for r, toks in enumerate(docs):
            loop = score_loop(tables, toks, binary=kind == "bernoulli")
            assert [loop[c] for c in m.classes] == pytest.approx(jll[r].tolist(), abs=1e-9)


def test_top_k_and_threshold():
    lp = np.log(np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]))
    assert top_labels(lp, ("a", "b", "c"), 1) == [[("a", pytest.approx(0.5))], [("c", pytest.approx(0.8))]]
    assert [len(t) for t in top_labels(lp, ("a", "b", "c"), 1, threshold=0.25)] == [2, 1]
    assert [t[0][0] for t in top_labels(np.log(np.array([[0.5, 0.5]])), ("a", "b"), 1)] == ["a"]


@pytest.mark.parametrize("kind", ["multinomial", "bernoulli", "categorical", "gaussian", "mixed"])
def test_a_count_table_builds_the_model_its_rows_build(kind):
    """classify hands build_nb_model the count table as a pyarrow Table (its YX rows taken as
    columns); the model must be the one its rows give, whatever the kind, also where one pair
    is counted in two rows (the rows' loop sums them), and with tokens whose order differs
    between bytes, UTF-16 and case (the vocabulary is in Python's order)."""
    pa = pytest.importorskip("pyarrow")
    from nbspark.naive_bayes.events import COUNT_DDL

    if kind in ("multinomial", "bernoulli"):
        docs = CHINA + [(("j",), ["émile", "zebra", "日本", "Z", "ω", "\U0001f600", "\uff5e", "Chinese"])]
        rows = count(e for labels, toks in docs for e in doc_events(labels, toks, kind))
    else:
        records = [
            ({"c": "x", "d": "u"}, {"v": 1.0}),
            ({"c": "y", "d": "u"}, {"v": 2.0}),
            ({"c": "x", "d": "w"}, {"v": 1.5}),
            ({"c": "y", "d": "w"}, {"v": 4.0}),
        ]
        events = [e for (cat, num), lab in zip(records, "pqpq") for e in row_events(lab, cat, num)]
        rows = count(
            e for e in events if kind == "mixed" or e[0][0] != ("YX" if kind == "gaussian" else "YG")
        )
    split = next(
        (r for r in rows if r[0] == "YX" and r[4] > 1), None
    )  # one pair's count in two rows (a Gaussian model has none)
    if split is not None:
        rows = [r for r in rows if r is not split] + [
            split[:4] + (1,) + split[5:],
            split[:4] + (split[4] - 1,) + split[5:],
        ]
    names = [name.split()[0] for name in COUNT_DDL.split(", ")]
    types = {"n": pa.int64(), "sum": pa.float64(), "sumsq": pa.float64()}
    table = pa.table(
        {name: pa.array([r[i] for r in rows], types.get(name, pa.string())) for i, name in enumerate(names)}
    )
    a, b = build_nb_model(rows, kind), build_nb_model(table, kind)
    assert (a.classes, a.vocab) == (b.classes, b.vocab)
    for field in ("class_log_prior", "weights", "bias", "theta", "var"):
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None) == (y is None) and (x is None or np.array_equal(x, y)), field


# Complement naive Bayes, worked by hand: three documents, two classes, vocabulary x, y, z.
# Counts: a = {x: 3, y: 1, z: 1}, b = {y: 1, z: 2}. With alpha = 1 the complement counts are
# not-a = b + 1 = (1, 2, 3), sum 6, and not-b = a + 1 = (4, 2, 2), sum 8; the weights are -log of
# their shares: a = (log 6, log 3, log 2), b = (log 2, log 4, log 4), and no class prior.
COMPLEMENT_DOCS = [(("a",), ["x", "x", "y"]), (("a",), ["x", "z"]), (("b",), ["y", "z", "z"])]


def _complement(norm: bool):
    rows = count(e for labels, toks in COMPLEMENT_DOCS for e in doc_events(labels, toks, "multinomial"))
    return build_nb_model(rows, "complement", alpha=1.0, norm=norm)


def test_complement_worked_by_hand():
    m = _complement(norm=False)
    order = [m.vocab[t] for t in "xyz"]
    np.testing.assert_allclose(m.weights[:, order], np.log([[6, 3, 2], [2, 4, 4]]), rtol=0, atol=1e-12)
    assert m.class_log_prior.tolist() == [0.0, 0.0]
    post = np.exp(log_posteriors(score_docs(m, [["x", "y"], ["z", "z"]])[0]))
    # "x y": a scores log 6 + log 3 = log 18, b log 2 + log 4 = log 8: P(a) = 18/26. "z z": P(b) = 16/20.
    np.testing.assert_allclose(post, [[18 / 26, 8 / 26], [4 / 20, 16 / 20]], rtol=0, atol=1e-12)
    # norm: each class's weights divided by their sum, log(1/36) for a and log(1/32) for b
    n = _complement(norm=True)
    want = [
        [math.log(6) / math.log(36), math.log(3) / math.log(36), math.log(2) / math.log(36)],
        [0.2, 0.4, 0.4],
    ]
    np.testing.assert_allclose(n.weights[:, order], want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_complement_agrees_with_sklearn(norm, alpha):
    from sklearn.naive_bayes import ComplementNB

    train, test = random_docs(1), random_docs(2, n=100)
    rows = count(e for labels, toks in train for e in doc_events(labels, toks, "multinomial"))
    m = build_nb_model(rows, "complement", alpha=alpha, norm=norm)
    X = dense(train, m.vocab)
    ref = ComplementNB(alpha=alpha, norm=norm).fit(X, [labels[0] for labels, _ in train])
    assert list(ref.classes_) == list(m.classes)
    np.testing.assert_allclose(m.weights, ref.feature_log_prob_, rtol=0, atol=1e-12)
    ours = log_posteriors(score_docs(m, [toks for _, toks in test])[0])
    np.testing.assert_allclose(ours, ref.predict_log_proba(dense(test, m.vocab)), rtol=0, atol=1e-9)
    assert [t[0][0] for t in top_labels(ours, m.classes, 1)] == list(ref.predict(dense(test, m.vocab)))


def test_rows_of_one_key_in_several_parts_are_summed_as_one():
    """A model's rows read and what partial_fit counted since come as one list in which a key may be
    twice: every event sums, a Gaussian (n, Σx, Σx²) part by part. Each event its own row, the rows
    build the model of their sums; the Gaussian's means and variances are the hand-counted ones
    (x = 1, 2, 4 in class a: mean 7/3, variance 14/9; b: 5)."""
    data = (("a", 1.0), ("a", 2.0), ("b", 5.0), ("a", 4.0))
    events = [e for label, x in data for e in row_events(label, {}, {"x": x})]
    whole: dict = {}
    for key, value in events:
        whole[key] = add_values(whole[key], value) if key in whole else value
    summed = build_nb_model([event_row(k, v) for k, v in whole.items()], "gaussian")
    split = build_nb_model([event_row(k, v) for k, v in events], "gaussian")  # keys repeat
    assert split.theta.ravel().tolist() == pytest.approx([7 / 3, 5.0])
    assert split.var.ravel().tolist() == pytest.approx(summed.var.ravel().tolist())
    assert split.var[0, 0] == pytest.approx(14 / 9, rel=1e-6)  # and var_smoothing's 1e-9 of the largest
    assert split.class_log_prior.tolist() == pytest.approx([math.log(3 / 4), math.log(1 / 4)])
