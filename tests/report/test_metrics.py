import json

import pytest

from nbspark.report.metrics import (
    backoff_metrics,
    classification_metrics,
    format_classification_report,
    format_level_table,
)


def test_backoff_metrics_hand_counted():
    triples = [
        ("affect", "affect", "ABD", 1),
        ("effect", "affect", "BD", 1),
        ("effect", "effect", "", 3),
        ("affect", "effect", "B", 2),
    ]
    m = backoff_metrics(triples, ("ABDE", "ABD", "BD", "B", ""), "effect")
    assert m["examples"] == 7 and m["correct"] == 4
    assert m["accuracy"] == pytest.approx(4 / 7)
    assert m["majority_baseline"] == pytest.approx(4 / 7)  # 4 of 7 gold labels are effect
    assert m["gold_labels"] == {"affect": 3, "effect": 4}
    levels = {lv["name"]: lv for lv in m["levels"]}
    assert list(levels) == ["ABDE", "ABD", "BD", "B", "∅"]
    assert levels["ABDE"]["examples"] == 0 and levels["ABDE"]["accuracy"] is None
    assert (levels["B"]["examples"], levels["B"]["correct"]) == (2, 0)
    assert levels["∅"]["accuracy"] == 1.0 and levels["∅"]["coverage"] == pytest.approx(3 / 7)
    table = format_level_table(m)
    assert table.splitlines()[-1].split() == ["all", "7", "4", "0.5714"]


def test_no_examples():
    m = backoff_metrics([], ("B", ""), "effect")
    assert m["examples"] == 0 and m["accuracy"] is None and m["majority_baseline"] is None
    assert "all" in format_level_table(m)


def test_unseen_level_is_reported():
    m = backoff_metrics([("a", None, "unseen", 2)], ("AB",), "a")
    assert [lv["subset"] for lv in m["levels"]] == ["AB", "unseen"]
    assert m["accuracy"] == 0.0


def test_classification_metrics_agree_with_sklearn():
    from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

    gold = ["a", "a", "b", "c", "c", "c", "b", "a"]
    pred = ["a", "b", "b", "c", "a", "c", "c", "a"]
    from collections import Counter

    pairs = [((g,), (p,), n) for (g, p), n in Counter(zip(gold, pred)).items()]
    m = classification_metrics(pairs, ("a", "b", "c"))
    assert m["accuracy"] == pytest.approx(accuracy_score(gold, pred))
    assert m["micro_f1"] == pytest.approx(f1_score(gold, pred, average="micro"))
    assert m["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro"))
    p, r, f, s = precision_recall_fscore_support(gold, pred, labels=["a", "b", "c"])
    assert [m["per_class"][c]["recall"] for c in "abc"] == pytest.approx(list(r))
    assert [m["per_class"][c]["support"] for c in "abc"] == list(s)
    assert m["confusion"]["c"] == {"c": 2, "a": 1}
    # the table in label order, whatever order the pairs came in (Spark's partitions, or in process):
    # metrics.json and metrics.csv are the same files
    flipped = classification_metrics(pairs[::-1], ("a", "b", "c"))
    assert json.dumps(flipped["confusion"]) == json.dumps(m["confusion"])
    assert list(m["confusion"]) == sorted(m["confusion"]) and list(m["confusion"]["c"]) == ["a", "c"]


def test_multilabel_micro_f1_agrees_with_sklearn():
    from sklearn.metrics import f1_score
    from sklearn.preprocessing import MultiLabelBinarizer

    gold = [("a", "b"), ("b",), ("c",), ("a", "c")]
    pred = [("a",), ("b",), ("b",), ("a", "c")]
    mlb = MultiLabelBinarizer(classes=["a", "b", "c"]).fit(gold)
    m = classification_metrics([(g, p, 1) for g, p in zip(gold, pred)])
    assert m["micro_f1"] == pytest.approx(f1_score(mlb.transform(gold), mlb.transform(pred), average="micro"))
    assert m["macro_f1"] == pytest.approx(f1_score(mlb.transform(gold), mlb.transform(pred), average="macro"))
    assert m["accuracy"] == 0.5 and m["confusion"] is None


