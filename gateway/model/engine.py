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
  * word forms: compounds and derived forms are judged by their parts and
    bases ("AIDS-like", "Houstonians");
  * a stream's memory: ``disclosed`` keys (what earlier messages of the same
    stream let through, gateway/model/memory.py) join every sentence's groups,
    so a group spanning messages is judged too; only the new text's member is
    ever changed. The text is settled alone first and the memory's rounds start
    from that output, so a message with a memory lowers at least what it lowers
    alone; a term the thread's earlier messages generalized is written as they
    wrote it, where that is safe and K ties it to c no more (memory.WROTE), and
    one they took out (redacted, or left out) is taken out again, or generalized
    where that is safe here (memory.REMOVED), alone or as a word of a phrase;
  * rounds: the rewritten text is checked again, so a replacement that forms a
    new risky group is caught; the policy's last round, and any after it,
    redacts what it finds until the engine's own check finds nothing: the
    output always passes the pipeline's check (extractors.pipeline.check_output).

The work is split by question: ``reading`` (a text's terms, under the phrases
K and the policy know), ``detection`` (which terms are risky),
``generalization`` (what safe term replaces each), ``rewrite`` (writing it
into text that still reads), all over one ``measure`` of K with one cache policy.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from gateway.errors import InputError
from gateway.model.compounds import compounds_of_flagged
from gateway.model.derived import compound_parts
from gateway.model.detection import Detector, RoundState, layout, paragraph_of, surface_of
from gateway.model.entities import resolve_entity
from gateway.model.evidence import Accumulator
from gateway.model.facts import facts
from gateway.model.generalization import Generalizer, NameKinds, Risky
from gateway.model.incremental import Reading, TextMemo
from gateway.model.knowledge import Estimator, Knowledge
from gateway.model.measure import BoundedCache, Conjuncts, Measure, Verdict, canon
from gateway.model.memory import (
    NAMING,
    OPENING,
    is_marker,
    named_in,
    removed_in,
    removed_marker,
    signature_in,
    thread_in,
    wrote_in,
)
from gateway.model.modifiers import is_omitted
from gateway.model.prefilter import Clean, CleanTextFilter, WholeKnowledge
from gateway.model.reading import Reader
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
    agree_articles,
    apply_edits,
    cased_like,
    compose,
    determiner_before,
    indefinite_article,
    sentence_initial,
    surface_replacement,
    tidy_markers,
    with_article,
)
from gateway.model.taxonomy import Taxonomy, choose_sense
from gateway.model.terms import STOPWORDS, PhraseSet, TermOccurrence, Token, sentence_starts

# Rounds after the policy's last one, while the output still fails its own check: the first
# few still generalize, the rest redact.
EXTRA_GENERALIZING_ROUNDS = 2
MAX_SETTLING_ROUNDS = 10


class Language(Protocol):
    def lemmatize(self, word: str) -> str: ...

    def plural(self, noun: str) -> str: ...

    def conjugate(self, verb: str, like: str) -> str: ...


