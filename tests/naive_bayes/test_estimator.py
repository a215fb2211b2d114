"""``nbspark.NaiveBayes``, scikit-learn's shape of an estimator: made from its settings, fitted on
examples in memory, cloned by scikit-learn's model selection, and saved as a model directory that
the other tools read. Held against scikit-learn's own naive Bayes on the same counts, and against a
model trained from a file by ``nbspark.fit``."""

import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder

import nbspark
from nbspark.app.command import main as command_main
from nbspark.errors import ConfigError, OutputError
from tests.naive_bayes.test_partial_fit import TSV, WORDS, docs, table, write_tsv


def _split(items):
    return [t for _, t in items], [y for y, _ in items]


def test_fit_scores_as_scikit_learns_multinomial_nb_on_the_same_counts():
    texts, labels = _split(docs(60, 3))
    ours = nbspark.NaiveBayes(alpha=0.5, tokenizer="words").fit(texts, labels)
    vectorizer = CountVectorizer(token_pattern=r"\w+").fit(WORDS)
    theirs = MultinomialNB(alpha=0.5).fit(vectorizer.transform(texts), labels)
    probe = ["alpha beta", "theta theta zeta gamma", "nothing known"]
    assert list(ours.classes_) == list(theirs.classes_)
    np.testing.assert_allclose(
        ours.predict_proba(probe), theirs.predict_proba(vectorizer.transform(probe)), rtol=1e-9
    )
    np.testing.assert_array_equal(ours.class_count_, theirs.class_count_)
    assert ours.score(texts, labels) == theirs.score(vectorizer.transform(texts), labels)


def test_scikit_learns_model_selection_clones_and_fits_it():
    """clone, cross_val_score (a classifier's stratified folds) and GridSearchCV: the same scores and
    the same best setting as scikit-learn's Pipeline of a vectorizer and MultinomialNB."""
    texts, labels = _split(docs(90, 5))
    ours = nbspark.NaiveBayes(tokenizer="words")
    theirs = make_pipeline(CountVectorizer(token_pattern=r"\w+"), MultinomialNB())
    copy = clone(ours.set_params(alpha=0.25))
    assert copy.get_params() == ours.get_params() and not hasattr(copy, "model_")
    np.testing.assert_allclose(
        cross_val_score(ours, texts, labels, cv=3),
        cross_val_score(theirs.set_params(multinomialnb__alpha=0.25), texts, labels, cv=3),
    )
    grid = [0.01, 0.5, 4.0]
    mine = GridSearchCV(nbspark.NaiveBayes(tokenizer="words"), {"alpha": grid}, cv=3).fit(texts, labels)
    sk = GridSearchCV(theirs, {"multinomialnb__alpha": grid}, cv=3).fit(texts, labels)
    np.testing.assert_allclose(mine.cv_results_["mean_test_score"], sk.cv_results_["mean_test_score"])
    assert mine.best_params_["alpha"] == sk.best_params_["multinomialnb__alpha"]


def test_a_saved_estimator_is_the_model_a_file_trains(tmp_path):
    """fit on the lines of a file, saved, is the model nbspark.fit counts from that file: the same
    table row for row; the command line scores with it; the saved model learns on as versions."""
    items = docs(40, 7)
    write_tsv(tmp_path / "t.tsv", items)
    trained = nbspark.fit(None, tmp_path / "trained", settings={**TSV, "train.path": str(tmp_path / "t.tsv")})
    ours = nbspark.NaiveBayes(tokenizer="words").fit(*_split(items))
    manifest = ours.save(tmp_path / "fitted")
    assert table(tmp_path / "fitted") == table(tmp_path / "trained")
    assert manifest["label_counts"] == trained.manifest["label_counts"]
    assert manifest["features"] == trained.manifest["features"] and manifest["version"] == 1
    assert manifest["stats"]["documents"] == trained.manifest["stats"]["documents"] == 40
    # named after what made it, not the embedded affect/effect experiment; a config without a name
    # is named after its task
    assert (manifest["config"]["name"], trained.manifest["config"]["name"]) == ("NaiveBayes", "naive_bayes")
    probe = ["alpha beta", "eta eta"]
    loaded = nbspark.load(tmp_path / "fitted")
    np.testing.assert_array_equal(loaded.predict_proba(probe), trained.predict_proba(probe))
    import contextlib
    import io

    from nbspark.app.command import main

    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert main(["predict", "--model", str(tmp_path / "fitted"), "--json", *probe]) == 0
    assert [json.loads(line)["label"] for line in said.getvalue().splitlines()] == list(loaded.predict(probe))
    with pytest.raises(OutputError, match="overwrite"):
        ours.save(tmp_path / "fitted")
    more = docs(5, 8)
    ours.partial_fit(*_split(more))
    assert ours.model_.save() == 2  # the next version, beside the saved table
    assert nbspark.load(tmp_path / "fitted").predict(probe).tolist() == ours.predict(probe).tolist()
    # more counted and the whole model saved elsewhere: the table of a train on every line, each key
    # once (the counts read and those counted since share keys, summed)
    last = docs(6, 9)
    ours.partial_fit(*_split(last))
    ours.save(tmp_path / "again")
    write_tsv(tmp_path / "all.tsv", items + more + last)
    nbspark.fit(None, tmp_path / "all", settings={**TSV, "train.path": str(tmp_path / "all.tsv")})
    assert table(tmp_path / "again") == table(tmp_path / "all")


