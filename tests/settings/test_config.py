import re
from pathlib import Path

import pytest

from nbspark.errors import ConfigError
from nbspark.inputs.resolve import DataNotFound, resolve_data_dir
from nbspark.inputs.spec import InputSpec
from nbspark.settings.config import DEFAULT, load_config

ROOT = Path(__file__).parents[2]


def test_default_is_the_affect_effect_experiment():
    assert DEFAULT.confusion_set == ("affect", "effect")
    assert DEFAULT.backoff == ("ABDE", "ABD", "BD", "B", "")
    assert DEFAULT.train == InputSpec("ngrams", "aeffect/aeffect-train.txt")
    assert DEFAULT.test == InputSpec("reuters", "reuters21578")
    assert DEFAULT.counted_subsets == ("ABDE", "ABD", "BD", "B", "")


def test_an_experiment_writes_under_its_own_name_unless_told(tmp_path):
    """A config named "x" that set no model_dir wrote to out/affect_effect/model, the demo's model
    (refused there, or replaced with --overwrite): each place is now the experiment's own."""
    (tmp_path / "x.toml").write_text('name = "x"\ntask = "naive_bayes"\n')
    cfg = load_config(tmp_path / "x.toml")
    assert (cfg.model_dir, cfg.results_dir) == ("out/x/model", "out/x/results")
    cfg = load_config(None, {"name": "y", "results_dir": "elsewhere"})
    assert (cfg.model_dir, cfg.results_dir) == ("out/y/model", "elsewhere")
    (tmp_path / "z.toml").write_text('name = "z"\nmodel_dir = "m"\n')
    assert load_config(tmp_path / "z.toml").model_dir == "m"
    assert load_config(None).model_dir == "out/affect_effect/model"  # the demo's, named so


def test_an_experiment_that_names_itself_not_is_named_after_its_file(tmp_path):
    """A user's config without ``name`` was the embedded experiment's, "affect_effect": its model
    went to out/affect_effect/model, refused there or, with --overwrite, replacing the demo's."""
    (tmp_path / "my_spam.toml").write_text('task = "naive_bayes"\n')
    cfg = load_config(tmp_path / "my_spam.toml")
    assert (cfg.name, cfg.model_dir, cfg.results_dir) == (
        "my_spam",
        "out/my_spam/model",
        "out/my_spam/results",
    )
    assert load_config(tmp_path / "my_spam.toml", {"name": "n"}).model_dir == "out/n/model"
    cfg = load_config(None, {"task": "naive_bayes"})  # no file: another task than the demo's
    assert (cfg.name, cfg.model_dir) == ("naive_bayes", "out/naive_bayes/model")
    assert load_config(None, {"train.path": "x.txt"}).name == "affect_effect"  # the demo's, changed


def test_shipped_configs_load():
    default = load_config(ROOT / "conf/experiments/affect_effect.toml")
    assert default == DEFAULT
    reuters = load_config(ROOT / "conf/experiments/affect_effect_reuters.toml")
    assert reuters.train == InputSpec("reuters", "reuters21578", ("TRAIN",))
    assert reuters.test == InputSpec("reuters", "reuters21578", ("TEST",))
    assert reuters.model_dir != DEFAULT.model_dir


