"""Sanitizing one message: the CPU work the gateway sends to its process pool.

Each worker process loads K and WordNet once (``init_worker``), then runs
``sanitize_message`` for message after message. The result says what the
SMTP side must do: forward the sanitized bytes, hold the original, refuse,
or ask the sender to try again; it never raises for a bad message.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from extractors.base import Extracted
from extractors.mail import ContentPolicy, Handling
from extractors.pipeline import process, read, text_size
from gateway import heap
from gateway.config import EngineFiles, PolicyConfig
from gateway.errors import (
    ContentError,
    KnowledgeUnavailableError,
    LimitExceededError,
    SanigateError,
    TraceFoundError,
)
from gateway.model.engine import Engine
from gateway.model.identifiers import Analyzer
from gateway.model.identifiers.stage import mask
from gateway.model.memory import Memory, disclosed_terms, named_entities, removed, written
from gateway.model.records import Decision
from gateway.sandbox import ChildDiedError, ChildTimeoutError, address_space, run_forked
from gateway.store.base import DecisionRecord, HoldCause

log = logging.getLogger("sanigate.worker")

Verdict = Literal["forward", "hold", "reject", "tempfail"]
_STRICTNESS: dict[Handling, int] = {"pass": 0, "strip": 1, "quarantine": 2}
_FAILURE_ORDER = {"tempfail": 0, "quarantine": 1, "reject": 2}

_engine: Engine | None = None
_identifiers: Analyzer | None = None


@dataclass(frozen=True, slots=True)
class JobResult:
    verdict: Verdict
    data: bytes | None  # what to forward, for "forward"
    reason: str
    decisions: tuple[DecisionRecord, ...]
    notes: tuple[str, ...] = ()
    utility: float | None = None  # eq. 8 over the whole message, when something was changed
    cause: HoldCause | None = None  # why it cannot be sent on, for the reviewer
    # What the output lets through, by remembering policy: the stream's memory once it is delivered.
    disclosed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def changes(self) -> int:
        return len(self.decisions)


def init_worker(files: EngineFiles) -> None:
    global _engine, _identifiers
    from gateway.assemble import EngineConfig, build_engine, build_identifiers, knowledge_from

    _watch_parent()
    heap.tune()
    _engine = build_engine(EngineConfig(index=files.index, taxonomy=files.taxonomy), knowledge=knowledge_from(files))
    _identifiers = build_identifiers(_engine)
    heap.tune_collector()


def _watch_parent() -> None:
    """A worker whose gateway died (even by SIGKILL) exits instead of lingering as an orphan."""
    import os
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def check_policies(policies: Sequence[PolicyConfig], engine: Engine | None = None) -> list[str]:
    """Problems with the policies' entities: a configuration error, not a mail error.

    An entity K barely knows is not one: it is logged as a warning, and its names are still replaced.
    """
    engine = engine or _engine
    if engine is None:
        return ["sanitizer not started"]
    problems = []
    for p in policies:
        try:
            entities = engine.entities_of(p.sanitize)
        except SanigateError as exc:
            problems.append(f"policies.{p.name}.entities: {exc.message}")
            continue
        for e in entities:
            if e.warning:  # K barely knows it: its names are still replaced, so the policy stands
                log.warning("policies.%s.entities: %s", p.name, e.warning)
    return problems


def strictest(policies: Sequence[PolicyConfig]) -> ContentPolicy:
    def pick(attr: str) -> Handling:
        values: list[Handling] = [getattr(p.content, attr) for p in policies] or ["quarantine"]
        return max(values, key=lambda v: _STRICTNESS[v])

    return ContentPolicy(images=pick("images"), unknown=pick("unknown"), encrypted=pick("encrypted"),
                         unreadable=pick("unreadable"))  # fmt: skip


def sanitize_message(
    data: bytes,
    policies: Sequence[PolicyConfig],
    name: str,
    engine: Engine | None = None,
    memory: Mapping[str, Memory] | None = None,
    identifiers: Analyzer | None = None,
    *,
    isolate: bool | None = None,
) -> JobResult:
    """``memory``: for each policy that remembers, what its streams disclosed before (gateway/streams.py).

    ``isolate``: judge a text of ``LARGE_TEXT_CHARS`` or more in a forked child (by default in a worker
    process, not in a thread of the gateway).
    """
    if isolate is None:
        isolate = engine is None
    try:
        return _sanitize_message(data, policies, name, engine, memory, identifiers, isolate)
    finally:
        used = engine or _engine
        if used is not None:
            used.forget_texts()  # a large text's tokens are not kept until the next message replaces them
        if engine is None and len(data) >= heap.TRIM_AFTER_BYTES:
            heap.trim()  # a worker process (not a thread of the gateway): give back what a large message took


# A text this large is judged in a forked child: its tokens, terms and the copies of each round (about
# 60 MB for the archive's 150,000-character PDF text) leave nothing behind in the worker, whose caches
# would otherwise pin the arenas they were taken from. Smaller texts cost less than a fork's page faults.
LARGE_TEXT_CHARS = 32_768
CHILD_MAX_SECONDS = 300.0
CHILD_MAX_MEMORY = 2 * 1024**3  # beyond the worker's own address space (K and WordNet are mapped in it)


def _sanitize_message(
    data: bytes,
    policies: Sequence[PolicyConfig],
    name: str,
    engine: Engine | None,
    memory: Mapping[str, Memory] | None,
    identifiers: Analyzer | None,
    isolate: bool,
) -> JobResult:
    engine = engine or _engine
    memory = memory or {}
    identifiers = identifiers or _identifiers
    if engine is None:
        return JobResult("tempfail", None, "sanitizer not started", ())
    if not policies:
        return JobResult("forward", data, "no policy for this sender", ())
    on_failure = max((p.on_failure for p in policies), key=lambda f: _FAILURE_ORDER[f])
    job = _Job(data, tuple(policies), name, engine, memory, identifiers, on_failure, strictest(policies))
    try:
        extracted = read(data, name=name, kind="mail", content_policy=job.content_policy)
    except Exception as exc:
        return _failed(exc, name, on_failure)
    if isolate and text_size(extracted) >= LARGE_TEXT_CHARS:
        return _judge_in_child(job, extracted)
    return _judge(job, extracted)


@dataclass(frozen=True, slots=True)
class _Job:
    data: bytes
    policies: tuple[PolicyConfig, ...]
    name: str
    engine: Engine
    memory: Mapping[str, Memory]
    identifiers: Analyzer | None
    on_failure: str
    content_policy: ContentPolicy


def _judge_in_child(job: _Job, extracted: Extracted) -> JobResult:
    """``_judge`` in a forked child; its death or silence holds the message, never lets it through."""
    try:
        return run_forked(_judge, (job, extracted), max_seconds=CHILD_MAX_SECONDS,
                          max_memory=address_space() + CHILD_MAX_MEMORY, may_fork=True)  # fmt: skip
    except ChildTimeoutError:
        detail = f"not sanitized within {CHILD_MAX_SECONDS:g} s (a text of {text_size(extracted)} characters)"
        log.warning("%s: %s", job.name, detail)
        return JobResult("hold", None, "timeout", (), (detail,), cause=HoldCause(detail=detail))
    except ChildDiedError:
        detail = "the sanitizer's child process died on this message"
        log.error("%s: %s", job.name, detail)
        return JobResult("hold", None, "sanitizer-crashed", (), (detail,), cause=HoldCause(detail=detail))


def _judged_with(memory: Mapping[str, Memory], policy: PolicyConfig) -> frozenset[str]:
    """What ``policy``'s memory gives the engine: its terms, and whether the message opens its thread only where the
    policy judges an opener apart (``opening_floor``): a list's memory holds thousands of terms, asked every message."""
    if policy.name not in memory:
        return frozenset()
    remembered = memory[policy.name]
    return remembered.judged if policy.sanitize.opening_floor < policy.sanitize.evidence_floor else remembered.terms


