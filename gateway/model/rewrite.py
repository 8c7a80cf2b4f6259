"""Writing replacements into text so that it still reads as English.

"an HIV test" must become "an infection test" and "a test for HIV" stay "a
test for infection"; "Transfusions were" becomes "Insertions were". A
redaction marker never keeps an "an" before it: the article would tell the
reader the hidden word starts with a vowel.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.model.taxonomy import PartOfSpeech
from gateway.model.terms import MARKER_WORD, STOPWORDS, Token, sentence_starts
from gateway.quickinit import quick_init

REDACTION_MARKER = f"[{MARKER_WORD}]"

_ARTICLE = re.compile(r"\b(a|an|A|An|AN)([ \t]+)$")
# Letters whose English names start with a vowel sound: "an FBI agent", "an HIV test".
_VOWEL_SOUND_LETTERS = frozenset("AEFHILMNORSX")
_CONSONANT_SOUND_PREFIXES = ("uni", "use", "usu", "ure", "uro", "eu", "one", "once", "ubi", "uti")
_SILENT_H = ("hour", "honest", "honor", "honour", "heir")


def indefinite_article(phrase: str) -> str:
    word = phrase.split(" ", 1)[0]
    if not word:
        return "a"
    if len(word) > 1 and word.isupper():
        return "an" if word[0] in _VOWEL_SOUND_LETTERS else "a"
    low = word.lower()
    if low.startswith(_SILENT_H):
        return "an"
    if low[0] in "aeiou" and not low.startswith(_CONSONANT_SOUND_PREFIXES):
        return "an"
    return "a"


@quick_init
@dataclass(frozen=True, slots=True)
class Edit:
    """Replace text[start:end] by ``text``; start may reach back over an article."""

    start: int
    end: int
    text: str
    term_start: int  # where the term itself began (after any article)


@dataclass(frozen=True, slots=True)
class Rewritten:
    text: str
    edits: tuple[Edit, ...]
    # Where each edit's replacement stands in the rewritten text.
    new_starts: tuple[int, ...] = ()
    new_ends: tuple[int, ...] = ()

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Map a span of the rewritten text back to the original text.

        A span inside (or overlapping) a replacement maps to the whole span
        that replacement stood for.
        """
        i = bisect.bisect_right(self.new_starts, start) - 1
        if i < 0:
            out_start = start
        elif start < self.new_ends[i]:
            out_start = self.edits[i].term_start  # the term, not an article fixed before it
        else:
            out_start = start - (self.new_ends[i] - self.edits[i].end)
        j = bisect.bisect_left(self.new_starts, end) - 1
        if j < 0:
            out_end = end
        elif end <= self.new_ends[j]:
            out_end = self.edits[j].end
        else:
            out_end = end - (self.new_ends[j] - self.edits[j].end)
        return out_start, out_end


def surface_replacement(
    replacement: str,
    *,
    original: str,
    tokens: Sequence[Token],
    plural: Callable[[str], str],
    sentence_initial: bool,
    shouting: bool,
    determiner_before: bool = False,
    lemmatize: Callable[[str], str] | None = None,
    name: bool | None = None,
    pos: PartOfSpeech = "n",
    conjugate: Callable[[str, str], str] | None = None,
    attached: bool = False,
) -> str:
    """Inflect and case ``replacement`` like the ``original`` surface form.

    A verb takes the original's tense ("bitten" -> "gripped"); an adjective (or a noun standing as
    one, "microorganism infection") takes neither a plural nor an article. ``attached``: the original
    is written onto what stands before it ("3.6GHz", "8GB"), a unit and not a name: no article.
    """
    if replacement == REDACTION_MARKER:
        return replacement
    if pos != "n":
        out = conjugate(replacement, original) if pos == "v" and conjugate is not None else replacement
        if shouting:
            return out.upper()
        return out[:1].upper() + out[1:] if sentence_initial else out
    out = replacement
    last = tokens[-1]
    # "Beverly Hills" is a name, not a plural: only common nouns inflect.
    is_name = all(t.text[:1].isupper() for t in tokens) and (len(tokens) > 1 or not sentence_initial)
    if name is not None and all(t.text[:1].isupper() for t in tokens):
        is_name = name  # what the rest of the text says of this term (a name opening a sentence is a name)
    if is_name and len(tokens) == 1 and _looks_plural(last):
        # "Texans", "Catholics": people of a kind, a plural common noun ("met Texans" -> "met Americans", not
        # "met an American"); a place whose name ends so is its own lemma ("Wales", "Athens").
        is_name = False
    if not is_name and _looks_plural(last) and _countable_singular(out, lemmatize):
        out = plural(out)
    # A name, when its head is one ("Atlanta"); "American state" is a common noun and takes an article.
    proper = replacement.rsplit(" ", 1)[-1][:1].isupper()
    if is_name and not proper and not determiner_before and not attached and not original.isupper():
        # "in Los Angeles" -> "in a city": a name needs no article, a common noun does.
        out = f"{indefinite_article(out)} {out}"
    if shouting:
        return out.upper()
    if sentence_initial and not proper:
        return out[:1].upper() + out[1:]
    return out