def test_a_table_estimator_fits_a_dataframe_as_gaussian_nb_and_categorical_nb_do():
    pd = pytest.importorskip("pandas")
    from sklearn.datasets import load_wine

    wine = load_wine(as_frame=True)
    X, y = wine.data, [str(wine.target_names[t]) for t in wine.target]
    ours = nbspark.NaiveBayes(model="gaussian").fit(X, y)
    names = list(ours.feature_names_in_)  # theta_'s columns
    assert sorted(names) == sorted(X.columns)
    theirs = GaussianNB().fit(X[names], y)
    np.testing.assert_allclose(ours.theta_, theirs.theta_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X[names]), rtol=1e-6, atol=1e-12)

    rows = pd.DataFrame(
        {"outlook": ["sun", "rain", "sun", "fog", "rain", "sun"], "windy": ["y", "n", "n", "y", "y", "n"]}
    )
    labels = ["no", "yes", "yes", "no", "yes", "yes"]
    cat = nbspark.NaiveBayes(model="categorical").fit(rows, labels)
    encoder = OrdinalEncoder().fit(rows)
    sk = CategoricalNB(alpha=1.0).fit(encoder.transform(rows), labels)
    np.testing.assert_allclose(cat.predict_proba(rows), sk.predict_proba(encoder.transform(rows)), rtol=1e-9)


def test_a_mixed_estimator_reads_each_columns_kind_from_its_cells():
    """Numbers (not bools) are a numeric column, anything else a categorical one, a missing cell
    counting for neither: the rule of a table's reader."""
    rows = [
        {"temp": 20.5, "sky": "sun", "flag": True},
        {"temp": None, "sky": "rain", "flag": False},
        {"temp": 11, "sky": "rain", "flag": True},
    ]
    model = nbspark.NaiveBayes(model="mixed").fit(rows, ["out", "in", "in"])
    assert model.model_.manifest["columns"] == {"numeric": ["temp"], "categorical": ["sky", "flag"]}


@pytest.mark.parametrize(
    ("make", "call", "error", "says"),
    [
        (lambda: nbspark.NaiveBayes(alpha=-1), "fit", ConfigError, "alpha"),
        (lambda: nbspark.NaiveBayes(model="ridge"), "fit", ConfigError, "nb.model"),
        (lambda: nbspark.NaiveBayes(), "predict", AttributeError, "not fitted yet: call fit"),
        (lambda: nbspark.NaiveBayes(model="categorical"), "label", ValueError, "column 'label'"),
        (lambda: nbspark.NaiveBayes(), "set", ValueError, "no setting 'alpah'"),
        # no example: it said "the count table has no class counts (Y rows)"
        (lambda: nbspark.NaiveBayes(), "empty", ValueError, "^fit takes at least one example"),
        (
            lambda: nbspark.NaiveBayes(model="gaussian"),
            "empty",
            ValueError,
            "^fit takes at least one example",
        ),
        (lambda: nbspark.NaiveBayes(), "partial", ValueError, "^partial_fit takes at least one example"),
    ],
)
def test_what_it_cannot_do_is_refused_in_one_line(make, call, error, says):
    estimator = make()
    with pytest.raises(error, match=says):
        if call == "fit":
            estimator.fit(["a b"], ["x"])
        elif call == "predict":
            estimator.predict(["a b"])
        elif call == "label":
            estimator.fit([{"label": "x", "a": "1"}], ["x"])
        elif call == "empty":
            estimator.fit(np.empty((0, 2)), [])
        elif call == "partial":
            estimator.partial_fit([], [], classes=["x"])
        else:
            estimator.set_params(alpah=2)


