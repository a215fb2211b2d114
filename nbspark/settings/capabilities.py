"""What can serve a config, decided once: which input formats each task reads, which counting
engines and scorers apply, and what ``auto`` picks. Pure: the config validation calls
``config_problems``; a run's plan calls ``resolve_engine`` (train) or ``resolve_scoring``
(classify) once, before Spark starts (``spine.training.plan_training``,
``spine.classifying.plan_classify``), and the jobs follow the plan.

| task | formats | engines | scorers |
| --- | --- | --- | --- |
| backoff | ngrams, google_v2, google_v3, brown, reuters, text | pairs, combine; arrow for ngrams without
sampling | broadcast |
| naive Bayes, multinomial or Bernoulli | tsv, sms, reuters_topics | pairs, combine; dataframe and arrow for
tsv/sms, words tokenizer, no holdout | broadcast, join; arrow for tsv as the engines |
| naive Bayes, categorical, Gaussian or mixed | csv, parquet, sklearn | pairs, combine | broadcast |

``auto`` takes arrow where it applies and the mode is permissive (failfast stops at the first bad
line inside the job, which the Python engines do), else combine; scoring ``auto`` joins when a text
model's classes × features matrix exceeds ``broadcast_limit_mb``.
"""

from __future__ import annotations

import dataclasses

from nbspark.errors import ConfigError
from nbspark.settings.naive_bayes import unread_settings
from nbspark.storage.manifests import counted_files

__all__ = [
    "BACKOFF_FORMATS",
    "BACKOFF_IN_PROCESS_BELOW_MB",
    "ENGINES",
    "INPUT_SETTINGS",
    "IN_PROCESS_BELOW_MB",
    "NB_TABLE_FORMATS",
    "NB_TEXT_FORMATS",
    "ONE_LABEL_FORMATS",
    "SCORERS",
    "TEXT_MODELS",
    "classify_here_problem",
    "config_problems",
    "driver_writes",
    "engine_problem",
    "in_process_below_mb",
    "in_process_fits",
    "one_label",
    "resolve_engine",
    "resolve_scoring",
    "scoring_problem",
    "test_problem",
    "train_problem",
    "training_overlap",
]

BACKOFF_FORMATS = ("ngrams", "google_v2", "google_v3", "brown", "reuters", "text")
NB_TEXT_FORMATS = ("tsv", "sms", "reuters_topics")
NB_TABLE_FORMATS = ("csv", "parquet", "sklearn")
TEXT_MODELS = ("multinomial", "bernoulli", "complement")
ENGINES = ("auto", "pairs", "combine", "dataframe", "arrow")
SCORERS = ("auto", "broadcast", "join", "arrow")


_HOLDOUT_FORMATS = ("tsv", "sms", "csv", "parquet", "sklearn")  # no split of their own: a seeded hold-out
_GOOGLE = ("google_v2", "google_v3")
_OWN_SPLIT_FORMATS = ("reuters", "reuters_topics")  # LEWISSPLIT
#: The input settings each format reads; any other format would ignore them, so it refuses them
#: away from their defaults (which a shown config writes for every input).
INPUT_SETTINGS = {
    "splits": _OWN_SPLIT_FORMATS + _HOLDOUT_FORMATS,
    "holdout": _HOLDOUT_FORMATS,
    "seed": _HOLDOUT_FORMATS,
    **dict.fromkeys(("year_min", "year_max", "min_count", "pos", "whole_file_mb"), _GOOGLE),
    "document": ("text",),
    "delimiter": ("csv",),
    "decimal": ("csv",),
}


def _input_settings_problem(spec, part: str) -> str | None:
    unused = [
        f"{part}.{f.name} (read by {', '.join(INPUT_SETTINGS[f.name])})"
        for f in dataclasses.fields(spec)
        if f.name in INPUT_SETTINGS
        and spec.format not in INPUT_SETTINGS[f.name]
        and getattr(spec, f.name) != f.default
    ]
    if unused:
        return (
            f"{', '.join(unused)} {'does' if len(unused) == 1 else 'do'} not apply to {part}.format "
            f"{spec.format!r}"
        )
    if spec.format in _HOLDOUT_FORMATS and spec.splits and not spec.holdout:
        return (
            f"{part}.splits: {spec.format} input has no split of its own; set {part}.holdout (and "
            f"{part}.seed) to use splits"
        )
    if (
        spec.format in _HOLDOUT_FORMATS and spec.holdout and not spec.splits
    ):  # _part: every record, as if holdout were 0
        return (
            f'{part}.holdout = {spec.holdout} needs {part}.splits, the parts to read ("train" or "test"); '
            f"without them every record is read"
        )
    return None


