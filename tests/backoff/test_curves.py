"""Learning curves: nested samples, one row per fraction, the table and the PNG written."""

import json

import pytest

from nbspark.backoff.curves import learning_curve
from nbspark.backoff.events import Example, in_sample
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config


def test_samples_are_nested_and_about_the_right_size():
    examples = [Example(f"s{i}", ("a", "b", "effect", "d", "e"), 1) for i in range(20000)]
    small = {e.source for e in examples if in_sample(e, 3, 0.1)}
    large = {e.source for e in examples if in_sample(e, 3, 0.3)}
    assert small <= large
    assert abs(len(small) - 2000) < 200 and abs(len(large) - 6000) < 300
    assert small != {e.source for e in examples if in_sample(e, 4, 0.1)}  # the seed matters


@pytest.mark.spark
def test_learning_curve_on_fixtures(spark, fixtures, tmp_path):
    cfg = load_config(
        None, {"train.path": str(fixtures / "ngrams.txt"), "test.path": str(fixtures / "mini.sgm")}
    )

    def curve(session, out):
        inputs = resolve_input(cfg.train, None), resolve_input(cfg.test, None)
        return learning_curve(session, cfg, *inputs, tmp_path / out, fractions=(0.3, 0.5, 1.0), seed=1)

    every = curve(spark, "curve")
    assert curve(None, "here") == every  # in process (no Spark: nbspark curve on local files): the same rows
    rows = every[1:]
    assert [r["fraction"] for r in rows] == [0.5, 1.0]
    assert rows[-1]["weight"] == 34 and rows[-1]["examples"] == 7 and rows[-1]["accuracy"] == 0.5
    assert rows[0]["weight"] <= 34 and all(r["test_examples"] == 4 for r in rows)
    saved = json.loads((tmp_path / "curve" / "curve.json").read_text())
    assert saved["rows"] == every
    assert (tmp_path / "curve" / "curve.csv").read_text().startswith("fraction,examples,weight")
    assert (tmp_path / "curve" / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "curve" / "work").exists()


@pytest.mark.parametrize("fractions", ["0,1", "0.5,1.5", "nan", "0.1,nan"])
def test_fractions_outside_the_unit_interval_are_refused(fractions, capsys):
    """Before any work (no Spark): NaN passed the old bounds check and sampled nothing."""
    from nbspark.app.curve import curve_main

    with pytest.raises(SystemExit) as exit_:
        curve_main(["--fractions", fractions, "--out", "unused"])
    assert exit_.value.code == 2 and "--fractions must lie in (0, 1]" in capsys.readouterr().err


def test_the_command_draws_a_curve_of_local_files_in_process(fixtures, tmp_path, capsys):
    """No spark mark (no JVM may start): nbspark curve on local files below the bound trains and
    scores in this process; the full fraction gives the fixture model's accuracy on mini.sgm."""
    from nbspark.app.command import main

    paths = ["--set", f"train.path={fixtures / 'ngrams.txt'}", "--set", f"test.path={fixtures / 'mini.sgm'}"]
    assert main(["curve", *paths, "--fractions", "0.5,1", "--out", str(tmp_path / "c")]) == 0
    rows = json.loads((tmp_path / "c" / "curve.json").read_text())["rows"]
    assert [(r["fraction"], r["weight"], r["accuracy"]) for r in rows][-1] == (1.0, 34, 0.5)
    assert "curve written to" in capsys.readouterr().out