def test_a_table_estimator_fits_arrays_and_numbers_as_gaussian_nb_does():
    """scikit-learn's first example: numpy arrays and integer classes (iris; digits, ten classes,
    whose names would sort "10" before "2" as text). Same classes_ (numbers), means, variances,
    posteriors in classes_' order, predictions and cross-validated scores."""
    from sklearn.datasets import load_digits, load_iris

    for X, y in (load_iris(return_X_y=True), load_digits(return_X_y=True)):
        ours, theirs = nbspark.NaiveBayes(model="gaussian").fit(X, y), GaussianNB().fit(X, y)
        np.testing.assert_array_equal(ours.classes_, theirs.classes_)
        np.testing.assert_allclose(ours.theta_, theirs.theta_, rtol=1e-12)
        np.testing.assert_allclose(ours.var_, theirs.var_, rtol=1e-9)
        np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-9)
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
        assert ours.n_features_in_ == X.shape[1] and ours.feature_names_in_[1] == "x1"
    X, y = load_iris(return_X_y=True)
    np.testing.assert_allclose(
        cross_val_score(nbspark.NaiveBayes(model="gaussian"), X, y, cv=5),
        cross_val_score(GaussianNB(), X, y, cv=5),
    )
    named = nbspark.NaiveBayes(model="gaussian").fit(X, np.array(["setosa", "versicolor", "virginica"])[y])
    assert named.predict(X[:1]).tolist() == ["setosa"]


def test_a_model_fitted_on_named_columns_reads_an_array_in_their_order():
    """Fitted on a DataFrame, an array's columns are ``feature_names_in_``: the frame's order, as
    GaussianNB reads ``df.values``; another width is refused, as scikit-learn refuses it."""
    from sklearn.datasets import load_wine

    wine = load_wine(as_frame=True)
    frame = wine.data[list(reversed(wine.data.columns))]  # not the names' sorted order
    ours = nbspark.NaiveBayes(model="gaussian").fit(frame, wine.target)
    theirs = GaussianNB().fit(frame.values, wine.target)
    assert list(ours.feature_names_in_) == list(frame.columns)
    np.testing.assert_allclose(ours.theta_, theirs.theta_, rtol=1e-12)
    values = frame.values
    np.testing.assert_allclose(ours.predict_proba(values), theirs.predict_proba(values), atol=1e-9)
    with pytest.raises(ValueError, match="X has 12 features, but it is expecting 13 features as input"):
        ours.predict(frame.values[:, 1:])


def test_labels_that_are_no_classes_are_refused_as_scikit_learn_refuses_them():
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        nbspark.NaiveBayes(model="gaussian").fit(X, [0.5, 1.5, 0.5, 1.5])
    with pytest.raises(ValueError, match=r"Mix of label input types \(string and number\)"):
        nbspark.NaiveBayes(model="gaussian").fit(X, [0, "a", 0, "a"])
    with pytest.raises(ValueError, match="requires y to be passed, but the target y is None"):
        nbspark.NaiveBayes(model="gaussian").fit(X, None)
    with pytest.raises(ValueError, match="every sample_weight is zero"):
        nbspark.NaiveBayes(model="gaussian").fit(X, [0, 1, 0, 1], sample_weight=[0, 0, 0, 0])
    fitted = nbspark.NaiveBayes(model="gaussian").fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"Mix of label input types"):
        fitted.partial_fit(X, ["a", "b", "a", "b"])
    assert fitted.partial_fit(X[:1], np.array([2])).classes_.tolist() == [0, 1, 2]
    names = nbspark.NaiveBayes(model="gaussian").fit(X, ["a", "b", "a", "b"])
    with pytest.raises(ValueError, match=r"Mix of label input types"):  # an integer array, read whole
        names.partial_fit(X, np.array([0, 1, 0, 1]))
    by_array = nbspark.NaiveBayes(model="gaussian").fit(X, np.array([3, -1, 3, 10], np.int32))
    by_list = nbspark.NaiveBayes(model="gaussian").fit(X, [3, -1, 3, 10])
    assert by_array.classes_.tolist() == by_list.classes_.tolist() == [-1, 3, 10]
    assert by_array.predict(X).tolist() == by_list.predict(X).tolist()
    with pytest.raises(NotFittedError, match="not fitted yet"):
        nbspark.NaiveBayes(model="gaussian").predict(X)


