"""The disclosure memory as a model: disclosed keys join group checks, are never edited, and are named."""

from __future__ import annotations

import itertools
import time
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.config import parse_config
from gateway.errors import ConfigError
from gateway.evaluation.threads import split_thread
from gateway.model.detection import _combinations
from gateway.model.engine import Engine
from gateway.model.memory import (
    Disclosure,
    Memory,
    disclosed_terms,
    named_marker,
    removed,
    removed_marker,
    thread_in,
    thread_marker,
    written,
    wrote_marker,
)
from gateway.model.records import SanitizePolicy
from gateway.streams import cutoffs, header_block, thread_of

# The groups' memory on its own: the evidence a paragraph sums (with the memory too) is tests/test_evidence.py's.
HIV = SanitizePolicy(entities=("HIV",), alpha=1.5, evidence_budget=0)
FIRST = "The patient needs condoms and counselling."
LATER = "The virus test came back positive last week."


def test_a_term_disclosed_earlier_makes_a_later_group_risky(engine: Engine) -> None:
    first = engine.sanitize(FIRST, HIV)
    disclosed = disclosed_terms(engine, first.text, HIV)
    assert "patient" in disclosed and "condom" not in disclosed  # what was generalized was not let through
    alone = engine.sanitize(LATER, HIV)
    assert not alone.decisions
    later = engine.sanitize(LATER, HIV, disclosed=disclosed)
    (d,) = later.decisions
    assert d.term == "virus" and d.reason == "stream" and d.earlier == ("patient",)
    assert "virus" not in later.text and "test came back positive" in later.text
    # The memory's own terms are never edited, even when they are in the text: there they are the text's terms.
    again = engine.sanitize("The patient is well.", HIV, disclosed=disclosed)
    assert again.text == "The patient is well."


def test_memory_alone_never_forms_a_group(engine: Engine) -> None:
    # Two remembered terms that would be risky together change nothing in a text that has neither.
    disclosed = ("patient", "virus", "counselling")
    text = "The weather was fine and the meeting ended early."
    assert engine.sanitize(text, HIV, disclosed=disclosed).text == text


def test_a_group_within_the_text_is_not_blamed_on_the_memory(engine: Engine) -> None:
    text = "Her viral load is now undetectable."
    alone = {d.term: d for d in engine.sanitize(text, HIV).decisions}
    with_memory = {d.term: d for d in engine.sanitize(text, HIV, disclosed=("therapy", "patient")).decisions}
    assert alone and all(d.reason == "group" and not d.earlier for d in alone.values())
    for term, d in alone.items():  # what the text's own groups decided is theirs, memory or not
        assert with_memory[term].reason == d.reason and with_memory[term].earlier == ()
    # What the memory added on top is a stream decision, naming the remembered term.
    for d in with_memory.values():
        assert (d.term in alone) or (d.reason == "stream" and set(d.earlier) <= {"therapy", "patient"})


def test_memory_sources_name_the_first_message_that_disclosed_a_term() -> None:
    m = Memory.of((
        Disclosure(message_id="m1", at=1.0, policy="p", sender="s", recipient="r", terms=("patient",)),
        Disclosure(message_id="m2", at=2.0, policy="p", sender="s", recipient="r", terms=("patient", "clinic")),
        Disclosure(message_id="m3", at=3.0, policy="p", sender="s", recipient="r", terms=("dose",)),
    ))  # fmt: skip
    assert m.terms == {"patient", "clinic", "dose"}
    assert m.sources(["clinic", "patient"]) == ("m1", "m2")
    assert m.sources(["dose", "absent"]) == ("m3",)


_TERMS = st.sampled_from(["patient", "clinic", "dose", "[named] HIV", "[removed] gay", "[wrote dose] amount", ""])


@given(st.lists(st.tuples(st.lists(_TERMS, max_size=6), st.sampled_from(["", "<t>", "<u>"])), max_size=8),
       st.sampled_from(["", "<t>"]))  # fmt: skip
