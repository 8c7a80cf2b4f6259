"""Content in, sanitized content out: extract, decide once, rebuild, verify.

The engine sees one document made of every segment of the content, so a term
gets the same replacement in the Subject, both halves of a
multipart/alternative, and a DOCX attachment. Policies apply one after
another, each to the output of the previous. The rebuilt content is extracted
again, and if any flagged term is still in it the content is held
(``ResidualRiskError``), never forwarded.

Then, changed or not, the bytes that would leave go through the independent
verifier (``gateway.verify``): it reads every layer of the raw output with
its own parsers and holds the content (``TraceFoundError``) if any name of
any entity of the policies is still there, in any channel.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any, Literal

from extractors.base import SEPARATOR, Extracted, Note, Segment, apply_to_pieces, combine, locate, roles, split
from extractors.docx import extract_docx
from extractors.limits import Limits
from extractors.mail import ContentPolicy, extract_mail
from extractors.pdf import extract_pdf
from extractors.plain import PlainDocument
from gateway.errors import InputError, ResidualRiskError, SanigateError, TraceFoundError
from gateway.model.engine import Engine
from gateway.model.identifiers import Analyzer, residual_identifiers, sanitize_text
from gateway.model.records import Decision, Entity, SanitizePolicy, SanitizeResult
from gateway.model.rewrite import Edit, TextEdit, apply_text_edits, compose
from gateway.model.terms import STOPWORDS
from gateway.quickinit import quick_init
from gateway.verify import Needles, find_trace, parse_mail

Kind = Literal["mail", "docx", "pdf", "text"]
DEFAULT_LIMITS = Limits()
DEFAULT_CONTENT_POLICY = ContentPolicy()
# Re-extraction of our own output must see every part, whatever the policy.
# Everything readable is read, nothing held: for looking at content, not for deciding what leaves.
SEE_ALL = ContentPolicy(unknown="pass", images="pass", encrypted="pass", unreadable="pass")


@quick_init
@dataclass(frozen=True, slots=True)
class PartSpan:
    part: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: Kind
    data: bytes
    changed: bool
    results: tuple[SanitizeResult, ...]
    spans: tuple[tuple[PartSpan, ...], ...]  # per decision, in the order of ``decisions``
    notes: tuple[Note, ...] = ()
    segments: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def decisions(self) -> tuple[Decision, ...]:
        return tuple(d for r in self.results for d in r.decisions)

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "changed": self.changed, "policies": []}
        spans = iter(self.spans)
        for r in self.results:
            rep = r.as_report()
            for d in rep["decisions"]:
                d["parts"] = [{"part": s.part, "start": s.start, "end": s.end} for s in next(spans)]
            out["policies"].append(rep)
        if len(self.results) == 1:
            out.update(out["policies"][0])
        out["notes"] = [{"part": n.part, "action": n.action, "reason": n.reason} for n in self.notes]
        return out


def detect_kind(data: bytes, name: str = "") -> Kind:
    low = name.lower()
    if data[:5] == b"%PDF-" or low.endswith(".pdf"):
        return "pdf"
    if data[:2] == b"PK" and (b"[Content_Types].xml" in data[:65536] or low.endswith((".docx", ".docm"))):
        return "docx"
    if low.endswith(".docx"):
        return "docx"
    if low.endswith((".eml", ".msg")):
        return "mail"
    if low.endswith(_TEXT_SUFFIXES):
        return "text"  # a note that starts like a header block is still a note: its name says so
    return "mail" if looks_like_mail(data) else "text"


_TEXT_SUFFIXES = (".txt", ".text", ".md", ".rst", ".csv", ".tsv", ".log", ".json", ".xml", ".ics", ".vcf")


def looks_like_mail(data: bytes) -> bool:
    import re

    head = data[:8192].lstrip(b"\r\n")
    if head.startswith(b"From "):
        head = head.split(b"\n", 1)[-1]
    lines = head.split(b"\n")
    fields = 0
    for line in lines[:20]:
        if not line.strip():
            break
        if re.match(rb"^[!-9;-~]+:", line):
            fields += 1
        elif not line[:1].isspace():
            return False
    return fields >= 2


def extract(data: bytes, kind: Kind, *, name: str, limits: Limits, policy: ContentPolicy) -> Extracted:
    if kind == "mail":
        return extract_mail(data, part=name, limits=limits, policy=policy)
    if kind == "docx":
        return extract_docx(data, part=name, limits=limits)
    if kind == "pdf":
        return extract_pdf(data, part=name, limits=limits)
    return PlainDocument.from_bytes(data, part=name)


def sanitize_extracted(
    extracted: Extracted,
    engine: Engine,
    policies: Sequence[SanitizePolicy],
    disclosed: Sequence[Collection[str]] = (),
    identifiers: Analyzer | None = None,
) -> tuple[list[tuple[str, ...]], list[SanitizeResult], list[tuple[PartSpan, ...]]]:
    """``disclosed``, by policy: what earlier messages of the stream let through (``Engine.sanitize``)."""
    segments: Sequence[Segment] = extracted.segments
    text, starts = combine(segments)
    results: list[SanitizeResult] = []
    spans: list[tuple[PartSpan, ...]] = []
    composed: list[TextEdit] = []
    current = text
    # Which parts a program wrote (a header like X-AntiAbuse): the name finder asks more of a capital there. Every
    # policy's text keeps the parts in their order, between the same separators.
    part_roles = roles(segments)
    for i, policy in enumerate(policies):
        if not current.strip():
            break
        flagged = frozenset(d.term for r in results for d in r.decisions)
        # A policy with identifier kinds removes them first, then judges its entities on what remains.
        result = sanitize_text(current, policy, engine=engine, identifiers=identifiers, avoid=flagged,
                               disclosed=disclosed[i] if i < len(disclosed) else (),
                               addresses=extracted.addresses, roles=part_roles)  # fmt: skip
        stage_starts = _starts(split(current, len(segments)) or [])
        for d in result.decisions:
            spans.append(tuple([PartSpan(*locate(stage_starts, segments, s)) for s in d.spans]))
        composed = _compose(composed, current, result.edits)
        results.append(result)
        current = result.text
    if split(current, len(segments)) is None or apply_text_edits(text, composed) != current:
        raise SanigateError("segment layout lost while sanitizing; held for review")
    per_segment: list[list[tuple[int, int, str]]] = [[] for _ in segments]
    for e in composed:
        i = max(0, bisect.bisect_right(starts, e.start) - 1)
        per_segment[i].append((e.start - starts[i], e.end - starts[i], e.text))
    pieces = [apply_to_pieces(seg.pieces, edits) for seg, edits in zip(segments, per_segment, strict=True)]
    return pieces, results, spans


def _compose(composed: list[TextEdit], current: str, edits: Sequence[TextEdit]) -> list[TextEdit]:
    """The edits so far, then a policy's edits on their result, as edits on the original text."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    if not composed and all(a.end <= b.start for a, b in itertools.pairwise(ordered)):
        # The first policy's edits, none overlapping another, are already on the original: what ``compose``
        # gives for them (one cluster each), without its per-edit bookkeeping (a message with identifiers
        # has a hundred edits).
        return ordered
    return compose(composed, current, [Edit(e.start, e.end, e.text, e.start) for e in edits])


