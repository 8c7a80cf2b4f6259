"""Algorithm 1 of the paper, extended to groups of terms, unknown terms and rounds.

For every distinct term t of a text and every entity c of the policy:

    t is risky  iff  PMI(c;t) >= IC(c) / alpha           (Definition 6)

A risky term is replaced by the first generalization g of its chosen sense
with PMI(c;g) < IC(c)/alpha for every c, or redacted when there is none.

Beyond the paper:
  * groups: pairs and triples of individually safe terms that share a
    sentence are judged by PMI(c;T) (eq. 3); the member that discloses most
    is generalized until the group is safe, and the decision records the group;
  * lexicalizations: c is counted as the union of its names (entities.py);
  * small counts: smoothed PMI, and terms below ``min_support`` are "unknown
    to K" and judged by context (policy.unknown);
  * rounds: the rewritten text is checked again, so a replacement that forms a
    new risky group is caught; the last round redacts, so the result is a
    fixpoint: sanitizing it again changes nothing.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from gateway.errors import InputError
from gateway.model.derived import compound_parts, derivation_bases, glued_names
from gateway.model.entities import resolve_entity
from gateway.model.knowledge import Estimator, Knowledge
from gateway.model.records import (
    Decision,
    Entity,
    Explanation,
    SanitizePolicy,
    SanitizeResult,
    Step,
    Utility,
)
from gateway.model.rewrite import (
    REDACTION_MARKER,
    Edit,
    Rewritten,
    TextEdit,
    apply_edits,
    compose,
    determiner_before,
    sentence_initial,
    surface_replacement,
    tidy_markers,
    with_article,
)
from gateway.model.taxonomy import Generalization, Taxonomy, choose_sense
from gateway.model.terms import STOPWORDS, PhraseSet, TermOccurrence, Token, extract_terms, key_of, sentence_starts

Conjuncts = tuple[frozenset[str], ...]


def _canon(conjuncts: Iterable[frozenset[str]]) -> Conjuncts:
    """Order-free key for a count: the same set of conjuncts, the same key."""
    return tuple(sorted(conjuncts, key=hash))


class Language(Protocol):
    def lemmatize(self, word: str) -> str: ...

    def plural(self, noun: str) -> str: ...


class Synonyms(Protocol):
    def synonyms(self, term: str) -> set[str]: ...


@dataclass(frozen=True, slots=True)
class _Verdict:
    """How much a term (or group) discloses of the entity it discloses most."""

    n: int
    entity: Entity | None
    pmi: float
    threshold: float
    ratio: float  # pmi / threshold; >= 1 is risky

    @property
    def risky(self) -> bool:
        return self.ratio >= 1.0


@dataclass(slots=True)
class _Risky:
    key: str
    reason: str
    verdict: _Verdict | None
    group: tuple[str, ...] | None = None
    chain: list[Generalization] = field(default_factory=list)
    position: int = -1  # index in chain of the current replacement; -1: not yet chosen
    steps: list[Step] = field(default_factory=list)
    sense: str | None = None
    redacted: bool = False

    @property
    def current(self) -> Generalization | None:
        if self.redacted or not 0 <= self.position < len(self.chain):
            return None
        return self.chain[self.position]


class Engine:
    """The (alpha, C)-sanitized model over an injected K, taxonomy and language."""

    def __init__(
        self,
        *,
        knowledge: Knowledge,
        taxonomy: Taxonomy,
        language: Language,
        synonyms: Synonyms | None = None,
        estimator: Estimator | None = None,
        extra_phrases: Iterable[str] = (),
        min_support: int | None = None,
    ) -> None:
        self.knowledge = knowledge
        self.taxonomy = taxonomy
        self.language = language
        self._synonyms = synonyms
        base = estimator or Estimator()
        k_min = int(getattr(knowledge, "min_support", 1))
        self.estimator = replace(base, min_support=max(base.min_support if min_support is None else min_support, k_min))
        self._keys: dict[str, str] = {}
        self._norms: dict[str, str] = {}  # word -> key, shared by every text
        self._phrases = PhraseSet(knowledge.phrases())
        for p in extra_phrases:
            self._phrases.add(self.key(p))
        self._entities: dict[tuple[str, tuple[str, ...]], Entity] = {}
        self._counts: dict[Conjuncts, int] = {}
        self._ics: dict[str, float] = {}
        self._verdicts: dict[tuple[Conjuncts, tuple[Entity, ...], float], _Verdict] = {}
        self._lock = threading.Lock()

    def terms_of(self, text: str, entities: Sequence[Entity] = ()) -> tuple[list[Token], list[TermOccurrence]]:
        """The terms of a text as the engine judges them.

        A word spelled like an entity's acronym but in mixed case mid-sentence
        ("Vd" for a voltage, "Std" in a class name) is not that acronym, and not a term.
        """
        tokens, occs = extract_terms(text, self.language.lemmatize, self._phrases, self._norms)
        acronyms = {k for e in entities for k in e.acronyms}
        if acronyms:
            occs = [o for o in occs if o.key not in acronyms or not _not_the_acronym(tokens, o.first_token)]
        return tokens, occs

    @property
    def phrase_set(self) -> PhraseSet:
        """Multi-word terms the engine recognises (K's, the entities', the policies')."""
        return self._phrases

    # -- K with a cache -----------------------------------------------------
    def key(self, text: str) -> str:
        found = self._keys.get(text)
        if found is None:
            found = key_of(text, self.language.lemmatize)
            if len(self._keys) < 100_000:
                self._keys[text] = found
        return found

    def count(self, conjuncts: Conjuncts) -> int:
        cached = self._counts.get(conjuncts)
        if cached is not None:
            return cached
        n = self.knowledge.count(conjuncts)
        with self._lock:
            if len(self._counts) > 500_000:
                self._counts.clear()
            self._counts[conjuncts] = n
        return n

    def entity(self, name: str, aliases: Sequence[str] = ()) -> Entity:
        cache_key = (name, tuple(aliases))
        found = self._entities.get(cache_key)
        if found is None:
            syn = self._synonyms.synonyms if self._synonyms is not None else (lambda _t: set())
            found = resolve_entity(
                name,
                knowledge=self.knowledge,
                lemmatize=self.language.lemmatize,
                synonyms=syn,
                aliases=aliases,
                min_support=self.estimator.min_support,
            )
            self._entities[cache_key] = found
            for k in found.keys:  # so that "Los Angeles" in a text is one term
                self._phrases.add(k)
        return found

    def entities_of(self, policy: SanitizePolicy) -> tuple[Entity, ...]:
        for term in (*policy.deny, *policy.allow):
            self._phrases.add(self.key(term))
        return tuple(self.entity(n, [a for e, a in policy.aliases if e == n]) for n in policy.entities)

    def verdict(self, conjuncts: Conjuncts, entities: Sequence[Entity], alpha: float) -> _Verdict:
        cache_key = (conjuncts, tuple(entities), alpha)
        found = self._verdicts.get(cache_key)
        if found is None:
            found = self._verdict(conjuncts, entities, alpha)
            with self._lock:
                if len(self._verdicts) > 200_000:
                    self._verdicts.clear()
                self._verdicts[cache_key] = found
        return found

    def _verdict(self, conjuncts: Conjuncts, entities: Sequence[Entity], alpha: float) -> _Verdict:
        n_t = self.count(conjuncts)
        best = _Verdict(n_t, None, float("-inf"), float("inf"), float("-inf"))
        for e in entities:
            n_ct = self.count(_canon((*conjuncts, e.keys)))
            pmi = self.estimator.pmi(self.knowledge, e.n_docs, n_t, n_ct)
            threshold = e.ic / alpha
            ratio = pmi / threshold
            if ratio > best.ratio:
                best = _Verdict(n_t, e, pmi, threshold, ratio)
        return best

    def ic(self, key: str) -> float:
        found = self._ics.get(key)
        if found is None:
            found = self.estimator.ic(self.knowledge, self.count((frozenset({key}),)))
            if len(self._ics) < 500_000:
                self._ics[key] = found
        return found

    # -- the algorithm --------------------------------------------------------
    def sanitize(self, text: str, policy: SanitizePolicy, *, avoid: Collection[str] = ()) -> SanitizeResult:
        """Sanitize ``text``; no replacement will be one of the ``avoid`` keys.

        ``avoid`` carries the terms earlier policies flagged, so that a later
        policy does not write one back as its own generalization.
        """
        if not text.strip():
            raise InputError("nothing to sanitize: the text is empty")
        entities = self.entities_of(policy)
        original_keys: list[str] = []
        current = text
        rewrites: list[Rewritten] = []
        decisions: list[Decision] = []
        composed: list[TextEdit] = []
        # Every key flagged so far (and by earlier policies): never written back, and
        # redacted wherever a later round still finds it, so the pipeline's check passes.
        flagged: set[str] = set(avoid)
        rounds = 0
        while True:
            rounds += 1
            # The policy's last round, and any round after it, redacts what it finds: each
            # such round removes at least one term, so the loop ends, and it ends clean.
            redacting = rounds >= policy.max_rounds and rounds > 1
            if rounds > policy.max_rounds + MAX_SETTLING_ROUNDS:
                break
            edits, found = self._round(
                current,
                policy,
                entities,
                force_redact=redacting,
                keys_out=original_keys if rounds == 1 else None,
                avoid=flagged,
            )
            if not found:
                break
            rewritten = apply_edits(current, edits)
            for d in found:
                spans = tuple(_to_original(rewrites, s) for s in d.spans)
                decisions.append(replace(d, spans=tuple(sorted(set(spans)))))
                flagged.add(d.term)
            composed = compose(composed, current, rewritten.edits)
            rewrites.append(rewritten)
            current = rewritten.text
        tidy = tidy_markers(current)
        if tidy:
            rewritten = apply_edits(current, tidy)
            composed = compose(composed, current, rewritten.edits)
            current = rewritten.text
        utility = self._utility(original_keys, decisions)
        return SanitizeResult(current, tuple(decisions), utility, entities, policy, rounds, tuple(composed))

    def _utility(self, original_keys: Sequence[str], decisions: Sequence[Decision]) -> Utility:
        """Eq. 7 before and after; eq. 8 is their ratio.

        A generalization keeps at most the information of what it replaced
        (it subsumes it), so a replaced occurrence retains min(IC(t), IC(g)):
        corpus counts are not monotone along WordNet the way Resnik's are,
        and "ill health" is rarer in K than "HIV".
        """
        before = sum(self.ic(key) * n for key, n in Counter(original_keys).items())
        original_ic: dict[tuple[int, int], float] = {}
        final: dict[tuple[int, int], Decision] = {}
        for d in decisions:
            for span in d.spans:
                original_ic.setdefault(span, d.ic_term)
                final[span] = d
        lost = 0.0
        for span, d in final.items():
            kept = 0.0 if d.replacement is None else min(original_ic[span], self.ic(self.key(d.replacement)))
            lost += original_ic[span] - kept
        return Utility(before, max(0.0, before - lost))

    def _round(
        self,
        text: str,
        policy: SanitizePolicy,
        entities: Sequence[Entity],
        *,
        force_redact: bool,
        keys_out: list[str] | None = None,
        avoid: Collection[str] = (),
    ) -> tuple[list[Edit], list[Decision]]:
        tokens, occs = self.terms_of(text, entities)
        if keys_out is not None:
            keys_out.extend(o.key for o in occs)
        by_key: dict[str, list[TermOccurrence]] = {}
        for o in occs:
            by_key.setdefault(o.key, []).append(o)
        allow = {self.key(t) for t in policy.allow}
        deny = {self.key(t) for t in policy.deny}
        names = {k: e for e in entities for k in e.keys}
        min_support = self.estimator.min_support
        risky: dict[str, _Risky] = {}
        safe: dict[str, _Verdict] = {}
        unknown: list[str] = []
        for key in by_key:
            if key in allow:
                continue
            if key in avoid:
                # Flagged in an earlier round or policy, and back (a phrase re-formed
                # around a replacement): the final check would find it.
                risky[key] = _Risky(key, "flagged-earlier", None)
            elif key in deny:
                risky[key] = _Risky(key, "deny-list", None)
            elif key in names:
                e = names[key]
                risky[key] = _Risky(key, "entity-name", _Verdict(e.n_docs, e, e.ic, e.ic / policy.alpha, policy.alpha))
            else:
                v = self.verdict((frozenset({key}),), entities, policy.alpha)
                part = self._riskiest_word(key, names, entities, policy.alpha)
                derived = None
                if part is None and " " not in key and (v.n < min_support or not v.risky):
                    derived = self._derived(key, _surface(tokens, by_key[key][0]), v.n, names, entities, policy.alpha)
                if part is not None and (v.n < min_support or not v.risky):
                    # The phrase's words stay in the text: it discloses at least
                    # what its riskiest word does ("antiretroviral drug").
                    risky[key] = _Risky(key, "word-of-phrase", part)
                elif derived is not None:
                    risky[key] = _Risky(key, derived[1], derived[0])
                elif v.n < min_support:
                    unknown.append(key)
                elif v.risky:
                    risky[key] = _Risky(key, "pmi", v)
                else:
                    safe[key] = v
        if unknown and policy.unknown != "keep":
            hot: dict[int, list[int]] = {}  # sentence -> token positions of risky terms
            for k in risky:
                for o in by_key[k]:
                    hot.setdefault(o.sentence, []).append(o.first_token)
            for key in unknown:
                if policy.unknown == "redact":
                    risky[key] = _Risky(key, "unknown-to-K", None)
                elif _near(by_key[key], hot) and _wordlike(_surface(tokens, by_key[key][0])):
                    risky[key] = _Risky(key, "unknown-near-risk", None)
        context = set(by_key)
        redact_all = force_redact or policy.mode == "redact"
        # A replacement must not be a term this text has flagged (or an earlier policy did).
        forbidden = set(avoid) | set(risky)
        for key, r in risky.items():
            if redact_all:
                r.redacted = True
                continue
            self._start_chain(r, by_key[key], tokens, context, entities, policy, forbidden)
        if policy.max_group >= 2:
            # Groups are judged in every round; in a redacting round their members are redacted.
            self._groups(by_key, risky, safe, tokens, context, entities, policy, forbidden, redact=redact_all)
            for r in risky.values():  # a group may have flagged what another term became
                while (cur := r.current) is not None and self._keys_of(cur) & forbidden:
                    self._advance(r, entities, policy, group=None, forbidden=forbidden)
        return self._edits(text, tokens, by_key, risky, policy)

    def _riskiest_word(
        self, key: str, names: dict[str, Entity], entities: Sequence[Entity], alpha: float
    ) -> _Verdict | None:
        """For a phrase: the verdict of its riskiest word, if that word is risky."""
        if " " not in key:
            return None
        worst: _Verdict | None = None
        for word in key.split(" "):
            if word in STOPWORDS:
                continue
            if word in names:
                e = names[word]
                return _Verdict(e.n_docs, e, e.ic, e.ic / alpha, alpha)
            v = self.verdict((frozenset({word}),), entities, alpha)
            if v.n >= self.estimator.min_support and v.risky and (worst is None or v.ratio > worst.ratio):
                worst = v
        return worst

    def _derived(
        self, key: str, surface: str, n: int, names: dict[str, Entity], entities: Sequence[Entity], alpha: float
    ) -> tuple[_Verdict, str] | None:
        """A compound or derived word discloses what its riskiest part or base does.

        Compounds ("AIDS-like", "cocaine-induced", "CD4-CCR5") are judged by
        their parts whatever K says of the whole; derivations ("Houstonians",
        "Chlamydial") and glued names ("HIVpositive") only when K barely knows
        the word: a common one ("Atlantic") has counts of its own.
        """

        def name_verdict(e: Entity) -> _Verdict:
            return _Verdict(e.n_docs, e, e.ic, e.ic / alpha, alpha)

        def risky_term(k: str) -> _Verdict | None:
            if k in names:
                return name_verdict(names[k])
            v = self.verdict((frozenset({k}),), entities, alpha)
            return v if v.n >= self.estimator.min_support and v.risky else None

        parts = compound_parts(surface)
        if parts:
            found = [v for p in parts if (k := self.key(p)) and k not in STOPWORDS and (v := risky_term(k))]
            if not found and n < DERIVED_MAX_SUPPORT:
                words = [self.key(p) for p in parts]
                found = [d[0] for w in words if w and (d := self._derived(w, w, 0, names, entities, alpha))]
            return (max(found, key=lambda v: v.ratio), "compound") if found else None
        if n >= DERIVED_MAX_SUPPORT or not key.isalpha():
            return None
        for name, rest in glued_names(key, names):
            if rest in _PREFIX_WORDS or self.count((frozenset({self.key(rest)}),)) >= DERIVED_MAX_SUPPORT:
                return name_verdict(names[name]), "derived-form"
        for base in derivation_bases(key):
            if base in names:
                return name_verdict(names[base]), "derived-form"
            v = self.verdict((frozenset({base}),), entities, alpha)
            if v.n >= DERIVED_MIN_BASE and v.risky:
                return v, "derived-form"
        return None

    def _start_chain(
        self,
        r: _Risky,
        occs: Sequence[TermOccurrence],
        tokens: Sequence[Token],
        context: Collection[str],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        forbidden: set[str],
    ) -> None:
        first = occs[0]
        surface = " ".join(t.text for t in tokens[first.first_token : first.first_token + first.n_tokens])
        capitalized = any(
            tokens[o.first_token].text[:1].isupper() and not _starts_sentence(tokens, o.first_token) for o in occs
        )
        senses = self.taxonomy.senses(surface) or self.taxonomy.senses(r.key)
        if capitalized and not surface.isupper() and senses and not any(s.proper or s.is_instance for s in senses):
            # A name the knowledge base does not know ("Cruise", "Holmes"):
            # its common-noun senses would generalize the wrong thing.
            senses = []
        sense = choose_sense(senses, context=context, capitalized=capitalized)
        r.sense = sense.id if sense else None
        r.chain = self.taxonomy.generalizations(surface, r.sense) if senses else []
        head = tokens[first.first_token + first.n_tokens - 1].text
        if not r.chain and first.n_tokens > 1 and head.islower():
            # A compound the knowledge base lacks: its head noun is its first
            # generalization ("Catholic cathedral" is a cathedral).
            r.chain = [Generalization(term=head, source="head-noun"), *self.taxonomy.generalizations(head)]
        self._advance(r, entities, policy, group=None, forbidden=forbidden)

    def _keys_of(self, g: Generalization) -> frozenset[str]:
        return frozenset(self.key(lex) for lex in g.lexicalizations or (g.term,))

    def _advance(
        self,
        r: _Risky,
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
            step = self._judge(r.chain[r.position], entities, policy, group=group, forbidden=forbidden)
            r.steps.append(step)
            if step.accepted:
                return

    def _judge(
        self,
        g: Generalization,
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        *,
        group: Conjuncts | None = None,
        forbidden: Collection[str] = (),
    ) -> Step:
        """Is generalization g safe to write? The Step says why not."""

        def no(why: str, v: _Verdict | None = None) -> Step:
            return Step(term=g.term, source=g.source, pmi=v.pmi if v else None, threshold=v.threshold if v else None,
                        entity=v.entity.name if v and v.entity else None, accepted=False, why=why)  # fmt: skip

        name_map = {k: e for e in entities for k in e.keys}
        keys = self._keys_of(g)
        if keys & set(name_map):
            return no("names a sensitive entity")
        if keys & set(forbidden):
            return no("is itself replaced in this text")
        v = self.verdict((keys,), entities, policy.alpha)
        if v.n < self.estimator.min_support:
            return no("unknown to K")
        word = next((w for k in keys if (w := self._riskiest_word(k, name_map, entities, policy.alpha))), None)
        if word is not None:
            return no("one of its words discloses", word)
        if v.risky:
            return no("still discloses", v)
        if group is not None:
            gv = self.verdict(_canon((*group, keys)), entities, policy.alpha)
            if gv.n >= self.estimator.group_min_support and gv.risky:
                return no("group still discloses", gv)
        return Step(term=g.term, source=g.source, pmi=v.pmi, threshold=v.threshold,
                    entity=v.entity.name if v.entity else None, accepted=True)  # fmt: skip

    def _groups(
        self,
        by_key: dict[str, list[TermOccurrence]],
        risky: dict[str, _Risky],
        safe: dict[str, _Verdict],
        tokens: Sequence[Token],
        context: Collection[str],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        forbidden: set[str],
        *,
        redact: bool = False,
    ) -> None:
        sentences: dict[int, list[str]] = {}
        for key, occs in by_key.items():
            for s in {o.sentence for o in occs}:
                sentences.setdefault(s, []).append(key)
        judged: set[tuple[frozenset[str], ...]] = set()
        for sent_keys in sentences.values():
            for _ in range(4 * policy.group_candidates):  # each pass generalizes one member
                members = self._group_members(sent_keys, risky, safe, policy)
                hit = self._first_risky_group(members, entities, policy, judged)
                if hit is None:
                    break
                group_keys, verdict = hit
                # The member that discloses most alone is the one to generalize.
                target = max(group_keys, key=lambda k: members[k][1])
                others = _canon(members[k][0] for k in group_keys if k != target)
                shown = tuple(_surface(tokens, by_key[k][0]) for k in group_keys)
                r = risky.get(target)
                if r is None:
                    r = _Risky(target, "group", verdict, group=shown)
                    risky[target] = r
                    forbidden.add(target)
                    safe.pop(target, None)
                    if redact:
                        r.redacted = True
                        continue
                    self._start_chain(r, by_key[target], tokens, context, entities, policy, forbidden)
                    if not r.redacted:
                        cur = r.current
                        assert cur is not None
                        keys = self._keys_of(cur)
                        gv = self.verdict(_canon((*others, keys)), entities, policy.alpha)
                        if gv.n >= self.estimator.group_min_support and gv.risky:
                            self._advance(r, entities, policy, group=others, forbidden=forbidden)
                else:
                    r.group = r.group or shown
                    self._advance(r, entities, policy, group=others, forbidden=forbidden)

    def _group_members(
        self,
        sent_keys: Sequence[str],
        risky: dict[str, _Risky],
        safe: dict[str, _Verdict],
        policy: SanitizePolicy,
    ) -> dict[str, tuple[frozenset[str], float]]:
        """Terms of a sentence as they will read after this round, with their ratio."""
        cands: list[tuple[float, str, frozenset[str]]] = []
        for key in sent_keys:
            if key in risky:
                r = risky[key]
                cur = r.current
                if cur is None:
                    continue
                accepted = [s for s in r.steps if s.accepted]
                ratio = (accepted[-1].pmi or 0.0) / (accepted[-1].threshold or 1.0) if accepted else 0.0
                keys = self._keys_of(cur)
            elif key in safe:
                ratio = safe[key].ratio
                keys = frozenset({key})
            else:
                continue
            if ratio >= policy.group_floor:
                cands.append((ratio, key, keys))
        cands.sort(reverse=True)
        return {key: (keys, ratio) for ratio, key, keys in cands[: policy.group_candidates]}

    def _first_risky_group(
        self,
        members: dict[str, tuple[frozenset[str], float]],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        judged: set[tuple[frozenset[str], ...]],
    ) -> tuple[tuple[str, ...], _Verdict] | None:
        keys = list(members)
        for size in range(2, min(policy.max_group, len(keys)) + 1):
            for combo in itertools.combinations(keys, size):
                conj = _canon(members[k][0] for k in combo)
                if conj in judged:
                    continue
                v = self.verdict(conj, entities, policy.alpha)
                if v.n >= self.estimator.group_min_support and v.risky:
                    return combo, v
                judged.add(conj)
        return None

    def _edits(
        self,
        text: str,
        tokens: Sequence[Token],
        by_key: dict[str, list[TermOccurrence]],
        risky: dict[str, _Risky],
        policy: SanitizePolicy,
    ) -> tuple[list[Edit], list[Decision]]:
        starts = sentence_starts(text)
        shouting = _is_shouting(text)
        edits: list[Edit] = []
        decisions: list[Decision] = []
        for key, r in risky.items():
            cur = r.current
            replacement = REDACTION_MARKER if cur is None else cur.term
            occs = by_key[key]
            for o in occs:
                toks = tokens[o.first_token : o.first_token + o.n_tokens]
                original = text[o.start : o.end]
                surface = surface_replacement(
                    replacement,
                    original=original,
                    tokens=toks,
                    plural=self.language.plural,
                    lemmatize=self.language.lemmatize,
                    sentence_initial=sentence_initial(text, o.start, starts),
                    shouting=shouting and original.isupper(),
                    determiner_before=determiner_before(text, o.start),
                )
                edits.append(with_article(text, o.start, o.end, surface))
            v = r.verdict
            decisions.append(
                Decision(
                    term=key,
                    surface=_surface(tokens, occs[0]),
                    entity=v.entity.name if v and v.entity else None,
                    pmi=v.pmi if v else None,
                    threshold=v.threshold if v else None,
                    ic_term=self.ic(key),
                    action="redact" if cur is None else "generalize",
                    replacement=None if cur is None else cur.term,
                    reason=r.reason,
                    group=r.group,
                    sense=r.sense,
                    chain=tuple(r.steps),
                    spans=tuple((o.start, o.end) for o in occs),
                )
            )
        return edits, decisions

    # -- explanation ----------------------------------------------------------
    def explain(self, term: str, policy: SanitizePolicy) -> Explanation:
        entities = self.entities_of(policy)
        key = self.key(term)
        if not key:
            raise InputError(f"{term!r} holds no word to look up")
        n_t = self.count((frozenset({key}),))
        per: list[dict[str, object]] = []
        for e in entities:
            n_ct = self.count(_canon((frozenset({key}), e.keys)))
            pmi = self.estimator.pmi(self.knowledge, e.n_docs, n_t, n_ct)
            per.append({
                "entity": e.name, "ic_entity": e.ic, "documents_entity": e.n_docs,
                "lexicalizations": sorted(e.keys), "documents_both": n_ct,
                "pmi": pmi, "raw_pmi": self.estimator.raw_pmi(self.knowledge, e.n_docs, n_t, n_ct),
                "threshold": e.ic / policy.alpha, "risky": pmi >= e.ic / policy.alpha or key in e.keys,
            })  # fmt: skip
        known = n_t >= self.estimator.min_support
        risky = any(bool(p["risky"]) for p in per) if known else False
        r = _Risky(key, "explain", None)
        senses = self.taxonomy.senses(term) or self.taxonomy.senses(key)
        sense = choose_sense(senses, context=(), capitalized=term[:1].isupper())
        r.sense = sense.id if sense else None
        r.chain = self.taxonomy.generalizations(term if senses else key, r.sense)
        # Walk the whole chain so the administrator sees every step's PMI.
        steps: list[Step] = []
        chosen: str | None = None
        for g in r.chain:
            step = self._judge(g, entities, policy)
            if step.accepted and chosen is not None:
                step = replace(step, accepted=False, why="")  # safe too, but less specific
            elif step.accepted:
                chosen = g.term
            steps.append(step)
        return Explanation(term=term, key=key, known=known, n_term=n_t, ic_term=self.ic(key),
                           per_entity=tuple(per), risky=risky, sense=r.sense, chain=tuple(steps),
                           chosen=chosen)  # fmt: skip


UNKNOWN_WINDOW = 8  # tokens either side of a risky term
# A word in fewer paragraphs of K than this may be judged by the base it derives from.
DERIVED_MAX_SUPPORT = 50
DERIVED_MIN_BASE = 10  # a base must itself be well attested, or any rare stem would do
_PREFIX_WORDS = frozenset({"anti", "non", "pro", "pre", "post", "pseudo", "neo", "sub", "counter", "semi", "ex"})
# Redacting rounds after the policy's last one, while the output still fails its own check.
MAX_SETTLING_ROUNDS = 8
_WORDLIKE = re.compile(r"[^\W\d_]+(?:[-'\u2019 ][^\W\d_]+)*")


def _near(occs: Sequence[TermOccurrence], hot: dict[int, list[int]]) -> bool:
    return any(abs(o.first_token - p) <= UNKNOWN_WINDOW for o in occs for p in hot.get(o.sentence, ()))


def _wordlike(surface: str) -> bool:
    """A word a person wrote (a rare name, a drug), not a code, hash or identifier."""
    if len(surface) > 30 or not _WORDLIKE.fullmatch(surface):
        return False
    inner_caps = sum(ch.isupper() for ch in surface[1:])
    return (surface.isupper() and len(surface) <= 6) or inner_caps <= 1 or surface.istitle()


def _surface(tokens: Sequence[Token], occ: TermOccurrence) -> str:
    return " ".join(t.text for t in tokens[occ.first_token : occ.first_token + occ.n_tokens])


def _starts_sentence(tokens: Sequence[Token], i: int) -> bool:
    return i == 0 or tokens[i - 1].sentence != tokens[i].sentence


_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")


def _not_the_acronym(tokens: Sequence[Token], i: int) -> bool:
    word = tokens[i].text
    if word.isupper() or word.islower():
        return False
    return not (_starts_sentence(tokens, i) and word[1:].islower())  # "Hiv" opening a sentence is "hiv"


def _is_shouting(text: str) -> bool:
    upper, lower = len(_UPPER.findall(text)), len(_LOWER.findall(text))
    return upper + lower >= 20 and upper > 0.9 * (upper + lower)


def _to_original(rewrites: Sequence[Rewritten], span: tuple[int, int]) -> tuple[int, int]:
    start, end = span
    for rw in reversed(rewrites):
        start, end = rw.to_original(start, end)
    return start, end