def test_overrides_are_typed():
    cfg = load_config(
        None, {"mode": "failfast", "train.path": "x.txt", "backoff": "BD,B,", "confusion_set": "their,there"}
    )
    assert cfg.mode == "failfast" and cfg.train.path == "x.txt"
    assert cfg.backoff == ("BD", "B", "")
    assert cfg.counted_subsets == ("ABDE", "BD", "B", "")
    assert cfg.confusion_set == ("their", "there")
    # a list written as in the TOML file is read as TOML, not split on commas into '["their"' and '"there"]'
    as_toml = load_config(
        None,
        {
            "confusion_set": '["their", "there", "they\'re"]',
            "backoff": '["BD", ""]',
            "confusion_sets": '[["accept", "except"], ["lose", "loose"]]',
        },
    )
    assert as_toml.confusion_set == ("their", "there", "they're") and as_toml.backoff == ("BD", "")
    assert as_toml.confusion_sets == (("accept", "except"), ("lose", "loose"))
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
        ({"colour": "red"}, "unknown setting 'colour'$"),
        ({"train.colour": "red"}, "unknown setting 'train.colour'$"),
        ({"nb.alpah": "1"}, "unknown setting 'nb.alpah'; did you mean 'nb.alpha'\\?$"),
        ({"train.pth": "x"}, "unknown setting 'train.pth'; did you mean 'train.path'\\?$"),
        ({"mod": "failfast"}, "unknown setting 'mod'; did you mean 'mode'\\?$"),
        ({"train.format": "xml"}, "train.format must be one of"),
        ({"train.path": ""}, "train.path must name a file or a directory, got an empty string"),
        ({"test.path": " "}, "test.path must name a file or a directory, got an empty string"),
        ({"task": "svm"}, "task must be"),
        ({"nb.model": "kernel"}, "nb.model must be"),
        ({"train.holdout": "1.5"}, "holdout must be"),
        ({"nb.alpha": "x"}, "must be a number"),
        ({"lowercase": "maybe"}, "true or false"),
        (
            {"confusion_set": "[affect, effect]"},
            r"""confusion_set: '\[affect, effect\]' is not a TOML array .*: write \["a", "b"\] or a,b""",
        ),
        (
            {"confusion_sets": '["their", "there"]'},
            "confusion_sets must be a list of lists of strings, got list",
        ),
        ({"confusion_set": "[1, 2]"}, "confusion_set must be a list of strings"),
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
    with pytest.raises(ValueError, match="unknown key\\(s\\) in .*x.toml: nmae; did you mean 'name'\\?$"):
        load_config(bad)
    bad.write_text("[nb]\nalpah = 1\n")
    with pytest.raises(ValueError, match=r"unknown key\(s\) in \[nb\]: alpah; did you mean 'alpha'\?$"):
        load_config(bad)
    # a file saved in another encoding: one line (was tomllib's UnicodeDecodeError, a traceback)
    bad.write_bytes('name = "café"\n'.encode("latin-1"))
    with pytest.raises(
        ValueError, match=r"x.toml: not valid TOML: not UTF-8 text \(byte 0xe9 at offset 11\)$"
    ):
        load_config(bad)
    # UTF-8 with a byte-order mark (Windows Notepad's "UTF-8 with BOM") is UTF-8
    bad.write_bytes('\ufeffname = "café"\n'.encode("utf-8"))
    assert load_config(bad).name == "café"


def test_data_dir_order(tmp_path):
    (tmp_path / "env" / "c").mkdir(parents=True)
    (tmp_path / "work" / "data" / "c").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "c").mkdir(parents=True)
    cwd = tmp_path / "work"
    env = {"NBSPARK_DATA": str(tmp_path / "env")}
    assert str(resolve_data_dir("c", None, env, cwd)) == str(tmp_path / "env")
    assert str(resolve_data_dir("c", None, {}, cwd)) == str(cwd / "data")
    (cwd / "data" / "c").rmdir()
    assert str(resolve_data_dir("c", None, {}, cwd)) == str(tmp_path / "shared" / "data")
    with pytest.raises(DataNotFound) as info:
        resolve_data_dir("c", str(tmp_path / "nowhere"), env, cwd)
    assert "--data-dir" in str(info.value) and "scripts/fetch_data.sh" in str(info.value)
    with pytest.raises(DataNotFound, match=r"NBSPARK_DATA.*\./data.*\.\./shared/data"):
        resolve_data_dir("missing", None, env, cwd)
    # a file of the user's own in the working directory: named, with the path to pass (it was told to fetch
    # the corpora)
    (cwd / "mine.tsv").write_text("d1\ta\tx\n")
    with pytest.raises(DataNotFound) as info:
        resolve_data_dir("./mine.tsv", None, {}, cwd)
    assert str(info.value).endswith(
        f"for the one in the working directory, pass its absolute path {str(cwd / 'mine.tsv')!r}"
    )
    assert "fetch_data" not in str(info.value)