# Heads that take no plural: "ill healths", "informations" are not English. General
# English mass nouns, not terms of any one document.
_UNCOUNTABLE = frozenset(
    """health information advice equipment knowledge research evidence furniture software hardware music
    money news weather traffic welfare wealth poverty literature machinery luggage baggage clothing homework
    progress pollution safety violence courage education transport transportation behaviour behavior conduct
    abuse use usage agriculture management leadership employment unemployment immigration mail media
    medicine psychology physiology biology chemistry physics mathematics economics politics ethics
    worship religion belief faith spirituality sexuality heterosexuality homosexuality christianity
    infancy childhood adulthood disability illness wellness fitness nutrition diet warfare peace justice
    freedom liberty democracy socialism capitalism communism nationalism philosophy theology art""".split()
)


def _countable_singular(replacement: str, lemmatize: Callable[[str], str] | None) -> bool:
    """Should a plural original make this replacement plural? Not a mass noun, not already plural."""
    low = replacement.rsplit(" ", 1)[-1].lower()
    if low in _UNCOUNTABLE or low.endswith(("ness", "ism", "ity", "ics")):
        return False
    # A WordNet lemma already in the plural ("States", "arms"): one more "s" makes "stateses".
    return not (lemmatize is not None and low.endswith("s") and lemmatize(low) != low)


def _looks_plural(tok: Token) -> bool:
    low = tok.text.lower()
    if low == tok.norm or tok.text.isupper():
        return False
    return low.endswith("s") and not low.endswith("ss")


def apply_edits(text: str, edits: Sequence[Edit]) -> Rewritten:
    ordered = sorted(edits, key=lambda e: e.start)
    parts: list[str] = []
    pos = 0
    out_len = 0
    kept: list[Edit] = []
    starts: list[int] = []
    ends: list[int] = []
    for e in ordered:
        if e.start < pos:  # overlapping edits: the earlier one wins
            continue
        parts.append(text[pos : e.start])
        out_len += e.start - pos
        starts.append(out_len)
        parts.append(e.text)
        out_len += len(e.text)
        ends.append(out_len)
        pos = e.end
        kept.append(e)
    parts.append(text[pos:])
    return Rewritten("".join(parts), tuple(kept), tuple(starts), tuple(ends))


def cased_like(old: str, article: str) -> str:
    """``article`` ("a"/"an") written in the case of the article it replaces ("An", "AN")."""
    if old.isupper() and len(old) > 1:
        return article.upper()
    return article.capitalize() if old[0].isupper() else article


def with_article(text: str, start: int, end: int, replacement: str) -> Edit:
    """An edit for text[start:end], fixing an indefinite article just before it."""
    m = _ARTICLE.search(text, max(0, start - 8), start)
    if m is None:
        return Edit(start, end, replacement, start)
    old = m.group(1)
    new = cased_like(old, "a" if replacement == REDACTION_MARKER else indefinite_article(replacement))
    if new == old:
        return Edit(start, end, replacement, start)
    return Edit(m.start(1), end, new + m.group(2) + replacement, start)


