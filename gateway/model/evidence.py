"""Weak clues add up: evidence accumulated over a paragraph, and over a stream.

The paper judges one term at a time, and groups (detection.py) judge at most
three: a paragraph in which no term and no small group reaches the line can
still, clue by clue, point at c ("fever", "parasite", "tropical", "bed net",
"Africa"). Under a naive-Bayes reading (the clues independent given c and
given not-c) what a reader learns of c from a unit of text is

    log p(c | t1..tn) / p(c)  ~  sum_i PMI(c; ti)

over its distinct terms. Dependence between clues makes the sum over-count
(two words that always travel together add their evidence twice), so as an
estimate of what a reader can infer it errs on the side of privacy. Only
clues that point towards c are summed: a reader is free to ignore the rest.

A clue counts when K attests its association as it must know a term: at
least ``min_support`` paragraphs hold it together with c (one chance
co-occurrence of a common word with a rare c is noise, and a paragraph holds
dozens of words); and when its PMI alone is at least ``evidence_floor`` of
the way to the threshold: below that, hundreds of near-zeros, over-counted,
would say more about the sum than about c.

A unit is a paragraph (a line, as K's own paragraphs are, and the passages a
reader takes in at once). With a stream's memory, the clues earlier messages
let through count towards every unit of the next message: the recipient has
read them. Those of the message's own thread count for each c the thread
named (a reader of it knows what it is about); the whole stream's (a list's
other threads are about other things) only with ``stream_evidence``. A unit
is *over* when for some c its evidence reaches

    evidence_budget * IC(c) / alpha

(the paper's line, applied to the accumulated evidence). Its strongest clues
are then generalized, highest PMI first, each along its own generalization
chain (generalization.py) to the first generalization that brings the unit
below the line, or failing that to the one that discloses least, until the
unit is below or no clue can be lowered. A clue is safe on its own, so it is
never redacted: one whose chain holds nothing that discloses less is left as
it is. The decision records the unit's accumulated evidence as its PMI, the
budget as its threshold, and the strongest clues as its group.

The sum is over what a reader finds in the unit: terms written as one
generalization ("Metropolitan Community Church", "United Church" -> "church")
add its clue once. And a lowered clue is no ban: being safe alone, it was
lowered only for its paragraph's sum, so another term may still be written as
it ("misuse" -> "use" beside a lowered "use"), where the next round sums it
again. Forbidden as a flagged term is, it made the terms whose chains passed
through it climb past it, to a redaction when nothing above was safe.

In a text about c (it, or its thread, named c), a unit still over its budget
once every clue a generalization lowers was lowered has its strongest names
(words written with a capital mid-sentence) that nothing along their chain
lowered written as "name", one at a time until it is below: a name WordNet
lacks ("Huainanzi", "Natomas") or whose every generalization points at c as
much stood as it was, however far over the budget its paragraph stayed.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from gateway.model.derived import compound_parts
from gateway.model.detection import layout
from gateway.model.generalization import Generalizer, Risky
from gateway.model.measure import VERDICT_CACHE, BoundedCache, Measure, Verdict, canon
from gateway.model.memory import named_marker, signature_marker, thread_marker
from gateway.model.modifiers import is_omitted
from gateway.model.records import Entity, SanitizePolicy
from gateway.model.related import SecondOrder
from gateway.model.taxonomy import Generalization
from gateway.model.terms import STOPWORDS, TermOccurrence, Token

# How many of a unit's clues a decision names as its evidence (strongest first).
SHOWN_CLUES = 8
# A modifier with no generalization is left out only when its own clue is at least this share of the threshold.
OMIT_FLOOR = 0.5
# What a name is, when nothing else along its chain is safe and discloses less.
NAME = Generalization(term="name", source="name-kind:NAME")


class _Failures:
    """The fresh terms whose lowering (for an entity, by position) found nothing in one settle.

    Such a lowering changes nothing (the Risky it built is dropped), and it reads the round's text, tokens,
    context, entities and policy, which a settle holds fixed, and ``forbidden``, which only grows: asked again
    for the same c in another paragraph of the round, it fails again while ``forbidden`` is as large as it
    was. Its goal does not matter once its walk went to the chain's end (every generalization as strong as
    the term); a walk with a goal equal to the term's clue may have stopped before the end, and is not kept.
    """

    __slots__ = ("_at", "_failed", "_forbidden")

    def __init__(self, forbidden: Collection[str]) -> None:
        self._forbidden = forbidden
        self._at = len(forbidden)
        self._failed: set[tuple[str, int]] = set()

    def known(self, key: str, c: int) -> bool:
        if len(self._forbidden) != self._at:
            self._failed.clear()
            self._at = len(self._forbidden)
        return (key, c) in self._failed

    def note(self, key: str, c: int, *, walked: bool) -> None:
        if walked and len(self._forbidden) == self._at:
            self._failed.add((key, c))


# What a settle's clues are computed for: entities, policy, ``about``, the second order's generation (what
# signature it read; none is read for an empty ``about``) and the text (so that one text's clues are what is kept).
_ClueScope = tuple[tuple[Entity, ...], SanitizePolicy, frozenset[int], int, int]


@dataclass(slots=True)
class _Below:
    """A text's units that were below their budget as they came, for one scope and one set of budgets.

    With none of its terms risky, a unit's sum is a function of its keys in order and of which of them
    ``classify`` found safe (``settle``'s ``now``: a safe term's own clue; any other, not risky, nothing or,
    for an entity in ``about``, its own clue unless allowed or a name), given the scope (entities, policy,
    ``about``, the second order's signature), the base the memory adds and the budgets. A later round
    that finds such a unit again, untouched by the edits (or the memory's first round, on the same
    text), finds the same floats below the same line and does nothing there: it is not summed again.
    """

    scope: _ClueScope
    levels: tuple[tuple[float, ...], tuple[float, ...]]  # the base and the budgets, per c
    units: set[tuple[tuple[str, ...], tuple[bool, ...]]] = field(default_factory=set)


@dataclass(slots=True)
class _Unit:
    keys: list[str]
    tried: set[str] = field(default_factory=set)
    named: set[str] = field(default_factory=set)  # written as a name (``Accumulator._as_name``)


class Accumulator:
    """Sums the evidence of each paragraph (and of a stream's memory) and lowers the strongest clues."""

    def __init__(self, measure: Measure, generalizer: Generalizer) -> None:
        self.measure = measure
        self.generalizer = generalizer
        # K's second order (related.py): counts beside its PMI for an entity the text is about.
        self.second_order = SecondOrder(measure)
        self.support = measure.estimator.min_support
        # One entry per term and entity set (about 350 bytes): 5,600 after 750 archive messages; bounded as the
        # engine's verdicts are, where 200,000 would have let a long-running worker reach ~70 MB.
        self._pmis: BoundedCache[tuple[frozenset[str], tuple[Entity, ...]], tuple[float, ...]] = BoundedCache(
            VERDICT_CACHE
        )
        # One text's clues, kept across its rounds (settle): a clue is a function of the term, the entities,
        # the policy, the entities its second order counts for and the signature it read, held beside them.
        self._text_clues: tuple[_ClueScope, dict[frozenset[str], tuple[float, ...]]] | None = None
        # The text's units found below their budget, for the same scope (``_Below``); not kept when
        # ``incremental`` is False (every round sums every unit: the reference tests compare against).
        self._text_below: _Below | None = None
        self.incremental = True
        self.units_summed = 0  # units whose evidence was summed (for benchmarks and tests)

    def pmis(self, keys: frozenset[str], entities: Sequence[Entity]) -> tuple[float, ...]:
        """PMI(c; t) for every c, of a term written as any of ``keys``; 0 where K barely knows it."""
        return self._pmis.get((keys, tuple(entities)), self._compute)

    def _compute(self, cache_key: tuple[frozenset[str], tuple[Entity, ...]]) -> tuple[float, ...]:
        keys, entities = cache_key
        m = self.measure
        n_t = m.count((keys,))
        if n_t < m.min_support:
            return tuple(0.0 for _ in entities)
        out: list[float] = []
        for e in entities:
            n_ct = m.count(canon((keys, e.keys)))
            # A clue's association with c must be attested as a term must be known to K (min_support
            # paragraphs): one chance co-occurrence of a common word with a rare c, summed over a paragraph,
            # is noise.
            attested = n_ct >= self.support
            out.append(m.estimator.pmi(m.knowledge, e.n_docs, n_t, n_ct) if attested else 0.0)
        return tuple(out)

    def about(self, entities: Sequence[Entity], policy: SanitizePolicy, named: Collection[str]) -> frozenset[int]:
        """The entities (by position) for which the second order counts: those the text (or thread) names."""
        if not policy.second_order:
            return frozenset()
        return frozenset(i for i, e in enumerate(entities) if e.name in named)

    def clue(
        self,
        keys: frozenset[str],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        about: frozenset[int] = frozenset(),
    ) -> tuple[float, ...]:
        """What a term adds to a unit's evidence, per c: its PMI when it reaches the floor, else 0 (for an
        entity in ``about``, the larger of K's PMI and its second-order estimate)."""
        pmis = self.pmis(keys, entities)
        if len(keys) == 1 and (parts := compound_parts(next(iter(keys)))):
            # A hyphenated compound shows its parts: "drug-related" tells what "drug" does, though K counts
            # the compound apart (in 29 paragraphs, never beside substance abuse).
            for part in parts:
                if part.isalpha() and (k := self.generalizer.key(part)) not in STOPWORDS:
                    pmis = tuple(map(max, pmis, self.pmis(frozenset({k}), entities)))
        if about:
            so = self.second_order
            pmis = tuple(
                max(p, so.pmi(keys, e)) if i in about else p
                for i, (p, e) in enumerate(zip(pmis, entities, strict=True))
            )
        return tuple(
            p if p > 0 and p >= policy.evidence_floor * e.ic / policy.alpha else 0.0
            for p, e in zip(pmis, entities, strict=True)
        )

    def settle(
        self,
        text: str,
        by_key: Mapping[str, Sequence[TermOccurrence]],
        risky: dict[str, Risky],
        safe: dict[str, Verdict],
        tokens: Sequence[Token],
        context: Collection[str],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        forbidden: set[str],
        *,
        disclosed: Collection[str] = (),
        thread_disclosed: Collection[str] = (),
        thread_about: Collection[str] = (),
        named: Collection[str] = (),
        thread_named: Collection[str] = (),
        thread_signature: Mapping[str, Collection[str]] | None = None,
        surface: Callable[[str], str] = lambda k: k,
        signature_from: Collection[str] | None = None,
        paragraphs: Sequence[list[str]] | None = None,
    ) -> None:
        """Lower the strongest clues of every unit that is over its budget (adds to ``risky``).

        ``paragraphs``: the keys of each paragraph in the order of ``by_key`` (``detection.layout``), when the round
        has them."""
        if policy.evidence_budget <= 0 or not entities:
            return
        about = self.about(entities, policy, named)
        if signature_from is not None:
            # c's signature in this text (second order, related.py): read from the text as it came (its keys,
            # ``signature_from``); with the signature its thread's earlier messages had (the memory's, memory.py).
            lines = [self.second_order.share * e.ic / policy.alpha for e in entities]
            names_of = {k for e in entities for k in e.keys}
            self.second_order.read({
                entities[i]: [k for k in dict.fromkeys(signature_from) if k not in names_of
                              and self.pmis(frozenset({k}), entities)[i] >= lines[i]]
                for i in about
            }, thread_signature)  # fmt: skip
        if paragraphs is None:
            paragraphs = layout(text, by_key).paragraphs
        allow = {self.generalizer.key(t) for t in policy.allow}
        names = {k for e in entities for k in e.keys}
        # A text about c (it, or its thread, named c) has the policy's stricter named_budget for c.
        budgets = [policy.budget(e.name in named) * e.ic / policy.alpha for e in entities]
        # Named only by an earlier message of the thread: below the usual budget, a decision is the memory's.
        lax = [policy.evidence_budget * e.ic / policy.alpha if e.name in thread_named else 0.0 for e in entities]
        # The thread's own earlier messages count for c when the thread named c (its recipient reads them as about
        # c); the whole stream's only with ``stream_evidence`` (a list's other threads are about other things).
        earlier = self._remembered(disclosed, by_key, allow | names, entities, policy, about, budgets)
        if thread_disclosed and any(e.name in thread_about for e in entities):
            mask = [e.name in thread_about for e in entities]
            for key, c in self._remembered(thread_disclosed, by_key, allow | names, entities, policy, about,
                                           budgets, mask).items():  # fmt: skip
                if key not in earlier:
                    earlier[thread_marker(key)] = c  # the audit names the thread's message that let it through
        base = [sum(c[i] for c in earlier.values()) for i in range(len(entities))]
        if policy.memory_share > 0:
            # Summed, a thread's strongest remembered clues are over the budget on their own in most of its later
            # messages: a paragraph that cannot get below it had every clue at the floor lowered, however little it
            # added. Bounded, it fills that share of the budget, and a paragraph may add the rest (SanitizePolicy).
            base = [min(b, policy.memory_share * budget) for b, budget in zip(base, budgets, strict=True)]

        # The entities, the policy and the second order are fixed over a text's rounds: a clue is asked once per
        # term and text (later rounds repeat most of the first's terms), the entities hashed once a round for
        # it. A key's clue as it will read changes only when it is the one lowered (its own entry is then dropped).
        # With no entity in ``about`` a clue reads no signature: the memory's rounds keep the text's own rounds' clues
        # (reading the thread's signature starts a new generation).
        so = self.second_order
        scope = (tuple(entities), policy, about, so.generation if about else -1, so.texts)
        clues_of = self._clues_for(scope)
        below = self._below_for(scope, (tuple(base), tuple(budgets)))
        nows: dict[str, tuple[float, ...]] = {}
        nothing = tuple(0.0 for _ in entities)

        def clue(keys: frozenset[str]) -> tuple[float, ...]:
            found = clues_of.get(keys)
            if found is None:
                found = clues_of[keys] = self.clue(keys, entities, policy, about)
            return found

        def written(key: str) -> frozenset[str]:
            """What a reader finds where the term stood after this round: its generalization's keys, or itself."""
            if key in risky:
                cur = risky[key].current
                return frozenset() if cur is None else self.generalizer.keys_of(cur)
            return frozenset({key})

        def now(key: str) -> tuple[float, ...]:
            """The clue as the term will read after this round."""
            found = nows.get(key)
            if found is not None:
                return found
            if key in risky:
                cur = risky[key].current
                found = nothing if cur is None else clue(self.generalizer.keys_of(cur))
            elif key in safe:
                found = clue(frozenset({key}))
            elif about and key not in allow and key not in names:
                found = clue(frozenset({key}))  # too rare for K to attest a tie: its second order may
            else:
                found = nothing  # allowed, or unknown to K
            nows[key] = found
            return found

        failed = _Failures(forbidden)
        stuck: set[str] = set()  # names (capitals mid-sentence) that nothing along their chain lowered
        lowered: dict[str, Verdict | None] = {}  # the clues this settle lowered, with what ``safe`` held of them
        risky_keys = risky.keys()
        for keys in paragraphs:
            ordered = tuple(dict.fromkeys(keys))
            seen: tuple[tuple[str, ...], tuple[bool, ...]] | None = None
            if risky_keys.isdisjoint(ordered):
                seen = (ordered, tuple([k in safe for k in ordered]))
                if seen in below:
                    continue  # the same sum as before, below the same budget (``_Below``)
            unit = _Unit(list(ordered))
            self.units_summed += 1
            # Only the clue lowered changes from one pass to the next (``now`` keeps the others); the sums are
            # still taken over every clue in the unit's order, so that they are the same floats every time.
            clues = {k: now(k) for k in unit.keys}
            shown_as = {k: written(k) for k in unit.keys}
            while True:
                # A word a reader finds in the unit tells what it tells once: terms written as one generalization
                # ("housing", "fort", "theater" -> "structure") add its clue once, as the sum is over distinct terms.
                distinct: dict[frozenset[str], tuple[float, ...]] = {}
                for k, c in clues.items():
                    held = distinct.get(shown_as[k])
                    distinct[shown_as[k]] = c if held is None else tuple(map(max, held, c))
                totals = [b + sum(column) for b, column in zip(base, zip(*distinct.values(), strict=True), strict=True)]
                over = max(range(len(entities)), key=lambda i: totals[i] / budgets[i])
                if totals[over] < budgets[over]:
                    if seen is not None:
                        below.add(seen)
                    break
                seen = None  # a unit over its budget changes what its terms read as: it is summed again
                candidates = [k for k, c in clues.items() if c[over] > 0 and k not in unit.tried]
                if not candidates:
                    # Every clue a generalization lowers is lowered, and a text about c is still over its budget:
                    # its strongest name that nothing lowered is written as a name (``_as_name``), never redacted.
                    named_left = [k for k in stuck if k in clues and clues[k][over] > 0 and k not in risky
                                  and k not in unit.named] if over in about else []  # fmt: skip
                    if not named_left:
                        break
                    target = min(named_left, key=lambda k: (-clues[k][over], k))
                    unit.named.add(target)
                    reasons = self._why(over, totals, base, budgets, lax, clues, unit.keys, entities, about,
                                        thread_named, earlier, surface)  # fmt: skip
                    self._as_name(target, over, *reasons, risky, safe, entities, policy, forbidden, clue)
                    nows.pop(target, None)
                    clues[target] = now(target)
                    shown_as[target] = written(target)
                    continue
                target = min(candidates, key=lambda k: (-clues[k][over], k))  # the keys are distinct: no tie
                unit.tried.add(target)
                goal = clues[target][over] - (totals[over] - budgets[over])
                verdict, shown, from_memory = self._why(over, totals, base, budgets, lax, clues, unit.keys, entities,
                                                        about, thread_named, earlier, surface)  # fmt: skip
                fresh = target not in risky
                if fresh and failed.known(target, over):
                    continue  # it would change nothing, and ``clues`` holds its clue as ``now`` reads it
                was_safe = safe.get(target)
                if self._lower(text, target, over, goal, verdict, shown, from_memory, by_key, risky, safe, tokens,
                               context, entities, policy, forbidden, clue):  # fmt: skip
                    stuck.add(target)
                if fresh and target not in risky:
                    failed.note(target, over, walked=goal < clues[target][over])
                elif fresh:
                    lowered[target] = was_safe
                nows.pop(target, None)
                clues[target] = now(target)
                shown_as[target] = written(target)
        if lowered and all(b < budget for b, budget in zip(base, budgets, strict=True)):
            # (with the memory alone at or over a budget no unit can be below it: nothing would be written back)
            self._restore(lowered, paragraphs, risky, safe, base, budgets, clue, now, written, nows)

    def _restore(
        self,
        lowered: Mapping[str, Verdict | None],
        paragraphs: Sequence[list[str]],
        risky: dict[str, Risky],
        safe: dict[str, Verdict],
        base: Sequence[float],
        budgets: Sequence[float],
        clue: Callable[[frozenset[str]], tuple[float, ...]],
        now: Callable[[str], tuple[float, ...]],
        written: Callable[[str], frozenset[str]],
        nows: dict[str, tuple[float, ...]],
    ) -> None:
        """Write back, weakest first, each clue lowered here whose every unit stays below its budget without it.

        Units are settled one after another, strongest clue first: a clue lowered for one unit may no longer be
        needed there once a later unit lowered another clue the two share (or a later round's). The budget is what a
        unit may tell; a word lowered below it is a word lost for nothing."""
        where: dict[str, list[int]] = {}
        for n, keys in enumerate(paragraphs):
            for k in dict.fromkeys(keys):
                if k in lowered:
                    where.setdefault(k, []).append(n)

        def below(n: int) -> bool:
            distinct: dict[frozenset[str], tuple[float, ...]] = {}
            for k in dict.fromkeys(paragraphs[n]):
                c, shown = now(k), written(k)
                held = distinct.get(shown)
                distinct[shown] = c if held is None else tuple(map(max, held, c))
            columns = zip(*distinct.values(), strict=True)
            return all(b + sum(column) < budget for b, column, budget in zip(base, columns, budgets, strict=True))

        def strength(k: str) -> tuple[float, str]:
            return max(x / b for x, b in zip(clue(frozenset({k})), budgets, strict=True)), k

        for key in sorted(lowered, key=strength):
            r = risky.get(key)
            if r is None or r.name:
                continue
            del risky[key]
            if (held := lowered[key]) is not None:
                safe[key] = held
            nows.pop(key, None)
            if all(below(n) for n in where.get(key, ())):
                continue
            risky[key] = r
            safe.pop(key, None)
            nows.pop(key, None)

    def _remembered(
        self,
        disclosed: Collection[str],
        by_key: Mapping[str, Sequence[TermOccurrence]],
        skip: Collection[str],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        about: frozenset[int],
        budgets: Sequence[float],
        mask: Sequence[bool] | None = None,
    ) -> dict[str, tuple[float, ...]]:
        """The riskiest remembered clues (``memory_candidates`` of them) as they count towards a unit, per c (only
        those ``mask`` keeps): the text's own terms and the names are the text's to judge.

        As many as a sentence's groups may join: summed without a bound, a busy stream's everyday words (a radio
        list's "transmit", "receive") reach any budget after enough messages."""
        found: list[tuple[float, str, tuple[float, ...]]] = []
        for key in disclosed:
            if key in by_key or key in skip:
                continue
            c = self.clue(frozenset({key}), entities, policy, about)
            if mask is not None:
                c = tuple(x if m else 0.0 for x, m in zip(c, mask, strict=True))
            if any(c):
                found.append((-max(x / b for x, b in zip(c, budgets, strict=True)), key, c))
        return {key: c for _r, key, c in sorted(found)[: policy.memory_candidates]}

    def _below_for(
        self, scope: _ClueScope, levels: tuple[tuple[float, ...], tuple[float, ...]]
    ) -> set[tuple[tuple[str, ...], tuple[bool, ...]]]:
        if not self.incremental:
            return set()
        held = self._text_below  # read once: another thread may replace it
        if held is None or held.scope != scope or held.levels != levels:
            held = self._text_below = _Below(scope, levels)
        return held.units

    def _clues_for(self, scope: _ClueScope) -> dict[frozenset[str], tuple[float, ...]]:
        held = self._text_clues  # read once: another thread may replace it
        if held is None or held[0] != scope:
            held = self._text_clues = (scope, {})
        return held[1]

    def _why(
        self,
        over: int,
        totals: Sequence[float],
        base: Sequence[float],
        budgets: Sequence[float],
        lax: Sequence[float],
        clues: Mapping[str, tuple[float, ...]],
        keys: Sequence[str],
        entities: Sequence[Entity],
        about: frozenset[int],
        thread_named: Collection[str],
        earlier: Collection[str],
        surface: Callable[[str], str],
    ) -> tuple[Verdict, tuple[str, ...], frozenset[str]]:
        """A unit's decision for c (``over``): its verdict (the sum and the budget), its strongest clues as written,
        and the earlier messages it relied on."""
        own = totals[over] - base[over]
        strongest = heapq.nsmallest(SHOWN_CLUES, clues, key=lambda k: -clues[k][over])  # sorted()[:n]
        verdict = Verdict(0, entities[over], totals[over], budgets[over], totals[over] / budgets[over])
        shown = tuple(surface(k) for k in strongest if clues[k][over] > 0)
        from_memory = frozenset(earlier) if own < budgets[over] else frozenset()
        # Below the usual budget, or judged with the second order at all: only the thread made it so.
        if totals[over] < lax[over] or (over in about and entities[over].name in thread_named):
            from_memory |= {named_marker(entities[over].name)}
        # Judged with terms of S only the thread's earlier messages held: those messages count too.
        lent = self.second_order.lent.get(entities[over]) if over in about else None
        if lent and any(clues[k][over] > 0 and self.second_order.by_thread(frozenset({k}), entities[over])
                        for k in keys):  # fmt: skip
            from_memory |= {signature_marker(entities[over].name, k) for k in lent}
        return verdict, shown, from_memory

    def _as_name(
        self,
        key: str,
        c: int,
        verdict: Verdict,
        shown: tuple[str, ...],
        earlier: frozenset[str],
        risky: dict[str, Risky],
        safe: dict[str, Verdict],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        forbidden: set[str],
        clue: Callable[[frozenset[str]], tuple[float, ...]],
    ) -> None:
        """Write ``key``, a name nothing along its chain lowered, as "name" when that is safe and discloses less.

        A name WordNet lacks, or whose every generalization points at c as much ("Wittenberg", "Huainanzi",
        "Natomas" in a text about c), was left standing as it was, however far over its budget the paragraph
        stayed. What a reader may take from the word without knowing it is that a name stands there: "a name" says
        that much and no more (the name recognizer's kinds, generalization.KIND_NOUNS, are tried first, by
        ``start_chain``). When even that is not safe the name stays: the evidence never redacts.
        """
        r = Risky(key, "stream-evidence" if earlier else "evidence", verdict, group=shown, earlier=earlier,
                  chain=[NAME], name=True)  # fmt: skip
        self.generalizer.advance(r, entities, policy, group=None, forbidden=forbidden)
        cur = r.current
        if cur is None or clue(self.generalizer.keys_of(cur))[c] >= clue(frozenset({key}))[c]:
            return
        risky[key] = r
        safe.pop(key, None)

    def _lower(
        self,
        text: str,
        key: str,
        c: int,
        goal: float,
        verdict: Verdict,
        shown: tuple[str, ...],
        earlier: frozenset[str],
        by_key: Mapping[str, Sequence[TermOccurrence]],
        risky: dict[str, Risky],
        safe: dict[str, Verdict],
        tokens: Sequence[Token],
        context: Collection[str],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        forbidden: set[str],
        clue: Callable[[frozenset[str]], tuple[float, ...]],
    ) -> bool:
        """Move ``key`` along its chain to a generalization whose clue for c is at most ``goal``, or the lowest.

        ``clue``: ``self.clue`` for the settle's entities, policy and second order (which a settle holds fixed),
        kept per term by the settle. True when ``key`` is a fresh term written as a name (capitals mid-sentence)
        that nothing along its chain lowered (``_as_name``)."""
        fresh = key not in risky
        # A modifier with no generalization is left out (modifiers.py) only when its clue is strong on its own: a
        # weak one ("little", "recently") carries more of the sentence's meaning than of c.
        strong = clue(frozenset({key}))[c] >= OMIT_FLOOR * entities[c].ic / policy.alpha
        if fresh:
            r = Risky(key, "stream-evidence" if earlier else "evidence", verdict, group=shown, earlier=earlier)
            self.generalizer.start_chain(r, text, by_key[key], tokens, context, entities, policy, forbidden, kin=True)
            if not strong and is_omitted(r.current):
                r.redacted = True
            r.omit = r.omit and strong
            start = clue(frozenset({key}))[c]
            saved = (-1, 0)
        else:
            r = risky[key]
            cur = r.current
            if cur is None or is_omitted(cur):
                return False
            r.omit = r.omit and strong
            start = clue(self.generalizer.keys_of(cur))[c]
            saved = (r.position, len(r.steps))
            self.generalizer.advance(r, entities, policy, group=None, forbidden=forbidden)
        best: tuple[int, int, float] | None = None
        while (cur := r.current) is not None:
            e = clue(self.generalizer.keys_of(cur))[c]
            if e < start and (best is None or e < best[2]):
                best = (r.position, len(r.steps), e)
            if e <= goal:
                break
            self.generalizer.advance(r, entities, policy, group=None, forbidden=forbidden)
        if best is None:
            if not fresh:  # nothing along the chain discloses less: keep what it was
                r.position, r.redacted = saved[0], False
                del r.steps[saved[1] :]
            return fresh and bool(r.name)
        r.position, r.redacted = best[0], False
        del r.steps[best[1] :]
        if fresh:
            risky[key] = r
            safe.pop(key, None)
        else:
            r.group = r.group or shown
            r.earlier |= earlier
        return False
