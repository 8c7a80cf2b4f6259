"""Algorithm 1, lines 2-11, and beyond: which terms of a text are risky, and why.

A term is risky when it names c, is on the policy's deny list, reaches the
threshold by PMI (Definition 6), holds a risky word (a phrase) or derives
from a risky base (a compound, a derived form); a term K barely knows is
judged by its context. Groups of individually safe terms that share a
sentence are judged together (eq. 3), and the member that discloses most is
generalized until the group is safe. A stream's memory (terms earlier
messages let through) joins those groups, never as the member generalized.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from gateway.model.derived import (
    MIN_GLUED_NAME,
    PREFIXES,
    acronym_plural,
    compound_parts,
    derivation_bases,
    form_of,
    glued_names,
    numbered_name,
    respelt_name,
    shared_stem,
)
from gateway.model.generalization import Generalizer, Risky
from gateway.model.incremental import Classified, GroupMemo, Layout, Members
from gateway.model.measure import Conjuncts, Measure, Verdict, canon, compact, name_verdict
from gateway.model.records import Entity, SanitizePolicy
from gateway.model.terms import STOPWORDS, TermOccurrence, Token

_K = TypeVar("_K")
_V = TypeVar("_V")


class Detector:
    def __init__(self, measure: Measure, generalizer: Generalizer, key: Callable[[str], str]) -> None:
        self.measure = measure
        self.generalizer = generalizer
        self.key = key
        self._memory_ratios: _PerPolicy[str, float | None] = _PerPolicy()
        # Every word of every text is asked whether it derives from a risky base: the same words, message after
        # message (a list's headers and footers), so the answers are kept across texts (``derived``).
        self._classified: _PerPolicy[str, Classified] = _PerPolicy(30_000)
        self._derived: _PerPolicy[tuple[str, str, int], tuple[Verdict, str] | None] = _PerPolicy(30_000)
        self._safe_groups: _SafeGroups = _SafeGroups()  # by measure.compact(conjuncts): a fifth of the tuple
        self._safe_units: _SafeGroups = _SafeGroups(max_groups=4096)  # units with remembered terms

    def classify(
        self,
        by_key: dict[str, list[TermOccurrence]],
        tokens: Sequence[Token],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        avoid: Collection[str],
    ) -> tuple[dict[str, Risky], dict[str, Verdict]]:
        """Algorithm 1, lines 2-11, for every distinct term: risky (and why), or safe with its ratio.

        What was found for each key is kept for the worker's later texts and rounds (``_classified``: it
        depends on nothing a round or a text changes), so a later round asks K only about new terms.
        """
        # A key's classification is a function of K, the key, the entities and alpha: kept for every later text.
        classified = self._classified.of(entities, policy.alpha)
        allow = {self.key(t) for t in policy.allow}
        deny = {self.key(t) for t in policy.deny}
        names = {k: e for e in entities for k in e.keys}
        min_support = self.measure.min_support
        risky: dict[str, Risky] = {}
        safe: dict[str, Verdict] = {}
        unknown: list[str] = []
        for key in by_key:
            if key in allow:
                continue
            if key in avoid:
                # Flagged in an earlier round or policy, and back (a phrase re-formed
                # around a replacement): the final check would find it.
                risky[key] = Risky(key, "flagged-earlier", None)
            elif key in deny:
                risky[key] = Risky(key, "deny-list", None)
            elif key in names:
                e = names[key]
                risky[key] = Risky(key, "entity-name", name_verdict(e, policy.alpha))
            else:
                c = classified.get(key)
                if c is None:
                    c = Classified(self.measure.term(key, entities, policy.alpha),
                                   self.measure.riskiest_word(key, names, entities, policy.alpha))  # fmt: skip
                    classified[key] = c
                v, part = c.verdict, c.part
                derived = None
                if part is None and " " not in key and (v.n < min_support or not v.risky):
                    derived = self.derived(key, surface_of(tokens, by_key[key][0]), v.n, names, entities, policy.alpha)
                if part is not None and (v.n < min_support or not v.risky):
                    # The phrase's words stay in the text: it discloses at least
                    # what its riskiest word does ("antiretroviral drug").
                    risky[key] = Risky(key, "word-of-phrase", part)
                elif derived is not None:
                    risky[key] = Risky(key, derived[1], derived[0])
                elif v.n < min_support:
                    unknown.append(key)
                elif v.risky:
                    risky[key] = Risky(key, "pmi", v)
                else:
                    safe[key] = v
        self._forms(by_key, tokens, risky, safe, unknown, allow)
        if unknown and policy.unknown != "keep":
            hot: dict[int, list[int]] = {}  # sentence -> token positions of risky terms
            for k in risky:
                for o in by_key[k]:
                    hot.setdefault(o.sentence, []).append(o.first_token)
            for key in unknown:
                if policy.unknown == "redact":
                    risky[key] = Risky(key, "unknown-to-K", None)
                elif _near(by_key[key], hot) and _wordlike(surface_of(tokens, by_key[key][0])):
                    risky[key] = Risky(key, "unknown-near-risk", None)
        return risky, safe

    def _forms(
        self,
        by_key: dict[str, list[TermOccurrence]],
        tokens: Sequence[Token],
        risky: dict[str, Risky],
        safe: dict[str, Verdict],
        unknown: list[str],
        allow: Collection[str],
    ) -> None:
        """A word K barely knows that is a form of a term this text flags for c discloses what that term does.

        ``derived`` reads forms of c's own names and of terms K ties to c on its counts; a word built on a term
        that is risky only here, beside it, is read by a reader as that term ("tao4" in a text that writes
        "Tao", "papillomatosis" beside "papilloma"), though K holds the form itself in a few paragraphs at
        most (derived.form_of). Judged per text: its bases are this text's risky terms.
        """
        bases: dict[str, Risky] = {}
        for k, r in risky.items():
            if r.reason in _FORM_BASES and r.verdict is not None and " " not in k and len(k) >= MIN_GLUED_NAME:
                bases[k] = r
        if not bases:
            return
        terms = sorted(bases)  # the first match must not follow the text's order of terms
        rare = [k for k, v in safe.items() if v.n < DERIVED_MAX_SUPPORT]

        def known(word: str) -> bool:
            return self.measure.count((frozenset({self.key(word)}),)) >= DERIVED_MAX_SUPPORT

        for key in [*unknown, *rare]:
            if key in allow or " " in key:
                continue
            parts = compound_parts(surface_of(tokens, by_key[key][0])) or [key]
            words = [w for p in parts if (w := self.key(p))]
            base = next((b for w in words if (b := w if w in bases else form_of(w, terms, known))), None)
            if base is None:
                continue
            r = Risky(key, "form-of-term", bases[base].verdict, group=(base,), base=bases[base])
            risky[key] = r
            safe.pop(key, None)
            if key in unknown:
                unknown.remove(key)

    def derived(
        self, key: str, surface: str, n: int, names: dict[str, Entity], entities: Sequence[Entity], alpha: float
    ) -> tuple[Verdict, str] | None:
        """A compound or derived word discloses what its riskiest part or base does (``_derived``).

        The answer is a function of K, the word, its count, the entities (``names`` are their keys) and alpha,
        so it is kept per entity set and alpha for every later text.
        """
        known = self._derived.of(entities, alpha)
        cache_key = (key, surface, n)
        try:
            return known[cache_key]
        except KeyError:
            found = known[cache_key] = self._derive(key, surface, n, names, entities, alpha)
            return found

    def _derive(
        self, key: str, surface: str, n: int, names: dict[str, Entity], entities: Sequence[Entity], alpha: float
    ) -> tuple[Verdict, str] | None:
        """A compound or derived word discloses what its riskiest part or base does.

        Compounds ("AIDS-like", "cocaine-induced", "CD4-CCR5") are judged by
        their parts whatever K says of the whole; derivations ("Houstonians",
        "Chlamydial"), glued names ("HIVpositive") and numbered names ("HIV1")
        only when K barely knows the word: a common one ("Atlantic", "CD4") has
        counts of its own.
        """

        def risky_term(k: str) -> Verdict | None:
            if k in names:
                return name_verdict(names[k], alpha)
            v = self.measure.term(k, entities, alpha)
            return v if v.n >= self.measure.estimator.min_support and v.risky else None

        parts = compound_parts(surface)
        if parts:
            found = [v for p in parts if (k := self.key(p)) and k not in STOPWORDS and (v := risky_term(k))]
            if not found and n < DERIVED_MAX_SUPPORT:
                words = [self.key(p) for p in parts]
                found = [d[0] for w in words if w and (d := self.derived(w, w, 0, names, entities, alpha))]
            return (max(found, key=lambda v: v.ratio), "compound") if found else None
        acronym = acronym_plural(surface)
        if acronym is not None and acronym in names:
            return name_verdict(names[acronym], alpha), "derived-form"
        if n >= DERIVED_MAX_SUPPORT:
            return None
        letters = numbered_name(key)
        if letters is not None:
            return (name_verdict(names[letters], alpha), "derived-form") if letters in names else None
        if not key.isalpha():
            return None
        for name, rest in glued_names(key, names):
            if rest in PREFIXES or self.measure.count((frozenset({self.key(rest)}),)) >= DERIVED_MAX_SUPPORT:
                return name_verdict(names[name], alpha), "derived-form"
        for base in derivation_bases(key):
            if base in names:
                return name_verdict(names[base], alpha), "derived-form"
            v = self.measure.term(base, entities, alpha)
            if v.n >= DERIVED_MIN_BASE and v.risky:
                return v, "derived-form"
        if (stem := shared_stem(key, sorted(names))) is not None:
            return name_verdict(names[stem], alpha), "derived-form"
        if n < self.measure.min_support and (respelt := respelt_name(key, names)) is not None:
            return name_verdict(names[respelt], alpha), "derived-form"
        return None

    def remembered(
        self,
        disclosed: Collection[str],
        by_key: dict[str, list[TermOccurrence]],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        thread: Collection[str] = (),
    ) -> dict[str, tuple[frozenset[str], float]]:
        """Disclosed keys that may join a group, as ``_group_members`` gives them: a term this text
        has itself is judged as this text's; at most ``memory_candidates`` of them, riskiest first.

        Beside them, the riskiest ``memory_candidates`` of those ``thread`` holds (what earlier messages of this
        message's own thread let through): a busy stream's riskiest terms come from its other threads, and chosen
        by risk alone they left out terms of the reply's own thread in 10 of the 17 replies among 300 archive
        messages (85 terms). Both sets together, not the thread's instead of the stream's: the memory only adds."""
        allow = {self.key(t) for t in policy.allow}
        ratios = self._memory_ratios.of(entities, policy.alpha)
        floor = policy.group_floor
        cands: list[tuple[float, str]] = []
        for key in disclosed:
            if key in by_key or key in allow:
                continue
            if key in ratios:
                ratio = ratios[key]
            else:
                v = self.measure.term(key, entities, policy.alpha)
                ratio = ratios[key] = v.ratio if v.n >= self.measure.min_support else None
            if ratio is not None and ratio >= floor:
                cands.append((ratio, key))
        cands.sort(reverse=True)
        n = policy.memory_candidates
        if thread and len(cands) > n:
            # The stream's riskiest and the thread's, in the order by risk (the groups' order).
            chosen = {key for _r, key in cands[:n]} | {key for _r, key in [rk for rk in cands if rk[1] in thread][:n]}
            return {key: (frozenset({key}), ratio) for ratio, key in cands if key in chosen}
        return {key: (frozenset({key}), ratio) for ratio, key in cands[:n]}

    def groups(self, st: RoundState) -> None:
        """Judge the groups of every sentence and paragraph; generalize (or redact) a member of each risky one."""
        policy = st.policy
        units = st.layout.units if st.layout is not None else _units(st.text, st.by_key)
        remembered = st.remembered
        judged = st.memo.judged
        st.memo.remembering(remembered)
        safe_units = st.memo.units
        plain = st.memo.plain
        risky = st.risky.keys()
        for sent_keys in units:
            seen = tuple(sent_keys)
            if seen in plain and risky.isdisjoint(seen):
                continue  # its members are the safe ones found to form no risky group (GroupMemo.plain)
            for attempt in range(4 * policy.group_candidates):  # each pass generalizes one member
                own = self._group_members(sent_keys, st.risky, st.safe, policy, st.written, st.entities)
                if not own or (len(own) < 2 and not remembered):
                    break  # no group holds fewer than two members, nor only remembered ones (_first_risky_group)
                unit = st.memo.unit_key(own)
                if unit in safe_units:
                    if attempt == 0 and risky.isdisjoint(seen):
                        plain.add(seen)
                    break  # these members were found to form no risky group (a verdict is a function of them)
                members = {**remembered, **own}
                # Groups within the text first: the memory is named only for what the text alone did not cause.
                hit = None if unit in st.memo.own else self._first_risky_group(own, st.entities, policy, judged)
                if hit is None:
                    st.memo.own.add(unit)
                    if remembered:
                        hit = self._first_risky_with_memory(members, remembered.keys() - own.keys(), st.entities,
                                                            policy, judged)  # fmt: skip
                if hit is None:
                    safe_units.add(unit)
                    if attempt == 0 and risky.isdisjoint(seen):
                        plain.add(seen)
                    break
                group_keys, verdict = hit
                shown = tuple(surface_of(st.tokens, st.by_key[k][0]) if k in st.by_key else k for k in group_keys)
                earlier = frozenset(k for k in group_keys if k not in own)
                # The member of this text that discloses most alone is the one to generalize; when it has no
                # generalization, the next that has one (a redaction is the costliest answer).
                order = sorted((k for k in group_keys if k in own), key=lambda k: members[k][1], reverse=True)
                found = _GroupHit(group_keys, members, verdict, shown, earlier)
                if not st.redact and self._generalize_one(st, order, found):
                    continue
                target = order[0]
                others = canon(members[k][0] for k in group_keys if k != target)
                r = st.risky.get(target)
                if r is None:
                    r = Risky(target, "stream" if earlier else "group", verdict, group=shown, redacted=True,
                              earlier=earlier)  # fmt: skip
                    st.risky[target] = r
                    st.forbidden.add(target)
                    st.safe.pop(target, None)
                else:
                    r.group = r.group or shown
                    r.earlier |= earlier
                    self.generalizer.advance(r, st.entities, policy, group=others, forbidden=st.forbidden)

    def first_groups_risky(
        self,
        text: str,
        by_key: dict[str, list[TermOccurrence]],
        safe: dict[str, Verdict],
        remembered: Members,
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        judged: set[Conjuncts],
        *,
        own: bool = True,
    ) -> bool:
        """Would the first round find a risky group in a text with no risky term (``safe`` as ``classify`` found
        them), alone or with the stream's ``remembered`` members? ``own=False``: its own groups are known safe
        (the fast path's bound cleared them), only those with the memory are asked.

        ``groups``' first question for each unit: the same members, the same groups, judged by the same counts
        and caches (prefilter.py asks it where its bound is too loose to clear them).
        """
        if not own and not remembered:
            return False
        fixed = remembered.keys()
        for sent_keys in _units(text, by_key):
            members = self._group_members(sent_keys, {}, safe, policy, None, entities)
            if not members or (len(members) < 2 and not remembered):
                continue
            if own and self._first_risky_group(members, entities, policy, judged) is not None:
                return True
            if remembered and self._first_risky_with_memory(
                {**remembered, **members}, fixed - members.keys(), entities, policy, judged
            ) is not None:  # fmt: skip
                return True
        return False

    def _generalize_one(self, st: RoundState, order: Sequence[str], hit: _GroupHit) -> bool:
        """Generalize the first member of a risky group, in ``order``, that a safe term can replace."""
        for target in order:
            if target in st.risky:
                continue
            others = canon(hit.members[k][0] for k in hit.keys if k != target)
            r = Risky(target, "stream" if hit.earlier else "group", hit.verdict, group=hit.shown, earlier=hit.earlier)
            self.generalizer.start_chain(r, st.text, st.by_key[target], st.tokens, st.context, st.entities,
                                         st.policy, st.forbidden)  # fmt: skip
            if not r.redacted:
                cur = r.current
                assert cur is not None
                if self.measure.risky_group(canon((*others, self.generalizer.keys_of(cur))), st.entities,
                                            st.policy.alpha):  # fmt: skip
                    self.generalizer.advance(r, st.entities, st.policy, group=others, forbidden=st.forbidden)
            if not r.redacted:
                st.risky[target] = r
                st.forbidden.add(target)
                st.safe.pop(target, None)
                return True
        return False

    def _group_members(
        self,
        sent_keys: Sequence[str],
        risky: dict[str, Risky],
        safe: dict[str, Verdict],
        policy: SanitizePolicy,
        written: Mapping[str, frozenset[str]] | None = None,
        entities: Sequence[Entity] = (),
    ) -> dict[str, tuple[frozenset[str], float]]:
        """Terms of a sentence as they will read after this round, with their ratio (a word an earlier round wrote
        as a generalization, in ``written``, as the sense it stands for)."""
        cands: list[tuple[float, str, frozenset[str]]] = []
        for key in sent_keys:
            if key in risky:
                r = risky[key]
                cur = r.current
                if cur is None:
                    continue
                accepted = [s for s in r.steps if s.accepted]
                ratio = (accepted[-1].pmi or 0.0) / (accepted[-1].threshold or 1.0) if accepted else 0.0
                keys = self.generalizer.keys_of(cur)
            elif written and key in written and key in safe:
                keys = written[key]
                ratio = self.measure.verdict((keys,), entities, policy.alpha).ratio
            elif key in safe:
                ratio = safe[key].ratio
                keys = frozenset({key})
            else:
                continue
            if ratio >= policy.group_floor:
                cands.append((ratio, key, keys))
        cands.sort(reverse=True)
        return {key: (keys, ratio) for ratio, key, keys in cands[: policy.group_candidates]}

    def _first_risky_with_memory(
        self,
        members: Members,
        fixed: Collection[str],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        judged: set[Conjuncts],
    ) -> tuple[tuple[str, ...], Verdict] | None:
        """``_first_risky_group`` with a stream's remembered terms, asked once per worker for a safe unit.

        A list's boilerplate lines (its footer, the relay's trace headers) meet the same remembered terms
        message after message. Whether some group of these members is risky depends on the members' keys
        (as generalized now), which of them are remembered, the entities, alpha and max_group only.
        """
        safe = self._safe_units.of(entities, policy.alpha)
        unit = _unit_key(members, fixed, policy.max_group)
        if unit is not None and unit in safe:
            return None
        hit = self._first_risky_group(members, entities, policy, judged, fixed=fixed)
        if hit is None and unit is not None:
            safe.add(unit)
        return hit

    def _first_risky_group(
        self,
        members: dict[str, tuple[frozenset[str], float]],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        judged: set[Conjuncts],
        fixed: Collection[str] = (),
    ) -> tuple[tuple[str, ...], Verdict] | None:
        """The first group (smallest first) that is risky.

        ``fixed`` members (a stream's memory) are exactly one per group: a pair with a term of the text, or a
        triple with two; groups of two earlier terms cost the most counts and were not worth them (README).
        Groups of the text's own terms alone are the caller's first question (``groups``), not asked again here.
        """
        keys = list(members)
        safe = self._safe_groups.of(entities, policy.alpha)
        # Pairs held by too few documents to be judged: no triple holding one is judged either.
        scarce: set[frozenset[str]] = set()
        for size in range(2, min(policy.max_group, len(keys)) + 1):
            for combo in _combinations(keys, size, fixed):
                if size > 2 and any(frozenset(pair) in scarce for pair in itertools.combinations(combo, 2)):
                    continue
                conj = canon(members[k][0] for k in combo)
                if size == 2 and self.measure.scarce(conj):
                    scarce.add(frozenset(combo))
                    continue
                if conj in judged:
                    continue
                known = compact(conj)
                if known in safe:
                    continue
                v = self.measure.risky_group(conj, entities, policy.alpha)
                if v is not None:
                    return combo, v
                judged.add(conj)
                safe.add(known)
        return None


def _units(text: str, by_key: Mapping[str, Sequence[TermOccurrence]]) -> list[list[str]]:
    """The keys of each sentence, and of each paragraph holding more than one: the units groups are judged in."""
    return layout(text, by_key).units


def layout(text: str, by_key: Mapping[str, Sequence[TermOccurrence]]) -> Layout:
    """The keys of each sentence and of each paragraph (``Layout``), each in the order of ``by_key``."""
    sentences: dict[int, list[str]] = {}
    paragraphs: dict[int, list[str]] = {}
    paragraph = paragraph_of(text)
    for key, occs in by_key.items():
        if len(occs) == 1:  # most keys occur once: no set of their sentences and paragraphs to build
            o = occs[0]
            sentences.setdefault(o.sentence, []).append(key)
            paragraphs.setdefault(paragraph(o.start), []).append(key)
            continue
        for s in {o.sentence for o in occs}:
            sentences.setdefault(s, []).append(key)
        for p in {paragraph(o.start) for o in occs}:
            paragraphs.setdefault(p, []).append(key)
    # Clues spread over a paragraph add up as they do in a sentence: its strongest terms are
    # judged together too (a paragraph of one sentence adds nothing new: those groups are judged).
    return Layout(list(sentences.values()), list(paragraphs.values()))


def _combinations(keys: Sequence[str], size: int, fixed: Collection[str]) -> Iterable[tuple[str, ...]]:
    """``itertools.combinations(keys, size)`` in its order; with ``fixed``, only those holding exactly one of them.

    Built from the allowed groups alone: with a stream's 12 remembered terms beside a sentence's 6, a test of
    every combination (969, of which 252 qualify) cost more than judging the groups (a sentence and a line of a
    long message each ask it).
    """
    if not fixed:
        return itertools.combinations(keys, size)
    return (pick(keys) for pick in _picks(tuple(k in fixed for k in keys), size))


@functools.lru_cache(maxsize=1024)
def _picks(held: tuple[bool, ...], size: int) -> tuple[Callable[[Sequence[str]], tuple[str, ...]], ...]:
    """For keys of which those at ``held`` are remembered: a getter for each group of ``_combinations``."""
    own = [i for i, h in enumerate(held) if not h]
    chosen = sorted(
        tuple(sorted((f, *rest))) for f, h in enumerate(held) if h for rest in itertools.combinations(own, size - 1)
    )
    return tuple(operator.itemgetter(*pick) for pick in chosen)  # groups of two or more: each gives a tuple


@dataclass(slots=True)
class RoundState:
    """What one round's group judgement reads, and the decisions it adds to (``Detector.groups``)."""

    text: str
    by_key: dict[str, list[TermOccurrence]]
    risky: dict[str, Risky]
    safe: dict[str, Verdict]
    tokens: Sequence[Token]
    context: Collection[str]
    entities: Sequence[Entity]
    policy: SanitizePolicy
    forbidden: set[str]
    redact: bool = False
    remembered: Members = field(default_factory=dict)
    memo: GroupMemo = field(default_factory=GroupMemo)
    # Words the text's earlier rounds wrote as generalizations, each with the keys of what it stands for (all
    # lexicalizations of its sense, as the round that chose it judged it): the memory's rounds judge them so.
    written: Mapping[str, frozenset[str]] = field(default_factory=dict)
    layout: Layout | None = None  # the text's units, when the round has them (else built from ``by_key``)


@dataclass(frozen=True, slots=True)
class _GroupHit:
    keys: tuple[str, ...]
    members: Members
    verdict: Verdict
    shown: tuple[str, ...]
    earlier: frozenset[str]


UNKNOWN_WINDOW = 8  # tokens either side of a risky term
# Decisions whose term stands for c on its own, so that a form of it does too (``Detector._forms``).
_FORM_BASES = frozenset({"entity-name", "derived-form", "pmi"})
# A word in fewer paragraphs of K than this may be judged by the base it derives from.
DERIVED_MAX_SUPPORT = 50
DERIVED_MIN_BASE = 10  # a base must itself be well attested, or any rare stem would do
_PARAGRAPH_BREAK = re.compile(r"\n")
_WORDLIKE = re.compile(r"[^\W\d_]+(?:[-'\u2019 ][^\W\d_]+)*")


def _near(occs: Sequence[TermOccurrence], hot: dict[int, list[int]]) -> bool:
    return any(abs(o.first_token - p) <= UNKNOWN_WINDOW for o in occs for p in hot.get(o.sentence, ()))


def _wordlike(surface: str) -> bool:
    """A word a person wrote (a rare name, a drug), not a code, hash or identifier."""
    if len(surface) > 30 or not _WORDLIKE.fullmatch(surface):
        return False
    inner_caps = sum(ch.isupper() for ch in surface[1:])
    return (surface.isupper() and len(surface) <= 6) or inner_caps <= 1 or surface.istitle()


def paragraph_of(text: str) -> Callable[[int], int]:
    """Offset -> index of its paragraph (a line: mail and K's own paragraphs are lines)."""
    breaks = [m.start() for m in _PARAGRAPH_BREAK.finditer(text)]
    # A partial of bisect is called in C: asked of every occurrence of a text, once or twice a round, a lambda's
    # frame cost more than the search.
    return functools.partial(bisect.bisect_right, breaks)


def surface_of(tokens: Sequence[Token], occ: TermOccurrence) -> str:
    if occ.n_tokens == 1:  # most terms are one word (asked for every key of every round)
        return tokens[occ.first_token].text
    return " ".join(t.text for t in tokens[occ.first_token : occ.first_token + occ.n_tokens])


class _PerPolicy(Generic[_K, _V]):
    """Answers that are functions of K, their key, the entities and alpha, kept per entity set and alpha.

    Each remembered key's own ratio (PMI over the threshold, its riskiest entity; None when K knows it too
    little): a stream's memory is judged against every message of the stream, round after round, and a
    list stream remembers thousands of keys, each asked once here instead of once a round through the
    measure's compact keys and caches. Whether a word derives from a risky base: asked of every word of
    every text.
    """

    def __init__(self, max_keys: int = 20_000) -> None:  # per entity set and alpha; then started again
        self.max_keys = max_keys
        self._by: dict[tuple[tuple[Entity, ...], float], dict[_K, _V]] = {}
        self._last: tuple[Sequence[Entity], float, dict[_K, _V]] | None = None

    def of(self, entities: Sequence[Entity], alpha: float) -> dict[_K, _V]:
        # Asked for every key of a text (``derived``), with the same entities object all through a text: the
        # last answer is kept for it, as hashing the entities (a dataclass's hash each) cost more than the rest.
        last = self._last
        if last is not None and last[0] is entities and last[1] == alpha and len(last[2]) <= self.max_keys:
            return last[2]
        key = (tuple(entities), alpha)
        found = self._by.get(key)
        if found is None or len(found) > self.max_keys:
            if len(self._by) >= 16:
                self._by.clear()
            found = self._by[key] = {}
        if isinstance(entities, tuple):  # immutable: its identity stands for its value
            self._last = (entities, alpha, found)
        return found


def _unit_key(members: Members, fixed: Collection[str], max_group: int) -> str | None:
    """One string for a unit's members: each key, whether it is remembered, and what it reads as now.

    None when a key holds one of the separators (no word does; the key would not be one-to-one).
    """
    parts = sorted(f"{int(k in fixed)}\x1f{k}\x1f{_SEP.join(sorted(conj))}" for k, (conj, _ratio) in members.items())
    unit = "\x1e".join(parts) + f"\x1e{max_group}"
    n = len(members)
    if (
        unit.count("\x1e") != n
        or unit.count("\x1f") != 2 * n
        or unit.count(_SEP) != sum(len(conj) - 1 for conj, _ratio in members.values())
    ):
        return None
    return unit


_SEP = "\x1d"


class _SafeGroups:
    """Groups (or units of members) found not risky, per entity set and alpha, across the texts a worker judges.

    The same pairs and triples recur message after message in a stream (a list's remembered terms
    beside its usual words). Whether a group is risky is a function of K, the group, the entities
    and alpha (``Measure.risky_group``), so a group found safe once is safe for every text; the
    text's own memo (``GroupMemo.judged``) only spans its rounds.
    """

    def __init__(self, max_groups: int = 20_000) -> None:  # per entity set and alpha; then started again
        self.max_groups = max_groups
        self._by: dict[tuple[tuple[Entity, ...], float], set[str]] = {}
        self._last: tuple[Sequence[Entity], float, set[str]] | None = None

    def of(self, entities: Sequence[Entity], alpha: float) -> set[str]:
        last = self._last  # the same entities object all through a text, as in _PerPolicy.of
        if last is not None and last[0] is entities and last[1] == alpha and len(last[2]) <= self.max_groups:
            return last[2]
        key = (tuple(entities), alpha)
        groups = self._by.get(key)
        if groups is None or len(groups) > self.max_groups:
            if len(self._by) >= 16:
                self._by.clear()
            groups = self._by[key] = set()
        if isinstance(entities, tuple):  # immutable: its identity stands for its value
            self._last = (entities, alpha, groups)
        return groups
