"""The options every command line shares (config, ``--set``, data dir, mode; the nbspark
command's ``--master`` and ``--conf``; the checker's ``--factor`` and ``--rule``), and the progress
log on stderr: one home for the jobs' command lines (``app.cli``) and the ``nbspark`` command's."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys

from nbspark.errors import ConfigError
from nbspark.settings.check import RULES
from nbspark.settings.config import load_config

__all__ = [
    "STDOUT",
    "add_check_options",
    "check_factor",
    "common_options",
    "config_options",
    "config_of",
    "may_run_here",
    "overrides_of",
    "parse_sets",
    "parsed_args",
    "pipe_closed",
    "report_undecodable",
    "say_answer",
    "setup_logging",
    "spark_settings_given",
    "stage_bars",
    "stdin_bytes",
    "submit_args",
    "where_options",
]

log = logging.getLogger("nbspark")


class _SparkSubmits(argparse.Action):
    """A job's ``--master`` or ``--conf``: spark-submit's options, which go before the job's path."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(
            f"{option_string} is spark-submit's option: give it before the job (spark-submit "
            f"{option_string} … jobs/{parser.prog} …), or use the nbspark command's {option_string}"
        )


def common_options(parser: argparse.ArgumentParser, prog: str = "") -> None:
    # no abbreviations: a job's --conf was read as --config, "cannot read the config"
    parser.allow_abbrev = False
    if prog.startswith("nbspark"):  # spark-submit takes its own, before the job's name
        parser.add_argument(
            "--master", help="where Spark runs, as spark-submit's --master (default local[*])"
        )
        parser.add_argument(
            "--conf",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="a Spark setting, as spark-submit's --conf (repeatable); it wins over the job's defaults",
        )
    else:
        for name in ("--master", "--conf"):
            parser.add_argument(name, action=_SparkSubmits, help=argparse.SUPPRESS)
    config_options(parser)
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="where corpora live (default: $NBSPARK_DATA, ./data, ../shared/data)",
    )
    parser.add_argument(
        "--mode",
        choices=("permissive", "failfast"),
        help="malformed input: skip and count (default) or stop at the first",
    )


def config_options(parser: argparse.ArgumentParser) -> None:
    """``--config TOML`` and ``--set KEY=VALUE``: the experiment a command runs (``config_of``)."""
    parser.add_argument(
        "--config",
        metavar="TOML",
        help="experiment file (default: for classify, train --update, stream and config --model, the one "
        "their model was trained with; else the embedded affect/effect experiment)",
    )
    parser.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a config key, e.g. --set mode=failfast (repeatable); a list as a,b or as in TOML: "
        '["a", "b"]',
    )


def parse_sets(items: list[str], parser: argparse.ArgumentParser) -> dict[str, str]:
    """``--set KEY=VALUE`` items as a dict of overrides (``load_config``'s)."""
    overrides = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            parser.error(f"--set needs KEY=VALUE, got {item!r}")
        overrides[key.strip()] = value
    return overrides


def overrides_of(args, parser) -> dict[str, str]:
    overrides = parse_sets(args.set, parser)
    if args.mode:
        overrides["mode"] = args.mode
    return overrides


def stage_bars() -> bool:
    """Whether Spark's console progress bar (its stage bars) is shown: where someone watches it,
    standard error a terminal, and not under ``-q``. Written to a file (a cron job's log, CI's), its
    carriage-return redraws were lines of noise between the run's own."""
    return sys.stderr.isatty() and log.getEffectiveLevel() <= logging.INFO


def submit_args(args, parser) -> None:
    """The nbspark command's ``--master`` and ``--conf`` (and, unless a ``--conf`` sets them, its own
    settings, ``args.submit_defaults``: a stream's session's; and no stage bars but where shown,
    ``stage_bars``) become
    spark-submit's settings, ``PYSPARK_SUBMIT_ARGS``, before Spark starts: a setting the launcher
    makes for a shell (the stage bars of ``pyspark-shell``) can be changed there and only there.
    Where ``PYSPARK_SUBMIT_ARGS`` is already set it wins, and a warning names what is not used. Only
    the nbspark command has these options: a job run by spark-submit (or its main called from
    Python) leaves the environment as it is."""
    import os
    import shlex

    if not hasattr(args, "master"):
        return
    master, conf = args.master, list(args.conf or [])
    for item in conf:
        if "=" not in item:
            parser.error(f"--conf needs KEY=VALUE, got {item!r}")
    given = bool(master or conf)
    ours = dict(getattr(args, "submit_defaults", None) or {})
    if not stage_bars():
        ours["spark.ui.showConsoleProgress"] = "false"
    conf += [f"{k}={v}" for k, v in ours.items() if not any(c.startswith(f"{k}=") for c in conf)]
    if not (master or conf):
        return
    if spark_settings_given():  # the user's (one this process set for an earlier command is replaced)
        if given:
            log.warning(
                "--master and --conf are not used: PYSPARK_SUBMIT_ARGS is set (%s) and wins",
                os.environ["PYSPARK_SUBMIT_ARGS"],
            )
        return
    submit = (["--master", master] if master else []) + [x for item in conf for x in ("--conf", item)]
    os.environ["PYSPARK_SUBMIT_ARGS"] = shlex.join([*submit, "pyspark-shell"])
    _SET_HERE.add(os.environ["PYSPARK_SUBMIT_ARGS"])


#: the PYSPARK_SUBMIT_ARGS values ``submit_args`` set in this process (a command called again in a
#: notebook's or a test's process finds its own earlier value there)
_SET_HERE: set[str] = set()


