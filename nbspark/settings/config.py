"""Experiment settings: frozen dataclasses, TOML loading with a type check per field, overrides.

No pyspark here. Spark's own settings (master, memory, logging) are not experiment settings:
they come from ``spark-submit`` flags or ``conf/spark/*.conf`` (``--properties-file``).

The embedded default (``DEFAULT``) is the affect/effect experiment: train on the Google Books
5-grams of ``aeffect/aeffect-train.txt``, test on every affect/effect 5-gram of Reuters-21578.
``conf/experiments/affect_effect.toml`` spells the same settings out.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import typing
from dataclasses import dataclass

from nbspark.errors import ConfigError
from nbspark.inputs.spec import InputSpec, format_by_name
from nbspark.inputs.tokens import sets_problem
from nbspark.settings.capabilities import config_problems
from nbspark.settings.density import DENSITY_MODELS
from nbspark.settings.values import checked_value, close_to, coerced_value, toml_file

__all__ = [
    "CheckSpec",
    "DEFAULT",
    "DENSITY_MODELS",
    "DensitySpec",
    "ExperimentConfig",
    "NBSpec",
    "check_number",
    "load_config",
    "other_task_keys",
    "other_task_settings",
    "position_letters",
    "validate",
]

FORMATS = (
    "ngrams",
    "google_v2",
    "google_v3",
    "brown",
    "reuters",
    "text",
    "tsv",
    "sms",
    "reuters_topics",
    "csv",
    "parquet",
    "sklearn",
)

MODES = ("permissive", "failfast")

TASKS = ("backoff", "naive_bayes", "density")


@dataclass(frozen=True)
class DensitySpec:
    """Density estimation settings (``task = "density"``): the lecture's joint and naive estimators
    of a table's rows, by counting (``nbspark.density``)."""

    # "joint": one probability per combination of values; "naive": the product of each column's
    model: str = "joint"
    # the columns modelled (empty: every column but the weight column); cells are read as text
    columns: tuple[str, ...] = ()
    # a column whose number weighs each row (a count, as a truth table's); empty: each row weighs 1
    weight_column: str = ""
    # Dirichlet / MAP smoothing, (# + m·q) / (N + m) with q = 1 / (the column's distinct values);
    # 0 is the maximum-likelihood estimate, # / N
    m: float = 0.0
    # classify: a modelled column to predict from the others (empty: the test rows are only scored)
    target: str = ""
    # ... by the "joint" (backing off over columns) or the "naive" density (categorical naive Bayes)
    classifier: str = "joint"
    # numbers cut into categories, "COLUMN=EDGE,EDGE,…" each ("age=30,50,65": <30, [30, 50), …, >=65;
    # on the command line age=30|50|65); inputs.bins
    bins: tuple[str, ...] = ()


@dataclass(frozen=True)
class NBSpec:
    """Naive Bayes settings (``task = "naive_bayes"``)."""

    model: str = "multinomial"
    # Pseudo-count per feature value: Cohen's Dirichlet prior with uniform q = 1/|V| and
    # m = alpha * |V| (alpha = 1 is add-one; m*q = alpha).
    alpha: float = 1.0
    # Pseudo-count per class in the prior: 0 is the maximum-likelihood prior (scikit-learn's),
    # MLlib's NaiveBayes smooths it with its λ, Cohen's v1/v2 with 1.
    prior_alpha: float = 0.0
    tokenizer: str = "nbspark"  # or "words": lower-cased runs of \w (splitting on \W+)
    labels: str = "all"  # reuters_topics: "all" (multi-label) or "top10" (single-label view)
    top_k: int = 1  # labels predicted per document (multi-label scoring)
    multilabel_threshold: float = 0.0  # ... plus any further label with at least this posterior
    var_smoothing: float = 1e-9  # Gaussian: this fraction of the largest feature variance is added
    label_column: str = "label"  # tables
    numeric_columns: tuple[
        str, ...
    ] = ()  # tables: empty = every column but the label that parses as a number
    categorical_columns: tuple[str, ...] = ()
    # Textbook variants (nb_settings): test tokens outside the vocabulary dropped (scikit-learn,
    # MLlib) or smoothed (Cohen's v2); declared domains "column=v1,v2,..." of categorical columns;
    # 0/1 table columns scored as Bernoulli features, (Σx + α)/(n + 2α); a named preset.
    unseen: str = "drop"
    # Complement naive Bayes (nb.model = "complement", Rennie et al. 2003): each class's weights
    # come from the counts of every other class; norm divides them by their sum, as scikit-learn's
    # ComplementNB(norm=True) does (MLlib's modelType "complement" does not).
    norm: bool = False
    domains: tuple[str, ...] = ()
    bernoulli_columns: tuple[str, ...] = ()
    preset: str = ""
    # Binary decision: predict positive_label when its posterior is > decision_threshold (MLlib's
    # thresholds); the metrics add its precision/recall curve. "all" posteriors keeps every class.
    positive_label: str = ""
    decision_threshold: float = 0.5
    posteriors: str = "top"


