import pytest

from nbspark.metrics import backoff_metrics, format_level_table


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
