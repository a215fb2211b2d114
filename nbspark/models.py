"""Trained models outside Spark: ``load(path)`` reads any nbspark model with pyarrow and returns
an object that predicts one sentence, one window or a batch in process. No pyspark, no JVM.

* Backoff models (``BackoffPredictor``): ``predict(windows)`` gives, per window, the label, its
  probability and the deciding level; ``predict_proba`` the distribution at that level;
  ``explain(window)`` every level tried with its counts; ``check(text)`` every confusion-set word of
  a text, scored in its window. A window is a string with ``_`` (or a confusion-set word) at the
  centre, ``"would not _ finance minister"``, or a sequence of tokens.
* Naive Bayes models (``NBPredictor``): ``predict`` and ``predict_proba`` (all classes, rows
  summing to 1, columns in ``classes_`` order) of texts (text models) or rows: mappings of column -> value, or a pandas DataFrame (table models).

The smoothing is the one recorded in the model unless the caller overrides it. The model is
refused, with the jobs' one-line errors, when it is of another kind or schema version, or
incomplete (no ``_SUCCESS``, a part file whose schema or row count does not match the manifest).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .backoff import UNSEEN, predict
from .capabilities import TEXT_MODELS
from .config import CheckSpec
from .errors import ConfigError, OutputError
from .events import count_ddl
from .manifests import BACKOFF_KIND, NB_KIND, confusion_sets, load_manifest, set_of_word
from .model import count_tables, model_from_counts
from .nb_settings import model_options, refuse_unused
from .nb import COUNT_DDL, binary_cell, build_nb_model, log_posteriors, number_cell, score_docs, score_rows, unexplained
from .rules import Rule, factor_problem, judge
from .storage import Location, location
from .tables import check_table, ddl_columns, read_arrow
from .text import TOKEN_RE, centred_windows, line_ends, line_pieces, tokenize, tokenizer, windows_in_pieces

log = logging.getLogger(__name__)

__all__ = ["BackoffPrediction", "BackoffPredictor", "NBPredictor", "load", "read_count_rows", "read_count_table"]


def load(path, *, chain: Sequence[str] | None = None, alpha: float | None = None,
         var_smoothing: float | None = None):
    """Read the nbspark model at ``path``: a ``BackoffPredictor`` or an ``NBPredictor``.

    ``chain`` (backoff) and ``alpha`` / ``var_smoothing`` (naive Bayes) override what the model
    recorded; left out, the model's own settings apply.
    """
    model_dir = location(path)
    manifest = load_manifest(model_dir, (BACKOFF_KIND, NB_KIND))
    # an override the model would not use is refused, never ignored (no smoothing is a backoff model's)
    kind = "backoff" if manifest["kind"] == BACKOFF_KIND else manifest["model"]
    refuse_unused(kind, [n for n, v in (("alpha", alpha), ("var_smoothing", var_smoothing)) if v is not None], str(model_dir))
    if kind == "backoff":
        rows = read_count_rows(model_dir, count_ddl(manifest["letters"]), manifest)
        return BackoffPredictor(manifest, rows, chain)
    if chain is not None:
        raise ConfigError(f"chain does not apply to {model_dir}, a {kind} model (backoff models take it)")
    return NBPredictor(manifest, read_count_rows(model_dir, COUNT_DDL, manifest), alpha, var_smoothing)


def read_count_rows(model_dir: Location, ddl: str, manifest: dict) -> list[tuple]:
    """The count table's rows as tuples in the schema's column order, after the same checks as the jobs'."""
    table = read_count_table(model_dir, ddl, manifest)
    return list(zip(*(column.to_pylist() for column in table.columns)))


def read_count_table(model_dir: Location, ddl: str, manifest: dict):
    """The count table as one pyarrow Table, its columns in the schema's order, after the same
    checks as the jobs'."""
    return read_arrow(check_table(model_dir / "counts", ddl, manifest.get("count_rows")), list(ddl_columns(ddl)))


@dataclass(frozen=True)
class BackoffPrediction:
    """One window's decision: ``level`` is the deciding subset's letters (``""`` the prior,
    ``"unseen"`` when no level had seen the context)."""

    label: str | None
    probability: float
    level: str
    window: tuple[str, ...]


