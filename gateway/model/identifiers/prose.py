"""Where a finding ends, as formal prose writes it: the words around a found value that belong to it.

A court's or an authority's prose writes identifying phrases around the values the scans find: a court's name
with its name in the country's own language after it ("the County Administrative Court (länsrätten)"), an
organisation named through another ("the Court of Appeal’s Office", "Widow’s Bereavement Allowance"), a place
with the kind of place it is ("Kartal district", "the island of Lemland"), days or months that share one month
or year ("on 10 and 22 December 1993", "in March, April and June 1989", "between 1982 and 1984"), a part of a
month or year ("end of February 2011"), an age ("60 years of age"). Found alone, the value is replaced and
these words stay beside the placeholder, and with them part of what identifies (and TAB's annotators count
each such word as a token missed).

Every rule here reads only the few characters beside a finding the scans made, so a text with few findings
(a message) costs next to nothing; and each only widens or joins findings, never makes one from nothing.
"""

from __future__ import annotations

import re

from gateway.model.identifiers import kinds as K
from gateway.model.identifiers.finding import Finding
from gateway.model.identifiers.names import ORG_HEADS, Lexicon
from gateway.model.terms import STOPWORDS

_LETTERS = re.compile(r"[^\W\d_]+")

# A name in the country's language after its English one, as prose writes it: after a blank, one to six words
# in brackets, none of them English; words only (a program's "(typ='rt')", "(40MHz)", an address in brackets
# are no name).
_GLOSS = re.compile(r"[ \t]\(((?:[^\W\d_]+[ \t'’-]?){1,6})\)")
_GLOSSED = frozenset({K.ORG, K.LOC, K.MISC})
_NAMES = frozenset({K.PERSON, K.ORG, K.LOC, K.DEM, K.MISC})

# An organisation or a thing named through another's name: "Widow’s Bereavement Allowance", "Foreigners'
# Department". A person's name stays a person's: a found name is never taken in (see _widened).
_OWNER = re.compile(r"(?<![\w’'-])([^\W\d_a-z][^\W\d_A-Z]+)(?:['’]s|(?<=s)['’])[ \t]+\Z")
_OWNED = frozenset({K.ORG, K.MISC})
_OWNED_HEAD = re.compile(r"['’]s[ \t]+([^\W\d_a-z][\w-]*)")

# The kind of place after a place's name or before it: "Kartal district", "Limerick city", "the island of
# Lemland" (the article is not the name's, as TAB's annotators mark it).
_UNITS = (
    "district|province|region|city|town|village|county|municipality|neighbourhood|neighborhood|quarter|suburb|"
    "island|archipelago|commune|canton|oblast|prefecture|governorate|state|republic"
)
_INSTITUTIONS = "police station|police headquarters|prison|gendarmerie|gendarmerie station|hospital|cemetery"
_UNIT_AFTER = re.compile(rf"[ \t]+(?:{_UNITS}|{_INSTITUTIONS})\b")
_UNIT_BEFORE = re.compile(rf"(?<![\w-])(?:{_UNITS})[ \t]+of[ \t]+\Z")