_DETERMINERS = frozenset(
    "a an the this that these those my your his her its our their some any no each every "
    "another which what whose "
    # quantifiers and numbers stand where an article would: "most Methodists", "two Texans"
    "most many several few all both various numerous either neither "
    "one two three four five six seven eight nine ten dozens hundreds thousands millions".split()
)


_INTENSIFIERS = frozenset("much very more most so too quite rather far less least".split())
_WORDS_BEFORE = re.compile(r"([\w'\u2019\[\].-]+)[ \t]+$")


def determiner_before(text: str, start: int) -> bool:
    """Does the noun phrase at ``start`` already have a determiner, or sit inside a longer name?

    "the much larger Atlanta area", "Western and Atlantic Railroad", "[REDACTED]
    International Airport": an article added there would not be English.
    """
    if text[max(0, start - 2) : start] in ("'s", "\u2019s"):
        return True
    pos = start
    for i in range(4):
        m = _WORDS_BEFORE.search(text, max(0, pos - 40), pos)
        if m is None:
            return False
        word = m.group(1)
        low = word.lower()
        if low in _DETERMINERS or low.endswith(("'s", "\u2019s")):
            return True
        if i == 0 and (word == REDACTION_MARKER or word[:1].isupper()):
            # The previous word is capitalized (or a gap): this word is part of a longer name.
            return not sentence_initial(text, m.start(1), sentence_starts_near(text, m.start(1)))
        if low in _INTENSIFIERS or (low.isalpha() and low.islower() and low not in STOPWORDS):
            pos = m.start(1)
            continue
        return False
    return False


def sentence_starts_near(text: str, pos: int) -> list[int]:
    """Sentence starts around ``pos`` (enough for ``sentence_initial``)."""
    lo = max(0, pos - 400)
    return [lo + s for s in sentence_starts(text[lo : pos + 1])]


def sentence_initial(text: str, start: int, sentence_starts: Sequence[int]) -> bool:
    i = bisect.bisect_right(sentence_starts, start) - 1
    head = text[sentence_starts[i] if i >= 0 else 0 : start]
    if not any(ch.isalnum() for ch in head):
        return True
    return _opens_a_line(text, start)


def _opens_a_line(text: str, start: int) -> bool:
    """First word of a line that follows a finished one: a paragraph whose end the splitter missed
    ("...sea level.[14]" then a new line). A hard-wrapped line of mail continues its sentence."""
    nl = text.rfind("\n", 0, start)
    if nl < 0 or text[nl + 1 : start].strip():
        return False
    prev = text[text.rfind("\n", 0, nl) + 1 : nl].rstrip()
    return not prev or prev[-1] in ".!?:;]\"')" or len(prev) < 40


@quick_init
@dataclass(frozen=True, slots=True)
class TextEdit:
    """text[start:end] of the *original* text became ``text``."""

    start: int
    end: int
    text: str


