"""``partial_fit`` and ``save`` without Spark (issue 37): counting a trickle of examples into a model
equals training on all of them at once, and ``save`` commits them as the model's next version."""

import csv
import json
import math
import pickle
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB

import nbspark
from nbspark.errors import OutputError
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.storage.counts import read_count_table
from nbspark.storage.locations import location
from nbspark.storage.manifests import NB_KIND, load_manifest
from tests.conftest import FIXTURES
from tests.naive_bayes.test_jobs_one_label import WEATHER

TSV = {"task": "naive_bayes", "nb.tokenizer": "words", "train.format": "tsv"}
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def docs(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(rng.choice("xyz"), " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))) for _ in range(n)]


def write_tsv(path, items) -> None:
    path.write_text("".join(f"d{i}\t{y}\t{text}\n" for i, (y, text) in enumerate(items)))


def table(model) -> list[tuple]:
    model = location(model)
    rows = read_count_table(model, COUNT_DDL, load_manifest(model, NB_KIND)).to_pylist()
    return sorted((tuple(r.values()) for r in rows), key=lambda r: tuple(map(str, r)))


def test_partial_fit_then_save_equals_training_on_everything(tmp_path):
    items = docs(40, 1)
    write_tsv(tmp_path / "all.tsv", items)
    write_tsv(tmp_path / "first.tsv", items[:10])
    everything = nbspark.fit(
        None, tmp_path / "all", settings={**TSV, "train.path": str(tmp_path / "all.tsv")}
    )
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "first.tsv")})
    for start in range(10, 40, 7):  # a trickle, in batches of 7
        batch = items[start : start + 7]
        model.partial_fit([t for _, t in batch], [y for y, _ in batch])
    probe = ["alpha beta", "theta theta zeta", "unseen words"]
    assert np.allclose(model.predict_proba(probe), everything.predict_proba(probe), rtol=1e-12)
    assert model.save() == 2
    assert table(tmp_path / "m") == table(tmp_path / "all")
    again = nbspark.load(tmp_path / "m")
    assert (
        again.manifest["version"] == 2
        and again.manifest["label_counts"] == everything.manifest["label_counts"]
    )
    assert np.allclose(again.predict_proba(probe), everything.predict_proba(probe), rtol=1e-12)
    delta = json.loads((tmp_path / "m" / "versions" / "v00000002" / "manifest.json").read_text())
    assert delta["stats"] == {"documents": 30} and delta["engine"] == "partial_fit"
    assert model.save() == 2  # nothing new: no version


def test_fit_takes_a_path_object_and_refuses_settings_that_are_not_a_mapping(tmp_path):
    write_tsv(tmp_path / "first.tsv", docs(5, 2))
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": tmp_path / "first.tsv"})
    assert model.manifest["inputs"]["files"] == [str(tmp_path / "first.tsv")]  # it was a JSON error
    with pytest.raises(TypeError, match="settings is a dict of setting -> value, not a list"):
        nbspark.fit(None, tmp_path / "n", settings=[("train.path", "x")])


def test_partial_fit_agrees_with_scikit_learns(tmp_path):
    """sklearn's MultinomialNB.partial_fit over the same counts (one vectorizer, the words tokenizer's
    rule: runs of \\w, lower-cased) gives the same posteriors."""
    items = docs(30, 4)
    write_tsv(tmp_path / "first.tsv", items[:5])
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "first.tsv")})
    vectorizer = CountVectorizer(token_pattern=r"\w+").fit(WORDS)
    theirs = MultinomialNB(alpha=1.0)
    theirs.partial_fit(
        vectorizer.transform([t for _, t in items[:5]]), [y for y, _ in items[:5]], classes=list("xyz")
    )
    for start in range(5, 30, 5):  # scikit-learn's loop, classes given at every call
        batch = items[start : start + 5]
        model.partial_fit([t for _, t in batch], [y for y, _ in batch], classes=list("xyz"))
        theirs.partial_fit(vectorizer.transform([t for _, t in batch]), [y for y, _ in batch])
    probe = ["alpha beta", "theta theta zeta gamma"]
    assert list(model.classes_) == list(theirs.classes_)
    assert np.allclose(
        model.predict_proba(probe), theirs.predict_proba(vectorizer.transform(probe)), rtol=1e-9
    )
    # kept as scikit-learn users keep models: pickled (joblib) and back, it scores the same
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(again.predict_proba(probe), model.predict_proba(probe))


