"""The evidence's reuse across a text's rounds (gateway/model/evidence.py) gives what a fresh settle gives.

Reuse: one text's clues kept over its rounds, and a fresh term's failed lowering not redone for the same c in
the same round. "Fresh" here turns both off (a new clue table for every settle, no failure remembered); each
test records the risky terms every settle leaves (term, replacement, steps), not only the final text.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from archive import archive_texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.model import evidence
from gateway.model.engine import Engine
from gateway.model.generalization import Risky
from gateway.model.records import SanitizePolicy, SanitizeResult

MEDICAL = SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"), alpha=1.5)
CORPUS = Path(__file__).resolve().parents[1].parent / "shared/corpora/wikipedia-20k.jsonl.xz"
# Weak clues of HIV in several paragraphs (test_evidence.py's), repeated so that a round meets them again.
CLUES = "The virus test came back positive last week."
MORE = "The clinic started antiretroviral treatment after the blood test; the patient's immune count fell."

Snapshot = list[tuple[str, str | None, int, tuple[str, ...]]]


def _snapshot(risky: dict[str, Risky]) -> Snapshot:
    return sorted(
        (k, None if r.current is None else r.current.term, r.position, tuple(s.term for s in r.steps))
        for k, r in risky.items()
    )


@contextmanager
def _recorded(engine: Engine, monkeypatch: pytest.MonkeyPatch, *, fresh: bool) -> Iterator[list[Snapshot]]:
    seen: list[Snapshot] = []
    acc = engine.evidence
    settle = type(acc).settle

    def recording(self: evidence.Accumulator, *args: Any, **kwargs: Any) -> None:
        settle(self, *args, **kwargs)
        seen.append(_snapshot(args[2]))

    with monkeypatch.context() as m:
        m.setattr(type(acc), "settle", recording)
        if fresh:
            m.setattr(type(acc), "_clues_for", lambda self, scope: {})
            m.setattr(evidence._Failures, "known", lambda self, key, c: False)
        yield seen


def _both(engine: Engine, monkeypatch: pytest.MonkeyPatch, text: str, policy: SanitizePolicy) -> None:
    results: list[tuple[SanitizeResult, list[Snapshot]]] = []
    for fresh in (True, False, True):
        with _recorded(engine, monkeypatch, fresh=fresh) as seen:
            results.append((engine.sanitize(text, policy), seen))
    (a, sa), (b, sb), (c, sc) = results
    assert sb == sa == sc
    assert (b.text, b.decisions, b.rounds, b.utility, b.edits) == (a.text, a.decisions, a.rounds, a.utility, a.edits)
    assert (c.text, c.decisions) == (a.text, a.decisions)


def test_clues_are_kept_across_rounds(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later round asks K's clues only of the terms the rounds before it had not met."""
    asked: list[frozenset[str]] = []
    clue = evidence.Accumulator.clue

    def counting(self: evidence.Accumulator, keys: frozenset[str], *args: Any) -> tuple[float, ...]:
        asked.append(keys)
        return clue(self, keys, *args)

    monkeypatch.setattr(evidence.Accumulator, "clue", counting)
    text = "\n\n".join([CLUES, MORE] * 4)
    r = engine.sanitize(text, replace(MEDICAL, evidence_budget=1.0))
    assert r.decisions and r.rounds >= 2
    assert asked and len(asked) == len(set(asked))


def test_repeated_clues_equal_fresh(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n\n".join([CLUES, MORE, "Nothing of note happened on Tuesday."] * 3)
    for budget in (1.0, 2.0):
        _both(engine, monkeypatch, text, replace(MEDICAL, evidence_budget=budget))


def test_archive_texts_equal_fresh(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    for text in archive_texts(25, chars=6000):
        _both(engine, monkeypatch, text, MEDICAL)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from([CLUES, MORE, "She said the results were fine.", "Blood, virus, needle."]), max_size=6),
    st.integers(min_value=0, max_value=5),
    st.sampled_from([1.0, 1.5, 3.0]),
)
def test_mixed_texts_equal_fresh(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, parts: list[str], n: int, alpha: float
) -> None:
    mail = archive_texts(6, chars=1500)[n]
    text = "\n\n".join([mail, *parts]).strip()
    _both(engine, monkeypatch, text, replace(MEDICAL, alpha=alpha, evidence_budget=1.0))


@pytest.mark.skipif(not CORPUS.exists(), reason="the Wikipedia corpus is not here")
def test_sensitive_article_rounds_equal_fresh(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 7,000-word HIV/AIDS article (bench_presidio.py): six rounds, every settle's terms equal."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    try:
        from bench_presidio import article_text
    finally:
        sys.path.pop(0)
    text = article_text("HIVAIDS")
    _both(engine, monkeypatch, text, MEDICAL)
    # The article's rounds do skip failed lowerings (its later rounds fail on "people" in paragraph after paragraph).
    skipped: list[tuple[str, int]] = []
    known = evidence._Failures.known

    def counting(self: evidence._Failures, key: str, c: int) -> bool:
        found = known(self, key, c)
        if found:
            skipped.append((key, c))
        return found

    monkeypatch.setattr(evidence._Failures, "known", counting)
    engine.sanitize(text, MEDICAL)
    assert len(skipped) > 100


def test_a_failure_is_forgotten_when_forbidden_grows_or_the_walk_stopped_early() -> None:
    forbidden: set[str] = {"hiv"}
    failed = evidence._Failures(forbidden)
    assert not failed.known("people", 0)
    failed.note("people", 0, walked=True)
    failed.note("cause", 0, walked=False)  # its walk may have stopped at a generalization before the chain's end
    assert failed.known("people", 0) and not failed.known("people", 1) and not failed.known("cause", 0)
    forbidden.add("virus")  # a lowering succeeded: what another term's chain may take has changed
    assert not failed.known("people", 0)
    failed.note("people", 0, walked=True)
    assert failed.known("people", 0)
