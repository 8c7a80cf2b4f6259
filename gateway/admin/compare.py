"""Original and sanitized side by side: the parts of a message, with each change marked.

Both versions are extracted the way the gateway sees them (every part,
attachments as text); parts are paired by name, and within a part a word
diff finds the changes, each tied to the audit decisions that explain it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from extractors.limits import Limits
from extractors.pipeline import SEE_ALL, extract
from gateway.errors import SanigateError
from gateway.store.base import AuditEntry

_PIECES = re.compile(r"\w+|\s+|[^\w\s]+")
MAX_DIFF_CHARS = 200_000  # beyond this a part is shown without highlights


@dataclass(slots=True)
class Change:
    index: int
    before: str
    after: str
    decisions: list[AuditEntry] = field(default_factory=list)


@dataclass(slots=True)
class PartView:
    label: str
    original: list[tuple[str, int | None]]  # (text, change index) runs
    sanitized: list[tuple[str, int | None]]
    note: str = ""


@dataclass(slots=True)
class Comparison:
    parts: list[PartView]
    changes: list[Change]
    error: str = ""


def _texts(data: bytes | None) -> tuple[list[tuple[str, str]], str]:
    if data is None:
        return [], ""
    try:
        doc = extract(data, "mail", name="message", limits=Limits(), policy=SEE_ALL)
    except SanigateError as exc:
        return [], exc.message
    return [(seg.part, seg.text) for seg in doc.segments], ""


def compare(original: bytes, sanitized: bytes | None, decisions: Sequence[AuditEntry]) -> Comparison:
    before, err_before = _texts(original)
    after, err_after = _texts(sanitized)
    changes: list[Change] = []
    parts: list[PartView] = []
    remaining = list(after)
    for label, text in before:
        match = next((i for i, (lab, _t) in enumerate(remaining) if lab == label), None)
        if match is None:
            note = "no sanitized version" if sanitized is None else "not in the sanitized message"
            parts.append(PartView(label, [(text, None)], [], note))
            continue
        _lab, new = remaining.pop(match)
        parts.append(_diff(label, text, new, changes, decisions))
    for label, text in remaining:
        parts.append(PartView(label, [], [(text, None)], "only in the sanitized message"))
    return Comparison(parts, changes, err_before or err_after)


def _diff(label: str, old: str, new: str, changes: list[Change], decisions: Sequence[AuditEntry]) -> PartView:
    if old == new:
        return PartView(label, [(old, None)], [(new, None)])
    if len(old) + len(new) > MAX_DIFF_CHARS:
        return PartView(label, [(old, None)], [(new, None)], "too long to mark the changes")
    a, b = _PIECES.findall(old), _PIECES.findall(new)
    runs: list[tuple[bool, str, str]] = []  # (changed, old text, new text)
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        runs.append((op != "equal", "".join(a[i1:i2]), "".join(b[j1:j2])))
    merged: list[tuple[bool, str, str]] = []
    for run in runs:
        # "Los Angeles" -> "a city" is one change, not two around an unchanged blank.
        if run[0] and len(merged) >= 2 and merged[-2][0] and not merged[-1][0] and not merged[-1][1].strip():
            blank, prev = merged.pop(), merged.pop()
            run = (True, prev[1] + blank[1] + run[1], prev[2] + blank[2] + run[2])
        merged.append(run)
    left: list[tuple[str, int | None]] = []
    right: list[tuple[str, int | None]] = []
    for changed, gone, came in merged:
        if not changed:
            left.append((gone, None))
            right.append((came, None))
            continue
        change = Change(len(changes), gone, came, _explaining(gone, came, label, decisions))
        changes.append(change)
        if gone:
            left.append((gone, change.index))
        if came:
            right.append((came, change.index))
    return PartView(label, left, right)


def _explaining(gone: str, came: str, label: str, decisions: Sequence[AuditEntry]) -> list[AuditEntry]:
    """The decisions whose term was in the removed text (preferring those made in this part)."""
    low = gone.lower()
    found = [d for d in decisions if d.kind == "decision" and d.term and d.term.lower() in low]
    here = [d for d in found if label in d.part.split(", ")]
    return here or found