#: what a density task counts: a table's rows
DENSITY_FORMATS = ("csv", "parquet", "ngrams")


def _format_problem(cfg, part: str) -> str | None:
    spec = getattr(cfg, part)
    fmt = spec.format
    if cfg.task == "density":
        if fmt not in DENSITY_FORMATS:
            return (
                f"{part}.format {fmt!r} is not a density input: a table ({', '.join(DENSITY_FORMATS)}; "
                "an n-gram file is a table of its positions)"
            )
        if spec.decimal != ".":
            return f"{part}.decimal does not apply to a density task: it counts cells as text, numbers too"
        return _input_settings_problem(spec, part)
    if cfg.task == "backoff":
        if fmt not in BACKOFF_FORMATS:
            return (
                f"{part}.format {fmt!r} is not a backoff input ({', '.join(BACKOFF_FORMATS)}); naive "
                'Bayes inputs need task = "naive_bayes"'
            )
        return _input_settings_problem(spec, part)
    wanted = NB_TEXT_FORMATS if cfg.nb.model in TEXT_MODELS else NB_TABLE_FORMATS
    if fmt not in wanted:
        if cfg.nb.model == "bernoulli" and fmt in NB_TABLE_FORMATS:
            return (
                f"nb.model bernoulli reads text, but {part}.format is {fmt!r}: for 0/1 table columns use "
                "nb.model = categorical (or mixed) with nb.bernoulli_columns"
            )
        kind = "text" if cfg.nb.model in TEXT_MODELS else "a table"
        hint = ""
        if fmt in NB_TABLE_FORMATS:  # the default model (multinomial) on a table: say which models take one
            hint = (
                "; a table's columns take nb.model = mixed (numbers Gaussian, the rest categorical), "
                "gaussian or categorical"
            )
        elif fmt in NB_TEXT_FORMATS:
            hint = f"; text takes nb.model = {', '.join(TEXT_MODELS)}"
        else:  # a backoff input: the default format (ngrams) where a directory's name named none
            hint = f"; set {part}.format: only a file's extension (.csv, .parquet) names it"
        return (
            f"nb.model {cfg.nb.model} needs {kind} ({', '.join(wanted)}), but {part}.format is {fmt!r}{hint}"
        )
    return _input_settings_problem(spec, part)


def _arrow_text_problem(spec, nb, what: str, formats=("tsv", "sms")) -> str | None:
    """Why the Spark SQL / Arrow text path cannot read ``spec`` (None: it can). The scorer reads
    tsv only: an sms line has no id, and its record id (``FILE@BYTE``, its byte offset) is known
    only where lines are read with their offsets (the Python readers)."""
    if spec.format in formats and not spec.holdout and nb.tokenizer == "words" and nb.model in TEXT_MODELS:
        return None
    return (
        f"{what} reads {' or '.join(formats)} input without holdout, with nb.tokenizer = words and a "
        "multinomial or Bernoulli model; leave it at auto or choose combine (engine) / broadcast (scoring)"
    )


def engine_problem(cfg, engine: str) -> str | None:
    """Why ``engine`` cannot count ``cfg.train`` (None: it can)."""
    if engine in ("pairs", "combine"):
        return None
    if engine not in ENGINES[1:]:
        return f"engine must be one of {', '.join(ENGINES)}, got {engine!r}"
    if cfg.task == "backoff":
        if engine == "dataframe":
            if cfg.train.format in _GOOGLE:
                return None
            return (
                "engine dataframe counts Google Books files (google_v2, google_v3) and naive Bayes "
                "text; use arrow, combine or pairs"
            )
        if cfg.train.format != "ngrams" or cfg.sample < 1.0:
            return (
                "engine arrow counts backoff models from ngrams input without sampling; use engine "
                "combine for this config"
            )
        return None
    if cfg.sample < 1.0:  # a naive Bayes sample is drawn by document id, which the arrow engine reads not
        return f"engine {engine} counts every document; a sample is counted by the Python engines"
    return _arrow_text_problem(cfg.train, cfg.nb, f"engine {engine}")