def test_a_memory_folds_each_term_at_its_first_disclosure_in_order(rows: list[tuple[list[str], str]],
                                                                  thread: str) -> None:  # fmt: skip
    # What the front's fold must give, written term by term as ``counted`` defines it: the order is that of the
    # first disclosures (Memory.sources names the earlier messages in it), a term repeated in a row counts once.
    disclosures = [Disclosure(message_id=f"m{i}", at=float(i), policy="p", sender="s", recipient="r",
                              terms=tuple(terms), thread=t) for i, (terms, t) in enumerate(rows)]  # fmt: skip
    expected: dict[str, str] = {}
    for d in disclosures:
        marked = d.thread != "" and d.thread == thread
        own = [t for t in d.terms if marked or not t.startswith("[")]
        for t in own + ([thread_marker(t) for t in d.terms if not t.startswith("[")] if marked else []):
            expected.setdefault(t, d.message_id)
    assert list(Memory.of(disclosures, thread=thread).first.items()) == list(expected.items())


def test_thread_headers() -> None:
    reply = b"Message-ID: <c@x>\r\nIn-Reply-To: <b@x>\r\nReferences: <a@x> <b@x>\r\n\r\nbody\r\n"
    assert (thread_of(reply).mail_id, thread_of(reply).root) == ("<c@x>", "<a@x>")
    only_reply = b"Message-ID: <c@x>\r\nIn-Reply-To: <b@x> (sent by b)\r\n\r\nbody\r\n"
    assert thread_of(only_reply).root == "<b@x>"
    fresh = b"Message-ID: <c@x>\r\nSubject: new\r\n\r\nbody\r\n"
    assert thread_of(fresh).root == "<c@x>"
    assert thread_of(b"Subject: none\r\n\r\nbody\r\n").root == ""


def test_stream_memory_days_in_the_configuration(tmp_path: object) -> None:
    from pathlib import Path

    def conf(extra: str) -> str:
        return f'[policies.p]\nentities = ["HIV"]\n{extra}\n[policies.q]\nentities = ["HIV"]\n'

    c = parse_config(conf("stream_memory_days = 0"), source="t.toml", base=Path())
    assert c.policies["p"].stream_memory_days == 0 and c.policies["q"].stream_memory_days == 30
    cut = cutoffs(list(c.policies.values()), now=1_000_000.0)
    assert cut == {"p": 1_000_000.0, "q": 1_000_000.0 - 30 * 86400}
    with pytest.raises(ConfigError, match="stream_memory_days"):
        parse_config(conf("stream_memory_days = -1"), source="t.toml", base=Path())
    with pytest.raises(ConfigError, match="stream_memory_days"):
        parse_config(conf('stream_memory_days = "30"'), source="t.toml", base=Path())


def test_split_thread_keeps_paragraphs_and_order() -> None:
    text = "\n".join(f"Paragraph {i} " + "word " * (10 + i) for i in range(20))
    parts = split_thread(text, 6)
    assert len(parts) == 6
    assert " ".join(" ".join(p.split()) for p in parts) == " ".join(text.split())
    assert split_thread("one paragraph only", 6) == ["one paragraph only"]


