"""Command lines of the jobs (``jobs/train.py``, ``jobs/classify.py``, ``jobs/query.py``,
``jobs/check.py``; ``nbspark train|classify|query``; the learning curve's is ``app.curve``). ``train``
and ``curve`` count local inputs within the in-process bound without Spark (``_count_here``).

Every check (config, inputs, output paths) runs before the SparkSession starts, so a mistake
leaves nothing behind. Paths go through Hadoop's FileSystem (``storage.locations.use_hadoop``: the JVM
spark-submit started, with its settings), so inputs, models and outputs may be on any storage
the Spark installation reaches. Errors are one line on
stderr and a non-zero exit: 2 for a bad command line or config, 1 for bad input or output.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from contextlib import contextmanager

from nbspark.app.density import density_cells, density_options, density_query
from nbspark.app.options import (
    STDOUT,
    add_check_options,
    check_factor,
    common_options,
    config_of,
    may_run_here,
    overrides_of,
    parsed_args,
    pipe_closed,
    say_answer,
    setup_logging,
    stage_bars,
    where_options,
)
from nbspark.errors import ConfigError, NbsparkError, OutputError
from nbspark.settings.capabilities import BACKOFF_IN_PROCESS_BELOW_MB, IN_PROCESS_BELOW_MB, QUERY_TOP
from nbspark.storage.locations import Location, location, use_hadoop
from nbspark.storage.tables import check_output

__all__ = [
    "check_main",
    "classify_main",
    "job_failure",
    "query_main",
    "train_main",
]

#: Spark settings the jobs use unless spark-submit, ``--conf`` or a properties file set them.
#: (A cached count aggregate is planned so that adaptive execution may coalesce it:
#: ``spark.session.cache_coalescable``, for the commands and the Python API alike.)
JOB_SPARK_DEFAULTS = {"spark.log.level": "WARN"}  # with the stage bars where shown (stage_bars)
#: ... and in local mode: nothing listens beyond loopback unless asked (the web UI binds every
#: interface unless SPARK_LOCAL_IP is set, so it is off; ``--conf spark.ui.enabled=true`` opens it).
LOCAL_SPARK_DEFAULTS = {
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.ui.enabled": "false",
}

log = logging.getLogger("nbspark")


@contextmanager
def _spark(app: str, defaults: dict[str, str] | None = None):
    """The job's SparkSession (JOB_SPARK_DEFAULTS and the command's ``defaults`` where nothing else
    set them), stopped on exit unless it was there before (a command called in a notebook's or a
    test's process)."""
    from nbspark.spark.session import active_session, get_spark, stop_spark

    before = active_session()
    spark = get_spark(
        app,
        defaults={
            **JOB_SPARK_DEFAULTS,
            "spark.ui.showConsoleProgress": str(stage_bars()).lower(),
            **(defaults or {}),
        },
        local_defaults=LOCAL_SPARK_DEFAULTS,
    )
    try:
        yield spark
    finally:
        if before is None:
            stop_spark(spark)


def job_failure(exc: BaseException) -> str | None:
    """One line for a failed Spark job (Py4J or PySpark error) naming its root cause, or None for
    anything else.

    In order: the worker's own Python exception (``OverflowError: …``); else Spark's error class
    and message (``[FAILED_READ_FILE…] …``) with the deepest JVM cause (``Caused by: …``); else the
    deepest cause alone. Never the Py4J call (``An error occurred while calling o73…``); Spark's
    log above it has the full trace and the attempts made.
    """
    module = type(exc).__module__
    if not (module.startswith("py4j") or module.startswith("pyspark")):
        return None
    text = str(exc)
    if header := _csv_header_refused(text):
        return header
    found = re.findall(r"^(?:\w+\.)*\w+(?:Error|Exception|Exit): .+$", text, flags=re.MULTILINE)
    python_errors = [
        line for line in found if not line.startswith(("org.", "java.", "py4j.", "scala.", "Py4J"))
    ]
    if python_errors:
        return f"Spark job failed: {python_errors[-1].strip()}"
    causes = [c.strip() for c in re.findall(r"^Caused by: (.+)$", text, flags=re.MULTILINE)]
    error_class = re.search(r"(\[[A-Z][A-Z_]*(?:\.[A-Z_]+)*\] [^\n]*)", text)
    root = causes[-1] if causes else None
    if error_class:
        detail = error_class.group(1).strip()
        if root and root not in detail:
            detail += f" (caused by {root})"
    elif root:
        detail = root
    else:
        java = [line for line in found if not line.startswith("Py4J")]
        detail = java[-1] if java else (text.splitlines()[0] if text else type(exc).__name__)
    hint = next((h for needle, h in _FAILURE_HINTS if needle in text), "")
    return f"Spark job failed: {detail.strip()}{hint}"


#: What a user can do about a failure Spark names only by its error: (a text in the error, the hint).
_FAILURE_HINTS = (
    (
        "TIMESTAMP(NANOS",
        "; a Parquet column holds nanosecond timestamps, which Spark reads only as numbers (--conf "
        "spark.sql.legacy.parquet.nanosAsLong=true): write it in microseconds, or without that column",
    ),
)


def _csv_header_refused(text: str) -> str | None:
    """The line for Spark's refusal of a CSV file's header (its error names the file, its header and
    the first file's, as Spark reads every file of an input by the first one's header): the words of
    the reader in process (``inputs.tables.header_problem``), or that the file's header is not the
    first's. None for any other error."""
    from nbspark.inputs.tables import header_problem
    from nbspark.storage.locations import location

    found = re.search(r"^ Header: (.*)\n Schema: (.*)\n(?:.*\n)*?CSV file: (.+)$", text, flags=re.MULTILINE)
    if "CSV header does not conform to the schema" not in text or found is None:
        return None
    header, schema, uri = found.groups()
    problem = header_problem(header.split(", ")) or (
        f"its header ({header}) is not the first file's ({schema}); the CSV files of one input share "
        "one header"
    )
    return f"{location(uri.strip())}: {problem}"


def _run(prog: str, body) -> int:
    """Run a command's body: its report on stdout, every failure one line on stderr (exit 2 for a
    setting that cannot apply, 1 for bad input, output or a failed Spark job)."""
    setup_logging(prog)
    try:
        body()
        sys.stdout.flush()  # a closed pipe found here, not at the interpreter's exit
    except BrokenPipeError:
        return pipe_closed()
    except ConfigError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except (NbsparkError, OSError, ArithmeticError, ValueError) as exc:  # bad input, I/O, an overflow
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        line = job_failure(exc)
        if line is None:
            raise
        print(f"{prog}: error: {line}", file=sys.stderr)
        return 1
    return 0


def _count_here(args, prog: str, cfg, update=None, out=None):
    """Where a train or a curve counts, decided once before any JVM starts: in process when asked
    (``--in-process``), or when it may choose (``app.options.may_run_here``: its paths local, ``out``
    too) and its local inputs fit (``settings.capabilities.in_process_fits``, with the model to
    ``update``), logged; else with Spark. Also the local training inputs it listed to decide (None
    where it listed none)."""
    from nbspark.inputs.resolve import input_bytes, resolve_input
    from nbspark.settings.capabilities import in_process_fits

    if getattr(args, "in_process", False):
        return True, None
    paths = (cfg.train.path, args.data_dir, getattr(args, "update", None), out)
    if not may_run_here(args, prog, paths + ((cfg.test.path,) if prog.endswith("curve") else ())):
        return False, None
    local = resolve_input(cfg.train, args.data_dir)  # local files: no JVM to list them
    why_not = in_process_fits(cfg, input_bytes(local, update))
    log.info(
        "counting %s",
        "in process (--spark counts with Spark)" if why_not is None else f"with Spark: {why_not}",
    )
    return why_not is None, local


def train_main(argv=None, prog: str = "train.py") -> int:
    parser = argparse.ArgumentParser(
        prog=prog, description="Count a corpus into an nbspark model (count tables as Parquet)."
    )
    common_options(parser, prog)
    parser.add_argument(
        "--out", metavar="DIR", help="model directory to write (default: the config's model_dir)"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing model (the old one stays until the new one is complete)",
    )
    parser.add_argument(
        "--update",
        metavar="MODEL",
        help="add the counts of this input to an existing model, without recounting its data",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="with --update: count an input file again although the model already holds it",
    )
    where_options(
        parser,
        prog,
        "count in this process, without Spark or a JVM (local files that fit in memory); the "
        f"same model as Spark's. Without --in-process or --spark, local files of at most "
        f"{IN_PROCESS_BELOW_MB:g} MB ({BACKOFF_IN_PROCESS_BELOW_MB:g} for a backoff model) are "
        "counted in process (a .gz or .bz2 file counting 8 times its size), unless --master or "
        "--conf asks for Spark",
        "count with Spark, whatever the input's size",
    )
    args = parsed_args(parser, argv)
    cfg = config_of(args, parser, args.update)
    if args.update and (args.out or args.overwrite):
        parser.error("--update MODEL writes MODEL itself; leave out --out and --overwrite")
    if args.force and not args.update:
        parser.error("--force goes with --update")

    def body():
        from nbspark.inputs.resolve import resolve_input
        from nbspark.report import format as reports
        from nbspark.spine.training import plan_training, refuse_remote, train_model
        from nbspark.tasks import family_of

        family = family_of(cfg.task)
        out = args.update or args.out or cfg.model_dir
        if getattr(args, "in_process", False):
            refuse_remote(cfg, args.data_dir, args.update, out=out)
        in_process, local = _count_here(args, prog, cfg, args.update, out)

        def inputs():  # called by the plan once the engine is known to apply: only then paths, and the JVM
            if in_process and local is not None:
                return local
            if not in_process:
                use_hadoop()
            return resolve_input(cfg.train, args.data_dir)

        plan = plan_training(
            cfg, inputs, out, family, bool(args.update), args.force, args.overwrite, in_process
        )
        if in_process:
            manifest = train_model(None, plan, family)
        else:
            with _spark(f"nbspark-train-{cfg.name}") as spark:
                manifest = train_model(spark, plan, family)
        report = {
            "naive_bayes": reports.format_nb_train_report,
            "density": reports.format_density_train_report,
        }
        print(report.get(cfg.task, reports.format_train_report)(manifest, plan.out))

    return _run(prog, body)


def classify_main(argv=None, prog: str = "classify.py") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Classify the test examples with a trained model; write predictions, metrics and a "
        "report.",
    )
    common_options(parser, prog)
    parser.add_argument("--model", metavar="DIR", help="model directory (default: the config's model_dir)")
    parser.add_argument("--out", metavar="DIR", help="results directory (default: the config's results_dir)")
    parser.add_argument("--overwrite", action="store_true", help="replace existing results")
    where_options(
        parser,
        prog,
        "score in this process, without Spark or a JVM (local files; a backoff model, a naive "
        "Bayes model of text or a table, a density model of a CSV or n-gram table); the same results as "
        "Spark's. Without --in-process or --spark, local test data of at most "
        f"{IN_PROCESS_BELOW_MB:g} MB are scored in process where they can be, unless --master or "
        "--conf asks for Spark",
        "score with Spark, whatever the data",
    )
    args = parsed_args(parser, argv)
    cfg = config_of(args, parser, args.model)
    explicit = frozenset(overrides_of(args, parser))

    def body():
        from nbspark.inputs.files import damaged_files_named
        from nbspark.inputs.resolve import resolve_input
        from nbspark.tasks import classify_plan

        where = "spark"  # in process when asked, or where it may and the plan finds that it can
        model, out = args.model or cfg.model_dir, args.out or cfg.results_dir
        if getattr(args, "in_process", False):
            from nbspark.spine.training import refuse_remote

            refuse_remote(cfg, args.data_dir, model, part="test", out=out)  # before a JVM would reach it
            where = "here"
        elif may_run_here(args, prog, (cfg.test.path, args.data_dir, model, out)):
            where = "auto"
        if where == "spark":
            use_hadoop()

        def inputs():  # resolved by the plan, after the model's manifest is read
            return resolve_input(cfg.test, args.data_dir)

        model = location(model)
        plan, run = classify_plan(cfg, model, inputs, out, explicit, args.overwrite, where)
        if plan.in_process:
            with damaged_files_named(plan.inputs.files):
                run(None, plan)
        else:
            use_hadoop()  # where the plan was made on local paths, to score with Spark
            with _spark(f"nbspark-classify-{cfg.name}") as spark, damaged_files_named(plan.inputs.files):
                run(spark, plan)
        print((plan.out / "report.txt").read_text(), end="")  # the report the job wrote: formatted once
        print(f"results written to {plan.out}")

    return _run(prog, body)


