"""``nbspark.describing``: what ``nbspark show`` prints and ``/v1/models`` serves of a model, held
against counts made by hand and against scikit-learn's ``MultinomialNB``. No JVM."""

import math

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB

import nbspark
from nbspark.describing import describe, indicative_tokens, summary

TEXTS = ["win cash", "win prize", "lunch noon", "lunch win"]
LABELS = ["spam", "spam", "ham", "ham"]


def test_the_tokens_that_speak_for_a_class_are_counted_by_hand_and_as_scikit_learn_weighs_them(tmp_path):
    """alpha 1, five tokens, four counted per class: P(w | y) = (C(y, w) + 1) / 9. For spam, cash and
    prize log 2 (2/9 against 1/9; a tie, the token first), win log 1.5 (3/9 against 2/9); for ham,
    lunch log 3, noon log 2, win log(2/3). The same ratios from MultinomialNB's feature_log_prob_."""
    model = nbspark.NaiveBayes(tokenizer="words").fit(TEXTS, LABELS)
    found = indicative_tokens(model.model_, top=3)
    assert [(t["token"], t["count"]) for t in found["spam"]] == [("cash", 1), ("prize", 1), ("win", 2)]
    assert [t["token"] for t in found["ham"]] == ["lunch", "noon", "win"]
    np.testing.assert_allclose(
        [t["log_ratio"] for t in found["spam"] + found["ham"]],
        [math.log(2), math.log(2), math.log(1.5), math.log(3), math.log(2), math.log(2 / 3)],
    )
    vectorizer = CountVectorizer(token_pattern=r"\w+").fit(TEXTS)
    theirs = MultinomialNB().fit(vectorizer.transform(TEXTS), LABELS)
    ham, spam = (list(theirs.classes_).index(c) for c in ("ham", "spam"))
    for token in found["spam"] + found["ham"]:
        at, mine = vectorizer.vocabulary_[token["token"]], token in found["spam"]
        one, other = (spam, ham) if mine else (ham, spam)
        log_p = theirs.feature_log_prob_[:, at]
        assert token["log_ratio"] == pytest.approx(log_p[one] - log_p[other])

    model.save(tmp_path / "m")
    loaded = nbspark.load(tmp_path / "m")
    loaded.partial_fit(["cash now"], ["spam"])
    loaded.save()
    described = describe(nbspark.load(tmp_path / "m"), top=2)
    assert described["family"] == "naive_bayes" and described["kind"] == "multinomial"
    assert described["version"] == 2 and len(described["updates"]) == 2
    assert described["examples"] == {"ham": 2, "spam": 3} and described["features"] == 6
    # cash 3/12 against 1/10; now and prize 2/12 against 1/10, a tie, the token first
    assert [t["token"] for t in described["indicative_tokens"]["spam"]] == ["cash", "now"]
    assert described["settings"]["alpha"] == 1.0


def test_each_family_is_described_by_its_own_counts():
    """A backoff model: its confusion sets, chain and contexts counted; a density model: its columns
    and values per column; a table model: its columns and examples per class; ``summary`` the first
    part of each, as ``/v1/models`` lists it."""
    backoff = nbspark.Backoff().fit(["would not _ the outcome", "the big _ of it"], ["affect", "effect"])
    described = describe(backoff)
    assert described["confusion_sets"] == [["affect", "effect"]]
    assert described["chain"] == ["ABDE", "ABD", "BD", "B", ""]
    # each context of the two windows holds one label: two count rows a level, the prior two labels
    assert described["distinct_events"] == {"ABDE": 2, "ABD": 2, "BD": 2, "B": 2, "": 2}
    assert summary(backoff) == {
        "kind": "backoff",
        "classes": ["affect", "effect"],
        "version": described["version"],
        "trained": described["trained"],
    }
    rows = [{"a": "x", "b": "1"}, {"a": "y", "b": "1"}, {"a": "x", "b": "2"}]
    density = describe(nbspark.Density().fit(rows).model_)
    assert density["family"] == density["kind"] == "density" and density["columns"] == ["a", "b"]
    assert density["values"] == {"a": 2, "b": 2} and density["distinct_rows"] == 3 and density["total"] == 3
    table = describe(nbspark.NaiveBayes(model="categorical").fit(rows, ["p", "q", "p"]).model_)
    assert table["columns"] == ["a", "b"] and table["examples"] == {"p": 2, "q": 1}
    assert table["features"] == 2 and "indicative_tokens" not in table


def test_a_model_of_several_versions_is_described_by_its_counts_not_its_manifests_bounds(tmp_path):
    """A delta's manifest sums distinct values over the versions (an upper bound: x counted in
    both); the description counts the model read: a 2 values, b 3, 4 distinct rows of weight 5."""
    nbspark.Density().fit([{"a": "x", "b": "1"}, {"a": "y", "b": "2"}]).save(tmp_path / "d")
    model = nbspark.load(tmp_path / "d")
    model.partial_fit([{"a": "x", "b": "1"}, {"a": "x", "b": "3"}, {"a": "y", "b": "3"}])
    model.save()
    again = nbspark.load(tmp_path / "d")
    assert again.manifest["values"] == {"a": 4, "b": 4}  # the bounds
    described = describe(again)
    assert described["values"] == {"a": 2, "b": 3} and described["distinct_rows"] == 4
    assert described["total"] == 5 and described["version"] == 2
