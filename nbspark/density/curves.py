"""The learning curve of the joint against the naive estimator, in process (no Spark): train on
nested seeded fractions of a table's rows, score the same test table each time, and write the
held-out log-likelihood per row of both against training size (``curve.json``, ``curve.csv``,
``curve.png``), so a user sees where the joint overfits (rows it never saw have probability 0, or
nearly, with ``m > 0``) and where the naive model generalizes.

A row is in the fraction ``f`` when a hash of the seed and its place in the table falls below ``f``
(``inputs.parsers.holdout_part``): a smaller fraction's rows are inside every larger one's.
"""

from __future__ import annotations

import logging

from nbspark.density.classifier import DensityClassifier
from nbspark.density.count import local_rows
from nbspark.density.edges import settle_bins
from nbspark.density.model import DensityModel, count_rows
from nbspark.density.scoring import add_scores, density_metrics
from nbspark.errors import InputError
from nbspark.inputs.parsers import holdout_part
from nbspark.report.curves import write_curve
from nbspark.report.plots import plot_density_curve
from nbspark.settings.config import DENSITY_MODELS
from nbspark.storage.tables import staged_output

__all__ = ["density_curve"]

log = logging.getLogger("nbspark")


def density_curve(
    cfg, train_inputs, test_inputs, out, fractions, seed: int = 0, target: str | None = None
) -> list[dict]:
    """Rows (one per fraction) of training rows, distinct rows and, per estimator, the held-out
    log-likelihood (``density.scoring.density_metrics``) and, with a ``target`` column, the test
    accuracy of classifying it by that density (``density.classifier``), written to ``out``."""
    cfg = settle_bins(None, cfg, train_inputs)  # quantiles of the whole training table, at every fraction
    columns, rows, _ = local_rows(cfg, train_inputs)
    _, test, _ = local_rows(cfg, test_inputs, columns)
    records, weights = [dict(zip(columns, values)) for values, _ in test], [w for _, w in test]
    m, curve = cfg.density.m, []
    for fraction in sorted(fractions):
        kept = [r for i, r in enumerate(rows) if holdout_part(str(i), seed, fraction) == "test"]
        if not kept:  # no model to score with (the default fractions start at 0.01: a small table)
            log.warning(
                "fraction %g: none of the %d training rows (seed %d); left out of the curve",
                fraction,
                len(rows),
                seed,
            )
            continue
        model = DensityModel.from_rows(count_rows(kept, columns), columns, m)
        counts: dict = {"rows": len(test), "weight": sum(weights)}
        for estimator in DENSITY_MODELS:
            add_scores(counts, estimator, model.log_density(records, estimator), weights)
        metrics = density_metrics(counts)
        if target:
            gold = [r[target] for r in records]
            for estimator in DENSITY_MODELS:
                classifier = DensityClassifier(model, target, estimator)
                metrics[estimator]["accuracy"] = classifier.score(records, gold)
        curve.append(
            {
                "fraction": fraction,
                "training_rows": len(kept),
                "training_weight": sum(w for _, w in kept),
                "distinct_rows": len(model.joint),
                "test_rows": len(test),
                **{e: metrics[e] for e in DENSITY_MODELS},
            }
        )
        log.info("fraction %g: %d training rows", fraction, len(kept))
    if not curve:
        given = ", ".join(f"{f:g}" for f in sorted(fractions))
        raise InputError(
            f"{train_inputs.root}: no fraction ({given}) samples any of its {len(rows):,} training rows "
            f"(seed {seed}); give larger --fractions"
        )
    fields = ["held_out_log_likelihood", "log_likelihood_of_seen_rows", "zero_probability_rows"]
    fields += ["accuracy"] if target else []
    with staged_output(out, "density-curve") as stage:
        write_curve(
            stage,
            {"columns": columns, "m": m, "target": target, "rows": curve},
            ["fraction", "training_rows", "distinct_rows"]
            + [f"{e}.{f}" for e in DENSITY_MODELS for f in fields],
            [
                [r["fraction"], r["training_rows"], r["distinct_rows"]]
                + [r[e][f] for e in DENSITY_MODELS for f in fields]
                for r in curve
            ],
            lambda png: plot_density_curve(
                curve,
                png,
                f"joint vs naive density of {train_inputs.root.name} ({len(columns)} columns), m = {m:g}, "
                f"{len(test):,} test rows" + (f", classifying {target}" if target else ""),
            ),
        )
    return curve