def _judge(job: _Job, extracted: Extracted) -> JobResult:
    engine, policies, memory = job.engine, job.policies, job.memory
    try:
        outcome = process(job.data, engine=engine, policies=[p.sanitize for p in policies], name=job.name,
                          kind="mail", content_policy=job.content_policy, identifiers=job.identifiers,
                          disclosed=[_judged_with(memory, p) for p in policies],
                          extracted=extracted)  # fmt: skip
        final = outcome.results[-1].text if outcome.results else ""
        disclosed = {
            p.name: disclosed_terms(
                engine,
                final,
                p.sanitize,
                named=named_entities(r),
                signature=r.signature,
                wrote=written(r),
                removed=removed(r),
            )
            for p, r in zip(policies, outcome.results, strict=False)
            if p.name in memory and p.sanitize.entities  # an identifiers-only policy has no groups to remember
        }
    except Exception as exc:
        return _failed(exc, job.name, job.on_failure)
    records: list[DecisionRecord] = []
    spans = iter(outcome.spans)
    for policy, result in zip(policies, outcome.results, strict=False):
        for d in result.decisions:
            parts = next(spans)
            if d.kind is not None:
                # The audit keeps an identifier masked: the log must not become a register of them.
                records.append(
                    DecisionRecord(
                        policy=policy.name, entity=None, term=mask(d.surface, d.kind), pmi=None, threshold=None,
                        action=d.action, replacement=d.replacement, reason=_identifier_reason(d),
                        part=", ".join(sorted({p.part for p in parts})),
                    )
                )  # fmt: skip
                continue
            records.append(
                DecisionRecord(
                    policy=policy.name, entity=d.entity, term=d.surface, pmi=d.pmi, threshold=d.threshold,
                    action=d.action, replacement=d.replacement, reason=d.reason,
                    part=", ".join(sorted({p.part for p in parts})), group=d.group, sense=d.sense, chain=d.chain,
                    earlier=memory[policy.name].sources(d.earlier) if d.earlier and policy.name in memory else (),
                )
            )  # fmt: skip
    notes = tuple(f"{n.part}: {n.action} ({n.reason})" for n in outcome.notes)
    utility = None
    if outcome.changed:  # each policy works on the previous one's output: what each keeps multiplies
        utility = 1.0
        for r in outcome.results:
            utility *= r.utility.preservation / 100.0
    return JobResult("forward", outcome.data, "sanitized" if outcome.changed else "clean", tuple(records), notes,
                     utility, disclosed=disclosed)  # fmt: skip