@pytest.mark.parametrize(
    "toml, message",
    [
        # each of these loaded silently before, and strings were then iterated as characters
        (
            'confusion_set = "affect,effect"',
            r"confusion_set must be a list of strings, got str 'affect,effect'",
        ),
        (
            '[test]\nformat = "reuters"\npath = "x"\nsplits = "TRAIN"',
            r"test.splits must be a list of strings, got str 'TRAIN'",
        ),
        ('lowercase = "no"', r"lowercase must be true or false, got str 'no'"),
        ("partitions = 2.5", r"partitions must be an integer, got float 2.5"),
        ('[nb]\nalpha = "1"', r"nb.alpha must be a number, got str '1'"),
        ('confusion_sets = ["their"]', r"confusion_sets must be a list of lists of strings"),
        ("width = true", r"width must be an integer, got bool True"),
    ],
)
def test_toml_values_are_type_checked(tmp_path, toml, message):
    path = tmp_path / "x.toml"
    path.write_text(toml + "\n")
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_toml_integers_are_numbers(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("[nb]\nalpha = 1\n")
    assert load_config(path).nb.alpha == 1.0 and isinstance(load_config(path).nb.alpha, float)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"task": "naive_bayes", "nb.alpha": "nan"}, "nb.alpha must be a finite number"),
        ({"task": "naive_bayes", "nb.alpha": "inf"}, "nb.alpha must be a finite number"),
        ({"nb.var_smoothing": "nan"}, "nb.var_smoothing must be a finite number"),
        ({"nb.multilabel_threshold": "1.5"}, "nb.multilabel_threshold must be <= 1"),
        ({"nb.threshold": "0.5"}, "nb.threshold is now nb.multilabel_threshold"),
        ({"sample": "nan"}, "sample must be a finite number"),
        # confusion sets that could never count a window, or would compete twice: they trained silently
        (
            {"confusion_set": "Affect,effect"},
            "confusion-set word 'Affect' has upper case, but lowercase = true lower-cases the text: write "
            "'affect'",
        ),
        ({"confusion_set": "af fect,effect"}, "confusion-set word 'af fect' is empty or holds white space"),
        (
            {"confusion_sets": "their,there;there,they're"},
            r"'there' is in two confusion sets, \['their', 'there'\] and \['there', \"they're\"\]: make "
            r"them one set",
        ),
        ({"confusion_set": "affect,affect"}, "a confusion set needs at least two distinct words"),
        ({"train.holdout": "nan"}, "train.holdout must be a finite number"),
        ({"check.thin_factor": "0.5"}, "check.thin_factor must be a finite number >= 1, got 0.5"),
        ({"train.whole_file_mb": "-1"}, "train.whole_file_mb must be >= 0.0"),
        ({"train.whole_file_mb": "4096"}, "train.whole_file_mb must be <= 2047.0"),
        ({"partitions": "1e11"}, "partitions must be an integer, got '1e11'"),
        ({"partitions": "100000000000"}, "partitions must be at most 1,000,000"),
        # each named alone (the three were one message)
        ({"partitions": "-1"}, "^partitions must be >= 0, got -1$"),
        ({"broadcast_limit_mb": "-2"}, "^broadcast_limit_mb must be >= 0, got -2$"),
    ],
)
def test_numbers_must_be_finite_and_in_range(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


NB_SMS = {
    "task": "naive_bayes",
    "train.format": "sms",
    "test.format": "sms",
    "train.holdout": "0.2",
    "test.holdout": "0.2",
    "train.splits": "train",
    "test.splits": "test",
}


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"engine": "fast"}, "engine must be one of"),
        ({"scoring": "fast"}, "scoring must be one of"),
        ({"scoring": "join"}, "scoring join is for naive Bayes models"),
    ],
)
def test_settings_that_never_apply_are_refused_at_load(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


@pytest.mark.parametrize(
    "overrides, message",
    [
        # a backoff task cannot read naive Bayes inputs (examples_rdd used to read them as SGML)
        ({"train.format": "tsv"}, r"train.format 'tsv' is not a backoff input"),
        (
            {**NB_SMS, "train.format": "ngrams"},
            r"nb.model multinomial needs text .* but train.format is 'ngrams'",
        ),
        (
            {**NB_SMS, "nb.model": "gaussian"},
            r"nb.model gaussian needs a table .* but train.format is 'sms'; text takes nb.model = "
            "multinomial, bernoulli, complement$",
        ),
        # the naive Bayes task used to ignore sample; it samples by record id now, which the arrow
        # and SQL engines do not read
        ({**NB_SMS, "sample": "0.5", "engine": "arrow"}, "engine arrow counts every document"),
        ({**NB_SMS, "sample": "0.5", "engine": "dataframe"}, "engine dataframe counts every document"),
        ({"task": "density", "train.format": "csv", "sample": "0.5"}, "a density model counts every row"),
        (
            {"train.format": "google_v3", "engine": "arrow"},
            "engine arrow counts backoff models from ngrams input",
        ),
        (
            {"sample": "0.5", "engine": "arrow"},
            "engine arrow counts backoff models from ngrams input without sampling",
        ),
        ({"engine": "dataframe"}, "engine dataframe counts Google Books files"),
        ({**NB_SMS, "engine": "arrow"}, "engine arrow reads tsv or sms input without holdout"),
    ],
)
def test_a_training_input_that_cannot_be_counted_is_refused(overrides, message):
    """Checked by the train command before Spark starts (and by the train job itself)."""
    from nbspark.settings.capabilities import resolve_engine

    cfg = load_config(None, overrides)
    with pytest.raises(ConfigError, match=message):
        resolve_engine(cfg)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"test.format": "sms"}, r"test.format 'sms' is not a backoff input"),
        (
            {**NB_SMS, "test.format": "csv"},
            r"nb.model multinomial needs text .* but test.format is 'csv'; a table's columns take "
            r"nb.model = mixed \(numbers Gaussian, the rest categorical\), gaussian or categorical$",
        ),
        (
            {
                **NB_SMS,
                "train.format": "csv",
                "test.format": "csv",
                "nb.model": "gaussian",
                "scoring": "join",
            },
            "join scoring is for multinomial and Bernoulli",
        ),
        ({**NB_SMS, "scoring": "arrow"}, "scoring arrow reads tsv input without holdout"),
    ],
)
def test_a_test_input_that_cannot_be_classified_is_refused(overrides, message):
    """A config may only train, so the test input is checked where classify reads it, before Spark."""
    from nbspark.settings.capabilities import resolve_scoring

    cfg = load_config(None, overrides)
    with pytest.raises(ConfigError, match=message):
        resolve_scoring(cfg)