@pytest.mark.filterwarnings("ignore")  # the checks' own warnings (a skipped array-API check, …)
@pytest.mark.parametrize("model", ["gaussian", "mixed"])
def test_a_numeric_table_estimator_passes_scikit_learns_own_checks(model):
    """scikit-learn's ``check_estimator``, every check (61 in 1.9): fit and predict on arrays of
    every dtype, pickling, cloning, refusals of bad input with scikit-learn's messages (a dict in a
    cell, in a numeric column or a mixed model's categorical one), invariance to the order and
    subsets of samples. A missing cell (NaN, inf) is left out of a row, as training reads it, which
    its tags say."""
    from sklearn.utils.estimator_checks import check_estimator

    failed = [
        (r["check_name"], str(r["exception"])[:200])
        for r in check_estimator(nbspark.NaiveBayes(model=model), on_fail=None)
        if r["status"] == "failed"
    ]
    assert failed == []


def test_categorical_arrays_of_codes_score_as_categorical_nb():
    """CategoricalNB's input, integer codes per column: the same posteriors; a text model fitted on
    texts and given CountVectorizer's matrix is told to pass the texts."""
    rng = np.random.RandomState(0)
    X, y = rng.randint(0, 4, size=(200, 5)), rng.randint(0, 3, size=200)
    ours, theirs = nbspark.NaiveBayes(model="categorical").fit(X, y), CategoricalNB().fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-12)
    counts = CountVectorizer().fit_transform(["cheap pills", "lunch at noon"])
    with pytest.raises(TypeError, match="expected texts \\(str\\), not a matrix: .* pass the texts"):
        nbspark.NaiveBayes().fit(["cheap pills", "lunch at noon"], ["spam", "ham"]).predict(counts)


@pytest.mark.parametrize(
    "model, theirs",
    [("multinomial", MultinomialNB), ("bernoulli", BernoulliNB), ("complement", ComplementNB)],
)
def test_a_text_model_fits_countvectorizers_matrix_as_scikit_learns_nb_does(model, theirs):
    """MultinomialNB's usual input, a count matrix (sparse or dense): column j is the token ``xj``,
    counted as often as the matrix says; the same posteriors as scikit-learn's model on the same
    matrix, the columns no training row holds too (the vectorizer fitted on every text, the test
    ones' words as well: each column is in the vocabulary, smoothed over as scikit-learn does), and
    the same ``feature_log_prob_``, column for column; cross-validated on the matrix, the same scores."""
    texts, labels = _split(docs(60, 3))
    probe = ["alpha beta", "theta theta zeta gamma", "nothing known", "words only the test has"]
    vectorizer = CountVectorizer(token_pattern=r"\w+").fit(texts + probe)
    X, P = vectorizer.transform(texts), vectorizer.transform(probe)
    assert (np.asarray(X.sum(axis=0)).ravel() == 0).sum() >= 5  # columns that training never saw
    ours, reference = nbspark.NaiveBayes(model=model).fit(X, labels), theirs().fit(X, labels)
    np.testing.assert_allclose(ours.predict_proba(P), reference.predict_proba(P), rtol=1e-9)
    np.testing.assert_allclose(ours.predict_proba(P.toarray()), reference.predict_proba(P), rtol=1e-9)
    assert ours.n_features_in_ == X.shape[1] and ours.score(X, labels) == reference.score(X, labels)
    np.testing.assert_allclose(
        ours.predict_joint_log_proba(P), reference.predict_joint_log_proba(P), rtol=1e-9
    )
    if model == "multinomial":
        np.testing.assert_allclose(ours.feature_log_prob_, reference.feature_log_prob_, rtol=1e-12)
    everything = vectorizer.transform(texts + probe[:2])
    y = labels + labels[:2]
    np.testing.assert_allclose(
        cross_val_score(nbspark.NaiveBayes(model=model), everything, y, cv=3),
        cross_val_score(theirs(), everything, y, cv=3),
    )


