"""The learning curve's command line (``jobs/learning_curve.py``, ``nbspark curve``): nested seeded
fractions of the training data, each counted and scored on the same test set, in process below the
bound as ``train`` chooses (``app.cli._count_here``), else with Spark; a density model's in process
(``app.density``)."""

from __future__ import annotations

import argparse
import logging

from nbspark.app.cli import _count_here, _run, _spark
from nbspark.app.density import density_curve_command
from nbspark.app.options import common_options, config_of
from nbspark.storage.locations import location, use_hadoop
from nbspark.storage.tables import check_output

__all__ = ["curve_main"]

log = logging.getLogger("nbspark")


def curve_main(argv=None, prog: str = "learning_curve.py") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Train on nested seeded fractions of the training data, classify the same test set "
        "each time; write curve.json, curve.csv and curve.png.",
    )
    common_options(parser, prog)
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="where the curve goes (default: next to the config's results_dir, learning_curve/)",
    )
    parser.add_argument(
        "--fractions", default="0.01,0.03,0.1,0.3,1", help="training fractions (default 0.01,0.03,0.1,0.3,1)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="which records each fraction samples (0); the fractions are nested: each holds the smaller",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing curve in --out")
    parser.add_argument(
        "--target",
        metavar="COLUMN",
        help="density models: also classify this column by each density and draw the test accuracy",
    )
    args = parser.parse_args(argv)
    cfg = config_of(args, parser)
    if args.target and cfg.task != "density":
        parser.error("--target goes with a density task (task = density)")
    if cfg.task == "density" and (getattr(args, "master", None) or getattr(args, "conf", None)):
        parser.error("--master and --conf go to Spark, and a density curve runs in process without it")
    try:
        fractions = sorted({float(f) for f in args.fractions.split(",")})
    except ValueError:
        parser.error(f"--fractions must be numbers, got {args.fractions!r}")
    if not fractions or not all(0 < f <= 1 for f in fractions):  # NaN too: it would sample nothing
        parser.error("--fractions must lie in (0, 1]")

    def body():
        from nbspark.inputs.resolve import resolve_input

        if cfg.task == "density":  # in process: the curve of a table of local files, no Spark
            return density_curve_command(cfg, args, fractions)
        if cfg.task == "naive_bayes":  # the same steps, the family's own curve
            from nbspark.naive_bayes.curves import check_nb_curve as check_curve
            from nbspark.naive_bayes.curves import nb_learning_curve as learning_curve
            from nbspark.report.format import format_nb_curve as format_curve
        else:
            from nbspark.backoff.curves import check_curve, learning_curve
            from nbspark.report.format import format_curve

        check_curve(cfg)
        here, train_inputs = _count_here(args, prog, cfg, out=args.out or cfg.results_dir)  # as train chooses
        if not here:
            use_hadoop()
            train_inputs = resolve_input(cfg.train, args.data_dir)
        test_inputs = resolve_input(cfg.test, args.data_dir)
        default = location(cfg.results_dir).parent / "learning_curve"
        out = check_output(args.out or default, args.overwrite, [train_inputs.root, test_inputs.root])
        if here:
            rows = learning_curve(None, cfg, train_inputs, test_inputs, out, fractions, args.seed)
        else:
            with _spark(f"nbspark-curve-{cfg.name}") as spark:
                rows = learning_curve(spark, cfg, train_inputs, test_inputs, out, fractions, args.seed)
        print(format_curve(rows))
        print(f"curve written to {out} (curve.csv, curve.json, curve.png)")

    return _run(prog, body)
