"""``nbspark curve`` (``app.curve``): refusals before any work (each used to give a wrong or lost
result)."""

import sys

from nbspark.app.curve import curve_main
from tests.conftest import ROOT


def test_learning_curve_refuses_a_naive_bayes_config(capsys, tmp_path):
    """It used to train an affect/effect model on Reuters and draw curve.png titled reuters_top10."""
    code = curve_main(
        ["--config", str(ROOT / "conf/experiments/reuters_top10.toml"), "--out", str(tmp_path / "c")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [
        "learning_curve.py: error: learning curves are drawn for backoff and density models; reuters_top10 "
        "has task = 'naive_bayes'"
    ]
    assert not (tmp_path / "c").exists()


def test_learning_curve_without_matplotlib_refuses_before_any_work(capsys, tmp_path, monkeypatch, fixtures):
    """It used to train every fraction, then lose the CSV and JSON in a traceback."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    code = curve_main(
        [
            "--set",
            f"train.path={fixtures / 'ngrams.txt'}",
            "--set",
            f"test.path={fixtures / 'mini.sgm'}",
            "--out",
            str(tmp_path / "c"),
        ]
    )
    assert code == 2 and "needs matplotlib: pip install 'nbspark[plot]'" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
