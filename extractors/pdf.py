"""PDF: text by page with pdfminer.six; a risky PDF is re-rendered, never forwarded.

A PDF's text cannot be edited in place with any certainty (fonts, glyph
positions, text drawn as paths), so when anything on any page is risky the
forwarded attachment is a *new* PDF with one page per original page, holding
the sanitized text in plain typesetting. Layout, images and fonts are lost;
nothing of the original file survives in it. A PDF with nothing risky passes
unchanged.

pdfminer runs in a child process with a time and memory limit: a hostile PDF
(deep object graphs, decompression bombs) costs at most that, never the
gateway. The one exception is a PDF this process has just rendered itself
(read back to verify it): it is known to be well formed and is read in place.
"""

from __future__ import annotations

import gc
import hashlib
import io
import multiprocessing as mp
import resource
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import cast

from extractors.base import Note, Segment
from extractors.limits import Limits
from gateway.errors import ContentError, EncryptedContentError, LimitExceededError, UnreadableContentError

MIN_TEXT_CHARS = 16  # below this, a PDF with pages is taken to be images of text
FONT_CANDIDATES = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/TTF/DejaVuSans.ttf"),
)


@dataclass(frozen=True, slots=True)
class PdfPage:
    text: str
    width: float
    height: float


@dataclass(slots=True)
class PdfDocument:
    part: str
    original: bytes
    pages: list[PdfPage]

    @property
    def segments(self) -> list[Segment]:
        return [Segment(f"{self.part} (page {i + 1})", (p.text,)) for i, p in enumerate(self.pages)]

    @property
    def notes(self) -> list[Note]:
        return []

    def rebuild(self, pieces: Sequence[tuple[str, ...]]) -> bytes:
        new = ["".join(p) for p in pieces]
        if all(n == p.text for n, p in zip(new, self.pages, strict=True)):
            return self.original
        return render(
            [PdfPage(text, p.width, p.height) for text, p in zip(new, self.pages, strict=True)],
            title="Sanitized document",
        )


class _Ours:
    """Digests of the PDFs this process rendered lately: their read-back needs no sandbox."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self.digests: OrderedDict[bytes, None] = OrderedDict()
        self.lock = threading.Lock()

    def add(self, data: bytes) -> None:
        with self.lock:
            self.digests[hashlib.sha256(data).digest()] = None
            while len(self.digests) > self.size:
                self.digests.popitem(last=False)

    def __contains__(self, data: object) -> bool:
        if not isinstance(data, bytes):
            return False
        with self.lock:
            return hashlib.sha256(data).digest() in self.digests


_RENDERED = _Ours()


class _Reply:
    """Collects what the reader sends, for a read done in this process."""

    def __init__(self) -> None:
        self.value: tuple[str, object] = ("unreadable", "no answer")

    def send(self, value: tuple[str, object]) -> None:
        self.value = value


def _child(conn: Connection, data: bytes, max_pages: int, max_memory: int) -> None:
    gc.disable()  # the parent's heap (K, WordNet) is shared copy-on-write: do not walk it
    resource.setrlimit(resource.RLIMIT_AS, (max_memory, max_memory))
    _read(conn, data, max_pages, max_memory)


def _read(conn: Connection | _Reply, data: bytes, max_pages: int, max_memory: int) -> None:
    try:
        from pdfminer.high_level import extract_pages
        from pdfminer.layout import LAParams, LTTextContainer
        from pdfminer.pdfdocument import PDFDocument
        from pdfminer.pdfparser import PDFParser

        parser = PDFParser(io.BytesIO(data))
        try:
            document = PDFDocument(parser)
        except Exception as exc:
            if "encrypt" in type(exc).__name__.lower() or "password" in type(exc).__name__.lower():
                conn.send(("encrypted", f"encrypted PDF: a password is needed ({type(exc).__name__})"))
                return
            raise
        if getattr(document, "encryption", None):
            conn.send(("encrypted", "encrypted PDF (readable without a password, but held as encrypted)"))
            return
        pages: list[tuple[str, float, float]] = []
        for i, layout in enumerate(extract_pages(io.BytesIO(data), laparams=LAParams())):
            if i >= max_pages:
                conn.send(("limit", f"more than {max_pages} pages"))
                return
            text = "\n".join(el.get_text() for el in layout if isinstance(el, LTTextContainer))
            pages.append((text, float(layout.width), float(layout.height)))
        conn.send(("ok", pages))
    except MemoryError:
        conn.send(("limit", f"more than {max_memory // (1024 * 1024)} MB of memory"))
    except Exception as exc:
        conn.send(("unreadable", f"{type(exc).__name__}: {str(exc)[:200]}"))


def extract_pdf(data: bytes, *, part: str, limits: Limits) -> PdfDocument:
    if not data.lstrip()[:5] == b"%PDF-" and b"%PDF-" not in data[:1024]:
        raise UnreadableContentError("not a PDF (no %PDF header)", part=part)
    # Import pdfminer here, once, so that every forked reader starts with it loaded.
    import pdfminer.high_level  # noqa: F401

    if data in _RENDERED:
        reply = _Reply()
        _read(reply, data, limits.pdf_max_pages, limits.pdf_max_memory)
        return _document(*reply.value, data=data, part=part)
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, data, limits.pdf_max_pages, limits.pdf_max_memory), daemon=True)
    gc.freeze()  # objects that exist now are not collected in the child: no copy-on-write storm
    try:
        proc.start()
    finally:
        gc.unfreeze()
    send.close()
    try:
        if not recv.poll(limits.pdf_max_seconds):
            raise LimitExceededError(f"text extraction took more than {limits.pdf_max_seconds:g} s", part=part)
        status, payload = recv.recv()
    except EOFError as exc:
        raise UnreadableContentError("the PDF reader died on this file", part=part) from exc
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join(5)
    return _document(status, payload, data=data, part=part)


def _document(status: str, payload: object, *, data: bytes, part: str) -> PdfDocument:
    errors: dict[str, type[ContentError]] = {
        "encrypted": EncryptedContentError,
        "limit": LimitExceededError,
        "unreadable": UnreadableContentError,
    }
    if status in errors:
        raise errors[status](str(payload), part=part)
    pages = [PdfPage(t, w, h) for t, w, h in cast("list[tuple[str, float, float]]", payload)]
    if pages and sum(len(p.text.strip()) for p in pages) < MIN_TEXT_CHARS:
        raise UnreadableContentError(f"{len(pages)} page(s) but no text: images of text cannot be inspected", part=part)
    return PdfDocument(part, data, pages)


def render(pages: Sequence[PdfPage], *, title: str) -> bytes:
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.set_title(title)
    pdf.set_creator("sanigate")
    pdf.set_auto_page_break(auto=True, margin=40)
    # Latin-1 text needs no embedded font (parsing DejaVu is two thirds of the work); anything else does.
    latin1 = all(_is_latin1(p.text) for p in pages)
    font = None if latin1 else next((f for f in FONT_CANDIDATES if f.exists()), None)
    if font is not None:
        pdf.add_font("Body", fname=str(font))
        family = "Body"
    else:
        family = "Helvetica"
    for page in pages or [PdfPage("", 595.0, 842.0)]:
        pdf.add_page(format=(page.width or 595.0, page.height or 842.0))
        pdf.set_font(family, size=10)
        text = page.text if font is not None else page.text.encode("latin-1", "replace").decode("latin-1")
        pdf.multi_cell(0, 13, text.replace("\x00", ""))
    out = bytes(pdf.output())
    _RENDERED.add(out)
    return out


def _is_latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True
