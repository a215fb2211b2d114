"""Incremental training: train(A ∪ B) equals train(A) updated with B; order and partitioning do not matter."""

import random

import pytest
from pyspark.testing import assertDataFrameEqual

from nbspark.backoff.events import count_ddl
from nbspark.backoff.jobs import train
from nbspark.errors import InputError
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.naive_bayes.jobs import NAIVE_BAYES, train_nb
from nbspark.settings.config import load_config
from nbspark.spine.training import plan_training, train_model
from nbspark.storage.tables import read_parquet_checked

pytestmark = pytest.mark.spark


def split_file(src, a, b, at):
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    a.write_text("".join(lines[:at]), encoding="utf-8")
    b.write_text("".join(lines[at:]), encoding="utf-8")
    return lines


def backoff(spark, path, out, update=False, **extra):
    cfg = load_config(None, {"train.path": str(path), **extra})
    return train(spark, cfg, resolve_input(cfg.train, None), out, update=update)


def table(spark, out, ddl=count_ddl("ABCDE")):
    return read_parquet_checked(spark, out / "counts", ddl)


def test_backoff_update_equals_training_on_all(spark, fixtures, tmp_path):
    lines = split_file(fixtures / "ngrams.txt", tmp_path / "a.txt", tmp_path / "b.txt", 5)
    backoff(spark, fixtures / "ngrams.txt", tmp_path / "all")
    backoff(spark, tmp_path / "a.txt", tmp_path / "ab")
    manifest = backoff(spark, tmp_path / "b.txt", tmp_path / "ab", update=True)
    assertDataFrameEqual(table(spark, tmp_path / "ab"), table(spark, tmp_path / "all"), checkRowOrder=False)
    assert manifest["stats"]["lines_read"] == 11 and manifest["stats"]["weight"] == 34
    assert len(manifest["updates"]) == 2
    assert manifest["label_counts"] == {"affect": 11, "effect": 23}

    random.Random(7).shuffle(lines)
    (tmp_path / "shuffled.txt").write_text("".join(lines), encoding="utf-8")
    backoff(spark, tmp_path / "shuffled.txt", tmp_path / "shuffled", partitions="3")
    assertDataFrameEqual(
        table(spark, tmp_path / "shuffled"), table(spark, tmp_path / "all"), checkRowOrder=False
    )


def test_update_refuses_other_settings(spark, fixtures, tmp_path):
    backoff(spark, fixtures / "ngrams.txt", tmp_path / "m")
    with pytest.raises(InputError, match="confusion_set"):
        backoff(spark, fixtures / "ngrams.txt", tmp_path / "m", update=True, confusion_set="their,there")
    with pytest.raises(InputError, match="counted subsets"):
        backoff(spark, fixtures / "ngrams.txt", tmp_path / "m", update=True, backoff="AB,")


@pytest.mark.parametrize(
    "model, path, fmt, at", [("multinomial", "china_train.tsv", "tsv", 3), ("mixed", "weather.csv", "csv", 0)]
)
def test_nb_update_equals_training_on_all(spark, fixtures, tmp_path, model, path, fmt, at):
    extra = {"task": "naive_bayes", "nb.model": model, "train.format": fmt}
    if fmt != "csv":
        extra["nb.tokenizer"] = "words"  # a table model has no tokenizer (refused)
    if fmt == "csv":
        extra.update(
            {
                "nb.label_column": "play",
                "nb.numeric_columns": "temperature,humidity",
                "nb.categorical_columns": "outlook,windy",
            }
        )
        lines = (fixtures / path).read_text().splitlines(keepends=True)
        (tmp_path / "a.csv").write_text("".join(lines[:8]))
        (tmp_path / "b.csv").write_text(lines[0] + "".join(lines[8:]))
        a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    else:
        a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
        split_file(fixtures / path, a, b, at)

    def fit(p, out, update=False):
        cfg = load_config(None, {**extra, "train.path": str(p)})
        return train_nb(spark, cfg, resolve_input(cfg.train, None), out, update=update)

    def fit_here(p, out, update=False):  # in this process: the old table read and added to by pyarrow
        cfg = load_config(None, {**extra, "train.path": str(p)})
        plan = plan_training(cfg, resolve_input(cfg.train, None), out, NAIVE_BAYES, update, in_process=True)
        return train_model(None, plan, NAIVE_BAYES)

    everything = fit(fixtures / path, tmp_path / "all")
    fit(a, tmp_path / "ab")
    spark_update = fit(b, tmp_path / "ab", update=True)
    got, want = table(spark, tmp_path / "ab", COUNT_DDL), table(spark, tmp_path / "all", COUNT_DDL)
    assertDataFrameEqual(got, want, checkRowOrder=False, rtol=1e-12)
    fit_here(a, tmp_path / "here")
    here_update = fit_here(b, tmp_path / "here", update=True)
    assertDataFrameEqual(table(spark, tmp_path / "here", COUNT_DDL), want, checkRowOrder=False, rtol=1e-12)
    for key in ("label_counts", "features", "columns"):
        assert here_update[key] == spark_update[key] == everything[key], key


def test_update_with_the_same_input_twice_is_refused_unless_forced(spark, fixtures, tmp_path):
    """It used to triple the counts with no word, although the manifest lists the files."""
    backoff(spark, fixtures / "ngrams.txt", tmp_path / "m")
    with pytest.raises(InputError, match=r"ngrams.txt was already counted into this model .* pass --force"):
        backoff(spark, fixtures / "ngrams.txt", tmp_path / "m", update=True)
    # the same file by another name (a link to its directory) is the same file
    (tmp_path / "link").symlink_to(fixtures)
    with pytest.raises(
        InputError,
        match=r"link/ngrams.txt was already counted into this model \(run of .*, as "
        rf"{fixtures}/ngrams.txt\); pass --force",
    ):
        backoff(spark, tmp_path / "link" / "ngrams.txt", tmp_path / "m", update=True)
    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})
    manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m", update=True, force=True)
    assert manifest["stats"]["weight"] == 2 * 34 and len(manifest["updates"]) == 2


