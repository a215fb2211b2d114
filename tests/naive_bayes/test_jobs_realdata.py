"""Naive Bayes on the real corpora against scikit-learn on the same documents, features and split.

scikit-learn is the independent implementation: its CountVectorizer(token_pattern=r"(?u)\\w+")
makes the same features as nbspark's ``words`` tokenizer, and MultinomialNB / BernoulliNB /
GaussianNB fit them with the same smoothing. Predictions must be identical, document by document.
"""

import glob
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nbspark.inputs.parsers import decode_reuters, holdout_part, parse_reuters_sgml
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.inputs import REUTERS_TOP10
from nbspark.naive_bayes.jobs import classify_nb, train_nb
from nbspark.settings.config import load_config
from tests.conftest import ROOT

pytestmark = [pytest.mark.spark, pytest.mark.realdata]
sklearn = pytest.importorskip("sklearn")
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB  # noqa: E402


def run(spark, name, data_dir, tmp_path):
    cfg = load_config(ROOT / f"conf/experiments/{name}.toml")
    train_nb(spark, cfg, resolve_input(cfg.train, str(data_dir)), tmp_path / "m")
    metrics = classify_nb(spark, cfg, tmp_path / "m", resolve_input(cfg.test, str(data_dir)), tmp_path / "r")
    rows = spark.read.parquet(str(tmp_path / "r" / "predictions")).collect()
    # a single-label test set: each prediction a string (a list where a record may hold several labels)
    preds = {r["id"]: r["predicted"] if isinstance(r["predicted"], str) else r["predicted"][0] for r in rows}
    return metrics, preds


def loaded_predictions(model_dir, test) -> dict:
    """The test documents' predictions from ``nbspark.load`` (pyarrow and numpy, no Spark)."""
    import nbspark

    model = nbspark.load(model_dir)
    return dict(zip([doc_id for doc_id, _, _ in test], model.predict([text for _, text, _ in test])))


def sklearn_text(estimator, train, test, log_loss: bool = False):
    """scikit-learn's predictions of ``test`` by id and its accuracy (and, with ``log_loss``, the
    mean −log of each gold class's predict_proba, clipped to [LOG_EPS, 1] as nbspark clips)."""
    cv = CountVectorizer(token_pattern=r"(?u)\w+")
    X = cv.fit_transform([t for _, t, _ in train])
    model = estimator.fit(X, [y for _, _, y in train])
    X_test = cv.transform([t for _, t, _ in test])
    pred = model.predict(X_test)
    out = (
        {doc_id: p for (doc_id, _, _), p in zip(test, pred)},
        np.mean(pred == np.array([y for _, _, y in test])),
    )
    if not log_loss:
        return out
    from nbspark.report.metrics import LOG_EPS

    gold = model.predict_proba(X_test)[
        np.arange(len(test)), np.searchsorted(model.classes_, [y for _, _, y in test])
    ]
    return (*out, float(np.mean(-np.log(np.clip(gold, LOG_EPS, 1.0)))))


def test_reuters_top10_equals_sklearn(spark, data_dir, tmp_path):
    metrics, ours = run(spark, "reuters_top10", data_dir, tmp_path)
    train, test, left_out = [], [], Counter()  # the test split's stories left out, by first reason
    for f in sorted(glob.glob(str(data_dir / "reuters21578" / "reut2-*.sgm"))):
        for s in parse_reuters_sgml(decode_reuters(Path(f).read_bytes(), f)):
            modapte = s.topics_attr == "YES" and s.topics and s.lewissplit in ("TRAIN", "TEST")
            if modapte and s.topics[0] in REUTERS_TOP10:
                (train if s.lewissplit == "TRAIN" else test).append(
                    (f"reuters:{s.newid}", s.text, s.topics[0])
                )
            left_out["read"] += 1
            if not modapte:
                left_out["outside"] += 1
            elif s.lewissplit == "TRAIN":
                left_out["TRAIN"] += 1
            elif s.topics[0] not in REUTERS_TOP10:
                left_out["off"] += 1
    theirs, accuracy = sklearn_text(MultinomialNB(alpha=1.0), train, test)
    assert len(test) == metrics["documents"] == 2499
    assert (
        f"stories read: {left_out['read']:,}   used: 2,499   left out: {left_out['outside']:,} outside "
        f"ModApte (not TRAIN or TEST, TOPICS not YES, or no topic); {left_out['TRAIN']:,} in splits other "
        f"than test.splits; {left_out['off']:,} first topic not among the top ten (nb.labels = top10)"
    ) in (tmp_path / "r" / "report.txt").read_text().splitlines()
    assert ours == theirs
    assert loaded_predictions(tmp_path / "m", test) == ours  # nbspark.load, no Spark, row for row
    assert metrics["accuracy"] == pytest.approx(accuracy)


