"""Precision, recall and F-measure as the paper defines them (eq. 4-6)."""

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
        return 100.0 * self.true_positives / self.detected if self.detected else 100.0

    @property
    def recall(self) -> float:
        return 100.0 * self.true_positives / self.gold if self.gold else 100.0

    @property
    def f_measure(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other: Scores) -> Scores:
        return Scores(
            self.true_positives + other.true_positives, self.detected + other.detected, self.gold + other.gold
        )


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
