"""Words built from other words: compounds ("AIDS-like", "cocaine-induced"), derivations ("Houstonians")
and names numbered ("HIV1").

K counts such a word as a word of its own, usually a rare one, so by counts
alone it is "unknown to K" and left in the text, though a reader sees its
base at once. A word that contains or derives from a term discloses at least
what that term does; these functions only propose the candidate bases, the
engine judges them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence

from gateway.model.terms import STOPWORDS

# Derivational endings, longest first, and what the base may have lost before them
# ("Chlamydia" -> "chlamydial", "Atlanta" -> "Atlantans", "Texas" -> "Texan").
_SUFFIXES = (
    "ians", "ites", "ists", "isms", "ers", "ans", "ian", "ite", "ist", "ism", "ese", "ish", "ial",
    "ic", "al", "an", "er", "ns", "n",
)  # fmt: skip
_RESTORE = ("", "a", "e", "y", "ia", "as", "o", "um", "us")
PREFIXES = ("anti", "non", "pro", "pre", "post", "pseudo", "neo", "sub", "un", "counter", "semi", "ex")
MIN_BASE = 4  # shorter bases ("la", "ic") match too much by accident
MIN_GLUED_NAME = 3  # "HIVpositive": a name glued to a word
_NUMBERED = re.compile(r"[0-9]*([^\W\d_]+)[0-9]*")
_ACRONYM_PLURAL = re.compile(r"([A-Z]{2,})['\u2019]?s")


def compound_parts(surface: str) -> list[str]:
    """The parts of a hyphenated or slashed compound, as written; [] for a plain word."""
    if "-" not in surface and "/" not in surface:
        return []
    parts = [p for p in surface.replace("/", "-").split("-") if p]
    return parts if len(parts) > 1 else []


def derivation_bases(word: str) -> Iterator[str]:
    """Candidate bases of a lower-case word, most likely first ("houstonians" -> "houston")."""
    seen: set[str] = set()
    for prefix in PREFIXES:
        if word.startswith(prefix) and len(word) - len(prefix) >= MIN_BASE:
            rest = word[len(prefix) :]
            if rest not in seen:
                seen.add(rest)
                yield rest
    for suffix in _SUFFIXES:
        if not word.endswith(suffix):
            continue
        stem = word[: -len(suffix)]
        if len(stem) < MIN_BASE - 1:
            continue
        for tail in _RESTORE:
            base = stem + tail
            if len(base) >= MIN_BASE and base != word and base not in seen:
                seen.add(base)
                yield base


def glued_names(word: str, names: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(name, the rest) for a name written together with another word ("hivpositive", "antihiv")."""
    for name in names:
        if " " in name or len(name) < MIN_GLUED_NAME or name == word or name in STOPWORDS:
            continue
        if word.startswith(name) and len(word) - len(name) >= 3:
            yield name, word[len(name) :]
        elif word.endswith(name) and len(word) - len(name) >= 3:
            yield name, word[: -len(name)]


STEM = 8  # letters a word must share with a name to be read as a form of it
STEM_ENDING = 4  # what the name may have after the shared letters: an ending ("-ism", "-ual"), not a word


def shared_stem(word: str, names: Iterable[str]) -> str | None:
    """A one-word name whose stem ``word`` shares, where the name only adds an ending after it ("anglicana",
    "heterosexism" for "anglicanism", "heterosexual"): another form of the name that no suffix rule lists."""
    for name in names:
        if " " in name or len(name) < STEM or name == word:
            continue
        shared = next(
            (i for i, (a, b) in enumerate(zip(word, name, strict=False)) if a != b), min(len(word), len(name))
        )
        if shared >= STEM and len(name) - shared <= STEM_ENDING:
            return name
    return None


# A form of a term the text itself flags (``form_of``): the term glued into a longer word must be this long ...
TERM_GLUED = 6
# ... and a word sharing a stem with it must share this many letters, at least FORM_SHARE of the term's.
TERM_STEM = 7
FORM_SHARE = 0.75


def form_of(word: str, terms: Sequence[str], is_word: Callable[[str], bool]) -> str | None:
    """The first term of ``terms`` (one-word keys a text flags, in a fixed order) that ``word`` is a form of.

    A word K barely knows, beside a flagged term it is built on, shows that term to a reader: numbered
    ("tao4" beside "Tao"), glued to another word ("alphapapillomavirus" beside "papillomavirus") or sharing its
    stem, the term adding no more than an ending ("papillomatosis" beside "papilloma", "parasitemia" beside
    "parasite"). The same forms ``numbered_name``, ``glued_names`` and ``shared_stem`` read for c's own names,
    read for the terms of this text that are risky for c. A term must be long enough that sharing it is no
    accident; a stem of 7 letters is enough here, where it must also be a term the text itself flags. What a
    term is glued to must be a prefix or a word (``is_word``), as for a name: "disinfection" is no infection.
    """
    letters = numbered_name(word)
    if letters is not None:
        return letters if letters in terms else None
    if not word.isalpha():
        return None
    for term in terms:
        if term == word or not term.isalpha():
            continue
        if len(term) >= TERM_GLUED and len(word) - len(term) >= 3:
            rest = word[len(term) :] if word.startswith(term) else word[: -len(term)] if word.endswith(term) else ""
            if rest and (rest in PREFIXES or is_word(rest)):
                return term
        if len(term) < TERM_STEM:
            continue
        shared = _shared_prefix(word, term)
        if shared >= TERM_STEM and shared >= FORM_SHARE * len(term) and len(term) - shared <= STEM_ENDING:
            return term
    return None


NEAR_NAME = 4  # a name this long may be misspelt by one letter and still be read as itself


def respelt_name(word: str, names: Iterable[str]) -> str | None:
    """A one-word name that ``word`` writes with a mark added ("Hawaiʻi", "ohiːyo") or one letter more, less or
    different ("Ohiyo", "malarla"): a transliteration or a misspelling a reader still reads as the name.

    Only for a word K does not know at all (the caller's test): a word K counts ("Mali" beside "Bali") is a
    word of its own.
    """
    letters = "".join(ch for ch in word if unicodedata.category(ch) not in ("Lm", "Mn", "Sk")).lower()
    for name in sorted(names):
        if " " in name or len(name) < NEAR_NAME or not name.isalpha() or name == word:
            continue
        if letters == name or _one_edit(letters, name):
            return name
    return None


def _one_edit(a: str, b: str) -> bool:
    """Whether a and b differ by exactly one letter added, dropped or changed."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    i = _shared_prefix(a, b)
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :]
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[i + 1 :] == shorter[i:]


def _shared_prefix(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def numbered_name(word: str) -> str | None:
    """The letters of a word that is letters with digits glued on ("hiv1" -> "hiv", "43hiv" -> "hiv"), else None.

    The tokenizer keeps such a word whole ("ccr5", "win32" are words of K); only when K barely
    knows it is it read as the name it numbers (a strain, a type, a version).
    """
    m = _NUMBERED.fullmatch(word)
    if m is None or len(m.group(1)) == len(word):
        return None
    return m.group(1)


def acronym_plural(surface: str) -> str | None:
    """The acronym of a plural written with a small s ("HPVs", "STD's" -> "hpv", "std"), else None.

    The tokenizer keeps an acronym in capitals whole, so "HPVs" is a word of its own that K
    barely knows; a reader sees the acronym.
    """
    m = _ACRONYM_PLURAL.fullmatch(surface)
    return m.group(1).lower() if m else None
