"""What each kind of identifier becomes: an operator per kind, as Presidio's anonymizer has.

Where HIPAA Safe Harbor lets a generalization stay, it stays: a date keeps
its year, a ZIP code its first three digits (000 where those three digits
cover 20,000 people or fewer), an age over 89 becomes "90 or older", and an
address keeps its state or city when the policy allows that level.
Everything else becomes a typed placeholder; people, organisations and
places are numbered, so the same person is "[PERSON 1]" in the Subject, the
body and the attachment, and a second person "[PERSON 2]".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from gateway.model.identifiers import kinds as K
from gateway.model.identifiers.finding import Finding
from gateway.model.identifiers.names import TITLES
from gateway.model.identifiers.patterns import AGE_WORDS
from gateway.quickinit import quick_init

AddressLevel = Literal["none", "city", "state"]
# Compiled once: the module functions of re look each pattern up in their cache at every call (per finding).
_DIGITS = re.compile(r"\d+")
_NOT_DIGIT = re.compile(r"\D")
_YEARS_OLD_HYPHENED = re.compile(r"-years?-old")
_YEARS_OLD = re.compile(r"\s*(?:years?|yrs?|y/?o|yo|y\.o\.)", re.IGNORECASE)
_NOT_WORD = re.compile(r"[\s\W_]+")
_NAME_WORD = re.compile(r"[^\W\d_][^\W_]*(?:['’][^\W_]+)*")  # "john_doe", "Smith-Jones": two words

# 45 CFR 164.514(b)(2)(i)(B): three-digit ZIP areas of 20,000 people or fewer (2000 census) become 000.
RESTRICTED_ZIP3 = frozenset("036 059 063 102 203 556 692 790 821 823 830 831 878 879 884 890 893".split())
NUMBERED = frozenset({K.PERSON, K.ORG, K.LOC})
LABELS = {K.LOC: "PLACE", K.ORG: "ORGANIZATION", K.NATIONAL_ID: "NATIONAL ID", K.HEALTH_PLAN: "HEALTH PLAN ID",
          K.LICENSE: "LICENCE", K.MRN: "MRN", K.DEM: "DEMOGRAPHIC"}  # fmt: skip


@quick_init
@dataclass(frozen=True, slots=True)
class Replacement:
    finding: Finding
    text: str  # what the text says instead; equal to finding.text when the law lets it stay
    action: Literal["generalize", "redact"]
    group: str  # findings with the same group are one identifier (one person, one number)

    @property
    def changes(self) -> bool:
        return self.text != self.finding.text


def anonymize(
    findings: Sequence[Finding], *, address_level: AddressLevel = "none", safe_harbor: bool = True
) -> list[Replacement]:
    """``safe_harbor``: keep what Safe Harbor lets stay (a date's year, an age under 90); without it a
    year and an age are replaced too, as TAB's annotators mask them (DATETIME, DEM)."""
    numbering = _Numbering()
    # Longest first, so "Mr Ruslan Kurkaev" names the person before "Kurkaev" alone refers back to him.
    order = sorted(
        range(len(findings)), key=lambda i: (findings[i].kind not in NUMBERED, findings[i].start - findings[i].end)
    )
    out: dict[int, Replacement] = {}
    # What a finding becomes depends on its kind, text and parts alone (a person's number on the text too, and
    # _Numbering gives a text its number again), and a message repeats its values (each recurrence is a finding
    # of its own: two in three): each value is worked out once, at its first finding in this order.
    done: dict[tuple[str, str, tuple[tuple[str, str], ...]], Replacement] = {}
    for i in order:
        f = findings[i]
        key = (f.kind, f.text, f.parts)
        r = done.get(key)
        if r is None:
            out[i] = done[key] = _operate(f, numbering, address_level, safe_harbor)
        else:
            out[i] = Replacement(f, r.text, r.action, r.group)
    # Number people (organisations, places) in the order the reader meets them.
    first_seen: dict[str, int] = {}
    for i in range(len(findings)):
        if findings[i].kind in NUMBERED:
            first_seen.setdefault(out[i].group, findings[i].start)
    renumber: dict[str, str] = {}
    for kind in NUMBERED:
        groups = sorted((start, g) for g, start in first_seen.items() if g.startswith(f"{kind}:"))
        renumber.update({g: f"{kind}:{n}" for n, (_s, g) in enumerate(groups, 1)})
    result = []
    for i in range(len(findings)):
        r = out[i]
        if r.group in renumber:
            n = renumber[r.group].split(":", 1)[1]
            label = LABELS.get(r.finding.kind, r.finding.kind)
            r = Replacement(r.finding, f"[{label} {n}]", r.action, renumber[r.group])
        result.append(r)
    return result


def _operate(f: Finding, numbering: _Numbering, address_level: AddressLevel, safe_harbor: bool) -> Replacement:
    kind = f.kind
    if kind == K.DATE:
        year = f.part("year")
        if year is not None and safe_harbor:
            if f.text.strip() == year:
                return Replacement(f, f.text, "generalize", f"DATE:{year}")  # a year alone may stay
            return Replacement(f, year, "generalize", f"DATE:{_norm(f.text)}")
        label = "[TIME]" if f.part("time") else "[DATE]"
        return Replacement(f, label, "redact", f"DATE:{_norm(f.text)}")
    if kind == K.AGE:
        age = int(f.part("age") or 0)
        if not safe_harbor:
            return Replacement(f, "[AGE]", "redact", f"AGE:{age}")
        if age <= 89:
            return Replacement(f, f.text, "generalize", f"AGE:{age}")
        digits = _DIGITS.search(f.text) or AGE_WORDS.search(f.text)  # "aged ninety-two"
        assert digits is not None
        rest = f.text[digits.end() :]
        if _YEARS_OLD_HYPHENED.match(rest):
            new = f.text[: digits.start()] + "90-or-older"
        elif _YEARS_OLD.match(rest):
            new = f.text[: digits.start()] + "90 or older"
        else:
            new = f.text[: digits.start()] + "90 or older" + rest
        return Replacement(f, new, "generalize", f"AGE:{age}")
    if kind == K.ZIP:
        zip5 = f.part("zip") or _NOT_DIGIT.sub("", f.text)[:5]
        zip3 = "000" if zip5[:3] in RESTRICTED_ZIP3 else zip5[:3]
        return Replacement(f, f"{zip3}**", "generalize", f"ZIP:{zip5}")
    if kind == K.ADDRESS:
        keep = []
        if address_level == "city" and f.part("city"):
            keep.append(f.part("city") or "")
        if address_level in ("city", "state") and f.part("state"):
            keep.append(f.part("state") or "")
        text = ", ".join(["[ADDRESS]", *keep])
        return Replacement(f, text, "generalize" if keep else "redact", f"ADDRESS:{_norm(f.text)}")
    label = LABELS.get(kind, kind)
    if kind in NUMBERED:
        n = numbering.number(kind, f.text)
        return Replacement(f, f"[{label} {n}]", "redact", f"{kind}:{n}")
    return Replacement(f, f"[{label}]", "redact", f"{kind}:{_norm(f.text)}")


def _norm(text: str) -> str:
    return _NOT_WORD.sub("", text).lower()


def name_words(text: str) -> tuple[str, ...]:
    words = _NAME_WORD.findall(text)
    return tuple(w.lower().removesuffix("'s").removesuffix("’s") for w in words if w.lower().rstrip(".") not in TITLES)


class _Numbering:
    """One number per person (organisation, place): a later mention made of an earlier one's words is that one."""

    def __init__(self) -> None:
        self._known: dict[str, list[tuple[frozenset[str], int, str | None]]] = {}
        # A value numbered once gets the same number again: the entries before its own, or that found it, stay
        # as they were (the list only grows at its end). A message names the same person many times.
        self._numbered: dict[tuple[str, str], int] = {}

    def number(self, kind: str, text: str) -> int:
        n = self._numbered.get((kind, text))
        if n is None:
            n = self._numbered[kind, text] = self._number(kind, text)
        return n

    def _number(self, kind: str, text: str) -> int:
        words = frozenset(w for w in name_words(text) if len(w) > 1) or frozenset({_norm(text)})
        gender = _gender(text)
        known = self._known.setdefault(kind, [])
        for seen, n, g in known:
            # "Nowak" is Mr Tomasz Nowak; "Mrs Nowak" is not.
            if words <= seen and (gender is None or g is None or gender == g):
                return n
        n = len(known) + 1
        known.append((words, n, gender))
        return n


_MALE = frozenset("mr sir lord".split())
_FEMALE = frozenset("mrs ms miss dame lady".split())


def _gender(text: str) -> str | None:
    first = text.split(" ", 1)[0].rstrip(".").lower()
    return "m" if first in _MALE else "f" if first in _FEMALE else None
