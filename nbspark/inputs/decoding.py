"""The one decoder of bad UTF-8: the JVM's rule, as pure Python.

Spark's text readers decode a line as ``new String(bytes, UTF_8)`` does, so every path that
decodes lines itself (the arrow engines and scorer, ``inputs.lines.jvm_decoded``; the Google
shard scanner, ``backoff.google_scan``) decodes with ``bytes.decode("utf-8", JVM_REPLACE)`` and
gets the same text, U+FFFD for U+FFFD. Java's decoder and Python's ``errors="replace"`` put U+FFFD
over different spans of some malformed sequences. The Spark SQL engine's twin of this rule is
``naive_bayes.inputs.decoded_lines`` (the JVM itself), tested equal on random bytes.
"""

from __future__ import annotations

import codecs

__all__ = ["BINARY_SIGN", "JVM_REPLACE", "UTF16_HINT"]

#: The ``errors`` of ``bytes.decode`` that decodes as the JVM's ``new String(bytes, UTF_8)``.
JVM_REPLACE = "nbspark.jvm-replace"
#: What NUL characters in text read as UTF-8 most likely mean (UTF-16 puts one beside every ASCII
#: character: Notepad's "Unicode", Excel's "Unicode Text"), and the way out.
UTF16_HINT = "a UTF-16 file? nbspark reads UTF-8 (iconv -f UTF-16 -t UTF-8)"
#: What a file skipped as binary (``inputs.files.decode_text``: a NUL byte near its start) most
#: likely is, and what else reads so.
BINARY_SIGN = "an image, a PDF, an archive; or UTF-16 without a byte-order mark"


def _jvm_malformed_length(data: bytes, i: int) -> int:
    """How many bytes the JVM's UTF-8 decoder (``java.lang.String``) turns into one U+FFFD at
    ``data[i]``, where the bytes from ``i`` are not a UTF-8 character.

    Python's ``errors="replace"`` replaces each maximal invalid subpart: ``ED A0 80`` (an encoded
    surrogate) gives three U+FFFD there and one in Java; ``E4 B8`` at the end of a line one in
    both. Java's rules (``String.decodeUTF8_UTF16``, unchanged from JDK 9 to 25): a 3-byte lead
    takes its second byte along when that byte could follow it, a 4-byte lead its second and
    third; a sequence cut off by the end of the line is one U+FFFD."""
    n = len(data) - i  # the lead byte and the bytes after it

    def cont(k):
        return k < n and data[i + k] & 0xC0 == 0x80

    b1 = data[i]
    if 0xE0 <= b1 <= 0xEF:
        bad_second = (b1 == 0xE0 and data[i + 1] & 0xE0 == 0x80 if n > 1 else False) or not cont(1)
        if n >= 3:
            return 1 if bad_second else 2 if not cont(2) else 3  # 3: a surrogate
        return 1 if n == 2 and bad_second else n
    if 0xF0 <= b1 <= 0xF7:
        b2 = data[i + 1] if n > 1 else 0x80
        if (
            b1 > 0xF4
            or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
            or (b1 == 0xF4 and b2 & 0xF0 != 0x80)
            or not cont(1)
        ):
            return 1 if n > 1 or b1 > 0xF4 else n
        if n >= 4:
            return 2 if not cont(2) else 3
        return 2 if n == 3 and not cont(2) else n
    return 1  # a continuation byte, C0, C1, F8 to FF, or a 2-byte lead without its second byte


def _jvm_replace(error: UnicodeDecodeError):
    return "\ufffd", error.start + _jvm_malformed_length(error.object, error.start)


codecs.register_error(JVM_REPLACE, _jvm_replace)
