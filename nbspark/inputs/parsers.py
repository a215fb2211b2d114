"""Pure parsers for the corpora nbspark reads. No file discovery, no Spark.

* Reuters-21578 SGML (``reut2-NNN.sgm``): ``parse_reuters_sgml(text)`` yields one ``Story``
  per ``<REUTERS>`` element. Decode the file's bytes with ``decode_reuters`` (Latin-1: every
  byte is a character, so decoding never fails and is the same every time; compressed ones
  decompressed).
* n-gram count lines (``w1 w2 w3 w4 w5 TAB count``, as in ``aeffect-train.txt``):
  ``parse_ngram_line(line, order)`` returns ``(tokens, count)`` or raises ``MalformedLine``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from nbspark.errors import InputError
from nbspark.inputs.tokens import line_ends

__all__ = [
    "LINE_LAYOUTS",
    "blank_line",
    "MAX_COUNT",
    "MalformedLine",
    "Story",
    "clean_sgml_text",
    "decode_reuters",
    "POS_TAGS",
    "PSEUDO_TAGS",
    "google_line",
    "holdout_part",
    "in_sample",
    "kept",
    "parse_brown_zip",
    "parse_google_v2",
    "parse_google_v3",
    "parse_ngram_line",
    "parse_reuters_checked",
    "parse_reuters_sgml",
    "strip_pos",
    "text_documents",
]


@dataclass(frozen=True)
class Story:
    """One Reuters-21578 story: the attributes and fields nbspark uses."""

    newid: str
    lewissplit: str
    topics_attr: str  # the TOPICS="YES|NO|BYPASS" attribute
    topics: tuple[str, ...]  # the <TOPICS><D>..</D></TOPICS> labels
    title: str
    body: str
    dateline: str = ""

    @property
    def text(self) -> str:
        """The story as a document: title, dateline and body, one per line."""
        return f"{self.title}\n{self.dateline}\n{self.body}"


_STORY_RE = re.compile(r"<REUTERS\b([^>]*)>(.*?)</REUTERS>", re.DOTALL)
_ATTR_RE = re.compile(r'(\w+)="([^"]*)"')
_D_RE = re.compile(r"<D>(.*?)</D>", re.DOTALL)
_NUMREF_RE = re.compile(r"&#(\d+);")
_NAMED_REFS = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'"}
_NAMED_RE = re.compile("|".join(re.escape(k) for k in _NAMED_REFS))
# C0 controls and DEL, except TAB and newline, which are kept as white space.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def decode_reuters(data: bytes, name: str) -> str:
    """Decode the bytes of a Reuters-21578 SGML file named ``name`` (Latin-1, as the collection is),
    a ``.gz`` or ``.bz2`` decompressed first (``inputs.files.decompressed``: read as its compressed
    bytes, a ``.sgm.gz`` held no story)."""
    from nbspark.inputs.files import decompressed

    return decompressed(data, name).decode("latin-1")


def clean_sgml_text(text: str) -> str:
    """Decode character references and drop control characters.

    ``&lt;`` ``&gt;`` ``&quot;`` ``&apos;`` and numeric references (``&#3;``) are decoded,
    ``&amp;`` last so that ``&amp;lt;`` stays the literal text ``&lt;``; then C0 control
    characters (the collection's ``&#2;``, ``&#3;`` … markers) are removed.
    """
    text = _NUMREF_RE.sub(lambda m: chr(int(m.group(1))) if int(m.group(1)) < 0x110000 else "", text)
    text = _NAMED_RE.sub(lambda m: _NAMED_REFS[m.group(0)], text)
    text = text.replace("&amp;", "&")
    return _CONTROL_RE.sub("", text)


def _field(element: str, tag: str) -> str:
    start = element.find(f"<{tag}>")
    if start < 0:
        return ""
    start += len(tag) + 2
    end = element.find(f"</{tag}>", start)
    return element[start:] if end < 0 else element[start:end]


_OPEN_RE = re.compile(r"<REUTERS\b")


def parse_reuters_checked(text: str) -> tuple[list[Story], int]:
    """The stories of one SGML file's text, and how many of its ``<REUTERS`` elements could not be
    read (a broken or unclosed tag merges two stories or loses one)."""
    stories = list(parse_reuters_sgml(text))
    return stories, max(0, len(_OPEN_RE.findall(text)) - len(stories))


def parse_reuters_sgml(text: str) -> Iterator[Story]:
    """Yield the stories of one Reuters-21578 SGML file's text, in file order."""
    for match in _STORY_RE.finditer(text):
        attrs = dict(_ATTR_RE.findall(match.group(1)))
        element = match.group(2)
        topics = tuple(clean_sgml_text(d).strip() for d in _D_RE.findall(_field(element, "TOPICS")))
        yield Story(
            newid=attrs.get("NEWID", ""),
            lewissplit=attrs.get("LEWISSPLIT", ""),
            topics_attr=attrs.get("TOPICS", ""),
            topics=topics,
            title=clean_sgml_text(_field(element, "TITLE")).strip(),
            body=clean_sgml_text(_field(element, "BODY")),
            dateline=clean_sgml_text(_field(element, "DATELINE")).strip(),
        )


#: The largest count a line may carry: counts are stored as 64-bit integers (Parquet BIGINT).
MAX_COUNT = 2**63 - 1


#: What a line of each line format holds, as a refusal names it when no line of an input had the
#: fields its format wants (``inputs.stats.fields_hint``).
LINE_LAYOUTS = {
    "tsv": "id TAB labels TAB text (labels comma-separated)",
    "sms": "label TAB text",
    "ngrams": "the n-gram's words, space-separated, TAB count",
    "google_v2": "ngram TAB year TAB match_count TAB volume_count",
    "google_v3": "ngram TAB year,match_count,volume_count TAB …",
}


class MalformedLine(ValueError):
    """An input line that does not have the expected shape; ``reason`` says how."""

    def __init__(self, reason: str, line: str):
        super().__init__(f"{reason}: {line!r}")
        self.reason = reason
        self.line = line


def blank_line(line: str) -> bool:
    """Whether a line holds nothing but white space (Python's ``str.strip()``): no record in any line
    format, counted as ``blank_lines`` and never as malformed (an editor's last empty line of an
    n-gram file stopped a failfast train). The rule of every engine: ``inputs.lines.blank_values`` is
    its Arrow twin."""
    return not line.strip()


def parse_ngram_line(line: str, order: int = 5) -> tuple[tuple[str, ...], int]:
    """Parse ``w1 … wN TAB count`` into ``((w1, …, wN), count)``.

    The n-gram is split on single spaces, exactly: a line must have ``order`` space-separated
    fields (an empty last field, from a trailing space, is kept as the empty token, which is
    how the published affect/effect counts were made), one TAB, and a non-negative integer
    count that fits in 64 bits. Anything else raises ``MalformedLine`` with a short reason:
    ``fields`` (not exactly one TAB), ``tokens`` (not ``order`` tokens, e.g. a quote glued to
    a word with a token missing), ``count`` (missing, not a non-negative integer, or above
    ``MAX_COUNT``).
    """
    line = line.rstrip("\r\n")
    parts = line.split("\t")
    if len(parts) != 2:
        raise MalformedLine("fields", line)
    tokens = parts[0].split(" ")
    if len(tokens) != order:
        raise MalformedLine("tokens", line)
    return tuple(tokens), _count(parts[1], line)


def holdout_part(record_id: str, seed: int, fraction: float) -> str:
    """``"test"`` for a seeded ``fraction`` of record ids, else ``"train"``.

    The choice hashes ``seed`` and the id (BLAKE2b, not Python's per-process ``hash``), so it
    is the same in every process, on every partitioning, and for any other tool that calls it.
    """
    digest = hashlib.blake2b(f"{seed}:{record_id}".encode(), digest_size=8).digest()
    return "test" if int.from_bytes(digest, "big") / 2**64 < fraction else "train"


def in_sample(record_id: str, seed: int, fraction: float) -> bool:
    """Whether a record is in the seeded ``fraction`` sample of its input (a naive Bayes model
    trained on a sample, ``sample``/``sample_seed``; its learning curve): a hash of ``seed`` and its
    id below ``fraction``, so a smaller sample is inside every larger one. Keyed apart from the
    hold-out's hash (``holdout_part``), so a sample of a hold-out's train part is not one end of it."""
    return holdout_part(f"sample:{record_id}", seed, fraction) == "test"


def kept(splits, holdout: float, seed: int, record_id: str) -> bool:
    """Whether a record is read: every one without a ``holdout``, else those whose part
    (``holdout_part``) is among ``splits`` (every one when none are named)."""
    if not holdout:
        return True
    return not splits or holdout_part(record_id, seed, holdout) in splits


#: Google Books part-of-speech tags (the universal tag set of the 2012 corpus), as suffixes
#: (``effect_NOUN``) or alone (``_NOUN_``), plus the positional pseudo-tokens.
POS_TAGS = frozenset({"NOUN", "VERB", "ADJ", "ADV", "PRON", "DET", "ADP", "NUM", "CONJ", "PRT", "X", "."})
PSEUDO_TAGS = frozenset({"ROOT", "START", "END"})


def strip_pos(token: str) -> str | None:
    """``effect_NOUN`` -> ``effect``; a tag standing alone (``_NOUN_``, ``_START_``) -> None."""
    if (
        len(token) > 2
        and token.startswith("_")
        and token.endswith("_")
        and token[1:-1] in POS_TAGS | PSEUDO_TAGS
    ):
        return None
    base, sep, tag = token.rpartition("_")
    if sep and base and tag in POS_TAGS:
        return base
    return token


def _google_tokens(ngram: str, order: int, line: str) -> tuple[str, ...]:
    tokens = ngram.split(" ")
    if len(tokens) != order or "" in tokens:
        raise MalformedLine("tokens", line)
    return tuple(tokens)


def _count(text: str, line: str) -> int:
    """A count field: ASCII digits (surrounding white space ignored) whose value fits in 64 bits."""
    text = text.strip()
    if not text.isdigit() or not text.isascii() or int(text) > MAX_COUNT:
        raise MalformedLine("count", line)
    return int(text)


def parse_google_v2(line: str, order: int = 5) -> tuple[tuple[str, ...], int, int]:
    """Google Books Ngram version 2 (2012): ``ngram TAB year TAB match_count TAB volume_count``
    -> ``(tokens, year, match_count)``. Raises ``MalformedLine`` (fields, tokens, year, count)."""
    line = line.rstrip("\r\n")
    parts = line.split("\t")
    if len(parts) != 4:
        raise MalformedLine("fields", line)
    tokens = _google_tokens(parts[0], order, line)
    if not parts[1].strip().isdigit():
        raise MalformedLine("year", line)
    return tokens, int(parts[1]), _count(parts[2], line)


def parse_google_v3(line: str, order: int = 5) -> tuple[tuple[str, ...], list[tuple[int, int]]]:
    """Google Books Ngram version 3 (2020): ``ngram TAB year,match_count,volume_count TAB ...``
    -> ``(tokens, [(year, match_count), ...])``. Raises ``MalformedLine``."""
    line = line.rstrip("\r\n")
    parts = line.split("\t")
    if len(parts) < 2:
        raise MalformedLine("fields", line)
    tokens = _google_tokens(parts[0], order, line)
    years = []
    for entry in parts[1:]:
        fields = entry.split(",")
        if len(fields) != 3 or not fields[0].strip().isdigit():
            raise MalformedLine("year", line)
        years.append((int(fields[0]), _count(fields[1], line)))
    return tokens, years


def google_line(
    line: str, fmt: str, width: int, strip: bool, lowercase: bool, confusion, year_min: int, year_max: int
):
    """One Google Books line (``fmt`` google_v2 or google_v3) by the rules of every engine:
    ``("ngram", tokens, match count in [year_min, year_max])``, or ``(statistic, None, 0)`` with the
    statistic ``blank_lines`` (``blank_line``: no record, as in every line format),
    ``lines_with_pos_tag_tokens`` (a stand-alone tag token, when ``strip``),
    ``lines_not_in_confusion_set`` or ``lines_outside_year_range``, in that order of checks.
    Raises ``MalformedLine`` first, for a line of the wrong shape."""
    if blank_line(line):
        return "blank_lines", None, 0
    parsed = (parse_google_v2 if fmt == "google_v2" else parse_google_v3)(line, width)
    tokens = parsed[0]
    if strip:
        tokens = tuple(strip_pos(t) for t in tokens)
        if None in tokens:
            return "lines_with_pos_tag_tokens", None, 0
    if lowercase:
        tokens = tuple(t.lower() for t in tokens)
    if tokens[width // 2] not in confusion:
        return "lines_not_in_confusion_set", None, 0
    years = [(parsed[1], parsed[2])] if fmt == "google_v2" else parsed[1]
    count = sum(c for year, c in years if year_min <= year <= year_max)
    return ("ngram", tokens, count) if count else ("lines_outside_year_range", None, 0)


_PARAGRAPH_BREAK = re.compile(r"\n(?:[ \t]*\n)+")


def text_documents(text: str, unit: str = "file") -> list[tuple[int, str]]:
    """The documents of a plain text, each with its 1-based first line: the whole text
    (``unit = "file"``) or its paragraphs, separated by blank lines (``"paragraph"``). Lines end
    in ``\\n``, ``\\r\\n`` or ``\\r`` (``inputs.tokens.line_ends``)."""
    if unit == "file":
        return [(1, text)]
    text = line_ends(text)
    out, start, line = [], 0, 1
    for m in _PARAGRAPH_BREAK.finditer(text):
        out.append((line, text[start : m.start()]))
        line += text.count("\n", start, m.end())  # counted from the last paragraph on: linear in the text
        start = m.end()
    out.append((line, text[start:]))
    return [(line, doc) for line, doc in out if doc.strip()]


_BROWN_FILE = re.compile(r"(?:^|/)c[a-r]\d\d$")


def parse_brown_zip(data: bytes, source: str = "brown.zip") -> Iterator[tuple[str, list[str]]]:
    """The Brown corpus as NLTK zips it: ``(file id, words)`` per text file (``brown/ca01`` …).

    Tokens are ``word/tag``; the tag (after the last ``/``) is dropped. The words are Brown's own
    tokens (punctuation already split), kept as they are; lower-case them as the config says.
    ``InputError`` naming ``source`` for bytes that are not a readable zip, or a zip without
    Brown's text files (another zip given as Brown would count nothing, in silence).
    """
    import io
    import zipfile
    import zlib

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [name for name in sorted(archive.namelist()) if _BROWN_FILE.search(name)]
            if not names:
                raise InputError(
                    f"{source}: no Brown corpus text files (brown/ca01 … brown/cr09) in this zip"
                )
            for name in names:
                text = archive.read(name).decode("utf-8", errors="replace")
                words = [tok.rpartition("/")[0] or tok for tok in text.split()]
                yield name.rsplit("/", 1)[-1], words
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise InputError(f"{source}: not a readable zip ({exc})") from None