def test_a_model_fitted_on_a_count_matrix_saved_and_loaded_takes_the_matrix(tmp_path):
    """No JVM: saved, the model keeps the matrix's width (``matrix_columns``); ``nbspark.load`` scores
    and learns matrices of it as scikit-learn's ``MultinomialNB`` does (``partial_fit`` then
    ``save()``, a delta, read back), and refuses another width."""
    texts, labels = _split(docs(60, 3))
    vectorizer = CountVectorizer(token_pattern=r"\w+").fit(texts)
    X = vectorizer.transform(texts)
    nbspark.NaiveBayes().fit(X[:40], labels[:40]).save(tmp_path / "m")
    loaded = nbspark.load(tmp_path / "m")
    reference = MultinomialNB().fit(X[:40], labels[:40])
    assert loaded.n_features_in_ == X.shape[1] and list(loaded.classes_) == list(reference.classes_)
    np.testing.assert_allclose(loaded.predict_proba(X), reference.predict_proba(X), rtol=1e-9)
    loaded.partial_fit(X[40:], labels[40:])
    assert loaded.save() == 2
    again, reference = nbspark.load(tmp_path / "m"), MultinomialNB().fit(X, labels)
    assert again.manifest["matrix_columns"] == X.shape[1]
    np.testing.assert_allclose(again.predict_proba(X.toarray()), reference.predict_proba(X), rtol=1e-9)
    with pytest.raises(ValueError, match=f"X has 3 features, but it is expecting {X.shape[1]}"):
        again.predict(X[:, :3])
    # it scores texts of its tokens (the command line's), but learns only matrices: its vocabulary is
    # the matrix's columns, and a text's other words would be features of no column in every score after
    one_row = [[1, 2] + [0] * (X.shape[1] - 2)]
    np.testing.assert_allclose(again.predict_proba(["x0 x1 x1"]), again.predict_proba(one_row), rtol=1e-12)
    with pytest.raises(
        TypeError, match=f"partial_fit takes a count matrix of {X.shape[1]} columns, .* not texts"
    ):
        again.partial_fit(["hello x0"], ["a"])
    saved = again.save()  # nothing was counted
    assert saved == 2 and len(nbspark.load(tmp_path / "m").model.vocab) == X.shape[1]


def test_class_numbers_saved_and_loaded_are_numbers_in_their_order(tmp_path):
    """No JVM: a model fitted on ``y`` of ints (0, 1, 10: as text, "10" sorts before "2") saves them
    (``label_numbers``); ``nbspark.load`` gives the numbers back, sorted as numbers, as
    ``GaussianNB`` does: ``classes_``, ``predict``, ``predict_proba``'s columns, ``score`` and the
    per-class attributes; it learns numbers and refuses a class name among them."""
    rng = np.random.RandomState(3)
    X = np.vstack([rng.normal(m, 1.0, size=(30, 3)) for m in (0.0, 2.0, 4.0)])
    y = np.repeat([0, 10, 2], 30)
    nbspark.NaiveBayes(model="gaussian").fit(X, y).save(tmp_path / "m")
    loaded, reference = nbspark.load(tmp_path / "m"), GaussianNB().fit(X, y)
    assert list(loaded.classes_) == [0, 2, 10] == list(reference.classes_)
    assert loaded.predict(X).tolist() == reference.predict(X).tolist()
    assert loaded.predict(X[:0]).dtype == reference.predict(X).dtype  # none: still the classes' numbers
    np.testing.assert_allclose(loaded.predict_proba(X), reference.predict_proba(X), atol=1e-9)
    np.testing.assert_allclose(loaded.theta_, reference.theta_, rtol=1e-12)
    np.testing.assert_allclose(
        loaded.predict_joint_log_proba(X), reference.predict_joint_log_proba(X), rtol=1e-9
    )
    np.testing.assert_array_equal(loaded.class_count_, reference.class_count_)
    assert loaded.score(X, y) == reference.score(X, y) > 0.9
    assert loaded.explain(X[:1])[0]["label"] == reference.predict(X[:1])[0]
    loaded.partial_fit(X[:5], [2] * 5)
    assert loaded.save() == 2
    np.testing.assert_array_equal(nbspark.load(tmp_path / "m").class_count_, [30, 35, 30])
    with pytest.raises(ValueError, match="Mix of label input types"):
        loaded.partial_fit(X[:1], ["two"])
    # the command line's update keeps the numbers, and names a class it adds (3) as one
    (tmp_path / "more.csv").write_text("x0,x1,x2,label\n4.1,3.9,4.0,10\n6,6,6,3\n")
    settings = [
        "task=naive_bayes",
        "nb.model=gaussian",
        "train.format=csv",
        f"train.path={tmp_path / 'more.csv'}",
    ]
    assert (
        command_main(
            ["train", "-q", "--in-process", "--update", str(tmp_path / "m")]
            + [a for kv in settings for a in ("--set", kv)]
        )
        == 0
    )
    updated = nbspark.load(tmp_path / "m")
    assert list(updated.classes_) == [0, 2, 3, 10] and updated.class_count_.tolist() == [30, 35, 1, 31]


