"""What every extractor shares: segments of text, and putting new text back.

An extractor turns content into *segments*: runs of text a reader sees as
continuous (a paragraph, a header value, an HTML block). A segment is made of
*pieces* that the content stores apart (DOCX runs, HTML text nodes between
inline tags), so a term may span several pieces: "Los <b>Angeles</b>".

All segments of a message are sanitized as one document, so every occurrence
of a term gets the same replacement in every part. The new text of a segment
is then spread back over its pieces (``redistribute``): unchanged characters
stay in their pieces, a replacement goes where the replaced text began, and
the formatting of each piece survives.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gateway.model.identifiers.finding import Role

# Between segments: a paragraph break (no phrase, group or article crosses it)
# around a character no text we hand the engine contains.
SEPARATOR = "\n\n\u2029\n\n"


@dataclass(frozen=True, slots=True)
class Segment:
    part: str
    pieces: tuple[str, ...]
    role: Role = "prose"

    @property
    def text(self) -> str:
        return "".join(self.pieces)


@dataclass(frozen=True, slots=True)
class Note:
    """Something done to the content besides sanitizing text (audited); it makes the content be rebuilt."""

    part: str
    action: str
    reason: str


class Extracted(Protocol):
    """Content taken apart: its segments, and how to put it back together."""

    @property
    def segments(self) -> Sequence[Segment]: ...

    @property
    def notes(self) -> Sequence[Note]: ...

    @property
    def addresses(self) -> Sequence[str]:
        """E-mail addresses a reader sees beside the text (a header's addr-specs), never rewritten: the evidence
        that "Rob Kossler" before rkossler@... is one person's name."""
        ...

    def rebuild(self, pieces: Sequence[tuple[str, ...]]) -> bytes:
        """The content with each segment's pieces replaced by ``pieces[i]``."""
        ...


def clean(text: str) -> str:
    return text.replace("\u2029", "\n")


def combine(segments: Sequence[Segment]) -> tuple[str, list[int]]:
    """One document of all segments, and where each segment starts in it."""
    starts: list[int] = []
    parts: list[str] = []
    pos = 0
    for i, seg in enumerate(segments):
        if i:
            parts.append(SEPARATOR)
            pos += len(SEPARATOR)
        starts.append(pos)
        text = clean(seg.text)
        parts.append(text)
        pos += len(text)
    return "".join(parts), starts


def roles(segments: Sequence[Segment]) -> tuple[Role, ...]:
    """Each segment's role, in order; empty when every one is prose (the identifier pass reads all text so)."""
    out = tuple(seg.role for seg in segments)
    return out if "machine" in out else ()


def split(text: str, n: int) -> list[str] | None:
    """Undo ``combine`` on the sanitized document; None if the layout broke."""
    out = text.split(SEPARATOR) if n else []
    if n == 0 and text == "":
        return []
    return out if len(out) == n else None


def apply_to_pieces(pieces: Sequence[str], edits: Sequence[tuple[int, int, str]]) -> tuple[str, ...]:
    """Apply edits (offsets into the joined pieces) piece by piece.

    The new text goes into the piece where the replaced text began, so it
    takes that piece's formatting ("an <b>HIV</b> test" -> "a <b>virus</b>
    test"); what the edit covered in later pieces is cut from them.
    """
    out = list(pieces)
    for start, end, text in sorted(edits, reverse=True):
        offset = 0
        placed = False
        for k, piece in enumerate(out):
            p_start, p_end = offset, offset + len(piece)
            offset = p_end
            if p_end <= start and not (p_end == start and k == len(out) - 1 and not placed):
                continue
            if p_start >= end and placed:
                break
            cut_from = max(start, p_start) - p_start
            cut_to = min(end, p_end) - p_start
            if not placed:
                out[k] = piece[:cut_from] + text + piece[max(cut_to, cut_from) :]
                placed = True
            else:
                out[k] = piece[:cut_from] + piece[max(cut_to, cut_from) :]
    return tuple(out)


def locate(starts: Sequence[int], segments: Sequence[Segment], span: tuple[int, int]) -> tuple[str, int, int]:
    """The part a span of the combined document came from, with offsets in its segment."""
    i = max(0, bisect.bisect_right(starts, span[0]) - 1)
    return segments[i].part, span[0] - starts[i], span[1] - starts[i]