def test_capabilities_resolve_auto():
    from nbspark.settings.capabilities import resolve_engine, resolve_scoring

    assert resolve_engine(load_config(None, {})) == "arrow"
    assert resolve_engine(load_config(None, {"mode": "failfast"})) == "combine"
    assert resolve_engine(load_config(None, {"train.format": "google_v3"})) == "dataframe"  # the JVM filter
    assert resolve_engine(load_config(None, {"train.format": "google_v3", "mode": "failfast"})) == "combine"
    sms = {
        **{k: v for k, v in NB_SMS.items() if not k.endswith((".holdout", ".splits"))},
        "nb.tokenizer": "words",
    }
    assert resolve_engine(load_config(None, sms)) == "arrow"
    assert resolve_engine(load_config(None, {**sms, "nb.tokenizer": "nbspark"})) == "combine"
    # an sms line's record id (FILE@BYTE) is known to the Python readers only: one id whatever the scorer
    assert resolve_scoring(load_config(None, sms)) == "broadcast"
    tsv = {**sms, "test.format": "tsv", "test.path": "t.tsv"}
    assert resolve_scoring(load_config(None, tsv)) == "arrow"
    with pytest.raises(ConfigError, match="scoring arrow reads tsv input"):
        resolve_scoring(load_config(None, {**sms, "scoring": "arrow"}))
    assert resolve_scoring(load_config(None, sms), model_bytes=600 * 2**20) == "join"
    assert resolve_scoring(load_config(None, {})) == "broadcast"


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"nb.alpha": "0.5"}, "^nb.alpha applies to naive Bayes tasks, not to task = 'backoff'$"),
        (
            {"nb.model": "bernoulli", "nb.tokenizer": "words"},
            "^nb.model, nb.tokenizer apply to naive Bayes tasks",
        ),
        (
            {"task": "naive_bayes", "backoff": "BD,B,"},
            "^backoff applies to backoff tasks, not to task = 'naive_bayes'$",
        ),
        ({"task": "naive_bayes", "lowercase": "false"}, "^lowercase applies to backoff tasks"),
        ({"broadcast_limit_mb": "64"}, "^broadcast_limit_mb applies to naive Bayes tasks"),
        (
            {"task": "naive_bayes", "confusion_set": "their,there", "check.factor": "5"},
            "^confusion_set, check.factor apply to backoff tasks",
        ),
        (
            {"task": "naive_bayes", "worked_examples": "_ not _ _"},
            "^worked_examples applies to backoff tasks",
        ),
        (
            {"task": "density", "train.format": "csv", "sample_seed": "3"},
            "^sample_seed applies to backoff tasks",
        ),
    ],
)
def test_a_setting_of_the_other_task_is_refused(overrides, message):
    """A setting the task would ignore is refused when the config loads, never ignored; the defaults
    of the other task (every key a shown config writes) are not settings."""
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)
    assert (
        load_config(
            None, {"task": "naive_bayes", "nb.alpha": "0.5", "confusion_set": "affect,effect"}
        ).nb.alpha
        == 0.5
    )