def test_threads_evaluation_end_to_end(engine: Engine) -> None:
    import numpy as np

    from gateway.evaluation.attacker import EmbeddingAttacker, WordVectors
    from gateway.evaluation.datasets import EvalDocument
    from gateway.evaluation.threads import evaluate_threads, threads_markdown

    # A two-message thread whose second message is harmless alone and risky after the first.
    words = ["hiv", "virus", "patient", "condoms", "weather", "sunny", "week"]
    vectors = np.array([[1, 0], [0.95, 0.05], [0.6, 0.4], [0.7, 0.3], [0, 1], [0.05, 0.95], [0.1, 0.9]],
                       dtype=np.float32)  # fmt: skip
    attacker = EmbeddingAttacker(WordVectors.from_ranked(words, vectors), top=1)
    docs = [EvalDocument("hiv", "HIV", f"{FIRST}\n{LATER}"), EvalDocument("w", "weather", "It was sunny.\nRain.")]
    report = evaluate_threads(engine, docs, alpha=1.5, size=2, attackers={"toy": attacker}, evidence_budget=0)
    alone, memory = ({r.doc_id: r for r in report.runs[m]} for m in ("alone", "memory"))
    assert alone["hiv"].stream_decisions == 0 and memory["hiv"].stream_decisions == 1
    assert alone["hiv"].delivered == memory["hiv"].delivered == 2 and alone["hiv"].messages == 2
    # "virus" is gone from the second message with the memory on: fewer words kept, the attacker sees less.
    assert memory["hiv"].words_kept < alone["hiv"].words_kept <= alone["hiv"].words
    assert report.summary("memory")["stream_decisions"] == 1.0
    assert "with the stream memory" in threads_markdown(report)
    assert set(memory["hiv"].ranks) == {"toy"} and set(report.original) == {"toy"}
    # The later messages alone (here the second): "virus" points at HIV; with the memory only "week" is left.
    assert report.original_later["toy"]["hiv"] == alone["hiv"].later_ranks["toy"] == 1
    assert memory["hiv"].later_ranks["toy"] == 2
    assert report.summary("alone")["ranked_first_later toy"] == 100.0 * sum(
        r.later_ranks["toy"] == 1 for r in report.runs["alone"]) / 2  # fmt: skip
    assert report.summary("memory")["mean_rank_later toy"] == (memory["hiv"].later_ranks["toy"]
                                                                 + memory["w"].later_ranks["toy"]) / 2  # fmt: skip
    assert "| sanigate, with the stream memory: later messages |" in threads_markdown(report)
    # The first message is judged alone in both runs: its rank is the one the memory can never change.
    assert alone["hiv"].first_ranks == memory["hiv"].first_ranks == {"toy": 1}
    assert report.summary("alone")["ranked_first_first toy"] == report.summary("memory")["ranked_first_first toy"]
    assert "| sanigate: the first message alone (the same in both runs) | " in threads_markdown(report)
    # Judged at an opening floor (or beside a stream's other threads), the memory's first message may read otherwise:
    # the row then says it is the run alone's.
    memory["hiv"].first_ranks = {"toy": 2}
    assert "| sanigate: the first message alone (the run alone's; with the memory a thread's first may differ) | " in (
        threads_markdown(report))  # fmt: skip
    memory["hiv"].first_ranks = {"toy": 1}
    # Two attackers read the same delivered threads in one run: the gateway ran once, each ranked it.
    two = evaluate_threads(engine, docs, alpha=1.5, size=2, attackers={"a": attacker, "b": attacker}, evidence_budget=0)
    row = {r.doc_id: r for r in two.runs["memory"]}["hiv"]
    assert row.ranks["a"] == row.ranks["b"] == memory["hiv"].ranks["toy"]
    assert two.summary("memory")["mean_rank a"] == two.summary("memory")["mean_rank b"]
    assert "## a" in threads_markdown(two) and "## b" in threads_markdown(two)
    # The margin on the joined thread: the true candidate's score over its best rival's, at least 0 when it is first.
    for r in (*report.runs["alone"], *report.runs["memory"]):
        assert (r.margins["toy"] >= 0) == (r.ranks["toy"] == 1)  # ties favour the truth, as rank_of
    assert report.summary("memory")["mean_margin toy"] == sum(r.margins["toy"] for r in report.runs["memory"]) / 2
    assert "| run | mean margin (joined) |" in threads_markdown(report)
    # A bag of words has no passages to cut: one reading, no figures over cuts.
    assert not memory["hiv"].cut_ranks and "ranked_first_cuts toy" not in report.summary("memory")


