"""A modifier's most general form is no modifier at all.

WordNet generalizes nouns and verbs, but most adjectives and adverbs have no
hypernyms: "cognitive", "Jewish", "philosophical", "sexually" are clues that
point at c ("cognitive decline", "the Jewish community", "sexually
transmitted") with nothing above them to climb to. Written before the word it
modifies, such a word can be left out and the sentence still reads: "the
community", "transmitted", "decline". The noun or verb it modified says less,
never more (a "Jewish community" is a community).

Leaving a word out is not a redaction (no marker, the sentence stays whole),
but it keeps nothing of the word's information: utility counts it as lost
(Engine._utility), the decision's action is ``omit``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.model.taxonomy import Generalization, Sense
from gateway.model.terms import TermOccurrence, Token

# The generalization that writes nothing: the last step of a modifier's chain.
OMITTED = Generalization(term="", source="omitted", pos="a")


class _Senses(Protocol):
    def senses(self, term: str) -> list[Sense]: ...

    def other_senses(self, term: str) -> list[Sense]: ...


def is_omitted(g: Generalization | None) -> bool:
    return g is not None and g.source == OMITTED.source and not g.term


def _adjective(word: str, taxonomy: _Senses) -> bool:
    """A word WordNet knows only as an adjective (no noun reading to keep)."""
    if taxonomy.senses(word):
        return False
    return any(s.pos == "a" for s in taxonomy.other_senses(word))


def _adverb_of_adjective(word: str) -> tuple[str, ...]:
    """The adjectives an -ly adverb may come from ("sexually" -> "sexual", "genetically" -> "genetic")."""
    low = word.lower()
    if not low.endswith("ly") or len(low) < 6:
        return ()
    stem = low[:-2]
    out = [stem]
    if stem.endswith("al"):
        out.append(stem[:-2])  # genetically -> genetic
    if stem.endswith("i"):
        out.append(stem[:-1] + "y")  # happily -> happy
    return tuple(out)


def omittable(tokens: Sequence[Token], occurrences: Sequence[TermOccurrence], taxonomy: _Senses) -> bool:
    """Can every occurrence of this one-word term be left out and the sentence still read?

    It must be an adjective, or an -ly adverb of one, that stands right before a content word of its own
    sentence (the word it modifies: "Jewish community", "sexually transmitted"), never first in its sentence
    (the capital would be lost) and never alone ("it is Jewish.", "Jewish and Christian").
    """
    if not occurrences or any(o.n_tokens != 1 for o in occurrences):
        return False
    word = tokens[occurrences[0].first_token].text
    if not word.isalpha():
        return False
    if not _adjective(word, taxonomy) and not any(_adjective(a, taxonomy) for a in _adverb_of_adjective(word)):
        return False
    for o in occurrences:
        i = o.first_token
        if i == 0 or tokens[i - 1].sentence != tokens[i].sentence:
            return False
        if i + 1 >= len(tokens):
            return False
        after = tokens[i + 1]
        if after.sentence != tokens[i].sentence or not after.joined or not after.text.isalpha() or after.is_stop:
            return False
    return True
