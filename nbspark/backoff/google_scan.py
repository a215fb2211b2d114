"""Google Books shards scanned whole in Python at decompression speed (pure: no Spark, no JVM).

A shard's bytes (gzip or plain) are decompressed in pieces (ISA-L's inflate where the ``isal``
package is installed, else zlib), cut into lines as Hadoop's ``LineRecordReader`` cuts them (``\\n``,
``\\r\\n`` and ``\\r`` end a line; a UTF-8 byte-order mark opening the file is dropped), and each
piece's lines are tested together by three RE2 patterns over an Arrow array that views the
piece's bytes (``pyarrow.compute``; no Python per line):

* ``good``: the line is certainly well formed (``tok( tok){W-1}`` then the format's count fields,
  as ``backoff.google_filter``'s predicate says), so Python would parse it;
* ``tagged`` (POS stripped): a stand-alone tag token (``_NOUN_``, ``_START_``) among its n-gram;
* ``candidate``: its centre token starts, in any case, with a confusion-set word, or holds a
  byte outside ASCII (where Java's, RE2's and Python's case rules may differ).

A good tagged line is counted as ``lines_with_pos_tag_tokens`` and a good untagged line that is not
a candidate as ``lines_not_in_confusion_set``: exactly what ``inputs.parsers.google_line`` says of them.
Every other line (not certainly well formed, or a candidate) is decoded and goes through
``google_line`` itself, so the table and statistics equal the ``combine`` engine's, line for line.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter

from nbspark.inputs.decoding import JVM_REPLACE
from nbspark.inputs.parsers import POS_TAGS, PSEUDO_TAGS, MalformedLine, google_line

try:  # ISA-L's inflate: about twice zlib's speed, the same bytes out
    from isal import isal_zlib as _inflate
except ImportError:  # pragma: no cover - isal is a dependency; zlib is the fallback elsewhere
    _inflate = zlib

__all__ = ["GoogleRules", "UnreadableShardError", "line_pieces", "scan_shard", "text_pieces"]

PIECE = 1 << 24  # bytes of text tested together
_BOM = b"\xef\xbb\xbf"


class UnreadableShardError(ValueError):
    """A shard whose bytes are not gzip (or are cut short)."""


class GoogleRules:
    """The settings of ``google_line`` and the patterns that stand for it on whole pieces."""

    def __init__(
        self, fmt: str, width: int, strip: bool, lowercase: bool, centres, year_min: int, year_max: int
    ):
        self.args = (fmt, width, strip, lowercase, frozenset(centres), year_min, year_max)
        tok = r"[^ \t\n]+"
        tail = (
            r"\t[0-9]+\t[0-9]{1,18}\t[^\t\n]*"
            if fmt == "google_v2"
            else r"(?:\t[0-9]+,[0-9]{1,18},[^\t,\n]*)+"
        )
        self.good = rf"^{tok}(?: {tok}){{{width - 1}}}{tail}\n$"
        tags = sorted(f"_{t}_" for t in POS_TAGS | PSEUDO_TAGS) if strip else []
        self.tagged = rf"^(?:{tok} )*(?:{'|'.join(map(re.escape, tags))})[ \t]" if strip else None
        # good, no tag token, and a centre of ASCII characters that cannot start with a set word
        other = _token(_ANY, tags, [], False)
        centre = _token(_ASCII, tags, [w for w in centres if w.isascii()], lowercase)
        before, after = width // 2, width - width // 2 - 1
        self.dropped = rf"^(?:{other} ){{{before}}}{centre}(?: {other}){{{after}}}{tail}\n$"

    def line(self, text: str):
        return google_line(text, *self.args)


_ANY = frozenset(range(256)) - {ord(" "), ord("\t"), ord("\n")}  # a token's bytes
_ASCII = frozenset(b for b in _ANY if b < 128)


def _token(chars: frozenset, exact: list[str], prefixes: list[str], fold: bool) -> str:
    """RE2 for a non-empty token of ``chars`` that is none of ``exact`` and starts with none of
    ``prefixes`` (ASCII letters folded to lower case when ``fold``): a trie, so the test costs
    one pass of RE2's automaton whatever the number of words."""
    trie: dict = {}
    for word, kind in [(w, "exact") for w in exact] + [
        (w.lower() if fold else w, "prefix") for w in prefixes
    ]:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[kind] = True

    def byte_set(ch: str) -> set:
        return {ord(ch.lower()), ord(ch.upper())} if fold and ch.isalpha() else {ord(ch)}

    def rest(node: dict, first: bool) -> str | None:
        if node.get("prefix"):
            return None
        children = {ch: n for ch, n in node.items() if len(ch) == 1}
        ways = [] if first or node.get("exact") else [""]
        taken = set().union(*(byte_set(ch) for ch in children)) if children else set()
        ways.append(f"{_byte_class(chars - taken)}{_byte_class(chars)}*")
        for ch, child in sorted(children.items()):
            after = rest(child, False)
            if after is not None:
                ways.append(_byte_class(byte_set(ch) & chars) + after)
        return "(?:" + "|".join(ways) + ")"

    return rest(trie, True)