@dataclass(frozen=True)
class CheckSpec:
    """The checker's decision (``rules``): a rule and a factor for every confusion set, or one
    per set (``rules`` / ``factors``, in the order of the sets; empty: ``rule`` / ``factor``)."""

    # rule, factor, m: the highest recall at p >= 0.995 on half of Reuters-21578 for the Brown-trained
    # sets (scripts/tune_checker.py; the other half confirms them). thin_factor: chosen on Reuters
    # for the Google Books model, precision first (docs/checker.md).
    rule: str = "interpolate"
    factor: float = 50.0
    m: float = 0.3  # interpolate: the pseudo-count given to the level below
    min_evidence: int = 5  # evidence: the counts a level needs to decide
    # the least factor of a verdict decided with fewer than two context words (B alone, or the prior):
    # one word of context misleads more often ("rates and affect economic activity": "and _" says effect)
    thin_factor: float = 200.0
    rules: tuple[str, ...] = ()
    factors: tuple[float, ...] = ()


@dataclass(frozen=True)
class ExperimentConfig:
    name: str = "affect_effect"
    task: str = "backoff"
    confusion_set: tuple[str, ...] = ("affect", "effect")
    # Several confusion sets counted in one pass (one count table for all); when given, they
    # replace confusion_set, and classify reports a table per set.
    confusion_sets: tuple[tuple[str, ...], ...] = ()
    width: int = 5
    lowercase: bool = True
    # Backoff chain of context subsets, most specific first; "" is the empty context (the prior).
    backoff: tuple[str, ...] = ("ABDE", "ABD", "BD", "B", "")
    mode: str = "permissive"
    train: InputSpec = InputSpec("ngrams", "aeffect/aeffect-train.txt")
    test: InputSpec = InputSpec("reuters", "reuters21578")
    # Unless set: out/NAME/model and out/NAME/results (load_config), never another experiment's;
    # NAME, unless set, is the config file's (load_config)
    model_dir: str = "out/affect_effect/model"
    results_dir: str = "out/affect_effect/results"
    # Windows printed by classify's report, '_' marking the centre.
    worked_examples: tuple[str, ...] = (
        "the cumulative _ of the",
        "go into _ on january",
        "from cumulative _ of accounting",
        "would not _ finance minister",
    )
    max_bad_examples: int = 5
    partitions: int = 0  # 0: let Spark decide
    # Train on a seeded sample of the examples: an example is kept when a hash of (sample_seed,
    # its id and window) is below ``sample``, so a smaller sample is inside every larger one; a
    # naive Bayes document by its id (a table's row by its place).
    sample: float = 1.0
    sample_seed: int = 0
    # Counting engine: "auto" (the default: "arrow" where it can read the input in permissive
    # mode: naive Bayes tsv/sms text, or ngrams lines without sampling; else "combine"),
    # "combine" (a dict per partition, then reduceByKey), "pairs" (the literal flatMap +
    # reduceByKey), "arrow" (each Arrow batch parsed and counted by pyarrow and numpy, summed in
    # the task, then by groupBy; the fastest) or "dataframe": for naive Bayes text Spark SQL
    # split/explode/groupBy, for Google Books files (what auto takes for them) a reader that
    # parses only the lines that may be centred. For naive Bayes the SQL engines read tsv/sms input with the
    # words
    # tokenizer, no holdout, multinomial or Bernoulli models. They count malformed lines, then find
    # the first ones (file and line) by a second scan that stops early; failfast mode therefore
    # takes combine under auto, which stops inside the job at the first bad line.
    engine: str = "auto"
    # Naive Bayes scoring: "broadcast" the model as arrays, "join" the test documents' tokens
    # with the count table (multinomial and Bernoulli; for models too large to broadcast), or
    # "arrow": broadcast, and score whole Arrow batches of tsv/sms text (words tokenizer; no Python
    # per document or token). "auto" joins when a text model's classes x features matrix would
    # exceed broadcast_limit_mb, else takes arrow where it can read the test input in permissive
    # mode, else broadcast.
    scoring: str = "auto"
    broadcast_limit_mb: int = 512
    # Count tables are written as one Parquet file per this many rows (at least one file), so a
    # small table is not spread over spark.sql.shuffle.partitions files and a large one keeps its tasks.
    rows_per_file: int = 1_000_000
    # Context subsets counted besides the chain and the full context (e.g. for comparing chains).
    extra_subsets: tuple[str, ...] = ()
    nb: NBSpec = NBSpec()
    check: CheckSpec = CheckSpec()
    density: DensitySpec = DensitySpec()

    def __post_init__(self) -> None:
        validate(self)

    @property
    def sets(self) -> tuple[tuple[str, ...], ...]:
        """The confusion sets: ``confusion_sets`` if given, else ``(confusion_set,)``."""
        return self.confusion_sets or (self.confusion_set,)

    @property
    def centres(self) -> tuple[str, ...]:
        """Every word that centres an example: the union of the sets, in order."""
        return tuple(dict.fromkeys(w for s in self.sets for w in s))

    @property
    def letters(self) -> str:
        return position_letters(self.width)

    @property
    def centre(self) -> str:
        return self.letters[self.width // 2]

    @property
    def counted_subsets(self) -> tuple[str, ...]:
        """The context subsets counted by train: the backoff chain plus the full context
        (which carries the whole joint distribution that query needs)."""
        full = self.letters.replace(self.centre, "")
        out = list(self.backoff)
        if full not in out:
            out.insert(0, full)
        out += [s for s in self.extra_subsets if s not in out]
        return tuple(out)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def position_letters(width: int) -> str:
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:width]


