"""DOCX: every place a reader (or a curious recipient) can find text.

The package is read with zipfile and lxml, part by part: body, tables,
headers and footers, footnotes and endnotes, comments and text boxes are all
``w:p`` paragraphs in some part; SmartArt and charts are DrawingML ``a:p``;
picture descriptions are ``wp:docPr`` attributes; the core properties are
``docProps/core.xml``. Parts that only hold formatting (styles, settings,
fonts, numbering, the theme) are not parsed. A paragraph's runs are the
pieces of its segment, so a term split over runs is found, and the
replacement lands in the run where the term began, keeping its formatting.

Beyond the words: every other place that can carry text is read too, so that
nothing leaves unread: the extended and custom properties (Company, Manager,
custom fields), every core property, comment and revision authors and
initials, bookmark names, content-control aliases and tags, field codes
(``MERGEFIELD``), document variables, picture names, external link targets
and tooltips, and customXml data parts. An embedded Word package is read
recursively and rebuilt in place; any other embedded object (an OLE binary,
a workbook) is refused as unreadable, so the message is held or the
attachment stripped, as the policy says.

On rebuild only the parts that changed are serialized and compressed again;
every other member is copied with its original compressed bytes.

Tracked changes: deleted text (``w:del``/``w:delText``, ``w:moveFrom``) is
invisible in Word's final view but travels in the file; it is removed, i.e.
the deletion is accepted, and a package that had any is always rebuilt.
Insertions are ordinary visible text.
"""

from __future__ import annotations

import io
import posixpath
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
    {f"{{{ns}}}{tag}" for ns in (W, C) for tag in ("f", "formatCode")}
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
# Parts that hold formatting, never the document's text: not worth parsing (stylesWithEffects is often
# 400 KB). Any other part under word/, known or not, is read.
_NO_TEXT = tuple(
    f".{kind}+xml"
    for kind in ("styles", "stylesWithEffects", "settings", "webSettings", "fontTable", "numbering", "theme")
)
# Attributes that hold words on any element of a Word part (local names); ``name`` only where it is one.
_TEXT_ATTRS = frozenset({"author", "initials", "tooltip", "descr", "title"})
_NAMED_ELEMENTS = frozenset({"bookmarkStart", "docPr", "cNvPr"})
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
# Elements whose w:val is a name a person typed: content-control alias and tag, document variables.
_VAL_ELEMENTS = frozenset({"alias", "tag", "docVar"})
_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
# Members read as data: every element's text and every attribute value with letters.
_DATA_PARTS = ("docprops/", "customxml/")  # compared lower-case
_DATA_SKIP_ATTRS = frozenset({"fmtid", "pid", "itemID", "uri", "schemaRef", "type", "lang"})
_EMBEDDED_DOCX = (".docx", ".docm", ".dotx")
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
    _embedded: dict[str, DocxDocument] = field(default_factory=dict)
    _drop: set[str] = field(default_factory=set)  # embedded objects that cannot be read: removed

    @property
    def segments(self) -> list[Segment]:
        return self._segments

    @property
    def addresses(self) -> tuple[str, ...]:
        return ()

    @property
    def notes(self) -> list[Note]:
        notes = [n for inner in self._embedded.values() for n in inner.notes]
        notes += [Note(f"{self.part}:{m}", "embedded object removed", "not inspectable") for m in sorted(self._drop)]
        if not self.removed_deletions:
            return notes
        # Deleted text is invisible in Word but travels in the file: it leaves only as a rebuilt file.
        return [Note(self.part, "tracked deletions removed", f"{self.removed_deletions} deletion(s) accepted"), *notes]

    def rebuild(self, pieces: Sequence[tuple[str, ...]]) -> bytes:
        dirty = set(self._dirty)
        inner_pieces: dict[str, list[tuple[str, ...]]] = {m: [] for m in self._embedded}
        binary: dict[str, bytes] = {}
        for (kind, member, elements), old, new in zip(self._slots, self._segments, pieces, strict=True):
            if kind == "embedded":
                inner_pieces[member].append(new)
                continue
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
        for member, inner in self._embedded.items():
            new_inner = inner_pieces[member]
            if inner.notes or any(n != s.pieces for n, s in zip(new_inner, inner.segments, strict=True)):
                binary[member] = inner.rebuild(new_inner)
        if self._drop:
            dirty |= self._unlink_dropped()
        if not dirty and not binary and not self._drop:
            return self._data
        from lxml import etree

        replaced = {m: etree.tostring(self._roots[m], xml_declaration=True, encoding="UTF-8", standalone=True)
                    for m in dirty}  # fmt: skip
        infos = [i for i in self._infos if i.filename not in self._drop]
        return _write_zip(self._data, infos, {**replaced, **binary})

    def _unlink_dropped(self) -> set[str]:
        """Remove the relationships to dropped members, and the elements that use them; the parts changed."""
        changed: set[str] = set()
        for rels_name, root in list(self._roots.items()):
            if not rels_name.endswith(".rels"):
                continue
            folder = posixpath.dirname(posixpath.dirname(rels_name))
            owner = posixpath.join(folder, posixpath.basename(rels_name)[: -len(".rels")])
            gone: set[str] = set()
            for rel in list(root.iter(f"{{{_REL}}}Relationship")):
                target = posixpath.normpath(posixpath.join(folder, rel.get("Target") or ""))
                if rel.get("TargetMode") != "External" and target.lstrip("/") in self._drop:
                    gone.add(rel.get("Id") or "")
                    rel.getparent().remove(rel)
            if not gone:
                continue
            changed.add(rels_name)
            owner_root = self._roots.get(owner)
            if owner_root is None:
                continue
            for el in list(owner_root.iter()):
                if isinstance(el.tag, str) and el.get(f"{{{R}}}id") in gone and el.getparent() is not None:
                    el.getparent().remove(el)
                    changed.add(owner)
        return changed


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
    for ns in (W, W_STRICT):  # field codes ("MERGEFIELD Diagnosis"): each its own segment
        for instr in root.iter(f"{{{ns}}}instrText"):
            _add(doc, f"{part} (field code)", member, [instr])
    for v in root.iter(f"{{{C}}}v"):  # a chart's series and category names (numbers are left alone)
        cache = v.getparent().getparent() if v.getparent() is not None else None
        if cache is not None and cache.tag == f"{{{C}}}strCache":
            _add(doc, f"{part} (chart)", member, [v])
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        local = el.tag.rsplit("}", 1)[-1]
        for attr, value in el.attrib.items():
            attr_local = attr.rsplit("}", 1)[-1]
            named = (
                attr_local in _TEXT_ATTRS
                or (attr_local == "val" and local in _VAL_ELEMENTS)
                or (attr_local == "name" and local in _NAMED_ELEMENTS)
            )
            if named and any(ch.isalpha() for ch in value):
                doc._slots.append(("attr", member, (el, attr)))
                doc._segments.append(Segment(f"{part} ({local} {attr_local})", (value,)))