def test_a_count_matrix_of_another_width_or_not_of_counts_is_refused():
    texts, labels = _split(docs(20, 2))
    vectorizer = CountVectorizer(token_pattern=r"\w+").fit(texts)
    fitted = nbspark.NaiveBayes().fit(vectorizer.transform(texts), labels)
    weights = TfidfVectorizer(token_pattern=r"\w+", vocabulary=vectorizer.vocabulary_).fit_transform(texts)
    with pytest.raises(ValueError, match=r"takes a matrix of counts, whole numbers >= 0 .*, got 0\.\d+"):
        fitted.predict(weights)
    with pytest.raises(
        ValueError, match=f"X has 3 features, but it is expecting {len(vectorizer.vocabulary_)}"
    ):
        fitted.predict(vectorizer.transform(texts)[:, :3])
    with pytest.raises(TypeError, match="predict takes a count matrix of .* columns, .* not texts"):
        fitted.predict(["alpha beta"])
    with pytest.raises(TypeError, match="partial_fit takes a count matrix of .* columns, .* not texts"):
        fitted.partial_fit(["alpha beta"], labels[:1])
    assert nbspark.NaiveBayes().fit(texts, labels).predict(["alpha beta"]).shape == (1,)  # texts again


@pytest.mark.parametrize(
    "model, theirs",
    [("multinomial", MultinomialNB), ("bernoulli", BernoulliNB), ("complement", ComplementNB)],
)
def test_a_list_of_rows_of_counts_is_a_count_matrix_as_scikit_learn_reads_it(model, theirs):
    """``fit([[2, 1, 0], …], y)``, scikit-learn's array-like: the posteriors of scikit-learn's model on
    the same lists (rows as tuples and 1-D arrays too, and the width kept); a list of token lists is
    still not counts, and rows of unequal widths are refused."""
    X = [[2, 1, 0, 0], [0, 3, 1, 0], [1, 0, 4, 2], [0, 0, 1, 5], [3, 3, 0, 0]]
    y = ["a", "b", "b", "c", "a"]
    probe = [(1, 1, 0, 0), (0, 0, 0, 9)]
    ours, reference = nbspark.NaiveBayes(model=model).fit(X, y), theirs().fit(X, y)
    assert ours.n_features_in_ == 4
    np.testing.assert_allclose(ours.predict_proba(probe), reference.predict_proba(probe), rtol=1e-9)
    rows = [np.array(r) for r in probe]
    np.testing.assert_allclose(ours.predict_proba(rows), reference.predict_proba(probe), rtol=1e-9)
    ours.partial_fit([[0, 1, 1, 1]], ["c"])
    reference.partial_fit([[0, 1, 1, 1]], ["c"])
    np.testing.assert_allclose(ours.predict_proba(probe), reference.predict_proba(probe), rtol=1e-9)
    with pytest.raises(ValueError, match=r"rows are of one width; got rows of \[1, 4\] cells"):
        ours.predict([[1], [1, 0, 0, 0]])
    for row, odd in (([1, "a", 0, 0], "'a'"), ([1, None, 0, 0], "None")):
        with pytest.raises(ValueError, match=f"takes a matrix of counts, whole numbers >= 0, got {odd}$"):
            ours.predict([row])
    with pytest.raises(TypeError, match="predict takes a count matrix of 4 columns"):
        ours.predict([["alpha", "beta"]])
    with pytest.raises(TypeError, match="expected texts \\(str\\), not a matrix"):
        nbspark.NaiveBayes(model=model).fit(["a b", "c"], ["x", "y"]).predict([[1, 0]])


