"""``nbspark.Backoff``, scikit-learn's shape of a backoff estimator: made from its settings, fitted
on windows in memory, cloned by scikit-learn's model selection, and saved as a model directory the
checker and ``nbspark.load`` read. Held against hand counts, a plain-Python backoff written here,
and the train job's model of the same n-grams."""

import random

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

import nbspark
from nbspark.errors import ConfigError

WORDS = ("affect", "effect")


def test_fit_gives_the_hand_counted_backoff():
    """Three windows: the full context decides where it was seen; BD (b _ d: affect 2, effect 1)
    where only it was; the prior (2 : 1) where nothing was."""
    est = nbspark.Backoff().fit(["a b _ d e", "a b _ d e", "x b _ d y"], ["affect", "affect", "effect"])
    probe = ["x b _ d y", "q b _ d q", "q q _ q q"]
    assert est.predict(probe).tolist() == ["effect", "affect", "affect"]
    np.testing.assert_allclose(est.predict_proba(probe), [[0, 1], [2 / 3, 1 / 3], [2 / 3, 1 / 3]])
    assert [e["level"] for e in est.explain(probe)] == ["ABDE", "BD", ""]
    assert list(est.classes_) == list(WORDS) and est.classes_.dtype == object  # an array, as scikit-learn's
    assert est.score(probe, ["effect", "effect", "affect"]) == pytest.approx(2 / 3)
    # without y the centres are the words; sample_weight counts a window that many times
    again = nbspark.Backoff().fit(["a b affect d e", "x b effect d y"], sample_weight=[2, 1])
    np.testing.assert_array_equal(again.predict_proba(probe), est.predict_proba(probe))
    more = nbspark.Backoff().partial_fit(["q b _ d q"], ["effect"], sample_weight=[5])
    assert more.partial_fit(["q b _ d q"], ["affect"]).predict_proba(["q b _ d q"]).tolist() == [
        [1 / 6, 5 / 6]
    ]


def _plain_backoff(train, chain, letters="ABCDE"):
    """Backoff counted and decided in plain Python: per level of the chain, the words seen with the
    window's context there; the first level that saw it decides (most counts, then the word)."""
    tables = {s: {} for s in chain}
    for window, word in train:
        for s in chain:
            key = tuple(window[letters.index(c)] for c in s)
            seen = tables[s].setdefault(key, {})
            seen[word] = seen.get(word, 0) + 1

    def decide(window):
        for s in chain:
            seen = tables[s].get(tuple(window[letters.index(c)] for c in s))
            if seen:
                return min(seen, key=lambda w: (-seen[w], w))
        return None

    return decide


def _windows(n, seed):
    """Windows over a small vocabulary whose word leans on the word before it."""
    rng = random.Random(seed)
    vocab = [f"v{i}" for i in range(6)]
    out = []
    for _ in range(n):
        a, b, d, e = (rng.choice(vocab) for _ in range(4))
        lean = 0.8 if int(b[1:]) % 2 else 0.25
        out.append(([a, b, "_", d, e], "affect" if rng.random() < lean else "effect"))
    return out


def test_model_selection_scores_as_a_plain_python_backoff_on_the_same_folds():
    """cross_val_score and GridSearchCV over the chain: each fold's accuracy equals the plain-Python
    backoff's trained on the same fold, and the best chain is the same."""
    items = _windows(240, 3)
    X, y = [" ".join(w) for w, _ in items], [word for _, word in items]
    folds = KFold(4, shuffle=True, random_state=0)
    chains = [("ABDE", "ABD", "BD", "B", ""), ("BD", "B", ""), ("B", "")]

    def plain(chain):
        scores = []
        for train, test in folds.split(X):
            decide = _plain_backoff([items[i] for i in train], chain)
            scores.append(sum(decide(items[i][0]) == y[i] for i in test) / len(test))
        return scores

    np.testing.assert_allclose(cross_val_score(nbspark.Backoff(), X, y, cv=folds), plain(chains[0]))
    copy = clone(nbspark.Backoff(backoff=chains[1]))
    assert copy.get_params()["backoff"] == chains[1] and not hasattr(copy, "model_")
    grid = GridSearchCV(nbspark.Backoff(), {"backoff": chains}, cv=folds).fit(X, y)
    means = [np.mean(plain(c)) for c in chains]
    np.testing.assert_allclose(grid.cv_results_["mean_test_score"], means)
    assert grid.best_params_["backoff"] == chains[int(np.argmax(means))]


def table_rows(model) -> list[tuple]:
    from nbspark.backoff.events import count_ddl
    from nbspark.storage.counts import read_count_table
    from nbspark.storage.locations import location
    from nbspark.storage.manifests import BACKOFF_KIND, load_manifest

    model = location(model)
    rows = read_count_table(model, count_ddl("ABCDE"), load_manifest(model, BACKOFF_KIND)).to_pylist()
    return sorted((tuple(r.values()) for r in rows), key=lambda r: tuple(map(str, r)))


