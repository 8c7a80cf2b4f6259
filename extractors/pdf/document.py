"""A whole PDF read for sanitizing: every place text can be, as segments, and the file written anew.

What is read: the text of every page's content stream, of every form
XObject it uses and of every annotation's appearance (content.py); strings
in marked-content property lists (ActualText, Alt); every text string
object in the document (document information, bookmarks, annotations and
their link URLs, form field values, tagged-structure alt text, page labels,
named destinations); XMP metadata packets, text node by text node.

What is removed, because it is not read: JavaScript and other actions that
run or fetch something, embedded and associated files, XFA forms, page
thumbnails (pictures of the original page), application private data
(PieceInfo), text shown in a font that cannot be read. The output is
written fresh by qpdf: only objects reachable from the new trailer, no
earlier revision, no unreferenced object.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import pikepdf
from pikepdf import Name

from extractors.pdf.content import Editor, StreamText, scan
from extractors.pdf.fonts import Font, load_font, standard_resource
from gateway.errors import ContentError, EncryptedContentError, LimitExceededError, UnreadableContentError

RISKY_ACTIONS = frozenset(
    {"/JavaScript", "/Launch", "/ImportData", "/SubmitForm", "/Rendition", "/GoToE", "/RichMediaExecute"}
)
FILE_ANNOTATIONS = frozenset({"/FileAttachment", "/Sound", "/Movie", "/RichMedia", "/3D", "/Screen"})
# Keys whose values hold no text (numbers, names, binary data) or are read elsewhere: not walked.
NOT_TEXT = frozenset(
    {"/Widths", "/W", "/W2", "/FontFile", "/FontFile2", "/FontFile3", "/CharProcs", "/Differences", "/ColorSpace",
     "/Filter", "/DecodeParms", "/BBox", "/Matrix", "/Rect", "/MediaBox", "/CropBox", "/BleedBox", "/TrimBox",
     "/ArtBox", "/Encrypt", "/ID", "/CIDSet", "/ToUnicode", "/Function", "/Functions", "/Shading", "/Length",
     "/ByteRange", "/Metadata"}
)  # fmt: skip


def _is_text(s: str) -> bool:
    return not any(ord(c) < 32 and c not in "\t\n\r" for c in s)


@dataclass(slots=True)
class _Stream:
    label: str
    kind: Literal["page", "form"]
    target: pikepdf.Object  # the page dictionary, or the form XObject stream
    resources: pikepdf.Dictionary
    text: StreamText


@dataclass(slots=True)
class _Slot:
    label: str
    container: pikepdf.Object
    key: str | int
    text: str


@dataclass(slots=True)
class _Xmp:
    label: str
    holder: pikepdf.Dictionary
    root: object  # lxml element
    nodes: list[tuple[object, str, str | None]]  # (element, "text"|"tail"|"attr", attribute name)


class PdfFile:
    """The document taken apart. Reading is deterministic, so a second reading finds the same pieces."""

    def __init__(self, data: bytes, *, part: str, max_pages: int) -> None:
        self.part = part
        try:
            self.pdf = pikepdf.open(io.BytesIO(data))
        except pikepdf.PasswordError as exc:
            raise EncryptedContentError("encrypted PDF: a password is needed", part=part) from exc
        except pikepdf.PdfError as exc:
            raise UnreadableContentError(f"not a readable PDF ({str(exc)[:200]})", part=part) from exc
        if self.pdf.is_encrypted:
            raise EncryptedContentError("encrypted PDF (readable without a password, but held as encrypted)", part=part)
        self.pages = len(self.pdf.pages)
        if self.pages > max_pages:
            raise LimitExceededError(f"more than {max_pages} pages", part=part)
        self.notes: list[tuple[str, str]] = []  # (action, reason)
        self.fonts: dict[object, Font | None] = {}
        self.streams: list[_Stream] = []
        self.marked: list[tuple[_Stream, int, Name, str]] = []
        self.slots: list[_Slot] = []
        self.xmps: list[_Xmp] = []
        self._seen: set[tuple[int, int]] = set()
        self._leftovers(data)
        self._remove_unread()
        self._read_content()
        self._read_strings()

    # -- what is not read is removed ----------------------------------------------------

    def _note(self, action: str, reason: str) -> None:
        if (action, reason) not in self.notes:
            self.notes.append((action, reason))

    def _leftovers(self, data: bytes) -> None:
        """Earlier revisions and objects nothing refers to are not read: the rewritten file leaves them out."""
        revisions = data.count(b"%%EOF")
        if revisions > (2 if self.pdf.is_linearized else 1):
            self._note("removed", "earlier revisions of the file (incremental updates, not read)")
        seen: set[tuple[int, int]] = set()
        stack: list[object] = [self.pdf.trailer]
        while stack:
            obj = stack.pop()
            items: list[object]
            if isinstance(obj, pikepdf.Array):
                items = list(obj)
            elif isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream)):
                items = [obj.get(k) for k in obj.keys()]  # noqa: SIM118
            else:
                continue
            for item in items:
                if isinstance(item, pikepdf.Object) and item.is_indirect:
                    if item.objgen in seen:
                        continue
                    seen.add(item.objgen)
                stack.append(item)
        for obj in self.pdf.objects:
            if (
                not isinstance(obj, pikepdf.Object)
                or obj.objgen in seen
                or not isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream, pikepdf.Array, pikepdf.String))
            ):
                continue
            if isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream)) and obj.get("/Type") in (Name.ObjStm, Name.XRef):
                continue
            self._note("removed", "objects nothing in the document refers to (not read)")
            break

    def _remove_unread(self) -> None:
        root = self.pdf.Root
        names = root.get("/Names")
        if isinstance(names, pikepdf.Dictionary):
            if "/JavaScript" in names:
                del names["/JavaScript"]
                self._note("removed", "document JavaScript")
            if "/EmbeddedFiles" in names:
                del names["/EmbeddedFiles"]
                self._note("removed", "embedded files (not inspected)")
        for key, what in (("/Collection", "portfolio"), ("/AF", "associated files (not inspected)")):
            if key in root:
                del root[key]
                self._note("removed", what)
        form = root.get("/AcroForm")
        if isinstance(form, pikepdf.Dictionary) and "/XFA" in form:
            del form["/XFA"]
            self._note("removed", "XFA form (not inspected)")
        for page in self.pdf.pages:
            obj = page.obj
            if "/Thumb" in obj:
                del obj["/Thumb"]
                self._note("removed", "page thumbnails (pictures of the original pages)")
            annots = obj.get("/Annots")
            if isinstance(annots, pikepdf.Array):
                keep = [
                    a
                    for a in annots
                    if not (isinstance(a, pikepdf.Dictionary) and a.get("/Subtype") in FILE_ANNOTATIONS)
                ]
                if len(keep) != len(annots):
                    obj["/Annots"] = pikepdf.Array(keep)
                    self._note("removed", "file, sound and media annotations (not inspected)")

    def _clean_dict(self, obj: pikepdf.Dictionary) -> None:
        """Actions that run or fetch something, file contents and private data, wherever they are."""
        for key in ("/AA", "/PieceInfo", "/AF", "/EF", "/RF", "/JS"):
            if key in obj:
                del obj[key]
                what = {"/AA": "automatic actions", "/PieceInfo": "application private data",
                        "/JS": "JavaScript"}.get(key, "embedded files (not inspected)")  # fmt: skip
                self._note("removed", what)
        for key in ("/A", "/OpenAction", "/Next"):
            action = obj.get(key)
            if isinstance(action, pikepdf.Dictionary) and str(action.get("/S")) in RISKY_ACTIONS:
                del obj[key]
                self._note("removed", f"{str(action.get('/S'))[1:]} actions")
        rc = obj.get("/RC")
        if isinstance(rc, pikepdf.Stream):
            del obj["/RC"]
            self._note("removed", "rich-text annotation contents in a stream (the plain contents are kept)")

    # -- content streams ----------------------------------------------------------------------

    def _font(self, resources: pikepdf.Dictionary, name: Name) -> Font | None:
        fonts = resources.get("/Font")
        obj = fonts.get(name) if isinstance(fonts, pikepdf.Dictionary) else None
        if not isinstance(obj, pikepdf.Dictionary):
            return None
        key: object = obj.objgen if obj.is_indirect else ("direct", id(resources), str(name))
        if key not in self.fonts:
            try:
                self.fonts[key] = load_font(obj)
            except (pikepdf.PdfError, ValueError, TypeError, KeyError, IndexError):
                self.fonts[key] = None
        return self.fonts[key]

    def _scan(self, source: pikepdf.Object, resources: pikepdf.Dictionary) -> StreamText:
        try:
            ops = list(pikepdf.parse_content_stream(source))
        except (pikepdf.PdfError, TypeError) as exc:
            raise UnreadableContentError(
                f"a page's content cannot be parsed ({str(exc)[:200]})", part=self.part
            ) from exc
        st = scan(ops, lambda name: self._font(resources, name))
        if st.unread:
            self._note("removed", "text in a font that cannot be read")
        return st

    def _read_content(self) -> None:
        for n, page in enumerate(self.pdf.pages):
            resources = _inherited(page.obj, "/Resources")
            if not isinstance(resources, pikepdf.Dictionary):
                resources = pikepdf.Dictionary()
                page.obj["/Resources"] = resources
            label = f"{self.part} (page {n + 1})"
            self.streams.append(_Stream(label, "page", page.obj, resources, self._scan(page.obj, resources)))
            self._forms(resources, label)
            annots = page.obj.get("/Annots")
            for annot in annots if isinstance(annots, pikepdf.Array) else []:
                ap = annot.get("/AP") if isinstance(annot, pikepdf.Dictionary) else None
                if not isinstance(ap, pikepdf.Dictionary):
                    continue
                for key in ("/N", "/R", "/D"):
                    for stream in _appearances(ap.get(key)):
                        self._form(stream, resources, f"{label} annotation")

    def _forms(self, resources: pikepdf.Dictionary, label: str) -> None:
        xobjects = resources.get("/XObject")
        if not isinstance(xobjects, pikepdf.Dictionary):
            return
        for key in list(xobjects.keys()):
            xobj = xobjects.get(key)
            if isinstance(xobj, pikepdf.Stream) and xobj.get("/Subtype") == Name.Form:
                self._form(xobj, resources, f"{label} form {key[1:]}")

    def _form(self, stream: pikepdf.Stream, parent: pikepdf.Dictionary, label: str) -> None:
        if stream.is_indirect:
            if stream.objgen in self._seen:
                return
            self._seen.add(stream.objgen)
        res = stream.get("/Resources")
        resources = res if isinstance(res, pikepdf.Dictionary) else parent
        self.streams.append(_Stream(label, "form", stream, resources, self._scan(stream, resources)))
        self._forms(resources, label)

    # -- strings and XMP -------------------------------------------------------------------------

    def _read_strings(self) -> None:
        for st in self.streams:
            for op, key in st.text.marked:
                ins = st.text.ops[op]
                assert isinstance(ins, pikepdf.ContentStreamInstruction)
                self.marked.append((st, op, key, str(ins.operands[1][key])))
        visited: set[tuple[int, int]] = set()
        trailer = self.pdf.trailer
        for top in ("/Info", "/Root"):
            if top in trailer:
                self._walk(trailer, top, "document information" if top == "/Info" else "document", visited)

    def _walk(self, container: pikepdf.Object, key: str | int, context: str, visited: set[tuple[int, int]]) -> None:
        stack: list[tuple[pikepdf.Object, str | int, str]] = [(container, key, context)]
        while stack:
            holder, k, ctx = stack.pop()
            obj = holder[k]
            if isinstance(obj, pikepdf.String):
                text = str(obj)
                if _is_text(text):
                    self.slots.append(_Slot(f"{self.part} ({ctx})", holder, k, text))
                continue
            if not isinstance(obj, (pikepdf.Dictionary, pikepdf.Array, pikepdf.Stream)):
                continue
            if obj.is_indirect:
                if obj.objgen in visited:
                    continue
                visited.add(obj.objgen)
            if isinstance(obj, pikepdf.Array):
                for idx in range(len(obj) - 1, -1, -1):
                    stack.append((obj, idx, ctx))
                continue
            if isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream)):
                self._clean_dict(obj)  # type: ignore[arg-type]  # a stream's dictionary, alike
                meta = obj.get("/Metadata")
                if isinstance(meta, pikepdf.Stream):
                    self._xmp(obj, f"{self.part} (XMP metadata)")  # type: ignore[arg-type]
                for sub in reversed(list(obj.keys())):
                    if sub in NOT_TEXT:
                        continue
                    stack.append((obj, sub, _context(ctx, sub)))

    def _xmp(self, holder: pikepdf.Dictionary, label: str) -> None:
        from lxml import etree

        stream = holder["/Metadata"]
        try:
            # The packet wrapper is rewritten anyway, and editors leave broken byte-order marks in it; a packet
            # with undeclared prefixes is read as lxml repairs it (what it drops does not leave).
            parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=True)
            root = etree.fromstring(re.sub(rb"<\?xpacket[^>]*\?>", b"", stream.read_bytes()).strip(), parser)
        except (etree.XMLSyntaxError, pikepdf.PdfError, ValueError):
            root = None
        if root is None:  # not even a repaired tree: what cannot be read does not leave
            del holder["/Metadata"]
            self._note("removed", "XMP metadata that cannot be read")
            return
        nodes: list[tuple[object, str, str | None]] = []
        for el in root.iter():
            if not isinstance(el.tag, str):
                continue
            if el.text and el.text.strip():
                nodes.append((el, "text", None))
            for attr, value in el.attrib.items():
                if value.strip() and not attr.startswith("{http://www.w3.org/XML/1998/namespace}"):
                    nodes.append((el, "attr", attr))
            if el.tail and el.tail.strip():
                nodes.append((el, "tail", None))
        self.xmps.append(_Xmp(label, holder, root, nodes))

    # -- segments, and writing ---------------------------------------------------------------------

    def segments(self) -> list[tuple[str, tuple[str, ...]]]:
        out = [(st.label, tuple(st.text.pieces)) for st in self.streams]
        out += [(f"{st.label} (marked content)", (text,)) for st, _op, _key, text in self.marked]
        out += [(slot.label, (slot.text,)) for slot in self.slots]
        out += [(xmp.label, (_xmp_get(node),)) for xmp in self.xmps for node in xmp.nodes]
        return out

    def page_chars(self) -> int:
        return sum(len("".join(st.text.pieces).strip()) for st in self.streams)

    def write(self, pieces: Sequence[tuple[str, ...]]) -> bytes:
        it: Iterator[tuple[str, ...]] = iter(pieces)
        stream_pieces = [next(it) for _ in self.streams]
        dirty: set[int] = set()
        for st, op, key, text in self.marked:
            new = "".join(next(it))
            if new != text:
                ins = st.text.ops[op]
                assert isinstance(ins, pikepdf.ContentStreamInstruction)
                props = pikepdf.Dictionary({k: ins.operands[1][k] for k in ins.operands[1].keys()})  # noqa: SIM118
                props[key] = pikepdf.String(new)
                st.text.ops[op] = pikepdf.ContentStreamInstruction([ins.operands[0], props], ins.operator)
                dirty.add(id(st))
        for st, pieces_of in zip(self.streams, stream_pieces, strict=True):
            if len(pieces_of) != len(st.text.pieces):
                raise ContentError("the PDF's text changed between two readings", part=self.part)
            if tuple(pieces_of) == tuple(st.text.pieces) and not st.text.unread and id(st) not in dirty:
                continue
            editor = Editor(st.text, functools.partial(_add_font, st.resources))
            data = pikepdf.unparse_content_stream(editor.apply(list(pieces_of)))
            if st.kind == "page":
                st.target["/Contents"] = self.pdf.make_stream(data)
            else:
                st.target.write(data)
        for slot in self.slots:
            new = "".join(next(it))
            if new != slot.text:
                slot.container[slot.key] = pikepdf.String(new)
        for xmp in self.xmps:
            for node in xmp.nodes:
                _xmp_set(node, "".join(next(it)))
            from lxml import etree

            body = etree.tostring(xmp.root, encoding="utf-8")
            packet = (
                b'<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>\n' + body + b'\n<?xpacket end="w"?>'
            )
            xmp.holder["/Metadata"] = self.pdf.make_stream(packet, Type=Name.Metadata, Subtype=Name.XML)
        out = io.BytesIO()
        self.pdf.save(out, compress_streams=True, object_stream_mode=pikepdf.ObjectStreamMode.generate,
                      fix_metadata_version=False, linearize=False)  # fmt: skip
        return out.getvalue()


def _xmp_get(node: tuple[object, str, str | None]) -> str:
    el, where, attr = node
    if where == "attr":
        return str(el.get(attr))  # type: ignore[attr-defined]
    return str(getattr(el, where))


def _xmp_set(node: tuple[object, str, str | None], value: str) -> None:
    el, where, attr = node
    if where == "attr":
        el.set(attr, value)  # type: ignore[attr-defined]
    else:
        setattr(el, where, value)


def _context(ctx: str, key: str) -> str:
    return {
        "/Outlines": "bookmarks",
        "/Annots": "annotation",
        "/AcroForm": "form field",
        "/StructTreeRoot": "tagged structure",
        "/PageLabels": "page labels",
        "/Names": "names",
        "/Dests": "names",
    }.get(key, ctx)


def _inherited(obj: pikepdf.Dictionary, key: str) -> object:
    node: object = obj
    for _ in range(64):
        if not isinstance(node, pikepdf.Dictionary):
            return None
        if key in node:
            return node[key]
        node = node.get("/Parent")
    return None


def _appearances(obj: object) -> list[pikepdf.Stream]:
    if isinstance(obj, pikepdf.Stream):
        return [obj]
    if isinstance(obj, pikepdf.Dictionary):
        return [v for k in obj.keys() if isinstance(v := obj.get(k), pikepdf.Stream)]  # noqa: SIM118
    return []


def _add_font(resources: pikepdf.Dictionary, base: str) -> Name:
    fonts = resources.get("/Font")
    if not isinstance(fonts, pikepdf.Dictionary):
        fonts = pikepdf.Dictionary()
        resources["/Font"] = fonts
    for key in fonts.keys():  # noqa: SIM118
        f = fonts.get(key)
        if isinstance(f, pikepdf.Dictionary) and str(f.get("/BaseFont")) == "/" + base and key.startswith("/SgStd"):
            return Name(key)
    n = 1
    while f"/SgStd{n}" in fonts:
        n += 1
    fonts[f"/SgStd{n}"] = standard_resource(base)
    return Name(f"/SgStd{n}")
