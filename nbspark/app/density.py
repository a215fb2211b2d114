"""The density model's corner of the jobs' command lines (``app.cli``): ``query``'s ``--value`` and
``--given`` options and their answer by ``nbspark.load``, and the learning curve of a density
model, drawn in process. No Spark."""

from __future__ import annotations

import argparse

from nbspark.app.options import say_answer
from nbspark.errors import ConfigError
from nbspark.settings.config import check_number
from nbspark.storage.locations import location
from nbspark.storage.tables import check_output

__all__ = ["density_cells", "density_curve_command", "density_options", "density_query"]


def density_curve_command(cfg, args, fractions) -> None:
    """``learning_curve`` of a density model: a table of local files, counted in process."""
    from nbspark.density.curves import density_curve
    from nbspark.inputs.resolve import resolve_input
    from nbspark.report.format import format_density_curve
    from nbspark.report.plots import require_matplotlib
    from nbspark.settings.capabilities import test_problem
    from nbspark.spine.training import refuse_remote

    if problem := test_problem(cfg):
        raise ConfigError(problem)
    refuse_remote(cfg, args.data_dir, out=args.out)
    require_matplotlib()
    train_inputs = resolve_input(cfg.train, args.data_dir)
    test_inputs = resolve_input(cfg.test, args.data_dir)
    default = location(cfg.results_dir).parent / "learning_curve"
    out = check_output(args.out or default, args.overwrite, [train_inputs.root, test_inputs.root])
    rows = density_curve(cfg, train_inputs, test_inputs, out, fractions, args.seed, args.target)
    print(format_density_curve(rows))
    print(f"curve written to {out} (curve.csv, curve.json, curve.png)")


def density_options(parser: argparse.ArgumentParser) -> None:
    """``query``'s options for a density model: ``--value``, ``--given``, ``--estimator``, ``--m``."""
    density = parser.add_argument_group("a density model (task = density)")
    density.add_argument(
        "--value",
        action="append",
        default=[],
        metavar="COLUMN=CELL",
        help="P(these values | …): a column and its cell as the table writes it (COLUMN= is an empty cell)",
    )
    density.add_argument(
        "--given", action="append", default=[], metavar="COLUMN=CELL", help="… | these values"
    )
    density.add_argument("--estimator", choices=("joint", "naive"), help="default: the model's density.model")
    density.add_argument("--m", type=float, help="Dirichlet smoothing (default: the model's density.m)")


def density_cells(args, parser) -> dict[str, dict]:
    """``--value`` and ``--given`` as ``{column: cell}`` (``COLUMN=`` is an empty cell, None), and
    ``--m`` checked, before the model is read. A column given twice in one of them is refused: a row
    holds one cell per column, and the later would have replaced the earlier in silence."""
    cells = {}
    for option in ("value", "given"):
        if bad := [x for x in getattr(args, option) if "=" not in x]:
            parser.error(f"--{option} needs COLUMN=CELL, got {bad[0]!r}")
        pairs = [x.partition("=")[::2] for x in getattr(args, option)]
        names = [k for k, _ in pairs]
        if twice := [k for i, k in enumerate(names) if k in names[:i]]:
            parser.error(f"--{option} names column {twice[0]!r} twice; a row has one cell per column")
        cells[option] = {k: v or None for k, v in pairs}
    try:
        if args.m is not None:
            check_number("--m", args.m, 0)
    except ConfigError as exc:
        parser.error(str(exc))
    return cells


def density_query(model, args, bindings: dict, cells: dict, answer) -> None:
    """``nbspark query`` of a density model: answered by ``nbspark.load``, no Spark."""
    from nbspark.density.predictor import density_answer
    from nbspark.loading import load
    from nbspark.report.format import format_density_answer

    if bindings:
        raise ConfigError(f"{model}: --A … --E ask a backoff model; a density model takes --value")
    if args.top is not None:
        raise ConfigError(
            f"{model}: --top picks how many bindings a backoff query prints; a density query answers one"
        )
    result = density_answer(load(model, m=args.m), cells["value"], cells["given"], args.estimator)
    say_answer(format_density_answer(result), result, answer)
