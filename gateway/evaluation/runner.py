"""One evaluation run: every document at every α, sanitized and redacted, scored against gold and attacked."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from extractors.pipeline import DEFAULT_LIMITS, check_output
from gateway.errors import ConfigError, ResidualRiskError, UnknownEntityError
from gateway.evaluation.attacker import naive_removal
from gateway.evaluation.datasets import EvalDocument
from gateway.evaluation.metrics import NO_SCORES, MeanScores, Scores, mean_scores, rank_of, term_scores, token_scores
from gateway.model.engine import Engine
from gateway.model.identifiers import Analyzer, sanitize_text
from gateway.model.records import Decision, SanitizePolicy, SanitizeResult
from gateway.model.rewrite import REDACTION_MARKER

_WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")


class Attacker(Protocol):
    def scores(self, text: str, candidates: Sequence[str]) -> dict[str, float]: ...


@dataclass(frozen=True, slots=True)
class DocResult:
    doc_id: str
    entity: str
    category: str
    alpha: float
    known: bool  # False: the entity was refused (nothing sanitized)
    token: dict[str, Scores]  # by annotator
    term: dict[str, Scores]
    utility_redaction: float  # eq. 8, percent
    utility_sanitization: float
    decisions: int
    # Attacker name -> rank of the true entity, on the sanitized and on the redacted text.
    rank_sanitized: dict[str, int] = field(default_factory=dict)
    rank_redacted: dict[str, int] = field(default_factory=dict)
    # Why the gateway would not send the sanitized text ("residual-risk", "unknown-entity"); None: it would.
    failure: str | None = None
    words: int = 0
    redacted_words: int = 0  # words of the original inside a span that became a redaction marker
    warned: bool = False  # K barely knows the entity: only its names and word forms were judged


@dataclass(frozen=True, slots=True)
class Baseline:
    """The attacker before anything is sanitized, and after a naive removal of the entity's name."""

    rank_original: dict[str, int]
    rank_naive: dict[str, int]


@dataclass(slots=True)
class Report:
    dataset: str
    alphas: tuple[float, ...]
    candidates: tuple[str, ...]
    annotators: tuple[str, ...]
    attackers: tuple[str, ...] = ()
    # What ran, as an operator would configure it: "model", "identifiers (KINDS)" or "model + identifiers (KINDS)".
    pipeline: str = "model"
    results: list[DocResult] = field(default_factory=list)
    baselines: dict[str, Baseline] = field(default_factory=dict)

    def at(self, alpha: float, *, known_only: bool = True) -> list[DocResult]:
        return [r for r in self.results if r.alpha == alpha and (r.known or not known_only)]

    def summed(self, alpha: float, level: str, annotator: str) -> Scores:
        total = NO_SCORES
        for r in self.at(alpha):
            total = total + getattr(r, level).get(annotator, NO_SCORES)
        return total

    def mean(self, alpha: float, level: str) -> MeanScores:
        # An annotator whose gold marks nothing here has no score; counting it as 100 % would flatter.
        return mean_scores([s for a in self.annotators if (s := self.summed(alpha, level, a)).gold])

    def utility(self, alpha: float, mode: str) -> float:
        rows = self.at(alpha, known_only=False)
        return sum(getattr(r, f"utility_{mode}") for r in rows) / len(rows) if rows else 100.0

    def failures(self, alpha: float) -> list[DocResult]:
        return [r for r in self.at(alpha, known_only=False) if r.failure is not None]

    def redacted_share(self, alpha: float) -> float:
        """Percent of all words of all documents that became a redaction marker (sanitization mode)."""
        rows = self.at(alpha, known_only=False)
        words = sum(r.words for r in rows)
        return 100.0 * sum(r.redacted_words for r in rows) / words if words else 0.0

    def attack(self, alpha: float | None, stage: str, attacker: str | None = None) -> tuple[float, float] | None:
        """(mean rank, share ranked first in percent) of the true entity at one stage."""
        name = attacker or (self.attackers[0] if self.attackers else "")
        if stage in ("original", "naive"):
            ranks = [getattr(b, f"rank_{stage}").get(name) for b in self.baselines.values()]
        else:
            ranks = [getattr(r, f"rank_{stage}").get(name) for r in self.at(alpha or 0.0, known_only=False)]
        found = [r for r in ranks if r is not None]
        if not found:
            return None
        return sum(found) / len(found), 100.0 * sum(1 for r in found if r == 1) / len(found)