def test_nb_update_refuses_other_table_columns(spark, fixtures, tmp_path):
    """A changed nb.numeric_columns used to be accepted: alcohol over 98 rows and hue over 49."""
    base = {
        "task": "naive_bayes",
        "nb.model": "mixed",
        "nb.label_column": "play",
        "train.format": "csv",
        "nb.numeric_columns": "temperature,humidity",
        "nb.categorical_columns": "outlook,windy",
    }
    half = tmp_path / "half.csv"
    half.write_text("\n".join((fixtures / "weather.csv").read_text().splitlines()[:8]) + "\n")
    cfg = load_config(None, {**base, "train.path": str(half)})
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    other = load_config(
        None, {**base, "train.path": str(fixtures / "weather.csv"), "nb.numeric_columns": "temperature"}
    )
    with pytest.raises(
        InputError,
        match=r"counted with nb.numeric_columns = \['temperature', 'humidity'\], this run has "
        r"\['temperature'\]",
    ):
        train_nb(spark, other, resolve_input(other.train, None), tmp_path / "m", update=True)


def test_nb_update_reads_a_table_with_the_models_inferred_columns(spark, fixtures, tmp_path):
    """No columns named: the first half of the weather table infers temperature as numbers, the
    second alone (its "warm") as categories. The update reads it with the model's columns, so
    "warm" is a malformed row, as when the whole table is counted with those columns named; a new
    inference used to add temperature as a category beside its Gaussian, in silence."""
    base = {"task": "naive_bayes", "nb.model": "mixed", "nb.label_column": "play", "train.format": "csv"}
    lines = (fixtures / "weather.csv").read_text().splitlines(keepends=True)
    (tmp_path / "a.csv").write_text("".join(lines[:8]))
    (tmp_path / "b.csv").write_text(lines[0] + "".join(lines[8:]))

    def fit(path, out, update=False, **extra):
        cfg = load_config(None, {**base, "train.path": str(path), **extra})
        return train_nb(spark, cfg, resolve_input(cfg.train, None), out, update=update)

    first = fit(tmp_path / "a.csv", tmp_path / "ab")
    assert first["columns"] == {"numeric": ["temperature", "humidity"], "categorical": ["outlook", "windy"]}
    assert fit(tmp_path / "b.csv", tmp_path / "alone")["columns"]["categorical"] == [
        "outlook",
        "temperature",
        "windy",
    ]
    updated = fit(tmp_path / "b.csv", tmp_path / "ab", update=True)
    assert updated["columns"] == first["columns"] and updated["stats"]["malformed.numeric"] == 1
    fit(
        fixtures / "weather.csv",
        tmp_path / "all",
        **{"nb.numeric_columns": "temperature,humidity", "nb.categorical_columns": "outlook,windy"},
    )
    assertDataFrameEqual(
        table(spark, tmp_path / "ab", COUNT_DDL),
        table(spark, tmp_path / "all", COUNT_DDL),
        checkRowOrder=False,
        rtol=1e-12,
    )


def test_an_update_holds_the_models_lock_and_never_loses_another(spark, fixtures, tmp_path):
    """Two updates of one model at once: the second waits for nothing and loses nothing. It is
    refused while another writer holds the model (a live process), and an update whose model
    changed between its plan and its write (another update committed) stops instead of writing
    over it; a lock whose holder died is taken over."""
    import json
    import os
    import subprocess

    from nbspark.backoff.jobs import BACKOFF
    from nbspark.errors import OutputError
    from nbspark.spine.training import plan_training, train_model

    lines = split_file(fixtures / "ngrams.txt", tmp_path / "a.txt", tmp_path / "b.txt", 5)
    (tmp_path / "c.txt").write_text("".join(lines[:2]))
    backoff(spark, tmp_path / "a.txt", tmp_path / "m")
    lock = tmp_path / "m.stream" / "lock.json"
    lock.parent.mkdir()
    alive = subprocess.Popen(["sleep", "30"])
    try:
        lock.write_text(json.dumps({"checkpoint": None, "host": os.uname().nodename, "pid": alive.pid}))
        with pytest.raises(OutputError, match=r"another writer \(an update or a save\) writes this model"):
            backoff(spark, tmp_path / "b.txt", tmp_path / "m", update=True)
    finally:
        alive.kill()
        alive.wait()
    backoff(spark, tmp_path / "b.txt", tmp_path / "m", update=True)  # its holder died: taken over
    assert not lock.parent.exists()  # given back: nothing left beside the model
    cfg = load_config(None, {"train.path": str(tmp_path / "c.txt")})
    plan = plan_training(cfg, resolve_input(cfg.train, None), tmp_path / "m", BACKOFF, update=True)
    before = json.loads((tmp_path / "m" / "manifest.json").read_text())
    (tmp_path / "d.txt").write_text("".join(lines[2:4]))
    backoff(spark, tmp_path / "d.txt", tmp_path / "m", update=True)  # another update, meanwhile
    with pytest.raises(OutputError, match="the model changed since this update read it"):
        train_model(spark, plan, BACKOFF)
    after = json.loads((tmp_path / "m" / "manifest.json").read_text())
    # d's update stands, whole: one version more, its lines' weight added (7 = 6 + 1)
    assert after["version"] == before["version"] + 1 == 3
    assert after["stats"]["weight"] == before["stats"]["weight"] + 7
