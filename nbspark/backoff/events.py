"""Examples and the events they count into. Pure; owns the count-row layout.

An *example* is a window of ``width`` tokens centred on a member of the confusion set, with a
weight (1 for a window of running text, the line's count for an n-gram line)::

    Example(source="reuters:12#40", window=("the", "cumulative", "effect", "of", "the"), weight=1)

Its label is the centre token; its context is every other position, named by letters
(A B _ D E for width 5, C being the label). Each example is flatMapped into one *event* per
counted context subset::

    (subset, value-or-None for each context position, label)  ->  weight

e.g. for subset ``BD`` the event is ``("BD", None, "cumulative", "of", None, "effect")``.
The empty subset ``""`` gives the label counts (the prior). Count rows are these keys plus the
summed weight, see ``count_ddl``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from nbspark.inputs.parsers import Story, parse_ngram_line
from nbspark.inputs.tokens import tokenize, windows_in_pieces

__all__ = [
    "Example",
    "context_letters",
    "count_columns",
    "count_ddl",
    "example_events",
    "in_sample",
    "ngram_example",
    "story_examples",
    "subset_key",
    "piece_examples",
    "token_examples",
]


class Example(NamedTuple):
    source: str
    window: tuple[str, ...]
    weight: int


def context_letters(letters: str) -> str:
    """The context positions: every letter but the centre's."""
    return letters[: len(letters) // 2] + letters[len(letters) // 2 + 1 :]


def count_columns(letters: str) -> list[str]:
    """Column names of a count row: subset, one per context position (lower case), label, count."""
    return ["subset", *[c.lower() for c in context_letters(letters)], "label", "count"]


def count_ddl(letters: str) -> str:
    """The count-row schema as a Spark DDL string (positions outside the subset are NULL)."""
    ctx = ", ".join(f"{c.lower()} STRING" for c in context_letters(letters))
    return f"subset STRING NOT NULL, {ctx}, label STRING NOT NULL, count BIGINT NOT NULL"


def subset_key(window: Sequence[str], subset: str, letters: str) -> tuple:
    """The context values of ``window`` for ``subset``, None outside it, one per context position."""
    return tuple(window[letters.index(c)] if c in subset else None for c in context_letters(letters))


def example_events(example: Example, subsets: Sequence[str], letters: str) -> Iterator[tuple[tuple, int]]:
    """``(event, weight)`` pairs for one example: one event per subset."""
    centre = len(letters) // 2
    label = example.window[centre]
    for subset in subsets:
        yield (subset, *subset_key(example.window, subset, letters), label), example.weight


def ngram_example(
    line: str, source: str, confusion: frozenset[str], width: int, lowercase: bool
) -> Example | None:
    """Parse one n-gram count line into an Example, or None when its centre is not in the set.

    Raises ``inputs.parsers.MalformedLine`` for a line of the wrong shape (see ``parse_ngram_line``).
    """
    tokens, count = parse_ngram_line(line, width)
    if lowercase:
        tokens = tuple(t.lower() for t in tokens)
    if tokens[width // 2] not in confusion:
        return None
    return Example(source, tokens, count)


def token_examples(
    doc_id: str, tokens: Sequence[str], confusion: Iterable[str], width: int, lowercase: bool
) -> Iterator[Example]:
    """Every window of a document's ``tokens`` centred on a confusion-set word, weight 1;
    the source id is ``DOC_ID#i``, ``i`` the centre's token index."""
    if lowercase:
        tokens = [t.lower() for t in tokens]
    return piece_examples(doc_id, [tokens], confusion, width)


def piece_examples(
    doc_id: str, pieces: Iterable[Sequence[str]], confusion: Iterable[str], width: int
) -> Iterator[Example]:
    """``token_examples`` of a document given as pieces of tokens (``inputs.tokens.windows_in_pieces``: a long
    text tokenized a piece at a time); ``i`` counts from the document's first token."""
    for i, window in windows_in_pieces(pieces, confusion, width):
        yield Example(f"{doc_id}#{i}", window, 1)


def story_examples(
    story: Story, confusion: Iterable[str], width: int, lowercase: bool, source_prefix: str = "reuters"
) -> Iterator[Example]:
    """Every window of ``story``'s body centred on a confusion-set word, weight 1.

    The source id is ``reuters:NEWID#i``, ``i`` being the centre's token index in the body.
    """
    tokens = tokenize(story.body, lowercase=lowercase)
    yield from token_examples(f"{source_prefix}:{story.newid}", tokens, confusion, width, False)


def in_sample(example: Example, seed: int, fraction: float) -> bool:
    """Whether ``example`` is in the seeded ``fraction`` sample (nested: a smaller fraction's
    sample is inside a larger one's). Keyed on the source id, without the directory of its file
    (the same corpus on other storage, ``viewfs://…`` or ``hdfs://…``, gives the same sample), and
    the window, so n-gram lines with equal sources (Google n-grams summed over files) still differ."""
    key = f"{seed}:{example.source.rsplit('/', 1)[-1]}:{' '.join(example.window)}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2**64 < fraction