def test_unseen_gold_label_is_an_error_not_a_crash():
    m = classification_metrics([(("new",), ("a",), 2), (("a",), ("a",), 2)], ("a",))
    assert m["accuracy"] == 0.5 and m["unseen_gold_labels"] == ["new"]
    assert "never seen in training" in format_classification_report(m)


def test_a_classify_report_says_what_the_scores_left_out():
    """Skipped records (with the first ones), unseen features and training-data accuracy follow the
    task's report, in report.txt and on the command line alike; a clean run adds nothing."""
    from nbspark.spine.classifying import results_report

    metrics = {
        "input_stats": {
            "rows_read": 15,
            "malformed": 2,
            "malformed.numeric": 1,
            "malformed.label": 1,
            "missing_values": 4,
        },
        "malformed_examples": [
            {"source": "table:/d/w.csv", "offset": 14, "reason": "numeric", "line": "temperature=warm"}
        ],
        "unknown_features": 3,
        "test_is_training_data": True,
    }
    assert results_report(lambda m: "REPORT", metrics).splitlines() == [
        "REPORT",
        "",
        "malformed records skipped: 2 (label=1, numeric=1)",
        "  /d/w.csv row 14 (numeric): 'temperature=warm'",
        "missing cells (feature left out): 4   non-finite: 0",
        "tokens or values the model never saw (left out of the scores): 3",
        "note: the test records are the records the model was trained on: these figures are on the "
        "training data, not on held-out data",
    ]
    assert (
        results_report(lambda m: "REPORT", {"input_stats": {"rows_read": 15}, "unknown_features": 0})
        == "REPORT"
    )


def test_class_sizes_show_the_largest_and_the_smallest():
    from nbspark.report.format import class_sizes

    assert class_sizes({"spam": 2, "ham": 3, "label": 1}) == "documents per class: ham=3, spam=2, label=1"
    many = {f"c{i:02d}": 100 - i for i in range(20)} | {"label": 1}
    assert class_sizes(many) == (
        "documents per class: c00=100, c01=99, c02=98, c03=97, c04=96, c05=95, … 9 more …, "
        "c15=85, c16=84, c17=83, c18=82, c19=81, label=1"
    )
    from nbspark.report.format import format_nb_train_report

    manifest = {
        "model": "gaussian",
        "seconds": 1.0,
        "stats": {"documents": 4},
        "malformed_examples": [],
        "features": 20,
        "label_counts": {"a": 4},
        "columns": {"numeric": [f"x{i}" for i in range(20)], "categorical": []},
    }
    assert format_nb_train_report(manifest, "m").splitlines()[3] == (
        "numeric columns: x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, … (20 in all: manifest.json "
        "lists them)   categorical columns: -"
    )


def test_flat_metrics_names_as_json_normalize_names_them():
    import io
    import json

    import pandas as pd

    from nbspark.report.metrics import flat_metrics

    metrics = {
        "accuracy": 0.75,
        "per_class": {"spam": {"f1": 0.5, "support": 2}, "ham, eggs": {"f1": 1.0, "support": 2}},
        "classes": ["ham, eggs", "spam"],
        "empty": {},
        "model": None,
    }
    text = flat_metrics(metrics)
    assert text.splitlines() == [
        "metric,value",
        "accuracy,0.75",
        "per_class.spam.f1,0.5",
        "per_class.spam.support,2",
        '"per_class.ham, eggs.f1",1.0',
        '"per_class.ham, eggs.support",2',
        'classes,"[""ham, eggs"", ""spam""]"',
        "empty,{}",
        "model,",
    ]
    flat = pd.read_csv(io.StringIO(text)).set_index("metric")["value"]
    assert json.loads(flat["classes"]) == ["ham, eggs", "spam"]
    assert set(flat.index) - {"empty"} == set(pd.json_normalize(metrics).columns) - {"empty"}