def test_learning_one_by_one_agrees_with_river(tmp_path):
    """River's MultinomialNB (the online learner Python users pick), learn_one per document, and
    partial_fit per document give the same posteriors. A word never seen is dropped here (nb.unseen
    = drop, as scikit-learn and MLlib) and smoothed by River, so River is given the seen ones."""
    from river.naive_bayes import MultinomialNB as RiverNB

    items = docs(25, 9)
    write_tsv(tmp_path / "first.tsv", items[:1])
    settings = {**TSV, "train.path": str(tmp_path / "first.tsv")}
    model = nbspark.fit(None, tmp_path / "m", settings=settings)
    river = RiverNB(alpha=1.0)
    river.learn_one(Counter(items[0][1].split()), items[0][0])
    for label, text in items[1:]:
        model.partial_fit([text], [label])
        river.learn_one(Counter(text.split()), label)
    for probe in ["alpha beta", "theta zeta zeta", "alpha unseen words"]:
        theirs = river.predict_proba_one(Counter(w for w in probe.split() if w in WORDS))
        ours = dict(zip(model.classes_, model.predict_proba([probe])[0]))
        assert ours == pytest.approx(theirs, rel=1e-9)


def test_a_table_model_learns_rows_as_training_reads_them(tmp_path):
    settings = {**WEATHER, "train.format": "csv"}
    lines = (FIXTURES / "weather.csv").read_text().splitlines(keepends=True)[:-1]  # the last is malformed
    (tmp_path / "first.csv").write_text("".join(lines[:8]))
    (tmp_path / "all.csv").write_text("".join(lines))
    everything = nbspark.fit(
        None, tmp_path / "all", settings={**settings, "train.path": str(tmp_path / "all.csv")}
    )
    model = nbspark.fit(
        None, tmp_path / "m", settings={**settings, "train.path": str(tmp_path / "first.csv")}
    )
    rest = list(csv.DictReader(lines[:1] + lines[8:]))
    model.partial_fit([{k: v for k, v in r.items() if k != "play"} for r in rest], [r["play"] for r in rest])
    with pytest.raises(ValueError, match="row 0, column 'temperature': 'warm' is not a number"):
        model.partial_fit(
            [{"outlook": "cloudy", "temperature": "warm", "humidity": 80, "windy": "FALSE"}], ["yes"]
        )
    model.save()
    assert table(tmp_path / "m") == table(tmp_path / "all")
    # the numeric columns, then the categorical ones, each in the header's order (outlook,temperature,…)
    assert model.feature_names_in_.tolist() == ["temperature", "humidity", "outlook", "windy"]
    day = [{"outlook": "sunny", "temperature": 70}]
    assert model.predict(day).tolist() == everything.predict(day).tolist()
    # a mixed model's named columns have no order an array could follow (numeric and categorical
    # are kept apart): an array is refused, never read in a guessed order
    with pytest.raises(TypeError, match=r"columns \(temperature, humidity, outlook, windy\) are named"):
        model.predict([["sunny", 70, None, None]])
    with pytest.raises(TypeError, match="extra_columns is a list of column names, not 'id'"):
        model.predict([{**day[0], "id": 7}], extra_columns="id")  # not the columns 'i' and 'd'
    assert model.predict([{**day[0], "id": 7}], extra_columns=["id"]).tolist() == model.predict(day).tolist()


def test_a_pandas_frames_missing_cells_are_empty_ones(tmp_path):
    """``pd.read_csv`` reads an empty cell as NaN (text columns too): a DataFrame's rows read it as
    None, an empty cell, as the rows of mappings do, for a naive Bayes table model (the cell left out
    of the score) and a density model (whose cells are text: NaN was refused)."""
    import io

    import pandas as pd

    settings = {**WEATHER, "train.format": "csv", "train.path": str(FIXTURES / "weather.csv")}
    model = nbspark.fit(None, tmp_path / "nb", settings=settings)
    text = "outlook,temperature,humidity,windy\nsunny,,90,\n,70,,TRUE\n"
    frame = pd.read_csv(io.StringIO(text), dtype={"outlook": str, "windy": str})
    assert frame.isna().sum().sum() == 4
    rows = [
        {"outlook": "sunny", "temperature": None, "humidity": 90, "windy": None},
        {"outlook": None, "temperature": 70, "humidity": None, "windy": "TRUE"},
    ]
    assert model.predict_proba(frame).tolist() == model.predict_proba(rows).tolist()
    (tmp_path / "t.csv").write_text("A,B\nx,\ny,p\n")
    density = nbspark.fit(
        None,
        tmp_path / "d",
        settings={"task": "density", "train.format": "csv", "train.path": str(tmp_path / "t.csv")},
    )
    cells = pd.read_csv(tmp_path / "t.csv", dtype=str)
    assert density.score_samples(cells).tolist() == [math.log(0.5)] * 2
    assert density.probability({"A": "x", "B": None}) == 0.5