def _byte_class(codes) -> str:
    """A byte class in RE2's Latin-1 notation (``[\\x41-\\x5a…]``)."""
    codes = sorted(codes)
    runs, start = [], None
    for i, c in enumerate(codes):
        if start is None:
            start = c
        if i + 1 == len(codes) or codes[i + 1] != c + 1:
            runs.append((start, c))
            start = None
    return "[" + "".join(f"\\x{a:02x}" if a == b else f"\\x{a:02x}-\\x{b:02x}" for a, b in runs) + "]"


def text_pieces(data, gz: bool):
    """The text of a shard's bytes in pieces of at most ``PIECE`` bytes; every gzip member."""
    view = memoryview(data)
    if not gz:
        for start in range(0, len(view), PIECE):
            yield bytes(view[start : start + PIECE])
        return
    rest = bytes(data)  # no copy when it is bytes already
    while rest:
        inflater = _inflate.decompressobj(wbits=31)
        pending = rest
        while not inflater.eof:
            try:
                out = inflater.decompress(pending, PIECE)
            except (zlib.error, _inflate.error) as exc:
                raise UnreadableShardError(f"cannot be read as gzip ({exc})") from None
            pending = inflater.unconsumed_tail
            if out:
                yield out
            elif not pending:
                raise UnreadableShardError("cannot be read as gzip (truncated gzip data)")
        rest = inflater.unused_data


def line_pieces(pieces):
    """Pieces of whole lines, each ending in ``\\n``, with Hadoop's line ends (``\\r\\n``, ``\\r``)
    turned into ``\\n`` and a UTF-8 byte-order mark at the start dropped."""
    carry = b""
    first = True
    for piece in pieces:
        data = carry + piece if carry else piece
        if first:
            if len(data) < len(_BOM) and _BOM.startswith(data):
                carry = data
                continue
            first = False
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
        cut = data.rfind(b"\n") + 1
        carry = data[cut:]
        if cut:
            yield _newlines(data[:cut])
    if carry:  # the last line, or a file shorter than a byte-order mark
        last = _newlines(carry)
        yield last if last.endswith(b"\n") else last + b"\n"


def _newlines(text: bytes) -> bytes:
    if b"\r" not in text:
        return text
    return text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _lines(text: bytes):
    """The lines of a piece (each with its ``\\n``) as an Arrow array viewing its bytes, and their offsets."""
    import numpy as np
    import pyarrow as pa

    ends = np.flatnonzero(np.frombuffer(text, np.uint8) == 10)
    offsets = np.empty(len(ends) + 1, np.int64)
    offsets[0] = 0
    offsets[1:] = ends + 1
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(ends), [None, pa.py_buffer(offsets), pa.py_buffer(text)]
    ), offsets


def _matches(lines, pattern):
    import pyarrow.compute as pc

    return pc.match_substring_regex(lines, pattern).to_numpy(zero_copy_only=False)


def scan_shard(data, gz: bool, rules: GoogleRules, stats, ngrams: Counter) -> None:
    """Add one shard's n-grams (``tokens -> match count``) to ``ngrams`` and its statistics to
    ``stats`` (``inputs.stats.PartitionStats``): those ``google_line`` gives, line for line."""
    import numpy as np

    for text in line_pieces(text_pieces(data, gz)):
        lines, offsets = _lines(text)
        stats.add("lines_read", len(lines))
        dropped = _matches(lines, rules.dropped)
        stats.add("lines_not_in_confusion_set", int(dropped.sum()))
        rest = (~dropped).nonzero()[0]
        if not len(rest):
            continue
        unsettled = lines.take(rest)
        tagged = (
            _matches(unsettled, rules.tagged) & _matches(unsettled, rules.good)
            if rules.tagged
            else np.zeros(len(rest), bool)
        )
        stats.add("lines_with_pos_tag_tokens", int(tagged.sum()))
        for i in rest[~tagged].tolist():
            line = text[offsets[i] : offsets[i + 1] - 1].decode("utf-8", JVM_REPLACE)
            try:
                outcome, tokens, count = rules.line(line)
            except MalformedLine as exc:
                stats.add("malformed")
                stats.add(f"malformed.{exc.reason}")
                continue
            if outcome == "ngram":
                ngrams[tokens] += count
            else:
                stats.add(outcome)