def compose(base: Sequence[TextEdit], current: str, later: Sequence[Edit]) -> list[TextEdit]:
    """Edits on the original, given ``base`` (original -> current) and ``later`` (on current).

    A later edit that touches text an earlier one wrote merges with it: the
    result replaces the earlier edit's original span by the final text.
    """
    located: list[tuple[int, int, TextEdit | None, Edit | None]] = []
    shift = 0
    for b in sorted(base, key=lambda x: x.start):
        cs = b.start + shift
        located.append((cs, cs + len(b.text), b, None))
        shift += len(b.text) - (b.end - b.start)
    for e in later:
        located.append((e.start, e.end, None, e))
    located.sort(key=lambda x: (x[0], x[1]))
    # Sweep overlapping intervals into clusters. An earlier deletion is empty in ``current``: where a cluster ends
    # at it, the cluster's end maps past the deleted span (to_original), so the deletion joins the cluster; left
    # as a cluster of its own, its span was edited twice, and the offsets after it were off by its length (found
    # as mail held for "segment layout lost": "a greater cognitive decline" -> "an extraordinary process" with
    # "cognitive" left out, then "an extraordinary " -> "a ").
    clusters: list[list[tuple[int, int, TextEdit | None, Edit | None]]] = []
    hi = -1
    for item in located:
        lo_i, hi_i = item[0], item[1]
        if clusters and (lo_i < hi or (lo_i == hi == hi_i and item[2] is not None)):
            clusters[-1].append(item)
            hi = max(hi, hi_i)
        else:
            clusters.append([item])
            hi = hi_i
    deltas = sorted((cs + len(b.text), len(b.text) - (b.end - b.start)) for cs, _ce, b, _ in located if b is not None)
    ends = [end for end, _d in deltas]
    shifts = list(itertools.accumulate((d for _end, d in deltas), initial=0))  # shifts[i]: the first i deltas

    def to_original(pos: int) -> int:
        return pos - shifts[bisect.bisect_right(ends, pos)]

    out: list[TextEdit] = []
    for cluster in clusters:
        later_edits = [x[3] for x in cluster if x[3] is not None]
        bases = [x[2] for x in cluster if x[2] is not None]
        if not later_edits:
            out.extend(bases)
            continue
        lo = min(x[0] for x in cluster)
        hi_c = max(x[1] for x in cluster)
        pieces: list[str] = []
        pos = lo
        for edit in sorted(later_edits, key=lambda x: x.start):
            pieces.append(current[pos : edit.start])
            pieces.append(edit.text)
            pos = edit.end
        pieces.append(current[pos:hi_c])
        start = min([b.start for b in bases] + [to_original(lo)])
        end = max([b.end for b in bases] + [to_original(hi_c)])
        out.append(TextEdit(start, end, "".join(pieces)))
    return sorted(out, key=lambda x: x.start)


def apply_text_edits(text: str, edits: Sequence[TextEdit]) -> str:
    out: list[str] = []
    pos = 0
    for e in sorted(edits, key=lambda x: x.start):
        out.append(text[pos : e.start])
        out.append(e.text)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)


_MARKER_RUN = re.compile(
    re.escape(REDACTION_MARKER) + r"(?:(?:[ \t]+|[ \t]*[-/][ \t]*)" + re.escape(REDACTION_MARKER) + r")+"
)


def _in_word(ch: str) -> bool:
    return bool(ch) and unicodedata.category(ch)[0] in "LM"


_FIRST_WORD = re.compile(r"\S+")


def agree_articles(rewritten: Rewritten) -> list[Edit]:
    """Edits that make "a"/"an" agree with the word now after it, at the borders of a round's edits.

    Each edit fixes the article before its own term (``with_article``), but two edits of one round do not see
    each other: leaving out "infected" in "an infected mosquito" wrote "a" for "mosquito", which the same round
    replaced by "animal" ("a animal").
    """
    text = rewritten.text
    edits: list[Edit] = []
    done: set[int] = set()
    for pos in sorted({*rewritten.new_starts, *rewritten.new_ends}):
        m = _ARTICLE.search(text, max(0, pos - 8), pos)
        word = _FIRST_WORD.match(text, pos)
        if m is None or word is None or m.start(1) in done:
            continue
        done.add(m.start(1))
        old = m.group(1)
        new = cased_like(old, indefinite_article(word.group().lstrip("\"'(“‘")))
        if new != old:
            edits.append(Edit(m.start(1), m.end(1), new, m.start(1)))
    return edits


def tidy_markers(text: str) -> list[Edit]:
    """Edits that make redactions read as one gap each.

    A run of markers ("[REDACTED] [REDACTED] [REDACTED]") becomes one, and a
    marker inside a word (a script whose words the tokenizer splits, such as
    Arabic with its vowel marks) takes the whole word: half a word beside a
    gap tells the reader what the gap held.
    """
    edits: list[Edit] = []
    pos = 0
    n = len(text)
    for m in re.finditer(re.escape(REDACTION_MARKER), text):
        if m.start() < pos:
            continue
        start, end = m.start(), m.end()
        run = _MARKER_RUN.match(text, start)
        if run is not None:
            end = run.end()
        while start > 0 and _in_word(text[start - 1]):
            start -= 1
        while end < n and _in_word(text[end]):
            end += 1
        if (start, end) != m.span():
            edits.append(Edit(start, end, REDACTION_MARKER, start))
        pos = end
    return edits