def test_partial_fit_refuses_what_it_cannot_count_and_counts_nothing_then(tmp_path):
    write_tsv(tmp_path / "first.tsv", docs(5, 2))
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "first.tsv")})
    before = model.predict_proba(["alpha"])
    with pytest.raises(ValueError, match="one label per example: 2 examples, 1 labels"):
        model.partial_fit(["alpha", "beta"], ["x"])
    with pytest.raises(TypeError, match="wrap it in a list"):
        model.partial_fit("alpha beta", ["x"])
    # a text model's DataFrame: its iteration is its column names, which were counted (and scored,
    # predict(DataFrame({"text": ["win cash now"]})) said 'ham', the class of the word "text")
    import pandas as pd

    frame = pd.DataFrame({"text": ["alpha beta"]})
    with pytest.raises(TypeError, match=r"^partial_fit takes a list of texts, got a DataFrame .*df\[NAME\]$"):
        model.partial_fit(frame, ["x"])
    for method in (model.predict, model.predict_proba, model.explain):
        with pytest.raises(
            TypeError, match=r"^expected a list of texts, got a DataFrame \(iterating it gives"
        ):
            method(frame)
    assert np.array_equal(model.predict_proba(frame["text"]), model.predict_proba(["alpha beta"]))
    with pytest.raises(ValueError, match=r"label 1: '' is not a class name"):
        model.partial_fit(["alpha", "beta"], ["x", ""])
    with pytest.raises(TypeError, match="item 0 is a int"):
        model.partial_fit([3], ["x"])
    with pytest.raises(ValueError, match=r"label 0: None is not a class name"):
        model.partial_fit(["alpha"], [None])
    assert np.array_equal(model.predict_proba(["alpha"]), before) and model.save() == 1


def test_save_is_refused_while_a_stream_writes_the_model(tmp_path):
    write_tsv(tmp_path / "first.tsv", docs(5, 2))
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "first.tsv")})
    model.partial_fit(["alpha"], ["x"])
    lock = tmp_path / "m.stream" / "lock.json"
    lock.parent.mkdir()
    import os
    import subprocess

    alive = subprocess.Popen(["sleep", "30"])
    try:
        lock.write_text(json.dumps({"checkpoint": "file:/ck", "host": os.uname().nodename, "pid": alive.pid}))
        with pytest.raises(
            OutputError, match=r"a stream \(checkpoint file:/ck, pid \d+ .*\) writes this model"
        ):
            model.save()
    finally:
        alive.kill()
        alive.wait()
    with pytest.raises(OutputError, match="resume that stream with --checkpoint, or stop it and remove"):
        model.save()  # a dead stream's lock stays: it resumes on its checkpoint
    lock.unlink()
    assert model.save() == 2 and not lock.exists()


def test_scikit_learns_names_agree_with_scikit_learn(tmp_path):
    """predict_log_proba, score, class_count_ and get_params, against MultinomialNB on the same counts."""
    items = docs(30, 6)
    write_tsv(tmp_path / "all.tsv", items)
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "all.tsv")})
    vectorizer = CountVectorizer(token_pattern=r"\w+").fit(WORDS)
    theirs = MultinomialNB(alpha=1.0).fit(vectorizer.transform([t for _, t in items]), [y for y, _ in items])
    probe = [t for _, t in docs(8, 7)]
    gold = [y for y, _ in docs(8, 7)]
    assert np.allclose(model.predict_log_proba(probe), theirs.predict_log_proba(vectorizer.transform(probe)))
    assert model.score(probe, gold) == theirs.score(vectorizer.transform(probe), gold)
    assert model.class_count_.tolist() == theirs.class_count_.tolist()
    assert model.get_params()["alpha"] == theirs.get_params()["alpha"] == 1.0
    predicted = model.predict(probe)  # an array, as scikit-learn's
    assert (
        isinstance(predicted, np.ndarray)
        and predicted.tolist() == theirs.predict(vectorizer.transform(probe)).tolist()
    )
    (first,) = model.explain(probe[:1])
    assert first["label"] == predicted[0] and list(first["probabilities"]) == list(model.classes_)
    assert first["probability"] == pytest.approx(
        np.exp(theirs.predict_log_proba(vectorizer.transform(probe[:1]))).max()
    )
    vocabulary = model.vocabulary_  # feature_log_prob_'s columns, as CountVectorizer's vocabulary_ says
    order = [vocabulary[w] for w in sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.get)]
    assert np.allclose(model.feature_log_prob_[:, order], theirs.feature_log_prob_)
    with pytest.raises(AttributeError, match="scores texts; it has no feature_names_in_"):
        getattr(model, "feature_names_in_")  # noqa: B009 (the attribute is the question)
    model.partial_fit(["alpha"], ["x"])  # what partial_fit counted is in the counts at once
    assert model.class_count_.tolist() == (theirs.class_count_ + [1, 0, 0]).tolist()
    model.save()  # the counts read once per state (attributes._counts): after a save, the same counts
    assert model.class_count_.tolist() == (theirs.class_count_ + [1, 0, 0]).tolist()
    model.partial_fit(["alpha"], ["y"])
    assert model.class_count_.tolist() == (theirs.class_count_ + [1, 1, 0]).tolist()


