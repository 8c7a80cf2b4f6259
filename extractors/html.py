"""HTML: text nodes and alt/title attributes; markup, links and CSS untouched.

The source is scanned, not parsed into a tree and serialized again, so that
everything we do not change stays byte for byte what the sender wrote: only
the text of a changed node or attribute value is spliced in. Script and style
contents are skipped. Text nodes separated only by inline tags ("Los
<b>Angeles</b>") are pieces of one segment; block tags end a segment.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from extractors.base import Segment

_TOKEN = re.compile(
    r"<!--.*?(?:-->|$)|<!\[CDATA\[.*?(?:\]\]>|$)|<![^>]*>?|<\?[^>]*>?"
    r"|<(/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>",
    re.S,
)
_ATTR = re.compile(r"""(?<![\w-])(alt|title|aria-label|placeholder)\s*=\s*("([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.I)
_RAW_TEXT = frozenset({"script", "style", "template"})
_BLOCK = frozenset(
    """address article aside blockquote body br button caption center dd details dialog div dl dt fieldset
    figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hr html iframe img input legend li main map
    menu nav noscript object ol option p pre section select summary table tbody td tfoot th thead title tr ul
    video audio""".split()
)


@dataclass(slots=True)
class _Slot:
    start: int  # raw offsets in the source
    end: int
    text: str  # decoded
    quote: str | None = None  # for attribute values: the quote to keep


@dataclass(slots=True)
class HtmlDocument:
    source: str
    part: str
    _groups: list[list[_Slot]] = field(default_factory=list)

    @property
    def segments(self) -> list[Segment]:
        return [Segment(self.part, tuple(s.text for s in g)) for g in self._groups]

    def rebuild_text(self, pieces: Sequence[tuple[str, ...]]) -> str:
        edits: list[tuple[int, int, str]] = []
        for group, new in zip(self._groups, pieces, strict=True):
            for slot, text in zip(group, new, strict=True):
                if text == slot.text:
                    continue
                if slot.quote is None:
                    raw = html.escape(text, quote=False)
                else:
                    raw = html.escape(text, quote=True)
                    if not slot.quote:  # an unquoted value must become quoted once it may hold spaces
                        raw = f'"{raw}"'
                edits.append((slot.start, slot.end, raw))
        if not edits:
            return self.source
        out: list[str] = []
        pos = 0
        for start, end, raw in sorted(edits):
            out.append(self.source[pos:start])
            out.append(raw)
            pos = end
        out.append(self.source[pos:])
        return "".join(out)


def scan(source: str, part: str) -> HtmlDocument:
    doc = HtmlDocument(source, part)
    current: list[_Slot] = []

    def flush() -> None:
        nonlocal current
        if any(s.text.strip() for s in current):
            doc._groups.append(current)
        current = []

    def text(start: int, end: int) -> None:
        if start < end:
            raw = source[start:end]
            current.append(_Slot(start, end, html.unescape(raw)))

    pos = 0
    n = len(source)
    while pos < n:
        m = _TOKEN.search(source, pos)
        if m is None:
            text(pos, n)
            break
        text(pos, m.start())
        pos = m.end()
        name = (m.group(2) or "").lower()
        if not name:
            continue  # comment, doctype, processing instruction: invisible, not a break
        if name in _BLOCK:
            flush()
        attrs = m.group(3) or ""
        base = m.start(3)
        for a in _ATTR.finditer(attrs):
            if a.group(3) is not None:
                vs, ve, q = a.start(3), a.end(3), '"'
            elif a.group(4) is not None:
                vs, ve, q = a.start(4), a.end(4), "'"
            else:
                vs, ve, q = a.start(5), a.end(5), ""
            value = html.unescape(attrs[vs:ve])
            if value.strip():
                doc._groups.append([_Slot(base + vs, base + ve, value, q)])
        if not m.group(1) and name in _RAW_TEXT and not attrs.rstrip().endswith("/"):
            close = re.compile(rf"</{name}\s*>", re.I).search(source, pos)
            flush()
            pos = close.end() if close else n
    flush()
    return doc