def scoring_problem(cfg, scoring: str) -> str | None:
    """Why ``scoring`` cannot score ``cfg.test`` (None: it can). For naive Bayes, ``cfg.nb`` must
    hold the model's settings (classify takes them from the model)."""
    if scoring not in SCORERS:
        return f"scoring must be one of {', '.join(SCORERS)}, got {scoring!r}"
    if scoring in ("auto", "broadcast"):
        return None
    if cfg.task == "backoff":
        return f"scoring {scoring} is for naive Bayes models; backoff models are always broadcast"
    if scoring == "join":
        if cfg.nb.model not in ("multinomial", "bernoulli"):
            return (
                f"join scoring is for multinomial and Bernoulli models, not {cfg.nb.model} (use "
                "scoring = broadcast)"
            )
        if cfg.nb.alpha == 0 or cfg.nb.unseen == "smooth":
            return "join scoring needs nb.alpha > 0 and nb.unseen = drop (use scoring = broadcast)"
        return None
    return _arrow_text_problem(cfg.test, cfg.nb, "scoring arrow", ("tsv",))


def config_problems(cfg) -> list[str]:
    """What is wrong with ``cfg`` whatever it will do: an engine or scorer that does not exist, a
    scorer on a backoff task (the settings of the other task: ``settings.config.other_task_settings``).
    Checked when
    the config loads; a config may only train or only
    classify, so the inputs are checked where a job reads them (``train_problem``, ``test_problem``)."""
    problems = []
    if cfg.engine not in ENGINES:
        problems.append(engine_problem(cfg, cfg.engine))
    if cfg.scoring not in SCORERS or (cfg.task == "backoff" and cfg.scoring not in ("auto", "broadcast")):
        problems.append(scoring_problem(cfg, cfg.scoring))
    return problems


def train_problem(cfg) -> str | None:
    """Why ``cfg`` cannot train (None: it can): the training input's format, sampling, the engine.
    Checked before the train job starts Spark (``resolve_engine``)."""
    problem = _format_problem(cfg, "train")
    if problem:
        return problem
    if cfg.task == "density" and cfg.sample < 1.0:
        return "sample applies to backoff and naive Bayes models; a density model counts every row"
    if cfg.task == "density":
        if cfg.train.holdout:
            return "train.holdout: a density model counts every row of its input (no hold-out yet)"
        return None if cfg.engine in ("auto", "arrow") else "a density model counts with engine auto (arrow)"
    if cfg.task == "naive_bayes" and (problem := unread_settings(cfg.nb) or _labels_problem(cfg)):
        return problem
    return engine_problem(cfg, cfg.engine) if cfg.engine != "auto" else None


def _labels_problem(cfg) -> str | None:
    if cfg.nb.labels != "all" and cfg.train.format != "reuters_topics":
        return (
            f"nb.labels = {cfg.nb.labels!r} picks among Reuters topics (train.format reuters_topics), "
            f"not {cfg.train.format} labels"
        )
    return None


def test_problem(cfg) -> str | None:
    """Why ``cfg.test`` cannot be classified (None: it can); for naive Bayes ``cfg.nb`` must hold the
    model's settings. Checked before the classify job starts Spark."""
    return _format_problem(cfg, "test") or (
        scoring_problem(cfg, cfg.scoring) if cfg.scoring != "auto" else None
    )


#: An input of at most this many MB is counted in the process that asked, without Spark, where the
#: family can count there: ``nbspark train`` without ``--spark`` (``in_process_fits``) and each
#: micro-batch of ``nbspark stream``. Spark's start (10 s and more) outweighs counting such an input
#: on one core (the 5,574-message SMS collection, 0.5 MB: 0.5 s in process, 9 s with Spark).
IN_PROCESS_BELOW_MB = 64.0
#: A backoff model's bound: its count table holds about five rows an n-gram line (one a level), so
#: memory, not Spark's start, decides: 64 MB of n-grams peaked at 1.7 GB in process, 16 MB at 0.6–0.75
#: GB (naive Bayes text: 64 MB at 0.4 GB), and 16 MB still counts in about 2 s against Spark's 10 s
#: and more (docs/backoff.md).
BACKOFF_IN_PROCESS_BELOW_MB = 16.0
#: A count table counted by Spark of at most this many rows (and of one file: ``rows_per_file``) is
#: collected by the driver and written there, as a table counted in process is
#: (``spine.training.write_counts``): Spark SQL's first Parquet write of a run costs about 2 s cold
#: (1.4 s of a 7.5 s Books train, 67,358 rows), the collect and pyarrow's write 0.2–0.4 s.
DRIVER_WRITE_ROWS = 1_000_000
#: What a collected count table's row is taken to weigh against ``spark.driver.maxResultSize`` (1 GB
#: unless set: the whole ``DRIVER_WRITE_ROWS``); a Books row weighs about 60 bytes in Arrow.
DRIVER_ROW_BYTES = 1024