def test_sample_weight_counts_copies_as_scikit_learn_weighs_them(tmp_path):
    """A whole sample_weight k counts k copies: the table equals partial_fit of the copies, and the
    posteriors equal MultinomialNB.partial_fit's with the same (float) weights."""
    items = docs(24, 11)
    write_tsv(tmp_path / "first.tsv", items[:6])
    settings = {**TSV, "train.path": str(tmp_path / "first.tsv")}
    weighted = nbspark.fit(None, tmp_path / "w", settings=settings)
    copied = nbspark.fit(None, tmp_path / "c", settings=settings)
    rest, weights = items[6:], [i % 4 for i in range(len(items) - 6)]  # 0, 1, 2, 3, 0, …
    weighted.partial_fit([t for _, t in rest], [y for y, _ in rest], sample_weight=np.array(weights, float))
    copies = [item for item, k in zip(rest, weights) for _ in range(k)]
    copied.partial_fit([t for _, t in copies], [y for y, _ in copies])
    weighted.save(), copied.save()
    assert table(tmp_path / "w") == table(tmp_path / "c")
    assert load_manifest(location(tmp_path / "w"), NB_KIND)["stats"]["documents"] == 6 + sum(weights)
    vectorizer = CountVectorizer(token_pattern=r"\w+").fit(WORDS)
    theirs = MultinomialNB(alpha=1.0)
    theirs.partial_fit(
        vectorizer.transform([t for _, t in items[:6]]), [y for y, _ in items[:6]], classes=list("xyz")
    )
    theirs.partial_fit(
        vectorizer.transform([t for _, t in rest]),
        [y for y, _ in rest],
        sample_weight=np.array(weights, float),
    )
    probe = ["alpha beta", "theta theta zeta gamma", "eta"]
    assert np.allclose(
        weighted.predict_proba(probe), theirs.predict_proba(vectorizer.transform(probe)), rtol=1e-9
    )
    assert weighted.class_count_.tolist() == theirs.class_count_.tolist()


def test_a_table_rows_weight_scales_its_gaussian_sums_as_copies_would(tmp_path):
    settings = {**WEATHER, "train.format": "csv"}
    lines = (FIXTURES / "weather.csv").read_text().splitlines(keepends=True)[:-1]  # the last is malformed
    (tmp_path / "first.csv").write_text("".join(lines[:8]))
    weighted = nbspark.fit(
        None, tmp_path / "w", settings={**settings, "train.path": str(tmp_path / "first.csv")}
    )
    copied = nbspark.fit(
        None, tmp_path / "c", settings={**settings, "train.path": str(tmp_path / "first.csv")}
    )
    rest = list(csv.DictReader(lines[:1] + lines[8:]))
    rows, labels = [{k: v for k, v in r.items() if k != "play"} for r in rest], [r["play"] for r in rest]
    with pytest.raises(ValueError, match=r"row 0, column 'outlook' holds a lone surrogate"):
        weighted.partial_fit([{**rows[0], "outlook": "sunny\ud83d"}], labels[:1])  # nothing counted
    weighted.partial_fit(rows, labels, sample_weight=[3] + [1] * (len(rows) - 1))
    copied.partial_fit(rows[:1] * 3 + rows[1:], labels[:1] * 3 + labels[1:])
    weighted.save(), copied.save()
    assert table(tmp_path / "w") == table(tmp_path / "c")


def test_classes_and_sample_weight_are_checked_and_a_refused_batch_counts_nothing(tmp_path):
    write_tsv(tmp_path / "first.tsv", docs(9, 2))
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "first.tsv")})
    assert list(model.classes_) == ["x", "y", "z"]
    before = model.predict_proba(["alpha"])
    for weights, says in (
        ([0.5], r"weight 0: 0.5 is not a whole count >= 0"),
        ([-1], r"weight 0: -1 is not a whole count >= 0"),
        ([float("nan")], r"weight 0: nan is not a whole count"),
        ([True], r"weight 0: True is not a whole count"),
        (["2"], r"weight 0: '2' is not a whole count"),
        ([1, 1], r"partial_fit takes one weight per example: 1 examples, 2 weights"),
    ):
        with pytest.raises(ValueError, match=says):
            model.partial_fit(["alpha"], ["x"], sample_weight=weights)
    with pytest.raises(ValueError, match=r"label 1: 'v' is not one of classes"):
        model.partial_fit(["alpha", "beta"], ["x", "v"], classes=["w", "x", "y", "z"])
    with pytest.raises(ValueError, match=r"classes leaves out \['z'\], which the model holds"):
        model.partial_fit(["alpha"], ["x"], classes=["x", "y"])
    # half an emoji (a lone surrogate) is no text a count table can hold: refused, nothing counted
    for texts, labels, says in (
        (["alpha", "beta \ud83d"], ["x", "y"], r"text 1 holds a lone surrogate \('\\ud83d' at 5\)"),
        (["alpha"], ["x\udc00"], r"label 0 holds a lone surrogate"),
    ):
        with pytest.raises(ValueError, match=says):
            model.partial_fit(texts, labels)
    assert np.array_equal(model.predict_proba(["alpha"]), before) and model.save() == 1
    # a class named in classes is the model's from then on, as scikit-learn's: counted 0, of
    # probability 0 (it entered classes_ only with its first example, so predict_proba had a
    # column fewer than scikit-learn's); its examples count as any class's
    model.partial_fit(["alpha"], ["x"], classes=["w", "x", "y", "z"])
    assert list(model.classes_) == ["w", "x", "y", "z"] and model.class_count_[0] == 0
    assert model.predict_proba(["alpha"])[0][0] == 0.0
    model.partial_fit(["beta"], ["w"], classes=["w", "x", "y", "z"], sample_weight=[np.int64(2)])
    assert list(model.classes_) == ["w", "x", "y", "z"] and model.class_count_[0] == 2


