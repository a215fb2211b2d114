"""The naive Bayes settings that pick a textbook variant, checked together, and the named presets
(``nb.preset``). Pure.

=============  ==========  ===============  ===========  =====================================
preset         nb.alpha    nb.prior_alpha   nb.unseen    as in
=============  ==========  ===============  ===========  =====================================
``sklearn``    (yours, 1)  0 (MLE prior)    drop         scikit-learn's MultinomialNB / BernoulliNB
``mllib``      (yours, λ)  = nb.alpha       drop         pyspark.ml NaiveBayes (smoothing λ)
``cohen_v0``   0 (MLE)     0                drop         Cohen's NB v0: counts only, log 0 = −inf
``cohen_v1``   1 (m·q=1)   1                drop         Cohen's v1: smoothed prior, q = 1/|dom|
``cohen_v2``   1           1                smooth       Cohen's v2: every test token counts
=============  ==========  ===============  ===========  =====================================

For ``nb.model = "complement"`` (which reads a multinomial count table another way and uses no
class prior, as scikit-learn's and MLlib's complement models do) ``sklearn`` is ComplementNB
(``nb.norm`` yours, false by default) and ``mllib`` is MLlib's ``modelType="complement"``
(``nb.norm = false``: MLlib does not normalise); the Cohen presets are not complement models.

A preset fills the settings it names that the config does not set; a config that sets one of them
to another value is refused (a preset is a promise about the model). With ``nb.alpha = 0`` a class
whose factor is 0 loses (log 0 = −inf); when every class has one, the posteriors are uniform and
the class that sorts first is predicted (the tie rule).
"""

from __future__ import annotations

import dataclasses

from nbspark.errors import ConfigError

__all__ = [
    "COMPLEMENT_PRESETS",
    "COUNTED_AS",
    "NB_MODELS",
    "SAME_COUNTS",
    "PRESETS",
    "READ_BY",
    "TOKENIZERS",
    "USED_BY",
    "apply_preset",
    "check_nb",
    "model_options",
    "parse_domains",
    "read_as",
    "refuse_unused",
    "unread_settings",
]

NB_MODELS = ("multinomial", "bernoulli", "complement", "categorical", "gaussian", "mixed")
#: Models read from another model's counts: a complement model counts as a multinomial one.
COUNTED_AS = {"complement": "multinomial"}
#: Kinds that read one count table, each as the other (``--set nb.model`` at classify, ``load(model=)``).
SAME_COUNTS = ("multinomial", "complement")
TOKENIZERS = ("nbspark", "words")
ALPHA = "alpha"  # mllib: the prior's pseudo-count is the smoothing λ itself
#: The kinds of model that use each smoothing setting; any other kind would ignore it.
USED_BY = {
    "alpha": ("multinomial", "bernoulli", "complement", "categorical", "mixed"),
    "var_smoothing": ("gaussian", "mixed"),
    "prior_alpha": ("multinomial", "bernoulli", "categorical", "gaussian", "mixed"),  # complement: no prior
    "norm": ("complement",),
}
_TEXT, _TABLE = ("multinomial", "bernoulli", "complement"), ("categorical", "gaussian", "mixed")
#: The same for every setting that only some kinds read: how documents become tokens, which table
#: columns are read. Training refuses one set away from its default for another kind.
READ_BY = {
    **USED_BY,
    "tokenizer": _TEXT,
    "label_column": _TABLE,
    "numeric_columns": _TABLE,
    "categorical_columns": _TABLE,
}
#: The presets of a complement model (no class prior to set).
COMPLEMENT_PRESETS = {"sklearn": {"unseen": "drop"}, "mllib": {"norm": False, "unseen": "drop"}}
PRESETS = {
    "sklearn": {"prior_alpha": 0.0, "unseen": "drop"},
    "mllib": {"prior_alpha": ALPHA, "unseen": "drop"},
    "cohen_v0": {"alpha": 0.0, "prior_alpha": 0.0, "unseen": "drop"},
    "cohen_v1": {"alpha": 1.0, "prior_alpha": 1.0, "unseen": "drop"},
    "cohen_v2": {"alpha": 1.0, "prior_alpha": 1.0, "unseen": "smooth"},
}


