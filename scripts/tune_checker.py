"""Choose the checker's default decision rule and factor on data it is not judged on.

Reuters-21578 stories are split by NEWID parity: the rule and factor with the highest recall at
p >= --min-p (all confusion sets and directions pooled) on the odd stories are chosen, then
reported on the even ones, for each model given. No Spark: the models are read with nbspark.load.

    python scripts/tune_checker.py --data-dir ../shared/data out/confusion_sets/model out/affect_effect/model
"""

from __future__ import annotations

import argparse
from pathlib import Path

import nbspark
from nbspark.backoff.evaluation import FACTORS, clean_documents, evaluate, pooled
from nbspark.settings.check import Rule

CANDIDATES = (
    [Rule("chain")]
    + [Rule("evidence", min_evidence=n) for n in (2, 5, 10, 20)]
    + [Rule("interpolate", m=m) for m in (0.3, 1.0, 3.0, 10.0)]
)


def name(rule: Rule) -> str:
    return {
        "chain": "chain",
        "evidence": f"evidence n={rule.min_evidence}",
        "interpolate": f"interpolate m={rule.m:g}",
    }[rule.name]


def pooled_pr(rows) -> dict:
    """``{(rule, factor): (p, r)}`` over every set and direction (``evaluation.pooled``)."""
    return {(r["rule"], r["factor"]): (r["p"], r["r"]) for r in pooled(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("models", nargs="+")
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--min-p", type=float, default=0.995)
    args = parser.parse_args()
    stories = list(clean_documents("reuters", Path(args.data_dir) / "reuters21578"))
    odd = [d for d in stories if int(d[0].split(":")[1]) % 2]
    even = [d for d in stories if not int(d[0].split(":")[1]) % 2]
    rules = {name(r): r for r in CANDIDATES}
    for path in args.models:
        model = nbspark.load(path)
        tune, test = pooled_pr(evaluate(model, odd, rules)), pooled_pr(evaluate(model, even, rules))
        ok = [(r, k, rule, f) for (rule, f), (p, r) in tune.items() if p >= args.min_p for k in [0]]
        print(f"{path}: p and r pooled over every set and direction; odd NEWIDs tune, even NEWIDs test")
        print(
            f"  {'rule':<18} {'best factor (odd)':>18} {'p odd':>7} {'r odd':>7} {'p even':>7} {'r even':>7}"
        )
        for rule in rules:
            mine = sorted((r, -f, f) for (rr, f), (p, r) in tune.items() if rr == rule and p >= args.min_p)
            if not mine:
                print(f"  {rule:<18} {'(p < ' + str(args.min_p) + ' at every factor)':>18}")
                continue
            f = mine[-1][2]
            print(
                f"  {rule:<18} {f:>18g} {tune[(rule, f)][0]:>7.4f} {tune[(rule, f)][1]:>7.4f} "
                f"{test[(rule, f)][0]:>7.4f} {test[(rule, f)][1]:>7.4f}"
            )
        if ok:
            r, _, rule, f = max(ok, key=lambda t: (t[0], -t[3]))
            print(
                f"  chosen on odd: {rule} at factor {f:g} -> even p={test[(rule, f)][0]:.4f} "
                f"r={test[(rule, f)][1]:.4f}"
            )
    print(f"factors tried: {', '.join(f'{f:g}' for f in FACTORS)}")


if __name__ == "__main__":
    main()
