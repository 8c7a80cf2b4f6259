"""Algorithm 1, lines 13-18: the first generalization of a risky term that is safe for every c.

A ``Risky`` term carries its chain of generalizations (from its chosen sense,
most specific first) and how far along it the engine had to go; each step
tried is kept as evidence for the decision.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol, cast

from gateway.model.derived import compound_parts
from gateway.model.facts import is_ordinal
from gateway.model.kin import heads_a_phrase, nearest_kin, sense_by_company, text_nouns
from gateway.model.measure import Conjuncts, Measure, Verdict, canon
from gateway.model.memory import NAMING, wrote_marker
from gateway.model.modifiers import OMITTED, is_omitted, omittable
from gateway.model.records import Entity, SanitizePolicy, Step
from gateway.model.taxonomy import Generalization, Sense, Taxonomy, Weights, choose_sense_lowered
from gateway.model.terms import TermOccurrence, Token


@dataclass(slots=True)
class Risky:
    key: str
    reason: str
    verdict: Verdict | None
    group: tuple[str, ...] | None = None
    chain: list[Generalization] = field(default_factory=list)
    position: int = -1  # index in chain of the current replacement; -1: not yet chosen
    steps: list[Step] = field(default_factory=list)
    sense: str | None = None
    redacted: bool = False
    name: bool | None = None  # written as a name (capitalized mid-sentence); None: not looked at
    earlier: frozenset[str] = frozenset()  # a stream's remembered keys in the group that made it risky
    # A modifier that may be left out when its chain runs out, instead of being redacted (modifiers.py).
    omit: bool = False
    # The flagged term of the text this one is a form of ("Tao" for "tao4", detection.Detector._forms): a form
    # WordNet lacks is written as that term is (``follow_base``).
    base: Risky | None = None

    def follow_base(self) -> None:
        """A form with no generalization of its own becomes what its base became ("tao4" as "Tao")."""
        b = self.base
        if b is None or (self.chain and not self.redacted) or b.base is not None:
            return
        if is_omitted(b.current):
            self.redacted = True  # left out where the base stands, before its noun; the form may stand anywhere
            return
        self.chain, self.position, self.redacted, self.sense = list(b.chain), b.position, b.redacted, b.sense
        self.steps = list(b.steps)

    @property
    def current(self) -> Generalization | None:
        if self.redacted or not 0 <= self.position < len(self.chain):
            return None
        return self.chain[self.position]


MIN_HEAD_PART = 3  # "vitamin-b", "omega-3": a last part of one or two letters, or digits, is no head word
# First parts after which the head alone is no generalization but another claim: a rank ("second-largest" is
# not the largest), a number ("5-year"), a prefix that negates or displaces the head ("non-smoker", "anti-war",
# "ex-wife", "pre-war", "pseudo-science").
_NOT_A_KIND_OF_HEAD = frozenset("non anti un ex counter pseudo quasi pre post former mock faux".split())


class NameKinds(Protocol):
    """Names in a text and their kind (PERSON, ORG, LOC...): the identifier analyzer's name recognizer."""

    def __call__(self, text: str) -> Iterable[tuple[int, int, str]]: ...


class _SentenceWords:
    """The words (norms, not function words) of a text's sentences, and the sentences of each word."""

    def __init__(self, tokens: Sequence[Token]) -> None:
        self.by_sentence: dict[int, set[str]] = {}
        self.lower: dict[str, set[int]] = {}  # a lower-case word -> its sentences
        self.cased: dict[str, set[int]] = {}  # a word with capitals ("3TC"), by its lower case -> its sentences
        for t in tokens:
            if not t.is_stop:
                self.by_sentence.setdefault(t.sentence, set()).add(t.norm)
                low = t.norm.lower()
                (self.lower if low == t.norm else self.cased).setdefault(low, set()).add(t.sentence)


class _NearWeights:
    """What ``{w.lower(): x for w, x in weights.items()}`` would hold, where ``weights`` is a context whose
    keys are all lower case with every word of ``sentences`` set to NEAR_WEIGHT times its weight (1 when
    the context lacks it), read one word at a time. A near word with capitals is not in the context, so it
    weighs NEAR_WEIGHT, and being added last it wins over its lower-case form."""

    __slots__ = ("_base", "_sentences", "_words")

    def __init__(self, base: Mapping[str, float], words: _SentenceWords, sentences: frozenset[int]) -> None:
        self._base, self._words, self._sentences = base, words, sentences

    def get(self, word: str, /) -> float | None:
        cased = self._words.cased.get(word)
        if cased is not None and not self._sentences.isdisjoint(cased):
            return NEAR_WEIGHT * 1.0
        lower = self._words.lower.get(word)
        if lower is not None and not self._sentences.isdisjoint(lower):
            return NEAR_WEIGHT * self._base.get(word, 1.0)
        return self._base.get(word)

    def among(self, words: frozenset[str], /) -> Collection[str]:
        """The words ``get`` may answer for (set intersections in C, rather than a call per word)."""
        return (self._base.keys() & words) | (self._words.lower.keys() & words) | (self._words.cased.keys() & words)