def _failed(exc: Exception, name: str, on_failure: str) -> JobResult:
    """What a message that could not be sanitized gets; called inside the ``except`` that caught ``exc``."""
    if isinstance(exc, MemoryError) or (isinstance(exc, OSError) and exc.errno == errno.ENOMEM):
        # A very large text in a child, whose address space is limited (a file mapped late fails as ENOMEM).
        exc = LimitExceededError("the text needs more memory than a message may take", part=name)
    if isinstance(exc, TraceFoundError):
        # The last check found a name in what would leave: held for a person to look at, whatever on_failure
        # says (a rejection would tell the sender nothing of what to fix, and release is a reviewer's call).
        log.warning("%s: %s", name, exc.message)
        return JobResult("hold", None, exc.reason, (), (exc.message,), cause=cause_of(exc))
    if isinstance(exc, ContentError):
        log.info("%s: cannot be sanitized: %s", name, exc.message)
        return JobResult(_failure_verdict(on_failure), None, exc.reason, (), (exc.message,), cause=cause_of(exc))
    if isinstance(exc, KnowledgeUnavailableError):
        # K did not answer: no decision may rest on part of it. Held, whatever the policy's on_failure says.
        log.warning("%s: %s", name, exc.message)
        return JobResult("hold", None, "knowledge-unavailable", (), (exc.message,), cause=cause_of(exc))
    if isinstance(exc, SanigateError):
        log.warning("%s: %s", name, exc.message)
        return JobResult(_failure_verdict(on_failure), None, "sanitizer-error", (), (exc.message,),
                         cause=cause_of(exc))  # fmt: skip
    # A bug must hold the message, never forward it in clear.
    log.exception("%s: internal error while sanitizing", name)
    detail = f"{type(exc).__name__}: {exc}"
    return JobResult("hold", None, "internal-error", (), (detail,), cause=HoldCause(detail=detail))


def cause_of(exc: SanigateError) -> HoldCause:
    """What the error says about itself: the last check's errors name the term, the part and where in it."""

    def text(attr: str) -> str | None:
        value = getattr(exc, attr, None)
        return str(value) if value else None

    return HoldCause(detail=exc.message, term=text("term"), entity=text("entity"), part=text("part"),
                     location=text("location"))  # fmt: skip


def _failure_verdict(on_failure: str) -> Verdict:
    return {"quarantine": "hold", "reject": "reject", "tempfail": "tempfail"}[on_failure]  # type: ignore[return-value]


def _identifier_reason(d: Decision) -> str:
    return f"identifier {d.kind} ({d.reason.removeprefix('identifier: ')})"
