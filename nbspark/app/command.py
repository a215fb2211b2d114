"""The ``nbspark`` command: one entry point for every job, plus what needs no Spark.

```
nbspark train|stream|classify|query|curve [--master M] [--conf K=V …] ARGS   the jobs (spark-submit jobs/*.py)
nbspark predict --model DIR [--json] TEXT… | - | --csv FILE           score in process, no JVM
nbspark check --model DIR [--factor F] [--rule R] [--json] [--fail-on-flag] FILE… | -   confused words, no JVM
nbspark check --model DIR --evaluate FORMAT:PATH … --out DIR            the checker's p and r (LanguageTool's
protocol)
nbspark serve --model [NAME=]DIR … [--host H] [--port P]               LanguageTool's API, /v1/predict, no JVM
nbspark show --model DIR [--top K] [--json]                            what a model holds, no JVM
nbspark config show [--config F | --model DIR] [--set K=V …]         the resolved config as TOML
nbspark --version | --jobs-dir                                         (the jobs: spark-submit "$(nbspark
--jobs-dir)/train.py")
```

``-q`` / ``-v`` set the level of the ``nbspark`` logger (progress goes there, on stderr); reports
go to stdout. The Spark subcommands start Spark as ``spark-submit`` would: ``--master`` and
``--conf`` become ``PYSPARK_SUBMIT_ARGS`` unless that is already set, and those settings win over
the jobs' defaults.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path

from nbspark._version import __version__
from nbspark.app.check import check_main
from nbspark.app.options import pipe_closed
from nbspark.app.predict import predict_main
from nbspark.errors import ConfigError, NbsparkError
from nbspark.settings.config import check_number

__all__ = ["config_main", "config_toml", "main", "serve_main"]

JOBS = ("train", "stream", "classify", "query", "curve")
#: Each command and what it does, in a line (``nbspark --help``; each command's own ``--help`` says more)
SUMMARIES = {
    "train": "count a corpus or a table into a model (in process if small, else on Spark)",
    "stream": "count each file landing in a directory into a model, a version a batch",
    "classify": "score test data with a model: predictions, metrics (in process if small, else on Spark)",
    "query": "a probability from a backoff or density model",
    "curve": "accuracy against training size, with a plot",
    "predict": "score texts, windows or rows given here or on stdin (no Spark)",
    "check": "flag confused words (affect/effect, …) in your files (no Spark)",
    "serve": "serve models over HTTP: LanguageTool's API, /v1/predict (no Spark)",
    "show": "what a model holds: its kind, version, settings, inputs and counts",
    "config": "show the resolved experiment config as TOML",
}
COMMANDS = tuple(SUMMARIES)


def main(argv: list[str] | None = None) -> int:
    """The ``nbspark`` command. A reader that stops reading (``nbspark show … | head``) ends it
    quietly, as it ends Unix tools: exit 141 (128 + SIGPIPE), no traceback; Ctrl-C ends it by SIGINT
    with no traceback (a stream and a server stop by their own handlers, drained). Started with stdout
    closed (``>&-``: ``sys.stdout`` is None, where each report would vanish), it does nothing and
    says so, as GNU's tools do (exit 2)."""
    if sys.stdout is None:
        if sys.stderr is not None:
            print("nbspark: error: stdout is closed: where would the answer go?", file=sys.stderr)
        return 2
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, not at the interpreter's exit, where a closed pipe is a traceback
        return code
    except BrokenPipeError:
        return pipe_closed()
    except KeyboardInterrupt:  # Ctrl-C, how a filter (predict -) is stopped: ended by the signal, as
        # Python ends, so that a calling shell stops too (https://www.cons.org/cracauer/sigint.html)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 128 + signal.SIGINT  # where the signal cannot end it


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    width = max(map(len, SUMMARIES)) + 2
    parser = argparse.ArgumentParser(
        prog="nbspark",
        description="Naive Bayes and n-gram density estimation by counting, on Spark.",
        epilog="commands (each has --help):\n"
        + "\n".join(f"  {name:<{width}}{said}" for name, said in SUMMARIES.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"nbspark {__version__}")
    parser.add_argument(
        "--jobs-dir",
        action=_JobsDir,
        help="print the directory of the spark-submit jobs (train.py, classify.py, …) and exit",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug messages on stderr")
    parser.add_argument("command", choices=COMMANDS, metavar="COMMAND", help="what to do (below)")
    # the command's own arguments (its --help included) go to the command; -q / -v may stand on either side
    # (no option of nbspark's takes a value, so the first command name is the command)
    at = next((i + 1 for i, a in enumerate(argv) if a in COMMANDS), len(argv))
    args, rest = parser.parse_known_args(argv[:at])
    verbosity = argparse.ArgumentParser(add_help=False)
    verbosity.add_argument("-q", "--quiet", action="store_true")
    verbosity.add_argument("-v", "--verbose", action="store_true")
    after, tail = verbosity.parse_known_args(argv[at:])
    args.quiet, args.verbose, rest = args.quiet or after.quiet, args.verbose or after.verbose, rest + tail
    from nbspark.app.options import setup_logging

    setup_logging(
        "nbspark", logging.WARNING if args.quiet else logging.DEBUG if args.verbose else logging.INFO
    )
    if args.command == "predict":
        return predict_main(rest)
    if args.command == "check":
        return check_main(rest)
    if args.command == "serve":
        return serve_main(rest)
    if args.command == "show":
        from nbspark.app.show import show_main

        return show_main(rest)
    if args.command == "config":
        return config_main(rest)
    return _job(args.command, rest)


class _JobsDir(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(
            Path(__file__).resolve().parents[1] / "jobs"
        )  # nbspark/jobs, not imported: the jobs import this
        parser.exit()


def _job(name: str, argv: list[str]) -> int:
    """A Spark job in this process; its ``--master`` and ``--conf`` are spark-submit's (``app.cli``)."""
    from nbspark.app import cli, curve, stream

    mains = {
        "train": cli.train_main,
        "stream": stream.stream_main,
        "classify": cli.classify_main,
        "query": cli.query_main,
        "curve": curve.curve_main,
    }
    return mains[name](argv, prog=f"nbspark {name}")


def serve_main(argv: list[str]) -> int:
    """``nbspark serve``: LanguageTool's ``/v2/check`` over backoff models and ``/v1/predict`` over any
    model, until SIGTERM or Ctrl-C (``nbspark.serve``)."""
    from nbspark.app.options import add_check_options, check_factor

    parser = argparse.ArgumentParser(
        prog="nbspark serve",
        description="Serve models over HTTP, without Spark: LanguageTool's API (POST /v2/check, GET "
        "/v2/languages) so that LanguageTool's editor plug-ins and clients use the checker, POST /v1/predict "
        "for any model, GET /v1/models, and a page at /. A model directory that gets a new version is "
        "served within --reload-seconds.",
    )
    parser.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="[NAME=]DIR",
        help="a model to serve (repeatable); its name defaults to the directory's (the parent's for …/model)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    parser.add_argument(
        "--port", type=int, default=8081, help="port (default 8081, LanguageTool's; 0: a free one)"
    )
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=1 << 20,
        help="largest request body, and request head, in bytes (default 1 MiB)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time to send a request's body, and again to answer it (default 10)",
    )
    parser.add_argument(
        "--reload-seconds",
        type=float,
        default=2.0,
        help="how often the model directories are looked at for a new version (default 2)",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web origin whose pages may call the server (CORS; repeatable; '*' for any), as "
        "LanguageTool's --allow-origin",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes that serve (default 1; one per core for throughput: checking is CPU-bound Python)",
    )
    add_check_options(parser)
    args = parser.parse_args(argv)
    check_factor(parser, args)
    try:
        check_number("--port", args.port, 0, 65535)
        check_number("--workers", args.workers, 1)
        check_number("--max-bytes", args.max_bytes, 1)
        check_number("--timeout", args.timeout, 0, low_open=True)
        check_number("--reload-seconds", args.reload_seconds, 0, low_open=True)
    except ConfigError as exc:
        parser.error(str(exc))
    try:
        from nbspark.serve.app import Limits
        from nbspark.serve.server import serve
    except ImportError as exc:
        print(f"nbspark serve: error: {exc.name} is missing: pip install 'nbspark[serve]'", file=sys.stderr)
        return 2
    # a log line a request: records made without the caller's file and line, the thread's and the
    # process's names, which no line of this command shows (the logging HOWTO's "Optimization")
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    try:
        return serve(
            args.model,
            args.host,
            args.port,
            Limits(args.max_bytes, args.timeout, args.factor, args.rule, tuple(args.allow_origin)),
            args.reload_seconds,
            args.workers,
        )
    except (NbsparkError, ValueError, OSError) as exc:
        print(f"nbspark serve: error: {exc}", file=sys.stderr)
        return 2


def config_toml(cfg) -> str:
    """The config as TOML that ``load_config`` reads back equal: every key of its task (those only the
    other task reads, ``settings.config.other_task_keys``, and the input settings an input's format
    does not read, ``settings.capabilities.INPUT_SETTINGS``, are at their defaults and left out)."""
    from nbspark.settings.capabilities import INPUT_SETTINGS
    from nbspark.settings.config import other_task_keys

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        return "[" + ", ".join(value(x) for x in v) + "]"

    skip = set(other_task_keys(cfg.task))
    for part in ("train", "test"):
        fmt = getattr(cfg, part).format
        skip |= {f"{part}.{k}" for k, formats in INPUT_SETTINGS.items() if fmt not in formats}
    data = cfg.to_dict()
    sections = {k: data.pop(k) for k in ("train", "test", "nb", "check", "density")}
    lines = [f"{k} = {value(v)}" for k, v in data.items() if k not in skip]
    for name, section in sections.items():
        keys = [k for k in section if f"{name}.{k}" not in skip]
        if keys:
            lines += ["", f"[{name}]"] + [f"{k} = {value(section[k])}" for k in keys]
    return "\n".join(lines) + "\n"


def config_main(argv: list[str]) -> int:
    """``nbspark config show``: the resolved config (file or a model's, then --set) as TOML."""
    from nbspark.app.options import config_options, parse_sets
    from nbspark.settings.config import load_config

    parser = argparse.ArgumentParser(
        prog="nbspark config",
        description="Print the experiment config a run would use (the file, then each --set, checked by "
        "the same rules) as TOML: a starting point for a file of your own.",
        allow_abbrev=False,
    )
    parser.add_argument("action", choices=("show",), nargs="?", default="show", help="show (the default)")
    config_options(parser)
    parser.add_argument(
        "--model",
        metavar="DIR",
        help="the config a run on this model uses (classify --model, train --update): the one it was "
        "trained with, unless --config or --set task= names another",
    )
    args = parser.parse_args(argv)
    try:
        if args.model:  # asked for by name: no model there is said, not shown as the default's config
            from nbspark.storage.manifests import TASK_OF_KIND, load_manifest

            load_manifest(args.model, tuple(TASK_OF_KIND))
        cfg = load_config(args.config, parse_sets(args.set, parser), args.model)
    except NbsparkError as exc:
        print(f"nbspark config: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(config_toml(cfg))
    return 0


if __name__ == "__main__":
    sys.exit(main())
