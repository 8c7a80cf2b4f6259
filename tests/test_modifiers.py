"""A modifier with nothing above it is left out, not redacted (gateway/model/modifiers.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from extractors.pipeline import DEFAULT_LIMITS, check_output
from gateway.config import parse_config
from gateway.model.engine import Engine
from gateway.model.modifiers import omittable
from gateway.model.records import SanitizePolicy
from gateway.model.rewrite import REDACTION_MARKER

# "cognitive" is an adjective WordNet cannot generalize; denied, it must go.
COGNITIVE = SanitizePolicy(entities=("HIV",), alpha=1.5, deny=frozenset({"cognitive"}), evidence_budget=0)


def _omittable(engine: Engine, text: str, word: str) -> bool:
    tokens, occs = engine.terms_of(text, engine.entities_of(COGNITIVE), COGNITIVE)
    return omittable(tokens, [o for o in occs if o.key == engine.key(word)], engine.taxonomy)


def test_only_a_modifier_before_the_word_it_modifies_can_be_left_out(engine: Engine) -> None:
    assert _omittable(engine, "Her cognitive decline was slow.", "cognitive")
    assert _omittable(engine, "The disease is sexually transmitted in most cases.", "sexually")
    assert not _omittable(engine, "Her decline was cognitive.", "cognitive")  # nothing after it to modify
    assert not _omittable(engine, "Cognitive decline was slow.", "cognitive")  # the sentence's capital would go
    assert not _omittable(engine, "Her cognitive and motor decline.", "cognitive")  # coordinated
    assert not _omittable(engine, "Her cognitive, slow decline.", "cognitive")  # not right before it
    assert not _omittable(engine, "The test of the virus was quick.", "test")  # a noun
    # Every occurrence must allow it: one decision writes the same thing everywhere.
    assert not _omittable(engine, "Her cognitive decline was slow. It was cognitive.", "cognitive")


def test_a_denied_adjective_is_left_out_and_counted_as_lost(engine: Engine) -> None:
    text = "Her cognitive decline was slow, and an elderly man saw her cognitive tests."
    r = engine.sanitize(text, COGNITIVE)
    (d,) = [d for d in r.decisions if d.term == "cognitive"]
    assert d.action == "omit" and d.replacement is None and d.reason == "deny-list"
    assert d.chain and d.chain[-1].source == "omitted" and d.chain[-1].accepted
    assert r.text == "Her decline was slow, and an elderly man saw her tests."
    assert REDACTION_MARKER not in r.text
    # Utility counts the word as lost, as a redaction would be.
    kept = engine.sanitize(text, replace(COGNITIVE, deny=frozenset())).utility
    assert r.utility.sanitized < kept.sanitized == kept.original
    check_output(r.text.encode(), "text", engine=engine, results=[r], name="t", limits=DEFAULT_LIMITS)
    assert not engine.sanitize(r.text, COGNITIVE).decisions


def test_an_article_before_a_left_out_modifier_follows_the_next_word(engine: Engine) -> None:
    r = engine.sanitize("They met a cognitive expert and a cognitive test.", COGNITIVE)
    assert r.text == "They met an expert and a test."


def test_where_it_cannot_be_left_out_it_is_redacted_and_off_means_redacted(engine: Engine) -> None:
    r = engine.sanitize("Cognitive decline was slow.", COGNITIVE)
    assert r.text.startswith(REDACTION_MARKER)
    off = engine.sanitize("Her cognitive decline was slow.", replace(COGNITIVE, omit_modifiers=False))
    assert REDACTION_MARKER in off.text and all(d.action != "omit" for d in off.decisions)


def test_the_config_key() -> None:
    text = '[policies.p]\nentities = ["HIV"]\nomit_modifiers = false\n[policies.q]\nentities = ["HIV"]\n'
    cfg = parse_config(text, source="t.toml", base=Path())
    assert cfg.policies["p"].sanitize.omit_modifiers is False
    assert cfg.policies["q"].sanitize.omit_modifiers is True