@pytest.mark.parametrize(
    "name, estimator",
    [("sms_multinomial", MultinomialNB(alpha=1.0)), ("sms_bernoulli", BernoulliNB(alpha=1.0))],
)
def test_sms_equals_sklearn(spark, data_dir, tmp_path, name, estimator):
    metrics, ours = run(spark, name, data_dir, tmp_path)
    train, test, offset = [], [], 0
    for raw in (data_dir / "smsspam" / "SMSSpamCollection").read_bytes().split(b"\n"):
        if raw.strip():
            label, text = raw.decode("utf-8").split("\t", 1)  # label TAB text, as the collection says
            label = label.strip()
            doc_id = f"SMSSpamCollection@{offset}"
            (test if holdout_part(doc_id, 42, 0.2) == "test" else train).append((doc_id, text, label))
        offset += len(raw) + 1
    theirs, accuracy, log_loss = sklearn_text(estimator, train, test, log_loss=True)
    assert len(train) + len(test) == 5574 and metrics["documents"] == len(test)
    assert ours == theirs
    assert loaded_predictions(tmp_path / "m", test) == ours
    assert metrics["accuracy"] == pytest.approx(accuracy)
    assert metrics["log_loss"] == pytest.approx(
        log_loss, rel=1e-6
    )  # two classes: every gold posterior is kept


def test_wine_gaussian_equals_sklearn(spark, tmp_path):
    from sklearn.datasets import load_wine

    cfg = load_config(ROOT / "conf/experiments/wine_gaussian.toml")
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    metrics = classify_nb(spark, cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / "r")
    data = load_wine()
    part = np.array([holdout_part(str(i), 42, 0.2) for i in range(len(data.target))])
    names = np.array(data.target_names)
    ref = GaussianNB().fit(data.data[part == "train"], names[data.target[part == "train"]])
    pred = ref.predict(data.data[part == "test"])
    ours = {
        int(r["id"]): r["predicted"]  # a string: one label per row
        for r in spark.read.parquet(str(tmp_path / "r" / "predictions")).collect()
    }
    assert [ours[i] for i in np.flatnonzero(part == "test")] == list(pred)
    import nbspark

    names_ = [str(n).replace(" ", "_") for n in data.feature_names]
    rows = [dict(zip(names_, map(float, data.data[i]))) for i in np.flatnonzero(part == "test")]
    loaded = nbspark.load(tmp_path / "m")
    assert loaded.predict(rows).tolist() == list(pred)
    order = [names_.index(c) for c in loaded.feature_names_in_]  # scikit-learn's names, its numbers
    assert list(loaded.classes_) == list(ref.classes_)
    np.testing.assert_allclose(loaded.theta_, ref.theta_[:, order], rtol=1e-12)
    np.testing.assert_allclose(loaded.var_, ref.var_[:, order], rtol=1e-9)
    assert metrics["accuracy"] == pytest.approx(np.mean(pred == names[data.target[part == "test"]]))


@pytest.mark.parametrize("source, fmt", [("smsspam/SMSSpamCollection", "sms")])
def test_dataframe_engine_equals_python_on_real_text(spark, data_dir, tmp_path, source, fmt):
    """Java's Unicode \\W split and Python's \\w+ must make the same tokens on real text."""
    from pyspark.testing import assertDataFrameEqual

    from nbspark.naive_bayes.events import COUNT_DDL
    from nbspark.storage.tables import read_parquet_checked

    tables = []
    for engine in ("combine", "dataframe", "arrow"):
        cfg = load_config(
            None,
            {
                "task": "naive_bayes",
                "nb.tokenizer": "words",
                "engine": engine,
                "train.format": fmt,
                "train.path": source,
            },
        )
        train_nb(spark, cfg, resolve_input(cfg.train, str(data_dir)), tmp_path / engine)
        tables.append(read_parquet_checked(spark, tmp_path / engine / "counts", COUNT_DDL))
    assertDataFrameEqual(tables[1], tables[0], checkRowOrder=False)
    assertDataFrameEqual(tables[-1], tables[0], checkRowOrder=False)