def query_main(argv=None, prog: str = "query.py") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="P(varying positions | fixed positions) over the 5-gram joint distribution. "
        "Each of --A..--E is a word (must match) or _ (varies); positions not given are summed over.",
    )
    common_options(parser, prog)
    for letter in "ABCDE":
        parser.add_argument(
            f"--{letter}",
            metavar="WORD|_",
            help=f"position {letter}" + (" (the centre word)" if letter == "C" else ""),
        )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--model", metavar="DIR", help="answer from a model's count tables (default: the config's model_dir)"
    )
    source.add_argument(
        "--ngrams",
        metavar="PATH",
        help="answer straight from an n-gram count file or directory (relative paths: under the data dir)",
    )
    parser.add_argument("--top", type=int, help=f"how many bindings to print (default {QUERY_TOP})")
    parser.add_argument(
        "--fold-case",
        action="store_true",
        help="lower-case a raw n-gram file's words (a model is as its tokenizer left it)",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="also write the answer as JSON (-: the JSON on stdout, not the report)"
    )
    density_options(parser)
    args = parser.parse_args(argv)
    cfg = config_of(args, parser)  # a model answers by its own counts: no config of it needed
    bindings = {c: getattr(args, c) for c in "ABCDE" if getattr(args, c) is not None}
    cells = density_cells(args, parser)
    if args.top is not None and args.top < 1:
        parser.error("--top must be at least 1")
    if args.fold_case and not args.ngrams:  # an option the run would ignore is refused
        parser.error(
            "--fold-case lower-cases the words of --ngrams files; a model is as its tokenizer left it"
        )
    if prog.startswith("nbspark") and not args.ngrams and (args.master or args.conf):
        parser.error("--master and --conf go to Spark, and a model's query is answered without it")
    top = QUERY_TOP if args.top is None else args.top

    def body():
        from nbspark.backoff.query import query
        from nbspark.inputs.resolve import resolve_input
        from nbspark.inputs.spec import InputSpec
        from nbspark.report.format import format_query_report
        from nbspark.storage.manifests import BACKOFF_KIND, DENSITY_KIND, NB_KIND, load_manifest

        in_process = prog.startswith("nbspark") and not args.ngrams  # a model needs no Spark to answer
        if not in_process:
            use_hadoop()
        answer = location(args.json) if args.json not in (None, STDOUT) else args.json
        if isinstance(answer, Location) and (
            answer.is_dir() or (answer.parent.exists() and not answer.parent.is_dir())
        ):
            raise OutputError(f"{answer}: --json names a file to write, and this path cannot be one")
        inputs = model = None
        if args.ngrams:
            inputs = resolve_input(InputSpec("ngrams", args.ngrams), args.data_dir)
        else:
            model = location(args.model or cfg.model_dir)
            kind = load_manifest(model, (BACKOFF_KIND, DENSITY_KIND, NB_KIND))["kind"]
            if kind == NB_KIND:
                raise ConfigError(
                    f"{model}: a naive Bayes model; query asks backoff and density models (nbspark "
                    "predict scores texts and rows with it)"
                )
            if kind == DENSITY_KIND:
                return density_query(model, args, bindings, cells, answer)
        if args.value or args.given or args.estimator or args.m is not None:
            raise ConfigError("--value, --given, --estimator and --m ask a density model (task = density)")
        if in_process:
            from nbspark.backoff.query import query_model

            result = query_model(model, bindings, top)
        else:
            with _spark("nbspark-query") as spark:
                result = query(
                    spark, bindings, top, model, inputs, args.fold_case, cfg.mode, cfg.max_bad_examples
                )
        say_answer(format_query_report(result), result, answer)

    return _run(prog, body)


