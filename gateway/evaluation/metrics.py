"""The paper's measures: precision, recall and F (eq. 4-6), and ranks (utility, eq. 7-8, is records.Utility).

S is what sanigate flags, H what a human flagged. At token level each token
of the text is in S when a replaced span overlaps it and in H when the
annotator masked it; at term level S and H are sets of distinct terms (keys).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Scores:
    true_positives: int
    detected: int  # |S|
    gold: int  # |H|

    @property
    def precision(self) -> float:
        """Eq. 4: |S ∩ H| / |S|; 100 when nothing was flagged (nothing flagged wrongly)."""
        return 100.0 * self.true_positives / self.detected if self.detected else 100.0

    @property
    def recall(self) -> float:
        """Eq. 5: |S ∩ H| / |H|; 100 when there was nothing to find."""
        return 100.0 * self.true_positives / self.gold if self.gold else 100.0

    @property
    def f_measure(self) -> float:
        """Eq. 6: the harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other: Scores) -> Scores:
        return Scores(
            self.true_positives + other.true_positives, self.detected + other.detected, self.gold + other.gold
        )


NO_SCORES = Scores(0, 0, 0)


def overlaps(span: tuple[int, int], spans: Sequence[tuple[int, int]]) -> bool:
    s, e = span
    return any(a < e and s < b for a, b in spans)


def token_scores(
    tokens: Sequence[tuple[int, int]],
    gold: Sequence[bool],
    detected_spans: Iterable[tuple[int, int]],
) -> Scores:
    """Token-level S vs H: a token is in S when a replaced span overlaps it."""
    spans = sorted(detected_spans)
    detected = [overlaps(t, spans) for t in tokens]
    tp = sum(1 for d, g in zip(detected, gold, strict=True) if d and g)
    return Scores(tp, sum(detected), sum(gold))


def term_scores(detected: Iterable[str], gold: Iterable[str]) -> Scores:
    """Term-level S vs H over distinct terms, as the paper counts them."""
    s, h = set(detected), set(gold)
    return Scores(len(s & h), len(s), len(h))


@dataclass(frozen=True, slots=True)
class MeanScores:
    """The mean over annotators of each measure (a macro average: each annotator counts once)."""

    precision: float
    recall: float
    f_measure: float


def mean_scores(per_annotator: Sequence[Scores]) -> MeanScores:
    if not per_annotator:
        return MeanScores(0.0, 0.0, 0.0)
    n = len(per_annotator)
    return MeanScores(
        sum(s.precision for s in per_annotator) / n,
        sum(s.recall for s in per_annotator) / n,
        sum(s.f_measure for s in per_annotator) / n,
    )


def rank_of(scores: dict[str, float], true: str) -> int:
    """1 + how many candidates score strictly higher than the true one (ties favour the truth)."""
    mine = scores[true]
    return 1 + sum(1 for name, s in scores.items() if name != true and s > mine)