# Days or months before a date that shares its month or year with them, and what opens a span of time.
_MONTH_NAMES = "January|February|March|April|May|June|July|August|September|October|November|December"
# A comma only inside a list that a word or a dash closes ("3, 5 and 7 May"): "nos. 65900/01, 12 April 2006"
# is a number and a date.
_JOIN = r"[ \t]*(?:and|&|–|—|-|to|or|until)[ \t]*"
_OPEN = r"(?:(?:between|from)[ \t]+)?"
_DAY_N = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_DAYS_BEFORE = re.compile(rf"(?<![\w.,/§-]){_OPEN}(?:{_DAY_N}[ \t]*,[ \t]*)*{_DAY_N}{_JOIN}\Z")
_MONTHS_BEFORE = re.compile(rf"(?<![\w-]){_OPEN}(?:(?:{_MONTH_NAMES})[ \t]*,[ \t]*)*(?:{_MONTH_NAMES}){_JOIN}\Z")
_YEAR_BEFORE = re.compile(rf"(?<![\w-])(?:between|from)[ \t]+(?:1[6-9]|20)\d\d{_JOIN}\Z")
_DAY_FIRST = re.compile(r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s")
_MONTH_FIRST = re.compile(rf"(?:{_MONTH_NAMES})\b")
# Where in a month or year: "early October 1997", "end of 1981" (again without the article).
_PART_OF = re.compile(r"(?<![\w-])(?:early|late|mid|(?:end|beginning|start|middle|spring|summer|autumn|winter) of)"
                      r"[ \t-]*\Z", re.IGNORECASE)  # fmt: skip

# An age written as a span of years: "60 years of age", "twenty-two years old".
_YEARS = re.compile(r"(\d{1,3})?[^\s]*[- ]years?\Z")
_AGE_AFTER = re.compile(r"[ \t]+(?:of[ \t]+age|old)\b")

_WINDOW = 60

_WIDENED = frozenset({K.ORG, K.LOC, K.MISC, K.DATE, K.DURATION})
# How what may stand before a date ends: a list's or a range's join (_JOIN), a part of a month (_PART_OF).
_DATE_OPENS = ("and", "&", "–", "—", "-", "to", "or", "until", "early", "late", "mid", "of")


def widen(text: str, found: list[Finding], lexicon: Lexicon) -> list[Finding]:
    """``found`` (sorted, none overlapping another) with each finding grown over the words around it that are
    part of the same value; still sorted and none overlapping."""
    out: list[Finding] = []
    i, n = 0, len(found)
    while i < n:
        f = found[i]
        i += 1
        if f.kind not in _WIDENED:  # most of a message's findings: people, numbers, addresses
            out.append(f)
            continue
        if f.kind in _GLOSSED and (end := _gloss_end(text, f, lexicon)) is not None and not _acronym(f.text):
            # A name the scans found inside the brackets is part of the gloss: a word of it read as a surname
            # ("(Högsta domstolen)") too, where the gloss holds no census name (see _foreign) and the word is
            # alone; a place's gloss takes no person in.
            j = i
            while (
                j < n
                and found[j].end <= end
                and found[j].kind in _NAMES
                and (found[j].kind != K.PERSON or (f.kind != K.LOC and " " not in found[j].text))
            ):
                j += 1
            if j == n or found[j].start >= end:
                f, i = _grown(text, f, f.start, end), j
        low = out[-1].end if out else 0
        high = found[i].start if i < n else len(text)
        out.append(_widened(text, f, low, high))
    return out


def _widened(text: str, f: Finding, low: int, high: int) -> Finding:
    """``f`` grown within [low, high) where the words beside it are part of its value."""
    kind = f.kind
    if kind in _OWNED and not _acronym(f.text):
        m = _OWNER.search(text, max(low, f.start - _WINDOW), f.start)
        if m is not None and m.group(1).lower() not in STOPWORDS:  # "It's Ubuntu", "That's"
            f = _grown(text, f, m.start(), f.end)
        m = _OWNED_HEAD.match(text, f.end, high)
        if m is not None and m.group(1).lower() in ORG_HEADS:
            f = _grown(text, f, f.start, m.end())
    elif kind == K.LOC:
        m = _UNIT_AFTER.match(text, f.end, high)
        if m is not None:
            f = _grown(text, f, f.start, m.end())
        if _word_before(text, f.start).endswith("of"):
            m = _UNIT_BEFORE.search(text, max(low, f.start - _WINDOW), f.start)
            if m is not None:
                f = _grown(text, f, m.start(), f.end)
    elif kind == K.DATE and _word_before(text, f.start).endswith(_DATE_OPENS) and f.part("time") is None:
        f = _date_widened(text, f, low)
    elif (
        kind == K.DURATION
        and (y := _YEARS.search(f.text)) is not None
        and (m := _AGE_AFTER.match(text, f.end, high)) is not None
    ):
        age = y.group(1)
        f = Finding(start=f.start, end=m.end(), kind=K.AGE if age else K.DURATION, text=text[f.start : m.end()],
                    score=f.score, source=f"{f.source}, age", parts=(("age", age),) if age else ())  # fmt: skip
    return f


def _date_widened(text: str, f: Finding, low: int) -> Finding:
    start = max(low, f.start - _WINDOW)
    year = f.part("year")
    if year is not None and year == f.text:
        m = _YEAR_BEFORE.search(text, start, f.start)
        if m is not None:
            return _grown(text, f, m.start(), f.end, parts=(("year", text[m.start() : f.end]),))
    elif _DAY_FIRST.match(f.text):
        m = _DAYS_BEFORE.search(text, start, f.start)
        if m is not None:
            return _grown(text, f, m.start(), f.end)
    elif _MONTH_FIRST.match(f.text):
        m = _MONTHS_BEFORE.search(text, start, f.start)
        if m is not None:
            f = _grown(text, f, m.start(), f.end)
    m = _PART_OF.search(text, max(low, f.start - 24), f.start)
    if m is not None and not _DAY_FIRST.match(f.text):
        # What a year may stay as keeps the words: "at the end of February 2011" -> "at the end of 2011".
        year = f.part("year")
        kept = None if year is None else ((("year", text[m.start() : f.start] + year),))
        f = _grown(text, f, m.start(), f.end, parts=kept)
    return f


def _word_before(text: str, at: int) -> str:
    """The last few characters before ``at``, blanks after them left out: what every pattern before a value
    ends with is tested there first (a search of a window tries each of its characters)."""
    return text[max(0, at - 8) : at].rstrip(" \t")


def _acronym(value: str) -> bool:
    """ "FPGA", "E320": a device's or a standard's letters, which a program's prose glosses and owns ("CPU
    (gnuradio)", "N310's FPGA") as no court names a body."""
    return value.isupper() and " " not in value


def _gloss_end(text: str, f: Finding, lexicon: Lexicon) -> int | None:
    """Where a foreign name in brackets right after ``f`` ends, if one does."""
    if not text.startswith("(", f.end + 1):
        return None
    m = _GLOSS.match(text, f.end)
    return m.end() if m is not None and _foreign(m.group(1), lexicon) else None


def _foreign(gloss: str, lexicon: Lexicon) -> bool:
    """One to six words, none of which English knows, as a word or as a frequent first name or surname: a name in
    another language, not an English aside or a person ("(Larry Dodd)")."""
    words = _LETTERS.findall(gloss)
    return 1 <= len(words) <= 6 and not any(
        lexicon.is_ordinary(w) or lexicon.is_given_name(w) or lexicon.is_surname(w) for w in words
    )


def _grown(text: str, f: Finding, start: int, end: int, parts: tuple[tuple[str, str], ...] | None = None) -> Finding:
    return Finding(start=start, end=end, kind=f.kind, text=text[start:end], score=f.score,
                   source=f.source if f.source.endswith(", widened") else f"{f.source}, widened",
                   parts=f.parts if parts is None else parts)  # fmt: skip