def evaluate(
    engine: Engine,
    docs: Sequence[EvalDocument],
    alphas: Sequence[float],
    *,
    dataset: str,
    attackers: Mapping[str, Attacker] | None = None,
    progress: Callable[[int], None] = lambda _n: None,
    analyzer: Analyzer | None = None,
    model: bool = True,
    kinds_name: str = "",
    **policy: object,
) -> Report:
    """Every document at every α; ``policy`` holds SanitizePolicy fields (``identifiers``: kinds for ``analyzer``).

    ``model=False`` leaves the entity out of the policy: the identifier pass alone, as a baseline.
    ``kinds_name`` is how the kinds were asked for ("safe-harbor"), for the report.
    """
    attackers = dict(attackers or {})
    candidates = tuple(dict.fromkeys(d.entity for d in docs))
    annotators = tuple(dict.fromkeys(a.annotator for d in docs for a in d.annotations))
    kinds = policy.get("identifiers")
    if not model and not kinds:
        raise ConfigError("with the model off, the identifier pass needs kinds (identifiers=...)")
    named = f"identifiers ({kinds_name or ','.join(sorted(kinds))})" if isinstance(kinds, frozenset) else ""
    pipeline = "model" if not kinds else named if not model else f"model + {named}"
    report = Report(dataset, tuple(alphas), candidates, annotators, tuple(attackers), pipeline)
    run = _Run(engine, analyzer, model, policy)
    for doc in docs:
        if attackers:
            naive = naive_removal(doc.text, doc.entity)
            report.baselines[doc.doc_id] = Baseline(
                {n: rank_of(a.scores(doc.text, candidates), doc.entity) for n, a in attackers.items()},
                {n: rank_of(a.scores(naive, candidates), doc.entity) for n, a in attackers.items()},
            )
        gold_terms: dict[str, set[str]] = {}
        if doc.annotations:
            _tokens, occs = engine.terms_of(doc.text)
            for ann in doc.annotations:
                masked = [span for span, m in zip(ann.tokens, ann.masked, strict=True) if m]
                gold_terms[ann.annotator] = {o.key for o in occs if any(a < o.end and o.start < b for a, b in masked)}
        for alpha in alphas:
            report.results.append(_one(run, doc, alpha, gold_terms, attackers, candidates))
            progress(1)
    return report


def _ranks(
    attackers: Mapping[str, Attacker], text: str, doc: EvalDocument, candidates: Sequence[str]
) -> dict[str, int]:
    return {n: rank_of(a.scores(text, candidates), doc.entity) for n, a in attackers.items()}


def hidden_spans(text: str, decisions: Sequence[Decision]) -> list[tuple[int, int]]:
    """The words the decisions took out of ``text``: a word its replacement repeats was not hidden.

    "August 23, 1976" generalized to "1976" hides the day, not the year; "Fulton County" as "a county"
    hides "Fulton" only.
    """
    out: list[tuple[int, int]] = []
    for d in decisions:
        kept = {w.lower() for w in _WORD.findall(d.replacement or "")}
        for a, b in d.spans:
            out += [m.span() for m in _WORD.finditer(text, a, b) if m.group().lower() not in kept]
    return out


def redacted_words(text: str, result: SanitizeResult) -> int:
    """Words of ``text`` inside an edit whose replacement holds a redaction marker."""
    spans = [(e.start, e.end) for e in result.edits if REDACTION_MARKER in e.text]
    if not spans:
        return 0
    return sum(1 for m in _WORD.finditer(text) if any(s < m.end() and m.start() < e for s, e in spans))


