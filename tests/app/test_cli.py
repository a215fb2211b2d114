"""The silent wrong results of the first round, each refused or mended (issue 10). Every test here
failed before the spine change: the run went on and gave a wrong answer with exit status 0."""

import os
import sys

import pytest

from nbspark.backoff.jobs import train
from nbspark.backoff.query import query
from nbspark.errors import InputError
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import classify_nb, train_nb
from nbspark.settings.config import load_config


def china(fixtures, tmp_path, **extra):
    return load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.tokenizer": "words",
            "train.format": "tsv",
            "train.path": str(fixtures / "china_train.tsv"),
            "test.format": "tsv",
            "test.path": str(fixtures / "china_test.tsv"),
            **extra,
        },
    )


def test_classify_takes_the_smoothing_of_the_model(spark, fixtures, tmp_path):
    """Train with nb.alpha = 0.1, classify without it: the model's α, not the default 1."""
    trained = china(fixtures, tmp_path, **{"nb.alpha": "0.1"})
    train_nb(spark, trained, resolve_input(trained.train, None), tmp_path / "m")
    plain = china(fixtures, tmp_path)  # nb.alpha left at 1
    got = classify_nb(spark, plain, tmp_path / "m", resolve_input(plain.test, None), tmp_path / "r1")
    same = classify_nb(spark, trained, tmp_path / "m", resolve_input(trained.test, None), tmp_path / "r2")
    assert (
        got["smoothing"]
        == {"alpha": 0.1, "prior_alpha": 0.0, "unseen": "drop", "preset": ""}
        == same["smoothing"]
    )
    p1 = sorted(map(tuple, spark.read.parquet(str(tmp_path / "r1" / "predictions")).collect()))
    p2 = sorted(map(tuple, spark.read.parquet(str(tmp_path / "r2" / "predictions")).collect()))
    assert p1 == p2
    # an explicit override for this run (--set nb.alpha=1 on the command line) wins
    over = classify_nb(
        spark,
        plain,
        tmp_path / "m",
        resolve_input(plain.test, None),
        tmp_path / "r3",
        overrides=frozenset({"nb.alpha"}),
    )
    assert over["smoothing"] == {"alpha": 1.0, "prior_alpha": 0.0, "unseen": "drop", "preset": ""}
    p3 = sorted(map(tuple, spark.read.parquet(str(tmp_path / "r3" / "predictions")).collect()))
    assert [r[3] for r in p3] != [r[3] for r in p1]  # the probabilities change with α


def test_arrow_scoring_honours_failfast(spark, fixtures, tmp_path):
    """Arrow scoring ignored mode = failfast and named no malformed line."""
    cfg = china(fixtures, tmp_path)
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    dirty = str(fixtures / "china_test_dirty.tsv")
    run = china(fixtures, tmp_path, scoring="arrow", mode="failfast", **{"test.path": dirty})
    with pytest.raises(InputError, match=r"china_test_dirty.tsv:3: malformed line \(fields\): 'd10\\tc'"):
        classify_nb(spark, run, tmp_path / "m", resolve_input(run.test, None), tmp_path / "r")
    assert not (tmp_path / "r").exists()  # nothing half-written


def test_query_with_an_upper_case_word_says_the_model_is_lower_cased(spark, fixtures, tmp_path):
    """``--C Affect`` answered "matching count: 0" with no hint."""
    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    result = query(spark, {"B": "_", "C": "Affect"}, model_dir=tmp_path / "m")
    assert result["matching_count"] == 0
    assert result["note"] == "the words here are lower-cased, so 'Affect' cannot match; ask for 'affect'"
    assert "note" not in query(spark, {"B": "_", "C": "affect"}, model_dir=tmp_path / "m")


def test_a_backoff_config_with_a_naive_bayes_input_is_refused_before_spark(capsys, tmp_path):
    """``train.format = "tsv"`` on a backoff config used to be read as Reuters SGML and end in
    "no training examples" after the whole job."""
    from nbspark.app.cli import train_main

    code = train_main(["--set", "train.format=tsv", "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("train.py: error: train.format 'tsv' is not a backoff input")
    assert not (tmp_path / "m").exists()


def test_the_python_train_entry_point_refuses_a_foreign_directory(spark, fixtures, tmp_path):
    """``train(spark, cfg, …, out)`` with ``out`` holding a user's file used to delete that file."""
    from nbspark.errors import OutputError

    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})
    with pytest.raises(OutputError, match="already holds something; pass --overwrite"):
        train(spark, cfg, resolve_input(cfg.train, None), out)
    with pytest.raises(OutputError, match="not an nbspark output"):
        train(spark, cfg, resolve_input(cfg.train, None), out, overwrite=True)
    assert (out / "thesis.tex").read_text() == "years of work"