MAX_SENSES_TRIED = 4
_WORD = re.compile(r"\w+")
# What a name of each kind is, when the knowledge base does not know the name itself.
KIND_NOUNS: dict[str, str] = {"PERSON": "person", "LOC": "place", "ORG": "organization"}


class Generalizer:
    def __init__(
        self, taxonomy: Taxonomy, measure: Measure, key: Callable[[str], str], *, names: NameKinds | None = None
    ) -> None:
        self.taxonomy = taxonomy
        self.measure = measure
        self.key = key
        self._names = names
        self._named: tuple[str, list[tuple[int, int, str]]] | None = None  # the last text's names, by start
        self._sentences: tuple[Sequence[Token], _SentenceWords] | None = None  # its words by sentence
        self._nouns: tuple[Sequence[Token], tuple[str, ...]] | None = None  # its nouns WordNet knows (kin.py)
        # The last round's context (never changed once made) and whether its keys are all lower case.
        self._context: tuple[Collection[str] | Mapping[str, float], bool] | None = None
        # Values an earlier stage replaced (identifiers): never written back, not even inside a phrase,
        # because the check before sending looks for them word by word.
        self._replaced: frozenset[str] = frozenset()
        # What earlier messages of the thread wrote for each term (memory.wrote_in): the same term is written the
        # same way across a thread when that is safe here (``_as_written``).
        self._wrote: Mapping[str, frozenset[str]] = {}

    def forget_text(self) -> None:
        """Drop what is kept of the last text read (its words by sentence, its names, its context)."""
        self._named = self._sentences = self._context = self._nouns = None

    def keys_of(self, g: Generalization) -> frozenset[str]:
        return frozenset(self.key(lex) for lex in g.lexicalizations or (g.term,))

    def written_keys(self, g: Generalization) -> frozenset[str]:
        """Every key a reader finds in g's words: each lexicalization and each run of its words."""
        out = set(self.keys_of(g))
        for lex in g.lexicalizations or (g.term,):
            words = _WORD.findall(lex)  # "Judeo-Christian" shows "Christian" to a reader and to the last check
            out.update(self.key(" ".join(words[i:j])) for i in range(len(words)) for j in range(i + 1, len(words) + 1))
        return frozenset(out)

    @contextmanager
    def replacing(self, values: Collection[str]) -> Iterator[None]:
        """While sanitizing a text an earlier stage rewrote: its replaced values (keys) stay out of every phrase.

        The model's own flags are terms of K and compared as such ("mental disorder" is not "disorder"); an
        identifier "American" replaced first must not come back as Ohio's "American state".
        """
        before, self._replaced = self._replaced, frozenset(values)
        try:
            yield
        finally:
            self._replaced = before

    @contextmanager
    def writing_as(self, wrote: Mapping[str, frozenset[str]]) -> Iterator[None]:
        """While sanitizing a later message of a thread: ``wrote`` is what its earlier messages wrote for a term."""
        before, self._wrote = self._wrote, wrote
        try:
            yield
        finally:
            self._wrote = before

    def shows_replaced(self, g: Generalization) -> bool:
        return bool(self._replaced) and not self._replaced.isdisjoint(self.written_keys(g))

    def start_chain(
        self,
        r: Risky,
        text: str,
        occs: Sequence[TermOccurrence],
        tokens: Sequence[Token],
        context: Collection[str],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        forbidden: Collection[str],
        *,
        kin: bool = False,
    ) -> None:
        """Start r's chain and move it to its first safe generalization. ``kin``: a lower-case noun WordNet lacks
        may take its kind from K (``_kin_chain``); the evidence asks so, since it never redacts a clue it cannot
        lower, where a term risky on its own is redacted rather than written as a kind a statistic chose."""
        first = occs[0]
        surface = " ".join(t.text for t in tokens[first.first_token : first.first_token + first.n_tokens])
        # Capitals are evidence of a name only mid-sentence, not at the start of a line (a heading,
        # a list item), and only when most such occurrences have them ("World Malaria Day" once
        # does not make every "malaria" a name).
        inside = [o for o in occs if not starts_sentence(tokens, o.first_token)]
        inside = [o for o in inside if not starts_line(text, tokens, o.first_token)]
        capitals = sum(1 for o in inside if tokens[o.first_token].text[:1].isupper())
        capitalized = capitals > 0 and 2 * capitals >= len(inside)
        r.name = capitalized if inside else None
        senses = self.taxonomy.senses(surface) or self.taxonomy.senses(r.key)
        if capitalized and any(s.is_instance for s in senses):
            # Mostly part of a longer name ("Randall Bailey"): not the person or place the knowledge base
            # knows by the last word alone ("Bailey", the lexicographer), unless that is its name too.
            before = [_name_before(tokens, o.first_token) for o in occs]
            senses = [
                s for s in senses
                if not s.is_instance
                or 2 * sum(1 for w in before if w and w not in {x for m in s.lemmas for x in m.split()}) < len(occs)
            ]  # fmt: skip
        if capitalized and not surface.isupper() and senses and not any(s.proper or s.is_instance for s in senses):
            # A name the knowledge base does not know ("Cruise", "Holmes"):
            # its common-noun senses would generalize the wrong thing.
            senses = []
        weights = self._near(context, tokens, occs)
        r.chain = []
        if first.n_tokens == 1 and not capitalized:
            self._verb_or_adjective(r, surface, senses, [reading(tokens, o.first_token) for o in occs], weights)
        if not r.chain:
            sense = choose_sense_lowered(senses, weights, capitalized=capitalized)
            r.sense = sense.id if sense else None
            r.chain = self.taxonomy.generalizations(surface, r.sense) if senses else []
        head = tokens[first.first_token + first.n_tokens - 1].text
        if not r.chain and first.n_tokens > 1 and (head.islower() or head.lower() in NAMED_KINDS):
            # A compound the knowledge base lacks: its head noun is its first
            # generalization ("Catholic cathedral" is a cathedral, "Fulton County" a county).
            noun = head.lower()
            r.chain = [Generalization(term=noun, source="head-noun"), *self.taxonomy.generalizations(noun)]
        if not r.chain and first.n_tokens == 1 and not capitalized and (last := _head_part(surface)) is not None:
            # A hyphenated compound the knowledge base lacks is, as a phrase is, its head, the last part:
            # "drug-related" is related, "self-administration" an administration.
            # The head's sense is the one the text gives it ("right-wing" of a party: a social group, not an organ).
            head_sense = choose_sense_lowered(self.taxonomy.senses(last), weights, capitalized=False)
            above = self.taxonomy.generalizations(last, head_sense.id if head_sense else None)
            r.chain = [Generalization(term=last, source="head-part"), *above]
        if not r.chain and kin and first.n_tokens == 1 and not capitalized and not senses:
            self._kin_chain(r, surface, tokens, occs, weights, policy)
        if not r.chain and capitalized and (kind := self._kind(text, occs, tokens)) is not None:
            # A name the knowledge base lacks is a person, a place, an organisation: "a person", not a gap.
            noun = KIND_NOUNS[kind]
            r.chain = [Generalization(term=noun, source=f"name-kind:{kind}"), *self.taxonomy.generalizations(noun)]
        r.omit = policy.omit_modifiers and omittable(tokens, occs, self.taxonomy)
        self.advance(r, entities, policy, group=None, forbidden=forbidden)
        if r.reason in NAMING:
            self._telling_least(r, entities, policy, forbidden)
        if self._wrote and r.key in self._wrote:
            self._as_written(r, entities, policy, forbidden)

    def _telling_least(
        self,
        r: Risky,
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        forbidden: Collection[str],
    ) -> None:
        """c's own name (or a form of it): on from its first safe generalization to the first that K finds with c
        no more often than without it (PMI <= 0 for every c), else to the one along the chain that ties to c least.

        The name's generalization stands wherever the text named c, as often as it did, and beside every clue the
        text holds: the first safe one is often a near-synonym of c among its peers ("American state" for Ohio,
        "ill health" for HIV, "Christianity" for Methodism), which a reader who knows the candidates reads as c.
        Further along the chain it costs no word more (the name is replaced either way); the chain's own
        judgement still applies at every step (``advance``), and a name never ends redacted for it."""
        cur = r.current
        if cur is None or is_omitted(cur):
            return
        best = (r.position, len(r.steps), self.measure.verdict((self.keys_of(cur),), entities, policy.alpha).ratio)
        while best[2] > 0:
            self.advance(r, entities, policy, group=None, forbidden=forbidden)
            cur = r.current
            if cur is None or is_omitted(cur):
                break
            ratio = self.measure.verdict((self.keys_of(cur),), entities, policy.alpha).ratio
            if ratio < best[2]:
                best = (r.position, len(r.steps), ratio)
        r.position, r.redacted = best[0], False
        del r.steps[best[1] :]

    def _as_written(
        self,
        r: Risky,
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        forbidden: Collection[str],
    ) -> None:
        """Write r as the thread's earlier messages wrote the term, when that generalizes what this text writes.

        Two generalizations of one word in two messages tell a reader the word below both ("liberal" and "ordered"
        for "progressive"); one that was already read, written again, tells nothing new. Taken only further along
        r's own chain than what the message alone writes (a generalization of it, in the same sense), when the walk
        from there finds it safe and K ties it to no c more: the memory only makes a later message stricter. A
        write in another sense is not taken: that chain's words may say more of c than this one's, and the sense
        is the one the text gives the word. Of several written generalizations the most specific is taken.
        """
        cur = r.current
        if cur is None or is_omitted(cur):
            return  # redacted or left out alone: stricter than any generalization
        wanted = {self.key(w) for w in self._wrote[r.key]}
        found = next((i for i, g in enumerate(r.chain) if self.key(g.term) in wanted), None)
        if found is None or found <= r.position:
            return
        trial = Risky(r.key, r.reason, r.verdict, chain=list(r.chain), position=found - 1, sense=r.sense)
        self.advance(trial, entities, policy, group=None, forbidden=forbidden)
        new = trial.current
        if new is None or is_omitted(new) or self.key(new.term) not in wanted:
            return
        ratio = self.measure.verdict((self.keys_of(new),), entities, policy.alpha).ratio
        if ratio > self.measure.verdict((self.keys_of(cur),), entities, policy.alpha).ratio:
            return
        r.position = trial.position
        r.steps.extend(trial.steps)
        r.earlier |= {wrote_marker(r.key, w) for w in self._wrote[r.key] if self.key(w) == self.key(new.term)}

    def _kin_chain(
        self,
        r: Risky,
        surface: str,
        tokens: Sequence[Token],
        occs: Sequence[TermOccurrence],
        weights: Weights,
        policy: SanitizePolicy,
    ) -> None:
        """A lower-case noun WordNet lacks ("opioids") is what the text's noun K holds it with most is (kin.py):
        its chain is that noun's chain above it, in the sense whose words K holds the word with (else the text's)."""
        if not (surface.isalpha() and surface.islower()) or self.taxonomy.other_senses(surface):
            return
        if not heads_a_phrase(surface, tokens, occs):
            return
        nouns = self._nouns
        if nouns is None or nouns[0] is not tokens:
            nouns = self._nouns = (tokens, text_nouns(tokens, self.taxonomy.has_senses))
        kin = nearest_kin(r.key, nouns[1], self.measure, policy.alpha)
        if kin is None:
            return
        senses = self.taxonomy.senses(kin.word)
        sense = sense_by_company(r.key, senses, self.measure, self.key) or choose_sense_lowered(
            senses, weights, capitalized=False
        )
        chain = self.taxonomy.generalizations(kin.word, sense.id if sense else None)
        if chain:
            r.sense, r.chain = f"kin:{kin.word}:{sense.id if sense else ''}", chain

    def _near(
        self, context: Collection[str] | Mapping[str, float], tokens: Sequence[Token], occs: Sequence[TermOccurrence]
    ) -> Weights:
        """``context`` with the terms of the sentences the word stands in counted NEAR_WEIGHT times, keyed by
        lower-case words (taxonomy.choose_sense_lowered)."""
        sentences = self._sentences  # read once: forget_text may clear it from another thread
        if sentences is None or sentences[0] is not tokens:
            sentences = self._sentences = (tokens, _SentenceWords(tokens))
        words = sentences[1]
        known = self._context
        if known is None or known[0] is not context:
            known = self._context = (context, isinstance(context, Mapping) and all(k == k.lower() for k in context))
        if known[1]:
            # Every key of the context is lower case (a text's terms are): it is read in place, and only the
            # few words a sense's gloss holds are looked up, rather than copied and lowered for every word.
            return _NearWeights(cast("Mapping[str, float]", context), words, frozenset(o.sentence for o in occs))
        near: set[str] = set().union(*(words.by_sentence.get(o.sentence, set()) for o in occs))
        weights = dict(context) if isinstance(context, Mapping) else dict.fromkeys(context, 1.0)
        for w in near:
            weights[w] = NEAR_WEIGHT * weights.get(w, 1.0)
        return {c.lower(): w for c, w in weights.items()}

    def _kind(self, text: str, occs: Sequence[TermOccurrence], tokens: Sequence[Token]) -> str | None:
        """The kind most of the term's occurrences have as a whole name (not a part of a longer one).

        None when the name stands before a noun ("Zorblaxian therapy"): there it says what kind of
        thing the noun is, and "a person therapy" would not.
        """
        if self._names is None:
            return None
        for o in occs:
            i = o.first_token + o.n_tokens
            if i < len(tokens) and tokens[i].sentence == o.sentence and tokens[i].text.isalpha():
                word = tokens[i].text
                if word.islower() and not tokens[i].is_stop and self.taxonomy.senses(word):
                    return None
        found = self._named
        if found is None or found[0] is not text:
            found = self._named = (text, sorted((a, b, kind) for a, b, kind in self._names(text) if kind in KIND_NOUNS))
        named = found[1]
        kinds = {self._whole_name(text, named, o.start, o.end) for o in occs}
        if None in kinds or len(kinds) != 1:
            return None  # a part of a longer name somewhere ("Randall Griffin"): "a person" would not fit there
        return kinds.pop()

    @staticmethod
    def _whole_name(text: str, named: Sequence[tuple[int, int, str]], start: int, end: int) -> str | None:
        """The kind of the name text[start:end] is, when it is a whole one: the recognizer found it alone, or
        inside a span that joins it to another name by a lower-case word ("George Whitefield and John")."""
        i = bisect.bisect_right(named, (start, len(text) + 1, "")) - 1
        while i >= 0:
            a, b, kind = named[i]
            if a <= start and end <= b:
                before, after = text[a:start].split(), text[end:b].split()
                if (not before or before[-1].islower()) and (not after or after[0].islower()):
                    return kind
            i -= 1
            if a < start - 200:
                break
        return None

    def _verb_or_adjective(
        self, r: Risky, surface: str, nouns: Sequence[Sense], readings: Sequence[str | None], context: Weights
    ) -> None:
        """A word used as a verb or an adjective generalizes as one ("bitten" -> "gripped", "Methodist" ->
        "denominational"). Used so when it has no noun sense worth the name (WordNet's counts), or when the
        words before most of its occurrences say so ("it causes", "to infect")."""
        verbs, as_nouns = readings.count("v"), readings.count("n")
        if nouns and 2 * verbs <= len(readings):
            return
        others = self.taxonomy.other_senses(surface)
        if nouns:
            others = [s for s in others if s.pos == "v"]
        elif as_nouns > verbs:
            # After a determiner: an adjective ("the social network"), or else a noun ("the risk of"),
            # though mostly a verb elsewhere: then its noun senses.
            others = [s for s in others if s.pos == "a"]
            if not others:
                r.chain = self.taxonomy.generalizations(surface)
                return
        # The likeliest sense that has a generalization ("infected": the adjective has none, the verb has).
        for _ in range(MAX_SENSES_TRIED):
            sense = choose_sense_lowered(others, context, capitalized=False)
            if sense is None:
                return
            chain = self.taxonomy.generalizations(surface, sense.id)
            if chain:
                r.sense, r.chain = sense.id, chain
                return
            others = [s for s in others if s is not sense]

    def advance(
        self,
        r: Risky,
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        *,
        group: Conjuncts | None,
        forbidden: Collection[str] = (),
    ) -> None:
        """Move r to the next generalization that is safe (and makes ``group`` safe)."""
        while True:
            r.position += 1
            if r.position >= len(r.chain):
                if r.omit and not (r.chain and is_omitted(r.chain[-1])):
                    # Nothing above it is safe, but it is a modifier: left out, the sentence still reads.
                    r.chain.append(OMITTED)
                    r.steps.append(Step(term="", source=OMITTED.source, pmi=None, threshold=None, entity=None,
                                        accepted=True))  # fmt: skip
                    return
                r.redacted = True
                return
            step = self.judge(r.chain[r.position], entities, policy, group=group, forbidden=forbidden)
            r.steps.append(step)
            if step.accepted:
                return

    def judge(
        self,
        g: Generalization,
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        *,
        group: Conjuncts | None = None,
        forbidden: Collection[str] = (),
    ) -> Step:
        """Is generalization g safe to write? The Step says why not."""

        def no(why: str, v: Verdict | None = None) -> Step:
            return Step(term=g.term, source=g.source, pmi=v.pmi if v else None, threshold=v.threshold if v else None,
                        entity=v.entity.name if v and v.entity else None, accepted=False, why=why)  # fmt: skip

        m = self.measure
        name_map = {k: e for e in entities for k in e.keys}
        keys = self.keys_of(g)
        if keys & set(name_map):
            return no("names a sensitive entity")
        if keys & set(forbidden) or self.shows_replaced(g):
            return no("is itself replaced in this text")
        v = m.verdict((keys,), entities, policy.alpha)
        if v.n < m.min_support:
            return no("unknown to K")
        # The riskiest word of any lexicalization: a set's order follows the hash seed, the evidence must not.
        words = (w for k in keys if (w := m.riskiest_word(k, name_map, entities, policy.alpha)))
        word = max(words, key=lambda v: (v.ratio, v.pmi), default=None)
        if word is not None:
            return no("one of its words discloses", word)
        if v.risky:
            return no("still discloses", v)
        if group is not None:
            gv = m.risky_group(canon((*group, keys)), entities, policy.alpha)
            if gv is not None:
                return no("group still discloses", gv)
        return Step(term=g.term, source=g.source, pmi=v.pmi, threshold=v.threshold,
                    entity=v.entity.name if v.entity else None, accepted=True)  # fmt: skip