class BackoffPredictor:
    """A backoff model in memory (``model.BackoffModel``) with its count tables, for ``explain``."""

    def __init__(self, manifest: dict, rows: Iterable[Sequence], chain: Sequence[str] | None = None):
        cfg = manifest["config"]
        self.manifest = manifest
        self.letters, self.width, self.lowercase = manifest["letters"], cfg["width"], cfg["lowercase"]
        self.chain = tuple(cfg["backoff"] if chain is None else chain)
        missing = [s for s in self.chain if s not in manifest["subsets"]]
        if missing:
            raise OutputError(f"the backoff chain needs subsets {missing}, which this model did not count (it has {manifest['subsets']})")
        self._counts = count_tables(rows, self.letters, self.chain)
        self.model = model_from_counts(self._counts, self.letters, self.chain)
        self.sets = confusion_sets(cfg)
        self._set_of = set_of_word(self.sets)
        self.classes_ = tuple(sorted(self._set_of))

    def window(self, item: str | Sequence[str]) -> tuple[str, ...]:
        """A window from ``"w w _ w w"`` (split on white space) or a token sequence, cased as the model;
        its centre is ``_`` (every word competes) or a confusion-set word (its set competes)."""
        tokens = item.split() if isinstance(item, str) else [None] if item is None else list(item)
        if not all(isinstance(t, str) for t in tokens):  # a null window or token (a DataFrame's) is no context
            raise ValueError(f"a window is a string or a sequence of strings, got {item!r}")
        if self.lowercase:
            tokens = [t if t == "_" else t.lower() for t in tokens]
        if len(tokens) != self.width:
            raise ValueError(f"a window has {self.width} tokens with '_' or a confusion-set word in the middle, got {item!r}")
        centre = tokens[self.width // 2]
        if centre != "_" and centre not in self._set_of:  # another word is not a question this model answers
            raise ValueError(f"a window's centre is '_' or a word of the model's confusion sets ({self.words_shown()}), got {centre!r} in {item!r}")
        return tuple(tokens)

    def words_shown(self) -> str:
        """The model's confusion-set words for a message: the first eight, then an ellipsis."""
        return ", ".join(self.classes_[:8]) + (", …" if len(self.classes_) > 8 else "")

    def _decide(self, window: tuple[str, ...]):
        centre = window[self.width // 2]
        candidates = None if centre == "_" else self._set_of.get(centre)
        return predict(self.model, window, candidates), candidates

    def predict(self, windows: Iterable[str | Sequence[str]]) -> list[BackoffPrediction]:
        out = []
        for item in _batch(windows, "windows"):
            w = self.window(item)
            decision, _ = self._decide(w)
            out.append(BackoffPrediction(decision.label, decision.probability, decision.subset, w))
        return out

    def predict_proba(self, windows: Iterable[str | Sequence[str]]) -> list[dict[str, float]]:
        """Per window, the distribution over the competing labels at the deciding level."""
        out = []
        for item in _batch(windows, "windows"):
            w = self.window(item)
            decision, candidates = self._decide(w)
            counts = self._level_counts(w, decision.subset) if decision.subset != UNSEEN else {}
            kept = {k: v for k, v in counts.items() if candidates is None or k in candidates}
            total = sum(kept.values())
            out.append({k: v / total for k, v in sorted(kept.items())} if total else {})
        return out

    def _level_counts(self, window: tuple[str, ...], subset: str) -> dict[str, int]:
        return self._counts[subset].get(tuple(window[self.letters.index(c)] for c in subset), {})

    def explain(self, item: str | Sequence[str]) -> list[dict]:
        """Every level of the chain, in order: its context, the label counts seen there, and
        whether it decided."""
        w = self.window(item)
        decision, _ = self._decide(w)
        return [
            {
                "level": subset,
                "context": {c: w[self.letters.index(c)] for c in subset},
                "counts": self._level_counts(w, subset),
                "decided": subset == decision.subset,
            }
            for subset in self.chain
        ]

    def check(self, text: str) -> list[dict]:
        """Every confusion-set word of ``text`` (tokenized as the model was), scored in its window."""
        tokens = tokenize(text, self.lowercase)
        out = []
        for index, w in centred_windows(tokens, self._set_of, self.width):
            decision, candidates = self._decide(w)
            out.append({"index": index, "written": w[self.width // 2], "label": decision.label,
                        "probability": decision.probability, "level": decision.subset, "window": w})
        return out

    def levels(self, window: Sequence[str]) -> list[tuple[str, dict[str, int]]]:
        """The label counts seen with ``window``'s context at every level of the chain, in order."""
        return [(subset, self._level_counts(tuple(window), subset)) for subset in self.chain]

    def rule_for(self, words: Sequence[str], rule: str | None = None, factor: float | None = None) -> tuple[Rule, float]:
        """The decision rule and factor of a confusion set: the arguments, else the set's entry of
        the model's ``check`` settings, else their defaults (``config.CheckSpec``)."""
        check = {**dataclasses.asdict(CheckSpec()), **self.manifest["config"].get("check", {})}
        index = next((i for i, s in enumerate(self.sets) if set(s) == set(words)), None)
        if rule is None:
            rule = check["rules"][index] if check["rules"] and index is not None else check["rule"]
        if factor is None:
            factor = check["factors"][index] if check["factors"] and index is not None else check["factor"]
        elif problem := factor_problem(factor):
            raise ValueError(f"factor {problem}")
        return Rule(rule, check["min_evidence"], check["m"]), float(factor)

    def flags(self, text: str, factor: float | None = None, rule: str | None = None) -> list[dict]:
        """The confusion-set words of ``text`` that another word of their set beats by at least
        ``factor`` times under the decision ``rule`` (``rules``; both default to the model's check
        settings): ``line`` and ``column`` (1-based, in characters), ``written``, ``suggestion`` (in
        the written word's case), ``ratio`` (inf when the written word scores 0), ``level`` and
        ``snippet``. Lines end in ``\\n``, ``\\r\\n`` or ``\\r`` (``text.line_ends``). A word whose
        context no level has seen is not flagged."""
        text = line_ends(text)
        out, line, counted = [], 1, 0
        decisions = {s: self.rule_for(s, rule, factor) for s in self._set_of.values()}  # once per set, not per word
        recent: list = []  # (first token's number, piece's start, starts, ends) of the pieces a window may still be in

        def tokens_of_pieces():
            first = 0
            for begin, piece in line_pieces(text):
                starts, ends, tokens = _token_positions(piece, self.lowercase)
                recent.append((first, begin, starts, ends))  # positions in the piece: the text's only for a flag
                first += len(tokens)
                yield tokens

        for i, w in windows_in_pieces(tokens_of_pieces(), self._set_of, self.width):
            while len(recent) > 1 and recent[1][0] <= i:
                del recent[0]
            written = w[self.width // 2]
            how, at_least = decisions[self._set_of[written]]
            verdict = judge(how, self.levels(w), written, sorted(self._set_of[written]))
            if verdict is None or verdict.ratio < at_least:
                continue
            first, begin, starts, ends = recent[0]
            start = begin + starts[i - first]
            written_as = text[start : begin + ends[i - first]]
            line += text.count("\n", counted, start)  # flags come in text order: count from the last one
            counted = start
            column = start - (text.rfind("\n", 0, start) + 1) + 1
            out.append({"line": line, "column": column, "written": written_as, "suggestion": _cased(verdict.suggestion, written_as),
                        "ratio": verdict.ratio, "level": verdict.level, "snippet": _snippet(text, start, len(written_as))})
        return out


def _token_positions(text: str, lowercase: bool) -> tuple[list[int], list[int], list[str]]:
    """``tokenize(text, lowercase)`` with where each token was written in ``text`` (``text[start:end]``).
    The tokens are found in the lower-cased text, as ``tokenize`` finds them: a character whose lower
    case is longer (``İ`` -> ``i`` + U+0307) splits a token there and nowhere else."""
    lowered = text.lower() if lowercase else text
    starts, ends, tokens = [], [], []
    for m in TOKEN_RE.finditer(lowered):  # one pass: a findall and a finditer took a fifth longer
        starts.append(m.start())
        ends.append(m.end())
        tokens.append(m.group())
    if len(lowered) == len(text):
        return starts, ends, tokens
    back = [i for i, c in enumerate(text) for _ in c.lower()] + [len(text)]  # positions in the lower-cased text -> in the text
    return [back[x] for x in starts], [back[x - 1] + 1 for x in ends], tokens


def _cased(word: str, like: str) -> str:
    """``word`` in the case of the written ``like``: "There" for "Their", "THERE" for "THEIR"."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _batch(items, what: str) -> list:
    """A predict call's items as a list. One text, window or row is refused, as scikit-learn refuses
    a lone string: iterating it would score its characters (or a row's keys), silently."""
    if isinstance(items, (str, bytes, Mapping)):
        raise TypeError(f"predict takes a list of {what}, got one {type(items).__name__}; wrap it in a list")
    return list(items)


def _snippet(text: str, start: int, length: int, around: int = 25) -> str:
    """The line around a word, cut to ``around`` characters each side with ``…``."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    left, right = max(line_start, start - around), min(line_end, start + length + around)
    return ("…" if left > line_start else "") + text[left:right] + ("…" if right < line_end else "")


class NBPredictor:
    """A naive Bayes model in memory (``nb.NBModel``), scored with the classify job's maths."""

    def __init__(self, manifest: dict, rows: Iterable[Sequence], alpha: float | None = None, var_smoothing: float | None = None):
        nb = manifest["config"]["nb"]
        if manifest.get("weighted"):
            raise OutputError("this model was counted with non-integer weights (pyspark.ml weightCol); load it with CountingNaiveBayesModel.load")
        self.manifest = manifest
        self.kind = manifest["model"]
        self.text = self.kind in TEXT_MODELS  # scores texts; else table rows
        self.alpha = nb["alpha"] if alpha is None else float(alpha)
        self.var_smoothing = nb["var_smoothing"] if var_smoothing is None else float(var_smoothing)
        if not (math.isfinite(self.alpha) and self.alpha >= 0 and math.isfinite(self.var_smoothing) and self.var_smoothing >= 0):
            raise ValueError(f"alpha and var_smoothing must be finite and >= 0; got {self.alpha}, {self.var_smoothing}")
        self.prior_alpha = nb.get("prior_alpha", 0.0)
        options = model_options({**nb, "alpha": self.alpha, "var_smoothing": self.var_smoothing})
        self.model = build_nb_model(rows, self.kind, **options)
        self.classes_ = self.model.classes
        self._tokenize = tokenizer(nb["tokenizer"])
        columns = manifest.get("columns") or {}
        self._numeric, self._categorical = list(columns.get("numeric", ())), list(columns.get("categorical", ()))
        self._binary = frozenset(nb.get("bernoulli_columns", ()))

    def _jll(self, items: Sequence) -> np.ndarray:
        if self.text:
            for i, t in enumerate(items):
                if not isinstance(t, str):
                    raise TypeError(f"a {self.kind} model scores texts (str); item {i} is a {type(t).__name__}")
            return score_docs(self.model, [self._tokenize(t) for t in items])[0]
        rows = [self._table_row(r, i) for i, r in enumerate(items)]
        known = {*self._numeric, *self._categorical, self.manifest["config"]["nb"]["label_column"]}
        if unknown := sorted({str(k) for r in items for k in r} - known):  # a misspelt column is a missing cell in every row
            log.warning("predict: %d column(s) the model does not know, left out: %s%s", len(unknown), ", ".join(unknown[:6]),
                        ", …" if len(unknown) > 6 else "")
        return score_rows(self.model, rows)[0]

    def _table_row(self, row, i: int) -> tuple[dict, dict]:
        """``(categorical, numeric)`` values of one row: a missing, None or non-finite value is left
        out (naive Bayes skips that feature), as the classify job leaves out such a cell."""
        columns = self._numeric + self._categorical
        if not isinstance(row, Mapping):
            raise TypeError(f"a {self.kind} model scores rows, each a mapping of column -> value ({', '.join(columns[:6])}"
                            f"{', …' if len(columns) > 6 else ''}); item {i} is a {type(row).__name__}")
        if not any(c in row for c in columns):  # every key misspelt would be scored on the prior alone
            raise ValueError(f"row {i} has none of the model's columns ({', '.join(columns[:6])}{', …' if len(columns) > 6 else ''}); "
                             f"its keys: {', '.join(map(str, list(row)[:6]))}")
        num = {}
        for c in self._numeric:
            try:
                x = number_cell(row.get(c))
            except (TypeError, ValueError):
                raise ValueError(f"row {i}, column {c!r}: {row[c]!r} is not a number") from None
            if x is not None and math.isfinite(x):
                num[c] = x
        cat = {}
        for c in self._categorical:
            v = row.get(c)
            if v is None or (isinstance(v, float) and math.isnan(v)):  # a NaN cell of a pandas frame: missing
                continue
            if c in self._binary:  # as training read it: 1, 1.0, "1" and True are "1"
                try:
                    v = binary_cell(v)
                except (TypeError, ValueError):
                    raise ValueError(f"row {i}, column {c!r}: {v!r} is not 0 or 1 (a Bernoulli column)") from None
            elif not isinstance(v, str) and (c, str(v)) not in self.model.vocab:
                # True against the CSV's "TRUE", 3.0 against "3": never scored as unseen in silence
                seen = sorted(x for f, x in self.model.vocab if f == c)
                raise ValueError(f"row {i}, column {c!r}: {v!r} is not a value the model saw there ({', '.join(map(repr, seen[:6]))}"
                                 f"{', …' if len(seen) > 6 else ''}); give a category as the training data wrote it, as text")
            if v is not None:
                cat[c] = str(v)
        return cat, num

    def predict_proba(self, items: Iterable) -> np.ndarray:
        """Posteriors ``(n, len(classes_))``, each row summing to 1."""
        if not self.text and hasattr(items, "to_dict") and hasattr(items, "columns"):  # a pandas DataFrame: its rows
            items = items.to_dict("records")
        items = _batch(items, "texts" if self.text else "rows")
        if not items:
            return np.zeros((0, len(self.classes_)))
        jll = self._jll(items)
        dead = unexplained(jll)
        if dead:
            log.warning("%d of %d %s: no class can explain them (every class has probability 0, as alpha = 0 allows); "
                        "each got equal posteriors and the first class", dead, len(items), "texts" if self.text else "rows")
        return np.exp(log_posteriors(jll))

    def predict(self, items: Iterable) -> list[str]:
        """The most probable class of each text or row (ties: the class that sorts first, as the jobs)."""
        proba = self.predict_proba(items)
        return [self.classes_[i] for i in np.argmax(proba, axis=1)]