def test_nbspark_help_says_what_each_command_does_and_each_runs(capsys):
    """``nbspark --help`` listed the commands' names only (``{train,stream,…}``): each is now a line
    saying what it does, and each name listed is a command that answers its own ``--help``."""
    from nbspark.app.command import COMMANDS, SUMMARIES, main

    with pytest.raises(SystemExit) as done:
        main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and "commands (each has --help):" in out
    listed = out.split("commands (each has --help):\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed] == list(COMMANDS) == list(SUMMARIES)
    assert all(line.endswith(SUMMARIES[line.split()[0]]) for line in listed)
    for command in COMMANDS:
        with pytest.raises(SystemExit) as done:
            main([command, "--help"])
        assert done.value.code == 0 and capsys.readouterr().out.startswith(f"usage: nbspark {command}"), (
            command
        )


def test_the_commands_spark_options_are_in_help_and_reach_spark(capsys, monkeypatch, caplog):
    """``--master`` and ``--conf`` were parsed by hand and shown in no ``--help``; with
    PYSPARK_SUBMIT_ARGS set they were ignored in silence; ``-q`` left Spark's stage bars on."""
    import argparse
    import logging

    from nbspark.app import options as cli
    from nbspark.app.command import main

    for job in ("train", "classify", "query", "curve"):
        with pytest.raises(SystemExit):
            main([job, "--help"])
        out = capsys.readouterr().out
        assert "--master MASTER" in out and "--conf KEY=VALUE" in out, job
    parser = argparse.ArgumentParser()
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    cli.setup_logging("nbspark", logging.INFO)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # someone watches: the launcher's bars
    cli.submit_args(argparse.Namespace(master="local[3]", conf=["spark.x=1"]), parser)
    assert os.environ["PYSPARK_SUBMIT_ARGS"] == "--master 'local[3]' --conf spark.x=1 pyspark-shell"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)  # a log file: its redraws were noise
    cli.submit_args(argparse.Namespace(master="local[3]", conf=[]), parser)
    assert os.environ["PYSPARK_SUBMIT_ARGS"] == (
        "--master 'local[3]' --conf spark.ui.showConsoleProgress=false pyspark-shell"
    )
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    cli.setup_logging("nbspark", logging.WARNING)  # -q
    try:
        cli.submit_args(argparse.Namespace(master=None, conf=[]), parser)
        assert os.environ["PYSPARK_SUBMIT_ARGS"] == "--conf spark.ui.showConsoleProgress=false pyspark-shell"
        monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--master local[1] pyspark-shell")
        with caplog.at_level(logging.WARNING, logger="nbspark"):
            cli.submit_args(argparse.Namespace(master="local[3]", conf=[]), parser)
        assert os.environ["PYSPARK_SUBMIT_ARGS"] == "--master local[1] pyspark-shell"  # the user's wins
        assert "--master and --conf are not used: PYSPARK_SUBMIT_ARGS is set" in caplog.text
    finally:
        cli.setup_logging("nbspark", logging.INFO)


def test_a_stream_command_shows_no_stage_bars_unless_asked(monkeypatch):
    """``nbspark stream``: Spark's console progress bar (which the launcher turns on for
    ``pyspark-shell``, whatever the session's defaults) ran into the line of each committed batch;
    the stream's session settings now reach spark-submit, and a ``--conf`` of the user's wins."""
    from nbspark.app import options, stream

    parser = stream._parser("nbspark stream")
    for conf, bars in (([], "false"), (["spark.ui.showConsoleProgress=true"], "true")):
        monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
        args = parser.parse_args(["--watch", "in", *(x for c in conf for x in ("--conf", c))])
        options.submit_args(args, parser)
        submitted = os.environ["PYSPARK_SUBMIT_ARGS"].split()
        assert [c for c in submitted if c.startswith("spark.ui.showConsoleProgress=")] == [
            f"spark.ui.showConsoleProgress={bars}"
        ]
        assert "spark.ui.retainedJobs=100" in submitted and submitted[-1] == "pyspark-shell"