def _presets(nb) -> dict:
    return COMPLEMENT_PRESETS if nb.model == "complement" else PRESETS


def _preset_values(nb) -> dict:
    return {k: nb.alpha if v == ALPHA else v for k, v in _presets(nb)[nb.preset].items()}


def apply_preset(nb, explicit: set[str]):
    """``nb`` with its preset's settings where the config did not set them (``explicit``: the
    keys it set); unchanged without a preset. Conflicts are refused by ``check_nb``."""
    presets = _presets(nb)
    if nb.preset not in presets:
        return nb
    if "alpha" not in explicit and "alpha" in presets[nb.preset]:
        nb = dataclasses.replace(nb, alpha=presets[nb.preset]["alpha"])
    return dataclasses.replace(nb, **{k: v for k, v in _preset_values(nb).items() if k not in explicit})


def parse_domains(items) -> dict[str, tuple[str, ...]]:
    """``("outlook=sunny,overcast,rain", …)`` as ``{"outlook": ("sunny", "overcast", "rain")}``; values
    may also be separated by ``|`` (``--set nb.domains=outlook=sunny|overcast|rain,windy=0|1``)."""
    out: dict[str, tuple[str, ...]] = {}
    for item in items:
        column, eq, values = item.partition("=")
        domain = tuple(dict.fromkeys(v.strip() for v in values.replace("|", ",").split(",") if v.strip()))
        if not eq or not column.strip() or len(domain) < 1 or column.strip() in out:
            raise ConfigError(
                f"nb.domains entries are 'column=value1,value2,…', one per column; got {item!r}"
            )
        out[column.strip()] = domain
    return out


def check_nb(nb, finite) -> None:
    """Refuse naive Bayes settings that cannot apply together (``finite`` checks a number's range)."""
    if nb.model not in NB_MODELS:
        raise ConfigError(f"nb.model must be one of {', '.join(NB_MODELS)}, got {nb.model!r}")
    if nb.tokenizer not in TOKENIZERS:
        raise ConfigError(f"nb.tokenizer must be one of {', '.join(TOKENIZERS)}, got {nb.tokenizer!r}")
    if nb.labels not in ("all", "top10"):
        raise ConfigError(f"nb.labels must be all or top10, got {nb.labels!r}")
    finite("nb.alpha", nb.alpha, 0.0)
    finite("nb.prior_alpha", nb.prior_alpha, 0.0)
    finite("nb.var_smoothing", nb.var_smoothing, 0.0)
    finite("nb.multilabel_threshold", nb.multilabel_threshold, 0.0, 1.0)
    finite("nb.decision_threshold", nb.decision_threshold, 0.0, 1.0)
    if nb.top_k < 1:
        raise ConfigError(f"nb.top_k must be >= 1, got {nb.top_k}")
    if nb.unseen not in ("drop", "smooth"):
        raise ConfigError(f"nb.unseen must be drop or smooth, got {nb.unseen!r}")
    if nb.unseen == "smooth" and (nb.model != "multinomial" or nb.alpha == 0):
        raise ConfigError("nb.unseen = smooth (Cohen's v2) applies to multinomial models with nb.alpha > 0")
    if nb.posteriors not in ("top", "all"):
        raise ConfigError(f"nb.posteriors must be top or all, got {nb.posteriors!r}")
    if not nb.positive_label and nb.decision_threshold != (
        default := type(nb).decision_threshold
    ):  # NBSpec's default
        raise ConfigError(
            f"nb.decision_threshold = {nb.decision_threshold} is the threshold of a binary decision: "
            f"set nb.positive_label too, or leave the threshold at {default}"
        )
    if nb.positive_label and (nb.top_k != 1 or nb.multilabel_threshold > 0):
        raise ConfigError(
            "nb.positive_label (a binary decision) cannot be combined with multi-label scoring (top_k, "
            "multilabel_threshold)"
        )
    domains = parse_domains(nb.domains)
    if (domains or nb.bernoulli_columns) and nb.model not in ("categorical", "mixed"):
        raise ConfigError(
            f"nb.domains and nb.bernoulli_columns are for table models (categorical or mixed), not {nb.model}"
        )
    for column in nb.bernoulli_columns:
        if column in domains and set(domains[column]) != {"0", "1"}:
            raise ConfigError(
                f"nb.bernoulli_columns: {column!r} has the domain 0, 1, not {list(domains[column])}"
            )
    if nb.preset:
        presets = _presets(nb)
        if nb.preset not in presets:
            kind = " for a complement model" if nb.model == "complement" else ""
            raise ConfigError(f"nb.preset must be one of {', '.join(presets)}{kind}, got {nb.preset!r}")
        wrong = {k: v for k, v in _preset_values(nb).items() if getattr(nb, k) != v}
        if wrong:
            raise ConfigError(
                f"nb.preset = {nb.preset} sets {', '.join(f'nb.{k} = {v!r}' for k, v in wrong.items())}; "
                f"this config sets {', '.join(f'{getattr(nb, k)!r}' for k in wrong)}"
            )


