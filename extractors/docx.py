"""DOCX: every place a reader (or a curious recipient) can find text.

The package is read with zipfile and lxml, part by part: body, tables,
headers and footers, footnotes and endnotes, comments and text boxes are all
``w:p`` paragraphs in some part; SmartArt and charts are DrawingML ``a:p``;
picture descriptions are ``wp:docPr`` attributes; the core properties are
``docProps/core.xml``. Parts that only hold formatting (styles, settings,
fonts, numbering, the theme) are not parsed. A paragraph's runs are the
pieces of its segment, so a term split over runs is found, and the
replacement lands in the run where the term began, keeping its formatting.

On rebuild only the parts that changed are serialized and compressed again;
every other member is copied with its original compressed bytes.

Tracked changes: deleted text (``w:del``/``w:delText``, ``w:moveFrom``) is
invisible in Word's final view but travels in the file; it is removed, i.e.
the deletion is accepted, and a package that had any is always rebuilt.
Insertions are ordinary visible text.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from extractors.base import Note, Segment
from extractors.limits import Limits, check_zip
from gateway.errors import EncryptedContentError, UnreadableContentError, UnsupportedContentError

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"  # SmartArt, charts, shapes
WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
M = "http://schemas.openxmlformats.org/officeDocument/2006/math"  # equations: their m:t runs are text
WP_STRICT = "http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing"
# Text-bearing elements that are not a document's words: field codes, formulas, number formats.
_NOT_WORDS = frozenset(
    {f"{{{ns}}}{tag}" for ns in (W, C) for tag in ("instrText", "f", "formatCode")}
    | {f"{{{ns}}}{tag}" for ns in (WP, WP_STRICT) for tag in ("align", "posOffset")}  # a drawing's placement
)
# ISO/IEC 29500 Strict names the same elements in other namespaces.
W_STRICT = "http://purl.oclc.org/ooxml/wordprocessingml/main"
A_STRICT = "http://purl.oclc.org/ooxml/drawingml/main"
_TEXT_NAMESPACES = (W, A, W_STRICT, A_STRICT)
_BREAKS = {f"{{{ns}}}{tag}" for ns in (W, W_STRICT) for tag in ("tab", "br", "cr", "noBreakHyphen")}
_DELETED = tuple(f"{{{ns}}}{tag}" for ns in (W, W_STRICT) for tag in ("del", "moveFrom"))
CP = "http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
DC = "http://purl.org/dc/elements/1.1/"
CT = "http://schemas.openxmlformats.org/package/2006/content-types"
# python-docx's names for the core properties, and where each lives in docProps/core.xml.
CORE_FIELDS = {
    "title": f"{{{DC}}}title",
    "subject": f"{{{DC}}}subject",
    "author": f"{{{DC}}}creator",
    "keywords": f"{{{CP}}}keywords",
    "comments": f"{{{DC}}}description",
    "category": f"{{{CP}}}category",
    "last_modified_by": f"{{{CP}}}lastModifiedBy",
    "content_status": f"{{{CP}}}contentStatus",
}
CORE_PART = "docProps/core.xml"
# Parts that hold formatting, never the document's text: not worth parsing (stylesWithEffects is often
# 400 KB). Any other part under word/, known or not, is read.
_NO_TEXT = tuple(
    f".{kind}+xml"
    for kind in ("styles", "stylesWithEffects", "settings", "webSettings", "fontTable", "numbering", "theme")
)
DOCX_TYPES = frozenset(
    {
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.ms-word.document.macroenabled.12",
    }
)


@dataclass(slots=True)
class DocxDocument:
    part: str
    _data: bytes  # the package as it came
    _infos: list[zipfile.ZipInfo] = field(default_factory=list)
    _roots: dict[str, Any] = field(default_factory=dict)  # member -> parsed XML, for the parts read
    _slots: list[tuple[str, str, Any]] = field(default_factory=list)  # (kind, member, elements) per segment
    _segments: list[Segment] = field(default_factory=list)
    _dirty: set[str] = field(default_factory=set)  # members to write anew
    removed_deletions: int = 0

    @property
    def segments(self) -> list[Segment]:
        return self._segments

    @property
    def notes(self) -> list[Note]:
        if not self.removed_deletions:
            return []
        # Deleted text is invisible in Word but travels in the file: it leaves only as a rebuilt file.
        return [Note(self.part, "tracked deletions removed", f"{self.removed_deletions} deletion(s) accepted")]

    def rebuild(self, pieces: Sequence[tuple[str, ...]]) -> bytes:
        dirty = set(self._dirty)
        for (kind, member, elements), old, new in zip(self._slots, self._segments, pieces, strict=True):
            if new == old.pieces:
                continue
            dirty.add(member)
            if kind == "runs":
                for t, text in zip(elements, new, strict=True):
                    t.text = text
                    if text != text.strip():
                        t.set(XML_SPACE, "preserve")
            elif kind == "attr":
                element, name = elements
                element.set(name, new[0])
            else:  # a core property: the element's text
                elements.text = new[0]
        if not dirty:
            return self._data
        from lxml import etree

        replaced = {m: etree.tostring(self._roots[m], xml_declaration=True, encoding="UTF-8", standalone=True)
                    for m in dirty}  # fmt: skip
        return _write_zip(self._data, self._infos, replaced)


def _write_zip(original: bytes, infos: Sequence[zipfile.ZipInfo], replaced: dict[str, bytes]) -> bytes:
    """The package again: replaced members deflated anew, every other one copied as it was compressed."""
    out = io.BytesIO()
    central: list[bytes] = []
    for info in infos:
        name = info.filename.encode("utf-8")
        flags = (info.flag_bits & 0x0800) | (0x0800 if not info.filename.isascii() else 0)  # keep UTF-8 names
        if info.filename in replaced:
            data = replaced[info.filename]
            packer = zlib.compressobj(6, zlib.DEFLATED, -15)
            body = packer.compress(data) + packer.flush()
            method, crc, size = zipfile.ZIP_DEFLATED, zlib.crc32(data), len(data)
        else:
            at = info.header_offset
            name_len, extra_len = struct.unpack("<HH", original[at + 26 : at + 30])  # the local header's
            start = at + 30 + name_len + extra_len
            body = original[start : start + info.compress_size]
            method, crc, size = info.compress_type, info.CRC, info.file_size
        y, mo, d, h, mi, sec = info.date_time
        dos_time, dos_date = (h << 11) | (mi << 5) | (sec // 2), ((y - 1980) << 9) | (mo << 5) | d
        offset = out.tell()
        fields = (20, flags, method, dos_time, dos_date, crc, len(body), size, len(name))
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields, 0) + name + body)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0, 0,
                                   info.external_attr, offset) + name)  # fmt: skip
    directory = out.tell()
    for entry in central:
        out.write(entry)
    size = out.tell() - directory
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), size, directory, 0))
    return out.getvalue()


def _paragraph_segments(root: Any, part: str, member: str, doc: DocxDocument) -> None:
    for ns in _TEXT_NAMESPACES:
        p_tag, t_tag = f"{{{ns}}}p", f"{{{ns}}}t"
        for p in root.iter(p_tag):
            run: list[Any] = []
            for el in p.iter(t_tag, f"{{{M}}}t", *_BREAKS):
                # Only this paragraph's own text: a text box's paragraphs are their own.
                if next(el.iterancestors(p_tag), None) is not p:
                    continue
                if el.tag in (t_tag, f"{{{M}}}t"):
                    run.append(el)
                elif run:
                    _add(doc, part, member, run)
                    run = []
            _add(doc, part, member, run)
    for v in root.iter(f"{{{C}}}v"):  # a chart's series and category names (numbers are left alone)
        cache = v.getparent().getparent() if v.getparent() is not None else None
        if cache is not None and cache.tag == f"{{{C}}}strCache":
            _add(doc, f"{part} (chart)", member, [v])
    for pr in root.iter(f"{{{WP}}}docPr", f"{{{WP_STRICT}}}docPr"):
        for name in ("descr", "title"):
            value = pr.get(name)
            if value and value.strip():
                doc._slots.append(("attr", member, (pr, name)))
                doc._segments.append(Segment(f"{part} (picture {name})", (value,)))


def _add(doc: DocxDocument, part: str, member: str, run: list[Any]) -> None:
    texts = tuple(t.text or "" for t in run)
    if any(x.strip() for x in texts):
        doc._slots.append(("runs", member, list(run)))
        doc._segments.append(Segment(part, texts))


def _content_types(zf: zipfile.ZipFile) -> tuple[dict[str, str], dict[str, str]]:
    """(/part/name -> type, extension -> type) from [Content_Types].xml."""
    from lxml import etree

    root = etree.fromstring(zf.read("[Content_Types].xml"), parser=_parser())
    overrides = {e.get("PartName", ""): e.get("ContentType", "") for e in root.iter(f"{{{CT}}}Override")}
    defaults = {e.get("Extension", "").lower(): e.get("ContentType", "") for e in root.iter(f"{{{CT}}}Default")}
    return overrides, defaults


def extract_docx(data: bytes, *, part: str, limits: Limits) -> DocxDocument:
    if data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        # An OLE container where a DOCX should be: a password-protected (encrypted) document.
        raise EncryptedContentError("password-protected (encrypted) Word document", part=part)
    zf = check_zip(data, limits, part=part)
    doc = DocxDocument(part, data, zf.infolist())
    try:
        from lxml import etree

        overrides, defaults = _content_types(zf)
        if "word/document.xml" not in zf.namelist() and not any(
            t.endswith("wordprocessingml.document.main+xml") for t in overrides.values()
        ):
            raise UnreadableContentError("not a Word document (no main document part)", part=part)
        for info in doc._infos:
            name = info.filename
            if not name.startswith("word/") or not name.endswith(".xml"):
                continue
            ctype = overrides.get("/" + name, defaults.get("xml", ""))
            if ctype.endswith(_NO_TEXT):
                continue
            root = etree.fromstring(zf.read(name), parser=_parser())
            doc._roots[name] = root
            for tag in _DELETED:
                for d in list(root.iter(tag)):
                    d.getparent().remove(d)
                    doc.removed_deletions += 1
                    doc._dirty.add(name)
            before = len(doc._slots)
            _paragraph_segments(root, f"{part}:{name}", name, doc)
            _check_all_read(root, doc._slots[before:], name, part)
        if CORE_PART in zf.namelist():
            core = etree.fromstring(zf.read(CORE_PART), parser=_parser())
            doc._roots[CORE_PART] = core
            for field_name, tag in CORE_FIELDS.items():
                element = core.find(tag)
                if element is not None and element.text and element.text.strip():
                    doc._slots.append(("core", CORE_PART, element))
                    doc._segments.append(Segment(f"{part}:{CORE_PART} ({field_name})", (element.text,)))
    except (UnreadableContentError, UnsupportedContentError):
        raise
    except Exception as exc:  # zipfile, zlib and lxml raise many kinds on broken packages
        raise UnreadableContentError(f"not a readable DOCX package ({type(exc).__name__}: {exc})", part=part) from exc
    finally:
        zf.close()
    return doc


def _check_all_read(root: Any, slots: Sequence[tuple[str, str, Any]], member: str, part: str) -> None:
    """Words in elements this reader does not know cannot be checked: such a document does not pass."""
    read = {id(el) for kind, _m, elements in slots if kind == "runs" for el in elements}
    for el in root.iter():
        if not isinstance(el.tag, str) or el.tag in _NOT_WORDS or id(el) in read:
            continue
        if el.text and any(ch.isalpha() for ch in el.text):
            raise UnsupportedContentError(f"{member} holds text in <{el.tag.split('}')[-1]}>, which sanigate does "
                                          "not read", part=part)  # fmt: skip


def _parser() -> Any:
    from lxml import etree

    # No entities, no network, no huge trees: the package is a stranger's.
    return etree.XMLParser(resolve_entities=False, huge_tree=False, no_network=True)
