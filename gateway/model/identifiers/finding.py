"""What the analyzer finds: a typed span of the text."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    start: int
    end: int
    kind: str
    text: str
    score: float = 1.0  # 1.0: validated (checksum, library); lower: a pattern or a heuristic
    source: str = ""  # which recognizer, for the audit ("phonenumbers", "stdnum.iban", "capitalised phrase")
    # Parts a generalizing operator keeps: {"year": "1961"}, {"state": "IL"}, {"city": "Springfield"}.
    parts: tuple[tuple[str, str], ...] = ()

    @property
    def length(self) -> int:
        return self.end - self.start

    def part(self, name: str) -> str | None:
        return next((v for k, v in self.parts if k == name), None)