# The last word of a name that says what kind of thing it names: "Fulton County" is a county,
# "Georgia Tech University" a university. General English, not any document's vocabulary.
NAMED_KINDS = frozenset(
    """county city town village district province state region island islands river lake bay sea ocean mountain
    mountains valley park square street avenue road bridge tunnel station airport port harbor harbour university
    college school academy institute hospital clinic museum gallery library theatre theater stadium arena center
    centre hall church cathedral temple mosque synagogue chapel monastery abbey party movement union league club
    team association society council committee commission court company corporation bank agency department
    ministry army navy war battle treaty festival games award prize newspaper magazine journal band""".split()
)


# Words after which a word is a verb ("it causes", "to infect", "can spread"), or a noun ("the spread").
_VERB_BEFORE = frozenset(
    """to can could may might will would shall should must cannot it they he she we i you who which that
    not also often usually rarely generally typically commonly mainly mostly frequently sometimes""".split()
)
_NOUN_BEFORE = frozenset(
    """a an the this these those its their his her our my your some many few several each every no of in
    for with by from such""".split()
)


def reading(tokens: Sequence[Token], i: int) -> str | None:
    """ "v" or "n" when the word before token i says how it is used; None when it says nothing."""
    if i == 0 or tokens[i - 1].sentence != tokens[i].sentence:
        return None
    before = tokens[i - 1].text.lower()
    return "v" if before in _VERB_BEFORE else "n" if before in _NOUN_BEFORE else None