def test_a_class_named_before_its_first_example_is_scikit_learns(tmp_path):
    """scikit-learn's out-of-core loop names every class at the first call, whose batch may lack
    one: each model then has its column of ``predict_proba`` (0, but a complement model's, which
    has no prior), its ``class_count_`` of 0 (a Gaussian's mean 0 and variance ``epsilon_``), equal
    to scikit-learn's; saved and loaded, the same; and a later example of the class counts."""
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB

    texts, labels, probe = ["a b a", "c d", "a c e"], ["x", "y", "x"], ["a", "c d d", "e b"]
    matrix = CountVectorizer(token_pattern=r"\w+").fit(texts + probe)
    for kind, theirs in (
        ("multinomial", MultinomialNB),
        ("bernoulli", BernoulliNB),
        ("complement", ComplementNB),
    ):
        ours = nbspark.NaiveBayes(model=kind, tokenizer="words").partial_fit(
            texts, labels, classes=["x", "y", "z"]
        )
        sk = theirs().partial_fit(matrix.transform(texts), labels, classes=["x", "y", "z"])
        assert list(ours.classes_) == list(sk.classes_) and ours.class_count_.tolist() == [2, 1, 0]
        np.testing.assert_allclose(
            ours.predict_proba(probe), sk.predict_proba(matrix.transform(probe)), atol=1e-12
        )
        ours.save(tmp_path / kind)
        loaded = nbspark.load(tmp_path / kind)
        np.testing.assert_allclose(loaded.predict_proba(probe), ours.predict_proba(probe), atol=1e-15)
        loaded.partial_fit(["e e"], ["z"])
        assert loaded.class_count_.tolist() == [2, 1, 1] and loaded.predict(["e e"]).tolist() == ["z"]
    X = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 2.5]])
    ours = nbspark.NaiveBayes(model="gaussian").partial_fit(X, [0, 1, 0], classes=[0, 1, 2])
    sk = GaussianNB().partial_fit(X, [0, 1, 0], classes=[0, 1, 2])
    assert ours.classes_.tolist() == [0, 1, 2]
    np.testing.assert_allclose(ours.theta_, sk.theta_, rtol=1e-12)
    np.testing.assert_allclose(ours.var_, sk.var_, rtol=1e-9)
    with np.errstate(divide="ignore"):  # scikit-learn's log of the prior 0 warns
        np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-12)
    cells = [{"c": "u"}, {"c": "v"}, {"c": "u"}]
    ours = nbspark.NaiveBayes(model="categorical").partial_fit(cells, labels, classes=["x", "y", "z"])
    sk = CategoricalNB().partial_fit([[0], [1], [0]], labels, classes=["x", "y", "z"])
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(ours.predict_proba(cells), sk.predict_proba([[0], [1], [0]]), atol=1e-12)


def test_scikit_learns_clone_is_refused_in_one_line(tmp_path):
    """clone makes an estimator for fit to train: a loaded model is trained by counting."""
    from sklearn.base import clone

    write_tsv(tmp_path / "first.tsv", docs(5, 2))
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "first.tsv")})
    with pytest.raises(TypeError, match="not an estimator to clone and fit: train one with nbspark.fit"):
        clone(model)


def test_learning_and_predicting_in_turns_agrees_with_river_at_every_step(tmp_path):
    """Cohen's streaming classifier: classify at any point. After each partial_fit of one document,
    the posteriors equal River's after the same learn_one (the scorer is built again when next used,
    from every count so far); reading an attribute between (class_count_) sees the counts so far."""
    from river.naive_bayes import MultinomialNB as RiverNB

    items = docs(30, 11)
    write_tsv(tmp_path / "first.tsv", items[:1])
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "first.tsv")})
    river = RiverNB(alpha=1.0)
    river.learn_one(Counter(items[0][1].split()), items[0][0])
    seen, words = Counter(y for y, _ in items[:1]), set(items[0][1].split())
    for label, text in items[1:]:
        model.partial_fit([text], [label])
        river.learn_one(Counter(text.split()), label)
        seen[label] += 1
        words.update(text.split())
        ours = dict(zip(model.classes_, model.predict_proba(["alpha theta theta"])[0]))
        theirs = river.predict_proba_one(Counter(w for w in ["alpha", "theta", "theta"] if w in words))
        assert ours == pytest.approx(theirs, rel=1e-9)
        assert dict(zip(model.classes_, model.class_count_)) == seen


