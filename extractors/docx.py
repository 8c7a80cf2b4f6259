"""DOCX: every place a reader (or a curious recipient) can find text.

python-docx opens and saves the package; its XML is walked directly where
python-docx does not reach: body, tables, headers and footers, footnotes and
endnotes, comments and text boxes are all ``w:p`` paragraphs in some part;
picture descriptions are ``wp:docPr`` attributes; the core properties are
python-docx's. A paragraph's runs are the pieces of its segment, so a term
split over runs is found, and the replacement lands in the run where the term
began, keeping that run's formatting.

Tracked changes: deleted text (``w:del``/``w:delText``, ``w:moveFrom``) is
invisible in Word's final view but travels in the file; it is removed, i.e.
the deletion is accepted. Insertions are ordinary visible text.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from extractors.base import Segment
from extractors.limits import Limits, check_zip
from gateway.errors import EncryptedContentError, UnreadableContentError

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"  # SmartArt, charts, shapes
WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_BREAKS = {f"{{{W}}}tab", f"{{{W}}}br", f"{{{W}}}cr", f"{{{W}}}noBreakHyphen"}
_DELETED = (f"{{{W}}}del", f"{{{W}}}moveFrom")
CORE_FIELDS = ("title", "subject", "author", "keywords", "comments", "category", "last_modified_by", "content_status")
DOCX_TYPES = frozenset(
    {
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.ms-word.document.macroenabled.12",
    }
)


@dataclass(slots=True)
class DocxDocument:
    part: str
    _doc: Any
    _slots: list[tuple[str, list[Any]]] = field(default_factory=list)  # (kind, elements) per segment
    _segments: list[Segment] = field(default_factory=list)
    _blob_parts: list[tuple[Any, Any]] = field(default_factory=list)  # (part, parsed root)
    removed_deletions: int = 0

    @property
    def segments(self) -> list[Segment]:
        return self._segments

    def rebuild(self, pieces: Sequence[tuple[str, ...]]) -> bytes:
        for (kind, elements), old, new in zip(self._slots, self._segments, pieces, strict=True):
            if new == old.pieces:
                continue
            if kind == "runs":
                for t, text in zip(elements, new, strict=True):
                    t.text = text
                    if text != text.strip():
                        t.set(XML_SPACE, "preserve")
            elif kind == "attr":
                element, name = elements
                element.set(name, new[0])
            else:  # a core property
                setattr(self._doc.core_properties, kind, new[0])
        from lxml import etree

        for part, root in self._blob_parts:
            part._blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
        out = io.BytesIO()
        self._doc.save(out)
        return out.getvalue()


def _paragraph_segments(root: Any, part: str, doc: DocxDocument) -> None:
    for ns in (W, A):
        p_tag, t_tag = f"{{{ns}}}p", f"{{{ns}}}t"
        for p in root.iter(p_tag):
            run: list[Any] = []
            for el in p.iter(t_tag, *_BREAKS):
                # Only this paragraph's own text: a text box's paragraphs are their own.
                if next(el.iterancestors(p_tag), None) is not p:
                    continue
                if el.tag == t_tag:
                    run.append(el)
                elif run:
                    _add(doc, part, run)
                    run = []
            _add(doc, part, run)
    for pr in root.iter(f"{{{WP}}}docPr"):
        for name in ("descr", "title"):
            value = pr.get(name)
            if value and value.strip():
                doc._slots.append(("attr", [pr, name]))
                doc._segments.append(Segment(f"{part} (picture {name})", (value,)))


def _add(doc: DocxDocument, part: str, run: list[Any]) -> None:
    texts = tuple(t.text or "" for t in run)
    if any(x.strip() for x in texts):
        doc._slots.append(("runs", list(run)))
        doc._segments.append(Segment(part, texts))


def extract_docx(data: bytes, *, part: str, limits: Limits) -> DocxDocument:
    if data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        # An OLE container where a DOCX should be: a password-protected (encrypted) document.
        raise EncryptedContentError("password-protected (encrypted) Word document", part=part)
    check_zip(data, limits, part=part).close()
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError

        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, AttributeError, TypeError) as exc:
        raise UnreadableContentError(f"not a readable DOCX package ({type(exc).__name__}: {exc})", part=part) from exc
    except Exception as exc:  # lxml and zipfile raise many kinds on broken packages
        raise UnreadableContentError(f"not a readable DOCX package ({type(exc).__name__}: {exc})", part=part) from exc
    doc = DocxDocument(part, document)
    try:
        from lxml import etree

        for p in document.part.package.iter_parts():
            name = str(p.partname)
            if not name.startswith("/word/") or not name.endswith(".xml"):
                continue
            element = getattr(p, "_element", None)
            if element is None:  # footnotes, endnotes, charts, SmartArt: python-docx keeps bytes
                element = etree.fromstring(p.blob, parser=etree.XMLParser(resolve_entities=False, huge_tree=False))
                doc._blob_parts.append((p, element))
            for tag in _DELETED:
                for d in list(element.iter(tag)):
                    d.getparent().remove(d)
                    doc.removed_deletions += 1
            _paragraph_segments(element, f"{part}:{name.lstrip('/')}", doc)
        core = document.core_properties
        for name in CORE_FIELDS:
            value = getattr(core, name, None)
            if isinstance(value, str) and value.strip():
                doc._slots.append((name, []))
                doc._segments.append(Segment(f"{part}:docProps/core.xml ({name})", (value,)))
    except Exception as exc:
        raise UnreadableContentError(f"DOCX structure not understood ({type(exc).__name__}: {exc})", part=part) from exc
    return doc
