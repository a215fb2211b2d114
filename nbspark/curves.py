"""Learning curves: train on nested seeded fractions of the training data, classify the same
test set each time, and write the table and the picture of "why more data helps"."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from .config import ExperimentConfig
from .metrics import level_name
from .pipeline import Inputs, classify, train
from .plots import plot_learning_curve
from .tables import staged_output, write_json

__all__ = ["DEFAULT_FRACTIONS", "format_curve", "learning_curve"]

DEFAULT_FRACTIONS = (0.01, 0.03, 0.1, 0.3, 1.0)


def learning_curve(spark, cfg: ExperimentConfig, train_inputs: Inputs, test_inputs: Inputs, out: Path,
                   fractions=DEFAULT_FRACTIONS, seed: int = 0, log=print) -> list[dict]:
    """Rows (one per fraction) of training size, accuracy, baseline and per-level coverage,
    written to ``out`` as ``curve.json``, ``curve.csv`` and ``curve.png``."""
    rows = []
    quiet = lambda *_: None  # noqa: E731
    with staged_output(out, "learning-curve") as stage:
        work = stage / "work"
        for fraction in sorted(fractions):
            run = dataclasses.replace(cfg, sample=fraction, sample_seed=seed, worked_examples=())
            manifest = train(spark, run, train_inputs, work / "model", log=quiet)
            metrics = classify(spark, run, work / "model", test_inputs, work / "results", log=quiet)
            rows.append(
                {
                    "fraction": fraction,
                    "examples": manifest["stats"]["examples"] - manifest["stats"].get("examples_not_sampled", 0),
                    "weight": sum(manifest["label_counts"].values()),
                    "test_examples": metrics["examples"],
                    "accuracy": metrics["accuracy"],
                    "majority_baseline": metrics["majority_baseline"],
                    "levels": [{k: lv[k] for k in ("name", "examples", "accuracy", "coverage")} for lv in metrics["levels"]],
                }
            )
            log(f"  fraction {fraction:>5}: {rows[-1]['weight']:>14,} counted, accuracy {metrics['accuracy']:.4f}")
            shutil.rmtree(work)
        write_json(stage / "curve.json", {"config": cfg.name, "seed": seed, "rows": rows})
        names = [lv["name"] for lv in rows[0]["levels"]]
        header = "fraction,examples,weight,test_examples,accuracy,majority_baseline," + ",".join(f"coverage_{n}" for n in names)
        lines = [header] + [
            f"{r['fraction']},{r['examples']},{r['weight']},{r['test_examples']},{r['accuracy']:.6f},{r['majority_baseline']:.6f},"
            + ",".join(f"{lv['coverage'] or 0:.6f}" for lv in r["levels"])
            for r in rows
        ]
        (stage / "curve.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        plot_learning_curve(rows, stage / "curve.png", f"{cfg.name}: accuracy grows with training data")
    log(format_curve(rows))
    return rows


def format_curve(rows: list[dict]) -> str:
    names = [lv["name"] for lv in rows[0]["levels"]]
    head = f"{'fraction':>9}{'counted':>14}{'accuracy':>10}{'baseline':>10}" + "".join(f"{level_name(n) if n else '∅':>8}" for n in names)
    lines = [head + "   (coverage by level)"]
    for r in rows:
        cov = "".join(f"{(lv['coverage'] or 0):>8.3f}" for lv in r["levels"])
        lines.append(f"{r['fraction']:>9}{r['weight']:>14,}{r['accuracy']:>10.4f}{r['majority_baseline']:>10.4f}{cov}")
    return "\n".join(lines)