def test_an_attacker_that_reads_passages_reads_each_thread_at_every_cut(engine: Engine) -> None:
    from gateway.evaluation.datasets import EvalDocument
    from gateway.evaluation.sentence_attacker import SentenceAttacker, load_minilm
    from gateway.evaluation.threads import CUTS, evaluate_threads, threads_markdown

    docs = [EvalDocument("hiv", "HIV", f"{FIRST}\n{LATER}"), EvalDocument("w", "weather", "It was sunny.\nRain.")]
    report = evaluate_threads(engine, docs, alpha=1.5, size=2, attackers={"m": SentenceAttacker(load_minilm())},
                              evidence_budget=0)  # fmt: skip
    for mode in ("alone", "memory"):
        for r in report.runs[mode]:
            # The first cut is the attacker's own reading; a text shorter than a passage reads the same at each.
            assert len(r.cut_ranks["m"]) == CUTS and r.cut_ranks["m"][0] == r.ranks["m"]
            assert r.cut_later_ranks["m"][0] == r.later_ranks["m"] and r.cut_first_ranks["m"][0] == r.first_ranks["m"]
        s = report.summary(mode)
        firsts = [100.0 * sum(r.cut_ranks["m"][k] == 1 for r in report.runs[mode]) / 2 for k in range(CUTS)]
        assert s["ranked_first_cuts m"] == sum(firsts) / CUTS and s["ranked_first_cuts_max m"] == max(firsts)
        assert s["ranked_first_cuts_min m"] == min(firsts)
    assert "ranked first over the passage cuts" in threads_markdown(report)
    # One cut: the attacker's own reading only; two: offsets 0 and half a passage.
    for cuts in (1, 2):
        fewer = evaluate_threads(engine, docs, alpha=1.5, size=2, attackers={"m": SentenceAttacker(load_minilm())},
                                 evidence_budget=0, cuts=cuts)  # fmt: skip
        row = fewer.runs["memory"][0]
        assert row.ranks == report.runs["memory"][0].ranks and len(row.cut_ranks.get("m", [0])) == cuts
        assert ("ranked_first_cuts m" in fewer.summary("memory")) == (cuts > 1)


def test_threads_in_one_stream_share_its_memory(engine: Engine) -> None:
    from gateway.evaluation.datasets import EvalDocument
    from gateway.evaluation.threads import evaluate_threads, threads_markdown

    # The second thread's LATER is judged with the first thread's "patient" only when both are one stream.
    docs = [
        EvalDocument("a", "HIV", f"{FIRST}\nThe weather was fine."),
        EvalDocument("b", "HIV", f"It was sunny.\n{LATER}"),
    ]
    runs = {one: evaluate_threads(engine, docs, alpha=1.5, size=2, attackers={}, evidence_budget=0, one_stream=one)
            for one in (False, True)}  # fmt: skip
    b = {one: {m: {r.doc_id: r for r in runs[one].runs[m]}["b"] for m in ("alone", "memory")} for one in runs}
    assert b[False]["memory"].stream_decisions == 0 and b[True]["memory"].stream_decisions == 1
    assert b[True]["memory"].words_kept < b[False]["memory"].words_kept
    # Alone, a message is the same whatever its stream.
    assert b[True]["alone"].words_kept == b[False]["alone"].words_kept == b[False]["alone"].words
    assert "all in one stream" in threads_markdown(runs[True]) and "all in one stream" not in threads_markdown(
        runs[False]
    )


@given(
    n=st.integers(min_value=0, max_value=9),
    held=st.sets(st.integers(min_value=0, max_value=8)),
    size=st.integers(min_value=2, max_value=4),
)
def test_groups_with_a_remembered_term_in_the_order_of_combinations(n: int, held: set[int], size: int) -> None:
    # The detector asks the groups holding exactly one remembered term, in itertools' order (the first
    # risky one is the one named), without testing every combination of the sentence's and the memory's terms.
    keys = [f"k{i}" for i in range(n)]
    fixed = {f"k{i}" for i in held if i < n}
    expected = list(itertools.combinations(keys, size))
    if fixed:
        expected = [c for c in expected if sum(k in fixed for k in c) == 1]
    assert list(_combinations(keys, size, fixed)) == expected


@pytest.mark.parametrize("end", [b"\r\n", b"\n", b"\r"])
def test_the_thread_is_read_from_the_header_block_alone(end: bytes) -> None:
    head = end.join([b"Message-ID: <c@x>", b"References: <a@x>", b"  <b@x>", b"Subject: hi", b"", b""])
    body = end.join([b"References: <z@x>", b"Message-ID: <y@x>", b"", b"text"] * 50)
    data = head + body
    assert header_block(data).startswith(head) and len(header_block(data)) <= len(head) + 1
    assert (thread_of(data).mail_id, thread_of(data).root) == ("<c@x>", "<a@x>")
    assert header_block(b"Subject: no body") == b"Subject: no body"