def test_partial_fit_counts_its_batch_and_builds_the_scorer_once_when_next_used(tmp_path, monkeypatch):
    """A partial_fit call costs what its batch holds: it counts, and the scorer is built from the
    counts when it next scores, once for any number of calls before (it was built at every call,
    from a copy of everything: 43 ms a document on an SMS model). A few texts scored meanwhile get a
    model of their words only, as the whole model scores them, until such models have cost the
    vocabulary's words; an attribute, or a large batch, builds it whole. A model pickled between a
    count and a predict scores with the counts."""
    import nbspark.naive_bayes.predictor as predictor

    items = [(y, f"{text} only{i}") for i, (y, text) in enumerate(docs(40, 4))]  # 48 words
    write_tsv(tmp_path / "first.tsv", items[:5])
    model = nbspark.fit(None, tmp_path / "m", settings={**TSV, "train.path": str(tmp_path / "first.tsv")})
    everything = nbspark.NaiveBayes(model="multinomial", tokenizer="words").fit(
        [t for _, t in items], [y for y, _ in items]
    )
    probe = ["alpha beta", "zeta eta eta unheard"]
    expected, labels = everything.predict_proba(probe), everything.predict(probe)
    vocabulary, feature_log_prob = len(everything.vocabulary_), everything.feature_log_prob_
    builds = []  # the words each build was given: None, the whole vocabulary
    real = predictor.build_nb_model
    monkeypatch.setattr(
        predictor, "build_nb_model", lambda *a, **k: builds.append(k.get("features")) or real(*a, **k)
    )
    for label, text in items[5:]:
        model.partial_fit([text], [label])
    assert builds == []
    copy = pickle.loads(pickle.dumps(model))
    assert np.allclose(model.predict_proba(probe), expected, rtol=1e-12)
    assert list(model.predict(probe)) == list(labels)
    words = {"alpha", "beta", "zeta", "eta", "unheard"}
    assert builds == [words, words]  # two models of the probe's words, none whole
    for _ in range(vocabulary // len(words) - 2):  # until the partial models have cost the vocabulary
        model.predict(probe)
    assert None not in builds and len(builds) == vocabulary // len(words)
    assert list(model.predict(probe)) == list(labels) and builds[-1] is None  # now built whole, once
    np.testing.assert_allclose(model.feature_log_prob_, feature_log_prob, rtol=1e-12)
    assert np.allclose(model.predict_proba(probe), expected, rtol=1e-12) and builds.count(None) == 1
    assert np.allclose(copy.predict_proba(probe), expected, rtol=1e-12)
    assert np.allclose(copy.feature_log_prob_, feature_log_prob, rtol=1e-12)
    assert model.save() == 2 and builds.count(None) == 2  # the copy built its own; saving builds nothing


def test_a_value_outside_a_declared_domain_is_refused_and_nothing_counted():
    """A categorical column's declared domain (nb.domains) holds for partial_fit as for training: a
    value outside it is refused before anything of the batch is counted."""
    from nbspark.naive_bayes.predictor import NBPredictor
    from tests.naive_bayes.test_model_textbook import nb_of

    manifest = {
        "model": "categorical",
        "config": {"nb": nb_of(model="categorical", domains="color=red|blue")},
        "columns": {"numeric": [], "categorical": ["color"]},
    }
    model = NBPredictor(manifest, [])
    model.partial_fit([{"color": "red"}, {"color": "blue"}], ["y", "z"])
    before = model.predict_proba([{"color": "red"}])
    with pytest.raises(ValueError, match=r"column 'color': value 'green' .* outside its declared domain"):
        model.partial_fit([{"color": "red"}, {"color": "green"}], ["y", "y"])
    assert np.array_equal(model.predict_proba([{"color": "red"}]), before)
    assert list(model.class_count_) == [1.0, 1.0]
    # (1 + 1) / (1 + 2) for y's red, (0 + 1) / (1 + 2) for z's: the domain's two values smooth
    assert before[0] == pytest.approx([2 / 3, 1 / 3])


def test_a_token_first_seen_by_partial_fit_is_presented_in_its_sorted_place():
    """The model keeps a token first counted by partial_fit at the end of its arrays; its fitted
    attributes present the tokens sorted, as a model fitted on everything at once (and
    CountVectorizer) does: vocabulary_, get_feature_names_out, feature_count_, feature_log_prob_."""
    first = (["beta gamma", "gamma delta"], ["x", "y"])
    later = (["alpha beta", "omega alpha"], ["y", "x"])
    model = nbspark.NaiveBayes(model="multinomial", tokenizer="words").fit(*first)
    model.partial_fit(*later)
    whole = nbspark.NaiveBayes(model="multinomial", tokenizer="words").fit(
        first[0] + later[0], first[1] + later[1]
    )
    assert list(model.model_.get_feature_names_out()) == ["alpha", "beta", "delta", "gamma", "omega"]
    assert (
        model.vocabulary_ == whole.vocabulary_ == {"alpha": 0, "beta": 1, "delta": 2, "gamma": 3, "omega": 4}
    )
    assert (
        model.feature_count_.tolist() == whole.feature_count_.tolist() == [[1, 1, 0, 1, 1], [1, 1, 1, 1, 0]]
    )
    assert np.allclose(model.feature_log_prob_, whole.feature_log_prob_, rtol=1e-12)
    assert np.allclose(model.predict_proba(["alpha omega"]), whole.predict_proba(["alpha omega"]), rtol=1e-12)


def test_a_thread_learning_while_another_predicts_sees_whole_counts():
    """Classify at any point, from another thread: one thread learns a document a call while another
    predicts in a loop (threads switching every microsecond). Counts are added in place, so without
    the predictor's lock a predict read them half added (a dict changed while it was read); with it,
    no call fails, and the end is the fit of everything."""
    import sys
    import threading

    items = docs(600, 12)
    model = nbspark.NaiveBayes(model="multinomial", tokenizer="words").fit(
        [t for _, t in items[:5]], [y for y, _ in items[:5]]
    )
    failures, done = [], threading.Event()

    def predict():
        while not done.is_set():
            try:
                model.predict(["alpha beta gamma", "theta"])
                _ = model.class_count_
            except Exception as exc:  # any failure is the finding
                failures.append(exc)
                return

    reader = threading.Thread(target=predict)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        reader.start()
        for label, text in items[5:]:
            model.partial_fit([f"{text} w{text[:3]}"], [label])  # new tokens too
    finally:
        done.set()
        reader.join()
        sys.setswitchinterval(switch)
    assert failures == []
    texts = [t for _, t in items[:5]] + [f"{t} w{t[:3]}" for _, t in items[5:]]
    whole = nbspark.NaiveBayes(model="multinomial", tokenizer="words").fit(texts, [y for y, _ in items])
    probe = ["alpha beta gamma", "theta walp"]
    assert np.allclose(model.predict_proba(probe), whole.predict_proba(probe), rtol=1e-10)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10**6),
    alpha=st.sampled_from([0.0, 0.5, 1.0]),
    unseen=st.sampled_from(["drop", "smooth"]),
    prior_alpha=st.sampled_from([0.0, 1.0]),
    cut=st.integers(1, 30),
    kind=st.sampled_from(["multinomial", "complement"]),
)
def test_texts_scored_between_partial_fits_score_as_the_whole_model_does(
    seed, alpha, unseen, prior_alpha, cut, kind
):
    """A multinomial or complement model scores a few texts after ``partial_fit`` with a model of
    their words only (``build_nb_model``'s ``features``): the posteriors, the joint log-likelihoods
    and the count of unknown tokens of the model fitted on everything at once, which builds whole,
    every setting of the smoothing (alpha 0 too: a word a class never saw gives −inf; the complement
    of a word every class holds, +inf), new words, new classes and words no model has seen among
    them."""
    assume(not (unseen == "smooth" and alpha == 0))  # refused: Cohen's v2 smooths with alpha > 0
    assume(kind == "multinomial" or (unseen == "drop" and prior_alpha == 0))  # multinomial's settings
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    items = [(rng.choice("xyz"), " ".join(rng.choices(words, k=rng.randint(1, 8)))) for _ in range(31)]
    first, rest = items[:cut], items[cut:]
    settings_ = {"model": kind, "alpha": alpha, "unseen": unseen, "prior_alpha": prior_alpha}
    everything = nbspark.NaiveBayes(**settings_).fit([t for _, t in items], [y for y, _ in items])
    _ = everything.feature_log_prob_  # built whole
    learning = nbspark.NaiveBayes(**settings_).fit([t for _, t in first], [y for y, _ in first])
    for label, text in rest:
        learning.partial_fit([text], [label])
    probe = [" ".join(rng.choices(words + ["never", "seen"], k=rng.randint(0, 9))) for _ in range(3)]
    with np.errstate(all="ignore"):
        ours, theirs = learning.predict_joint_log_proba(probe), everything.predict_joint_log_proba(probe)
        assert learning.model_._stale  # scored by a model of the probe's words: nothing built whole
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(learning.predict_proba(probe), everything.predict_proba(probe))


