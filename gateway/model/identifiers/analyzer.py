"""The analyzer: every recognizer over a text, overlaps settled, one list of findings.

Like Presidio's AnalyzerEngine, it only finds; what to write instead is the
anonymizer's business (anonymizer.py).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace

import phonenumbers

from gateway.model.identifiers import kinds as K
from gateway.model.identifiers.finding import Finding, Role
from gateway.model.identifiers.lowered import Lowered
from gateway.model.identifiers.names import TITLES, Lexicon, NameRecognizer, ordinary_mentions
from gateway.model.identifiers.patterns import LABELLED, shape_of, structured
from gateway.model.identifiers.prose import widen
from gateway.model.normalize import fold_with_offsets

NAME_KINDS = frozenset({K.PERSON, K.ORG, K.LOC, K.DEM, K.MISC})
# Numbers and codes that only ever become a placeholder: nothing of them is kept (a date keeps its year, a ZIP
# code its first digits), so two of them that overlap can be joined into one.
_OPAQUE_KINDS = frozenset({K.PHONE, K.FAX, K.EMAIL, K.SSN, K.MRN, K.HEALTH_PLAN, K.ACCOUNT, K.LICENSE, K.VEHICLE,
                           K.DEVICE, K.URL, K.IP, K.IBAN, K.CARD, K.NATIONAL_ID, K.CODE})  # fmt: skip


class Analyzer:
    def __init__(self, *, lexicon: Lexicon) -> None:
        self._lexicon = lexicon
        self._names = NameRecognizer(lexicon)
        self._structured = structured()
        # phonenumbers compiles its metadata's patterns at every parse (re.compile, through the re module's
        # cache lookup, ~100 times a message) unless told to keep them: its own switch, process-wide, kept
        # to the few regions' patterns a parse touches.
        phonenumbers.enable_pattern_cache()

    def is_ordinary_name(self, value: str, kind: str | None) -> bool:
        """A person's name of one word that is also an ordinary word ("Grace", "Long"): written in lower case
        it is the word ("by the grace of"), not the name."""
        return kind == K.PERSON and " " not in value and self._lexicon.is_ordinary(value)

    def analyze(
        self, text: str, kinds: Collection[str], *, addresses: Collection[str] = (), roles: Sequence[Role] = ()
    ) -> list[Finding]:
        """Findings of the given kinds, none overlapping another, in text order.

        The text is read as a reader sees it (normalize.fold: "123\u200b-45-6789", "５５５-123-4567", a soft
        hyphen inside a name), and each finding covers the original characters, invisible ones included.
        ``addresses``: e-mail addresses a reader sees beside the text (a header's), read as the text's own.
        ``roles``: who wrote each part of the text (parts are separated by U+2029, as a message's segments are),
        in order; none given, every part is prose.
        """
        return self.analyze_lowered(text, kinds, addresses=addresses, roles=roles)[0]

    def analyze_lowered(
        self, text: str, kinds: Collection[str], *, addresses: Collection[str] = (), roles: Sequence[Role] = ()
    ) -> tuple[list[Finding], Lowered]:
        """``analyze``, and the text in lower case with the searches made in it (where the text was read as it
        stands, unfolded), for the pass's later searches of the same values."""
        view = fold_with_offsets(text)
        if view is None:
            lowered = Lowered(text)
            return self._analyze(text, kinds, addresses, lowered, roles), lowered
        folded, starts, ends = view
        out: list[Finding] = []
        for f in self._analyze(folded, kinds, addresses, Lowered(folded), roles):
            start, end = starts[f.start], ends[f.end - 1]
            out.append(f.moved(start, end, text[start:end]))
        return out, Lowered(text)

    def _analyze(
        self, text: str, kinds: Collection[str], addresses: Collection[str], lowered: Lowered, roles: Sequence[Role]
    ) -> list[Finding]:
        wanted = frozenset(kinds)
        found: list[Finding] = []
        # The paragraph separator is the border between two parts of a message, and "\s" matches it: a date,
        # address or age read on would take in the next part's first characters ("on 3 May" + "2023-05-04"),
        # be dropped below for crossing it, and leave both parts' values unfound. The structured recognizers
        # read a NUL there instead (one character for one: the offsets hold), which no blank run crosses.
        scan = text.replace("\u2029", "\x00") if "\u2029" in text else text
        shape = shape_of(scan)  # computed once: the recognizers skip the scans it rules out
        for produces, recognizer in self._structured:
            if produces & wanted:
                found.extend(f for f in recognizer(scan, shape) if f.kind in wanted)
        if NAME_KINDS & wanted:
            found.extend(self._names(text, wanted, roles, _domain_words(addresses)))
        if K.PERSON in wanted:
            found.extend(
                _address_names(
                    text, [*addresses, *(f.text for f in found if f.kind == K.EMAIL)], self._lexicon, lowered
                )
            )
        # Nothing crosses a paragraph separator: in a message that is the border between two parts.
        found = _without_labels(text, resolve_overlaps([f for f in found if "\u2029" not in text[f.start : f.end]]))
        if K.PERSON in wanted and (parts := ordinary_mentions(text, found, self._lexicon)):
            found = resolve_overlaps([*found, *parts])
        found = _join_ranges(text, resolve_overlaps([*found, *_recurrences(text, found, lowered)]))
        return widen(text, found, self._lexicon)


def _domain_words(addresses: Collection[str]) -> frozenset[str]:
    """The words of the addresses' domain names, top-level domains aside: "ettus" of usrp-users@lists.ettus.com."""
    if not addresses:
        return frozenset()
    return frozenset(w for a in addresses for w in a.rpartition("@")[2].lower().split(".")[:-1] if len(w) >= 3)


_LOCAL_PARTS = re.compile(r"[._-]")
_NAME_GAP = (" ", "\t")  # what stands before a name's last word (text[at - 1 : at], "" at the text's start)
_ADDRESS_NAME_SCORE = 0.75  # above a capitalised phrase (0.7): the address confirms where the name ends


def _address_names(
    text: str, addresses: Sequence[str], lexicon: Lexicon, lowered: Lowered | None = None
) -> list[Finding]:
    """A name the text writes as its address spells it: "Nidhi Panda" beside nidhi.panda@..., "Rob Kossler"
    beside rkossler@... . The capitalised-phrase reading stops at a word that is also an ordinary one ("Panda",
    "Rob", "Das"), and the half it does not take stays beside the placeholder; the address says the words are
    one person's name. At least one word must be no ordinary word, or "Support Team" beside support.team@
    would be a person."""
    out: list[Finding] = []
    seen: set[str] = set()
    lowered = Lowered(text) if lowered is None else lowered
    for address in addresses:
        local = address.partition("@")[0].lower()
        if local in seen:
            continue
        seen.add(local)
        parts = _LOCAL_PARTS.split(local)
        if 2 <= len(parts) <= 3 and all(p.isalpha() and len(p) >= 2 for p in parts):
            words, last = [re.escape(p) for p in parts], parts[-1]
        elif len(parts) == 1 and local.isalpha() and len(local) >= 5:  # an initial and a surname
            words, last = [re.escape(local[0]) + r"[^\W\d_]*", re.escape(local[1:])], local[1:]
        else:
            continue
        low = lowered.low
        # The last word is searched for as a plain string (most addresses' words are nowhere else in the
        # text); the name is matched only where it ends there, after a blank (the name's words are joined by
        # blanks: most places the word stands are in the address itself, "nidhi.panda@", and are not tried),
        # and the pattern is compiled only then (addresses are many: most would miss the re module's cache).
        name: re.Pattern[str] | None = None
        aligned = len(low) == len(text)  # else a place in the lower case is not the text's (as before: tried)
        at = low.find(last)
        while at != -1:
            end = at + len(last)
            if (not aligned or text[at - 1 : at] in _NAME_GAP) and not (
                text[end : end + 1].isalnum() or text[end : end + 1] == "_"
            ):
                if name is None:
                    name = re.compile(r"[ \t]+".join(f"({w})" for w in words) + r"\Z", re.IGNORECASE)
                m = name.search(text, max(0, at - 64), end)
                if m is not None and (m.start() == 0 or not text[m.start() - 1].isalnum()):
                    names = m.groups()
                    if all(n[0].isupper() for n in names) and not all(lexicon.is_ordinary(n) for n in names):
                        out.append(Finding(start=m.start(), end=end, kind=K.PERSON, text=m.group(),
                                           score=_ADDRESS_NAME_SCORE, source="name of an address"))  # fmt: skip
            at = low.find(last, end)
    return out


_LABEL_GAP = re.compile(r"[ \t]*[:#.]?[ \t]*")


def _without_labels(text: str, found: list[Finding]) -> list[Finding]:
    """An acronym right before a number found as such ("SSN 123-45-6789", "IBAN DE89 ...", "MRN: 4471") names
    the number's kind, not anybody: the number is replaced, its label stays. Found as a name it became
    "[MISC] [SSN]", and every other "SSN" of the text with it."""
    out: list[Finding] = []
    for i, f in enumerate(found):
        nxt = found[i + 1] if i + 1 < len(found) else None
        if (f.kind == K.MISC and f.source == "acronym" and nxt is not None and nxt.kind not in NAME_KINDS
                and _LABEL_GAP.fullmatch(text, f.end, nxt.start)):  # fmt: skip
            continue
        out.append(f)
    return out


# Blanks but the paragraph separator, the border between two parts of a message: nothing is joined across it.
_RANGE_JOIN = re.compile(r"[^\S\u2029]*(?:-|–|—|to|and|until|till|or)[^\S\u2029]*")
_RANGE_OPEN = re.compile(r"(?:between|from)[^\S\u2029]+$", re.IGNORECASE)


def _join_ranges(text: str, found: list[Finding]) -> list[Finding]:
    """ "between 1 and 5 March 2000", "from 2 to 9 May": one span of time, not two dates and a gap."""
    out: list[Finding] = []
    for f in found:
        prev = out[-1] if out else None
        if (prev is not None and prev.kind == f.kind and f.kind in (K.DATE, K.DURATION)
                and _RANGE_JOIN.fullmatch(text, prev.end, f.start)):  # fmt: skip
            m = _RANGE_OPEN.search(text, max(0, prev.start - 10), prev.start)
            start = m.start() if m else prev.start
            parts = f.parts or prev.parts
            if f.part("year") == f.text and prev.part("year") == prev.text:
                parts = (("year", text[start : f.end]),)  # years alone, "from 1994 to 2004": a span of years
            out[-1] = Finding(
                start=start,
                end=f.end,
                kind=f.kind,
                text=text[start : f.end],
                score=min(prev.score, f.score),
                source=prev.source,
                parts=parts,
            )
            continue
        out.append(f)
    return out


def _recurrences(text: str, found: Sequence[Finding], lowered: Lowered | None = None) -> list[Finding]:
    """Every other occurrence of a value found once: what is an identifier in one place is one everywhere.

    With ``lowered`` (the text in lower case), each value is searched for there, and its occurrences in its own
    case taken from those: the pass searches the lower case again for the values it replaces (in another case)."""
    values: dict[str, Finding] = {}
    for f in found:
        # Every value, another mention's too ("USRP" after "Dear USRP Community" recurs in "USRP-users"): the
        # check before sending looks for each replaced value wherever it stands, and holds the text if it is left.
        if len(f.text) >= 3 and f.text.strip() == f.text and f.score >= 0.5:
            values.setdefault(f.text, f)
    taken = {(f.start, f.end) for f in found}
    out = []
    spans = find_words(text, values) if lowered is None or not lowered.aligned() else _words_in(lowered, values)
    for start, end in spans:
        if (start, end) not in taken:
            f = values[text[start:end]]
            # Built as the dataclass is, not by dataclasses.replace (three times the time, 6 a message).
            out.append(Finding(start=start, end=end, kind=f.kind, text=f.text, score=f.score - 0.01,
                               source=f"{f.source}, again", parts=f.parts))  # fmt: skip
            taken.add((start, end))
    return out + _respellings(text, found, taken, lowered)


_PERSON_WORD = re.compile(r"[^\W\d_]{2,}")


def _respellings(
    text: str, found: Sequence[Finding], taken: set[tuple[int, int]], lowered: Lowered | None = None
) -> list[Finding]:
    """A person found as "John Doe" is the same person as "john_doe" in a file name, "JOHN DOE" in a header or
    "john.doe" in a path: the name's words in any case, joined by a blank, "_", "." or "-", between letters
    that are not part of it (a file name's "_" is a border, as a blank is)."""
    people: dict[tuple[str, ...], Finding] = {}
    read: set[str] = set()  # a name's words are read once: its other findings (mentions) give the same words
    for f in found:
        if f.kind == K.PERSON and f.score >= 0.5 and f.text not in read:
            read.add(f.text)
            words = tuple(w.lower() for w in _PERSON_WORD.findall(f.text) if w.lower().rstrip(".") not in TITLES)
            if len(words) >= 2:
                people.setdefault(words, f)
    if not people:
        return []
    low = text.lower() if lowered is None else lowered.low
    if len(low) != len(text):  # a letter whose lower case is longer ("İ"): offsets would not hold
        return []
    out = []
    for words, f in people.items():
        for start, end in _spelt(low, words):
            if (start, end) in taken or "\u2029" in text[start:end]:
                continue
            taken.add((start, end))
            out.append(replace(f, start=start, end=end, text=text[start:end], score=f.score - 0.02,
                               source=f"{f.source}, spelt otherwise"))  # fmt: skip
    return out


def _spelt(low: str, words: tuple[str, ...]) -> Iterator[tuple[int, int]]:
    """Where ``words`` stand in ``low`` (lower-cased), one or two of " ._-" between them, no letter around."""
    first = words[0]
    i = low.find(first)
    while i >= 0:
        j = i + len(first)
        if i == 0 or not low[i - 1].isalpha():
            for w in words[1:]:
                k = j
                while k < len(low) and k - j < 2 and low[k] in " ._-":
                    k += 1
                if k == j or not low.startswith(w, k):
                    break
                j = k + len(w)
            else:
                if j == len(low) or not low[j].isalpha():
                    yield i, j
        i = low.find(first, i + 1)


def find_words(text: str, values: Collection[str]) -> list[tuple[int, int]]:
    """Where each value stands in the text as a whole word (str.find: no pattern compiled per message)."""
    out = []
    for v in values:
        i = text.find(v)
        while i >= 0:
            j = i + len(v)
            if (i == 0 or (not text[i - 1].isalnum() and text[i - 1] != "_")) and (
                j == len(text) or (not text[j].isalnum() and text[j] != "_")
            ):
                out.append((i, j))
            i = text.find(v, i + 1)
    return out


def _words_in(lowered: Lowered, values: Collection[str]) -> list[tuple[int, int]]:
    """``find_words(lowered.text, values)``, from where each value's lower case stands in the lower case (the text
    must be ``aligned``: then every occurrence of a value is one of its lower case's)."""
    text = lowered.text
    out = []
    for v in values:
        size = len(v)
        for i in lowered.where(v.lower()):
            j = i + size
            if (
                text.startswith(v, i)
                and (i == 0 or (not text[i - 1].isalnum() and text[i - 1] != "_"))
                and (j == len(text) or (not text[j].isalnum() and text[j] != "_"))
            ):
                out.append((i, j))
    return out


def resolve_overlaps(found: list[Finding]) -> list[Finding]:
    """The surest finding wins a contested stretch of text; among equals, the longer.

    A number or code that loses to another (both of kinds only ever replaced whole) still tells where the
    value is: where it reaches past the winner ("SN 58823" won over "58823-AX"), the winner grows to cover
    both, so no piece of the value is left in the text; where it is the same stretch read under an explicit
    label ("account number 0043318821", which phonenumbers also accepts), the label names the kind.

    A name that loses to a surer reading of part of it as the same kind ("Jakub" found again where a greeting
    named him, inside "Jakub Rybka") is the longer name: the winner grows to cover it, or the surname stays; a
    person's name that shares a word with the winner's grows it to both.
    """
    kept: list[Finding] = []
    starts: list[int] = []  # kept spans, sorted and disjoint
    ends: list[int] = []
    lost: list[Finding] = []
    for f in sorted(found, key=lambda f: (-f.score, f.start - f.end, f.start)):  # the longer first (no property call)
        start, end = f.start, f.end
        if start >= end:
            continue
        i = bisect.bisect_right(starts, start)
        if (i > 0 and ends[i - 1] > start) or (i < len(starts) and starts[i] < end):
            if f.kind in _OPAQUE_KINDS or f.kind in NAME_KINDS:
                lost.append(f)
            continue
        starts.insert(i, start)
        ends.insert(i, end)
        kept.append(f)
    kept.sort(key=lambda f: f.start)
    for f in lost:
        i = bisect.bisect_right(starts, f.start)
        if i > 0 and starts[i - 1] == f.start and ends[i - 1] == f.end and f.kind in NAME_KINDS:
            # A name read again over the very span kept (a mention found twice): nothing below would change
            # (_merge_people needs two readings inside it, and a name grows only to a longer one).
            continue
        if f.kind == K.PERSON and _merge_people(f, kept, starts, ends):
            continue
        hits = [j for j in (i - 1, i) if 0 <= j < len(kept) and starts[j] < f.end and ends[j] > f.start]
        if len(hits) != 1:
            continue
        j = hits[0]
        g = kept[j]
        if f.kind in NAME_KINDS:
            # A person's name read twice with a word in common ("Puertas Blanco" and "Blanco, Roberto") is one
            # name: the union, or a word of it stays beside the placeholder.
            if g.kind != f.kind or (f.kind != K.PERSON and not f.start <= g.start <= g.end <= f.end):
                continue
        elif g.kind not in _OPAQUE_KINDS:
            continue
        if (f.start, f.end) == (g.start, g.end):
            if f.source == LABELLED and f.kind != K.CODE and g.source != LABELLED:
                kept[j] = replace(g, kind=f.kind, parts=())
            continue
        start, end = min(f.start, g.start), max(f.end, g.end)
        if (j > 0 and ends[j - 1] > start) or (j + 1 < len(kept) and starts[j + 1] < end):
            continue
        text = (f.text[: g.start - f.start] if f.start < g.start else "") + g.text
        text += f.text[g.end - f.start :] if f.end > g.end else ""
        kept[j] = replace(g, start=start, end=end, text=text, parts=())
        starts[j], ends[j] = start, end
    return kept


def _merge_people(f: Finding, kept: list[Finding], starts: list[int], ends: list[int]) -> bool:
    """A person's name that lost to several surer readings of its words ("Blanco" and "Roberto" inside "Puertas
    Blanco, Roberto") is one person: the readings become one finding covering the name, if only people's
    names stood inside it."""
    lo = bisect.bisect_right(starts, f.start)
    if lo > 0 and ends[lo - 1] > f.start:
        lo -= 1
    hi = lo
    while hi < len(kept) and starts[hi] < f.end:
        hi += 1
    if hi - lo < 2 or any(kept[j].kind != K.PERSON for j in range(lo, hi)):
        return False
    start, end = min(f.start, starts[lo]), max(f.end, ends[hi - 1])
    text = kept[lo].text[: f.start - starts[lo]] + f.text + kept[hi - 1].text[len(kept[hi - 1].text) - (end - f.end) :]
    best = max(range(lo, hi), key=lambda j: kept[j].score)
    kept[lo:hi] = [replace(kept[best], start=start, end=end, text=text, parts=())]
    starts[lo:hi] = [start]
    ends[lo:hi] = [end]
    return True
