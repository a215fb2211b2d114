"""A backoff model in memory (``BackoffPredictor``), read by ``nbspark.load``, in scikit-learn's
shapes: ``predict(windows)`` an array of labels, ``predict_proba`` an ``(n, len(classes_))`` array
(the distribution at the deciding level), ``score``, ``get_params``; ``explain(windows)`` everything
behind each prediction (level, counts at every level). ``check(text)`` judges every confusion-set
word of a text as the checker does, and ``flags(text)`` keeps those it flags: one result shape for
both, and for ``nbspark check``. A window is a string with ``_`` (or a confusion-set word) at the
centre, ``"would not _ finance minister"``, or a sequence of tokens.
"""

from __future__ import annotations

import bisect
import dataclasses
import operator
import re
from collections.abc import Iterable, Sequence

import numpy as np

from nbspark.backoff.events import Example, count_ddl, example_events
from nbspark.backoff.model import add_counts, count_tables, model_from_counts, table_fields
from nbspark.backoff.predict import UNSEEN, predict
from nbspark.backoff.rules import flag_ratio, judge
from nbspark.errors import OutputError
from nbspark.inputs.tokens import (
    line_ends,
    line_pieces,
    tokenize,
    windows_in_pieces,
)
from nbspark.settings.check import Rule, factor_problem
from nbspark.settings.config import CheckSpec
from nbspark.spine.predictor import (
    LearnsInMemory,
    accuracy,
    as_batch,
    refuse_clone,
    save_rows,
    storable,
    summed_rows,
    whole_weights,
)
from nbspark.storage.counts import read_count_rows
from nbspark.storage.locations import Location
from nbspark.storage.manifests import confusion_sets, set_of_word

__all__ = ["BackoffPredictor", "checked_chain", "read_backoff"]