def _data_segments(root: Any, part: str, member: str, doc: DocxDocument) -> None:
    """A data part (properties, customXml): every element's text and attribute value with letters."""
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        local = el.tag.rsplit("}", 1)[-1]
        if el.text and any(ch.isalpha() for ch in el.text):
            doc._slots.append(("core", member, el))
            doc._segments.append(Segment(f"{part} ({local})", (el.text,)))
        for attr, value in el.attrib.items():
            attr_local = attr.rsplit("}", 1)[-1]
            if attr_local not in _DATA_SKIP_ATTRS and any(ch.isalpha() for ch in value):
                doc._slots.append(("attr", member, (el, attr)))
                doc._segments.append(Segment(f"{part} ({local} {attr_local})", (value,)))


def _relationship_segments(root: Any, part: str, member: str, doc: DocxDocument) -> None:
    """External targets of relationships (hyperlinks, linked pictures): a URL a recipient can read."""
    for rel in root.iter(f"{{{_REL}}}Relationship"):
        target = rel.get("Target") or ""
        if rel.get("TargetMode") == "External" and any(ch.isalpha() for ch in target):
            doc._slots.append(("attr", member, (rel, "Target")))
            doc._segments.append(Segment(f"{part} (link target)", (target,)))


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
            low = name.lower()
            if low.startswith("word/embeddings/") or low.startswith("word/activex/"):
                _embedded(zf, info, part, limits, doc)
                continue
            if low.endswith(".rels"):
                rels = etree.fromstring(zf.read(name), parser=_parser())
                doc._roots[name] = rels
                _relationship_segments(rels, f"{part}:{name}", name, doc)
                continue
            if low.startswith(_DATA_PARTS) and low.endswith(".xml"):
                data_root = etree.fromstring(zf.read(name), parser=_parser())
                doc._roots[name] = data_root
                _data_segments(data_root, f"{part}:{name}", name, doc)
                continue
            if not name.startswith("word/") or not name.endswith(".xml"):
                continue
            ctype = overrides.get("/" + name, defaults.get("xml", ""))
            if ctype.endswith(".settings+xml"):
                _doc_variables(zf, name, part, doc)
                continue
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
    except (UnreadableContentError, UnsupportedContentError):
        raise
    except Exception as exc:  # zipfile, zlib and lxml raise many kinds on broken packages
        raise UnreadableContentError(f"not a readable DOCX package ({type(exc).__name__}: {exc})", part=part) from exc
    finally:
        zf.close()
    return doc


def _doc_variables(zf: zipfile.ZipFile, name: str, part: str, doc: DocxDocument) -> None:
    """Settings are formatting, but for document variables (``w:docVar``): read only when there are some."""
    raw = zf.read(name)
    if b"docVar" not in raw:
        return
    from lxml import etree

    root = etree.fromstring(raw, parser=_parser())
    doc._roots[name] = root
    for ns in (W, W_STRICT):
        for var in root.iter(f"{{{ns}}}docVar"):
            for attr in (f"{{{ns}}}name", f"{{{ns}}}val"):
                value = var.get(attr) or ""
                if any(ch.isalpha() for ch in value):
                    doc._slots.append(("attr", name, (var, attr)))
                    doc._segments.append(Segment(f"{part}:{name} (document variable)", (value,)))


def _embedded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, part: str, limits: Limits, doc: DocxDocument) -> None:
    """An embedded Word package is read like the document; anything else embedded cannot be read."""
    name = info.filename
    if not name.lower().endswith(_EMBEDDED_DOCX):
        doc._drop.add(name)
        return
    inner = extract_docx(zf.read(info), part=f"{part}:{name}", limits=limits)
    doc._embedded[name] = inner
    for seg in inner.segments:
        doc._slots.append(("embedded", name, None))
        doc._segments.append(seg)


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