def check_number(
    name: str, value: float, low: float | None = None, high: float | None = None, low_open: bool = False
) -> None:
    """Refuse a setting's number (``ConfigError`` naming ``name``) that is not finite, is below ``low``
    (or equal to it, ``low_open``), or above ``high``: the rule of every numeric setting, in a config
    file or on a command line."""
    if not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ConfigError(f"{name} must be {'>' if low_open else '>='} {low}, got {value!r}")
    if high is not None and value > high:
        raise ConfigError(f"{name} must be <= {high}, got {value!r}")


def validate(cfg: ExperimentConfig) -> None:
    """Refuse a config that cannot run, naming the key (``ConfigError``). On a naive Bayes task a
    backoff setting is named first: the backoff checks would speak of what it implies (a width's
    context positions)."""
    if cfg.task != "backoff" and (other := other_task_settings(cfg)):
        raise ConfigError(_other_task_message(cfg, other))
    if cfg.width < 3 or cfg.width % 2 == 0 or cfg.width > 25:
        raise ConfigError(f"width must be odd and between 3 and 25, got {cfg.width}")
    if problem := sets_problem(cfg.sets, cfg.lowercase):
        raise ConfigError(problem)
    if cfg.mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {cfg.mode!r}")
    if not cfg.backoff:
        raise ConfigError("backoff must name at least one context subset")
    letters = position_letters(cfg.width)
    centre = letters[cfg.width // 2]
    check_number("sample", cfg.sample, 0.0, 1.0, low_open=True)
    for subset in cfg.backoff + cfg.extra_subsets:
        bad = [c for c in subset if c not in letters or c == centre]
        if bad or len(set(subset)) != len(subset) or list(subset) != sorted(subset):
            raise ConfigError(
                f"backoff subset {subset!r} must be distinct context positions in order, "
                f"taken from {letters.replace(centre, '')!r} ({centre!r} is the label)"
            )
    for part in ("train", "test"):
        spec = getattr(cfg, part)
        if spec.format not in FORMATS:
            raise ConfigError(f"{part}.format must be one of {', '.join(FORMATS)}, got {spec.format!r}")
        if not spec.path.strip():  # "" would be the data directory itself, every corpus in it
            raise ConfigError(f"{part}.path must name a file or a directory, got an empty string")
        if spec.pos not in ("strip", "keep"):
            raise ConfigError(f"{part}.pos must be strip or keep, got {spec.pos!r}")
        if spec.document not in ("file", "paragraph"):
            raise ConfigError(f"{part}.document must be file or paragraph, got {spec.document!r}")
        if len(spec.delimiter) != 1 or spec.delimiter in '"\r\n':
            raise ConfigError(
                f"{part}.delimiter must be one character, not a quote or a line end, got {spec.delimiter!r} "
                '(a TAB: "\\t" in TOML)'
            )
        if spec.decimal not in (".", ","):
            raise ConfigError(f"{part}.decimal must be . or , (the decimal mark), got {spec.decimal!r}")
        if spec.decimal == spec.delimiter:
            raise ConfigError(
                f"{part}.decimal {spec.decimal!r} is also the delimiter between cells: a file whose numbers "
                f'are written "1,5" separates its cells by another character (set {part}.delimiter, ";")'
            )
        if spec.min_count < 0 or spec.year_min > spec.year_max:
            raise ConfigError(f"{part}.min_count must be >= 0 and {part}.year_min <= {part}.year_max")
        check_number(f"{part}.holdout", spec.holdout, 0.0)
        check_number(f"{part}.whole_file_mb", spec.whole_file_mb, 0.0, 2047.0)  # a Java array holds < 2 GB
        if spec.holdout >= 1.0:
            raise ConfigError(f"{part}.holdout must be in [0, 1), got {spec.holdout}")
    from nbspark.settings.check import check_spec

    check_spec(cfg, check_number)
    if cfg.task not in TASKS:
        raise ConfigError(f"task must be one of {', '.join(TASKS)}, got {cfg.task!r}")
    from nbspark.settings.naive_bayes import check_nb

    check_nb(cfg.nb, check_number)
    from nbspark.settings.density import check_density

    check_density(cfg.density, check_number)
    for key in ("max_bad_examples", "partitions", "broadcast_limit_mb"):
        check_number(key, getattr(cfg, key), 0)
    if cfg.rows_per_file < 1:
        raise ConfigError(f"rows_per_file must be >= 1, got {cfg.rows_per_file}")
    if cfg.partitions > 1_000_000:  # Spark takes an int, and each partition is a task
        raise ConfigError(f"partitions must be at most 1,000,000, got {cfg.partitions:,}")
    problems = config_problems(cfg)
    if other := other_task_settings(cfg):
        problems.append(_other_task_message(cfg, other))
    if problems:
        raise ConfigError(problems[0])


def _other_task_message(cfg: ExperimentConfig, other: list[str]) -> str:
    first = other[0]
    owner = "naive Bayes" if first.startswith("nb.") or first == "broadcast_limit_mb" else "backoff"
    owner = "density" if first.startswith("density.") else owner
    return (
        f"{', '.join(other)} {'applies' if len(other) == 1 else 'apply'} to {owner} tasks, not to task = "
        f"{cfg.task!r}"
    )


def other_task_keys(task: str) -> list[str]:
    """The settings that only the other task reads, dotted (``nb.alpha``, ``check.factor``, ``width``):
    what ``task`` refuses away from its default, and what ``nbspark config show`` leaves out."""
    # broadcast_limit_mb: naive Bayes' auto scoring
    nb = [f"nb.{f.name}" for f in dataclasses.fields(NBSpec)] + ["broadcast_limit_mb"]
    density = [f"density.{f.name}" for f in dataclasses.fields(DensitySpec)]
    backoff = [
        "confusion_set",
        "confusion_sets",
        "width",
        "lowercase",  # naive Bayes: nb.tokenizer decides the case
        "backoff",
        "extra_subsets",
        "worked_examples",
    ] + [f"check.{f.name}" for f in dataclasses.fields(CheckSpec)]
    # sample_seed: backoff and naive Bayes models train on samples, density models never
    return {"backoff": nb + density, "naive_bayes": backoff + density}.get(
        task, [*nb, *backoff, "sample_seed"]
    )


def other_task_settings(cfg: ExperimentConfig) -> list[str]:
    """The settings of the other task that ``cfg`` sets away from their defaults: it would ignore them."""
    classes = {"": ExperimentConfig, **_SECTIONS}
    out = []
    for key in other_task_keys(cfg.task):
        section, _, name = key.rpartition(".")
        default = next(f.default for f in dataclasses.fields(classes[section]) if f.name == name)
        if getattr(getattr(cfg, section) if section else cfg, name) != default:
            out.append(key)
    return out


_TOP_KEYS = {f.name for f in dataclasses.fields(ExperimentConfig)}

_SECTIONS = {"train": InputSpec, "test": InputSpec, "nb": NBSpec, "check": CheckSpec, "density": DensitySpec}


def _dotted_keys() -> list[str]:
    """Every setting as ``--set`` names it (``nb.alpha``, ``mode``)."""
    return [f"{head}.{key}" for head, cls in _SECTIONS.items() for key in _hints(cls)] + sorted(
        _TOP_KEYS - set(_SECTIONS)
    )


def _hints(cls) -> dict:
    return typing.get_type_hints(cls)


def _section(section: dict, base, where: str):
    cls = type(base)
    hints = _hints(cls)
    unknown = set(section) - set(hints)
    if unknown:
        raise ConfigError(
            f"unknown key(s) in [{where}]: {', '.join(sorted(unknown))}{close_to(unknown, hints)}"
        )
    values = {k: checked_value(f"{where}.{k}", v, hints[k]) for k, v in section.items()}
    return dataclasses.replace(base, **values)


def load_config(
    path: str | os.PathLike | None = None, overrides: dict[str, str] | None = None, model=None
) -> ExperimentConfig:
    """Load a TOML experiment file over the embedded default, then apply ``overrides``.

    ``overrides`` maps dotted keys to strings, as ``--set`` gives them:
    ``{"mode": "failfast", "train.path": "x.txt", "backoff": "ABDE,BD,"}``.
    Every value is checked against its field's type. Raises ``ConfigError`` (a ``ValueError``)
    naming the bad key and what it must be.

    ``model``: the model directory a run scores, updates or streams into. Where no file is given and
    no override names the task, the config that model was trained with (its manifest's) takes the
    file's place; an input whose path an override sets is read as the model's training input was
    (its format, its delimiter, …; a backoff model's test input, text where it counted n-grams, as
    its test input was), all of it (no ``splits``, ``holdout`` or ``seed``), and as a table where its
    name says so (``.csv``, ``.parquet``).
    """
    raw: dict = {} if path is None else toml_file(path)
    source = path
    if path is None and model is not None and "task" not in (overrides or {}):
        from nbspark.storage.manifests import recorded_config

        recorded = recorded_config(model) or {}
        source = f"{model}'s manifest (the config it was trained with; --config names another)"
        if recorded:
            logging.getLogger("nbspark").info(
                "settings: those %s was trained with (--config for others)", model
            )
        raw = dict(recorded)
        for part in ("train", "test"):
            path_set = (overrides or {}).get(f"{part}.path")
            like = "test" if part == "test" and recorded.get("task") == "backoff" else "train"
            if path_set is not None and isinstance(raw.get(like), dict):
                dropped = {"path", "splits", "holdout", "seed"} | (
                    {"format"} if format_by_name(path_set) else set()
                )
                raw[part] = {k: v for k, v in recorded[like].items() if k not in dropped}
    renamed = {"nb.threshold": "nb.multilabel_threshold (nb.decision_threshold is the binary one)"}
    for key in [f"nb.{k}" for k in (raw.get("nb") or {}) if isinstance(raw.get("nb"), dict)] + list(
        overrides or {}
    ):
        if key in renamed:
            raise ConfigError(f"{key} is now {renamed[key]}")
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise ConfigError(
            f"unknown key(s) in {source}: {', '.join(sorted(unknown))}{close_to(unknown, _TOP_KEYS)}"
        )
    hints = _hints(ExperimentConfig)
    values = {f.name: getattr(DEFAULT, f.name) for f in dataclasses.fields(ExperimentConfig)}
    for key, value in raw.items():
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"[{key}] must be a table")
            values[key] = _section(value, values[key], key)
        else:
            values[key] = checked_value(key, value, hints[key])
    for dotted, text in (overrides or {}).items():
        head, _, tail = dotted.partition(".")
        if head in _SECTIONS and tail:
            spec = values[head]
            section_hints = _hints(type(spec))
            if tail not in section_hints:
                raise ConfigError(f"unknown setting {dotted!r}{close_to([tail], section_hints, head + '.')}")
            values[head] = dataclasses.replace(
                spec, **{tail: coerced_value(dotted, text, section_hints[tail])}
            )
        elif head in _TOP_KEYS and not tail and head not in _SECTIONS:
            values[head] = coerced_value(dotted, text, hints[head])
        else:
            raise ConfigError(f"unknown setting {dotted!r}{close_to([dotted], _dotted_keys())}")
    from nbspark.settings.naive_bayes import apply_preset

    explicit = set((raw.get("nb") or {}) if isinstance(raw.get("nb"), dict) else ()) | {
        k.partition(".")[2] for k in (overrides or {}) if k.startswith("nb.")
    }
    values["nb"] = apply_preset(values["nb"], explicit)
    if "name" not in raw and "name" not in (overrides or {}):
        values["name"] = _unnamed(path, values["task"])
    for key, leaf in (("model_dir", "model"), ("results_dir", "results")):  # the experiment's own place
        if key not in raw and key not in (overrides or {}):
            values[key] = f"out/{values['name']}/{leaf}"
    for part in ("train", "test"):  # a table named by its path, where a table's task names no format
        named = "format" in (raw.get(part) or {}) or f"{part}.format" in (overrides or {})
        found = format_by_name(values[part].path)
        if values["task"] != "backoff" and not named and found:
            values[part] = dataclasses.replace(values[part], format=found)
    return ExperimentConfig(**values)


def _unnamed(path, task: str) -> str:
    """The name of an experiment that sets none: its file's (``my_spam.toml``: ``my_spam``); with no
    file, the embedded experiment's (``affect_effect``) unless the task is another (``naive_bayes``),
    so that its model and results never land in the demo's places."""
    if path is not None:
        return os.path.splitext(os.path.basename(os.fspath(path)))[0] or DEFAULT.name
    return DEFAULT.name if task == DEFAULT.task else task


DEFAULT = ExperimentConfig()