def _starts(texts: Sequence[str]) -> list[int]:
    out, pos = [], 0
    for t in texts:
        out.append(pos)
        pos += len(t) + len(SEPARATOR)
    return out


def process(
    data: bytes,
    *,
    engine: Engine,
    policies: Sequence[SanitizePolicy],
    name: str = "input",
    kind: Kind | None = None,
    limits: Limits = DEFAULT_LIMITS,
    content_policy: ContentPolicy = DEFAULT_CONTENT_POLICY,
    verify: bool = True,
    disclosed: Sequence[Collection[str]] = (),
    identifiers: Analyzer | None = None,
    extracted: Extracted | None = None,
) -> Outcome:
    """``extracted``: what ``read`` gave for the same arguments (the worker reads first to choose where to judge)."""
    if not data.strip():
        raise InputError(f"{name}: the file is empty")
    kind = kind or detect_kind(data, name)
    try:
        return _process(data, kind, engine, policies, name, limits, content_policy, verify, disclosed, identifiers,
                        extracted)  # fmt: skip
    except SanigateError as exc:
        raise exc.naming(name) from exc.__cause__


def read(
    data: bytes,
    *,
    name: str = "input",
    kind: Kind | None = None,
    limits: Limits = DEFAULT_LIMITS,
    content_policy: ContentPolicy = DEFAULT_CONTENT_POLICY,
) -> Extracted:
    """The extraction ``process`` starts with, with the same errors."""
    if not data.strip():
        raise InputError(f"{name}: the file is empty")
    try:
        return extract(data, kind or detect_kind(data, name), name=name, limits=limits, policy=content_policy)
    except SanigateError as exc:
        raise exc.naming(name) from exc.__cause__


def text_size(extracted: Extracted) -> int:
    """Characters of text the engine will read (segments and their separators)."""
    return sum(len(s.text) + len(SEPARATOR) for s in extracted.segments)


def _process(
    data: bytes,
    kind: Kind,
    engine: Engine,
    policies: Sequence[SanitizePolicy],
    name: str,
    limits: Limits,
    content_policy: ContentPolicy,
    verify: bool,
    disclosed: Sequence[Collection[str]] = (),
    identifiers: Analyzer | None = None,
    extracted: Extracted | None = None,
) -> Outcome:
    if extracted is None:
        extracted = extract(data, kind, name=name, limits=limits, policy=content_policy)
    pieces, results, spans = sanitize_extracted(extracted, engine, policies, disclosed, identifiers)
    notes: list[Note] = list(extracted.notes)
    changed = any(r.decisions for r in results)
    if not changed and not notes:
        if verify:
            verify_output(data, kind, engine=engine, policies=policies, name=name)
        return Outcome(kind, data, False, tuple(results), tuple(spans), (), len(extracted.segments))
    out = extracted.rebuild(pieces)
    notes = list(extracted.notes)  # rebuilding a message can add notes (a PDF re-rendered)
    if verify:
        check_and_verify(out, kind, engine=engine, policies=policies, results=results if changed else None, name=name,
                         limits=limits)  # fmt: skip
    return Outcome(kind, out, changed, tuple(results), tuple(spans), tuple(notes), len(extracted.segments))


