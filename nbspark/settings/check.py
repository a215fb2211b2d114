"""The checker's settings: its decision rules by name (``RULES``), a rule with its parameter
(``Rule``), the factor's range, and the ``[check]`` section's validation. Pure. The rules' maths
is ``backoff.rules``."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["RULES", "Rule", "check_spec", "factor_problem"]

RULES = ("chain", "evidence", "interpolate")


@dataclass(frozen=True)
class Rule:
    """A decision rule and its one parameter (``min_evidence`` for evidence, ``m`` for interpolate),
    and ``thin_factor``, the least factor of a verdict decided with fewer than two context words."""

    name: str = "interpolate"
    min_evidence: int = 5
    m: float = 0.3
    thin_factor: float = 200.0

    def __post_init__(self) -> None:
        if self.name not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}, got {self.name!r}")
        if self.min_evidence < 1 or not (math.isfinite(self.m) and self.m > 0):
            raise ValueError(
                f"min_evidence must be >= 1 and m finite and > 0, got {self.min_evidence}, {self.m}"
            )
        if problem := factor_problem(self.thin_factor):
            raise ValueError(f"thin_factor {problem}")


def factor_problem(factor: float) -> str | None:
    """Why ``factor`` cannot be the checker's factor (None: it can). A word is flagged when another
    word of its set is at least ``factor`` times as probable, so it is a finite number >= 1."""
    if (
        isinstance(factor, (int, float))
        and not isinstance(factor, bool)
        and math.isfinite(factor)
        and factor >= 1
    ):
        return None
    return f"must be a finite number >= 1, got {factor!r}"


def check_spec(cfg, finite) -> None:
    """Refuse ``[check]`` settings that cannot apply (``finite`` checks a number's range)."""
    from nbspark.errors import ConfigError

    check = cfg.check
    for name in (check.rule, *check.rules):
        if name not in RULES:
            raise ConfigError(f"check.rule(s) must be one of {', '.join(RULES)}, got {name!r}")
    for key, values in (("check.rules", check.rules), ("check.factors", check.factors)):
        if values and len(values) != len(cfg.sets):
            raise ConfigError(f"{key} needs one value per confusion set ({len(cfg.sets)}), got {len(values)}")
    for factor in (check.factor, *check.factors):
        if problem := factor_problem(factor):
            raise ConfigError(f"check.factor(s) {problem}")
    if problem := factor_problem(check.thin_factor):
        raise ConfigError(f"check.thin_factor {problem}")
    finite("check.m", check.m, 0.0, low_open=True)
    if check.min_evidence < 1:
        raise ConfigError(f"check.min_evidence must be >= 1, got {check.min_evidence}")