class BackoffPredictor(LearnsInMemory):
    """A backoff model in memory (``backoff.model.BackoffModel``) with its count tables, for ``explain``."""

    def __init__(self, manifest: dict, rows: Iterable[Sequence], chain: Sequence[str] | None = None):
        cfg = manifest["config"]
        self.manifest = manifest
        self.letters, self.width, self.lowercase = manifest["letters"], cfg["width"], cfg["lowercase"]
        self.chain = checked_chain(cfg["backoff"] if chain is None else chain, manifest["subsets"])
        self._rows = list(rows)
        self._pending: dict = {}  # what update counted since the last save, by event key
        # each subset's counts by context and label (``backoff.model.count_tables``), the scorer built
        # from them, and what ``update`` counted since it was built (added when it is next used)
        self._counts = count_tables(self._rows, self.letters, self.chain)
        self._model = model_from_counts(self._counts, self.letters, self.chain)
        self._unbuilt: dict = {}
        # where ``save`` commits: where it was read (``read_backoff``), as a URI (a Location does not pickle)
        self.path: str | None = None
        self._stats = {"examples": 0, "weight": 0}
        self.sets = confusion_sets(cfg)
        self._set_of = set_of_word(self.sets)
        self.classes_ = tuple(sorted(self._set_of))
        # the check settings: the defaults under the model's own (read once: a check of a short text
        # spent half its time rebuilding them)
        self._check = {**dataclasses.asdict(CheckSpec()), **cfg.get("check", {})}

    @property
    def model(self):
        """The scorer (``backoff.model.BackoffModel``), with what ``update`` counted since (``_tables``)."""
        return self._tables()[1]

    def _tables(self) -> tuple[dict, object]:
        """The count tables and the scorer, with what ``update`` counted since they were last used:
        those windows' contexts counted and ranked again, and no other (an update of the Books
        model rebuilt the tables of all its 67,000 rows: half a second)."""
        self._catch_up(self._take)
        return self._counts, self._model

    def _take(self, unbuilt: dict) -> None:
        rows = [(*key, count) for key, count in unbuilt.items()]
        touched = add_counts(self._counts, rows, self.letters, self.chain)
        self._model = model_from_counts(self._counts, self.letters, self.chain, self._model, touched)

    def window(self, item: str | Sequence[str]) -> tuple[str, ...]:
        """A window from ``"w w _ w w"`` (split on white space) or a token sequence, cased as the model;
        its centre is ``_`` (every word competes) or a confusion-set word (its set competes)."""
        tokens = item.split() if isinstance(item, str) else [None] if item is None else list(item)
        if not all(
            isinstance(t, str) for t in tokens
        ):  # a null window or token (a DataFrame's) is no context
            raise ValueError(f"a window is a string or a sequence of strings, got {item!r}")
        if self.lowercase:
            tokens = [t if t == "_" else t.lower() for t in tokens]
        if len(tokens) != self.width:
            raise ValueError(
                f"a window has {self.width} tokens with '_' or a confusion-set word in the middle, got "
                f"{item!r}"
            )
        centre = tokens[self.width // 2]
        if centre != "_" and centre not in self._set_of:  # another word is not a question this model answers
            raise ValueError(
                "a window's centre is '_' or a word of the model's confusion sets "
                f"({self.words_shown()}), got {centre!r} in {item!r}"
            )
        return tuple(tokens)

    def update(self, windows: Iterable[str | Sequence[str]], weights: Iterable[int] | None = None):
        """Count more windows into the model, as training counts an n-gram's
        (``backoff.events.example_events``, every subset the model counted): each window's centre is
        the word used there, a confusion-set word; ``weights`` their counts (default 1, a window of
        text; whole numbers >= 1, ``spine.predictor.whole_weights``). The model scores with them at
        once; ``save()`` commits them."""
        windows = as_batch(windows, "windows", "update")
        if weights is not None:
            weights = as_batch(weights, "weights", "update")
            if words := [w for w in weights if isinstance(w, str)]:  # scikit-learn's y, given as weights
                raise ValueError(
                    "update takes windows with the word used at their centre, and weights as counts; got "
                    f"the word {words[0]!r} as a weight: write each window with its word ('would not "
                    "affect the outcome')"
                )
        weights = whole_weights(weights, len(windows), "window", "update", least=1)
        events = []
        for i, (item, weight) in enumerate(zip(windows, weights)):
            window = [storable(token, f"window {i}") for token in self.window(item)]
            if window[self.width // 2] == "_":
                raise ValueError(
                    f"window {i}: its centre is '_'; update learns the word used there, got {item!r}"
                )
            events.extend(
                example_events(Example("update", window, weight), self.manifest["subsets"], self.letters)
            )
        with self._counts_lock():  # the whole batch read: count it
            self._count(events, operator.add)  # the scorer takes them when next used
            self._stats = {
                "examples": self._stats["examples"] + len(windows),
                "weight": self._stats["weight"] + sum(weights),
            }
        return self

    def _all_rows(self) -> list:
        """The count table: the rows read with what ``update`` counted since added by key
        (``summed_rows``), as ``save`` keeps it and an estimator's ``save`` writes it."""
        if not self._pending:
            return self._rows
        rows = [(*key, count) for key, count in self._pending.items()]
        return summed_rows(self._rows, rows, count_ddl(self.letters))

    def save(self) -> int:
        """Commit what ``update`` counted since the last save as the model's next version, a delta
        beside its table where the model was read (``storage.versions``), under the model's writer
        lock; the version (as ``NBPredictor.save``)."""
        from nbspark.storage.manifests import BACKOFF_KIND

        with self._counts_lock():  # what is counted meanwhile waits
            rows = [(*key, count) for key, count in self._pending.items()]
            ddl = count_ddl(self.letters)
            version, self.manifest = save_rows(
                self.path, BACKOFF_KIND, rows, ddl, self.manifest_fields, self._stats, "update", self.manifest
            )
            if rows:  # the same counts: the scorer built from them stands
                self._rows, self._pending = self._all_rows(), {}
                self._stats = {"examples": 0, "weight": 0}
            return version

    def manifest_fields(self, table) -> dict:
        """This model's manifest fields of a count table in pyarrow (its rows, a delta's, or a
        compacted version's): the events per subset and the prior's label counts."""
        return {"letters": self.letters, "subsets": self.manifest["subsets"], **table_fields(table)}

    def whole_stats(self) -> dict:
        """The statistics of the whole model: the read one's windows and weight, and what ``update``
        counted since."""
        read = self.manifest.get("stats", {})
        return {key: read.get(key, 0) + self._stats[key] for key in ("examples", "weight")}

    def words_shown(self) -> str:
        """The model's confusion-set words for a message: the first eight, then an ellipsis."""
        return ", ".join(self.classes_[:8]) + (", …" if len(self.classes_) > 8 else "")

    def _decide(self, window: tuple[str, ...]):
        centre = window[self.width // 2]
        candidates = None if centre == "_" else self._set_of.get(centre)
        return predict(self.model, window, candidates), candidates

    def _decided(self, windows) -> list[tuple[tuple[str, ...], object, frozenset | None]]:
        out = []
        for item in as_batch(windows, "windows"):
            w = self.window(item)
            out.append((w, *self._decide(w)))
        return out

    def decide(self, windows: Iterable[str | Sequence[str]]) -> list[tuple[str | None, float | None, str]]:
        """``(label, probability, level)`` per window: ``explain``'s decision without the levels'
        counts behind it (what the pyspark.ml stage writes as columns)."""
        return [(d.label, d.probability, d.subset) for _, d, _ in self._decided(windows)]

    def predict(self, windows: Iterable[str | Sequence[str]]) -> np.ndarray:
        """The label of each window (an array, scikit-learn's shape): the best word at the deciding
        level among those competing there; ``None`` where no level of the chain has seen the context."""
        return np.array([d.label for _, d, _ in self._decided(windows)] or [], dtype=object)

    def predict_proba(self, windows: Iterable[str | Sequence[str]]) -> np.ndarray:
        """``(n, len(classes_))``: per window, the distribution at the deciding level over the words
        competing there (its centre's confusion set; every word for ``_``), 0 for the others; a row
        of NaN where no level has seen the context."""
        decided = self._decided(windows)
        out = np.zeros((len(decided), len(self.classes_)))
        column = {c: i for i, c in enumerate(self.classes_)}
        for row, (w, decision, candidates) in enumerate(decided):
            shares = self._shares(w, decision, candidates)
            if shares is None:
                out[row] = np.nan
            for label, p in (shares or {}).items():
                out[row, column[label]] = p
        return out

    def predict_log_proba(self, windows: Iterable[str | Sequence[str]]) -> np.ndarray:
        """``predict_proba``'s, in logs (``-inf`` for a word that cannot win there)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(windows))

    def score(self, windows: Iterable[str | Sequence[str]], labels: Iterable[str]) -> float:
        """The accuracy of ``predict`` against ``labels`` (scikit-learn's ``score``; an unseen context
        counts as wrong)."""
        return accuracy(self.predict(windows), labels, "window")

    __sklearn_clone__ = refuse_clone

    def get_params(self, deep: bool = True) -> dict:
        """The settings the model predicts with (scikit-learn's ``get_params``)."""
        return {"chain": self.chain, "width": self.width, "lowercase": self.lowercase}

    def _shares(self, w, decision, candidates) -> dict[str, float] | None:
        if decision.subset == UNSEEN:
            return None
        counts = self._level_counts(w, decision.subset)
        kept = {k: v for k, v in counts.items() if candidates is None or k in candidates}
        total = sum(kept.values())
        return {k: v / total for k, v in sorted(kept.items())} if total else {}

    def _level_counts(self, window: tuple[str, ...], subset: str) -> dict[str, int]:
        return self._tables()[0][subset].get(tuple(window[self.letters.index(c)] for c in subset), {})

    def explain(self, windows: Iterable[str | Sequence[str]]) -> list[dict]:
        """Per window, everything behind its prediction: ``window``, ``label``, ``probability``,
        ``level`` (the deciding subset's letters, ``""`` the prior, ``"unseen"`` when no level had seen
        the context), ``probabilities`` (``predict_proba``'s row, the competing words only) and
        ``levels``: every level of the chain in order, with its context, the label counts seen there
        and whether it decided."""
        out = []
        for w, decision, candidates in self._decided(windows):
            out.append(
                {
                    "window": " ".join(w),
                    "label": decision.label,
                    "probability": decision.probability,
                    "level": decision.subset,
                    "probabilities": self._shares(w, decision, candidates) or {},
                    "levels": [
                        {
                            "level": subset,
                            "context": {c: w[self.letters.index(c)] for c in subset},
                            "counts": self._level_counts(w, subset),
                            "decided": subset == decision.subset,
                        }
                        for subset in self.chain
                    ],
                }
            )
        return out

    def check(self, text: str, factor: float | None = None, rule: str | None = None) -> list[dict]:
        """Every confusion-set word of ``text``, judged as ``flags`` judges it and in the same shape,
        with ``flagged`` true for those ``flags`` returns (a word no other word of its set beats has
        ``suggestion`` and ``level`` None and ``ratio`` 0)."""
        return list(self._findings(text, factor, rule, every=True))

    def levels(self, window: Sequence[str]) -> list[tuple[str, dict[str, int]]]:
        """The label counts seen with ``window``'s context at every level of the chain, in order."""
        return [(subset, self._level_counts(tuple(window), subset)) for subset in self.chain]

    def rule_for(
        self, words: Sequence[str], rule: str | None = None, factor: float | None = None
    ) -> tuple[Rule, float]:
        """The decision rule and factor of a confusion set: the arguments, else the set's entry of
        the model's ``check`` settings, else their defaults (``settings.config.CheckSpec``)."""
        check = self._check
        index = next((i for i, s in enumerate(self.sets) if set(s) == set(words)), None)
        if rule is None:
            rule = check["rules"][index] if check["rules"] and index is not None else check["rule"]
        if factor is None:
            factor = check["factors"][index] if check["factors"] and index is not None else check["factor"]
        elif problem := factor_problem(factor):
            raise ValueError(f"factor {problem}")
        return Rule(rule, check["min_evidence"], check["m"], check["thin_factor"]), float(factor)

    def flags(self, text: str, factor: float | None = None, rule: str | None = None) -> list[dict]:
        """The confusion-set words of ``text`` that another word of their set beats by at least
        ``factor`` times under the decision ``rule`` (``rules``; both default to the model's check
        settings): ``line`` and ``column`` (1-based, in characters), ``offset`` (0-based, in characters
        of ``text`` as given, ``\\r\\n`` counting two), ``written``, ``suggestion`` (in the written word's
        case), ``ratio`` (inf when the written word scores 0), ``level``, ``snippet``, ``window`` (the
        words scored, as ``explain`` takes them) and ``flagged``. Lines end in
        ``\\n``, ``\\r\\n`` or ``\\r`` (``inputs.tokens.line_ends``). A word whose context no level has
        seen is not flagged."""
        return list(self._findings(text, factor, rule, every=False))

    def _findings(self, text: str, factor: float | None, rule: str | None, every: bool):
        """The words ``check`` gives (``every``) or ``flags`` gives, one rule for both; a word not
        flagged is placed in the text only when ``every`` asks for it."""
        if not isinstance(text, str):
            raise TypeError(f"flags and check take one text (a str), got {type(text).__name__}")
        given = text
        text = line_ends(text)
        # where a "\r\n" became one "\n", a position in ``text`` is that many characters before ``given``'s
        joined = (
            [m.start() - i for i, m in enumerate(re.finditer("\r\n", given))] if given is not text else []
        )
        line, counted, line_start = 1, 0, 0
        decisions = {s: self.rule_for(s, rule, factor) for s in set(self._set_of.values())}  # once per set
        # (first token's number, piece's start, where its tokens are) of the pieces a window may still be in
        recent: list = []

        def tokens_of_pieces():
            first = 0
            for begin, piece in line_pieces(text):
                where = _Placed(piece, self.lowercase)
                recent.append((first, begin, where))  # positions in the piece: the text's only for a flag
                first += len(where.tokens)
                yield where.tokens

        for i, w in windows_in_pieces(tokens_of_pieces(), self._set_of, self.width):
            while len(recent) > 1 and recent[1][0] <= i:
                del recent[0]
            written = w[self.width // 2]
            how, at_least = decisions[self._set_of[written]]
            verdict = judge(how, self.levels(w), written, sorted(self._set_of[written]))
            flagged = flag_ratio(how, verdict) >= at_least
            if not (flagged or every):
                continue
            first, begin, where = recent[0]
            at, end = where(i - first)
            start = begin + at
            written_as = text[start : begin + end]
            # flags come in text order: lines are counted, and the line's start found, from the last one
            line += text.count("\n", counted, start)
            newline = text.rfind("\n", counted, start)
            line_start = newline + 1 if newline >= 0 else line_start
            counted = start
            column = start - line_start + 1
            yield {
                "line": line,
                "column": column,
                "offset": start + bisect.bisect_right(joined, start),
                "written": written_as,
                "suggestion": _cased(verdict.suggestion, written_as) if verdict else None,
                "ratio": verdict.ratio if verdict else 0.0,
                "level": verdict.level if verdict else None,
                "snippet": _snippet(text, start, len(written_as)),
                "window": " ".join(w),
                "flagged": flagged,
            }


def checked_chain(chain: Sequence[str], subsets: Sequence[str]) -> tuple[str, ...]:
    """A backoff chain, most specific subset first, as a tuple: refused when it is one string
    (``TypeError``: "ABDE" is not the subsets A, B, D and E) or names a subset the model did not
    count (``OutputError``). ``nbspark.load(chain=…)`` and ``CountingBackoffModel.setBackoff``."""
    if isinstance(chain, str):
        raise TypeError(
            f"chain is a list of subsets, most specific first (['ABDE', 'BD', '']), not {chain!r}"
        )
    chain = tuple(chain)
    if missing := [s for s in chain if s not in subsets]:
        raise OutputError(
            f"the backoff chain needs subsets {missing}, which this model did not count "
            f"(it has {list(subsets)})"
        )
    return chain


class _Placed:
    """A piece's tokens (``tokenize(piece, lowercase)``), and, called with a token's number, where it
    was written in the piece: ``(start, end)``, ``piece[start:end]``. Only white space parts a
    token from the next (``TOKEN_RE``: every other character is in one), so each token is found
    from the end of the one before, and the walk goes only as far as the words placed ask, in
    order: a check places few words, and most texts none (a list of every token's start and end,
    made for each text, was most of a check's time). A character whose lower case is longer
    (``İ`` -> ``i`` + U+0307) splits a token there and nowhere else; the tokens are found in the
    lower-cased piece, and their places mapped back to the piece."""

    __slots__ = ("piece", "lowered", "tokens", "_next", "_end", "_back")

    def __init__(self, piece: str, lowercase: bool):
        self.piece, self.lowered = piece, piece.lower() if lowercase else piece
        self.tokens = tokenize(self.lowered, False)  # the one tokenizer, on the piece lowered once
        self._next, self._end, self._back = 0, 0, None  # the next token to find, from where

    def __call__(self, i: int) -> tuple[int, int]:
        if i < self._next:  # an earlier token: walk again from the start
            self._next, self._end = 0, 0
        find, tokens, end = self.lowered.find, self.tokens, self._end
        for k in range(self._next, i + 1):
            end = find(tokens[k], end) + len(tokens[k])
        self._next, self._end = i + 1, end
        start = end - len(tokens[i])
        if len(self.lowered) == len(self.piece):
            return start, end
        if self._back is None:  # positions in the lower-cased piece -> in the piece
            self._back = [j for j, c in enumerate(self.piece) for _ in c.lower()] + [len(self.piece)]
        return self._back[start], self._back[end - 1] + 1


def _cased(word: str, like: str) -> str:
    """``word`` in the case of the written ``like``: "There" for "Their", "THERE" for "THEIR"."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _snippet(text: str, start: int, length: int, around: int = 25) -> str:
    """The line around a word, cut to ``around`` characters each side with ``…``. Only the
    ``around`` characters each side are searched for the line's ends, so a text of one very long
    line costs the same per word as one of short lines."""
    low, high = max(0, start - around), min(len(text), start + length + around)
    before = text.rfind("\n", low, start)
    left = before + 1 if before >= 0 else low
    after = text.find("\n", start + length, high)
    right = after if after >= 0 else high
    cut_left = before < 0 and low > 0 and text[low - 1] != "\n"
    cut_right = after < 0 and high < len(text) and text[high] != "\n"
    return ("…" if cut_left else "") + text[left:right] + ("…" if cut_right else "")


def read_backoff(model_dir: Location, manifest: dict, chain: Sequence[str] | None = None) -> BackoffPredictor:
    """The backoff model in ``model_dir`` (its ``manifest`` already read), counts checked as the jobs check
    them."""
    predictor = BackoffPredictor(
        manifest, read_count_rows(model_dir, count_ddl(manifest["letters"]), manifest), chain
    )
    predictor.path = model_dir.uri
    return predictor