def spark_settings_given() -> bool:
    """Whether the environment sets Spark's submit arguments (``PYSPARK_SUBMIT_ARGS``) that no
    nbspark command of this process set: the user's, which ask for Spark."""
    import os

    value = os.environ.get("PYSPARK_SUBMIT_ARGS")
    return value is not None and value not in _SET_HERE


def config_of(args, parser, model=None):
    """The run's config (``load_config``): ``--config`` or the embedded one, with ``--set`` and
    ``--mode``; ``model``, the model directory a run scores, updates or streams into, gives its own
    config where neither ``--config`` nor ``--set task=`` does (not read where ``--in-process`` is
    asked and it is not local: that run is refused before a JVM would reach it)."""
    from nbspark.storage.uris import is_local

    submit_args(args, parser)
    names = {"ngrams": "a file or a directory", "progress": "a file"}  # the others: a directory
    for option in ("out", "model", "update", "ngrams", "watch", "checkpoint", "progress"):
        value = getattr(args, option, None)
        if value is not None and not value.strip():
            parser.error(f"--{option} must name {names.get(option, 'a directory')}, got an empty string")
    try:
        if model is not None and not is_local(model) and getattr(args, "in_process", False):
            model = None
        return load_config(args.config, overrides_of(args, parser), model)
    except ConfigError as exc:
        parser.error(str(exc))


class _Stderr(logging.StreamHandler):
    """A handler that writes to whatever ``sys.stderr`` is when a record is emitted."""

    def emit(self, record):
        self.stream = sys.stderr
        super().emit(record)


def setup_logging(prog: str, level: int | None = None) -> None:
    """Progress of the ``nbspark`` logger on stderr, as ``PROG: message`` (once; ``level`` resets it)."""
    if not any(isinstance(h, _Stderr) for h in log.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter(f"{prog}: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    if level is not None:
        log.setLevel(level)


def add_check_options(parser: argparse.ArgumentParser) -> None:
    """The checker's ``--factor`` and ``--rule`` (both commands that check text take them)."""
    parser.add_argument(
        "--factor",
        type=float,
        help="how many times more probable an alternative must be (default: the model's check.factor, 50)",
    )
    parser.add_argument(
        "--rule",
        choices=RULES,
        help="decision rule (default: the model's check.rule; see nbspark.backoff.rules)",
    )


def check_factor(parser: argparse.ArgumentParser, args) -> None:
    """Refuse a ``--factor`` below 1 or not finite (a parser error: exit 2)."""
    from nbspark.settings.check import factor_problem

    if args.factor is not None and (problem := factor_problem(args.factor)):
        parser.error(f"--factor {problem}")


def stdin_bytes():
    """Standard input's byte stream, for ``-``; ``ValueError`` in one line where there is none (a
    command started with stdin closed, ``<&-``: Python's ``sys.stdin`` is None)."""
    if sys.stdin is None:
        raise ValueError("'-' reads stdin, and this command's stdin is closed")
    return sys.stdin.buffer


def report_undecodable(command: str, name: str, replaced: int) -> None:
    """Read all the same, but never in silence: the line on stderr for text that was not UTF-8."""
    if replaced:
        print(
            f"nbspark {command}: {name}: {replaced:,} undecodable byte sequence(s) read as U+FFFD: is it "
            "UTF-8?",
            file=sys.stderr,
        )


#: ``--json -``: the answer as JSON on stdout, in the report's place
STDOUT = "-"


def say_answer(report: str, result: dict, json_to) -> None:
    """What ``query`` says of ``result``: ``report`` on stdout and, with ``--json FILE`` (``json_to``
    a location), the answer as JSON in FILE; with ``--json -`` (``STDOUT``) the JSON alone on stdout,
    for a pipe into ``jq`` (a file named ``-`` was written before)."""
    as_json = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    if json_to == STDOUT:
        sys.stdout.write(as_json)
        return
    print(report)
    if json_to is not None:
        json_to.write_text(as_json)


def pipe_closed() -> int:
    """What a command answers when the reader of its output stopped reading (``BrokenPipeError``:
    ``nbspark show … | head``): nothing more, no traceback, exit 141 (128 + SIGPIPE), as Unix tools
    end; what is left to flush goes nowhere."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 128 + signal.SIGPIPE


def may_run_here(args, prog: str, paths) -> bool:
    """Whether ``nbspark train``, ``curve`` or ``classify`` may choose to run in process (by size,
    then: ``settings.capabilities.in_process_fits``, ``classify_here_problem``): the command, not
    ``spark-submit jobs/*.py``; no ``--spark``, ``--master``, ``--conf`` or ``PYSPARK_SUBMIT_ARGS``
    asking for Spark; every one of ``paths`` local (the inputs, the data directory, a model to
    ``--update`` or to score with)."""
    from nbspark.storage.uris import is_local

    asked = (getattr(args, o, None) for o in ("spark", "master", "conf"))
    if not prog.startswith("nbspark") or any(asked) or spark_settings_given():
        return False
    return all(not p or is_local(p) for p in paths)


def where_options(parser, prog: str, here: str, spark: str) -> None:
    """``--in-process`` and ``--spark`` (help ``here`` and ``spark``) for the ``nbspark`` command's
    jobs (``spark-submit jobs/*.py`` stays Spark); ``parsed_args`` refuses ``--master`` or ``--conf``
    beside ``--in-process``."""
    if not prog.startswith("nbspark"):
        return
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--in-process", action="store_true", help=here)
    where.add_argument("--spark", action="store_true", help=spark)


def parsed_args(parser, argv):
    """``parser``'s arguments of ``argv``; ``--master`` or ``--conf`` beside ``--in-process`` refused:
    no Spark starts to take them."""
    args = parser.parse_args(argv)
    if getattr(args, "in_process", False) and (args.master or args.conf):
        parser.error("--master and --conf go to Spark, and --in-process starts none")
    return args