@pytest.mark.parametrize(
    "overrides, problem",
    [
        (
            {"test.holdout": "0.2"},
            "test.holdout (read by tsv, sms, csv, parquet, sklearn) does not apply to test.format 'reuters'",
        ),
        (
            {"train.splits": "TRAIN", "train.seed": "3"},
            "train.splits (read by reuters, reuters_topics, tsv, sms, csv, parquet, sklearn), "
            "train.seed (read by tsv, sms, csv, parquet, sklearn) do not apply to train.format 'ngrams'",
        ),
        (
            {"train.format": "text", "train.path": "x", "train.year_min": "1990"},
            "train.year_min (read by google_v2, google_v3) does not apply",
        ),
        (
            {"test.document": "paragraph"},
            "test.document (read by text) does not apply to test.format 'reuters'",
        ),
        (
            {"test.delimiter": ";"},
            "test.delimiter (read by csv) does not apply to test.format 'reuters'",
        ),
        (
            {**NB_SMS, "train.holdout": "0", "train.splits": "train"},
            "train.splits: sms input has no split of its own; set train.holdout",
        ),
    ],
)
def test_an_input_setting_its_format_ignores_is_refused(overrides, problem):
    """An input setting the format would ignore is refused before a job starts (a backoff test
    input took test.holdout = 0.2 and classified every story); its default stays allowed."""
    from nbspark.settings.capabilities import test_problem, train_problem

    cfg = load_config(None, overrides)
    assert problem in (train_problem(cfg) or "") + (test_problem(cfg) or "")
    assert train_problem(load_config(None, {})) is None and test_problem(load_config(None, {})) is None


def _trained(fmt, files, splits=(), holdout=0.0, seed=0):
    return {
        "config": {"train": {"format": fmt, "splits": list(splits), "holdout": holdout, "seed": seed}},
        "inputs": {"format": fmt, "root": files[0], "files": list(files)},
    }


def _test_input(fmt, files, splits=(), holdout=0.0, seed=0):
    from nbspark.inputs.resolve import Inputs
    from nbspark.storage.locations import Location

    spec = InputSpec(fmt, files[0], tuple(splits), holdout, seed)
    return Inputs(spec, Location("file:" + files[0], None), tuple(Location("file:" + f, None) for f in files))


