"""HTML: everything a person or a program can read, and nothing copied through unread.

The source is scanned, not parsed into a tree and serialized again, so that
everything we do not change stays byte for byte what the sender wrote: only
the text of a changed node or attribute value is spliced in. Read: text
nodes (the title included), every attribute value that can hold words (meta
content, input values, data-*, alt, title, event handlers; not sizes, colours
and other enumerations), URLs (percent-decoded; a changed URL is
percent-encoded again), comments and style sheets (as text: removing them
would change every Outlook message and its layout, and read they can leave
only sanitized). Scripts are removed: no mail client runs them, and code
cannot be sanitized word by word. Text nodes separated only by inline tags
("Los <b>Angeles</b>") are pieces of one segment; block tags end a segment.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field

from extractors.base import Segment

_TOKEN = re.compile(
    r"<!--.*?(?:-->|$)|<!\[CDATA\[.*?(?:\]\]>|$)|<![^>]*>?|<\?[^>]*>?"
    r"|<(/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>",
    re.S,
)
_ATTR = re.compile(r"""(?<![\w-])([a-zA-Z_:][-\w:.]*)\s*=\s*("([^"]*)"|'([^']*)'|([^\s"'>]+))""")
# Values that are sizes, colours, enumerations or identifiers of the markup itself: no words.
_NOT_TEXT = frozenset(
    """width height border align valign bgcolor color cellpadding cellspacing colspan rowspan dir lang type
    charset http-equiv target rel method size span tabindex nowrap shape coords frameborder scope start hspace
    vspace xmlns version class id for face marginwidth marginheight topmargin leftmargin link vlink alink
    text enctype accept-charset autocomplete loading decoding crossorigin referrerpolicy role width
    xml:lang xmlns:v xmlns:o xmlns:w xmlns:m""".split()
)
_URL_ATTRS = frozenset("href src action background cite longdesc poster data formaction srcset usemap".split())
_RAW_TEXT = frozenset({"script", "style", "template", "textarea"})
_REMOVED = frozenset({"script"})
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
    kind: str = "text"  # text, attr, url (percent-decoded), raw (comment, style sheet: no entities)


@dataclass(slots=True)
class HtmlDocument:
    source: str
    part: str
    _groups: list[list[_Slot]] = field(default_factory=list)
    removed: list[tuple[int, int]] = field(default_factory=list)  # scripts: cut from any rebuilt source

    @property
    def segments(self) -> list[Segment]:
        return [Segment(self.part, tuple(s.text for s in g)) for g in self._groups]

    def rebuild_text(self, pieces: Sequence[tuple[str, ...]]) -> str:
        edits: list[tuple[int, int, str]] = []
        for group, new in zip(self._groups, pieces, strict=True):
            for slot, text in zip(group, new, strict=True):
                if text == slot.text:
                    continue
                if slot.kind == "raw":
                    raw = text.replace("-->", "").replace("</", "< /")
                elif slot.quote is None:
                    raw = html.escape(text, quote=False)
                else:
                    if slot.kind == "url":
                        text = urllib.parse.quote(text, safe=":/?#[]@!$&'()*+,;=%~")
                    raw = html.escape(text, quote=True)
                    if not slot.quote:  # an unquoted value must become quoted once it may hold spaces
                        raw = f'"{raw}"'
                edits.append((slot.start, slot.end, raw))
        edits.extend((start, end, "") for start, end in self.removed)
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
        if not current:
            return  # most block tags follow another, or a blank that is the group's only text
        if any(s.text.strip() for s in current):
            doc._groups.append(current)
        current = []

    def text(start: int, end: int) -> None:
        if start < end:
            raw = source[start:end]
            current.append(_Slot(start, end, html.unescape(raw) if "&" in raw else raw))  # unescape's own test

    pos = 0
    n = len(source)
    while pos < n:
        m = _TOKEN.search(source, pos)
        if m is None:
            text(pos, n)
            break
        if pos < m.start():
            text(pos, m.start())
        pos = m.end()
        closing, tag, attrs = m.group(1, 2, 3)
        name = tag.lower() if tag else ""
        if not name:
            token = m.group()
            if token.startswith("<!--"):  # a comment: invisible, not a break, but read
                inner_end = m.end() - 3 if token.endswith("-->") else m.end()
                _raw_slot(doc, source, m.start() + 4, inner_end)
            continue  # doctype, processing instruction, CDATA: markup
        if name in _BLOCK:
            flush()
        attrs = attrs or ""
        if "=" in attrs:  # every value is written after one: most tags (</p>, <br>, <td>) have none
            _attributes(doc, attrs, m.start(3))
        if not closing and name in _RAW_TEXT and not attrs.rstrip().endswith("/"):
            close = re.compile(rf"</{name}\s*>", re.I).search(source, pos)
            flush()
            inner_end = close.start() if close else n
            if name in _REMOVED:
                doc.removed.append((m.start(), close.end() if close else n))
            elif name == "textarea":
                text(pos, inner_end)
                flush()
            else:
                _raw_slot(doc, source, pos, inner_end)
            pos = close.end() if close else n
    flush()
    return doc


def _raw_slot(doc: HtmlDocument, source: str, start: int, end: int) -> None:
    if start < end and any(ch.isalpha() for ch in source[start:end]):
        doc._groups.append([_Slot(start, end, source[start:end], None, "raw")])


def _attributes(doc: HtmlDocument, attrs: str, base: int) -> None:
    for a in _ATTR.finditer(attrs):
        attr = a.group(1).lower()
        if attr in _NOT_TEXT or attr.startswith("xmlns"):
            continue
        if a.group(3) is not None:
            vs, ve, q = a.start(3), a.end(3), '"'
        elif a.group(4) is not None:
            vs, ve, q = a.start(4), a.end(4), "'"
        else:
            vs, ve, q = a.start(5), a.end(5), ""
        value = html.unescape(attrs[vs:ve])
        if not _has_letter(value):
            continue
        kind = "attr"
        if attr in _URL_ATTRS:
            if value.lstrip().lower().startswith(("data:image/", "cid:")):
                continue  # an inline picture or a reference to a part: no words
            value, kind = urllib.parse.unquote(value), "url"
        doc._groups.append([_Slot(base + vs, base + ve, value, q, kind)])


_ASCII_LETTER = re.compile("[A-Za-z]")


def _has_letter(value: str) -> bool:
    """``any(ch.isalpha() for ch in value)``; for ASCII (nearly every value) a search in C for the letters it means."""
    if value.isascii():
        return _ASCII_LETTER.search(value) is not None
    return any(ch.isalpha() for ch in value)