@pytest.mark.parametrize(
    "model, theirs",
    [("multinomial", MultinomialNB), ("bernoulli", BernoulliNB), ("complement", ComplementNB)],
)
def test_a_dataframe_of_counts_is_a_count_matrix_with_its_column_names(model, theirs, tmp_path):
    """A pandas DataFrame whose every column holds numbers (a word-count table), to a text model: a
    count matrix, as scikit-learn reads it: the same posteriors, ``feature_names_in_`` its columns;
    a DataFrame of the columns in another order is refused, as scikit-learn refuses it (by position
    they would be other words), and one of the same order, or the bare array, scores as the matrix.
    Saved, the model keeps the width and the names (``matrix_names``): loaded, and after a version of
    its own, it takes the DataFrame as the estimator did, and refuses one of another order (by
    position it scored the swapped columns as the others, in silence)."""
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(
        {
            "cheap": [2, 0, 1, 0, 3],
            "pills": [1, 3, 0, 0, 3],
            "lunch": [0, 1, 4, 1, 0],
            "noon": [0, 0, 2, 5, 0],
        }
    )
    y = ["a", "b", "b", "c", "a"]
    probe = pd.DataFrame({"cheap": [1, 0], "pills": [1, 0], "lunch": [0, 0], "noon": [0, 9]})
    ours, reference = nbspark.NaiveBayes(model=model).fit(X, y), theirs().fit(X, y)
    assert list(ours.feature_names_in_) == list(reference.feature_names_in_) == list(X.columns)
    np.testing.assert_allclose(ours.predict_proba(probe), reference.predict_proba(probe), rtol=1e-9)
    np.testing.assert_allclose(
        ours.predict_proba(probe.to_numpy()), reference.predict_proba(probe), rtol=1e-9
    )
    with pytest.raises(
        ValueError, match="predict takes the columns that fit took, in its order .* 'pills' for 'cheap'"
    ):
        ours.predict(probe[["pills", "cheap", "lunch", "noon"]])
    with pytest.raises(ValueError, match="partial_fit takes the columns .* 'meal' for 'lunch'"):
        ours.partial_fit(X.rename(columns={"lunch": "meal"}), y)
    ours.partial_fit(X.iloc[:2], y[:2])
    reference.partial_fit(X.iloc[:2], y[:2])
    np.testing.assert_allclose(ours.predict_proba(probe), reference.predict_proba(probe), rtol=1e-9)
    ours.save(tmp_path / "m")
    loaded = nbspark.load(tmp_path / "m")
    np.testing.assert_allclose(loaded.predict_proba(probe), reference.predict_proba(probe), rtol=1e-9)
    assert list(loaded.feature_names_in_) == list(X.columns) and loaded.n_features_in_ == 4
    swapped = probe[["noon", "pills", "lunch", "cheap"]]
    with pytest.raises(
        ValueError, match="predict takes the columns .* 'noon' for 'cheap', 'cheap' for 'noon'"
    ):
        loaded.predict(swapped)
    loaded.partial_fit(X.iloc[2:], y[2:])
    reference.partial_fit(X.iloc[2:], y[2:])
    assert loaded.save() == 2
    again = nbspark.load(tmp_path / "m")
    assert again.manifest["matrix_names"] == list(X.columns)
    np.testing.assert_allclose(again.predict_proba(probe), reference.predict_proba(probe), rtol=1e-9)
    with pytest.raises(ValueError, match="partial_fit takes the columns .* 'noon' for 'cheap'"):
        again.partial_fit(swapped, ["a", "b"])
    with pytest.raises(TypeError, match="expected texts \\(str\\), not a matrix"):
        nbspark.NaiveBayes(model=model).fit(["a b", "c"], ["x", "y"]).predict(probe)


TEXT_ATTRIBUTES = ["class_count_", "class_log_prior_", "feature_count_", "feature_log_prob_"]


