"""``nbspark check``: confused words in plain text with a backoff model, without Spark, as a linter
prints them; or, with ``--evaluate``, the checker's precision and recall by LanguageTool's protocol.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from nbspark.app.options import report_undecodable, stdin_bytes
from nbspark.errors import ConfigError, NbsparkError
from nbspark.inputs.decoding import BINARY_SIGN
from nbspark.settings.check import RULES

__all__ = ["check_main"]


def check_main(argv: list[str]) -> int:
    """``nbspark check``: flag confusion-set words that an alternative beats by ``--factor``, as a
    linter prints them (``FILE:LINE:COL: 'effect' → 'affect'? (ratio 38.2, level B) …``)."""
    from nbspark.app.options import add_check_options, check_factor

    parser = argparse.ArgumentParser(
        prog="nbspark check",
        description="Find confused words (affect/effect, their/there, …) in plain text with a backoff model, "
        "without Spark. A word is flagged when another word of its confusion set is at least FACTOR times "
        "more probable in its context, under the decision rule (default: the model's check settings, "
        "interpolation of every backoff level; 'chain' decides at the first level that has seen the "
        "context).",
    )
    parser.add_argument("--model", required=True, metavar="DIR", help="a backoff model directory")
    add_check_options(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per flag")
    parser.add_argument(
        "--fail-on-flag",
        action="store_true",
        help="exit 1 when anything is flagged (for CI); the exit status is 0 when nothing is flagged, "
        "2 on an error (a file that cannot be read or, named, is not text; a bad setting or model)",
    )
    parser.add_argument(
        "--evaluate",
        action="append",
        default=[],
        metavar="FORMAT:PATH",
        help="evaluate on clean text instead (reuters:DIR, brown:ZIP or text:PATH; repeatable): "
        "LanguageTool's protocol, a table per factor, evaluation.json and pr.png in --out",
    )
    parser.add_argument("--out", metavar="DIR", help="with --evaluate: where evaluation.json and pr.png go")
    parser.add_argument(
        "--overwrite", action="store_true", help="with --evaluate: replace an earlier evaluation in --out"
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="UTF-8 text files or directories of them ('-' reads stdin, and a pipe such as <(cmd) is read "
        "too; .gz read too)",
    )
    args = parser.parse_args(argv)
    check_factor(parser, args)
    if bool(args.evaluate) == bool(args.files) or (args.evaluate and not args.out):
        parser.error("give FILEs to check, or --evaluate FORMAT:PATH with --out DIR")
    _refuse_ignored(parser, args)
    from nbspark.backoff.predictor import BackoffPredictor
    from nbspark.loading import load

    try:
        model = load(args.model)
        if not isinstance(model, BackoffPredictor):
            what = "a density model" if model.kind == "density" else "a naive Bayes model"
            raise ValueError(f"{args.model}: {what}; nbspark check needs a backoff model")
        if args.evaluate:
            return _evaluate(model, args)
        flagged, unread = _check(model, args)
    except (NbsparkError, ValueError, OSError) as exc:
        print(f"nbspark check: error: {exc}", file=sys.stderr)
        return 2  # an error, never a flag: CI tells the two apart
    if unread:  # a file named but not text: the rest was checked, yet the run did not do what was asked
        return 2
    return 1 if flagged and args.fail_on_flag else 0


def _check(model, args) -> tuple[int, int]:
    """Print the flags of ``args.files`` as a linter does, and a summary of what was checked (and so
    what was not) on ``nbspark.check``'s logger; the number of flags, and of the files named that are
    not text (each said at once; a directory's binary files are only counted in the summary)."""
    from nbspark.spine.predictor import some_names

    files = words = flagged = unread = 0
    skipped = []  # binary files of the directories given: not text, not checked
    for name, read, named in _texts(args.files):
        if read.binary:
            if named:  # asked for by name: said at once, not only in the summary
                print(
                    f"nbspark check: {name}: not text (a NUL byte near its start: {BINARY_SIGN}); "
                    "not checked",
                    file=sys.stderr,
                )
                unread += 1
            else:
                skipped.append(name)
            continue
        report_undecodable("check", name, read.replaced)
        files += 1
        for flag in model.check(read.text, args.factor, args.rule):  # every set word, to count them
            words += 1
            if not flag["flagged"]:
                continue
            flagged += 1
            flag = {"file": name, **flag}
            if args.json:  # JSON has no infinity: null when the written word was never seen there
                print(
                    json.dumps(
                        {**flag, "ratio": None if flag["ratio"] == float("inf") else flag["ratio"]},
                        ensure_ascii=False,
                    )
                )
            else:
                print(_flag_line(flag))
    # what was checked, and so what was not: only the model's confusion sets (-q leaves it out)
    logging.getLogger("nbspark.check").info(
        "checked %s file%s%s: %s of %s confusion-set word%s flagged; the model checks %s, and no other words",
        f"{files:,}",
        "" if files == 1 else "s",
        f" ({len(skipped):,} binary skipped: {some_names(skipped, 3)})" if skipped else "",
        f"{flagged:,}",
        f"{words:,}",
        "" if words == 1 else "s",
        "; ".join("/".join(sorted(s)) for s in model.sets),
    )
    return flagged, unread


def _refuse_ignored(parser, args) -> None:
    """``nbspark check``'s options that the run would ignore, refused: the checking ones with
    ``--evaluate`` (it reports every factor, as tables and a JSON file), the evaluation's without."""
    if args.evaluate:
        ignored = {
            "--factor": args.factor is not None,
            "--json": args.json,
            "--fail-on-flag": args.fail_on_flag,
        }
        by = "--evaluate, which reports every factor"
    else:
        ignored, by = (
            {"--out": args.out, "--overwrite": args.overwrite},
            "checking files (they go with --evaluate)",
        )
    if given := [name for name, used in ignored.items() if used]:
        parser.error(f"{', '.join(given)}: not used by {by}")


def _evaluate(model, args) -> int:
    """``nbspark check --evaluate``: every rule at every factor on each clean text; the tables on
    stdout, ``evaluation.json`` and ``pr.png`` in ``--out`` (staged: all or nothing)."""
    from nbspark.backoff.evaluation import clean_documents, evaluate, format_evaluation, plot_pr
    from nbspark.report.plots import require_matplotlib
    from nbspark.settings.check import Rule
    from nbspark.storage.tables import check_output, staged_output, write_json

    texts = []
    for item in args.evaluate:
        fmt, sep, path = item.partition(":")
        if not sep or fmt not in ("reuters", "brown", "text"):
            raise ConfigError(
                f"--evaluate needs FORMAT:PATH with FORMAT reuters, brown or text, got {item!r}"
            )
        texts.append((fmt, path))
    out = check_output(args.out, args.overwrite, [args.model] + [p for _, p in texts])
    require_matplotlib()
    rule = model.rule_for(model.sets[0])[0]
    rules = {
        name: Rule(name, rule.min_evidence, rule.m, rule.thin_factor)
        for name in ([args.rule] if args.rule else RULES)
    }
    report = {"model": str(args.model), "rules": {k: vars(v) for k, v in rules.items()}, "texts": []}
    with staged_output(out, "evaluation") as staging:
        for i, (fmt, path) in enumerate(texts):
            rows = evaluate(model, clean_documents(fmt, path), rules)
            title = f"{args.model} on {fmt}:{path}"
            print(format_evaluation(rows, title) + "\n")
            report["texts"].append({"format": fmt, "path": path, "rows": rows})
            plot_pr(rows, staging / ("pr.png" if len(texts) == 1 else f"pr-{i + 1}-{fmt}.png"), title)
        write_json(staging / "evaluation.json", report)
    print(f"wrote {out}/evaluation.json and the p/r plot(s)")
    return 0


def _texts(names: list[str]):
    """``(name, text read, whether it was named)`` of each FILE argument (``inputs.files.decode_text``:
    a binary file is read as none): ``-`` is stdin, a pipe (a shell's ``<(cmd)``, a FIFO) is read as
    stdin is, and a directory gives its files as the check job lists them
    (``inputs.files.list_files``), not named."""
    from nbspark.inputs.files import decode_text, list_files
    from nbspark.storage.locations import location

    for name in names:
        if name == "-":
            yield "<stdin>", decode_text(stdin_bytes().read(), name), True
            continue
        root = location(name)
        # a pipe (<(cmd), a FIFO) is neither a file nor a directory: read as stdin is, where
        # list_files would refuse it; a plain file answers the first lookup and goes on to the listing
        if not root.is_file() and not root.is_dir() and root.exists():
            yield name, decode_text(root.read_bytes(), name), True
            continue
        files = list_files(root)
        if not files:  # an empty directory is a mistyped path more often than a clean text
            raise FileNotFoundError(
                f"{name}: no text files in this directory (names not starting with _ or .)"
            )
        for f in files:
            shown = name if f.uri == root.uri else str(f)
            yield shown, decode_text(f.read_bytes(), shown), f.uri == root.uri


def _flag_line(f: dict) -> str:
    r = f["ratio"]
    ratio = (
        "inf" if r == float("inf") else f"{r:.1f}" if r < 1e6 else f"{r:.1e}"
    )  # 3.8e+19, not twenty digits
    return (
        f"{f['file']}:{f['line']}:{f['column']}: {f['written']!r} → {f['suggestion']!r}? (ratio "
        f"{ratio}, level {f['level'] or '∅'}) {f['snippet']}"
    )
