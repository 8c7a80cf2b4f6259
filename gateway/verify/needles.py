"""What the last check looks for: every name of every protected entity, as a reader could spell it.

An entity's names are its policy name and its lexicalizations (the keys K
counts it by: "hiv", "human immunodeficiency virus"). Text is folded first
(``gateway.model.normalize``: full width, invisible characters, look-alike
letters, dotted acronyms; and here the diacritics of Latin letters, names and
text alike: "H\u0301IV", "Cathólicism"), then searched with one regular expression:

* an acronym ("HIV", "STD") matches in capitals wherever no other Latin letter
  precedes it and no capital follows: "HIV", "43HIV", "HIV1", "HIVpositive",
  "患者HIV阳性", "AIDS-like", but not "ARCHIVE" or "xHIVa" (base64, hashes).
  Written in lower case it matches only as a whole word followed by a space,
  the end or a sentence mark ("hiv test"; not "std::cout", not "aids" the verb,
  which K's lemmatizer reads as "aid");
* any other name matches case-insensitively at the start of a word, each of its
  words followed by nothing or an inflectional or derivational suffix
  ("Houstonians", "Chlamydial", "Catholics", "cocaine-induced") but not by
  other letters ("ill" is not in "illegal", "los" not in "lost").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from gateway.model.normalize import fold, undot
from gateway.model.records import Entity
from gateway.model.terms import STOPWORDS

# Inflections and the derivations that keep the name readable in the word.
_SUFFIXES = (
    "s es 's ’s n ns an ans ian ians ite ites ese er ers ic ics ical al ial l ly ness ism isms ist ists istic "
    "ed d ing ity ities like ish ology ologist ologists"
).split()
_SUFFIX = "(?:" + "|".join(re.escape(s) for s in sorted(_SUFFIXES, key=len, reverse=True)) + ")?"
_LATIN = "A-Za-z"  # after folding, look-alikes are Latin
# A Latin letter with a diacritic, composed or not: "H\u0301IV" (NFKC has no H with an acute: the mark stays after
# the H) and "Cathólicism" read as HIV and Catholicism. Text and names alike are compared without the marks a
# Latin letter bears (``_bare``); other scripts' letters keep theirs ("й" is not "и").
_MARKS_ON_LATIN = re.compile("(?<=[A-Za-z])[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
# What may be or hold such a letter: the precomposed Latin blocks and the combining marks.
_MAY_BEAR_MARKS = re.compile("[\u00c0-\u024f\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1eff\u20d0-\u20ff\ufe20-\ufe2f]")


@dataclass(frozen=True, slots=True)
class Hit:
    term: str  # the entity's name that matched (its spelling in the policy or K)
    entity: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Name:
    term: str
    entity: str
    acronym: bool


def _word_pattern(word: str) -> str:
    stem = re.escape(word)
    if len(word) <= 4:
        return stem + "(?:'s|’s|s)?" if not word.endswith("s") else stem  # "los" is not in "loss" nor "losing"
    if len(word) > 3 and word.endswith("y"):
        stem = re.escape(word[:-1]) + "(?:y|ie|i)"  # city -> cities, anatomy -> anatomical
    elif len(word) > 3 and word.endswith("e"):
        stem = re.escape(word[:-1]) + "e?"  # cocaine -> cocainism
    return stem + _SUFFIX


class Needles:
    """The names of a set of entities, compiled into one search."""

    def __init__(self, entities: Iterable[Entity], *, is_plain_word: Callable[[str], bool]) -> None:
        """``is_plain_word(w)`` says a lower-case acronym is also an ordinary word ("aids": the verb)."""
        names: dict[str, _Name] = {}
        for e in entities:
            written = {e.name, *e.keys}
            for raw in written:
                term = " ".join(_bare(raw).replace("_", " ").split())
                if not term or term.lower() in STOPWORDS:
                    continue
                letters = term.replace(".", "").replace(" ", "")
                acronym = term.lower() in e.acronyms or (len(letters) > 1 and letters.isupper())
                key = ("A:" if acronym else "W:") + term.lower()
                names.setdefault(key, _Name(term, e.name, acronym))
        self._names = list(names.values())
        # One small expression per name, tried only when its longest literal is in the text: a test of
        # substrings in C, where one alternation of every name would be tried at every position.
        self._checks: list[tuple[str, re.Pattern[str], int]] = []
        for i, n in enumerate(self._names):
            if n.acronym:
                letters = n.term.replace(".", "").replace(" ", "")
                cap = re.escape(letters.upper())
                pattern = f"(?<![{_LATIN}]){cap}(?![A-Z])"
                low = letters.lower()
                if not is_plain_word(low):
                    pattern += f"|(?<![\\w./:@-]){re.escape(low)}(?=$|\\s|[,.!?)\"']($|\\s))"
                self._checks.append((low, re.compile(pattern), i))
                continue
            words = [w for w in re.split(r"[\s\-]+", n.term.lower()) if w]
            if not words or (len(words) == 1 and len(words[0]) < 3):
                continue  # a two-letter word is not a name one can find in free text
            body = r"[\s\-_]+".join(_word_pattern(w) if w not in STOPWORDS else re.escape(w) for w in words)
            longest = max(words, key=len)
            literal = longest[:-1] if len(longest) > 4 and longest.endswith(("y", "e")) else longest
            self._checks.append((literal, re.compile(f"(?<![{_LATIN}])(?i:{body})(?![{_LATIN}])"), i))

    @property
    def terms(self) -> Sequence[str]:
        return [n.term for n in self._names]

    def find(self, text: str, *, strict: bool = False) -> Hit | None:
        """The first name in ``text`` (folded first), or None.

        A name is written as people write it: lower case, capitalised or in capitals, not "LoS".
        ``strict`` (printable runs of binary content): only a name standing as a word between
        spaces or punctuation counts, as random bytes form short words by chance.
        """
        if not self._checks or not text:
            return None
        folded = _joined(undot(_bare(fold(text))))
        low = folded.lower()
        for literal, search, i in self._checks:
            if literal not in low:
                continue
            for m in search.finditer(folded):
                found = m.group()
                if not all(w.islower() or w.isupper() or w.istitle() for w in re.split(r"[\s\-_]+", found) if w):
                    continue
                if strict and not (_word_edge(folded, m.start() - 1) and _word_edge(folded, m.end())):
                    continue
                n = self._names[i]
                if not _in_a_word(folded, m.start(), m.end(), acronym=n.acronym):
                    continue
                return Hit(n.term, n.entity, m.start(), m.end())
        return None


def _bare(text: str) -> str:
    """``text`` without the diacritics of its Latin letters: decomposed, those marks removed, composed again (what
    other scripts decompose into: a Hangul syllable's jamo, "й"). Only a text that holds a letter or mark of the
    Latin blocks is read again (most texts are ASCII, or hold only punctuation and blanks outside it)."""
    if text.isascii() or not _MAY_BEAR_MARKS.search(text):
        return text
    return unicodedata.normalize("NFC", _MARKS_ON_LATIN.sub("", unicodedata.normalize("NFD", text)))


# Single letters joined by hyphens ("H-I-V") or written small with dots ("h.i.v.", "h. i. v."), at a word's start
# and with no letter after: a reader reads the acronym, as undot's "H.I.V.". Each expression opens with its
# separator, a literal the regex engine finds in C, and looks behind for the letter before it.
_HYPHENED_LETTERS = re.compile(r"-(?<=(?<![^\W\d_])[A-Z]-)[A-Z](?:-[A-Z])*(?![^\W\d_])")
_DOTTED_SMALL = re.compile(r"\.(?<=(?<![^\W\d_])[a-z]\.)(?: ?[a-z]\.)+[a-z]?(?![^\W\d_])")


def _joined(text: str) -> str:
    """``text`` with those letters joined ("H-I-V" -> "HIV", "h.i.v." -> "hiv"), for matching only."""
    found = [
        m
        for pattern, mark in ((_HYPHENED_LETTERS, "-"), (_DOTTED_SMALL, "."))
        if mark in text
        for m in pattern.finditer(text)
    ]
    if not found:
        return text
    out: list[str] = []
    pos = 0
    for m in sorted(found, key=lambda m: m.start()):
        start = m.start() - 1  # the first letter, before the separator the match opens with
        if start < pos:
            continue
        out.append(text[pos:start])
        out.append("".join(ch for ch in text[start : m.end()] if ch.isalpha()))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


_ALNUM_BEFORE = re.compile(r"[A-Za-z0-9]*\Z")
_ALNUM_AFTER = re.compile(r"[A-Za-z0-9]*")


def _in_a_word(text: str, start: int, end: int, *, acronym: bool) -> bool:
    """The name is part of a word a person wrote, not of an identifier or a hash ("a8VDk2Jx", "x9los7").

    Around the match, within its run of Latin letters and digits, there may be digits ("43HIV", "HIV1")
    and, after an acronym, lower-case letters ("HIVpositive"); anything else is random text.
    """
    before = _ALNUM_BEFORE.search(text, max(0, start - 64), start)
    after = _ALNUM_AFTER.match(text, end, end + 64)
    head = before.group() if before else ""
    tail = after.group() if after else ""
    if head and not head.isdigit():
        return False
    if not tail or tail.isdigit():
        return True
    return acronym and tail.isalpha() and tail.islower() and not head


def _word_edge(text: str, i: int) -> bool:
    return i < 0 or i >= len(text) or text[i].isspace() or text[i] in ".,;:!?'\"()[]"