@pytest.mark.parametrize(
    "trained, tested, answer",
    [
        # the shipped experiments: disjoint parts of the same files, or other files
        (("sms", ["/d/sms"], ["train"], 0.2, 42), ("sms", ["/d/sms"], ["test"], 0.2, 42), "none"),
        (("reuters", ["/d/r0.sgm", "/d/r1.sgm"], ["TRAIN"]), ("reuters", ["/d/r1.sgm"], ["TEST"]), "none"),
        (("ngrams", ["/d/aeffect-train.txt"]), ("reuters", ["/d/r0.sgm"]), "none"),
        # every record of the same file, on both sides: training accuracy, said in the report
        (("csv", ["/d/weather.csv"]), ("csv", ["/d/weather.csv"]), "all"),
        # anything else scores training records as test records
        (
            ("sms", ["/d/sms"], ["train"], 0.2, 42),
            ("sms", ["/d/sms"], ["test"], 0.2, 7),
            "test.holdout, test.seed = 0.2, 7 split it otherwise than the model's training did (0.2, 42)",
        ),
        (
            ("sms", ["/d/sms"], ["train"], 0.2, 42),
            ("sms", ["/d/sms"], ["test"], 0.3, 42),
            "use the same holdout and seed",
        ),
        (
            ("sms", ["/d/sms"], ["train"], 0.2, 42),
            ("sms", ["/d/sms"], ["train", "test"], 0.2, 42),
            "test.splits share ['train']",
        ),
        (
            ("sms", ["/d/sms"], ["train"], 0.2, 42),
            ("sms", ["/d/sms"]),
            "trained on its part ['train'] (train.splits)",
        ),
        (
            ("csv", ["/d/w.csv"]),
            ("csv", ["/d/w.csv"], ["test"], 0.2, 1),
            "the model was trained on every record of it",
        ),
        (
            ("reuters", ["/d/r0.sgm", "/d/r1.sgm"], ["TRAIN"]),
            ("reuters", ["/d/r1.sgm", "/d/r0.sgm"]),
            "records the model was trained on (/d/r0.sgm and 1 more file(s))",
        ),
    ],
)
def test_test_records_that_are_training_records_are_refused(trained, tested, answer):
    """A classify run whose test records include records the model counted is refused before Spark
    starts (a seed typed differently gave an accuracy measured mostly on training records)."""
    from nbspark.settings.capabilities import training_overlap

    manifest, inputs = _trained(*trained), _test_input(*tested)
    if answer in ("none", "all"):
        assert training_overlap(manifest, inputs) == answer
    else:
        with pytest.raises(ConfigError, match=re.escape(answer)):
            training_overlap(manifest, inputs)


def test_training_records_reached_by_another_name_are_refused(tmp_path):
    """The training file through a symbolic link (or a mount, or file://) is the same file: a test
    part cut otherwise is refused as with the path the model recorded (it ran, in silence)."""
    from nbspark.settings.capabilities import training_overlap

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "sms").write_text("ham\thello\n")
    (tmp_path / "link").symlink_to(tmp_path / "d")
    manifest = _trained("sms", [str(tmp_path / "d" / "sms")], ["train"], 0.2, 42)
    for other in (str(tmp_path / "link" / "sms"), f"file://{tmp_path}/d/sms"):
        assert training_overlap(manifest, _test_input("sms", [other], ["test"], 0.2, 42)) == "none"
        with pytest.raises(
            ConfigError,
            match=re.escape(f"records the model was trained on ({other}): test.holdout, test.seed = 0.2, 7"),
        ):
            training_overlap(manifest, _test_input("sms", [other], ["test"], 0.2, 7))
    assert (
        training_overlap(manifest, _test_input("sms", [str(tmp_path / "d" / "other")], ["test"], 0.2, 7))
        == "none"
    )


@pytest.mark.parametrize("part", ["train", "test"])
@pytest.mark.parametrize("fmt", ["tsv", "sms", "csv"])
def test_a_holdout_without_splits_is_refused_not_ignored(part, fmt):
    """A hold-out with no part picked read every record (as ``holdout = 0`` does): a user who set
    only test.holdout = 0.2 was scored on all the data, held-out part or not."""
    from nbspark.settings.capabilities import test_problem, train_problem

    model = "multinomial" if fmt != "csv" else "categorical"
    cfg = load_config(
        None, {"task": "naive_bayes", "nb.model": model, f"{part}.format": fmt, f"{part}.holdout": "0.2"}
    )
    problem = (train_problem if part == "train" else test_problem)(cfg)
    assert (
        problem
        == f'{part}.holdout = 0.2 needs {part}.splits, the parts to read ("train" or "test"); without '
        "them every record is read"
    )
    both = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": model,
            f"{part}.format": fmt,
            f"{part}.holdout": "0.2",
            f"{part}.splits": part,
        },
    )
    assert (train_problem if part == "train" else test_problem)(both) is None


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            {"nb.model": "gaussian", "nb.alpha": "0.5"},
            "nb.alpha (read by multinomial, bernoulli, complement, categorical, mixed) does not apply to "
            "nb.model 'gaussian'",
        ),
        (
            {"nb.model": "categorical", "nb.var_smoothing": "0.001"},
            "nb.var_smoothing (read by gaussian, mixed) does not apply to nb.model 'categorical'",
        ),
        (
            {"nb.model": "gaussian", "nb.tokenizer": "words"},
            "nb.tokenizer (read by multinomial, bernoulli, complement) does not apply to nb.model 'gaussian'",
        ),
        (
            {
                "nb.model": "multinomial",
                "train.format": "tsv",
                "nb.label_column": "y",
                "nb.numeric_columns": "a",
            },
            "nb.label_column (read by categorical, gaussian, mixed), nb.numeric_columns (read by "
            "categorical, gaussian, mixed) do not apply to nb.model 'multinomial'",
        ),
        (
            {"nb.model": "multinomial", "train.format": "tsv", "nb.labels": "top10"},
            "nb.labels = 'top10' picks among Reuters topics (train.format reuters_topics), not tsv labels",
        ),
    ],
)
def test_a_naive_bayes_setting_its_model_would_not_read_is_refused_before_training(overrides, message):
    """They used to be accepted, recorded in the manifest and ignored (found by trying each)."""
    from nbspark.settings.capabilities import train_problem

    table = overrides.get("nb.model") in ("gaussian", "categorical")
    cfg = load_config(None, {"task": "naive_bayes", "train.format": "csv" if table else "tsv", **overrides})
    assert train_problem(cfg) == message
    defaults = {k: v for k, v in overrides.items() if k in ("nb.model", "train.format")}
    assert (
        train_problem(
            load_config(None, {"task": "naive_bayes", "train.format": "csv" if table else "tsv", **defaults})
        )
        is None
    )


