"""The changed path's shortcuts (issue 16): each gives exactly what the work it saves would give."""

from __future__ import annotations

from typing import Any

import pytest

from extractors.pipeline import process
from gateway.model.engine import Engine
from gateway.model.memory import disclosed_terms
from gateway.model.records import SanitizePolicy
from gateway.model.terms import extract_terms

HIV = SanitizePolicy(entities=("HIV",), alpha=1.5, evidence_budget=0)
MAIL = (
    b"From: a@example.org\r\nTo: b@example.org\r\nSubject: the meeting\r\n\r\n"
    b"The garden budget was agreed.\r\nHer HIV test came back, and the clinic called.\r\nSee you on Monday.\r\n"
)


def test_the_check_and_the_memory_read_the_last_rounds_terms_without_tokenizing_the_output(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gateway.model.engine as engine_module

    calls: list[str] = []

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(text)
        return extract_terms(text, *args, **kwargs)

    monkeypatch.setattr(engine_module, "extract_terms", counting)
    engine.forget_texts()
    outcome = process(MAIL, engine=engine, policies=[HIV], name="m", kind="mail")
    assert outcome.changed
    final = outcome.results[-1].text
    assert "HIV" not in final
    read = disclosed_terms(engine, final, HIV)
    assert final not in calls  # the output was read line by line by the last round, and that reading reused
    assert len([c for c in calls if "\n" in c]) == 1  # the one whole reading: the original text's
    monkeypatch.undo()
    engine.forget_texts()
    assert read == disclosed_terms(engine, final, HIV)  # what a fresh reading of the output gives


def test_derived_forms_kept_across_texts_are_what_a_fresh_judgement_gives(engine: Engine) -> None:
    entities = engine.entities_of(HIV)
    names = {k: e for e in entities for k in e.keys}
    words = [("hivpositive", "HIVpositive"), ("aids-like", "AIDS-like"), ("garden", "garden"), ("hiv1", "HIV1")]
    first = [engine.detector.derived(k, s, 0, names, entities, HIV.alpha) for k, s in words]
    again = [engine.detector.derived(k, s, 0, names, entities, HIV.alpha) for k, s in words]
    fresh = [engine.detector._derive(k, s, 0, names, entities, HIV.alpha) for k, s in words]
    assert first == again == fresh
    assert first[0] is not None and first[2] is None  # a glued name derives from c; a plain word does not
    other = SanitizePolicy(entities=("HIV",), alpha=3.0, evidence_budget=0)
    assert engine.detector.derived("hivpositive", "HIVpositive", 0, names, entities, other.alpha) == (
        engine.detector._derive("hivpositive", "HIVpositive", 0, names, entities, other.alpha)
    )  # kept per alpha, not across


TEXT = (
    "The clinic reviewed the treatment plan and the patient records.\n"
    "The garden budget was agreed at the meeting on Monday.\n"
    "The nurse checked the blood test results with the doctor."
)


GROUPS = SanitizePolicy(entities=("HIV",), alpha=1.5, evidence_budget=0, group_floor=0.0)  # every term a member


def _round_state(engine: Engine, memo: Any, risky: dict[str, Any], safe: dict[str, Any]) -> Any:
    from gateway.model.detection import RoundState

    entities = engine.entities_of(GROUPS)
    tokens, occs = engine.terms_of(TEXT, entities, GROUPS)
    by_key: dict[str, list[Any]] = {}
    for o in occs:
        by_key.setdefault(o.key, []).append(o)
    return RoundState(TEXT, by_key, risky, safe, tokens, {}, entities, GROUPS, set(), memo=memo)


def test_a_unit_found_plain_is_judged_again_once_one_of_its_keys_is_risky(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gateway.model.generalization import Risky
    from gateway.model.incremental import GroupMemo

    policy = GROUPS
    entities = engine.entities_of(policy)
    memo = GroupMemo()
    first = _round_state(engine, memo, {}, {})
    risky, safe = engine.detector.classify(first.by_key, first.tokens, entities, policy, ())
    assert not risky and len(safe) > 6
    first.safe = dict(safe)
    engine.detector.groups(first)
    assert not first.risky and len(memo.plain) >= 3  # every sentence's members, all safe, formed no risky group

    visited: list[tuple[str, ...]] = []
    members = engine.detector._group_members

    def spy(keys: Any, *args: Any, **kwargs: Any) -> Any:
        visited.append(tuple(keys))
        return members(keys, *args, **kwargs)

    monkeypatch.setattr(engine.detector, "_group_members", spy)
    again = _round_state(engine, memo, {}, dict(safe))
    engine.detector.groups(again)
    assert visited == []  # nothing changed: no unit is built again

    target = "nurse"
    assert target in safe
    later = dict(safe)
    verdict = later.pop(target)
    changed = _round_state(engine, memo, {target: Risky(target, "group", verdict, redacted=True)}, later)
    engine.detector.groups(changed)
    assert visited and all(target in keys for keys in visited)  # the units holding it, and only those
    fresh = _round_state(engine, GroupMemo(), {target: Risky(target, "group", verdict, redacted=True)}, dict(later))
    engine.detector.groups(fresh)
    assert changed.risky.keys() == fresh.risky.keys()


def test_classifications_kept_across_texts_and_policies_are_what_a_fresh_detector_finds(engine: Engine) -> None:
    from archive import archive_texts

    from gateway.model.detection import Detector

    texts = [*archive_texts(12, chars=3000), "Her HIV test came back; AIDS-like symptoms, HIVpositive."]
    strict = SanitizePolicy(entities=("HIV",), alpha=1.0, evidence_budget=0)
    lax = SanitizePolicy(entities=("HIV",), alpha=3.0, evidence_budget=0)
    found: dict[tuple[int, float], tuple[Any, Any]] = {}
    for i, text in enumerate(texts + texts[::-1]):  # every text twice, each policy after the other's
        for policy in (strict, lax) if i % 2 else (lax, strict):
            entities = engine.entities_of(policy)
            tokens, occs = engine.terms_of(text, entities, policy)
            by_key: dict[str, list[Any]] = {}
            for o in occs:
                by_key.setdefault(o.key, []).append(o)
            kept = engine.detector.classify(by_key, tokens, entities, policy, ())
            fresh = Detector(engine.measure, engine.generalizer, engine.key).classify(
                by_key, tokens, entities, policy, ()
            )
            assert {k: (r.reason, r.verdict) for k, r in kept[0].items()} == {
                k: (r.reason, r.verdict) for k, r in fresh[0].items()
            }
            assert kept[1] == fresh[1]
            found[texts.index(text), policy.alpha] = ({k: r.reason for k, r in kept[0].items()}, kept[1])
    assert found[len(texts) - 1, 1.0][0] != found[len(texts) - 1, 3.0][0] or (
        found[len(texts) - 1, 1.0][1] != found[len(texts) - 1, 3.0][1]
    )  # the two policies do differ on the last text: kept per alpha, not across
