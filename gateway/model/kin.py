"""A kind for a word WordNet lacks, read from K: it is what its nearest neighbour in the text is.

WordNet has no "opioids", "hydrocodone", "oxycontin": such a word has no chain of
generalizations, so it can only stay as it is or be redacted, and the evidence
(evidence.py), which never redacts, leaves it standing however much it says of c.
K knows the word, though, and knows it beside the words it is a kind of with:
"opioids" shares its paragraphs with "fentanyl", "methadone", "analgesic" far more
than chance would have it. Of the nouns of the text WordNet knows, the one K holds
it with most, against chance (PMI, attested by ``min_support`` paragraphs as any
term must be), is taken as its sibling: the word is what that noun is a kind of,
and its chain is that noun's chain above it ("fentanyl" -> "opiate" -> "narcotic").

Only a noun: a word standing before another content word ("glutamatergic
receptor") says what kind of thing that is, and a noun's kind would not fit there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.model.measure import Measure, canon
from gateway.model.taxonomy import Sense
from gateway.model.terms import STOPWORDS, TermOccurrence, Token


@dataclass(frozen=True, slots=True)
class Kin:
    """The noun of the text a word is read as a sibling of, and how strongly K ties the two (PMI)."""

    word: str
    pmi: float


def text_nouns(tokens: Sequence[Token], has_noun: Callable[[str], bool]) -> tuple[str, ...]:
    """The text's lower-case words WordNet knows as nouns, each once, in the order they first stand."""
    seen: dict[str, None] = {}
    for t in tokens:
        if not t.is_stop and t.norm not in seen and t.text.islower() and t.text.isalpha() and len(t.norm) > 2:
            seen[t.norm] = None
    return tuple(w for w in seen if has_noun(w))


# Endings English writes adjectives and adverbs with ("neurodevelopmental", "glutamatergic", "routinely"): such a
# word, even standing alone ("neurodevelopmental and psychiatric"), is no noun to give a noun's kind.
ADJECTIVE_ENDINGS = ("al", "ic", "ous", "ive", "ary", "ful", "less", "able", "ible", "ly")


def heads_a_phrase(word: str, tokens: Sequence[Token], occs: Sequence[TermOccurrence]) -> bool:
    """A noun by its form, and most of its occurrences end their phrase: no content word of their sentence right
    after."""
    if word.endswith(ADJECTIVE_ENDINGS):
        return False
    heads = 0
    for o in occs:
        i = o.first_token + o.n_tokens
        after = tokens[i] if i < len(tokens) else None
        modifies = (
            after is not None and after.sentence == o.sentence and after.joined
            and after.text.isalpha() and not after.is_stop
        )  # fmt: skip
        heads += not modifies
    return 2 * heads > len(occs)


def nearest_kin(key: str, nouns: Sequence[str], measure: Measure, alpha: float) -> Kin | None:
    """The noun of ``nouns`` K holds ``key`` with most against chance, among those ``key`` discloses at ``alpha``
    (PMI at least IC(noun) / alpha: the paper's own line, with the noun as c): a weaker tie is company, not kind
    ("especially" is found beside "piety" a little more than chance has it)."""
    n_t = measure.count((frozenset({key}),))
    if n_t < measure.min_support:
        return None  # K barely knows the word: nothing it says of its company is attested
    best: Kin | None = None
    mine = frozenset({key})
    for u in nouns:
        if u == key:
            continue
        n_tu = measure.count(canon((mine, frozenset({u}))))
        if n_tu < measure.min_support:
            continue
        pmi = measure.estimator.pmi(measure.knowledge, measure.count((frozenset({u}),)), n_t, n_tu)
        if pmi < measure.ic(u) / alpha:
            continue
        if best is None or (pmi, u) > (best.pmi, best.word):
            best = Kin(u, pmi)
    return best


def sense_by_company(
    key: str, senses: Sequence[Sense], measure: Measure, word_key: Callable[[str], str]
) -> Sense | None:
    """Of the kin's senses, the one whose gloss and kinds K holds ``key`` with most: "hepatocytes" is found beside
    the organ's words ("gland", "bile"), not the person who lives ("liver" the inhabitant). Each word counts its
    attested PMI with ``key`` (no less than 0), over the root of the number of words, as a Lesk overlap is. None
    when K ties ``key`` to none of them: the caller's own choice stands."""
    n_t = measure.count((frozenset({key}),))
    mine = frozenset({key})
    best: tuple[float, Sense] | None = None
    read = [_sense_words(s, word_key) for s in senses]
    # A word every sense holds (the kin itself: "liver of an animal") tells them apart no more than the kin does.
    shared = frozenset.intersection(*read) if read else frozenset()
    for s, held in zip(senses, read, strict=True):
        words = {w for w in held - shared if w != key}
        total = 0.0
        for w in sorted(words):
            n_tw = measure.count(canon((mine, frozenset({w}))))
            if n_tw >= measure.min_support:
                total += max(0.0, measure.estimator.pmi(measure.knowledge, measure.count((frozenset({w}),)), n_t, n_tw))
        score = total / max(1, len(words)) ** 0.5
        if score > 0 and (best is None or score > best[0]):
            best = (score, s)
    return best[1] if best is not None else None


def _sense_words(s: Sense, word_key: Callable[[str], str]) -> frozenset[str]:
    """The keys of a sense's gloss, lemmas and kinds, function words aside."""
    words = {word_key(w.strip(".,;:()\"'").lower()) for w in s.gloss.split()}
    words.update(word_key(k.lower()) for k in (*s.lemmas, *s.kinds))
    return frozenset(w for w in words if w.replace(" ", "").isalpha() and w not in STOPWORDS)
