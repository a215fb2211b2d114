"""``jobs/stream.py`` / ``nbspark stream``: count the files that land in a directory into a model
that grows by versions (``spine.streaming``), while every reader classifies with its newest one.

```
nbspark stream --config C --watch DIR --model MODEL [--available-now] [--trigger-seconds N]
               [--max-files-per-batch N] [--checkpoint DIR] [--compact-every N] [--progress FILE]
nbspark stream --config C --model MODEL --compact      fold the deltas into one table now
```
"""

from __future__ import annotations

import argparse

from nbspark.app.cli import _run, _spark
from nbspark.app.options import common_options, config_of, parse_sets
from nbspark.errors import ConfigError
from nbspark.settings.capabilities import (
    BACKOFF_IN_PROCESS_BELOW_MB,
    IN_PROCESS_BELOW_MB,
    in_process_below_mb,
)
from nbspark.spine.committing import compact
from nbspark.spine.streaming import (
    SESSION_DEFAULTS,
    TRIGGER_SECONDS,
    check_stream_options,
    plan_stream,
    run_stream,
)
from nbspark.storage.locations import use_hadoop

__all__ = ["stream_main"]


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Count each file that lands in a directory exactly once into a model, one version per "
        "micro-batch (Spark Structured Streaming's file source and checkpoint); classify, predict and check "
        "read the newest whole version meanwhile. Move files in whole (write elsewhere, then rename): a file "
        "still being copied may be read half.",
    )
    common_options(parser, prog)
    parser.add_argument("--watch", metavar="DIR", help="the directory to watch (any Hadoop file system)")
    parser.add_argument(
        "--model",
        metavar="DIR",
        help="the model to grow (default: the config's model_dir); made by the first batch",
    )
    parser.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="Spark's checkpoint: which files each batch held (default: MODEL.stream/checkpoint); "
        "restart with the same one to resume",
    )
    parser.add_argument(
        "--trigger-seconds",
        type=float,
        metavar="N",
        help=f"look for new files every N s ({TRIGGER_SECONDS:g})",
    )
    parser.add_argument(
        "--available-now",
        action="store_true",
        help="count the files there now (in one or more batches), commit, and stop",
    )
    parser.add_argument(
        "--max-files-per-batch", type=int, metavar="N", help="at most N files per micro-batch"
    )
    parser.add_argument(
        "--compact-every",
        type=int,
        default=100,
        metavar="N",
        help="fold the deltas into one table once there are N (100); reads sum N+1 tables at most",
    )
    parser.add_argument(
        "--compact", action="store_true", help="fold the model's deltas into one table now, then exit"
    )
    parser.add_argument(
        "--progress", metavar="FILE", help="the last batch's summary as JSON, rewritten each batch"
    )
    parser.add_argument(
        "--force", action="store_true", help="count a file again although the model already holds it"
    )
    parser.add_argument(
        "--in-process-below",
        type=float,
        metavar="MB",
        help="count a micro-batch of at most MB megabytes in this process, without a Spark job (the "
        f"same table); 0: always Spark ({IN_PROCESS_BELOW_MB:g}; "
        f"{BACKOFF_IN_PROCESS_BELOW_MB:g} for a backoff model)",
    )
    parser.set_defaults(submit_defaults=SESSION_DEFAULTS)  # the nbspark command's: spark-submit's settings
    return parser


def stream_main(argv=None, prog: str = "stream.py") -> int:
    parser = _parser(prog)
    args = parser.parse_args(argv)
    cfg = config_of(args, parser, args.model)
    if not args.compact and not args.watch:
        parser.error("--watch DIR is needed (or --compact)")
    if "train.path" in parse_sets(args.set, parser):
        parser.error("--set train.path would be ignored: a stream counts the files moved into --watch")
    stream_only = (
        "watch",
        "checkpoint",
        "trigger_seconds",
        "available_now",
        "max_files_per_batch",
        "compact_every",
        "progress",
        "force",
        "in_process_below",
    )
    if args.compact and (given := [d for d in stream_only if getattr(args, d) != parser.get_default(d)]):
        options = ", ".join("--" + d.replace("_", "-") for d in given)
        parser.error(f"--compact folds the model's deltas and exits: {options} would be ignored")
    if args.progress == "-":  # it wrote a file named '-'; the batches' lines are on stderr already
        parser.error(
            "--progress names a file rewritten whole each batch, not - (each batch is logged on stderr)"
        )
    if args.available_now and args.trigger_seconds is not None:
        parser.error(
            "--trigger-seconds paces a running stream; --available-now counts what is there and stops"
        )
    trigger_seconds = TRIGGER_SECONDS if args.trigger_seconds is None else args.trigger_seconds
    in_process_below = in_process_below_mb(cfg) if args.in_process_below is None else args.in_process_below
    try:  # before Spark starts
        check_stream_options(
            {
                "trigger_seconds": trigger_seconds,
                "max_files": args.max_files_per_batch,
                "compact_every": args.compact_every,
                "in_process_below_mb": in_process_below,
            }
        )
    except ConfigError as exc:
        parser.error(str(exc))

    def body():
        from nbspark.storage.locations import location
        from nbspark.storage.versions import take_writer_lock
        from nbspark.tasks import family_of

        family = family_of(cfg.task)
        use_hadoop()
        model = args.model or cfg.model_dir
        if args.compact:
            release = take_writer_lock(location(model))  # no stream nor save meanwhile
            try:
                with _spark(f"nbspark-compact-{cfg.name}") as spark:
                    done = compact(spark, location(model), family, cfg)
            finally:
                release()
            print(
                f"{model}: "
                + ("nothing to compact" if done is None else f"compacted (version {done['version']})")
            )
            return
        plan = plan_stream(
            cfg,
            family,
            model,
            args.watch,
            args.checkpoint,
            trigger_seconds=trigger_seconds,
            available_now=args.available_now,
            max_files=args.max_files_per_batch,
            compact_every=args.compact_every,
            progress=location(args.progress) if args.progress else None,
            force=args.force,
            in_process_below_mb=in_process_below,
        )
        with _spark(f"nbspark-stream-{cfg.name}", SESSION_DEFAULTS) as spark:
            committed = run_stream(spark, plan)
            made = (plan.model / "manifest.json").is_file()
        print(
            f"{plan.model}: {committed} version(s) committed by this run"
            + ("" if made else "; no model yet: no file held a line to count")
        )

    return _run(prog, body)
