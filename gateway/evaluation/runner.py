"""One evaluation run: every document at every α, sanitized and redacted, scored against gold and attacked."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gateway.errors import UnknownEntityError
from gateway.evaluation.attacker import EmbeddingAttacker, naive_removal
from gateway.evaluation.datasets import EvalDocument
from gateway.evaluation.metrics import NO_SCORES, MeanScores, Scores, mean_scores, rank_of, term_scores, token_scores
from gateway.model.engine import Engine
from gateway.model.records import SanitizePolicy


@dataclass(frozen=True, slots=True)
class DocResult:
    doc_id: str
    entity: str
    category: str
    alpha: float
    known: bool  # False: K does not know the entity; nothing was sanitized
    token: dict[str, Scores]  # by annotator
    term: dict[str, Scores]
    utility_redaction: float  # eq. 8, percent
    utility_sanitization: float
    decisions: int
    rank_sanitized: int | None = None
    rank_redacted: int | None = None


@dataclass(frozen=True, slots=True)
class Baseline:
    """The attacker before anything is sanitized, and after a naive removal of the entity's name."""

    rank_original: int
    rank_naive: int


@dataclass(slots=True)
class Report:
    dataset: str
    alphas: tuple[float, ...]
    candidates: tuple[str, ...]
    annotators: tuple[str, ...]
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
        return mean_scores([self.summed(alpha, level, a) for a in self.annotators])

    def utility(self, alpha: float, mode: str) -> float:
        rows = self.at(alpha, known_only=False)
        return sum(getattr(r, f"utility_{mode}") for r in rows) / len(rows) if rows else 100.0

    def attack(self, alpha: float | None, stage: str) -> tuple[float, float] | None:
        """(mean rank, share ranked first in percent) of the true entity at one stage."""
        if stage in ("original", "naive"):
            ranks = [getattr(b, f"rank_{stage}") for b in self.baselines.values()]
        else:
            ranks = [getattr(r, f"rank_{stage}") for r in self.at(alpha or 0.0, known_only=False)]
            ranks = [r for r in ranks if r is not None]
        if not ranks:
            return None
        return sum(ranks) / len(ranks), 100.0 * sum(1 for r in ranks if r == 1) / len(ranks)


def evaluate(
    engine: Engine,
    docs: Sequence[EvalDocument],
    alphas: Sequence[float],
    *,
    dataset: str,
    attacker: EmbeddingAttacker | None = None,
    progress: Callable[[int], None] = lambda _n: None,
    **policy: object,
) -> Report:
    candidates = tuple(dict.fromkeys(d.entity for d in docs))
    annotators = tuple(dict.fromkeys(a.annotator for d in docs for a in d.annotations))
    report = Report(dataset, tuple(alphas), candidates, annotators)
    for doc in docs:
        if attacker is not None:
            report.baselines[doc.doc_id] = Baseline(
                rank_of(attacker.scores(doc.text, candidates), doc.entity),
                rank_of(attacker.scores(naive_removal(doc.text, doc.entity), candidates), doc.entity),
            )
        gold_terms: dict[str, set[str]] = {}
        if doc.annotations:
            _tokens, occs = engine.terms_of(doc.text)
            for ann in doc.annotations:
                masked = [span for span, m in zip(ann.tokens, ann.masked, strict=True) if m]
                gold_terms[ann.annotator] = {o.key for o in occs if any(a < o.end and o.start < b for a, b in masked)}
        for alpha in alphas:
            report.results.append(_one(engine, doc, alpha, gold_terms, attacker, candidates, policy))
            progress(1)
    return report


def _one(
    engine: Engine,
    doc: EvalDocument,
    alpha: float,
    gold_terms: dict[str, set[str]],
    attacker: EmbeddingAttacker | None,
    candidates: Sequence[str],
    policy: dict[str, object],
) -> DocResult:
    try:
        sanitized = engine.sanitize(doc.text, SanitizePolicy(entities=(doc.entity,), alpha=alpha, **policy))  # type: ignore[arg-type]
        redacted = engine.sanitize(doc.text, SanitizePolicy(entities=(doc.entity,), alpha=alpha, mode="redact",
                                                            **policy))  # type: ignore[arg-type]  # fmt: skip
    except UnknownEntityError:
        # Nothing is sanitized: the attacker reads the original.
        rank = rank_of(attacker.scores(doc.text, candidates), doc.entity) if attacker is not None else None
        return DocResult(doc.doc_id, doc.entity, doc.category, alpha, False, {}, {}, 100.0, 100.0, 0, rank, rank)
    spans = [s for d in sanitized.decisions for s in d.spans]
    flagged = {d.term for d in sanitized.decisions}
    token = {a.annotator: token_scores(a.tokens, a.masked, spans) for a in doc.annotations}
    term = {a: term_scores(flagged, gold) for a, gold in gold_terms.items()}
    ranks: tuple[int | None, int | None] = (None, None)
    if attacker is not None:
        ranks = (rank_of(attacker.scores(sanitized.text, candidates), doc.entity),
                 rank_of(attacker.scores(redacted.text, candidates), doc.entity))  # fmt: skip
    return DocResult(doc.doc_id, doc.entity, doc.category, alpha, True, token, term,
                     redacted.utility.preservation, sanitized.utility.preservation, len(sanitized.decisions),
                     *ranks)  # fmt: skip
