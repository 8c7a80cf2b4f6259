"""Knowledge bases that generalize a term (the paper's KBs).

A taxonomy answers two questions: which senses a term has, and the ordered
chain of generalizations of one sense, most specific first. Sources are
chained: an organisation's own taxonomy is asked before WordNet.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, cast


@dataclass(frozen=True, slots=True)
class Sense:
    id: str
    lemmas: tuple[str, ...]
    gloss: str = ""
    is_instance: bool = False
    frequency: int = 0
    proper: bool = False
    pos: PartOfSpeech = "n"
    kinds: tuple[str, ...] = ()  # what it is an instance or a kind of ("American state", "river")


# What a generalization is written as: a noun (inflected for number), a verb (for tense) or an adjective.
PartOfSpeech = Literal["n", "v", "a"]


@dataclass(frozen=True, slots=True)
class Generalization:
    term: str
    source: str
    lexicalizations: tuple[str, ...] = field(default=())
    pos: PartOfSpeech = "n"


class Taxonomy(Protocol):
    def senses(self, term: str) -> list[Sense]:
        """Noun senses of ``term``."""
        ...

    def has_senses(self, term: str) -> bool:
        """``bool(senses(term))``, where that is cheaper to know than the senses themselves."""
        ...

    def other_senses(self, term: str) -> list[Sense]:
        """Verb and adjective senses of a word, for where it is not used as a noun."""
        ...

    def generalizations(self, term: str, sense: str | None = None) -> list[Generalization]: ...


class ChainedTaxonomy:
    """Ask each taxonomy in turn; the first that knows the term answers.

    An organisation taxonomy may end its chain on a term WordNet knows
    ("zidovudine" -> "antiretroviral drug"); the chain then continues in the
    later taxonomies from that term.
    """

    def __init__(self, *taxonomies: Taxonomy) -> None:
        self._taxonomies = taxonomies

    def senses(self, term: str) -> list[Sense]:
        for tax in self._taxonomies:
            found = tax.senses(term)
            if found:
                return found
        return []

    def has_senses(self, term: str) -> bool:
        return any(tax.has_senses(term) for tax in self._taxonomies)

    def other_senses(self, term: str) -> list[Sense]:
        for tax in self._taxonomies:
            found = tax.other_senses(term)
            if found:
                return found
        return []

    def generalizations(self, term: str, sense: str | None = None) -> list[Generalization]:
        for i, tax in enumerate(self._taxonomies):
            chain = tax.generalizations(term, sense)
            if not chain:
                continue
            rest = ChainedTaxonomy(*self._taxonomies[i + 1 :])
            tail = rest.generalizations(chain[-1].term) if i + 1 < len(self._taxonomies) else []
            seen = {g.term.lower() for g in chain}
            return chain + [g for g in tail if g.term.lower() not in seen]
        return []


GLOSS_WORDS = 9  # a typical gloss with its lemmas: overlap is counted as if every gloss were this long


def choose_sense(
    senses: Sequence[Sense],
    *,
    context: Collection[str] | Mapping[str, float],
    capitalized: bool,
) -> Sense | None:
    """Pick the sense a text most likely means (not blindly the first).

    A simplified Lesk score: overlap of the text's term keys with the words of
    the sense's gloss, lemmas and kinds, each weighted by what ``context`` says
    it is worth when it maps terms to weights (the engine: how often and how
    rare, Engine._sense_evidence), plus the sense's corpus frequency (SemCor
    counts in WordNet) as a prior, plus a preference for instance senses
    (proper nouns) when the text writes the term capitalized mid-sentence and
    for class senses when it does not.
    """
    if not senses:
        return None
    if len(senses) == 1:
        return senses[0]
    weights: Mapping[str, float] = context if isinstance(context, Mapping) else dict.fromkeys(context, 1.0)
    return choose_sense_lowered(senses, {c.lower(): w for c, w in weights.items()}, capitalized=capitalized)


class Weights(Protocol):
    def get(self, word: str, /) -> float | None: ...


def _among(ctx: Weights) -> Callable[[frozenset[str]], Collection[str]]:
    """Of a sense's words, those ``ctx`` may weigh (every one its ``get`` answers for), found in C."""
    if isinstance(ctx, dict):
        return ctx.keys().__and__
    among = getattr(ctx, "among", None)  # generalization._NearWeights
    return cast("Callable[[frozenset[str]], Collection[str]]", among) if callable(among) else lambda w: w


def choose_sense_lowered(senses: Sequence[Sense], ctx: Weights, *, capitalized: bool) -> Sense | None:
    """``choose_sense`` with the context's weights already keyed by lower-case words (a text's terms
    are; copying and lowering its whole context for every word generalized was most of the cost)."""
    if not senses:
        return None
    if len(senses) == 1:
        return senses[0]
    best: tuple[float, int] | None = None
    chosen = senses[0]
    get = ctx.get
    among = _among(ctx)
    read = [_sense_words(s) for s in senses]
    # A word every sense holds (the term itself, a lemma they share) tells them apart no more than the term
    # does: counted, it made the shortest gloss win ("jaundice" read as bitterness, "severe" as austere).
    shared = frozenset.intersection(*(words for words, _root in read))
    for rank, (s, (words, root)) in enumerate(zip(senses, read, strict=True)):
        # Over the root of the gloss's length: a long gloss matches more words by chance (Lesk's known bias).
        # fsum: exactly rounded, so the choice depends neither on the order a set is read in nor on the words
        # with no weight being skipped before they are asked (``among``, in C).
        found = among(words - shared if shared else words)
        overlap = math.fsum(x for w in found if (x := get(w)) is not None) * GLOSS_WORDS**0.5 / root
        fit = 1.0 if (s.is_instance or s.proper) == capitalized else 0.0
        score = 2.0 * overlap + math.log1p(s.frequency) + 3.0 * fit
        key = (score, -rank)
        if best is None or key > best:
            best, chosen = key, s
    return chosen


@functools.lru_cache(maxsize=8192)
def _sense_words(s: Sense) -> tuple[frozenset[str], float]:
    """The words of a sense's gloss, lemmas and kinds, and the root of their number."""
    words = {w.strip(".,;:()\"'").lower() for w in s.gloss.split()}
    for lemma in (*s.lemmas, *s.kinds):
        words.update(lemma.lower().split())
    return frozenset(words), max(1, len(words)) ** 0.5