def check_main(argv=None, prog: str = "check.py") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Flag confused words (affect/effect, their/there, …) in every file of a text corpus "
        "with a backoff "
        "model, in parallel; write flags/ (Parquet: file, line, column, written, suggestion, ratio, "
        "level, snippet), "
        "metrics.json and report.txt. The same flags as 'nbspark check FILE' on each file.",
    )
    parser.add_argument("--model", required=True, metavar="DIR", help="a backoff model directory")
    parser.add_argument(
        "--text",
        required=True,
        metavar="PATH",
        help="a UTF-8 text file or a directory of them (.gz read transparently)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="where the flags go")
    add_check_options(parser)
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    check_factor(parser, args)

    def body():
        from nbspark.backoff.check_job import check_corpus
        from nbspark.storage.manifests import BACKOFF_KIND, load_manifest

        use_hadoop()
        model, text = location(args.model), location(args.text)
        load_manifest(model, BACKOFF_KIND)
        if not text.exists():
            raise FileNotFoundError(f"{text}: no such file or directory")
        out = check_output(args.out, args.overwrite, [model, text])
        with _spark("nbspark-check") as spark:
            metrics = check_corpus(spark, model, text, out, args.factor, args.rule)
        from nbspark.report.format import format_check_report

        print(format_check_report(metrics))
        print(f"flags written to {out}/flags")

    return _run(prog, body)
