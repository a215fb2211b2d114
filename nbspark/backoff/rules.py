"""Decision rules of the checker: how the counts of every backoff level turn into a judgement of
the written word against the other words of its confusion set. Pure.

A window's evidence is, for each subset of the chain (most specific first), the counts of the
set's words seen with the window's context there (``levels``). Each rule gives every candidate a
score proportional to its probability, and the level it reports:

* ``chain``: Cohen's backoff. The first level where any candidate was seen decides alone, with its
  counts. A single count at ABDE outweighs thousands at B.
* ``evidence``: the chain, but a level decides only when its candidates were seen at least
  ``min_evidence`` times together; when no level has that much, the chain's level decides.
* ``interpolate``: every level counts. From the least specific level to the most specific, the
  estimate is Cohen's m-estimate with the level below as its prior,
  ``P_k(w) = (c_k(w) + m · P_{k+1}(w)) / (c_k + m)``, starting from the uniform ``1/|set|``;
  the score is ``P`` at the most specific level, and the level reported is the most specific one
  with counts. A level with few counts moves the estimate little; one with many decides.

A word is flagged when ``score(suggestion) / score(written) >= factor`` (``judge``); the
suggestion is the best-scored other word of the set (ties: the word that sorts last, as
``max`` over ``(score, word)``). A ratio is infinite when the written word scores 0. A verdict
whose level has fewer than two context words (``B`` alone, or the prior) needs at least
``rule.thin_factor`` as well (``flag_ratio``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nbspark.settings.check import Rule

__all__ = ["UNSEEN", "Judgement", "flag_ratio", "judge", "scores"]

UNSEEN = "unseen"

Levels = Sequence[tuple[str, dict[str, int]]]


@dataclass(frozen=True)
class Judgement:
    suggestion: str
    ratio: float
    level: str


def _seen(counts: dict[str, int], candidates: Iterable[str]) -> int:
    return sum(counts.get(c, 0) for c in candidates)


def scores(rule: Rule, levels: Levels, candidates: Sequence[str]) -> tuple[dict[str, float], str]:
    """Each candidate's score under ``rule``, and the level reported (``UNSEEN``: no level saw any)."""
    seen = [(subset, counts) for subset, counts in levels if _seen(counts, candidates) > 0]
    if not seen:
        return dict.fromkeys(candidates, 0.0), UNSEEN
    if rule.name == "interpolate":
        p = {c: 1.0 / len(candidates) for c in candidates}
        for _subset, counts in reversed(levels):
            n = _seen(counts, candidates)
            p = {c: (counts.get(c, 0) + rule.m * p[c]) / (n + rule.m) for c in candidates}
        return p, seen[0][0]
    subset, counts = seen[0]
    if rule.name == "evidence":
        subset, counts = next(((s, c) for s, c in seen if _seen(c, candidates) >= rule.min_evidence), seen[0])
    return {c: float(counts.get(c, 0)) for c in candidates}, subset


def judge(rule: Rule, levels: Levels, written: str, candidates: Sequence[str]) -> Judgement | None:
    """The best other word of the set, how many times it beats ``written``, and the level; None
    when no level saw the context or no other word scores above 0."""
    s, level = scores(rule, levels, candidates)
    others = [c for c in candidates if c != written]
    if level == UNSEEN or not others:
        return None
    best = max(others, key=lambda c: (s[c], c))
    if s[best] <= 0:
        return None
    return Judgement(best, s[best] / s[written] if s.get(written, 0) > 0 else math.inf, level)


def flag_ratio(rule: Rule, verdict: Judgement | None) -> float:
    """The ratio a factor is held against: the verdict's, or 0 (never flagged) when there is no
    verdict or its level has fewer than two context words and its ratio is below
    ``rule.thin_factor``. A word is flagged at ``factor`` when ``flag_ratio(...) >= factor``."""
    if verdict is None or (len(verdict.level) < 2 and verdict.ratio < rule.thin_factor):
        return 0.0
    return verdict.ratio
