"""A plain text file: one segment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from extractors.base import Note, Segment
from gateway.errors import InputError


@dataclass(frozen=True, slots=True)
class PlainDocument:
    part: str
    text: str

    @classmethod
    def from_bytes(cls, data: bytes, *, part: str) -> PlainDocument:
        if b"\x00" in data[:8192]:
            raise InputError(f"{part}: binary file (NUL bytes); not text, mail, DOCX or PDF")
        try:
            return cls(part, data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(f"{part}: not UTF-8 text (byte {exc.start}); convert it first") from exc

    @property
    def segments(self) -> list[Segment]:
        return [Segment(self.part, (self.text,))] if self.text.strip() else []

    @property
    def notes(self) -> list[Note]:
        return []

    @property
    def addresses(self) -> tuple[str, ...]:
        return ()

    def rebuild(self, pieces: Sequence[tuple[str, ...]]) -> bytes:
        return ("".join(pieces[0]) if pieces else self.text).encode("utf-8")
