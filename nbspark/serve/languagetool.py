"""LanguageTool's HTTP API v2, as its clients use it, over nbspark's checker. Pure: no server, no Spark.

What a client sends (``POST /v2/check``, form fields, or the same as a query string):

* ``text``, or ``data``: LanguageTool's annotated text, ``{"annotation": [{"text": "A "},
  {"markup": "<b>"}, {"markup": "<br/>", "interpretAs": "\\n"}, …]}``. Markup is not checked; it
  reads as its ``interpretAs`` (default nothing). Offsets answer in the whole document, markup
  included, as LanguageTool answers them.
* ``language``: ``en``, ``en-US`` and the other English variants of ``/v2/languages``, or ``auto``.
* ``enabledRules``, ``disabledRules``, ``enabledCategories``, ``disabledCategories`` (comma-separated
  ids) and ``enabledOnly`` (``true``: only what is enabled). Other fields are accepted and ignored,
  as LanguageTool ignores what it does not know.

Rules: one rule per confusion set, ``NBSPARK_`` and the set's words, sorted, upper-cased, joined by
``_`` (``NBSPARK_AFFECT_EFFECT``), in category ``CONFUSED_WORDS``.

Offsets and lengths count UTF-16 code units, as LanguageTool's Java server counts them: a character
beyond U+FFFF (an emoji) counts two. A match's ``context`` is its plain text with up to ``CONTEXT``
characters each side (``...`` where cut, line breaks as spaces); ``sentence`` the sentence it is in.
Each match carries nbspark's evidence under ``nbspark``: ``ratio`` (null when the written word was
never seen in that context), ``level``, ``model`` and ``version``.

Errors are ``RequestError``: an HTTP status and LanguageTool's plain-text message (``Error: …``).
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nbspark._version import __version__

__all__ = [
    "CATEGORY",
    "CONTEXT",
    "LANGUAGES",
    "CheckRequest",
    "RequestError",
    "annotated_text",
    "check_request",
    "json_value",
    "matches",
    "response",
    "rule_id",
    "rule_id_clash",
    "rules",
    "utf16_offsets",
]

#: ``/v2/languages``: the English variants (nbspark's models are English n-grams)
LANGUAGES = [
    {"name": "English", "code": "en", "longCode": "en"},
    {"name": "English (US)", "code": "en", "longCode": "en-US"},
    {"name": "English (GB)", "code": "en", "longCode": "en-GB"},
    {"name": "English (Australian)", "code": "en", "longCode": "en-AU"},
    {"name": "English (Canadian)", "code": "en", "longCode": "en-CA"},
    {"name": "English (New Zealand)", "code": "en", "longCode": "en-NZ"},
    {"name": "English (South African)", "code": "en", "longCode": "en-ZA"},
]
_BY_CODE = {lang["longCode"].lower(): lang for lang in LANGUAGES}
CATEGORY = {"id": "CONFUSED_WORDS", "name": "Commonly Confused Words"}
CONTEXT = 40
SENTENCE = 500  # characters of a match's sentence on either side of it, at most (prose: under 300)
SOFTWARE = {
    "name": "nbspark",
    "version": __version__,
    "buildDate": "",
    "apiVersion": 1,
    "premium": False,
    "status": "",
}
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+|\n\s*\n")


class RequestError(Exception):
    """A request answered with ``status`` and LanguageTool's plain-text ``message``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def json_value(text: str, what: str):
    """``text`` read as JSON (every JSON a request holds), or ``RequestError`` 400 naming ``what``:
    not JSON (``NaN`` and ``Infinity`` are not, though Python reads them; nor is a number past a
    double's range, ``1e400``: no answer could hold it), or nested deeper than Python's parser
    recurses (a 1 MiB body holds 500,000 ``[``)."""
    try:
        return json.loads(text, parse_constant=_not_json, parse_float=_finite)
    except ValueError as exc:
        raise RequestError(400, f"Error: {what} is not valid JSON: {exc}") from None
    except RecursionError:
        raise RequestError(400, f"Error: {what} is JSON nested too deep to read") from None


def _not_json(word: str):
    raise ValueError(f"{word} is not a JSON number")


def _finite(digits: str) -> float:
    if math.isfinite(x := float(digits)):
        return x
    raise ValueError(f"{digits} is past a double's range")