def check_and_verify(
    data: bytes,
    kind: Kind,
    *,
    engine: Engine,
    policies: Sequence[SanitizePolicy],
    results: Sequence[SanitizeResult] | None,
    name: str,
    limits: Limits,
) -> None:
    """The checks of rebuilt content before it leaves: ``check_output`` (``results``: what changed it), then the
    independent ``verify_output``; the first error is raised.

    Rewritten mail is parsed once, by the verifier, for both (the stdlib parser is about half of each check). The
    verifier walks its parse before the check's extraction reads it (a reading that changes nothing:
    tests/test_shared_parse.py), and what it found waits for the check, so that when both fail the check's error is
    still the one raised, as when it ran first.
    """
    if results is None:
        verify_output(data, kind, engine=engine, policies=policies, name=name)
        return
    if kind != "mail":
        check_output(data, kind, engine=engine, results=results, name=name, limits=limits)
        verify_output(data, kind, engine=engine, policies=policies, name=name)
        return
    parsed = parse_mail(data)
    try:
        verify_output(data, kind, engine=engine, policies=policies, name=name, parsed=parsed)
    except Exception:
        check_output(data, kind, engine=engine, results=results, name=name, limits=limits, parsed=parsed)
        raise
    check_output(data, kind, engine=engine, results=results, name=name, limits=limits, parsed=parsed)


def verify_output(
    data: bytes,
    kind: Kind,
    *,
    engine: Engine,
    policies: Sequence[SanitizePolicy],
    name: str,
    parsed: Message | None = None,
) -> None:
    """The independent last check: no name of any entity of the policies anywhere in ``data``.

    ``parsed``: ``gateway.verify.parse_mail(data)``, made by the caller for this check and the pipeline's after it.
    """
    entities = tuple(e for p in policies for e in engine.entities_of(p))
    found = find_trace(data, kind, _needles(engine, entities), part=name, parsed=parsed)
    if found is not None:
        view, hit = found
        raise TraceFoundError(term=hit.term, entity=hit.entity, part=view.part, location=view.location)


def plain_word(engine: Engine, word: str) -> bool:
    """Is a lower-case acronym also an ordinary word ("aids": the plural of "aid")?"""
    language = engine.language
    return (
        word in STOPWORDS
        or language.lemmatize(word) != word
        or (word.endswith("s") and language.plural(word[:-1]) == word)
    )


_NEEDLES: dict[tuple[int, tuple[Entity, ...]], Needles] = {}


def _needles(engine: Engine, entities: tuple[Entity, ...]) -> Needles:
    key = (id(engine), entities)
    needles = _NEEDLES.get(key)
    if needles is None:
        needles = Needles(entities, is_plain_word=lambda w: plain_word(engine, w))
        if len(_NEEDLES) > 64:
            _NEEDLES.clear()
        _NEEDLES[key] = needles
    return needles


def check_output(
    data: bytes,
    kind: Kind,
    *,
    engine: Engine,
    results: Sequence[SanitizeResult],
    name: str,
    limits: Limits,
    parsed: Message | None = None,
) -> None:
    """Extract the rebuilt content again; a flagged term still in it is a leak.

    ``parsed``: a compat32 parse of ``data`` (mail), read as the extraction would parse it.
    """
    # Identifiers have their own rule (residual_identifiers): "Ettus" the name is flagged, "ettus.com" is not.
    # A clue the summed evidence lowered is safe alone (``Decision.flags_term``): another term may be written as it.
    flagged = {d.term for r in results for d in r.decisions if d.flags_term}
    if parsed is not None and kind == "mail":
        again: Extracted = extract_mail(data, part=name, limits=limits, policy=SEE_ALL, parsed=parsed)
    else:
        again = extract(data, kind, name=name, limits=limits, policy=SEE_ALL)
    text, _ = combine(again.segments)
    left: list[str] = []
    if flagged:  # reading every term again is the costly part; with no entity decision there is nothing to find
        _tokens, occs = engine.terms_of(text, [e for r in results for e in r.entities])
        left = sorted(flagged & {o.key for o in occs})
    left += residual_identifiers(text, [d for r in results for d in r.decisions])
    if left:
        raise ResidualRiskError(f"after rebuilding, flagged term(s) still present: {', '.join(left[:5])}", part=name)


def process_file(path: Path, **kwargs: Any) -> Outcome:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    return process(data, name=path.name, **kwargs)
