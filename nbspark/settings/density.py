"""The ``[density]`` section's validation. Pure. The estimators' maths is ``density.model``."""

from __future__ import annotations

from nbspark.errors import ConfigError

__all__ = ["DENSITY_MODELS", "check_density"]

#: The two estimators of the lecture, by name.
DENSITY_MODELS = ("joint", "naive")


def check_density(density, finite) -> None:
    """Refuse (``ConfigError``) a ``DensitySpec`` whose settings cannot be counted or scored;
    ``finite`` is ``settings.config.check_number``."""
    if density.model not in DENSITY_MODELS:
        raise ConfigError(f"density.model must be one of {', '.join(DENSITY_MODELS)}, got {density.model!r}")
    finite("density.m", density.m, 0.0)
    if density.classifier not in DENSITY_MODELS:
        raise ConfigError(
            f"density.classifier must be one of {', '.join(DENSITY_MODELS)}, got {density.classifier!r}"
        )
    if density.target and density.target == density.weight_column:
        raise ConfigError("density.target must be a modelled column, not the weight column")
    if len(set(density.columns)) != len(density.columns) or density.weight_column in density.columns:
        raise ConfigError("density.columns must name distinct columns, and not the weight column")
    _check_bins(density)


def _check_bins(density) -> None:
    """``density.bins`` read (``inputs.bins.parse_bins``), each a modelled column."""
    from nbspark.inputs.bins import parse_bins

    try:
        binned = parse_bins(density.bins)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if outside := [
        c for c in binned if c == density.weight_column or density.columns and c not in density.columns
    ]:
        raise ConfigError(f"density.bins: {outside[0]!r} is not a modelled column (density.columns)")