def test_a_jobs_own_command_line_leaves_the_environment_alone(monkeypatch, tmp_path):
    """``jobs/train.py``'s parser has no --master: nothing of PYSPARK_SUBMIT_ARGS is set by it."""
    import argparse

    from nbspark.app import options

    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    options.submit_args(argparse.Namespace(config=None), argparse.ArgumentParser())
    assert "PYSPARK_SUBMIT_ARGS" not in os.environ


@pytest.mark.parametrize("job", ["train", "classify", "query", "curve", "stream"])
def test_spark_submits_options_after_a_job_are_named_as_such(job, capsys):
    """``python jobs/train.py --conf K=V``: spark-submit's option given to the job was read as an
    abbreviation of ``--config`` ("cannot read the config"); now one line that says where it goes.
    Abbreviations are off (``--over`` is not ``--overwrite``)."""
    from nbspark.app import cli, curve, stream

    main = {
        "train": cli.train_main,
        "classify": cli.classify_main,
        "query": cli.query_main,
        "curve": curve.curve_main,
        "stream": stream.stream_main,
    }[job]
    for option in ("--conf", "--master"):
        with pytest.raises(SystemExit) as exit_:
            main([option, "spark.ui.enabled=false"])
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert (
            exit_.value.code == 2
            and f"error: {option} is spark-submit's option: give it before the job" in err
        )
        assert "jobs/" in err and "or use the nbspark command's" in err
    with pytest.raises(SystemExit):
        main(["--over"])
    assert "unrecognized arguments: --over" in capsys.readouterr().err


def test_a_model_is_classified_and_updated_without_repeating_its_settings(fixtures, tmp_path, capsys):
    """``classify --model M`` and ``train --update M`` with no --config run by the settings M was
    trained with (a mixed naive Bayes of a table here; the embedded config is a backoff one, and they
    were refused with "a naive_bayes model, not a backoff one"), in process, no JVM."""
    import csv
    import json

    from nbspark.app.command import main

    weather = fixtures / "weather.csv"
    rows = list(csv.reader(weather.open()))
    (tmp_path / "more.txt").write_text("\n".join(",".join(r) for r in [rows[0], *rows[1:6]]) + "\n")
    sets = ["--set", "task=naive_bayes", "--set", "nb.model=mixed", "--set", "nb.label_column=play"]
    assert main(["train", *sets, "--set", f"train.path={weather}", "--out", str(tmp_path / "m")]) == 0
    argv = ["classify", "--model", str(tmp_path / "m"), "--set", f"test.path={weather}", "--out"]
    assert main([*argv, str(tmp_path / "r")]) == 0
    assert json.loads((tmp_path / "r" / "metrics.json").read_text())["documents"] == 15
    assert (
        main(["train", "--update", str(tmp_path / "m"), "--set", f"train.path={tmp_path / 'more.txt'}"]) == 0
    )
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert (manifest["stats"]["documents"], manifest["label_counts"]) == (
        20,
        {"no": 7, "yes": 13},
    )  # 2 no, 3 yes more
    assert "settings: those" in capsys.readouterr().err
    assert main(["config", "--model", str(tmp_path / "m")]) == 0  # the config these runs used, as TOML
    (tmp_path / "m.toml").write_text(capsys.readouterr().out)
    cfg = load_config(tmp_path / "m.toml")
    assert cfg == load_config(None, {}, model=tmp_path / "m") and cfg.train.path == str(tmp_path / "more.txt")
    assert (cfg.task, cfg.nb.model, cfg.nb.label_column) == ("naive_bayes", "mixed", "play")
    assert main(["config", "--model", str(tmp_path / "none")]) == 2  # not the default's config
    said = f"nbspark config: error: {tmp_path / 'none'}: no such model directory (nbspark train writes one)\n"
    assert capsys.readouterr().err.endswith(said)
    (tmp_path / "unlabelled.csv").write_text("\n".join(",".join(r[:-1]) for r in rows) + "\n")
    assert (
        main([*argv[:3], "--set", f"test.path={tmp_path / 'unlabelled.csv'}", "--out", str(tmp_path / "u")])
        == 1
    )
    assert (
        "no label column 'play' (columns: outlook, temperature, humidity, windy); name it with "
        in (err := capsys.readouterr().err)
        and "nbspark predict --csv" in err
    )  # where rows without labels are scored