@pytest.mark.parametrize(
    "model, theirs, names",
    [
        ("multinomial", MultinomialNB(alpha=0.5), TEXT_ATTRIBUTES),
        ("bernoulli", BernoulliNB(alpha=0.5), TEXT_ATTRIBUTES),
        ("complement", ComplementNB(alpha=0.5), [*TEXT_ATTRIBUTES, "feature_all_"]),
        ("complement", ComplementNB(alpha=0.5, norm=True), [*TEXT_ATTRIBUTES, "feature_all_"]),
    ],
)
def test_a_text_models_fitted_attributes_are_scikit_learns(tmp_path, model, theirs, names):
    """The fitted attributes scikit-learn's text models have, of the same names and values on the
    same count matrix (a column no training row holds too), fitted here and loaded from the saved
    directory; fitted on texts, the same per token (``vocabulary_`` names the columns)."""
    texts, labels = _split(docs(60, 3))
    vectorizer = CountVectorizer(token_pattern=r"\w+").fit(texts + ["words only the test has"])
    X = vectorizer.transform(texts)
    settings = {"model": model, "alpha": 0.5, **({"norm": True} if getattr(theirs, "norm", False) else {})}
    ours, reference = nbspark.NaiveBayes(**settings).fit(X, labels), theirs.fit(X, labels)
    ours.save(tmp_path / "m")
    for fitted in (ours, nbspark.load(tmp_path / "m")):
        for name in names:
            np.testing.assert_allclose(
                getattr(fitted, name), getattr(reference, name), rtol=1e-12, err_msg=name
            )
    on_texts = nbspark.NaiveBayes(**settings, tokenizer="words").fit(texts, labels)
    seen = [w for w in vectorizer.get_feature_names_out() if w in on_texts.vocabulary_]
    ours_at, theirs_at = [on_texts.vocabulary_[w] for w in seen], [vectorizer.vocabulary_[w] for w in seen]
    np.testing.assert_array_equal(on_texts.feature_count_[:, ours_at], reference.feature_count_[:, theirs_at])
    with pytest.raises(AttributeError, match="category_count_ is a categorical or mixed model's; this is a"):
        _ = ours.category_count_


def test_a_table_models_fitted_attributes_are_categorical_nbs_and_gaussian_nbs():
    """``CategoricalNB``'s attributes per column (``categories_`` naming the codes
    ``OrdinalEncoder`` gives), ``GaussianNB``'s per class, a mixed model's both; another kind's
    attribute is an AttributeError, as on scikit-learn's models."""
    pd = pytest.importorskip("pandas")
    from sklearn.datasets import load_wine

    rows = pd.DataFrame(
        {
            "windy": ["y", "n", "n", "y", "y", "n", "n"],
            "outlook": ["sun", "rain", "sun", "fog", "rain", "sun", "sun"],
        }
    )
    labels = ["no", "yes", "yes", "no", "yes", "yes", "no"]
    cat = nbspark.NaiveBayes(model="categorical", alpha=0.7).fit(rows, labels)
    assert list(cat.feature_names_in_) == ["windy", "outlook"]
    encoder = OrdinalEncoder().fit(rows)
    sk = CategoricalNB(alpha=0.7).fit(encoder.transform(rows), labels)
    assert [list(c) for c in cat.categories_] == [list(c) for c in encoder.categories_]
    assert cat.n_categories_.tolist() == sk.n_categories_.tolist() == [2, 3]
    np.testing.assert_array_equal(cat.category_count_[1], [[1, 0, 2], [0, 2, 2]])  # fog rain sun, by hand
    for name in ["class_count_", "class_log_prior_"]:
        np.testing.assert_allclose(getattr(cat, name), getattr(sk, name), rtol=1e-12)
    for name in ["category_count_", "feature_log_prob_"]:
        for ours, theirs in zip(getattr(cat, name), getattr(sk, name), strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=name)

    wine = load_wine(as_frame=True)
    X, y = wine.data, [str(wine.target_names[t]) for t in wine.target]
    gaussian = nbspark.NaiveBayes(model="gaussian").fit(X, y)
    reference = GaussianNB().fit(X[list(gaussian.feature_names_in_)], y)
    for name in ["class_count_", "class_prior_", "epsilon_", "theta_", "var_"]:
        np.testing.assert_allclose(getattr(gaussian, name), getattr(reference, name), rtol=1e-9, err_msg=name)
    for name in ["feature_count_", "feature_log_prob_", "category_count_", "vocabulary_"]:
        with pytest.raises(AttributeError):
            getattr(gaussian, name)

    mixed = nbspark.NaiveBayes(model="mixed").fit(
        [{"t": 1.0, "s": "a"}, {"t": 2.0, "s": "b"}, {"t": 3.0, "s": "a"}], ["x", "y", "x"]
    )
    assert [list(c) for c in mixed.categories_] == [["a", "b"]]
    np.testing.assert_array_equal(mixed.category_count_[0], [[2, 0], [0, 1]])
    np.testing.assert_allclose(mixed.theta_, [[2.0], [2.0]])
    np.testing.assert_allclose(mixed.class_prior_, [2 / 3, 1 / 3])