# The sentences a word stands in say more of its sense than the rest of the text ("the U.S. state of
# Colorado"): their terms count this many times over.
NEAR_WEIGHT = 3.0


def _name_before(tokens: Sequence[Token], i: int) -> str | None:
    """The capitalised word right before token i mid-sentence (the rest of a longer name), if any."""
    if i > 0 and not starts_sentence(tokens, i) and tokens[i - 1].joined:
        word = tokens[i - 1].text
        if word[:1].isupper() and word.isalpha() and not tokens[i - 1].is_stop:
            return word
    return None


def starts_line(text: str, tokens: Sequence[Token], i: int) -> bool:
    before = tokens[i - 1].end if i > 0 else 0
    return "\n" in text[before : tokens[i].start] or i == 0


def starts_sentence(tokens: Sequence[Token], i: int) -> bool:
    return i == 0 or tokens[i - 1].sentence != tokens[i].sentence


def _head_part(surface: str) -> str | None:
    """The last part of a lower-case hyphenated compound ("drug-related" -> "related"), if it is a word."""
    parts = compound_parts(surface)
    if not parts or "/" in surface:
        return None
    head, first = parts[-1], parts[0].lower()
    if first in _NOT_A_KIND_OF_HEAD or is_ordinal(first) or any(ch.isdigit() for ch in first):
        return None
    return head if len(head) >= MIN_HEAD_PART and head.isalpha() and head.islower() else None
