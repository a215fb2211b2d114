"""The density learning curve (``nbspark curve`` of a density task), in process: nested fractions,
each point's held-out log-likelihood equal to a model trained on that fraction alone and scored by
``nbspark.load``, and the files it writes."""

import json
import math

import pandas as pd
import pytest

import nbspark
from nbspark.app.command import main
from nbspark.density.curves import density_curve
from nbspark.density.jobs import train_density_in_process
from nbspark.errors import InputError
from nbspark.inputs.parsers import holdout_part
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from tests.density.test_scoring import _cfg as weather_cfg
from tests.density.test_scoring import _tables


def _cfg(tmp_path, **more):
    _tables(tmp_path)  # the weather table's first 10 rows to train on, the other 5 to score
    return weather_cfg(tmp_path, **more)


def test_each_point_is_a_model_of_its_fraction_alone(tmp_path):
    pytest.importorskip("matplotlib")
    cfg = _cfg(tmp_path, **{"density.m": "1"})
    fractions = [0.3, 0.6, 1.0]
    rows = density_curve(
        cfg, resolve_input(cfg.train, None), resolve_input(cfg.test, None), tmp_path / "curve", fractions, 3
    )
    train = pd.read_csv(tmp_path / "train.csv", dtype=str)
    test = pd.read_csv(tmp_path / "test.csv", dtype=str).to_dict("records")
    previous: set = set()
    for fraction, row in zip(fractions, rows):
        kept = [i for i in range(len(train)) if holdout_part(str(i), 3, fraction) == "test"]
        assert previous <= set(kept) and row["training_rows"] == len(kept)  # nested
        previous = set(kept)
        train.iloc[kept].to_csv(tmp_path / "part.csv", index=False)
        alone = load_config(
            None,
            {
                "task": "density",
                "train.format": "csv",
                "train.path": str(tmp_path / "part.csv"),
                "density.m": "1",
            },
        )
        train_density_in_process(alone, tmp_path / "alone", overwrite=True)
        model = nbspark.load(tmp_path / "alone")
        for estimator in ("joint", "naive"):
            logs = model.log_density(test, model=estimator)
            want = sum(logs) / len(logs) if all(x > -math.inf for x in logs) else "-inf"
            got = row[estimator]["held_out_log_likelihood"]
            assert got == want if isinstance(want, str) else got == pytest.approx(want, abs=1e-12)
    saved = json.loads((tmp_path / "curve" / "curve.json").read_text())
    assert saved["rows"] == rows and saved["m"] == 1.0
    assert (tmp_path / "curve" / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "curve" / "curve.csv").read_text().splitlines()[0].startswith("fraction,training_rows")


def test_the_command_draws_the_density_curve_without_spark(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    cfg = _cfg(tmp_path)
    sets = [
        "--set", "task=density", "--set", "train.format=csv", "--set", f"train.path={cfg.train.path}",
        "--set", "test.format=csv", "--set", f"test.path={cfg.test.path}",
    ]  # fmt: skip
    assert (
        main(["curve", *sets, "--fractions", "0.5,1", "--target", "play", "--out", str(tmp_path / "c")]) == 0
    )
    out = capsys.readouterr().out
    full = json.loads((tmp_path / "c" / "curve.json").read_text())["rows"][-1]  # every training row
    density = train_density_in_process(cfg, tmp_path / "all") and nbspark.load(tmp_path / "all")
    test = pd.read_csv(tmp_path / "test.csv", dtype=str).to_dict("records")
    for estimator in ("joint", "naive"):
        accuracy = density.classifier("play", estimator).score(test, [r["play"] for r in test])
        assert full[estimator]["accuracy"] == accuracy
    assert "acc joint  acc naive" in out
    assert "fraction      rows  distinct     joint  (zero)     naive  (zero)" in out
    assert "-inf" in out  # m = 0: a cloudy test day has probability 0 under both


def test_a_fraction_that_samples_no_row_is_left_out_and_said(tmp_path, caplog):
    """The default fractions start at 0.01: of a 10-row table it samples none, and the curve died in
    a ``ZeroDivisionError`` (a model of no rows). Such a point is left out, in a warning; a curve
    with no point is refused in one line, nothing written."""
    pytest.importorskip("matplotlib")
    cfg = _cfg(tmp_path)
    train, test = resolve_input(cfg.train, None), resolve_input(cfg.test, None)
    empty = [
        f for f in (0.01, 0.02, 0.05) if not any(holdout_part(str(i), 0, f) == "test" for i in range(10))
    ]
    assert empty  # the case this test is about, for the fixture's 10 rows and seed 0
    caplog.set_level("WARNING", logger="nbspark")
    rows = density_curve(cfg, train, test, tmp_path / "curve", [empty[0], 1.0], 0)
    assert [r["fraction"] for r in rows] == [1.0] and rows[0]["training_rows"] == 10
    assert (
        f"fraction {empty[0]:g}: none of the 10 training rows (seed 0); left out of the curve" in caplog.text
    )
    with pytest.raises(
        InputError, match=r"no fraction \(.*\) samples any of its 10 training rows \(seed 0\)"
    ):
        density_curve(cfg, train, test, tmp_path / "none", empty, 0)
    assert not (tmp_path / "none").exists()