@dataclass(frozen=True)
class CheckRequest:
    """A ``/v2/check`` request, read: the document as sent, the plain text to check, where each
    plain character is in the document, the language, and the rule filter."""

    document: str
    plain: str
    positions: tuple[int, ...] | None  # plain index -> document index; None when they are the same text
    language: dict
    enabled: frozenset[str]
    disabled: frozenset[str]
    enabled_only: bool

    def wanted(self, rule: str, category: str) -> bool:
        """Whether a client's enable/disable lists keep ``rule`` (of ``category``)."""
        if rule in self.disabled or category in self.disabled:
            return False
        return not self.enabled_only or rule in self.enabled or category in self.enabled


def _ids(value: str | None) -> frozenset[str]:
    return frozenset(x.strip() for x in (value or "").split(",") if x.strip())


def check_request(fields: Mapping[str, str]) -> CheckRequest:
    """A check request from its form fields (``RequestError`` 400 for what LanguageTool refuses)."""
    text, data = fields.get("text"), fields.get("data")
    if text is None and data is None:
        raise RequestError(400, "Error: Missing 'text' or 'data' parameter")
    if text is not None and data is not None:
        raise RequestError(400, "Error: Set only 'text' or 'data' parameter, not both")
    code = fields.get("language")
    if not code:
        raise RequestError(400, "Error: Missing 'language' parameter, e.g. 'language=en-US'")
    lang = _BY_CODE.get("en-us" if code.lower() == "auto" else code.lower())
    if lang is None:
        known = ", ".join(sorted(x["longCode"] for x in LANGUAGES))
        raise RequestError(
            400,
            f"Error: '{code}' is not a language code known to this server. Supported language codes "
            f"are: {known}, auto",
        )
    detected = {"name": lang["name"], "code": lang["longCode"], "confidence": 1.0}
    language = {"name": lang["name"], "code": lang["longCode"], "detectedLanguage": detected}
    enabled = _ids(fields.get("enabledRules")) | _ids(fields.get("enabledCategories"))
    enabled_only = (fields.get("enabledOnly") or "false").lower() == "true"
    if enabled_only and not enabled:
        raise RequestError(
            400, "Error: You cannot specify 'enabledOnly=true' without 'enabledRules' or 'enabledCategories'"
        )
    disabled = _ids(fields.get("disabledRules")) | _ids(fields.get("disabledCategories"))
    if data is not None:
        document, plain, positions = annotated_text(data)
    else:
        document, plain, positions = text, text, None
    return CheckRequest(document, plain, positions, language, enabled, disabled, enabled_only)


def annotated_text(data: str) -> tuple[str, str, tuple[int, ...]]:
    """``(document, plain, positions)`` of LanguageTool's annotated-text JSON: the document is every
    ``text`` and ``markup`` in order; the plain text the ``text`` parts with each markup read as its
    ``interpretAs``; ``positions[i]`` is where plain character ``i`` is in the document (a markup's
    ``interpretAs`` at the markup's start). ``RequestError`` 400 for anything else."""
    parsed = json_value(data, "'data'")
    parts = parsed.get("annotation") if isinstance(parsed, dict) else None
    if not isinstance(parts, list):
        raise RequestError(400, 'Error: \'data\' needs the form {"annotation": [{"text": …}, {"markup": …}]}')
    document, plain, positions = [], [], []
    at = 0
    for i, part in enumerate(parts):
        if not isinstance(part, dict) or ("text" in part) == ("markup" in part):
            raise RequestError(
                400,
                f"Error: annotation {i} of 'data' needs exactly one of 'text' and 'markup': {part!r}"[:300],
            )
        value = part.get("text", part.get("markup"))
        shown = part["text"] if "text" in part else part.get("interpretAs", "")
        if not isinstance(value, str) or not isinstance(shown, str):
            raise RequestError(400, f"Error: annotation {i} of 'data' holds a value that is not a string")
        document.append(value)
        plain.append(shown)
        positions.extend(range(at, at + len(value)) if "text" in part else [at] * len(shown))
        at += len(value)
    return "".join(document), "".join(plain), tuple(positions)


def rule_id(words: Iterable[str]) -> str:
    """A confusion set's rule id: ``NBSPARK_AFFECT_EFFECT`` (characters other than A-Z, 0-9 as ``_``)."""
    return "NBSPARK_" + "_".join(re.sub(r"[^A-Z0-9]", "_", w.upper()) for w in sorted(words))