def test_a_decision_threshold_without_a_positive_label_is_refused():
    with pytest.raises(
        ConfigError,
        match=r"^nb.decision_threshold = 0.3 is the threshold of a binary decision: set nb.positive_label "
        r"too",
    ):
        load_config(None, {"task": "naive_bayes", "nb.decision_threshold": "0.3"})
    assert (
        load_config(
            None, {"task": "naive_bayes", "nb.decision_threshold": "0.3", "nb.positive_label": "spam"}
        ).nb.decision_threshold
        == 0.3
    )


def test_a_backoff_setting_on_a_naive_bayes_task_is_named_as_such():
    """--set width=3 on a naive Bayes config: the message names width as a backoff setting, not the
    backoff subsets that width would imply."""
    with pytest.raises(ConfigError, match="^width applies to backoff tasks, not to task = 'naive_bayes'$"):
        load_config(None, {"task": "naive_bayes", "width": "3", "train.format": "tsv", "train.path": "x"})


def test_a_model_is_read_as_another_kind_only_on_the_same_counts():
    from nbspark.settings.naive_bayes import read_as

    assert read_as("multinomial", None) == read_as("multinomial", "multinomial") == "multinomial"
    assert (
        read_as("multinomial", "complement") == "complement"
        and read_as("complement", "multinomial") == "multinomial"
    )
    with pytest.raises(ConfigError, match="model='bernoulli': a multinomial model is read as complement"):
        read_as("multinomial", "bernoulli")
    with pytest.raises(ConfigError, match="model='complement': a gaussian model is read as itself only"):
        read_as("gaussian", "complement")


def test_a_tables_format_is_read_from_its_path_where_a_table_task_names_none(tmp_path):
    """A naive Bayes or density config whose input ends in .csv, .csv.gz or .parquet (a file, a
    directory or a glob) and names no format reads it as that table; a format named (by --set or in
    the file) wins, a backoff config is left as it is, and a .tsv is not guessed (tsv or sms lines)."""
    density = load_config(
        None, {"task": "density", "train.path": "/d/rows.CSV", "test.path": "/d/t/*.csv.gz"}
    )
    assert (density.train.format, density.test.format) == ("csv", "csv")
    nb = load_config(None, {"task": "naive_bayes", "nb.model": "gaussian", "train.path": "/d/table.parquet/"})
    assert nb.train.format == "parquet" and nb.test.format == "reuters"
    named = load_config(None, {"task": "density", "train.path": "/d/x.csv", "train.format": "parquet"})
    assert named.train.format == "parquet"
    assert load_config(None, {"train.path": "/d/x.csv"}).train.format == "ngrams"  # backoff: its own formats
    assert load_config(None, {"task": "naive_bayes", "train.path": "/d/x.tsv"}).train.format == "ngrams"
    toml = tmp_path / "c.toml"
    toml.write_text('task = "density"\n[train]\nformat = "parquet"\npath = "/d/x.csv"\n')
    assert load_config(toml).train.format == "parquet"
    toml.write_text('task = "density"\n[train]\npath = "/d/x.csv"\n')
    assert load_config(toml).train.format == "csv"


