"""Identifiers first, then the (alpha, C) model on what remains, as one policy's result.

The paper removes structured identifiers by patterns and classifiers before
its model judges the remaining terms; HIPAA's Safe Harbor lists what must go.
Both passes end in one ``SanitizeResult``: the identifier decisions (with
their kind) and the engine's, every span on the text the policy was given,
and one list of edits from that text to the result.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from gateway.errors import ConfigError
from gateway.model.identifiers.analyzer import Analyzer, find_words
from gateway.model.identifiers.anonymizer import Replacement, anonymize
from gateway.model.identifiers.finding import Finding, Role
from gateway.model.identifiers.kinds import MISC, PERSON, SAFE_HARBOR
from gateway.model.identifiers.lowered import Lowered
from gateway.model.records import Decision, Entity, SanitizePolicy, SanitizeResult, Utility
from gateway.model.rewrite import Edit, Rewritten, TextEdit, apply_edits, compose
from gateway.model.terms import PLACEHOLDER


class Sanitizer(Protocol):
    def sanitize(
        self,
        text: str,
        policy: SanitizePolicy,
        *,
        avoid: Collection[str] = (),
        disclosed: Collection[str] = (),
        replaced: Collection[str] = (),
    ) -> SanitizeResult: ...

    def entities_of(self, policy: SanitizePolicy) -> tuple[Entity, ...]: ...

    def key(self, text: str) -> str: ...

    def key_once(self, text: str) -> str: ...


@dataclass(frozen=True, slots=True)
class IdentifierPass:
    rewritten: Rewritten
    decisions: tuple[Decision, ...]

    @property
    def text(self) -> str:
        return self.rewritten.text


def remove_identifiers(
    text: str,
    analyzer: Analyzer,
    policy: SanitizePolicy,
    *,
    named: Callable[[str], bool] | None = None,
    addresses: Collection[str] = (),
    roles: Sequence[Role] = (),
) -> IdentifierPass:
    findings, lowered = analyzer.analyze_lowered(text, policy.identifiers, addresses=addresses, roles=roles)
    if named is not None:
        # A capitalised word the analyzer could only call MISC ("HIV") that the policy names as an entity is
        # the model's to replace: it is risky by name there, and gets its generalization ("ill health")
        # instead of "[MISC]".
        findings = [f for f in findings if f.kind != MISC or not named(f.text)]
    # Kinds beyond Safe Harbor's (organisations, demographics: TAB's vocabulary) ask for what TAB masks,
    # years and ages included; Safe Harbor's own kinds keep the year and an age under 90, as the rule allows.
    safe_harbor = policy.identifiers <= SAFE_HARBOR
    replacements = [
        r for r in anonymize(findings, address_level=policy.address_level, safe_harbor=safe_harbor) if r.changes
    ]
    replacements += _in_other_case(
        text,
        findings,
        [r for r in replacements if r.finding.kind != PERSON or not analyzer.is_ordinary_name(r.finding.text, PERSON)],
        lowered,
    )
    edits = [_edit(text, r) for r in replacements]
    return IdentifierPass(apply_edits(text, edits), tuple(_decisions(replacements)))


def _in_other_case(
    text: str, findings: Sequence[Finding], replacements: Sequence[Replacement], lowered: Lowered | None = None
) -> list[Replacement]:
    """A replaced value in another case ("ettus" after "Ettus"), as a word: replaced the same way.

    The engine after this pass flags every word that is a replaced value as it stands in any case
    (``avoid``), so these would be redacted anyway; here they get the value's own replacement, and a
    text whose identifiers are all replaced stays on the engine's fast path for clean text.
    """
    if not replacements:
        return []
    # The analyzer's lower case of this text, with the searches it made for the same values (when it read the
    # text as it stands).
    lowered = lowered if lowered is not None and lowered.text is text else Lowered(text)
    low = lowered.low
    if len(low) != len(text):  # a letter whose lower case is longer ("İ"): offsets would not match
        return []
    taken = sorted((f.start, f.end) for f in findings)
    starts = [a for a, _b in taken]
    out: list[Replacement] = []
    values: dict[str, Replacement] = {}
    for r in replacements:
        values.setdefault(r.finding.text.lower(), r)
    for start, end in sorted(_whole_words(lowered, values)):
        if _overlaps(taken, starts, start, end):
            continue  # found by the analyzer, or inside another finding
        r = values[low[start:end]]
        f = Finding(start=start, end=end, kind=r.finding.kind, text=text[start:end], score=r.finding.score - 0.02,
                    source=f"{r.finding.source}{_OTHER_CASE}", parts=r.finding.parts)  # fmt: skip
        i = bisect.bisect_left(starts, start)
        taken.insert(i, (start, end))
        starts.insert(i, start)
        out.append(Replacement(f, r.text, r.action, r.group))
    return out


_OTHER_CASE = ", in another case"


def _whole_words(lowered: Lowered, values: Collection[str]) -> list[tuple[int, int]]:
    """Where each value (in lower case) stands in the lower case as a word of the engine's: a hyphen joins words
    ("sans" of a font's name is not in "sans-serif"), an underscore parts them ("Aptos_EmbeddedFont")."""
    text = lowered.low
    out = []
    for v in values:
        for i in lowered.where(v):
            j = i + len(v)
            if (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "-")) and (
                j == len(text) or not (text[j].isalnum() or text[j] == "-")
            ):
                out.append((i, j))
    return out


def _overlaps(taken: Sequence[tuple[int, int]], starts: Sequence[int], start: int, end: int) -> bool:
    i = bisect.bisect_right(starts, start)
    return (i > 0 and taken[i - 1][1] > start) or (i < len(starts) and starts[i] < end)