class Synonyms(Protocol):
    def synonyms(self, term: str) -> set[str]: ...


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
        names: NameKinds | None = None,
        incremental: bool = True,
    ) -> None:
        self.knowledge = knowledge
        # Later rounds re-read only what an edit changed (incremental.py); False re-judges the whole
        # text every round (the reference the incremental engine is tested against).
        self._incremental = incremental
        self.readings = 0  # rounds that grouped their text's terms anew (not the round before's: for benchmarks, tests)
        self.taxonomy = taxonomy
        self.language = language
        self._synonyms = synonyms
        base = estimator or Estimator()
        k_min = int(getattr(knowledge, "min_support", 1))
        self.estimator = replace(base, min_support=max(base.min_support if min_support is None else min_support, k_min))
        # The fast path for clean text, where K can answer for every term at once (prefilter.py);
        # its tables also bound a group's risk before its entity counts are asked.
        self._clean = CleanTextFilter(knowledge, self.estimator) if isinstance(knowledge, WholeKnowledge) else None
        self.measure = Measure(knowledge, self.estimator, bound=self._clean)
        self.reader = Reader(knowledge, language.lemmatize, extra_phrases)
        # The reader's own methods: the terms of a text (under the policy's phrases), a typed term's key.
        self.terms_of = self.reader.terms_of
        self.key = self.reader.key
        self.key_once = self.reader.key_once
        self._entities: BoundedCache[tuple[str, tuple[str, ...]], Entity] = BoundedCache(4096)
        self.generalizer = Generalizer(taxonomy, self.measure, self.key, names=names)
        self.detector = Detector(self.measure, self.generalizer, self.key)
        self.evidence = Accumulator(self.measure, self.generalizer)
        self.evidence.incremental = incremental

    @property
    def incremental(self) -> bool:
        return self._incremental

    @incremental.setter
    def incremental(self, on: bool) -> None:
        self._incremental = on
        self.evidence.incremental = on  # its units found below their budget (evidence._Below)

    def forget_texts(self) -> None:
        """Drop what is kept of the last texts (their tokens, for the next reading of the same text): called
        when a message is done, so that a large one's tokens do not stay until the next message."""
        self.reader.forget()
        self.generalizer.forget_text()

    @property
    def phrase_set(self) -> PhraseSet:
        """Multi-word terms the engine recognises in every text (K's, the taxonomy's, the entities')."""
        return self.reader.phrase_set

    # -- K, through the measure ------------------------------------------------
    def count(self, conjuncts: Conjuncts) -> int:
        return self.measure.count(conjuncts)

    def ic(self, key: str) -> float:
        return self.measure.ic(key)

    def verdict(self, conjuncts: Conjuncts, entities: Sequence[Entity], alpha: float) -> Verdict:
        return self.measure.verdict(conjuncts, entities, alpha)

    def entity(self, name: str, aliases: Sequence[str] = ()) -> Entity:
        def resolve(cache_key: tuple[str, tuple[str, ...]]) -> Entity:
            syn = self._synonyms.synonyms if self._synonyms is not None else (lambda _t: set())
            found = resolve_entity(
                cache_key[0],
                knowledge=self.knowledge,
                lemmatize=self.language.lemmatize,
                synonyms=syn,
                aliases=cache_key[1],
                min_support=self.estimator.min_support,
            )
            self.reader.add_phrases(found.keys)
            return found

        return self._entities.get((name, tuple(aliases)), resolve)

    def entities_of(self, policy: SanitizePolicy) -> tuple[Entity, ...]:
        return tuple(self.entity(n, [a for e, a in policy.aliases if e == n]) for n in policy.entities)

    # -- the algorithm --------------------------------------------------------
    def sanitize(
        self,
        text: str,
        policy: SanitizePolicy,
        *,
        avoid: Collection[str] = (),
        disclosed: Collection[str] = (),
        replaced: Collection[str] = (),
    ) -> SanitizeResult:
        """Sanitize ``text``; no replacement will be one of the ``avoid`` keys.

        ``avoid`` carries the terms earlier policies flagged, so that a later
        policy does not write one back as its own generalization.
        ``replaced`` carries the values an identifier pass replaced: avoided too,
        and not written back inside a longer phrase either.
        ``disclosed`` carries the keys earlier messages of the same stream let
        through: they join the group checks of every sentence but are never
        edited (they are not in this text); a decision they caused names them
        in ``Decision.earlier``.
        """
        # What the thread's earlier messages wrote for a term is written again where it is safe (memory.WROTE).
        with self.generalizer.writing_as(wrote_in(disclosed)):
            if not replaced:
                return self._sanitize(text, policy, avoid, disclosed)
            with self.generalizer.replacing(replaced):
                return self._sanitize(text, policy, {*avoid, *replaced}, disclosed)

    def _sanitize(
        self, text: str, policy: SanitizePolicy, avoid: Collection[str], disclosed: Collection[str]
    ) -> SanitizeResult:
        if not text.strip():
            raise InputError("nothing to sanitize: the text is empty")
        entities = self.entities_of(policy)
        given = policy
        if OPENING in disclosed and policy.opening_floor < policy.evidence_floor:
            # The first message of a remembered thread: its later messages are lowered to the floor on its clues,
            # so what the thread tells is what this one does; weaker clues count (SanitizePolicy.opening_floor).
            policy = replace(policy, evidence_floor=policy.opening_floor)
        # Entities an earlier message of the thread named (memory.py): this text is about them too.
        thread_named = named_in(disclosed) & {e.name for e in entities}
        # and the signature of c those messages had (related.py), which this one is judged with as well
        thread_signature = {e: keys for e, keys in signature_in(disclosed).items() if e in thread_named}
        text_named: set[str] = set()  # filled by the rounds: later rounds no longer hold the name
        thread_terms = thread_in(disclosed)  # what the thread's own earlier messages let through: judged with first
        thread_removed = removed_in(disclosed)  # what they took out: taken out here too (``_round``)
        disclosed = [k for k in disclosed if not is_marker(k)]
        self.evidence.second_order.new_text()  # this text's signature is read by its first round
        memo = self.reader.text_memo(policy, entities)
        judged = replace(policy, evidence_budget=policy.budget(True)) if thread_named else policy
        # The fast path knows first-order clues only: a text whose thread named c may hold second-order ones.
        fast = not (thread_named and self.evidence.about(entities, policy, thread_named))
        if fast:
            # What its thread let through counts towards c's evidence when the thread named c (Accumulator.settle).
            unchanged = self._if_clean(text, judged, entities, avoid, disclosed, memo, thread_terms,
                                       thread_evidence=bool(thread_named), removed=thread_removed)  # fmt: skip
            if unchanged is not None:
                return unchanged
        original_keys: list[str] = []
        current = text
        rewrites: list[Rewritten] = []
        decisions: list[Decision] = []
        composed: list[TextEdit] = []
        # Every key flagged so far (and by earlier policies): never written back, and
        # redacted wherever a later round still finds it, so the pipeline's check passes. Not a clue the
        # summed evidence lowered: safe alone, it may be written for another term (``Decision.flags_term``).
        flagged: set[str] = set(avoid)
        # What each generalization written so far stands for (its sense's lexicalizations, by the key it reads as).
        written: dict[str, frozenset[str]] = {}
        rounds = 0

        def settle(remembering: bool) -> None:
            """Rounds until one finds nothing: the text alone, or (``remembering``) with the stream's memory."""
            nonlocal current, composed, rounds
            phase_rounds = 0
            while True:
                rounds += 1
                phase_rounds += 1
                # A round that still finds something is followed by another. After the policy's
                # rounds (and a few more that still generalize: a redaction is the costliest answer),
                # each round redacts what it finds: it removes at least one term, so the loop ends,
                # and it ends clean.
                redacting = phase_rounds >= policy.max_rounds + EXTRA_GENERALIZING_ROUNDS and phase_rounds > 1
                if phase_rounds > policy.max_rounds + MAX_SETTLING_ROUNDS:
                    break
                edits, found = self._round(
                    current,
                    policy,
                    entities,
                    force_redact=redacting,
                    keys_out=original_keys if rounds == 1 else None,
                    avoid=flagged,
                    disclosed=disclosed if remembering else (),
                    thread=thread_terms if remembering else (),
                    removed=thread_removed if remembering else frozenset(),
                    memo=memo if self.incremental else self.reader.text_memo(policy, entities),
                    first=rounds == 1,
                    # c's signature is read from the text as it came: by the first round, and again (with the
                    # thread's) by the first round that judges with the memory.
                    signature_from=original_keys if phase_rounds == 1 else None,
                    named=(thread_named if remembering else (), text_named),
                    thread_signature=thread_signature if remembering else None,
                    # The memory's rounds read what the text's own rounds wrote as it was judged then: as its sense.
                    written=written if remembering else None,
                    written_out=written,
                )
                if not found:
                    break
                rewritten = apply_edits(current, edits)
                for d in found:
                    spans = tuple(_to_original(rewrites, s) for s in d.spans)
                    decisions.append(replace(d, spans=tuple(sorted(set(spans)))))
                    if d.flags_term:
                        flagged.add(d.term)
                composed = compose(composed, current, rewritten.edits)
                rewrites.append(rewritten)
                current = rewritten.text
                if agree := agree_articles(rewritten):
                    fixed = apply_edits(current, agree)
                    composed = compose(composed, current, fixed.edits)
                    rewrites.append(fixed)
                    current = fixed.text

        # The memory only makes a message stricter: the text is first settled as it would be alone, and the
        # memory's rounds then start from that output. Judged in one pass, a group the memory made risky could
        # take a weaker member out of a group of the text's own and leave its strongest member standing
        # ("Orthodoxy" let through in a thread about Orthodox Judaism, which the message alone redacted).
        remembering = bool(disclosed or thread_named or thread_removed)
        settle(remembering=False)
        if remembering:
            settle(remembering=True)
        tidy = tidy_markers(current)
        if tidy:
            rewritten = apply_edits(current, tidy)
            composed = compose(composed, current, rewritten.edits)
            current = rewritten.text
        utility = self._utility(original_keys, decisions)
        signature = tuple(self.evidence.second_order.own.items())
        return SanitizeResult(current, tuple(decisions), utility, entities, given, rounds, tuple(composed), signature)

    def _if_clean(
        self,
        text: str,
        policy: SanitizePolicy,
        entities: tuple[Entity, ...],
        avoid: Collection[str],
        disclosed: Collection[str] = (),
        memo: TextMemo | None = None,
        thread_terms: Collection[str] = (),
        *,
        thread_evidence: bool = False,
        removed: frozenset[str] = frozenset(),
    ) -> SanitizeResult | None:
        """The text as it is, when nothing in it is near the line (prefilter.py); None: run the algorithm.

        ``thread_terms``: the terms of ``disclosed`` the message's own thread let through (memory.thread_in), which
        the memory's groups join beside the stream's riskiest (Detector.remembered), and, with ``thread_evidence``
        (the thread named c), every paragraph's evidence too. ``removed``: what the thread took out (a text that
        shows one of them is not left as it is).
        """
        if self._clean is None:
            return None
        tokens, occs = self.terms_of(text, entities, policy, memo=memo)
        if removed and any(_shown(k, removed) is not None for k in {o.key for o in occs}):
            return None
        allow = {self.key(t) for t in policy.allow}
        stop = {self.key(t) for t in policy.deny} | set(avoid)  # what Detector.classify flags before any count
        # Groups are judged per sentence and per paragraph (Detector.groups): both units, paragraphs as -1 - index.
        paragraph = paragraph_of(text)
        # A generator: a text with a risky term stops the test there, before the rest is built.
        units = itertools.chain(((o.key, o.sentence) for o in occs), ((o.key, -1 - paragraph(o.start)) for o in occs))
        clean = self._clean.judge(units, policy, entities, allow=allow, deny=stop, joined=disclosed)
        if clean is Clean.NO:
            return None
        in_paragraphs = [(o.key, paragraph(o.start)) for o in occs]
        # The thread's terms count for the entities it named only (Accumulator.settle); for every entity here,
        # which can only send a text to the engine, never pass one it would change.
        thread = list(thread_terms) if thread_evidence else []
        joined = [*disclosed, *thread] if policy.stream_evidence else thread
        # Only a compound has parts (``_part_keys``): a stream's memory holds thousands of keys, asked every message.
        parts = {
            k: found
            for k in {*(k for k, _ in in_paragraphs), *joined}
            if ("-" in k or "/" in k) and (found := self._part_keys(k))
        }
        if not self._clean.within_budget(in_paragraphs, policy, entities, allow=allow, joined=joined, parts=parts):
            return None
        if clean is not Clean.YES:
            # No term is risky alone and the evidence was summed above: what the algorithm's first rounds could
            # still find is a group, the text's own (Clean.GROUPS) or with the memory. Ask those groups, of the
            # terms as that round classifies them. A third of a list's messages land here, and most come out clean.
            by_key: dict[str, list[TermOccurrence]] = {}
            for o in occs:
                by_key.setdefault(o.key, []).append(o)
            # No term is risky alone (judge), so classify flags only compounds and derived forms, as below.
            risky, safe = self.detector.classify(by_key, tokens, entities, policy, avoid)
            if risky:
                return None
            remembered = self.detector.remembered(disclosed, by_key, entities, policy, thread_terms)
            judged = memo.groups.judged if memo is not None else set()
            own = clean is Clean.GROUPS  # else the bound cleared its own groups
            if self.detector.first_groups_risky(text, by_key, safe, remembered, entities, policy, judged, own=own):
                return None
        elif self._derived_in(tokens, occs, entities, policy, allow):
            return None
        return SanitizeResult(text, (), self._utility([o.key for o in occs], ()), entities, policy, 1, ())

    def _derived_in(
        self,
        tokens: Sequence[Token],
        occs: Sequence[TermOccurrence],
        entities: Sequence[Entity],
        policy: SanitizePolicy,
        allow: Collection[str],
    ) -> bool:
        """Is a word of the text a compound or derived form of a risky base, as Detector.classify judges it?"""
        names = {k: e for e in entities for k in e.keys}
        firsts: dict[str, TermOccurrence] = {}
        for o in occs:
            firsts.setdefault(o.key, o)
        for key, o in firsts.items():
            if key in allow or " " in key:
                continue
            n = self.count((frozenset({key}),))
            if self.detector.derived(key, surface_of(tokens, o), n, names, entities, policy.alpha) is not None:
                return True
        return False

    def _part_keys(self, key: str) -> tuple[str, ...]:
        """The keys of a hyphenated compound's parts whose clue the evidence counts (Accumulator.clue)."""
        if "-" not in key and "/" not in key:
            return ()
        return tuple(k for p in compound_parts(key) if p.isalpha() and (k := self.key(p)) not in STOPWORDS)

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
        disclosed: Collection[str] = (),
        thread: Collection[str] = (),
        memo: TextMemo | None = None,
        first: bool = False,
        signature_from: Collection[str] | None = None,
        named: tuple[Collection[str], set[str]] = ((), set()),
        thread_signature: Mapping[str, Collection[str]] | None = None,
        written: Mapping[str, frozenset[str]] | None = None,
        written_out: dict[str, frozenset[str]] | None = None,
        removed: frozenset[str] = frozenset(),
    ) -> tuple[list[Edit], list[Decision]]:
        """One pass of detection, generalization and rewriting over the current text."""
        memo = memo or self.reader.text_memo(policy, entities)
        tokens, occs = self.terms_of(text, entities, policy, memo=memo)
        if keys_out is not None:
            keys_out.extend(o.key for o in occs)
        last = memo.last
        if last is not None and last.text is text and last.tokens is tokens:
            # The round before read this very text (the memory's first round, after the text's own rounds): its
            # terms by key, units and context are functions of the text's terms, which nobody changes.
            by_key, units, context = last.by_key, last.layout, last.context
        else:
            by_key = {}
            for o in occs:
                by_key.setdefault(o.key, []).append(o)
            units = layout(text, by_key)
            context = self._sense_evidence(by_key)
            memo.last = last = Reading(text, tokens, by_key, units, context)
            self.readings += 1
        avoided = frozenset(avoid)
        risky: dict[str, Risky]
        safe: dict[str, Verdict]
        if last.safe is not None and last.safe[0] == avoided:
            risky, safe = {}, dict(last.safe[1])  # classify's answer for this text: nothing risky (Reading.safe)
        else:
            risky, safe = self.detector.classify(by_key, tokens, entities, policy, avoid)
            if not risky:
                last.safe = (avoided, dict(safe))
        for key in sorted(by_key.keys() - risky.keys() if removed else ()):
            # The thread's earlier messages took it out: let through here (alone, or as a word of a phrase or a
            # compound), it would show what their gap held.
            if (shown := _shown(key, removed)) is not None:
                safe.pop(key, None)
                risky[key] = Risky(key, "stream", None, earlier=frozenset({removed_marker(shown)}))
        redact_all = force_redact or policy.mode == "redact"
        # A replacement must not be a term this text has flagged (or an earlier round or policy did).
        forbidden = set(avoid) | set(risky)
        for key, r in risky.items():
            if redact_all:
                r.redacted = True
                continue
            self.generalizer.start_chain(r, text, by_key[key], tokens, context, entities, policy, forbidden)
        if policy.max_group >= 2:
            # Groups are judged in every round; in a redacting round their members are redacted.
            remembered = self.detector.remembered(disclosed, by_key, entities, policy, thread)
            self.detector.groups(RoundState(text, by_key, risky, safe, tokens, context, entities, policy, forbidden,
                                            redact=redact_all, remembered=remembered, memo=memo.groups,
                                            written=written or {}, layout=units))  # fmt: skip
        if policy.mode != "redact":  # weak clues that add up over a paragraph (evidence.py); it never redacts
            stream = disclosed if policy.stream_evidence else ()
            # A text that names c (in any round: later rounds no longer hold the name) is about c.
            thread_named, text_named = named
            text_named.update(v.entity.name for r in risky.values()
                              if r.reason in NAMING and (v := r.verdict) and v.entity is not None)  # fmt: skip
            self.evidence.settle(text, by_key, risky, safe, tokens, context, entities, policy, forbidden,
                                 disclosed=stream, thread_disclosed=thread, thread_about=thread_named,
                                 named=set(thread_named) | text_named,
                                 thread_named=set(thread_named) - text_named, thread_signature=thread_signature,
                                 surface=lambda k: surface_of(tokens, by_key[k][0]),
                                 signature_from=signature_from, paragraphs=units.paragraphs)  # fmt: skip
        if policy.mode != "redact":
            compounds_of_flagged(self.generalizer,
                                 RoundState(text, by_key, risky, safe, tokens, context, entities, policy, forbidden),
                                 written=written_out or ())  # fmt: skip
        for r in risky.values():  # a group or a paragraph may have flagged what another term became
            while (cur := r.current) is not None and (
                self.generalizer.keys_of(cur) & forbidden or self.generalizer.shows_replaced(cur)
            ):
                self.generalizer.advance(r, entities, policy, group=None, forbidden=forbidden)
        for r in risky.values():
            r.follow_base()
        edits, decisions = self._edits(text, tokens, by_key, risky)
        if written_out is not None:
            for r in risky.values():
                if (cur := r.current) is not None and not is_omitted(cur):
                    written_out[self.key(cur.term)] = self.generalizer.keys_of(cur)
        if first and policy.coarsen_facts:  # the text around c's name still names it by rank and size (facts.py)
            self._facts(text, by_key, risky, entities, edits, decisions)
        return edits, decisions

    def _facts(
        self,
        text: str,
        by_key: dict[str, list[TermOccurrence]],
        risky: dict[str, Risky],
        entities: Sequence[Entity],
        edits: list[Edit],
        decisions: list[Decision],
    ) -> None:
        paragraph = paragraph_of(text)
        about: dict[int, str] = {}  # paragraph -> the entity it names
        for key, r in risky.items():
            v = r.verdict
            if r.reason in ("entity-name", "derived-form") and v is not None and v.entity is not None:
                for o in by_key[key]:
                    about.setdefault(paragraph(o.start), v.entity.name)
        taken = [(e.start, e.end) for e in edits]
        for f in facts(text, about.keys(), paragraph):
            if any(a < f.end and f.start < b for a, b in taken):
                continue
            taken.append((f.start, f.end))
            edits.append(Edit(f.start, f.end, f.replacement, f.start))
            decisions.append(Decision(term=f.text.strip().lower(), surface=f.text.strip(),
                                      entity=about[paragraph(f.start)], pmi=None, threshold=None, ic_term=0.0,
                                      action="generalize", replacement=f.replacement.strip(), reason="fact",
                                      spans=((f.start, f.end),)))  # fmt: skip

    def _sense_evidence(self, by_key: dict[str, list[TermOccurrence]]) -> dict[str, float]:
        """What each term of the text says of which sense a word has there (taxonomy.choose_sense).

        A term the text repeats says more, up to a point (a saturating log of its count), and a rare
        term more than a common one (its IC over the text's mean): the Denver article's many "state"s
        make Colorado the state, and its many "person"s do not make an insect an unwelcome person.
        """
        ics = {k: self.ic(k) for k in by_key}
        mean = math.fsum(ics.values()) / len(ics) if ics else 1.0
        return {k: min(2.0, math.log2(1 + len(v))) * ics[k] / (mean or 1.0) for k, v in by_key.items()}

    def _edits(
        self,
        text: str,
        tokens: Sequence[Token],
        by_key: dict[str, list[TermOccurrence]],
        risky: dict[str, Risky],
    ) -> tuple[list[Edit], list[Decision]]:
        edits: list[Edit] = []
        decisions: list[Decision] = []
        if not risky:
            return edits, decisions  # most later rounds: nothing to write, and no sentence of the text to find
        starts = sentence_starts(text)
        shouting = _is_shouting(text)
        for key, r in risky.items():
            cur = r.current
            replacement = REDACTION_MARKER if cur is None else cur.term
            occs = by_key[key]
            omitted = is_omitted(cur)
            for o in occs:
                if omitted:
                    edits.append(_omission(text, tokens, o))
                    continue
                toks = tokens[o.first_token : o.first_token + o.n_tokens]
                original = text[o.start : o.end]
                before = text[o.start - 1] if o.start else ""  # what the term is written onto, if anything
                surface = surface_replacement(
                    replacement,
                    original=original,
                    tokens=toks,
                    plural=self.language.plural,
                    lemmatize=self.language.lemmatize,
                    sentence_initial=sentence_initial(text, o.start, starts),
                    shouting=shouting and original.isupper(),
                    determiner_before=determiner_before(text, o.start),
                    name=r.name,
                    pos="n" if cur is None else cur.pos,
                    conjugate=self.language.conjugate,
                    attached=before.isalnum(),
                )
                if before.isdigit() and surface[:1].isalpha():
                    surface = " " + surface  # "3.6GHz" -> "3.6 rate", not "3.6rate"
                edit = with_article(text, o.start, o.end, surface)
                if edit.start < edit.term_start:
                    # The article is its own edit: where the term has formatting of its own (a bold run of a DOCX,
                    # a tag of HTML), its replacement stays in it, and the article in the text before it.
                    article = edit.text[: len(edit.text) - len(surface)]
                    edits.append(Edit(edit.start, edit.term_start, article, edit.start))
                    edit = Edit(edit.term_start, edit.end, surface, edit.term_start)
                edits.append(edit)
            v = r.verdict
            decisions.append(
                Decision(
                    term=key,
                    surface=surface_of(tokens, occs[0]),
                    entity=v.entity.name if v and v.entity else None,
                    pmi=v.pmi if v else None,
                    threshold=v.threshold if v else None,
                    ic_term=self.ic(key),
                    action="redact" if cur is None else "omit" if omitted else "generalize",
                    replacement=None if cur is None or omitted else cur.term,
                    reason=r.reason,
                    group=r.group,
                    earlier=tuple(sorted(r.earlier)),
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
            n_ct = self.count(canon((frozenset({key}), e.keys)))
            pmi = self.estimator.pmi(self.knowledge, e.n_docs, n_t, n_ct)
            per.append({
                "entity": e.name, "ic_entity": e.ic, "documents_entity": e.n_docs,
                "lexicalizations": sorted(e.keys), "documents_both": n_ct,
                "pmi": pmi, "raw_pmi": self.estimator.raw_pmi(self.knowledge, e.n_docs, n_t, n_ct),
                "threshold": e.ic / policy.alpha, "risky": pmi >= e.ic / policy.alpha or key in e.keys,
            })  # fmt: skip
        known = n_t >= self.estimator.min_support
        risky = any(bool(p["risky"]) for p in per) if known else False
        r = Risky(key, "explain", None)
        senses = self.taxonomy.senses(term) or self.taxonomy.senses(key)
        sense = choose_sense(senses, context=(), capitalized=term[:1].isupper())
        r.sense = sense.id if sense else None
        r.chain = self.taxonomy.generalizations(term if senses else key, r.sense)
        # Walk the whole chain so the administrator sees every step's PMI.
        steps: list[Step] = []
        chosen: str | None = None
        for g in r.chain:
            step = self.generalizer.judge(g, entities, policy)
            if step.accepted and chosen is not None:
                step = replace(step, accepted=False, why="")  # safe too, but less specific
            elif step.accepted:
                chosen = g.term
            steps.append(step)
        return Explanation(term=term, key=key, known=known, n_term=n_t, ic_term=self.ic(key),
                           per_entity=tuple(per), risky=risky, sense=r.sense, chain=tuple(steps),
                           chosen=chosen)  # fmt: skip


def _shown(key: str, keys: Collection[str]) -> str | None:
    """The one of ``keys`` that ``key`` is, or that a run of its words is ("jewish heritage", "non-jewish":
    "jewish"); None when it shows none of them."""
    if key in keys:
        return key
    words = _KEY_WORD.findall(key)
    runs = (" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1))
    return next((run for run in runs if run in keys), None) if len(words) > 1 else None


_KEY_WORD = re.compile(r"[^\W_]+")
_UPPER = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = b"abcdefghijklmnopqrstuvwxyz"


def _is_shouting(text: str) -> bool:
    # Counted in C (the ASCII letters are all that count): a findall of each letter built a list per round.
    ascii = text.encode("ascii", "ignore")
    upper, lower = len(ascii) - len(ascii.translate(None, _UPPER)), len(ascii) - len(ascii.translate(None, _LOWER))
    return upper + lower >= 20 and upper > 0.9 * (upper + lower)


def _omission(text: str, tokens: Sequence[Token], o: TermOccurrence) -> Edit:
    """Leave out a modifier and the blank after it, fixing an indefinite article before it ("an elderly
    man" -> "a man"); modifiers.omittable has checked that a content word of the sentence follows."""
    after = tokens[o.first_token + 1]
    m = _ARTICLE_BEFORE.search(text, max(0, o.start - 8), o.start)
    if m is None:
        return Edit(o.start, after.start, "", o.start)
    old = m.group(1)
    new = cased_like(old, indefinite_article(after.text))
    return Edit(m.start(1), after.start, new + m.group(2), o.start)


_ARTICLE_BEFORE = re.compile(r"\b(a|an|A|An)([ \t]+)$")


def _to_original(rewrites: Sequence[Rewritten], span: tuple[int, int]) -> tuple[int, int]:
    start, end = span
    for rw in reversed(rewrites):
        start, end = rw.to_original(start, end)
    return start, end
