from pathlib import Path

import pytest

from nbspark.config import DEFAULT, DataNotFound, InputSpec, load_config, resolve_data_dir

ROOT = Path(__file__).parent.parent


def test_default_is_the_affect_effect_experiment():
    assert DEFAULT.confusion_set == ("affect", "effect")
    assert DEFAULT.backoff == ("ABDE", "ABD", "BD", "B", "")
    assert DEFAULT.train == InputSpec("ngrams", "aeffect/aeffect-train.txt")
    assert DEFAULT.test == InputSpec("reuters", "reuters21578")
    assert DEFAULT.counted_subsets == ("ABDE", "ABD", "BD", "B", "")


def test_shipped_configs_load():
    default = load_config(ROOT / "conf/experiments/affect_effect.toml")
    assert default == DEFAULT
    reuters = load_config(ROOT / "conf/experiments/affect_effect_reuters.toml")
    assert reuters.train == InputSpec("reuters", "reuters21578", ("TRAIN",))
    assert reuters.test == InputSpec("reuters", "reuters21578", ("TEST",))
    assert reuters.model_dir != DEFAULT.model_dir


def test_overrides_are_typed():
    cfg = load_config(None, {"mode": "failfast", "train.path": "x.txt", "backoff": "BD,B,", "confusion_set": "their,there"})
    assert cfg.mode == "failfast" and cfg.train.path == "x.txt"
    assert cfg.backoff == ("BD", "B", "")
    assert cfg.counted_subsets == ("ABDE", "BD", "B", "")
    assert cfg.confusion_set == ("their", "there")
    wide = load_config(None, {"width": "7", "backoff": "BCEF,CE,"})
    assert wide.centre == "D" and wide.counted_subsets == ("ABCEFG", "BCEF", "CE", "")


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"mode": "lenient"}, "mode must be one of"),
        ({"backoff": "ACD"}, "'C' is the label"),
        ({"backoff": "DB"}, "in order"),
        ({"width": "4"}, "width must be odd"),
        ({"width": "x"}, "must be an integer"),
        ({"confusion_set": "affect"}, "at least two distinct"),
        ({"colour": "red"}, "unknown setting"),
        ({"train.colour": "red"}, "unknown setting"),
        ({"train.format": "xml"}, "input format"),
        ({"task": "svm"}, "task must be"),
        ({"nb.model": "complement"}, "nb.model must be"),
        ({"train.holdout": "1.5"}, "holdout must be"),
        ({"nb.alpha": "x"}, "must be a number"),
        ({"lowercase": "maybe"}, "true or false"),
    ],
)
def test_bad_overrides(overrides, message):
    with pytest.raises(ValueError, match=message):
        load_config(None, overrides)


def test_bad_toml(tmp_path):
    bad = tmp_path / "x.toml"
    bad.write_text("name = \n")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_config(bad)
    bad.write_text('nmae = "typo"\n')
    with pytest.raises(ValueError, match="unknown key"):
        load_config(bad)


def test_data_dir_order(tmp_path):
    (tmp_path / "env" / "c").mkdir(parents=True)
    (tmp_path / "work" / "data" / "c").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "c").mkdir(parents=True)
    cwd = tmp_path / "work"
    env = {"NBSPARK_DATA": str(tmp_path / "env")}
    assert resolve_data_dir("c", None, env, cwd) == tmp_path / "env"
    assert resolve_data_dir("c", None, {}, cwd) == cwd / "data"
    (cwd / "data" / "c").rmdir()
    assert resolve_data_dir("c", None, {}, cwd) == tmp_path / "shared" / "data"
    with pytest.raises(DataNotFound) as info:
        resolve_data_dir("c", str(tmp_path / "nowhere"), env, cwd)
    assert "--data-dir" in str(info.value) and "scripts/fetch_data.sh" in str(info.value)
    with pytest.raises(DataNotFound, match=r"NBSPARK_DATA.*\./data.*\.\./shared/data"):
        resolve_data_dir("missing", None, env, cwd)
