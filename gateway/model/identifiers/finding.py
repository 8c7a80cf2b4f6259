"""What the analyzer finds: a typed span of the text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Role = Literal["prose", "machine"]
"""What wrote a part of a text, as its extractor knows: a person ("prose": a body, a Subject, a sender's display
name), or a program ("machine": a header such as X-AntiAbuse or User-Agent). A capital in machine text is no
evidence of a name by itself ("Primary Hostname"); a name there is found by what shows it is one (a title, a
first name and surname, the census, another mention of a name found in the prose)."""


# init=False: the __init__ below is the dataclass's own, written to set each slot through its descriptor. The
# generated one of a frozen class calls object.__setattr__ by name for each field, which made a Finding cost
# 0.8 us to build, against 0.6 us so; the analyzer builds about 135 a text. Still frozen: assignment raises.
@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Finding:
    start: int
    end: int
    kind: str
    text: str
    score: float = 1.0  # 1.0: validated (checksum, library); lower: a pattern or a heuristic
    source: str = ""  # which recognizer, for the audit ("phonenumbers", "stdnum.iban", "capitalised phrase")
    # Parts a generalizing operator keeps: {"year": "1961"}, {"state": "IL"}, {"city": "Springfield"}.
    parts: tuple[tuple[str, str], ...] = ()

    def __init__(self, *, start: int, end: int, kind: str, text: str, score: float = 1.0, source: str = "",
                 parts: tuple[tuple[str, str], ...] = ()) -> None:  # fmt: skip
        _set_start(self, start)
        _set_end(self, end)
        _set_kind(self, kind)
        _set_text(self, text)
        _set_score(self, score)
        _set_source(self, source)
        _set_parts(self, parts)

    @property
    def length(self) -> int:
        return self.end - self.start

    def part(self, name: str) -> str | None:
        return next((v for k, v in self.parts if k == name), None)

    def moved(self, start: int, end: int, text: str) -> Finding:
        """The same finding over another span (``dataclasses.replace`` costs four times as much)."""
        return Finding(start=start, end=end, kind=self.kind, text=text, score=self.score, source=self.source,
                       parts=self.parts)  # fmt: skip


# The slots' own setters (a frozen class's __setattr__ raises; these are what object.__setattr__ ends in).
_set_start, _set_end, _set_kind, _set_text, _set_score, _set_source, _set_parts = (
    Finding.__dict__[name].__set__ for name in ("start", "end", "kind", "text", "score", "source", "parts")
)