def test_a_run_on_a_model_given_no_config_takes_the_config_it_was_trained_with(fixtures, tmp_path):
    """No file and no task: the model's recorded config is the base; an input whose path the run sets
    is read as the training input was (a backoff model's test input as its test input was), all of
    it, a table where its name says so (a model fit in Python read no input: the default's); a file
    or a task named wins; no model there, the default."""
    import json

    import nbspark

    settings = {"task": "naive_bayes", "nb.model": "mixed", "nb.label_column": "play", "nb.alpha": 0.5}
    settings |= {"train.path": str(fixtures / "weather.csv"), "train.holdout": 0.25, "mode": "failfast"}
    settings |= {"train.splits": "train"}
    nbspark.fit(None, tmp_path / "m", settings=settings)
    recorded = json.loads((tmp_path / "m" / "manifest.json").read_text())["config"]
    cfg = load_config(None, {}, model=tmp_path / "m")
    assert json.loads(json.dumps(cfg.to_dict())) == recorded
    assert (cfg.task, cfg.nb.model, cfg.nb.alpha, cfg.mode, cfg.train.holdout) == (
        "naive_bayes",
        "mixed",
        0.5,
        "failfast",
        0.25,
    )
    run = load_config(
        None, {"test.path": "new.csv", "nb.alpha": "2", "mode": "permissive"}, model=tmp_path / "m"
    )
    assert (run.test.format, run.test.path, run.test.holdout) == ("csv", "new.csv", 0.0)
    assert (run.nb.label_column, run.nb.alpha, run.mode, run.train.holdout) == (
        "play",
        2.0,
        "permissive",
        0.25,
    )
    update = load_config(None, {"train.path": "more.txt"}, model=tmp_path / "m")
    assert (update.train.format, update.train.holdout, update.test.format) == ("csv", 0.0, "reuters")
    assert load_config(None, {"test.path": "t.parquet"}, model=tmp_path / "m").test.format == "parquet"
    assert load_config(None, {"test.path": "t.txt"}, model=tmp_path / "m").test.format == "csv"  # as trained
    nbspark.fit(None, tmp_path / "bo", settings={"train.path": str(fixtures / "ngrams.txt")})  # backoff
    backoff = load_config(None, {"test.path": "t.txt"}, model=tmp_path / "bo")
    assert (backoff.train.format, backoff.test.format) == ("ngrams", "reuters")  # the test's, not n-grams'
    text = {"task": "naive_bayes", "train.format": "tsv", "train.path": str(fixtures / "china_train.tsv")}
    nbspark.fit(None, tmp_path / "t", settings=text)
    assert load_config(None, {"test.path": "new.tsv"}, model=tmp_path / "t").test.format == "tsv"
    nbspark.load(tmp_path / "m").partial_fit([{"outlook": "sunny"}], ["no"]).save()  # a version of m
    assert load_config(None, {}, model=tmp_path / "m").train.holdout == 0.25  # trained from its file still
    nbspark.NaiveBayes().fit(["win cash", "see you"], ["spam", "ham"]).save(tmp_path / "py")
    fit = load_config(None, {"test.path": "new.tsv"}, model=tmp_path / "py")  # no input of its own
    assert (fit.task, fit.train, fit.test.format) == ("naive_bayes", DEFAULT.train, "reuters")
    more = {"train.path": str(fixtures / "china_train.tsv"), "train.format": "tsv"}
    nbspark.fit(out=tmp_path / "py", settings=more, update=True)  # its config now the update's
    assert load_config(None, {"test.path": "new.txt"}, model=tmp_path / "py").test.format == "tsv"
    assert load_config(None, {"task": "naive_bayes"}, model=tmp_path / "m").nb.model == "multinomial"
    assert load_config(None, {}, model=tmp_path / "none") == DEFAULT
    toml = tmp_path / "e.toml"
    toml.write_text('task = "density"\n')
    assert load_config(toml, {}, model=tmp_path / "m").task == "density"
