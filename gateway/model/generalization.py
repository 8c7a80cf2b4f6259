"""Algorithm 1, lines 13-18: the first generalization of a risky term that is safe for every c.

A ``Risky`` term carries its chain of generalizations (from its chosen sense,
most specific first) and how far along it the engine had to go; each step
tried is kept as evidence for the decision.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from gateway.model.measure import Conjuncts, Measure, Verdict, canon
from gateway.model.records import Entity, SanitizePolicy, Step
from gateway.model.taxonomy import Generalization, Taxonomy, choose_sense
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

    @property
    def current(self) -> Generalization | None:
        if self.redacted or not 0 <= self.position < len(self.chain):
            return None
        return self.chain[self.position]


class Generalizer:
    def __init__(self, taxonomy: Taxonomy, measure: Measure, key: Callable[[str], str]) -> None:
        self.taxonomy = taxonomy
        self.measure = measure
        self.key = key

    def keys_of(self, g: Generalization) -> frozenset[str]:
        return frozenset(self.key(lex) for lex in g.lexicalizations or (g.term,))

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
    ) -> None:
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
        if capitalized and not surface.isupper() and senses and not any(s.proper or s.is_instance for s in senses):
            # A name the knowledge base does not know ("Cruise", "Holmes"):
            # its common-noun senses would generalize the wrong thing.
            senses = []
        sense = choose_sense(senses, context=context, capitalized=capitalized)
        r.sense = sense.id if sense else None
        r.chain = self.taxonomy.generalizations(surface, r.sense) if senses else []
        head = tokens[first.first_token + first.n_tokens - 1].text
        if not r.chain and first.n_tokens > 1 and (head.islower() or head.lower() in NAMED_KINDS):
            # A compound the knowledge base lacks: its head noun is its first
            # generalization ("Catholic cathedral" is a cathedral, "Fulton County" a county).
            noun = head.lower()
            r.chain = [Generalization(term=noun, source="head-noun"), *self.taxonomy.generalizations(noun)]
        self.advance(r, entities, policy, group=None, forbidden=forbidden)

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
        if keys & set(forbidden):
            return no("is itself replaced in this text")
        v = m.verdict((keys,), entities, policy.alpha)
        if v.n < m.min_support:
            return no("unknown to K")
        word = next((w for k in keys if (w := m.riskiest_word(k, name_map, entities, policy.alpha))), None)
        if word is not None:
            return no("one of its words discloses", word)
        if v.risky:
            return no("still discloses", v)
        if group is not None:
            gv = m.verdict(canon((*group, keys)), entities, policy.alpha)
            if gv.n >= m.estimator.group_min_support and gv.risky:
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


def starts_line(text: str, tokens: Sequence[Token], i: int) -> bool:
    before = tokens[i - 1].end if i > 0 else 0
    return "\n" in text[before : tokens[i].start] or i == 0


def starts_sentence(tokens: Sequence[Token], i: int) -> bool:
    return i == 0 or tokens[i - 1].sentence != tokens[i].sentence
