"""``nbspark show --model DIR [--top K] [--json]``: what a model holds (``describing.describe``), read
without Spark: its kind, version, settings, what it was trained on, its counts and, for a naive Bayes
text model, the tokens that speak most for each class."""

from __future__ import annotations

import argparse
import json
import sys

from nbspark.errors import NbsparkError
from nbspark.report.format import malformed_lines

__all__ = ["show_main", "show_text"]

#: the updates listed one by one; past it, the first and the last ones and how many between
UPDATES_SHOWN = 4


def _number(v) -> str:
    """A setting or a statistic as the report prints it: 4,395, true, a list as ABD,BD,∅."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, list):
        return ",".join(str(x) or "∅" for x in v)
    return str(v)


def _update(u: dict) -> str:
    files = f" ({u['files']:,} file{'s' if u['files'] != 1 else ''})" if u["files"] else ""
    return f"{u['format']} {u['root']}{files}, {u['created']}"


def show_text(d: dict, path: str) -> list[str]:
    """``describe``'s dict as the lines ``nbspark show`` prints."""
    family = {"naive_bayes": "naive Bayes", "backoff": "backoff n-gram", "density": "density"}[d["family"]]
    kind = f", {d['kind']}" if d["family"] == "naive_bayes" else ""
    lines = [
        path,
        f"  {family} model{kind}; version {d['version']}, trained {d['trained']}"
        f" (nbspark {d['nbspark_version']})",
        "  settings: " + "  ".join(f"{k}={_number(v)}" for k, v in d["settings"].items()),
    ]
    updates = d["updates"]
    shown = updates if len(updates) <= UPDATES_SHOWN else [updates[0], None, updates[-1]]
    lines.append(f"  counted from ({len(updates)} run{'s' if len(updates) != 1 else ''}):")
    lines += [f"    … {len(updates) - 2:,} more" if u is None else f"    {_update(u)}" for u in shown]
    lines.append("  statistics: " + "  ".join(f"{k}={_number(v)}" for k, v in d["stats"].items()))
    if d["malformed_examples"]:
        lines.append("  the first records skipped:")
        lines += [f"  {line}" for line in malformed_lines(d["malformed_examples"], 80)]
    if "columns" in d:
        lines.append(f"  columns ({len(d['columns'])}): {', '.join(d['columns'])}")
    if d["family"] == "naive_bayes":
        total = sum(d["examples"].values()) or 1
        lines.append(
            "  examples per class: "
            + ", ".join(f"{c} {_number(n)} ({100 * n / total:.1f} %)" for c, n in d["examples"].items())
        )
        if "indicative_tokens" in d:
            lines.append(f"  tokens: {d['features']:,}; those that speak most for each class")
            lines.append("  (log P(token | class) − the largest log P(token | other class)):")
            width = max(len(str(c)) for c in d["indicative_tokens"]) if d["indicative_tokens"] else 0
            for c, tokens in d["indicative_tokens"].items():
                said = ", ".join(f"{t['token']} {t['log_ratio']:.2f}" for t in tokens)
                lines.append(f"    {str(c):<{width}}  {said}")
    elif d["family"] == "backoff":
        lines.append("  confusion sets: " + "; ".join(", ".join(s) for s in d["confusion_sets"]))
        lines.append(
            "  contexts counted (chain, most specific first): "
            + ", ".join(f"{c or '∅'} {_number(d['distinct_events'].get(c, 0))}" for c in d["chain"])
        )
    else:
        lines.append(f"  distinct rows: {d['distinct_rows']:,} (total weight {d['total']:g})")
        lines.append("  values per column: " + ", ".join(f"{c} {n:,}" for c, n in d["values"].items()))
        for c, edges in d["bins"].items():
            settled = (
                f" (quantiles:{d['quantiles'][c]} of the first data counted)" if c in d["quantiles"] else ""
            )
            lines.append(f"  {c} binned at {', '.join(f'{e:g}' for e in edges)}{settled}")
    return lines


def show_main(argv: list[str]) -> int:
    """``nbspark show``: describe a model directory."""
    parser = argparse.ArgumentParser(
        prog="nbspark show",
        description="What a model directory holds, read without Spark: its kind, version, settings, "
        "what it was trained on, its counts and, for a naive Bayes text model, the tokens that speak "
        "most for each class.",
    )
    parser.add_argument("--model", required=True, metavar="DIR", help="the model directory")
    parser.add_argument(
        "--top", type=int, default=10, metavar="K", help="tokens shown per class (default 10; 0: none)"
    )
    parser.add_argument("--json", action="store_true", help="the description as one JSON object")
    args = parser.parse_args(argv)
    if args.top < 0:
        parser.error(f"--top must be >= 0, got {args.top}")
    from nbspark.describing import describe
    from nbspark.loading import load

    try:
        described = describe(load(args.model), args.top)
    except (NbsparkError, ValueError, OSError) as exc:
        print(f"nbspark show: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(described, ensure_ascii=False))
    else:
        print("\n".join(show_text(described, args.model)))
    return 0
