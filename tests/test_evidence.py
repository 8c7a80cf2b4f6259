"""Weak clues add up: a paragraph's summed evidence, and a stream's (gateway/model/evidence.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from extractors.pipeline import DEFAULT_LIMITS, check_output
from gateway.config import parse_config
from gateway.errors import ConfigError
from gateway.model.engine import Engine
from gateway.model.memory import (
    OPENING,
    Disclosure,
    Memory,
    disclosed_terms,
    named_entities,
    named_marker,
    thread_marker,
)
from gateway.model.records import SanitizePolicy

HIV = SanitizePolicy(entities=("HIV",), alpha=1.5, evidence_budget=1.0)  # the paper's own line; the default is 2
# No term of it reaches the line alone, and no pair or triple does; summed, they do.
CLUES = "The virus test came back positive last week."
PLAIN = "The weather was fine and the meeting ended early."


def _clue(engine: Engine, word: str, policy: SanitizePolicy = HIV) -> float:
    return engine.evidence.clue(frozenset({engine.key(word)}), engine.entities_of(policy), policy)[0]


def test_clues_that_add_up_over_a_paragraph_are_generalized(engine: Engine) -> None:
    term_by_term = engine.sanitize(CLUES, replace(HIV, evidence_budget=0))
    assert not term_by_term.decisions
    r = engine.sanitize(CLUES, HIV)
    (d,) = r.decisions
    # The strongest clue goes first, to a generalization; the decision carries the sum and the line.
    assert d.term == "virus" and d.reason == "evidence" and d.action == "generalize"
    assert d.replacement and d.replacement in r.text and "virus" not in r.text
    assert d.pmi is not None and d.threshold is not None and d.pmi >= d.threshold
    (entity,) = engine.entities_of(HIV)
    assert d.threshold == pytest.approx(HIV.evidence_budget * entity.ic / HIV.alpha)
    assert d.group is not None and d.group[0] == "virus" and {"test", "positive"} <= set(d.group)
    # The clues summed were each below the line alone, and above it together.
    clues = [_clue(engine, w) for w in d.group]
    assert max(clues) < entity.ic / HIV.alpha <= sum(clues)


def test_the_output_is_below_the_budget_a_fixpoint_and_passes_the_last_check(engine: Engine) -> None:
    text = (
        "She felt tired for weeks. The blood test at the clinic found a virus; the doctor spoke of the "
        "immune system, of the risk of transmission and of a long treatment with daily pills.\n" + CLUES
    )
    for budget in (0.5, 1.0, 2.0):
        policy = replace(HIV, evidence_budget=budget)
        r = engine.sanitize(text, policy)
        check_output(r.text.encode(), "text", engine=engine, results=[r], name="t", limits=DEFAULT_LIMITS)
        assert not engine.sanitize(r.text, policy).decisions
        # The evidence never redacts: a clue is safe alone.
        assert all(d.action == "generalize" for d in r.decisions if d.reason.endswith("evidence"))


def test_a_larger_budget_changes_less_and_zero_is_the_paper(engine: Engine) -> None:
    text = "The blood test found a virus; the doctor spoke of the risk of transmission and of a long treatment."
    changed = [
        {d.term for d in engine.sanitize(text, replace(HIV, evidence_budget=b)).decisions} for b in (0.5, 1.0, 4.0)
    ]
    assert changed[0] >= changed[1] >= changed[2]
    assert changed[0] != changed[2]
    off = engine.sanitize(text, replace(HIV, evidence_budget=0))
    assert not any(d.reason.endswith("evidence") for d in off.decisions)


def test_plain_text_has_no_evidence(engine: Engine) -> None:
    assert engine.sanitize(PLAIN, HIV).text == PLAIN
    assert engine.sanitize(PLAIN, HIV, disclosed=("virus", "transmission", "immune")).text == PLAIN


def test_what_a_stream_disclosed_counts_towards_the_next_message(engine: Engine) -> None:
    # Term by term and groups off: only the summed evidence, so what the memory adds is plain to see.
    policy = SanitizePolicy(entities=("HIV",), alpha=1.5, max_group=1, evidence_budget=2.0, stream_evidence=True)
    text = "Her test came back positive, and the clinic called about the treatment."
    assert not engine.sanitize(text, policy).decisions
    # Off by default: the remembered clues then leave the paragraph's sum alone.
    assert not engine.sanitize(text, replace(policy, stream_evidence=False), disclosed=("virus", "immune")).decisions
    r = engine.sanitize(text, policy, disclosed=("virus", "immune"))
    assert r.decisions
    for d in r.decisions:
        assert d.reason == "stream-evidence" and set(d.earlier) == {"virus", "immune"} and d.action == "generalize"
    assert "virus" not in r.text  # the memory's terms are never written: they are not in this text


def test_what_a_thread_about_c_let_through_counts_towards_its_next_message(engine: Engine) -> None:
    # Term by term, groups off, the named budget as the usual one: only the thread's remembered clues can tip it.
    policy = SanitizePolicy(entities=("HIV",), alpha=1.5, max_group=1, evidence_budget=2.0, named_budget=0)
    text = "Her test came back positive, and the clinic called about the treatment."
    remembered = ("virus", "immune")
    thread = tuple(thread_marker(k) for k in remembered)
    # Alone, beside a thread that named c, or beside the same terms from the stream's other threads: below the line.
    for disclosed in ((), (named_marker("HIV"),), (named_marker("HIV"), *remembered), (*remembered, *thread)):
        assert not engine.sanitize(text, policy, disclosed=disclosed).decisions
    # The thread named c and let "virus" and "immune" through: its recipient has read them, as about c.
    for judged in (policy, replace(policy, second_order=False)):  # the engine's path, and the clean text's
        r = engine.sanitize(text, judged, disclosed=(named_marker("HIV"), *remembered, *thread))
        assert r.decisions and "virus" not in r.text
        for d in r.decisions:
            assert d.reason == "stream-evidence" and d.action == "generalize"
            # The audit names the thread's messages that let them through (Memory.sources, by the thread's marker).
            assert set(thread) <= set(d.earlier)
    # On a list, another thread may have let "virus" through first: the decision names this thread's message.
    rows = [Disclosure(message_id=m, at=float(i), policy="p", sender="s", recipient="r", terms=remembered, thread=t)
            for i, (m, t) in enumerate((("m1", "<other>"), ("m2", "<this>")))]  # fmt: skip
    assert Memory.of(rows, thread="<this>").sources(d.earlier) == ("m2",)
    # A group's remembered member is named by its key alone: the thread's message too, when the thread said it.
    assert Memory.of(rows, thread="<this>").sources(remembered) == ("m2",)
    assert Memory.of(rows, thread="<elsewhere>").sources(remembered) == ("m1",)


def test_a_thread_s_memory_fills_at_most_its_share_of_a_later_paragraph_s_budget(engine: Engine) -> None:
    # The thread named c and let through three clues that alone are over the named budget (about 2.8 of it).
    policy = SanitizePolicy(
        entities=("HIV",), alpha=1.5, max_group=1, evidence_budget=2.0, named_budget=1.0, memory_share=0
    )
    text = "Her test came back positive, and the clinic called about the treatment."
    remembered = ("virus", "immune", "infection")
    disclosed = (named_marker("HIV"), *remembered, *(thread_marker(k) for k in remembered))
    assert sum(_clue(engine, w) for w in remembered) > _line(engine)
    unbounded = engine.sanitize(text, policy, disclosed=disclosed)
    # No lowering could bring the paragraph below the budget: every clue in it was lowered, "test" (0.23) too.
    assert {d.term for d in unbounded.decisions} == {"test", "positive", "clinic", "treatment"}
    # The memory fills half of the budget: the paragraph lowers its strongest clues until it adds less than the rest.
    shared = engine.sanitize(text, replace(policy, memory_share=0.5), disclosed=disclosed)
    assert {d.term for d in shared.decisions} == {"positive", "clinic", "treatment"} and "Her test" in shared.text
    assert all(d.reason == "stream-evidence" for d in shared.decisions)
    # A share of the whole budget (or more) leaves the paragraph nothing: as unbounded. Alone, nothing is lowered.
    assert engine.sanitize(text, replace(policy, memory_share=1.0), disclosed=disclosed).text == unbounded.text
    assert not engine.sanitize(text, replace(policy, memory_share=0.5)).decisions
    with pytest.raises(ConfigError):
        SanitizePolicy(entities=("HIV",), memory_share=-0.5)
    cfg = parse_config('[policies.p]\nentities = ["HIV"]\nmemory_share = 0.25\n', source="t.toml", base=Path())
    assert cfg.policies["p"].sanitize.memory_share == 0.25
    cfg = parse_config('[policies.p]\nentities = ["HIV"]\n', source="t.toml", base=Path())
    assert cfg.policies["p"].sanitize.memory_share == SanitizePolicy(entities=("HIV",)).memory_share == 0.375


def test_a_clue_another_paragraph_s_lowering_made_needless_is_written_back(engine: Engine) -> None:
    text = "The treatment began with an injection.\nThe injection eased the symptoms."
    clue = {w: _clue(engine, w) for w in ("treatment", "injection", "symptoms")}
    # Each line is over the budget (the line): "treatment" is its first line's strongest clue, "injection" its second's.
    assert clue["treatment"] > clue["injection"] > clue["symptoms"]
    assert min(clue["treatment"] + clue["injection"], clue["injection"] + clue["symptoms"]) >= _line(engine)
    r = engine.sanitize(text, HIV)
    # "treatment" was lowered for the first line; once the second lowered "injection", the first line is below the
    # budget with "treatment" as written: it is written back, and one word lowered does for both lines.
    assert [(d.term, d.reason) for d in r.decisions] == [("injection", "evidence")]
    assert r.text.startswith("The treatment began") and "injection" not in r.text
    assert not engine.sanitize(r.text, HIV).decisions  # still a fixpoint: every line below the budget
    check_output(r.text.encode(), "text", engine=engine, results=[r], name="t", limits=DEFAULT_LIMITS)


def test_the_evidence_policy_is_validated_and_configured() -> None:
    with pytest.raises(ConfigError):
        SanitizePolicy(entities=("HIV",), evidence_budget=-1)
    with pytest.raises(ConfigError):
        SanitizePolicy(entities=("HIV",), evidence_floor=0)
    with pytest.raises(ConfigError):
        SanitizePolicy(entities=("HIV",), evidence_budget=float("nan"))
    text = '[policies.p]\nentities = ["HIV"]\nevidence_budget = 1.5\nevidence_floor = 0.3\n'
    cfg = parse_config(text, source="t.toml", base=Path())
    assert (cfg.policies["p"].sanitize.evidence_budget, cfg.policies["p"].sanitize.evidence_floor) == (1.5, 0.3)


def test_only_the_riskiest_remembered_clues_count(engine: Engine) -> None:
    # A busy stream remembers hundreds of everyday words; summed without a bound they would reach any budget.
    # (no memory_share: bounded, both sums below would be the share of the budget)
    policy = SanitizePolicy(
        entities=("HIV",),
        alpha=1.5,
        max_group=1,
        evidence_budget=2.0,
        memory_candidates=2,
        stream_evidence=True,
        memory_share=0,
    )
    text = "Her test came back positive, and the clinic called about the treatment."
    remembered = ("virus", "immune", "blood", "infection", "transmission", "patient", "drug", "sexual")
    ranked = sorted(
        (w for w in remembered if _clue(engine, w, policy) > 0), key=lambda w: (-_clue(engine, w, policy), w)
    )
    r = engine.sanitize(text, policy, disclosed=remembered)
    assert r.text == engine.sanitize(text, policy, disclosed=remembered[::-1]).text  # not the memory's order
    earlier = {e for d in r.decisions if d.reason == "stream-evidence" for e in d.earlier}
    assert earlier and earlier <= set(ranked[:2])
    unbounded = engine.sanitize(text, replace(policy, memory_candidates=len(remembered)), disclosed=remembered)
    # A stream-evidence decision records the paragraph's sum as its PMI: every remembered clue adds to it.
    assert max(d.pmi for d in unbounded.decisions) > max(d.pmi for d in r.decisions)


def test_a_text_that_names_c_or_whose_thread_did_has_the_named_budget(engine: Engine) -> None:
    # A lax budget for ordinary mail; the paper's line where the text (or its thread) is about c.
    policy = replace(HIV, evidence_budget=4.0, named_budget=1.0)
    assert not engine.sanitize(CLUES, policy).decisions
    named = engine.sanitize("Her HIV result came.\n" + CLUES, policy)
    assert any(d.reason == "evidence" for d in named.decisions)
    lax = engine.sanitize("Her HIV result came.\n" + CLUES, replace(policy, named_budget=0))
    assert not any(d.reason == "evidence" for d in lax.decisions)
    # An earlier message of the thread named c: the memory says so, and this text is judged as about c.
    r = engine.sanitize(CLUES, policy, disclosed=(named_marker("HIV"),))
    assert [d.term for d in r.decisions] and all(d.reason == "stream-evidence" for d in r.decisions)
    assert engine.sanitize(CLUES, replace(policy, named_budget=0), disclosed=(named_marker("HIV"),)).text == CLUES
    # The marker is not a term: it joins no group and is never written.
    assert "named" not in r.text


def test_the_memory_keeps_that_c_was_named_for_its_thread_only(engine: Engine) -> None:
    policy = replace(HIV, evidence_budget=4.0, named_budget=1.0)
    result = engine.sanitize("Her HIV result came back.", policy)
    assert named_entities(result) == {"HIV"}
    terms = disclosed_terms(engine, result.text, policy, named=named_entities(result))
    assert named_marker("HIV") in terms
    said = Disclosure(message_id="m1", at=0.0, policy="p", sender="a@x", recipient="b@y", terms=terms, thread="<t1>")
    assert named_marker("HIV") in Memory.of((said,), thread="<t1>").terms
    # Another thread of the same stream (a list's other messages) keeps the terms, not that c was named.
    other = Memory.of((said,), thread="<t2>").terms
    assert named_marker("HIV") not in other and set(terms) - {named_marker("HIV")} <= other
    with pytest.raises(ConfigError):
        SanitizePolicy(entities=("HIV",), named_budget=-1)


# A paragraph about the Reformation: its names point at Protestantism, and what WordNet has above them ("town",
# "assembly") points at it as much, so lowering them along their chains leaves it over the named budget.
REFORMATION = (
    "began in Wittenberg, where Martin Luther taught. The Diet of Worms and the Disputation of Heidelberg "
    "followed; Melanchthon and Bugenhagen preached in Saxony."
)


def test_a_name_nothing_lowers_is_written_as_a_name_in_a_text_about_c(engine: Engine) -> None:
    policy = SanitizePolicy(entities=("Protestantism",), alpha=2.0)
    r = engine.sanitize("Protestantism " + REFORMATION, policy)
    ents = engine.entities_of(policy)
    # As the text's last round read it: K's counts, or its second order through the text's signature of c.
    strength = engine.evidence.clue(frozenset({"wittenberg"}), ents, policy, frozenset({0}))[0]
    by = {d.surface: d for d in r.decisions}
    wittenberg = by["Wittenberg"]
    assert wittenberg.reason == "evidence" and wittenberg.action == "generalize"
    assert wittenberg.replacement == "name" and wittenberg.chain[-1].source == "name-kind:NAME"
    assert "Wittenberg" not in r.text and "in a name," in r.text
    # Its clue was strong on its own (half the line at least) and the paragraph's sum over the named budget.
    assert strength >= 0.5 * ents[0].ic / policy.alpha
    assert wittenberg.pmi is not None and wittenberg.threshold is not None and wittenberg.pmi >= wittenberg.threshold
    # The evidence never redacts, this rule neither; the output passes the last check and is a fixpoint.
    assert all(d.action == "generalize" for d in r.decisions if d.reason.endswith("evidence"))
    check_output(r.text.encode(), "text", engine=engine, results=[r], name="t", limits=DEFAULT_LIMITS)
    assert "name" not in {d.replacement for d in engine.sanitize(r.text, policy).decisions}
    # A text that does not name c keeps its ordinary budget: its names stand.
    plain = engine.sanitize("It " + REFORMATION, policy)
    assert "Wittenberg" in plain.text and all(d.replacement != "name" for d in plain.decisions)


def test_a_hyphenated_compound_tells_what_its_parts_do(engine: Engine) -> None:
    policy = SanitizePolicy(entities=("HIV",), alpha=2.0)
    # K counts "drug-related" apart from "drug"; a reader sees the word "drug" in it.
    assert _clue(engine, "drug-related", policy) == pytest.approx(_clue(engine, "drug", policy))
    assert _clue(engine, "drug", policy) > 0
    # Its own count still counts: the larger of the two, never less than K says of the compound.
    (own,) = engine.evidence.pmis(frozenset({"well-known"}), engine.entities_of(policy))
    assert _clue(engine, "well-known", policy) == pytest.approx(max(own, _clue(engine, "well", policy)))


def test_a_clue_the_evidence_lowered_may_still_be_written_for_another_term(engine: Engine) -> None:
    policy = SanitizePolicy(entities=("substance abuse",), alpha=2.0)
    text = (
        "Several screening questionnaires have been validated for use with adolescents and adults. For substance "
        "misuse in pregnancy, experts recommend tools that take less than ten minutes, are used routinely and "
        "include an educational part, such as a short drinking history."
    )
    r = engine.sanitize(text, policy)
    by = {d.term: d for d in r.decisions}
    # "use" was lowered for its paragraph's sum: safe alone, it is no ban on what "misuse" may become.
    assert by["use"].reason == "evidence" and by["use"].replacement != "use"
    assert by["misuse"].reason == "pmi" and by["misuse"].action == "generalize" and by["misuse"].replacement == "use"
    assert "[REDACTED]" not in r.text and "part use in" in r.text
    assert not by["use"].flags_term and by["misuse"].flags_term
    # The last check reads "use" as the safe word it is, and the output is a fixpoint.
    check_output(r.text.encode(), "text", engine=engine, results=[r], name="t", limits=DEFAULT_LIMITS)
    assert not engine.sanitize(r.text, policy).decisions


def test_terms_written_as_one_generalization_count_once_in_their_paragraph(engine: Engine) -> None:
    policy = SanitizePolicy(entities=("heterosexuality",), alpha=2.0)
    text = (
        "Heterosexual marriage is the rule in most religious traditions; the Metropolitan Community Church, the "
        "United Church of Canada, some Quaker meetings and Reform and Conservative Jewish congregations are "
        "exceptions."
    )
    r = engine.sanitize(text, policy)
    by = {d.term: d for d in r.decisions}
    # Both churches read as "church": a reader finds one word, which tells what it tells once.
    assert by["metropolitan community church"].replacement == by["united church"].replacement == "church"
    assert "the church, the church of Canada" in r.text
    assert "church" not in by  # counted twice, the sum stayed over and a later round lowered it further
    check_output(r.text.encode(), "text", engine=engine, results=[r], name="t", limits=DEFAULT_LIMITS)


# "blood" and "nurse" are clues at the policy's floor (0.2 of the line); "result" (0.18 of it) is one only below.
OPENER = "Her blood sample went to the lab, and the nurse called about the result and the counselling."


def test_a_message_that_opens_a_remembered_thread_counts_weaker_clues(engine: Engine) -> None:
    # 1 turns it off: the opener reads as any message. At the default, 0.15, it counts clues from 0.15 of the line.
    off = replace(HIV, opening_floor=1.0)
    assert engine.sanitize(OPENER, off, disclosed=(OPENING,)) == engine.sanitize(OPENER, off)
    policy = HIV
    assert policy.opening_floor == 0.15
    assert HIV.evidence_floor > _clue(engine, "result", replace(HIV, evidence_floor=0.01)) / _line(engine)
    assert _clue(engine, "result", replace(HIV, evidence_floor=policy.opening_floor)) > 0
    alone = engine.sanitize(OPENER, policy)
    assert [d.term for d in alone.decisions] == ["nurse"] and "blood" in alone.text
    # The memory is on and holds nothing of the thread: its later messages will be lowered to the floor on what this
    # one lets through, so "result" counts here, and the paragraph's sum lowers "blood" too.
    opened = engine.sanitize(OPENER, policy, disclosed=(OPENING,))
    assert {d.term for d in opened.decisions} == {"nurse", "blood"} and "blood" not in opened.text
    assert all(d.reason == "evidence" and not d.earlier for d in opened.decisions)  # no earlier message caused it
    assert opened.text == engine.sanitize(OPENER, replace(HIV, evidence_floor=policy.opening_floor)).text
    assert opened.policy == policy and "opening" not in opened.text  # the marker is no term, and the policy as given
    # A policy whose opening floor is no lower judges the opener as any message.
    assert engine.sanitize(OPENER, replace(policy, opening_floor=0.2), disclosed=(OPENING,)).text == alone.text
    # A later message of the thread has no marker (Memory.judged): the floor it is judged at is the policy's.
    later = engine.sanitize(OPENER, policy, disclosed=(thread_marker("virus"), "virus"))
    assert "result" not in {k for d in later.decisions for k in (d.group or ())}


def test_the_memory_marks_a_message_with_no_earlier_message_of_its_thread_as_opening_it() -> None:
    said = Disclosure(message_id="m1", at=0.0, policy="p", sender="a@x", recipient="b@y", terms=("virus",),
                      thread="<t1>")  # fmt: skip
    assert Memory.of((), thread="<t1>").judged == {OPENING}
    # A list's other thread let "virus" through: the message still opens its own thread.
    assert Memory.of((said,), thread="<t2>").judged == {"virus", OPENING}
    mine = Memory.of((said,), thread="<t1>")
    assert OPENING not in mine.judged and mine.judged == mine.terms
    with pytest.raises(ConfigError, match="opening_floor"):
        SanitizePolicy(entities=("HIV",), opening_floor=0)
    conf = '[policies.p]\nentities = ["HIV"]\nopening_floor = 0.1\n'
    assert parse_config(conf, source="t.toml", base=Path()).policies["p"].sanitize.opening_floor == 0.1
    conf = '[policies.p]\nentities = ["HIV"]\n'
    assert parse_config(conf, source="t.toml", base=Path()).policies["p"].sanitize.opening_floor == 0.15


def _line(engine: Engine) -> float:
    (entity,) = engine.entities_of(HIV)
    return entity.ic / HIV.alpha


def test_the_worker_judges_a_thread_s_first_message_at_the_opening_floor(engine: Engine, tmp_path: Path) -> None:
    from extractors.mail import ContentPolicy
    from gateway.config import PolicyConfig
    from gateway.evaluation.threads import _body, _mail
    from gateway.store.sqlite import SQLiteStore
    from gateway.streams import recall, remember, thread_of
    from gateway.worker import sanitize_message

    def policy(opening_floor: float, days: float = 30.0) -> PolicyConfig:
        sanitize = replace(HIV, opening_floor=opening_floor)
        return PolicyConfig(name="p", content=ContentPolicy(), sanitize=sanitize, stream_memory_days=days)

    store = SQLiteStore(tmp_path / "s.db")
    try:

        def sent(p: PolicyConfig, i: int) -> str:
            data = _mail("s@x", "r@y", "case", OPENER, i, "<t1@x>")
            thread = thread_of(data)
            memory = recall(store, [p], sender="s@x", recipients=["r@y"], thread=thread)
            job = sanitize_message(data, [p], f"m{i}", engine, memory)
            assert job.data is not None
            if i == 0:
                remember(store, message_id="m0", sender="s@x", recipients=["r@y"], thread=thread,
                         disclosed=job.disclosed)  # fmt: skip
            return _body(job.data)

        # The memory off, or the floor no lower: the opener reads as the message alone.
        assert "blood" in sent(policy(0.15, days=0.0), 1) and "blood" in sent(policy(1.0), 1)
        # The memory on, and no earlier message of the thread: "blood" is lowered; the reply (its thread's memory
        # holds the opener) is judged with the thread's clues, not at the opening floor.
        assert "blood" not in sent(policy(0.15), 0)
        reply = thread_of(_mail("s@x", "r@y", "case", OPENER, 1, "<t1@x>"))
        assert OPENING not in recall(store, [policy(0.15)], sender="s@x", recipients=["r@y"], thread=reply)["p"].judged
    finally:
        store.close()
