"""The analyzer: every recognizer over a text, overlaps settled, one list of findings.

Like Presidio's AnalyzerEngine, it only finds; what to write instead is the
anonymizer's business (anonymizer.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace

from gateway.model.identifiers import kinds as K
from gateway.model.identifiers.finding import Finding
from gateway.model.identifiers.names import Lexicon, NameRecognizer
from gateway.model.identifiers.patterns import STRUCTURED

NAME_KINDS = frozenset({K.PERSON, K.ORG, K.LOC, K.DEM, K.MISC})


class Analyzer:
    def __init__(self, *, lexicon: Lexicon) -> None:
        self._names = NameRecognizer(lexicon)

    def analyze(self, text: str, kinds: Collection[str]) -> list[Finding]:
        """Findings of the given kinds, none overlapping another, in text order."""
        wanted = frozenset(kinds)
        found: list[Finding] = []
        for produces, recognizer in STRUCTURED:
            if produces & wanted:
                found.extend(f for f in recognizer(text) if f.kind in wanted)
        if NAME_KINDS & wanted:
            found.extend(f for f in self._names(text) if f.kind in wanted)
        # Nothing crosses a paragraph separator: in a message that is the border between two parts.
        found = resolve_overlaps([f for f in found if "\u2029" not in f.text])
        return _join_ranges(text, resolve_overlaps([*found, *_recurrences(text, found)]))


_RANGE_JOIN = re.compile(r"\s*(?:-|–|—|to|and|until|till|or)\s*")
_RANGE_OPEN = re.compile(r"(?:between|from)\s+$", re.IGNORECASE)


def _join_ranges(text: str, found: list[Finding]) -> list[Finding]:
    """ "between 1 and 5 March 2000", "from 2 to 9 May": one span of time, not two dates and a gap."""
    out: list[Finding] = []
    for f in found:
        prev = out[-1] if out else None
        if (prev is not None and prev.kind == f.kind and f.kind in (K.DATE, K.DURATION)
                and _RANGE_JOIN.fullmatch(text, prev.end, f.start)):  # fmt: skip
            m = _RANGE_OPEN.search(text, max(0, prev.start - 10), prev.start)
            start = m.start() if m else prev.start
            out[-1] = Finding(
                start=start,
                end=f.end,
                kind=f.kind,
                text=text[start : f.end],
                score=min(prev.score, f.score),
                source=prev.source,
                parts=f.parts or prev.parts,
            )
            continue
        out.append(f)
    return out


def _recurrences(text: str, found: Sequence[Finding]) -> list[Finding]:
    """Every other occurrence of a value found once: what is an identifier in one place is one everywhere."""
    values: dict[str, Finding] = {}
    for f in found:
        if len(f.text) >= 3 and f.text.strip() == f.text and f.score >= 0.5:
            values.setdefault(f.text, f)
    if not values:
        return []
    pattern = re.compile(
        r"(?<!\w)(?:" + "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)) + r")(?!\w)"
    )
    taken = {(f.start, f.end) for f in found}
    out = []
    for m in pattern.finditer(text):
        if m.span() in taken:
            continue
        f = values[m.group()]
        out.append(replace(f, start=m.start(), end=m.end(), score=f.score - 0.01, source=f"{f.source}, again"))
    return out


def resolve_overlaps(found: list[Finding]) -> list[Finding]:
    """The surest finding wins a contested stretch of text; among equals, the longer."""
    kept: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for f in sorted(found, key=lambda f: (-f.score, -f.length, f.start)):
        if f.start >= f.end or any(a < f.end and f.start < b for a, b in taken):
            continue
        kept.append(f)
        taken.append((f.start, f.end))
    return sorted(kept, key=lambda f: f.start)
