"""``nbspark check``: confused words in plain text, flagged with their line and column (counted by
hand from tests/data/ngrams.txt: ABDE ``would not _ the outcome`` = affect 6, effect 1;
``does not _ the ratio`` = affect 3; ``the cumulative _ of the`` = effect 10, affect 2)."""

import json

import pytest

import nbspark
from nbspark.backoff_jobs import train
from nbspark.command import main
from nbspark.config import load_config
from nbspark.inputs import resolve_input

pytestmark = pytest.mark.spark

TEXT = "It would not effect the outcome.\nThe cumulative effect of the plan was small.\n  It does not effect the ratio.\n"


@pytest.fixture(scope="module")
def model_dir(spark, tmp_path_factory):
    from tests.conftest import FIXTURES

    out = tmp_path_factory.mktemp("check") / "m"
    cfg = load_config(None, {"train.path": str(FIXTURES / "ngrams.txt"), "confusion_sets": "affect,effect;their,there"})
    train(spark, cfg, resolve_input(cfg.train, None), out)
    return out


def test_flags_positions_and_ratios(model_dir):
    flags = nbspark.load(model_dir).flags(TEXT, factor=5)
    assert [(f["line"], f["column"], f["written"], f["suggestion"], f["ratio"], f["level"]) for f in flags] == [
        (1, 14, "effect", "affect", 6.0, "ABDE"),  # 6 against 1
        (3, 15, "effect", "affect", float("inf"), "ABDE"),  # effect never seen there
    ]
    assert flags[0]["snippet"] == "It would not effect the outcome."


def test_the_factor_edge(model_dir):
    model = nbspark.load(model_dir)
    assert [f["line"] for f in model.flags(TEXT, factor=6)] == [1, 3]  # exactly 6 times: flagged
    assert [f["line"] for f in model.flags(TEXT, factor=6.000001)] == [3]


def test_correct_text_and_a_set_never_counted(model_dir):
    model = nbspark.load(model_dir)
    assert model.flags("The cumulative effect of the changes was small.", factor=1) == []
    # their/there are a confusion set of the model that no training line held: nothing to say
    assert model.flags("They left their coats over there.", factor=1) == []
    assert model.flags("No confusable word here.", factor=1) == []


def test_command_line(model_dir, tmp_path, capsys):
    doc = tmp_path / "doc.txt"
    doc.write_text(TEXT)
    assert main(["check", "--model", str(model_dir), "--factor", "5", str(doc)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{doc}:1:14: 'effect' → 'affect'? (ratio 6.0, level ABDE) It would not effect the outcome."
    assert lines[1].startswith(f"{doc}:3:15: 'effect' → 'affect'? (ratio inf, level ABDE)")
    assert main(["check", "--model", str(model_dir), "--json", "--fail-on-flag", str(doc)]) == 1
    flags = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [sorted(f) for f in flags] == [sorted(["file", "line", "column", "written", "suggestion", "ratio", "level", "snippet"])]
    assert flags[0]["line"] == 3 and flags[0]["ratio"] is None  # at the default factor 10 only the unseen one
