"""A stream's disclosure memory: what earlier messages already let through.

Six harmless messages from a clinic to an insurer can be as telling as one
that says it all: each term group is judged by PMI(c;T) >= IC(c)/alpha, and a
group's members need not share a message. The memory of a stream (one
policy, one sender, one recipient; a mail thread joins its messages too)
is the set of terms its earlier messages let through, each with the message
that disclosed it. The engine takes those terms as ``disclosed`` keys: they
join the group checks of the new message and are never edited, so the
memory only ever makes a later message stricter.

What a message discloses is what its output says, not what it was: the
terms of the sanitized text that could still take part in a group (known to
K, and at least ``group_floor`` of the way to the threshold on their own) or
count as a clue towards a later paragraph's evidence (``evidence_floor``,
evidence.py). The rest can never make a group risky nor add to a sum, and is
not worth keeping. Beside them, markers that count within the message's
thread only: the entities it named, its signature of c, what it wrote
for each term it generalized (a later message writes the same term the same
way where that is safe: two generalizations of one word tell a reader the word),
and each term it took out (a later message does not fill the gap).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gateway.model.records import SanitizePolicy, SanitizeResult

# Decisions that say a text names an entity.
NAMING = frozenset({"entity-name", "derived-form"})

if TYPE_CHECKING:  # the records above are the store's too; it needs no engine to read them
    from gateway.model.engine import Engine


@dataclass(frozen=True, slots=True, kw_only=True)
class Disclosure:
    """The terms one earlier message let through to one recipient under one policy."""

    message_id: str  # sanigate's id of the earlier message
    at: float
    policy: str
    sender: str
    recipient: str
    terms: tuple[str, ...]  # the engine's keys
    thread: str = ""  # the thread's root Message-ID, when the message had one
    mail_id: str = ""  # the earlier message's own Message-ID header


# Remembered with a message's terms: the entities its text named (and the engine replaced). A later message of the
# same thread is about c too, and its evidence is judged at the policy's named_budget. A key never holds "[".
NAMED = "[named] "


def named_marker(entity: str) -> str:
    return NAMED + entity


# Remembered with a message's terms too: its signature of each c it was about (related.py), the terms of the text
# as the sender wrote them that K ties to c at the line, most of them lowered in what was sent. A later message of
# the thread that does not name c reads no such S of its own; judged with its thread's, it is judged as the thread
# reads. Like every term of the memory they are sealed with the store key, and expire and are purged with it.
SIGNATURE = "[signature "


def signature_marker(entity: str, key: str) -> str:
    return f"{SIGNATURE}{entity}] {key}"


def signature_in(disclosed: Iterable[str]) -> dict[str, frozenset[str]]:
    """Per entity, the signature terms earlier messages of the thread remembered."""
    return _marked_in(disclosed, SIGNATURE)


def _prefixed_in(disclosed: Iterable[str], prefix: str) -> frozenset[str]:
    """What follows ``prefix`` in the ``{prefix}value`` markers in ``disclosed``."""
    return frozenset(t[len(prefix) :] for t in disclosed if t.startswith(prefix))


def _marked_in(disclosed: Iterable[str], prefix: str) -> dict[str, frozenset[str]]:
    """Per name, the values of the ``{prefix}name] value`` markers in ``disclosed``."""
    found: dict[str, set[str]] = {}
    for t in disclosed:
        if t.startswith(prefix):
            name, _, value = t[len(prefix) :].partition("] ")
            if value:
                found.setdefault(name, set()).add(value)
    return {name: frozenset(values) for name, values in found.items()}


# Remembered for a message of the same thread, beside the term itself: a term one of the thread's earlier messages
# let through. A stream (a list: one sender, one recipient) remembers the riskiest of thousands of terms, most from
# its other threads; a reply is judged with its own thread's riskiest terms as well (Detector.remembered), the
# conversation its recipient reads it in. The store holds no more than it did: each row keeps its thread (its root
# Message-ID), and the marker is made when the rows are folded for a message of that thread (``counted``).
THREAD = "[thread] "


def thread_marker(key: str) -> str:
    return THREAD + key


def thread_in(disclosed: Iterable[str]) -> frozenset[str]:
    """The terms ``disclosed`` says earlier messages of the thread let through."""
    return _prefixed_in(disclosed, THREAD)


# Remembered too, within the thread: what a message wrote for each term it generalized. A reader who finds
# "liberal" in one message and "ordered" in the next where the sender wrote "progressive" both times learns
# the word both are generalizations of; a later message writes a term it generalizes as the thread already
# wrote it, when that is safe where it stands (Generalizer.start_chain). The terms are the sender's, as a
# signature's are: sealed with the store key, expired and purged with the message's other terms.
WROTE = "[wrote "


def wrote_marker(key: str, replacement: str) -> str:
    return f"{WROTE}{key}] {replacement}"


def wrote_in(disclosed: Iterable[str]) -> dict[str, frozenset[str]]:
    """Per term (key), what earlier messages of the thread wrote for it, each as its marker says."""
    return _marked_in(disclosed, WROTE)


# Remembered too, within the thread: each term a message took out (redacted, or a modifier left out) rather than
# generalized. A reader who finds a gap in one message and the word in the next, in the same kind of sentence, reads
# the gap: a later message of the thread takes the term out too, or generalizes it where that is safe here
# (Engine._round). Sealed, expired and purged with the message's other terms, as the others are.
REMOVED = "[removed] "


def removed_marker(key: str) -> str:
    return REMOVED + key


def removed_in(disclosed: Iterable[str]) -> frozenset[str]:
    """The terms ``disclosed`` says earlier messages of the thread took out."""
    return _prefixed_in(disclosed, REMOVED)


# Given to the engine (never stored) with the memory of a message whose thread has no earlier message in it: the
# memory is on, and this message opens the thread. Its evidence is judged at the policy's opening_floor: every later
# message of the thread is judged with what it lets through, and nothing is judged with it.
OPENING = "[opening]"


def is_marker(term: str) -> bool:
    """A marker of the memory (a thread's named entity, signature or written term), not a term the message let
    through."""
    return term.startswith("[")


def named_in(disclosed: Iterable[str]) -> frozenset[str]:
    """The entities ``disclosed`` says an earlier message named."""
    return _prefixed_in(disclosed, NAMED)


def counted(d: Disclosure, thread: str) -> Iterable[str]:
    """A disclosure's terms as they count for a message of ``thread``: that c was named, and its signature,
    within its thread only (a list's other messages are about other things); the terms across the whole stream,
    as groups, those of the thread's own messages marked as the thread's as well."""
    if d.thread and d.thread == thread:
        return (*d.terms, *(thread_marker(t) for t in d.terms if not is_marker(t)))
    return (t for t in d.terms if not is_marker(t))


@dataclass(frozen=True, slots=True)
class Memory:
    """Everything one policy remembers for a new message: each term its streams disclosed, with the
    earlier message that disclosed it first, in the order of those first disclosures.

    Only that reaches a worker (``of`` folds the disclosures): a list stream's hundreds of rows
    repeat the same words, and the engine asks only which terms, and which message named each first.
    """

    first: Mapping[str, str] = field(default_factory=dict)  # term -> the message id that disclosed it first

    @classmethod
    def of(cls, disclosures: Iterable[Disclosure], *, thread: str = "") -> Memory:
        """The memory of ``disclosures``, oldest first, for a message of ``thread`` (its root Message-ID)."""
        first: dict[str, str] = {}
        for d in disclosures:
            if d.thread and d.thread == thread:
                new = [t for t in counted(d, thread) if t not in first]
            else:  # ``counted`` for another thread's row, as one comprehension: the SMTP front folds a list's
                # stream of hundreds of rows for each new thread (a generator and a call a term cost 2.7 times this)
                new = [t for t in d.terms if t not in first and not t.startswith("[")]
            if new:
                first.update(dict.fromkeys(new, d.message_id))  # a term repeated in a row: its first place
        return cls(first)

    @property
    def terms(self) -> frozenset[str]:
        return frozenset(self.first)

    @property
    def judged(self) -> frozenset[str]:
        """What the engine judges a new message with: the terms, and OPENING when no row is of its own thread (only
        a row of the thread gives markers, ``counted``)."""
        # A list's memory holds thousands of terms and every message asks (``opening_floor`` is on by default): one
        # join and a search in C, where a call per term cost 0.8 ms a message at 3,000 terms (/tmp/w15/mb.py: 0.23).
        if "\n[" in "\n" + "\n".join(self.first):  # is_marker: a marker starts with "[", a term never does
            return self.terms
        return frozenset(itertools.chain(self.first, (OPENING,)))

    def sources(self, terms: Iterable[str]) -> tuple[str, ...]:
        """The earlier messages that first disclosed ``terms``, oldest first, each once: for a term the message's
        own thread let through as well, the thread's message. A list's other thread may have said the word first,
        but the recipient reads a reply in its own conversation, and that is the message the audit should name."""
        wanted = set(terms)
        wanted = {thread_marker(t) if thread_marker(t) in self.first else t for t in wanted}
        return tuple(dict.fromkeys(m for t, m in self.first.items() if t in wanted))


def written(result: SanitizeResult) -> tuple[tuple[str, str], ...]:
    """What a sanitized text wrote for each term it generalized, in the order of its decisions: not its coarsened
    facts (a number's range is no generalization of a term), nor an identifier (never remembered as itself)."""
    return tuple((d.term, d.replacement) for d in result.decisions
                 if d.replacement and d.action == "generalize" and d.kind is None and d.reason != "fact"
                 and "[" not in d.term)  # fmt: skip


def removed(result: SanitizeResult) -> tuple[str, ...]:
    """The terms a sanitized text took out (redacted, or left out as a modifier), in the order of its decisions: not
    an identifier (never remembered as itself)."""
    return tuple(dict.fromkeys(d.term for d in result.decisions
                               if d.action in ("redact", "omit") and d.kind is None and "[" not in d.term))  # fmt: skip


def named_entities(result: SanitizeResult) -> frozenset[str]:
    """The entities a sanitized text named (its names and their derived forms, replaced)."""
    return frozenset(d.entity for d in result.decisions if d.reason in NAMING and d.entity)


def disclosed_terms(
    engine: Engine,
    text: str,
    policy: SanitizePolicy,
    *,
    named: Iterable[str] = (),
    signature: Iterable[tuple[str, Iterable[str]]] = (),
    wrote: Iterable[tuple[str, str]] = (),
    removed: Iterable[str] = (),
) -> tuple[str, ...]:
    """The terms of ``text`` (a sanitized output) that a later group could build on, riskiest first; then a
    marker for each entity of the policy in ``named`` (the ones the original text named), one for each
    term of its ``signature`` of an entity of the policy (SanitizeResult.signature), one for each
    (term, generalization) the text was written with (``written``) and one for each term it took out (``removed``)."""
    markers = tuple(named_marker(e) for e in policy.entities if e in set(named))
    markers += tuple(signature_marker(e, k) for e, keys in signature if e in policy.entities for k in sorted(keys))
    markers += tuple(dict.fromkeys(wrote_marker(k, g) for k, g in wrote))
    markers += tuple(dict.fromkeys(removed_marker(k) for k in removed))
    if not text.strip():
        return markers
    entities = engine.entities_of(policy)
    names = {k for e in entities for k in e.keys}
    allow = {engine.key(t) for t in policy.allow}
    _tokens, occs = engine.terms_of(text, entities, policy)
    scored: list[tuple[float, str]] = []
    # A clue the next message's paragraphs sum (evidence.py) counts from a lower floor than a group member.
    evidence = policy.evidence_budget > 0 and policy.stream_evidence
    floor = min(policy.group_floor, policy.evidence_floor) if evidence else policy.group_floor
    for key in dict.fromkeys(o.key for o in occs):
        if key in names or key in allow:
            continue
        v = engine.verdict((frozenset({key}),), entities, policy.alpha)
        if v.n >= engine.estimator.min_support and v.ratio >= floor:
            scored.append((v.ratio, key))
    scored.sort(key=lambda rk: (-rk[0], rk[1]))
    return tuple(k for _r, k in scored) + markers