def test_the_memory_reads_a_clean_output_without_tokenizing_it_again(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gateway.model.reading as reading_module

    calls: list[str] = []
    extract = reading_module.extract_terms

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(text)
        return extract(text, *args, **kwargs)

    monkeypatch.setattr(reading_module, "extract_terms", counting)
    text = "The weather was fine and the meeting about the garden budget ended early."
    result = engine.sanitize(text, HIV)
    assert result.text == text and not result.decisions
    read = disclosed_terms(engine, result.text, HIV)
    assert calls == [text]  # the fast path's read, reused by the memory's
    assert read == disclosed_terms(engine, text + " ", HIV)  # and what a fresh read gives


def test_a_unit_with_remembered_terms_has_one_key_per_members() -> None:
    from gateway.model.detection import _unit_key

    a = {"clinic": (frozenset({"clinic"}), 0.5), "dose": (frozenset({"dose", "amount"}), 0.4)}
    assert _unit_key(a, {"clinic"}, 3) == _unit_key(dict(reversed(a.items())), {"clinic"}, 3)  # order: the same unit
    assert _unit_key(a, {"clinic"}, 3) != _unit_key(a, {"dose"}, 3)  # which of them is remembered matters
    assert _unit_key(a, {"clinic"}, 3) != _unit_key(a, {"clinic"}, 2)
    generalized = {**a, "dose": (frozenset({"amount"}), 0.4)}
    assert _unit_key(a, {"clinic"}, 3) != _unit_key(generalized, {"clinic"}, 3)
    assert _unit_key({"a\x1fb": (frozenset({"a"}), 1.0)}, (), 3) is None  # a separator inside: no key at all


def test_a_thread_that_named_c_makes_its_later_messages_stricter_and_says_which(engine: Engine) -> None:
    import tempfile
    from pathlib import Path

    from extractors.mail import ContentPolicy
    from gateway.config import PolicyConfig
    from gateway.evaluation.datasets import EvalDocument
    from gateway.evaluation.threads import run_thread
    from gateway.store.sqlite import SQLiteStore

    # Ordinary mail at a lax budget; a thread about c at the paper's line. The second message does not name c.
    sanitize = SanitizePolicy(entities=("HIV",), alpha=1.5, evidence_budget=4.0, named_budget=1.0)
    doc = EvalDocument("t", "HIV", "Her HIV result came.\n" + LATER)
    parts = ["Her HIV result came.", LATER]
    kept = {}
    for days in (0.0, 30.0):
        policy = PolicyConfig(name="p", content=ContentPolicy(), sanitize=sanitize, stream_memory_days=days)
        with tempfile.TemporaryDirectory() as tmp:
            store = SQLiteStore(Path(tmp) / "s.db")
            try:
                result, joined, later = run_thread(engine, store, doc, policy, parts, 0)
                assert joined.endswith(later) and "HIV" not in later  # the second message alone
            finally:
                store.close()
        kept[days] = (result, joined)
    alone, memory = kept[0.0][0], kept[30.0][0]
    assert LATER in kept[0.0][1] and LATER not in kept[30.0][1]
    assert alone.stream_decisions == 0 and memory.stream_decisions >= 1
    # The engine alone: the marker in the memory is why, and the audit maps it to the first message.
    r = engine.sanitize(LATER, sanitize, disclosed=(named_marker("HIV"),))
    assert all(d.reason == "stream-evidence" and d.earlier == (named_marker("HIV"),) for d in r.decisions)
    said = Disclosure(message_id="m1", at=0.0, policy="p", sender="a@x", recipient="b@y",
                      terms=(named_marker("HIV"),), thread="<t>")  # fmt: skip
    assert Memory.of((said,), thread="<t>").sources(r.decisions[0].earlier) == ("m1",)
    assert Memory.of((said,), thread="<other>").sources(r.decisions[0].earlier) == ()


def test_the_front_s_folded_memories_keep_that_c_was_named_for_its_thread_only() -> None:
    from gateway.store.base import StreamQuery
    from gateway.streams import Folds

    def said(i: int, thread: str, *terms: str) -> Disclosure:
        return Disclosure(message_id=f"m{i}", at=float(i), policy="p", sender="s", recipient="r", terms=terms,
                          thread=thread)  # fmt: skip

    rows = (said(1, "<a>", "clinic", named_marker("HIV")), said(2, "<b>", "dose"))
    for thread, named in (("<a>", True), ("<b>", False)):
        folds = Folds()
        key = ("p", StreamQuery(policies=("p",), sender="s", recipients=("r",), thread=thread))
        first = folds.memory(key, rows[:1])
        grown = folds.memory(key, rows)  # extended by the new row, not folded again
        for m in (first, grown, Memory.of(rows, thread=thread)):
            assert (named_marker("HIV") in m.terms) is named and "clinic" in m.terms
            # The thread's own terms are marked as the thread's, for its messages only.
            assert (thread_marker("clinic") in m.terms) is (thread == "<a>")
        assert grown.terms == Memory.of(rows, thread=thread).terms
        assert thread_in(grown.terms) == ({"clinic"} if thread == "<a>" else {"dose"})


# A list's trace header: "abuse" is risky for substance abuse on its own; a remembered "transmitted" makes its
# generalization "treat" risky in a pair (K: "treat" and "transmitted" together reach the line for an entity).
US_MEDICAL = SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"), alpha=1.5)
TRACE = (
    "Re: [USRP-users] Segmentation fault when calling usrp->get_device()->get_tree()->access<bool>\n\n"
    "This header was added to track abuse, please include it with any abuse report"
)


def test_the_memory_starts_from_what_the_message_alone_decides(engine: Engine) -> None:
    alone = engine.sanitize(TRACE, US_MEDICAL)
    with_memory = engine.sanitize(TRACE, US_MEDICAL, disclosed=("transmitted",))
    assert [(d.term, d.replacement) for d in alone.decisions] == [("abuse", "treat")]
    # The text's own decisions stand, unchanged and not blamed on the memory (judged in one pass, "abuse" went
    # to "interact" as a decision of the memory's and the text's own "treat" was never recorded) ...
    assert with_memory.decisions[: len(alone.decisions)] == alone.decisions
    # ... and the memory takes it from there: the "treat" the text's rounds wrote is judged as the sense it stands
    # for, which a remembered term makes risky; its decision is the memory's and names that term.
    (more,) = with_memory.decisions[len(alone.decisions) :]
    assert (more.term, more.reason, more.earlier) == ("treat", "stream", ("transmitted",))
    assert "treat" not in with_memory.text and "abuse" not in with_memory.text


def test_with_a_memory_a_message_lowers_at_least_what_it_lowers_alone(engine: Engine) -> None:
    from archive import archive_texts

    memory: list[str] = []
    for text in [*archive_texts(12, chars=3000), FIRST, LATER, TRACE]:
        alone = engine.sanitize(text, US_MEDICAL)
        with_memory = engine.sanitize(text, US_MEDICAL, disclosed=(*dict.fromkeys(memory), "transmitted"))
        assert with_memory.decisions[: len(alone.decisions)] == alone.decisions
        lowered = {span for d in with_memory.decisions for span in d.spans}
        assert all(span in lowered for d in alone.decisions for span in d.spans)
        memory += disclosed_terms(engine, with_memory.text, US_MEDICAL)


def test_a_reply_is_judged_with_its_own_thread_s_terms_first(engine: Engine, tmp_path: Any) -> None:
    from extractors.mail import ContentPolicy
    from gateway.config import PolicyConfig
    from gateway.store.sqlite import SQLiteStore
    from gateway.streams import Thread, recall, remember

    # One remembered term a sentence's groups may join: the stream's riskiest, unless the thread has its own.
    sanitize = replace(HIV, memory_candidates=1)
    policy = PolicyConfig(name="p", content=ContentPolicy(), sanitize=sanitize, stream_memory_days=30.0)
    store = SQLiteStore(tmp_path / "s.db")
    try:
        sent = (("b1", Thread("<b1@x>", "<b1@x>"), FIRST), ("a1", Thread("<a1@x>", "<a1@x>"), "Bring a clean needle."))
        for message_id, thread, text in sent:
            out = engine.sanitize(text, sanitize).text
            remember(store, message_id=message_id, sender="s@x", recipients=["r@y"], thread=thread,
                     disclosed={"p": disclosed_terms(engine, out, sanitize)})  # fmt: skip

        def judged(thread: Thread) -> tuple[Memory, list[tuple[str, str, tuple[str, ...]]]]:
            memory = recall(store, [policy], sender="s@x", recipients=["r@y"], thread=thread)["p"]
            r = engine.sanitize(LATER, sanitize, disclosed=memory.terms)
            return memory, [(d.term, d.reason, d.earlier) for d in r.decisions]

        # "needle" (the other thread's) is riskier for HIV than "patient" and makes no group of LATER risky.
        entities = engine.entities_of(sanitize)
        ratio = {t: engine.verdict((frozenset({t}),), entities, 1.5).ratio for t in ("needle", "patient")}
        assert ratio["needle"] > ratio["patient"] >= sanitize.group_floor
        # A message of another thread (or none) is judged with the stream's riskiest term, as before: nothing.
        assert judged(Thread("<c1@x>", "<c1@x>"))[1] == []
        # A reply in the thread that let "patient" through is judged with it: "virus" is lowered, and the audit
        # names the thread's message.
        memory, decisions = judged(Thread("<b2@x>", "<b1@x>"))
        assert decisions == [("virus", "stream", ("patient",))]
        assert memory.sources(["patient"]) == ("b1",)
        # The thread's terms are its rows' terms: they expire (and are purged) with the rows.
        assert store.expire_memory({"p": time.time() + 1}) == 2
        assert judged(Thread("<b2@x>", "<b1@x>"))[1] == []
    finally:
        store.close()


def test_a_later_message_writes_a_term_as_its_thread_did_when_that_discloses_no_more(engine: Engine) -> None:
    first = engine.sanitize(FIRST, HIV)
    assert "devices" in first.text  # "condoms", as the first message writes it alone
    markers = disclosed_terms(engine, first.text, HIV, wrote=written(first))
    assert wrote_marker("condom", "device") in markers
    later = "Condoms were handed out again at the clinic."
    alone = {d.term: d for d in engine.sanitize(later, HIV).decisions}
    assert alone["condom"].replacement == "device" and not alone["condom"].earlier
    # Where the thread wrote "instrumentality" (further along the term's chain, no more telling in K), the later
    # message writes it too: a reader who saw both "device" and "instrumentality" would learn the word below both.
    marker = wrote_marker("condom", "instrumentality")
    r = engine.sanitize(later, HIV, disclosed=(marker,))
    (d,) = r.decisions
    assert (d.replacement, d.earlier) == ("instrumentality", (marker,)) and "ondom" not in r.text
    # What is not safe here ("contraceptive" is risky on its own) or on no chain of the term is not written.
    for other in ("contraceptive", "rubber", "weather"):
        (d,) = engine.sanitize(later, HIV, disclosed=(wrote_marker("condom", other),)).decisions
        assert (d.replacement, d.earlier) == ("device", ())
    # The audit names the thread's message that wrote it; another thread's message does not count.
    said = Disclosure(message_id="m1", at=0.0, policy="p", sender="a@x", recipient="b@y", terms=(marker,),
                      thread="<t>")  # fmt: skip
    assert Memory.of((said,), thread="<t>").sources((marker,)) == ("m1",)
    assert marker not in Memory.of((said,), thread="<other>").terms


def test_what_a_thread_wrote_is_sealed_counted_in_its_thread_only_and_expires(
    engine: Engine, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from cryptography.fernet import Fernet

    from extractors.mail import ContentPolicy
    from gateway.config import PolicyConfig
    from gateway.store.sqlite import SQLiteStore
    from gateway.streams import Thread, recall, remember

    monkeypatch.setenv("SANIGATE_STORE_KEY", Fernet.generate_key().decode())
    policy = PolicyConfig(name="p", content=ContentPolicy(), sanitize=HIV, stream_memory_days=30.0)
    store = SQLiteStore(tmp_path / "s.db")
    try:
        first = engine.sanitize(FIRST, HIV)
        remember(store, message_id="m1", sender="s@x", recipients=["r@y"], thread=Thread("<m1@x>", "<m1@x>"),
                 disclosed={"p": disclosed_terms(engine, first.text, HIV, wrote=written(first))})  # fmt: skip
        # The sender's "condom" is in the row, as a signature's terms are: sealed with the store key.
        raw = sqlite3.connect(tmp_path / "s.db").execute("SELECT terms FROM stream_memory").fetchall()
        assert raw and not any(b"condom" in bytes(r[0]) or b"wrote" in bytes(r[0]) for r in raw)
        marker = wrote_marker("condom", "device")
        reply = recall(store, [policy], sender="s@x", recipients=["r@y"], thread=Thread("<m2@x>", "<m1@x>"))["p"]
        assert marker in reply.terms and reply.sources([marker]) == ("m1",)
        other = recall(store, [policy], sender="s@x", recipients=["r@y"], thread=Thread("<m3@x>", "<m3@x>"))["p"]
        assert marker not in other.terms and "patient" in other.terms  # the stream's terms, not the thread's
        assert store.expire_memory({"p": time.time() + 1}) == 1
        gone = recall(store, [policy], sender="s@x", recipients=["r@y"], thread=Thread("<m2@x>", "<m1@x>"))["p"]
        assert not gone.terms
    finally:
        store.close()


# A clinic's notes: what a thread of such mail holds, more of whose terms a medical policy generalizes.
CLINIC = (
    "He was treated for hepatitis and tuberculosis at the clinic last spring.",
    "Syphilis and gonorrhea rates rose among young men who met partners online.",
    "She takes her pills every morning; the nurse checks her blood count each month.",
    "Needle exchange and condoms were handed out at the shelter downtown.",
)


def test_with_what_its_thread_wrote_a_message_still_lowers_what_it_lowers_alone(engine: Engine) -> None:
    from archive import archive_texts

    taken = 0
    for text in [*archive_texts(12, chars=3000), FIRST, LATER, TRACE, *CLINIC]:
        alone = engine.sanitize(text, US_MEDICAL)
        # The thread wrote each term one or two steps further along its chain than this message would alone.
        wrote = []
        for d in alone.decisions:
            chain = [g.term for g in engine.taxonomy.generalizations(d.term, d.sense)] if d.replacement else []
            if d.replacement in chain:
                wrote += [wrote_marker(d.term, g) for g in chain[chain.index(d.replacement) + 1 :][:2]]
        with_memory = engine.sanitize(text, US_MEDICAL, disclosed=wrote)
        taken += sum(1 for d in with_memory.decisions if set(d.earlier) & set(wrote))
        lowered = {span for d in with_memory.decisions for span in d.spans}
        assert all(span in lowered for d in alone.decisions for span in d.spans)
    assert taken >= 5  # the property was put to the test


def test_a_term_its_thread_took_out_is_not_let_through_by_a_later_message(engine: Engine) -> None:
    first = engine.sanitize("The gay men's health crisis clinic saw many homosexual patients with HIV.", US_MEDICAL)
    assert "gay" in removed(first) and "gay" not in first.text.lower()  # left out: no generalization lowered it
    marker = removed_marker("gay")
    assert marker in disclosed_terms(engine, first.text, US_MEDICAL, removed=removed(first))
    # Alone, a later message lets the word through; after the gap, the word would tell a reader what it held.
    for later, word in (("The gay community held a picnic in the park.", "gay"),
                        ("Gay-friendly hotels were listed in the guide.", "gay-friendly")):  # fmt: skip
        assert engine.sanitize(later, US_MEDICAL).text == later
        r = engine.sanitize(later, US_MEDICAL, disclosed=(marker,))
        (d,) = r.decisions
        assert (d.term, d.reason, d.earlier) == (word, "stream", (marker,)) and "gay" not in r.text.lower()
    # As another marker of the thread, it counts within the thread only, and the audit names its message.
    said = Disclosure(message_id="m1", at=0.0, policy="p", sender="a@x", recipient="b@y", terms=(marker,),
                      thread="<t>")  # fmt: skip
    assert Memory.of((said,), thread="<t>").sources((marker,)) == ("m1",)
    assert marker not in Memory.of((said,), thread="<other>").terms