def unread_settings(nb) -> str | None:
    """Why training would ignore a naive Bayes setting of ``nb`` (``READ_BY``), or None."""
    defaults = {f.name: f.default for f in dataclasses.fields(nb)}
    unread = [
        f"nb.{name} (read by {', '.join(kinds)})"
        for name, kinds in READ_BY.items()
        if nb.model not in kinds and getattr(nb, name) != defaults[name]
    ]
    if unread:
        return (
            f"{', '.join(unread)} {'does' if len(unread) == 1 else 'do'} not apply to nb.model {nb.model!r}"
        )
    return None


def refuse_unused(kind: str, names, where: str, prefix: str = "") -> None:
    """Refuse smoothing settings (``names``: given for this run) that a ``kind`` model would ignore."""
    unused = [n for n in names if n in USED_BY and kind not in USED_BY[n]]
    if unused:
        used = "; ".join(f"{prefix}{n}: {', '.join(USED_BY[n])}" for n in unused)
        raise ConfigError(
            f"{', '.join(prefix + n for n in unused)} does not apply to {where}, a {kind} model ({used})"
        )


def read_as(kind: str, model: str | None) -> str:
    """The kind a ``kind`` model is read as when ``model`` is asked for (None: its own): the kinds of
    ``SAME_COUNTS`` read one count table, each as the other; any other change is refused."""
    if model is None or model == kind:
        return kind
    if {model, kind} <= set(SAME_COUNTS):
        return model
    other = " or ".join(k for k in SAME_COUNTS if k != kind) if kind in SAME_COUNTS else ""
    raise ConfigError(f"model={model!r}: a {kind} model is read as {other or 'itself only'}")


def model_options(nb: dict) -> dict:
    """``build_nb_model``'s keyword arguments from naive Bayes settings (a config's ``nb`` as a
    dict, e.g. a manifest's): the smoothing, the unseen-token rule and the declared domains, with
    each Bernoulli column's domain 0, 1."""
    domains = parse_domains(nb.get("domains", ()))
    for column in nb.get("bernoulli_columns", ()):
        domains[column] = ("0", "1")
    return {
        "alpha": nb["alpha"],
        "var_smoothing": nb["var_smoothing"],
        "prior_alpha": nb.get("prior_alpha", 0.0),
        "unseen": nb.get("unseen", "drop"),
        "norm": nb.get("norm", False),
        "domains": domains,
    }
