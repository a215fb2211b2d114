"""``nbspark curve`` (``app.curve``): refusals before any work (each used to give a wrong or lost
result)."""

import sys

import pytest

from nbspark.app.curve import curve_main
from nbspark.backoff.curves import check_curve
from nbspark.errors import ConfigError
from nbspark.settings.config import load_config
from tests.conftest import ROOT


def test_the_backoff_curve_refuses_another_familys_config():
    """It used to train an affect/effect model on Reuters and draw curve.png titled reuters_top10; the
    command now draws a naive Bayes config's curve by its own family (``naive_bayes.curves``)."""
    cfg = load_config(ROOT / "conf/experiments/reuters_top10.toml")
    with pytest.raises(
        ConfigError, match="^backoff.curves draws a backoff model's curve; reuters_top10 has task"
    ):
        check_curve(cfg)


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
