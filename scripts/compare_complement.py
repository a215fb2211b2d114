"""Complement naive Bayes: nbspark against scikit-learn's ComplementNB (both ``norm``) and MLlib's
``modelType="complement"``, document by document, on Reuters top-10 and the SMS collection.

    python scripts/compare_complement.py [--data-dir DIR] [--json F]

Every contender sees the same documents and tokens: nbspark's reader and tokenizer of the
experiment config (``conf/experiments/reuters_top10.toml``, ``sms_multinomial.toml``) give them,
and scikit-learn and MLlib count those token lists. nbspark trains and classifies with its jobs
(``train_nb``, ``classify_nb``, every posterior kept), MLlib fits a CountVectorizer and NaiveBayes.
For each pair it prints how many predicted labels differ and the largest gap between the two
probabilities of any class of any document; then accuracy and macro-F1 of every model, the
multinomial ones beside them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nbspark.inputs.resolve import resolve_input  # noqa: E402
from nbspark.naive_bayes.inputs import Doc, records_rdd  # noqa: E402
from nbspark.naive_bayes.jobs import classify_nb, train_nb  # noqa: E402
from nbspark.settings.config import load_config  # noqa: E402
from nbspark.spark.session import get_spark, stop_spark  # noqa: E402

TASKS = {
    "reuters_top10": "conf/experiments/reuters_top10.toml",
    "sms": "conf/experiments/sms_multinomial.toml",
}


def documents(spark, cfg, spec) -> list[Doc]:
    """The documents of ``spec`` as nbspark's jobs read and tokenize them, in id order."""
    rdd, _ = records_rdd(spark, resolve_input(spec, None), cfg)
    return sorted((r for r in rdd.collect() if isinstance(r, Doc)), key=lambda d: d.id)


def scores(gold: list[str], predicted: list[str], classes: list[str]) -> dict:
    accuracy = float(np.mean([g == p for g, p in zip(gold, predicted)]))
    f1s = []
    for c in classes:
        tp = sum(g == c and p == c for g, p in zip(gold, predicted))
        fp = sum(g != c and p == c for g, p in zip(gold, predicted))
        fn = sum(g == c and p != c for g, p in zip(gold, predicted))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return {"accuracy": round(accuracy, 4), "macro_f1": round(float(np.mean(f1s)), 4)}


def compare(ours: np.ndarray, theirs: np.ndarray) -> dict:
    return {
        "labels_differ": int(np.sum(ours.argmax(axis=1) != theirs.argmax(axis=1))),
        "largest_probability_gap": float(np.abs(ours - theirs).max()),
    }


def run_task(spark, name: str, config: str, work: Path) -> dict:
    from pyspark.ml.classification import NaiveBayes
    from pyspark.ml.feature import CountVectorizer as SparkCountVectorizer
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import ComplementNB, MultinomialNB

    base = load_config(str(ROOT / config), {})
    train, test = documents(spark, base, base.train), documents(spark, base, base.test)
    train = [d for d in train if d.labels]
    classes = sorted({label for d in train for label in d.labels})
    gold = [d.labels[0] for d in test]
    ids = [d.id for d in test]

    def as_array(posteriors: dict) -> np.ndarray:
        return np.array([[posteriors[i].get(c, 0.0) for c in classes] for i in ids])

    models = {}
    for label, overrides in (
        ("nbspark multinomial", {"nb.model": "multinomial"}),
        ("nbspark complement", {"nb.model": "complement"}),
        ("nbspark complement, norm", {"nb.model": "complement", "nb.norm": "true"}),
    ):
        run = load_config(str(ROOT / config), {**overrides, "nb.posteriors": "all"})
        model = work / f"{name}-{len(models)}"
        train_nb(spark, run, resolve_input(run.train, None), model)
        out = work / f"{name}-{len(models)}-results"
        classify_nb(spark, run, model, resolve_input(run.test, None), out)
        rows = spark.read.parquet(str(out / "predictions")).collect()
        models[label] = as_array(
            {r["id"]: dict(zip(r["ranked_labels"], r["ranked_probabilities"])) for r in rows}
        )

    # scikit-learn on the same token lists (a document of several labels counts once per label)
    vectorizer = CountVectorizer(analyzer=lambda tokens: tokens).fit([d.tokens for d in train])
    X = vectorizer.transform([d.tokens for d in train for _ in d.labels])
    y = [label for d in train for label in d.labels]
    X_test = vectorizer.transform([d.tokens for d in test])
    for label, estimator in (
        ("scikit-learn MultinomialNB", MultinomialNB(alpha=1.0)),
        ("scikit-learn ComplementNB", ComplementNB(alpha=1.0, norm=False)),
        ("scikit-learn ComplementNB, norm", ComplementNB(alpha=1.0, norm=True)),
    ):
        fitted = estimator.fit(X, y)
        assert list(fitted.classes_) == classes
        models[label] = fitted.predict_proba(X_test)

    # MLlib on the same token lists, labels indexed in the classes' order
    index = {c: float(i) for i, c in enumerate(classes)}
    frame = spark.createDataFrame(
        [(d.tokens, index[label]) for d in train for label in d.labels], "tokens ARRAY<STRING>, label DOUBLE"
    )
    test_frame = spark.createDataFrame(
        [(i, d.tokens) for i, d in enumerate(test)], "n INT, tokens ARRAY<STRING>"
    )
    cv = SparkCountVectorizer(inputCol="tokens", outputCol="features", vocabSize=1 << 22).fit(frame)
    for label, model_type in (("MLlib multinomial", "multinomial"), ("MLlib complement", "complement")):
        fitted = NaiveBayes(smoothing=1.0, modelType=model_type).fit(cv.transform(frame))
        rows = sorted(fitted.transform(cv.transform(test_frame)).select("n", "probability").collect())
        models[label] = np.array([r["probability"].toArray() for r in rows])

    pairs = {
        "nbspark complement vs scikit-learn ComplementNB": (
            "nbspark complement",
            "scikit-learn ComplementNB",
        ),
        "nbspark complement, norm vs scikit-learn ComplementNB, norm": (
            "nbspark complement, norm",
            "scikit-learn ComplementNB, norm",
        ),
        "nbspark complement vs MLlib complement": ("nbspark complement", "MLlib complement"),
        "nbspark multinomial vs scikit-learn MultinomialNB": (
            "nbspark multinomial",
            "scikit-learn MultinomialNB",
        ),
    }
    return {
        "documents": {"train": len(train), "test": len(test), "classes": len(classes)},
        "agreement": {k: compare(models[a], models[b]) for k, (a, b) in pairs.items()},
        "quality": {
            k: scores(gold, [classes[i] for i in p.argmax(axis=1)], classes) for k, p in models.items()
        },
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    spark = get_spark("nbspark-compare-complement", {"spark.sql.shuffle.partitions": "4"})
    results = {}
    try:
        with tempfile.TemporaryDirectory() as work:
            for name, config in TASKS.items():
                results[name] = run_task(spark, name, config, Path(work))
    finally:
        stop_spark(spark)
    for name, result in results.items():
        print(f"\n{name}: {result['documents']}")
        for pair, got in result["agreement"].items():
            print(
                f"  {pair:<62} labels differ {got['labels_differ']:>4}   "
                f"largest gap {got['largest_probability_gap']:.2e}"
            )
        for model, got in result["quality"].items():
            print(f"  {model:<34} accuracy {got['accuracy']:.4f}   macro-F1 {got['macro_f1']:.4f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