def rule_id_clash(sets: Iterable[Sequence[str]]) -> str | None:
    """Why ``sets`` (every confusion set served) cannot each have a rule id of its own, or None:
    two sets whose words differ only where ``rule_id`` writes ``_`` (``they're`` and ``they-re``)."""
    seen: dict[str, tuple] = {}
    for words in sets:
        key, words = rule_id(words), tuple(sorted(words))
        if seen.setdefault(key, words) != words:
            return f"confusion sets {list(seen[key])} and {list(words)} would both be rule {key}"
    return None


def rules(sets: Sequence[Sequence[str]], model: str) -> list[dict]:
    """The ``rule`` objects of a model's confusion ``sets``."""
    return [
        {
            "id": rule_id(words),
            "description": f"Confusion of {'/'.join(sorted(words))} (nbspark n-gram model {model})",
            "issueType": "grammar",
            "category": dict(CATEGORY),
        }
        for words in sets
    ]


def utf16_offsets(text: str):
    """A function from a character index of ``text`` to its index in UTF-16 code units."""
    astral = [m.start() for m in _ASTRAL.finditer(text)]
    return lambda i: i + bisect.bisect_left(astral, i)


def _sentence(plain: str, start: int, end: int) -> str:
    """The sentence of ``plain[start:end]``: from the end of the sentence before it to its own end,
    at most ``SENTENCE`` characters on either side (a text without a sentence end gave each match
    everything before it: a 1 MB text of 34,000 flags took 11 GB)."""
    left = max(0, start - SENTENCE)
    for m in _SENTENCE_END.finditer(plain, left, start):
        left = m.end()
    m = _SENTENCE_END.search(plain, end, end + SENTENCE)
    right = m.start() + len(m.group().rstrip()) if m else min(len(plain), end + SENTENCE)
    return plain[left:right].strip()


def _context(plain: str, start: int, end: int) -> tuple[str, int]:
    left, right = max(0, start - CONTEXT), min(len(plain), end + CONTEXT)
    before = ("..." if left > 0 else "") + plain[left:start]
    text = before + plain[start:right] + ("..." if right < len(plain) else "")
    return re.sub(r"[\r\n\t]", " ", text), len(before)


def matches(request: CheckRequest, flags: Iterable[tuple[dict, dict, str, str]]) -> list[dict]:
    """LanguageTool's ``matches`` for ``flags``: ``(flag, rule, model, version)``, each flag as
    ``BackoffPredictor.flags`` gives it on ``request.plain``; in document order."""
    plain, document = request.plain, request.document
    utf16, ctx16, out = None, {}, []
    for flag, rule, model, version in flags:
        utf16 = utf16 or utf16_offsets(document)  # once, and only for a text with a flag
        start = flag["offset"]
        end = start + len(flag["written"])
        where = request.positions
        doc_start, doc_end = (start, end) if where is None else (where[start], where[end - 1] + 1)
        context, at = _context(plain, start, end)
        c16 = ctx16.setdefault(context, utf16_offsets(context))
        ratio = flag["ratio"]
        suggestion, written = flag["suggestion"], flag["written"]
        message = f"Did you mean ‘{suggestion}’? In this context ‘{suggestion}’ is " + (
            f"{ratio:,.0f} times as likely as ‘{written}’."
            if math.isfinite(ratio)
            else f"seen, ‘{written}’ never."
        )
        out.append(
            {
                "message": message,
                "shortMessage": f"‘{suggestion}’?",
                "replacements": [{"value": suggestion}],
                "offset": utf16(doc_start),
                "length": utf16(doc_end) - utf16(doc_start),
                "context": {"text": context, "offset": c16(at), "length": c16(at + end - start) - c16(at)},
                "sentence": _sentence(plain, start, end),
                "type": {"typeName": "Other"},
                "rule": rule,
                "ignoreForIncompleteSentence": False,
                "contextForSureMatch": 0,
                "nbspark": {
                    "ratio": ratio if math.isfinite(ratio) else None,
                    "level": flag["level"],
                    "model": model,
                    "version": version,
                },
            }
        )
    return sorted(out, key=lambda m: (m["offset"], m["rule"]["id"]))


def response(request: CheckRequest, found: list[dict]) -> dict:
    """The body of a ``/v2/check`` answer."""
    return {
        "software": SOFTWARE,
        "warnings": {"incompleteResults": False},
        "language": request.language,
        "matches": found,
    }