def driver_writes(rows: int, rows_per_file: int, max_result_bytes: int) -> bool:
    """Whether the driver collects and writes a count table of ``rows`` rows that Spark counted: one
    file's rows, at most ``DRIVER_WRITE_ROWS``, and within what the session lets a collect bring back
    (``max_result_bytes``, Spark's ``spark.driver.maxResultSize``; 0: no limit), so that a low limit
    leaves the write to Spark rather than fails the collect."""
    bound = min(rows_per_file, DRIVER_WRITE_ROWS)
    if max_result_bytes > 0:
        bound = min(bound, max_result_bytes // DRIVER_ROW_BYTES)
    return rows <= bound


#: How many bindings a backoff query answers unless told (``nbspark query --top``).
QUERY_TOP = 10


#: Test formats that hold one label per record (a tsv line may hold several, "c,j"; a Reuters story
#: several topics).
ONE_LABEL_FORMATS = ("sms", "csv", "parquet", "sklearn")


def one_label(cfg) -> bool:
    """Whether a naive Bayes classify run's predictions are single-label, so that ``gold`` and
    ``predicted`` are written as strings, not lists: a test format of one label per record, and one
    label predicted per record (``nb.top_k = 1``, no ``nb.multilabel_threshold``)."""
    return cfg.test.format in ONE_LABEL_FORMATS and cfg.nb.top_k == 1 and cfg.nb.multilabel_threshold == 0


def in_process_below_mb(cfg) -> float:
    """The most MB of input ``cfg``'s family counts in process by itself (``nbspark train``, a
    stream's micro-batch): ``BACKOFF_IN_PROCESS_BELOW_MB`` for a backoff model, else
    ``IN_PROCESS_BELOW_MB``."""
    return BACKOFF_IN_PROCESS_BELOW_MB if cfg.task == "backoff" else IN_PROCESS_BELOW_MB


def in_process_fits(cfg, input_bytes: int, below_mb: float | None = None) -> str | None:
    """Why ``cfg``'s training cannot or should not be counted in process, or None when it fits: an
    engine only Spark runs, or over ``below_mb`` MB to read (default: the family's bound,
    ``in_process_below_mb``; ``inputs.resolve.input_bytes``: the input's files, and an updated
    model's). A config that cannot be counted anywhere (``train_problem``) raises its
    ``ConfigError``: it is no reason to count with Spark, which would refuse it in the same words."""
    if problem := train_problem(cfg):
        raise ConfigError(problem)
    if problem := _in_process_problem(cfg):
        return problem
    below_mb = in_process_below_mb(cfg) if below_mb is None else below_mb
    if input_bytes > below_mb * 1e6:
        return (
            f"{input_bytes / 1e6:,.1f} MB to read (the input, and a model to update), over the "
            f"{below_mb:g} MB counted in process"
        )
    return None


def classify_here_problem(cfg, scorer: str, input_bytes: int | None) -> str | None:
    """Why ``cfg``'s classify run with ``scorer`` cannot or should not score in process, without
    Spark (None: it may): a run of any family on any of its test inputs (a Parquet table's types are
    checked by ``plan_classify``), but a naive Bayes model scored by the join scorer; and only up to
    ``IN_PROCESS_BELOW_MB`` MB of test input to read (``input_bytes``, ``inputs.resolve.input_bytes``;
    None: whatever the size), which one core scores in less time than Spark takes to start
    (Reuters-21578, 27 MB: docs/performance.md)."""
    if cfg.task == "naive_bayes" and scorer == "join":
        return "a model over broadcast_limit_mb is scored by the join scorer, in Spark"
    if input_bytes is not None and input_bytes > IN_PROCESS_BELOW_MB * 1e6:
        return (
            f"{input_bytes / 1e6:,.1f} MB of test data, over the {IN_PROCESS_BELOW_MB:g} MB scored in process"
        )
    return None


def _in_process_problem(cfg) -> str | None:
    """Why a config that Spark could count cannot be counted in process (None: it can)."""
    if cfg.engine == "dataframe":
        return "in process, engine = dataframe (Spark SQL) cannot count: leave it at auto"
    return None


def resolve_engine(cfg, in_process: bool = False) -> str:
    """The counting engine for ``cfg``: ``auto`` resolved; a training input, sampling or engine
    that cannot apply refused (``ConfigError``). ``in_process`` (``nbspark train --in-process``,
    ``nbspark.fit``) counts with ``local``, without Spark: a naive Bayes or backoff model by the arrow
    engine's rule where it applies and the Python engines' elsewhere, a density model by the arrow
    engine's."""
    problem = train_problem(cfg)
    if problem:
        raise ConfigError(problem)
    if in_process:
        if problem := _in_process_problem(cfg):
            raise ConfigError(problem)
        return "local"
    if cfg.task == "density":
        return "arrow"
    if cfg.engine == "auto":
        if cfg.mode != "permissive":
            return "combine"
        if cfg.task == "backoff" and cfg.train.format in _GOOGLE:
            return "dataframe"
        return "arrow" if engine_problem(cfg, "arrow") is None else "combine"
    return cfg.engine


def resolve_scoring(cfg, model_bytes: int = 0) -> str:
    """The scorer for ``cfg`` (naive Bayes: ``cfg.nb`` as in the model): ``auto`` resolved, a test
    input or scorer that cannot apply refused. ``model_bytes`` is the broadcast size of the model."""
    problem = test_problem(cfg)
    if problem:
        raise ConfigError(problem)
    if cfg.scoring == "auto":
        if cfg.task in ("backoff", "density"):
            return "broadcast"
        if model_bytes > cfg.broadcast_limit_mb * 2**20 and scoring_problem(cfg, "join") is None:
            return "join"
        return "arrow" if cfg.mode == "permissive" and scoring_problem(cfg, "arrow") is None else "broadcast"
    return cfg.scoring


def _part(fmt: str, splits, holdout: float, seed: int):
    """The records an input keeps of its files: None for every record, else what picks them."""
    if fmt in _HOLDOUT_FORMATS:
        return None if not holdout or not splits else ((holdout, seed), frozenset(splits))
    if fmt in _OWN_SPLIT_FORMATS:
        return None if not splits else ((), frozenset(splits))
    return None


def training_overlap(manifest: dict, inputs) -> str:
    """How the test records of ``inputs`` meet the records the model counted: ``"none"`` (other
    files, or disjoint parts of the same files) or ``"all"`` (both read every record of the same
    files: accuracy on the training data, which the report says). Any other overlap is refused
    (``ConfigError``): it would score training records as test records, in silence."""
    train, test = manifest["config"]["train"], inputs.spec
    if train["format"] != test.format:
        return "none"
    trained_on = set()
    for counted in [manifest.get("inputs") or {}] + [u["inputs"] for u in manifest.get("updates", [])]:
        trained_on |= set(counted_files(counted))
    tested = [str(f) for f in inputs.files or [inputs.root]]
    shared = sorted(trained_on.intersection(tested))
    if not shared:  # the same files by another name: a symbolic link, a ViewFS mount, file://
        from nbspark.storage.locations import resolved

        real = {resolved(p) for p in trained_on}
        shared = sorted(p for p in tested if resolved(p) in real)
    if not shared:
        return "none"
    what = shared[0] + (f" and {len(shared) - 1} more file(s)" if len(shared) > 1 else "")
    a = _part(train["format"], train["splits"], train["holdout"], train["seed"])
    b = _part(test.format, test.splits, test.holdout, test.seed)
    if a is None and b is None:
        return "all"
    if a is not None and b is not None and a[0] == b[0] and not a[1] & b[1]:
        return "none"
    if a is None:
        why = "the model was trained on every record of it: train on a part (train.splits) or test other data"
    elif b is None:
        why = (
            f"the model was trained on its part {sorted(a[1])} (train.splits): set test.splits to the "
            "other part"
        )
    elif a[0] != b[0]:
        why = (
            f"test.holdout, test.seed = {test.holdout}, {test.seed} split it otherwise than the model's "
            "training did "
            f"({a[0][0]}, {a[0][1]}): use the same holdout and seed"
        )
    else:
        why = f"test.splits share {sorted(a[1] & b[1])} with the model's train.splits"
    raise ConfigError(f"the test input reads records the model was trained on ({what}): {why}")
