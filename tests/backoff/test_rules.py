"""The checker's decision rules (``nbspark.backoff.rules``) on level counts written by hand."""

import math

import pytest

from nbspark.backoff.rules import UNSEEN, Judgement, flag_ratio, judge, scores
from nbspark.settings.check import Rule

SET = ["affect", "effect"]
# one stray count at ABDE against thousands at B
LEVELS = [
    ("ABDE", {"affect": 1}),
    ("ABD", {}),
    ("BD", {}),
    ("B", {"effect": 4000, "affect": 20}),
    ("", {"effect": 90, "affect": 10}),
]


def test_the_chain_decides_at_the_first_level_seen():
    verdict = judge(Rule("chain"), LEVELS, "effect", SET)
    assert (verdict.suggestion, verdict.ratio, verdict.level) == ("affect", math.inf, "ABDE")


def test_minimum_evidence_skips_thin_levels():
    verdict = judge(Rule("evidence", min_evidence=5), LEVELS, "effect", SET)
    assert (verdict.suggestion, verdict.ratio, verdict.level) == ("affect", 20 / 4000, "B")
    # no level has the evidence: the chain's level decides
    thin = [("ABDE", {"affect": 1}), ("", {"effect": 2})]
    assert judge(Rule("evidence", min_evidence=5), thin, "effect", SET).level == "ABDE"


def test_interpolation_by_hand():
    m = 1.0
    p_a, p_e = 0.5, 0.5
    p_a, p_e = (10 + m * p_a) / (100 + m), (90 + m * p_e) / (100 + m)  # the prior
    p_a, p_e = (20 + m * p_a) / (4020 + m), (4000 + m * p_e) / (4020 + m)  # B
    # BD and ABD saw nothing: (0 + m p) / (0 + m) leaves p as it is
    p_a, p_e = (1 + m * p_a) / (1 + m), (0 + m * p_e) / (1 + m)  # ABDE
    s, level = scores(Rule("interpolate", m=m), LEVELS, SET)
    assert s == pytest.approx({"affect": p_a, "effect": p_e}) and level == "ABDE"
    verdict = judge(Rule("interpolate", m=m), LEVELS, "effect", SET)
    assert verdict.ratio == pytest.approx(p_a / p_e) and verdict.ratio < 2  # one count no longer outweighs B


def test_nothing_seen_and_bad_rules():
    assert judge(Rule("chain"), [("B", {}), ("", {})], "effect", SET) is None
    assert scores(Rule("interpolate"), [("B", {"other": 3})], SET)[1] == UNSEEN
    with pytest.raises(ValueError, match="rule must be one of"):
        Rule("vote")
    with pytest.raises(ValueError, match="m finite"):
        Rule("interpolate", m=0)


def test_a_verdict_of_fewer_than_two_context_words_needs_the_thin_factor():
    """B alone ("and _") or the prior decides: flagged only at a ratio of at least thin_factor (200)."""
    rule = Rule("chain")
    at_b = judge(rule, [("ABD", {}), ("B", {"effect": 4000, "affect": 20})], "affect", SET)
    assert (at_b.ratio, at_b.level) == (200.0, "B") and flag_ratio(rule, at_b) == 200.0  # 200 >= 200
    weaker = judge(rule, [("ABD", {}), ("B", {"effect": 3980, "affect": 20})], "affect", SET)
    assert weaker.ratio == 199.0 and flag_ratio(rule, weaker) == 0.0  # below 200: never flagged
    assert flag_ratio(Rule("chain", thin_factor=100), weaker) == 199.0
    # the prior alone (no context at all) is thin too; two context words are not
    assert flag_ratio(rule, Judgement("effect", 20.0, "")) == 0.0
    assert flag_ratio(rule, Judgement("effect", 20.0, "BD")) == 20.0
    assert flag_ratio(rule, None) == 0.0
    with pytest.raises(ValueError, match="thin_factor must be a finite number >= 1"):
        Rule("chain", thin_factor=0.5)
