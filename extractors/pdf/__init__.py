"""PDF: sanitized in place, with pikepdf (qpdf).

Only the words that change are changed, where they are (content.py): the
glyphs of a replaced word leave the page's content stream, and the
replacement is shown at the same place in the same font and size, fitted to
the space. Fonts, images, vector graphics, columns, tables and pages stay.
Text that is not in the page content (document information, XMP,
annotations, link URLs, bookmarks, form fields, tagged-structure alt text)
is read and sanitized too; what is not read (JavaScript, embedded files,
XFA, thumbnails) is removed (document.py). The file is written fresh: no
earlier revision, no unreferenced object survives.

Every reading and writing of a PDF runs in a child process with a time and
memory limit: a hostile PDF (deep object graphs, decompression bombs) costs
at most that, never the gateway. The rebuild reads the original again in
its child (reading is deterministic) and applies the new text there.

A PDF whose pages carry (almost) no text is taken to be a scan: images of
text cannot be inspected, so it is held.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from extractors.base import Note, Segment
from extractors.limits import Limits
from gateway.errors import (
    ContentError,
    EncryptedContentError,
    LimitExceededError,
    UnreadableContentError,
    UnsupportedContentError,
)
from gateway.sandbox import ChildDiedError, ChildTimeoutError, run_forked

MIN_TEXT_CHARS = 16  # below this, a PDF with pages is taken to be images of text

__all__ = ["PdfDocument", "extract_pdf"]


@dataclass(slots=True)
class PdfDocument:
    part: str
    original: bytes
    limits: Limits
    pages: int
    _segments: list[Segment]
    _notes: list[Note]

    @property
    def segments(self) -> list[Segment]:
        return self._segments

    @property
    def notes(self) -> list[Note]:
        return self._notes

    @property
    def addresses(self) -> tuple[str, ...]:
        return ()

    @property
    def text(self) -> str:
        """The page text a reader gets (for tests and tools)."""
        return "\n".join(s.text for s in self._segments if s.part.rsplit("(", 1)[-1].startswith("page"))

    def rebuild(self, pieces: Sequence[tuple[str, ...]]) -> bytes:
        new = [tuple(p) for p in pieces]
        if not self._notes and all(n == s.pieces for n, s in zip(new, self._segments, strict=True)):
            return self.original
        return cast(
            bytes,
            _sandboxed(_write, (self.original, self.part, self.limits.pdf_max_pages, new), self.part, self.limits),
        )


def extract_pdf(data: bytes, *, part: str, limits: Limits) -> PdfDocument:
    if not data.lstrip()[:5] == b"%PDF-" and b"%PDF-" not in data[:1024]:
        raise UnreadableContentError("not a PDF (no %PDF header)", part=part)
    pages, segments, notes, chars = cast(
        "tuple[int, list[tuple[str, tuple[str, ...]]], list[tuple[str, str]], int]",
        _sandboxed(_read, (data, part, limits.pdf_max_pages), part, limits),
    )
    if pages and chars < MIN_TEXT_CHARS:
        raise UnreadableContentError(f"{pages} page(s) but no text: images of text cannot be inspected", part=part)
    return PdfDocument(
        part,
        data,
        limits,
        pages,
        [Segment(label, tuple(p)) for label, p in segments],
        [Note(part, action, reason) for action, reason in notes],
    )


def _read(data: bytes, part: str, max_pages: int) -> object:
    from extractors.pdf.document import PdfFile

    doc = PdfFile(data, part=part, max_pages=max_pages)
    return doc.pages, doc.segments(), doc.notes, doc.page_chars()


def _write(data: bytes, part: str, max_pages: int, pieces: list[tuple[str, ...]]) -> object:
    from extractors.pdf.document import PdfFile

    doc = PdfFile(data, part=part, max_pages=max_pages)
    if len(pieces) != len(doc.segments()):
        raise ContentError("the PDF's text changed between two readings", part=part)
    return doc.write(pieces)


def _guarded(func: Callable[..., object], args: tuple[object, ...], max_memory: int) -> tuple[str, object]:
    """In the child: the result, or the error's type name and message (errors may not pickle)."""
    gc.disable()  # the parent's heap (K, WordNet) is shared copy-on-write: do not walk it
    try:
        return ("ok", func(*args))
    except ContentError as exc:
        message = exc.message
        if exc.part and message.startswith(f"{exc.part}: "):
            message = message[len(exc.part) + 2 :]
        return (type(exc).__name__, message)
    except MemoryError:
        return ("LimitExceededError", f"more than {max_memory // (1024 * 1024)} MB of memory")
    except RecursionError:
        return ("LimitExceededError", "structure nested too deeply")
    except Exception as exc:
        return ("UnreadableContentError", f"{type(exc).__name__}: {str(exc)[:200]}")


ERRORS: dict[str, type[ContentError]] = {
    "UnsupportedContentError": UnsupportedContentError,
    "EncryptedContentError": EncryptedContentError,
    "LimitExceededError": LimitExceededError,
    "UnreadableContentError": UnreadableContentError,
}


def _sandboxed(func: Callable[..., object], args: tuple[object, ...], part: str, limits: Limits) -> object:
    # Import the libraries here, once, so that every forked child starts with them loaded.
    import pdfminer.cmapdb  # noqa: F401
    import pikepdf  # noqa: F401

    import extractors.pdf.document  # noqa: F401

    try:
        status, payload = run_forked(_guarded, (func, args, limits.pdf_max_memory),
                                     max_seconds=limits.pdf_max_seconds, max_memory=limits.pdf_max_memory)  # fmt: skip
    except ChildTimeoutError as exc:
        raise LimitExceededError(f"PDF processing took more than {limits.pdf_max_seconds:g} s", part=part) from exc
    except ChildDiedError as exc:
        raise UnreadableContentError("the PDF reader died on this file", part=part) from exc
    if status == "ok":
        return payload
    raise ERRORS.get(status, UnreadableContentError)(str(payload), part=part)
