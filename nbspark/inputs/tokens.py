"""The one tokenizer, and the windows it feeds.

``tokenize`` is the single tokenizer of nbspark: every job that turns running text into
tokens (Reuters stories for the affect/effect experiment, documents for naive Bayes) calls it.

Rules, in order:

1. lower-case the text (unless ``lowercase=False``);
2. a token is either a run of word characters (letters, digits, underscore), where an
   apostrophe, period, comma or hyphen *between* two word characters stays inside the token
   (``don't``, ``u.s``, ``1,000``, ``well-known``), or a single character that is neither a
   word character nor white space (punctuation is kept as tokens: ``.``, ``,``, ``(``).

So ``"The U.S. effect, he said."`` gives
``['the', 'u.s', '.', 'effect', ',', 'he', 'said', '.']``.

Google Books n-grams were tokenized by Google, not by this function: they split hyphens and
apostrophes into tokens of their own (``cause - effect``), so a Reuters ``cause-effect`` never
matches the Books context. That costs a little recall at the deep backoff levels and is the
price of one documented tokenizer for all text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, compress, islice

__all__ = [
    "LEFT_PAD",
    "RIGHT_PAD",
    "NON_WORD_RUN",
    "TOKEN_RE",
    "WHITESPACE",
    "WORD_CHAR",
    "centred_windows",
    "line_ends",
    "line_pieces",
    "sets_problem",
    "tokenize",
    "tokenizer",
    "words",
    "windows_in_pieces",
]

TOKEN_RE = re.compile(r"\w+(?:[-'.,]\w+)*|[^\w\s]")

#: The characters Python's ``str.strip()`` removes (``str.isspace``), for SQL's ``trim``, which
#: alone removes only the space.
WHITESPACE = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())

#: Python's ``\w`` (a letter, a number or ``_``), spelt for RE2 and Java's regex alike, which
#: the vectorised ``words`` tokenizers split on. (Java's ``(?U)\w`` also takes combining marks
#: and connector punctuation: ``café`` written with U+0301 is one token there, two in Python.)
#: What still differs is the Unicode version: letters newer than the regex library's database
#: (Java 17: Unicode 13; Python 3.11: 14) split words where the newer database keeps them.
WORD_CHAR = r"[\pL\pN_]"
NON_WORD_RUN = r"[^\pL\pN_]+"

#: Padding symbols put at story boundaries, so that a window near the first or last token
#: of a story still has five positions. They never occur in text (``tokenize`` splits ``<``).
LEFT_PAD = "<s>"
RIGHT_PAD = "</s>"


def tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Split ``text`` into word and punctuation tokens (see the module docstring)."""
    if lowercase:
        text = text.lower()
    return TOKEN_RE.findall(text)


def sets_problem(sets, lowercase: bool) -> str | None:
    """Why the confusion ``sets`` cannot be counted, or None: a set of fewer than two words, a word
    that could never centre a window (empty or holding white space, which splits every input's
    tokens, or upper case where the text is lower-cased), or a word in two sets (which set would
    compete?). Which tokens a word may be otherwise depends on the input (Google's and Brown's
    tokens are their own; ``tokenize`` keeps ``don't`` and ``u.s`` whole), so that is not checked."""
    centres: dict = {}
    for words in sets:
        if len(set(words)) < 2:
            return f"a confusion set needs at least two distinct words, got {list(words)}"
        for w in words:
            if w.split() != [w]:
                return (
                    f"confusion-set word {w!r} is empty or holds white space, which splits tokens: it "
                    "could never be a window's centre"
                )
            if lowercase and w != w.lower():
                return (
                    f"confusion-set word {w!r} has upper case, but lowercase = true lower-cases the "
                    f"text: write {w.lower()!r}"
                )
            if centres.setdefault(w, tuple(words)) != tuple(words):
                return (
                    f"{w!r} is in two confusion sets, {list(centres[w])} and {list(words)}: make them one set"
                )
    return None


def tokenizer(name: str):
    """A tokenizer by name: ``nbspark``, the one tokenizer (``tokenize``); ``words``, lower-cased
    runs of ``\\w`` (scikit-learn's and MLlib's usual split, ``re.findall(r"\\w+", text.lower())``)."""
    return words if name == "words" else tokenize


_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The ``words`` tokenizer: lower-cased runs of ``\\w``. A module function, so that a model that
    holds it pickles (``joblib.dump``, as scikit-learn users keep models)."""
    return _WORD.findall(text.lower())


def line_ends(text: str) -> str:
    """``text`` with every line ending in ``\\n``: ``\\r\\n`` and a lone ``\\r`` (old Mac files) end a
    line too, as for Hadoop's line reader and Python's universal newlines. Where lines and columns are
    counted in a text (``nbspark check``, a paragraph's first line), they count these lines; a
    ``\\r`` ends no snippet."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def centred_windows(
    tokens: Sequence[str], centres: Iterable[str], width: int = 5
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """Yield ``(index, window)`` for every token of ``tokens`` that is in ``centres``.

    ``window`` has ``width`` (odd) tokens with the centre token in the middle; the story is
    padded with ``LEFT_PAD``/``RIGHT_PAD`` so windows near the edges exist. ``index`` is the
    centre's position in the unpadded ``tokens``.
    """
    return windows_in_pieces([tokens], centres, width)


def windows_in_pieces(
    pieces: Iterable[Sequence[str]], centres: Iterable[str], width: int = 5
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """``centred_windows`` of the tokens of ``pieces`` laid end to end (one document), holding
    one piece and a window's context at a time: a long text is tokenized a piece at a time
    (``line_pieces``) and windows span the cuts. ``index`` counts from the document's first token."""
    if width < 1 or width % 2 == 0:
        raise ValueError(f"window width must be odd and positive, got {width}")
    wanted = frozenset(centres)
    half = width // 2
    toks, offset, first = (
        [LEFT_PAD] * half,
        -half,
        half,
    )  # toks[0] is token number `offset`; toks[first] is the next centre
    for piece in chain(pieces, [[RIGHT_PAD] * half]):
        toks += piece
        last = len(toks) - half  # the tokens before it have their whole window
        for i in compress(range(first, last), map(wanted.__contains__, islice(toks, first, last))):
            yield offset + i, tuple(toks[i - half : i + half + 1])
        keep = max(first, last) - half  # the context of the tokens still to centre
        del toks[:keep]
        offset, first = offset + keep, half


def line_pieces(text: str, size: int = 1 << 20) -> Iterator[tuple[int, str]]:
    """``(start, piece)``: ``text`` in pieces of about ``size`` characters, each cut after a ``\\n``
    (no token holds one, so every piece tokenizes as its part of the whole text)."""
    begin = 0
    while begin < len(text):
        end = text.find("\n", begin + size) + 1 or len(text)
        yield begin, text[begin:end]
        begin = end
