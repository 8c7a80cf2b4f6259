"""Facts that single c out: ranks and exact quantities in a paragraph that names c (gateway/model/facts.py)."""

from __future__ import annotations

from dataclasses import replace

from extractors.pipeline import DEFAULT_LIMITS, check_output
from gateway.model.detection import paragraph_of
from gateway.model.engine import Engine
from gateway.model.facts import coarse, facts
from gateway.model.records import SanitizePolicy

OHIO = SanitizePolicy(entities=("Ohio",), alpha=2.0)
TEXT = (
    "Ohio is a state in the Midwest. With a population of 11,799,448, it is the seventh-most populous state "
    "and the 34th-largest by area; Columbus had 905,748 people in 2020.\n"
    "Elsewhere, a city of 498,715 is the second-largest in its region."
)


def test_ranks_and_counts_are_coarsened_where_c_is_named(engine: Engine) -> None:
    r = engine.sanitize(TEXT, OHIO)
    first, second = r.text.split("\n")
    assert "Ohio" not in first
    assert "11,799,448" not in first and "about 10,000,000" in first
    assert "seventh" not in first and "one of the most " in first  # "populous" itself may be generalized
    assert "34th" not in first and "one of the largest by area" in first
    assert "about 900,000" in first and "2020" in first  # a year dates, it does not count
    # A paragraph that does not name c keeps its facts: they are not about c.
    assert "of 498,715 is the second-largest in its region." in second
    fact = [d for d in r.decisions if d.reason == "fact"]
    assert {d.surface for d in fact} >= {"11,799,448", "the seventh-", "the 34th-", "905,748"}
    assert all(d.entity == "Ohio" and d.action == "generalize" for d in fact)
    check_output(r.text.encode(), "text", engine=engine, results=[r], name="t", limits=DEFAULT_LIMITS)
    assert not engine.sanitize(r.text, OHIO).decisions
    # The policy can keep them.
    kept = engine.sanitize(TEXT, replace(OHIO, coarsen_facts=False))
    assert "11,799,448" in kept.text and not any(d.reason == "fact" for d in kept.decisions)


def test_coarse_keeps_one_significant_digit_and_leaves_round_numbers() -> None:
    assert coarse("498,715") == "500,000"
    assert coarse("11,799,448") == "10,000,000"
    assert coarse("1,050") == "1,000"
    assert coarse("6.1") == "6"
    assert coarse("1,000") is None and coarse("150") is None


def test_what_is_a_fact() -> None:
    text = "It is the 38th most populous, with 6.1 million people, 1,000 feet up, founded in 1803 (code 12345)."
    found = {f.text: f.replacement for f in facts(text, {0}, paragraph_of(text))}
    assert found == {"the 38th ": "one of the ", "6.1": "about 6"}
    assert not list(facts("Nearly 11.8 million people.", {1}, paragraph_of("Nearly 11.8 million people.")))
    (hedged,) = facts("Nearly 11.8 million people.", {0}, paragraph_of("x"))
    assert hedged.replacement == "10"  # "nearly" already says it is not exact