@pytest.mark.parametrize("kind", ["bernoulli", "complement"])
def test_a_model_summed_over_its_vocabulary_scores_after_each_document_as_scikit_learns_fitted_on_all(
    monkeypatch, kind
):
    """Classify at any point, Bernoulli and complement with ``norm``: after each document learnt, a
    text scores as scikit-learn's ``BernoulliNB`` (``ComplementNB(norm=True)``) fitted on every
    document so far. The sum over every word of the vocabulary that each needs per class (the
    Bernoulli bias, the complement's divisor) is kept (``VocabularySums``) and follows the counts
    learnt, so most texts get a model of their words only (no whole build), a new class and new
    words among them."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import BernoulliNB, ComplementNB

    import nbspark.naive_bayes.predictor as predictor

    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(60)]
    items = [
        (rng.choice("xyz"), " ".join(rng.choices(vocabulary[:50], k=rng.randint(2, 9)))) for _ in range(40)
    ]
    items += [("v", "w3 w55 w56"), ("x", "w57 w1"), ("v", "w58 w2 w2"), ("z", "w59")]
    options = {"model": "bernoulli"} if kind == "bernoulli" else {"model": "complement", "norm": True}
    learning = nbspark.NaiveBayes(**options, tokenizer="words", alpha=0.5).fit(
        [t for _, t in items[:40]], [y for y, _ in items[:40]]
    )
    learning.predict(["w0"])  # built whole: the sums are kept from here
    builds = []  # each build's words: None, the whole vocabulary
    real = predictor.build_nb_model
    monkeypatch.setattr(
        predictor, "build_nb_model", lambda *a, **k: builds.append(k.get("features")) or real(*a, **k)
    )
    probe = ["w1 w55 w57", "w2 w59 w30 w30"]
    for n in range(41, len(items) + 1):
        label, text = items[n - 1]
        learning.partial_fit([text], [label])
        texts, labels = [t for _, t in items[:n]], [y for y, _ in items[:n]]
        vectorizer = CountVectorizer(
            tokenizer=str.split, token_pattern=None, lowercase=False, binary=kind == "bernoulli"
        )
        fitted = BernoulliNB(alpha=0.5) if kind == "bernoulli" else ComplementNB(alpha=0.5, norm=True)
        theirs = fitted.fit(vectorizer.fit_transform(texts), labels)
        seen = set(vectorizer.vocabulary_)  # scikit-learn's vectorizer drops the words it never saw
        known = vectorizer.transform([" ".join(w for w in p.split() if w in seen) for p in probe])
        assert list(learning.classes_) == list(theirs.classes_)
        np.testing.assert_allclose(learning.predict_proba(probe), theirs.predict_proba(known), rtol=1e-10)
        np.testing.assert_allclose(
            learning.predict_joint_log_proba(probe), theirs.predict_joint_log_proba(known), rtol=1e-12
        )
    assert builds[0] == {"w1", "w55", "w57", "w2", "w59", "w30"} and builds.count(None) < len(builds) / 2


@given(
    seed=st.integers(0, 10**6),
    alpha=st.sampled_from([0.0, 0.5, 1.0]),
    prior_alpha=st.sampled_from([0.0, 1.0]),
    cut=st.integers(1, 30),
    kind=st.sampled_from(["bernoulli", "complement"]),
)
@settings(max_examples=40, deadline=None)
def test_a_model_summed_over_its_vocabulary_scored_between_partial_fits_scores_as_the_whole_model_does(
    seed, alpha, prior_alpha, cut, kind
):
    """Bernoulli, and complement with ``norm``: after any run of documents learnt (new words, new
    classes), texts score as the model fitted on everything at once, which builds whole: by a model
    of their words only and the sums kept per class, or, alpha 0 (a Bernoulli probability of 1 makes
    a word required; a complement sum can be −inf), built whole."""
    assume(kind == "bernoulli" or prior_alpha == 0)  # a complement model has no prior
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    items = [(rng.choice("wxyz"), " ".join(rng.choices(words, k=rng.randint(1, 8)))) for _ in range(31)]
    settings_ = {"model": kind, "alpha": alpha, "prior_alpha": prior_alpha}
    if kind == "complement":
        settings_ = {"model": kind, "alpha": alpha, "norm": True}
    learning = nbspark.NaiveBayes(**settings_).fit([t for _, t in items[:cut]], [y for y, _ in items[:cut]])
    learning.predict(["w0"])
    for i, (label, text) in enumerate(items[cut:], start=cut + 1):
        learning.partial_fit([text], [label])
        if rng.random() < 0.5:
            continue  # scored after some documents only: a run of them learnt between two models
        everything = nbspark.NaiveBayes(**settings_).fit([t for _, t in items[:i]], [y for y, _ in items[:i]])
        probe = [" ".join(rng.choices(words + ["never"], k=rng.randint(0, 5))) for _ in range(2)]
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(
                learning.predict_joint_log_proba(probe), everything.predict_joint_log_proba(probe), rtol=1e-12
            )
            np.testing.assert_allclose(
                learning.predict_proba(probe), everything.predict_proba(probe), atol=1e-12
            )
