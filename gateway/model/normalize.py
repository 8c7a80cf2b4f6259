"""Spellings that look the same to a reader, folded to one before matching.

A reader sees "ＨＩＶ" (full width), "H\u00adIV" (a soft hyphen inside), "НIV"
(a Cyrillic capital en) and "H.I.V." as HIV. So must every matcher: the
tokenizer, when it computes a word's key, and the verifier, when it searches
the raw output for an entity's names. Both fold with ``fold`` so that they
agree on what a spelling is.

Folding: NFKC (full width, ligatures, superscripts), invisible format
characters removed (soft hyphen, zero-width space/joiners, word joiner, BOM,
bidi controls: Unicode category Cf), and the Cyrillic and Greek letters that
are drawn like Latin ones mapped to those Latin letters, in words that are
otherwise Latin (a word wholly in Cyrillic or Greek is left alone: it is a
word of that language, not a disguise).
"""

from __future__ import annotations

import re
import unicodedata

# Cyrillic and Greek letters a reader takes for Latin ones (Unicode's confusables.txt, the letters only).
_LOOKALIKES = {
    # Cyrillic capitals
    "А": "A", "В": "B", "Е": "E", "З": "3", "І": "I", "Ј": "J", "К": "K", "М": "M", "Н": "H", "О": "O",
    "Р": "P", "С": "C", "Ѕ": "S", "Т": "T", "Х": "X", "Ү": "Y", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
    # Cyrillic small
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k", "о": "o", "р": "p",
    "ԛ": "q", "ѕ": "s", "ԝ": "w", "х": "x", "у": "y", "ү": "y", "ӏ": "l",
    # Greek capitals
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Greek small
    "α": "a", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
}  # fmt: skip
_LOOKALIKE_TABLE = str.maketrans(_LOOKALIKES)
_LOOKALIKE_CHARS = "".join(_LOOKALIKES)
# A run of letters (and the invisibles that may hide inside one) that holds a look-alike.
_ANY_LOOKALIKE = re.compile(f"[{_LOOKALIKE_CHARS}]")
_DISGUISED = re.compile(rf"[^\W\d_]*[{_LOOKALIKE_CHARS}][^\W\d_]*")
# Format characters (Unicode category Cf, as of Unicode 14): invisible, so nothing a reader sees.
_INVISIBLE_BMP = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
)
INVISIBLE_CLASS = (
    _INVISIBLE_BMP + "\U000110bd\U000110cd\U00013430-\U00013438"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_INVISIBLE = re.compile(f"[{INVISIBLE_CLASS}]")
# The class without its astral ranges, for a text that holds no character beyond the BMP (nearly every text): the
# regex engine tests a character against the astral ranges one by one, which made the removal four times dearer.
_INVISIBLE_IN_BMP = re.compile(f"[{_INVISIBLE_BMP}]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")
# Hyphens that only join (no dash of prose): the hyphen, the non-breaking hyphen a word processor puts into a phone
# number (NFKC makes it the hyphen), the figure dash, the minus sign. A reader reads "123\u201145\u20116789" as an
# SSN; the identifier scans read "-". The en and em dashes stay: prose writes them between dates and clauses.
_JOINING_HYPHENS = ("\u2010", "\u2011", "\u2012", "\u2212")
_HAS_JOINING_HYPHEN = re.compile(f"[{''.join(_JOINING_HYPHENS)}]")
# "H.I.V." / "H. I. V." -> "HIV": two or more single capitals each followed by a dot, the first not inside a
# word. The expression opens with a capital (the letter before it is looked at behind that capital), so the
# regex engine skips along the text in C to the next capital instead of trying the look-behind everywhere.
_DOTTED = re.compile(r"[A-Z](?<![^\W\d_][A-Z])\. ?(?:[A-Z]\. ?)+[A-Z]?(?![^\W\d_])")
# What any dotted acronym holds ("X. Y."): most texts have none. Written from its first dot, which the regex engine
# finds in C, and the capital before it looked at behind: the same matches as "[A-Z]\. ?[A-Z]\." (tried at every
# capital), at a seventh of its CPU on the verifier's views (tests/test_properties.py).
_DOTTED_PAIR = re.compile(r"\.(?<=[A-Z]\.) ?[A-Z]\.")


def _latin_lookalike(m: re.Match[str]) -> str:
    word = m.group()
    folded = word.translate(_LOOKALIKE_TABLE)
    # Only a disguise when the result is Latin: "НIV" -> "HIV", but "Москва" stays Russian.
    return folded if folded.isascii() else word


def fold(text: str) -> str:
    """NFKC, without invisible characters, look-alike letters as Latin. Length may change."""
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFKC", text):  # the quick check answers most texts for a tenth of the work
        text = unicodedata.normalize("NFKC", text)
    text = (_INVISIBLE if _ASTRAL.search(text) else _INVISIBLE_IN_BMP).sub("", text)
    if _ANY_LOOKALIKE.search(text):
        text = _DISGUISED.sub(_latin_lookalike, text)
    return text


def undot(text: str) -> str:
    """Dotted acronyms without their dots: "H.I.V." -> "HIV" ("U.S." too: read only for matching)."""
    if "." not in text or not _DOTTED_PAIR.search(text):
        return text
    return _DOTTED.sub(lambda m: m.group().replace(".", "").replace(" ", ""), text)


def fold_with_offsets(text: str) -> tuple[str, list[int], list[int]] | None:
    """``fold``, keeping where each folded character came from: None when folding changes nothing.

    For the matchers that must report spans of the original text (the identifier analyzer): a number written
    "123\u200b-45-6789" or "５５５-123-4567" is found in the folded text and replaced in the original.
    Returns the folded text and, for its character i, the original span [starts[i], ends[i]). Each run of
    characters outside ASCII is normalized alone, and blanks outside ASCII (a no-break space: a third of the
    archive's messages hold one) stay as they are: the matchers read them as blanks already.
    """
    if text.isascii() or text.replace("\u2029", "").replace("\xa0", "").replace("\u202f", "").isascii():
        # Nothing outside ASCII but the blanks a message is full of (its parts' separator, no-break spaces): every
        # run of them is a blank, read as written (below), and no look-alike letter stands in the text. Half of
        # the archive's texts; the walk over the runs costs ten times these three copies.
        return None
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for m in _NOT_ASCII.finditer(text):
        i, run = m.start(), m.group()
        if run.isspace() or (
            unicodedata.is_normalized("NFKC", run)
            and not _INVISIBLE.search(run)
            and not _HAS_JOINING_HYPHEN.search(run)
        ):
            continue  # "’", "é", "–", "\u2029": read as written, with the ASCII around them
        chars.append(text[pos:i])
        starts.extend(range(pos, i))
        ends.extend(range(pos + 1, i + 1))
        pos = m.end()
        for k, ch in enumerate(run, i):
            if _INVISIBLE.match(ch):
                continue
            out = ch if ch.isspace() else unicodedata.normalize("NFKC", ch)
            if out in _JOINING_HYPHENS:
                out = "-"
            chars.append(out)
            starts.extend([k] * len(out))
            ends.extend([k + 1] * len(out))
    if pos == 0 and not _ANY_LOOKALIKE.search(text):
        return None
    chars.append(text[pos:])
    starts.extend(range(pos, len(text)))
    ends.extend(range(pos + 1, len(text) + 1))
    folded = "".join(chars)
    if _ANY_LOOKALIKE.search(folded):
        folded = _DISGUISED.sub(_latin_lookalike, folded)  # one letter for one: the offsets still hold
    return folded, starts, ends