@pytest.mark.spark
def test_a_saved_estimator_is_the_model_the_train_job_counts(spark, fixtures, tmp_path):
    """The n-grams of a file fitted as windows with their counts as weights, saved: the table the
    train job counts from that file row for row, the same fields, and the checker flags alike."""
    from nbspark.backoff.jobs import train
    from nbspark.inputs.resolve import resolve_input
    from nbspark.settings.config import load_config
    from tests.spine.test_committing import _manifest

    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "trained")
    windows, weights = [], []
    for line in (fixtures / "ngrams.txt").read_text().splitlines():  # what training keeps: a count,
        gram, _, count = line.partition("\t")  # 5 tokens, a confusion-set word at the centre
        tokens = gram.split(" ")
        if count.isdigit() and len(tokens) == 5 and tokens[2].lower() in WORDS:
            windows.append(tokens)
            weights.append(int(count))
    manifest = nbspark.Backoff().fit(windows, sample_weight=weights).save(tmp_path / "fitted")
    assert table_rows(tmp_path / "fitted") == table_rows(tmp_path / "trained")
    trained = _manifest(tmp_path / "trained")
    for key in ("letters", "subsets", "distinct_events", "label_counts", "count_rows"):
        assert manifest[key] == trained[key], key
    assert manifest["stats"] == {"examples": len(windows), "weight": sum(weights)}
    text = "The vote would not effect the outcome. The cumulative effect of the cuts was small."
    assert nbspark.load(tmp_path / "fitted").flags(text) == nbspark.load(tmp_path / "trained").flags(text)


@pytest.mark.parametrize(
    "make, call, error, says",
    [
        (lambda: nbspark.Backoff(), lambda e: e.fit(["a b _ d e"], ["cause"]), ValueError, "y[0] is 'cause'"),
        (lambda: nbspark.Backoff(), lambda e: e.fit(["a b _ d e"], []), ValueError, "1 windows, 0 words"),
        (lambda: nbspark.Backoff(), lambda e: e.fit(["a b _ d e"]), ValueError, "centre is '_'"),
        (lambda: nbspark.Backoff(), lambda e: e.fit(["a b c d e"], ["affect"]), ValueError, "centre is '_'"),
        (lambda: nbspark.Backoff(), lambda e: e.fit(["a _ d"], ["affect"]), ValueError, "has 5 tokens"),
        (lambda: nbspark.Backoff(), lambda e: e.fit("a b _ d e", ["affect"]), TypeError, "wrap it in a list"),
        (lambda: nbspark.Backoff(), lambda e: e.predict(["a b _ d e"]), AttributeError, "not fitted yet"),
        (lambda: nbspark.Backoff(), lambda e: e.fit([], []), ValueError, "at least one window"),
        (lambda: nbspark.Backoff(), lambda e: e.partial_fit([]), ValueError, "at least one window"),
        (lambda: nbspark.Backoff(width=4), lambda e: e.fit(["a b _ d"], ["affect"]), ConfigError, "width"),
        (
            lambda: nbspark.Backoff(backoff=("XY",)),
            lambda e: e.fit(["a b _ d e"], ["affect"]),
            ConfigError,
            "",
        ),
    ],
)
def test_what_it_cannot_fit_is_refused_in_one_line(make, call, error, says):
    with pytest.raises(error) as caught:
        call(make())
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_every_word_checked_is_placed_where_it_was_written(monkeypatch):
    """``check`` gives every confusion-set word of a text, each at its offset: random texts of words,
    white space of every kind, punctuation, emoji, CJK and characters whose lower case is longer
    (``İ``, ``ΐ``: the tokens are found in the lower-cased text), whole or cut into pieces of a few
    lines. Held against the tokenizer's count of the words and the text's own characters at each
    offset."""
    import functools

    from nbspark.backoff import predictor
    from nbspark.inputs.tokens import TOKEN_RE, line_pieces, tokenize

    model = nbspark.Backoff().fit(
        ["would not _ the outcome", "the cumulative _ of the"], ["affect", "effect"]
    )
    words = ["İ", "ΐ", "would", "not", "effect", "Affect", "EFFECT", "the", "🙂", "中", "ß", "don't", "U.S."]
    parts = [*words, "a-b", "1,000", ".", "\r\n", "\n", "\r", "\t", "\u00a0", "\u2028", "  "]
    rng = random.Random(3)
    for n in range(400):
        text = rng.choice(["", " "]).join(rng.choice(parts) for _ in range(rng.randint(1, 60)))
        size = 8 if n % 2 else 1 << 20
        monkeypatch.setattr(predictor, "line_pieces", functools.partial(line_pieces, size=size))
        found = [(f["offset"], f["written"]) for f in model.check(text)]
        assert len(found) == sum(t in WORDS for t in tokenize(text)), text
        assert all(w.lower() in WORDS for _, w in found), text
        assert all(a < b for (a, _), (b, _) in zip(found, found[1:])), text  # each word once, in order
        if len(text.lower()) == len(text):  # a plain scan of the text as given finds the same places
            assert [at for at, _ in found] == [
                m.start() for m in TOKEN_RE.finditer(text.lower()) if m.group() in WORDS
            ], text