_AFTER_INITIAL = re.compile(r"(?<=[^\W_])[^\W_]")
_ALNUM = re.compile(r"[^\W_]")
_ON_DAY = re.compile(r"\b([Oo]n)([ \t]+)$")


def _edit(text: str, r: Replacement) -> Edit:
    """The replacement as an edit; "on March 3, 2024" becomes "in 2024", not "on 2024"."""
    f = r.finding
    if f.kind == "DATE" and r.action == "generalize" and (m := _ON_DAY.search(text, max(0, f.start - 6), f.start)):
        word = "In" if m.group(1) == "On" else "in"
        return Edit(m.start(1), f.end, word + m.group(2) + r.text, f.start)
    return Edit(f.start, f.end, r.text, f.start)


def _decisions(replacements: Sequence[Replacement]) -> list[Decision]:
    groups: dict[str, list[Replacement]] = {}
    for r in replacements:
        groups.setdefault(r.group, []).append(r)
    out: list[Decision] = []
    for members in groups.values():
        # The value as found names the decision (the residual check looks for it), not another case of it.
        first = min(members, key=lambda r: (r.finding.source.endswith(_OTHER_CASE), r.finding.start))
        f = first.finding
        sources = sorted({r.finding.source for r in members})
        out.append(
            Decision(
                term=" ".join(f.text.lower().split()),
                surface=f.text,
                entity=None,
                pmi=None,
                threshold=None,
                ic_term=0.0,
                action=first.action,
                replacement=first.text,
                reason=f"identifier: {', '.join(sources)}",
                spans=tuple(sorted((r.finding.start, r.finding.end) for r in members)),
                kind=f.kind,
            )
        )
    return sorted(out, key=lambda d: d.spans[0])


def sanitize_text(
    text: str,
    policy: SanitizePolicy,
    *,
    engine: Sanitizer,
    identifiers: Analyzer | None,
    avoid: Collection[str] = (),
    disclosed: Collection[str] = (),
    addresses: Collection[str] = (),
    roles: Sequence[Role] = (),
) -> SanitizeResult:
    """One policy over a text: its identifier kinds, then its sensitive entities (``disclosed``: Engine.sanitize;
    ``addresses``, ``roles``: Analyzer.analyze)."""
    if not policy.identifiers:
        return engine.sanitize(text, policy, avoid=avoid, disclosed=disclosed)
    if identifiers is None:
        raise ConfigError("this policy removes identifiers, but no identifier analyzer was given")
    names = {k for e in engine.entities_of(policy) for k in e.keys} if policy.entities else set()

    # Keys not kept in the engine's key cache (key_once): it would hold every sender's identifier values
    # (names, numbers) in the worker's memory across messages, and push out the keys of the terms people type.
    key = engine.key_once
    found = remove_identifiers(
        text, identifiers, policy, named=lambda value: key(value) in names, addresses=addresses, roles=roles
    )
    base = [TextEdit(e.start, e.end, e.text) for e in found.rewritten.edits]
    if not policy.entities or not found.text.strip():
        return SanitizeResult(found.text, found.decisions, Utility(0.0, 0.0), (), policy, 1, tuple(base))
    # Keys as the engine reads them: a generalization must not write a replaced value back, not even inside
    # a phrase ("American state" after "American"), or the check before sending would hold the text.
    replaced = {key(d.term) for d in found.decisions if not identifiers.is_ordinary_name(d.term, d.kind)}
    result = engine.sanitize(found.text, policy, avoid=avoid, disclosed=disclosed, replaced=replaced)
    mapped = tuple(
        replace(d, spans=tuple(sorted({found.rewritten.to_original(*s) for s in d.spans}))) for d in result.decisions
    )
    # The identifier edits are sorted and disjoint (apply_edits kept them so): with no edit of the engine's,
    # compose would give them back as they are.
    edits = (
        compose(base, found.text, [Edit(e.start, e.end, e.text, e.start) for e in result.edits])
        if result.edits
        else base
    )
    return SanitizeResult(result.text, (*found.decisions, *mapped), result.utility, result.entities, policy,
                          result.rounds, tuple(edits), result.signature)  # fmt: skip


def residual_identifiers(text: str, decisions: Sequence[Decision]) -> list[str]:
    """Identifier values that a rebuilt text still shows (the check before sending trusts no extractor)."""
    watch = {
        d.surface: d.kind
        for d in decisions
        if d.kind is not None and len(d.surface.strip()) >= 3 and d.replacement is not None
        and d.surface not in d.replacement
    }  # fmt: skip
    # A value may be a word of a placeholder the pass wrote itself ("SSN" the acronym, then "[SSN]" for the
    # number beside it): those placeholders are blanked first, so only the text's own words are searched.
    written = {p for d in decisions if d.replacement for p in PLACEHOLDER.findall(d.replacement)}
    for p in written:
        if any(v in p for v in watch):
            text = text.replace(p, " " * len(p))
    seen = dict.fromkeys(text[a:b] for a, b in sorted(find_words(text, watch)))
    return [f"{watch[v]} {mask(v, watch[v])}" for v in seen]


def mask(value: str, kind: str | None = None) -> str:
    """An identifier as a log or the audit may show it: enough to recognise, not to reuse.

    A name keeps its initials ("D** R***** C***"), an address nothing, a number its last digits.
    """
    if kind in _INITIALS:
        return _AFTER_INITIAL.sub("*", value)
    if len(value) <= 4 or kind == "ADDRESS":
        return _ALNUM.sub("*", value)
    keep = 2 if len(value) < 10 else 4
    return _ALNUM.sub("*", value[:-keep]) + value[-keep:]


_INITIALS = frozenset({"PERSON", "ORG", "LOC", "DEM", "MISC"})