@dataclass(frozen=True, slots=True)
class _Run:
    """One configuration of the pipeline: the engine, the identifier pass, and the policy's other fields."""

    engine: Engine
    analyzer: Analyzer | None
    model: bool
    policy: Mapping[str, object]

    def sanitize(self, doc: EvalDocument, alpha: float, **extra: object) -> SanitizeResult:
        entities = (doc.entity,) if self.model else ()
        policy = SanitizePolicy(entities=entities, alpha=alpha, **{**self.policy, **extra})  # type: ignore[arg-type]
        return sanitize_text(doc.text, policy, engine=self.engine, identifiers=self.analyzer)

    def utility(self, text: str, result: SanitizeResult) -> float:
        """Eq. 8 over the whole pipeline: a term an identifier replaced keeps nothing of its IC.

        The engine's own utility is measured on the text after the identifier pass; the terms that pass
        replaced are lost on top of it. With no identifier decision this is the engine's figure.
        """
        spans = [s for d in result.decisions if d.kind is not None for s in d.spans]
        if not spans:
            return result.utility.preservation
        _tokens, occs = self.engine.terms_of(text)
        before = sum(self.engine.ic(o.key) for o in occs)
        lost = sum(self.engine.ic(o.key) for o in occs if any(a < o.end and o.start < b for a, b in spans))
        lost += result.utility.original - result.utility.sanitized
        return 100.0 if before <= 0 else 100.0 * max(0.0, before - lost) / before


def _one(
    run: _Run,
    doc: EvalDocument,
    alpha: float,
    gold_terms: dict[str, set[str]],
    attackers: Mapping[str, Attacker],
    candidates: Sequence[str],
) -> DocResult:
    engine = run.engine
    words = sum(1 for _ in _WORD.finditer(doc.text))
    try:
        sanitized = run.sanitize(doc, alpha)
        redacted = run.sanitize(doc, alpha, mode="redact")
    except UnknownEntityError:
        # Refused: the gateway holds the message; the attacker is shown the original (the worst case).
        rank = _ranks(attackers, doc.text, doc, candidates)
        return DocResult(doc.doc_id, doc.entity, doc.category, alpha, False, {}, {}, 100.0, 100.0, 0, rank, rank,
                         "unknown-entity", words, 0)  # fmt: skip
    failure: str | None = None
    try:
        # The gateway's own last check, on the text a plain-text message would carry.
        check_output(sanitized.text.encode(), "text", engine=engine, results=[sanitized], name=doc.doc_id,
                     limits=DEFAULT_LIMITS)  # fmt: skip
    except ResidualRiskError:
        failure = "residual-risk"
    spans = hidden_spans(doc.text, sanitized.decisions)
    # An identifier's value is not one of K's terms: count the terms it covers, as the gold counts masked ones.
    ids = [s for d in sanitized.decisions if d.kind is not None for s in d.spans]
    _tokens, occs = engine.terms_of(doc.text)
    flagged = {d.term for d in sanitized.decisions if d.kind is None}
    flagged |= {o.key for o in occs if any(a < o.end and o.start < b for a, b in ids)}
    token = {a.annotator: token_scores(a.tokens, a.masked, spans) for a in doc.annotations}
    term = {a: term_scores(flagged, gold) for a, gold in gold_terms.items()}
    # A held message is counted as if the original had been read (the worst case).
    shown = doc.text if failure else sanitized.text
    return DocResult(doc.doc_id, doc.entity, doc.category, alpha, True, token, term,
                     run.utility(doc.text, redacted), run.utility(doc.text, sanitized), len(sanitized.decisions),
                     _ranks(attackers, shown, doc, candidates), _ranks(attackers, redacted.text, doc, candidates),
                     failure, words, redacted_words(doc.text, sanitized),
                     any(e.warning for e in sanitized.entities))  # fmt: skip
