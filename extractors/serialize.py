"""A rebuilt message out as bytes: what no decision touched, as the sender wrote it.

The email package's generator folds every header again (compat32's Header
algorithm wraps each line at 78 characters), so a message whose only change
is a display name came out with every long ``Received``, ``DKIM-Signature``
and list header re-wrapped: slower (most of a rebuild's CPU), and no longer
what was signed. Here a header field the parser produced and nothing
replaced is written as it was read, its folding kept and its line ends made
CRLF; a field a setter replaced goes through compat32's folding as before.
Bodies were never re-wrapped; their line ends become CRLF in one pass
instead of line by line.
"""

from __future__ import annotations

import email.policy
import re
from email.generator import BytesGenerator
from email.message import Message
from io import BytesIO
from typing import BinaryIO

OUT_POLICY = email.policy.compat32.clone(linesep="\r\n")
_LINE_END = re.compile(r"\r\n|\r|\n")  # the generator's own NLCRE
_CRLF = "\r\n"
_LINE_STARTS = ("\r", "\n")


# What a fold could write otherwise: an encoded word, control characters (tabs, line ends), a run of blanks, a
# quoted pair (the header registry drops needless backslashes).
NEEDS_FOLDING = re.compile(r"=\?|[\x00-\x1f\x7f\\]|  ")


def short_line(name: str, value: str) -> bool:
    """A field that fits on one line of printable ASCII words, with no blank at either end: every folding
    algorithm of the email package writes it as it is."""
    return (
        value.isascii()
        and len(name) + 2 + len(value) <= 78
        and value == value.strip()
        and NEEDS_FOLDING.search(value) is None
    )


class ParsedHeaders:
    """The header fields of a message tree as the parser made them (kept alive, so identity means unchanged)."""

    __slots__ = ("_fields", "_ids")

    def __init__(self, message: Message) -> None:
        # walk() goes into attached messages too
        self._fields = [field for part in message.walk() for field in _headers(part)]
        self._ids = frozenset(map(id, self._fields))

    def unchanged(self, field: tuple[str, object]) -> bool:
        return id(field) in self._ids


def _headers(part: Message) -> list[tuple[str, object]]:
    fields: list[tuple[str, object]] = part._headers  # type: ignore[attr-defined]
    return fields


def crlf(text: str) -> str:
    """``_LINE_END.sub(_CRLF, text)``: every line end made CRLF. Without the regex (a call for each of a message's
    fields and bodies) when the text has no carriage return, or when each of its returns and line feeds is a CRLF."""
    if "\r" not in text:
        return text.replace("\n", _CRLF)
    pairs = text.count(_CRLF)
    if pairs == text.count("\r") == text.count("\n"):
        return text
    return _LINE_END.sub(_CRLF, text)


class _VerbatimGenerator(BytesGenerator):
    def __init__(self, outfp: BinaryIO, parsed: ParsedHeaders) -> None:
        super().__init__(outfp, mangle_from_=False, policy=OUT_POLICY)
        self._parsed = parsed

    def clone(self, fp: BinaryIO) -> _VerbatimGenerator:  # type: ignore[override]
        return _VerbatimGenerator(fp, self._parsed)

    def _write_headers(self, msg: Message) -> None:
        out = self._fp  # type: ignore[attr-defined]
        for field in _headers(msg):
            name, value = field
            if isinstance(value, str) and self._parsed.unchanged(field):
                try:
                    gap = "" if value[:1] in _LINE_STARTS else " "  # "Name:" then a folded value: no blank added
                    out.write(f"{name}:{gap}{crlf(value)}{_CRLF}".encode("ascii", "surrogateescape"))
                    continue
                except UnicodeEncodeError:
                    pass  # not what the bytes parser makes; folded and encoded as any new field
            if isinstance(value, str) and short_line(name, value):
                # What compat32's Header algorithm writes for it (tests/test_rebuild_fast.py), without running it.
                out.write(f"{name}: {value}{_CRLF}".encode("ascii", "surrogateescape"))
                continue
            out.write(OUT_POLICY.fold_binary(name, value))  # type: ignore[arg-type]  # a str or a Header
        self.write(_CRLF)

    def _write_lines(self, lines: str) -> None:
        if lines:
            self.write(crlf(lines))


def as_bytes(message: Message, parsed: ParsedHeaders) -> bytes:
    fp = BytesIO()
    _VerbatimGenerator(fp, parsed).flatten(message, unixfrom=False)
    return fp.getvalue()
