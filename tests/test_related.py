"""K's second-order co-occurrence: a rare term whose few paragraphs are full of what K ties to c
(gateway/model/related.py), and what the summed evidence does with it (gateway/model/evidence.py)."""

from __future__ import annotations

import math
import sqlite3
import time
from dataclasses import replace
from email.message import EmailMessage
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from extractors.mail import ContentPolicy
from extractors.pipeline import DEFAULT_LIMITS, check_output
from gateway import streams
from gateway.config import PolicyConfig, parse_config
from gateway.knowledge.build import BuildConfig, build_index
from gateway.knowledge.local import LocalIndex
from gateway.model.engine import Engine
from gateway.model.knowledge import Estimator
from gateway.model.memory import named_marker, signature_marker
from gateway.model.records import SanitizePolicy
from gateway.model.taxonomy import ChainedTaxonomy
from gateway.store.sqlite import SQLiteStore
from gateway.taxonomy.org import OrgTaxonomy
from gateway.taxonomy.wordnet import WordNet
from gateway.worker import JobResult, sanitize_message

# Counted by hand: malaria in 4 paragraphs of 12, each with "mosquito" (6 paragraphs); "sporozoite" in 2,
# both with the mosquito and neither with malaria; "violin" in 2, with neither.
CORPUS = {
    "m1": "Malaria spreads where the mosquito breeds.",
    "m2": "The mosquito carries malaria in warm regions.",
    "m3": "Malaria and the mosquito season returned.",
    "m4": "A mosquito bite can pass on malaria.",
    "s1": "The sporozoite lives in the mosquito gut.",
    "s2": "Each sporozoite leaves the mosquito saliva.",
    "o1": "Every organism needs water to live.",
    "o2": "The organism grew in the dish.",
    "o3": "An organism adapts to the cold.",
    "f1": "The football team won the final.",
    "f2": "The violin concert filled the hall.",
    "f3": "The violin maker sold a new one.",
}
MALARIA = SanitizePolicy(entities=("malaria",), alpha=2.0, max_group=1)
ABOUT = "Malaria is spread by the mosquito.\nThe sporozoite was found."
PLAIN = "The sporozoite was found."


@pytest.fixture(scope="module")
def small_engine(tmp_path_factory: pytest.TempPathFactory, wordnet: WordNet) -> Engine:
    root = tmp_path_factory.mktemp("second-order")
    (root / "docs").mkdir()
    for name, text in CORPUS.items():
        (root / "docs" / f"{name}.txt").write_text(text, encoding="utf-8")
    build_index([root / "docs"], root / "k.sgidx", config=BuildConfig(min_df=1, min_phrase_df=1, workers=1))
    return Engine(
        knowledge=LocalIndex(root / "k.sgidx"),
        taxonomy=ChainedTaxonomy(OrgTaxonomy({"sporozoite": "organism"}, lemmatize=wordnet.lemmatize)),
        language=wordnet,
        synonyms=wordnet,
        estimator=Estimator(prior_weight=0.0, min_support=2),
    )


def test_the_estimate_goes_through_the_signature_of_c(small_engine: Engine) -> None:
    so = small_engine.evidence.second_order
    (e,) = small_engine.entities_of(MALARIA)
    so.read({e: ["mosquito"]})
    # p(c|S) = 4/6 against p(c) = 4/12: PMI(c; S) = log 2; p(S|sporozoite) = 2/2, so PMI2 = log 2.
    assert so.pmi(frozenset({"sporozoite"}), e) == pytest.approx(math.log(2))
    # No paragraph of it holds S: nothing goes through S.
    assert so.pmi(frozenset({"violin"}), e) == 0.0
    assert so.pmi(frozenset({"organism"}), e) == 0.0
    # A term of S is judged first-hand.
    assert so.pmi(frozenset({"mosquito"}), e) == 0.0
    # Where K's own count could have attested the tie (n(t) p(c|t) >= min_support), the second order is
    # silent: with min_support 1, sporozoite's 2 x 2/3 paragraphs would have shown it.
    lenient = Engine(knowledge=small_engine.knowledge, taxonomy=small_engine.taxonomy,
                     language=small_engine.language, estimator=Estimator(prior_weight=0.0, min_support=1))  # fmt: skip
    lenient.evidence.second_order.read({e: ["mosquito"]})
    assert lenient.evidence.second_order.pmi(frozenset({"sporozoite"}), e) == 0.0
    # A text with no signature of c.
    so.read({})
    assert so.pmi(frozenset({"sporozoite"}), e) == 0.0


def test_a_rare_term_tied_to_c_through_its_paragraphs_is_generalized_in_a_text_about_c(small_engine: Engine) -> None:
    engine = small_engine
    on = engine.sanitize(ABOUT, MALARIA)
    off = engine.sanitize(ABOUT, replace(MALARIA, second_order=False))
    (d,) = [d for d in on.decisions if d.term == "sporozoite"]
    assert "sporozoite" in off.text and "sporozoite" not in on.text
    # Generalized along its chain, never redacted; as evidence, the line and the sum on the decision.
    assert (d.reason, d.action, d.replacement) == ("evidence", "generalize", "organism")
    assert d.pmi is not None and d.threshold is not None and d.pmi >= d.threshold
    assert not engine.sanitize(on.text, MALARIA).decisions
    check_output(on.text.encode(), "text", engine=engine, results=[on], name="t", limits=DEFAULT_LIMITS)
    # A text that does not name malaria is judged first-hand only.
    assert engine.sanitize(PLAIN, MALARIA).text == PLAIN


def test_a_thread_that_named_c_makes_the_decision_the_memorys(small_engine: Engine) -> None:
    text = "The mosquito was there.\nThe sporozoite was found."
    alone = small_engine.sanitize(text, MALARIA)
    assert "sporozoite" in alone.text
    r = small_engine.sanitize(text, MALARIA, disclosed=(named_marker("malaria"),))
    (d,) = [d for d in r.decisions if d.term == "sporozoite"]
    assert d.reason == "stream-evidence" and named_marker("malaria") in d.earlier


def test_second_order_config_key() -> None:
    text = '[policies.p]\nentities = ["HIV"]\nsecond_order = false\n[policies.q]\nentities = ["HIV"]\n'
    cfg = parse_config(text, source="t.toml", base=Path())
    assert cfg.policies["p"].sanitize.second_order is False
    assert cfg.policies["q"].sanitize.second_order is True


def test_a_thread_signature_only_ever_raises_a_clue(small_engine: Engine) -> None:
    so = small_engine.evidence.second_order
    (e,) = small_engine.entities_of(MALARIA)
    # The thread lends "organism" (no paragraph of it has malaria): S joined to it dilutes p(c | S) to 4/9, and
    # alone would give sporozoite log(4/3); the text's own S still gives log 2, and the larger counts.
    so.read({e: ["mosquito"]}, {"malaria": ["organism"]})
    assert so.lent == {e: frozenset({"organism"})}
    assert so.pmi(frozenset({"sporozoite"}), e) == pytest.approx(math.log(2))
    assert not so.by_thread(frozenset({"sporozoite"}), e)
    # A text with no S of its own is judged with its thread's.
    so.read({e: []}, {"malaria": ["mosquito"]})
    assert so.pmi(frozenset({"sporozoite"}), e) == pytest.approx(math.log(2))
    assert so.by_thread(frozenset({"sporozoite"}), e) and so.own == {}
    # The text's own signature is what a result hands to the memory.
    r = small_engine.sanitize(ABOUT, MALARIA)
    assert r.signature == (("malaria", ("mosquito",)),)


def _mail(body: str, to: str, root: str, n: int) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "doc@clinic.example", to, "case"
    msg["Message-ID"] = f"<m{n}@clinic.example>"
    if root != msg["Message-ID"]:
        msg["In-Reply-To"] = msg["References"] = root
    msg.set_content(body)
    return msg.as_bytes()


def test_a_later_message_of_the_thread_is_judged_with_its_signature(
    small_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread's first message names malaria beside "mosquito" (its S); a later one has only "sporozoite".

    Its own text holds no S: with the [named] marker alone it keeps "sporozoite" (the memory before the thread's
    signature); with the thread's S it is lowered, as the memory's decision naming the first message. Another
    thread, or another recipient, of the same sender is judged without it.
    """
    monkeypatch.setenv("SANIGATE_STORE_KEY", Fernet.generate_key().decode())
    store = SQLiteStore(tmp_path / "s.db")
    policy = PolicyConfig(name="topic", content=ContentPolicy(), sanitize=MALARIA, stream_memory_days=30)
    root, other = "<m0@clinic.example>", "<m9@clinic.example>"

    def send(n: int, body: str, to: str, thread_root: str) -> JobResult:
        data = _mail(body, to, thread_root, n)
        thread = streams.thread_of(data)
        memory = streams.recall(store, [policy], sender="doc@clinic.example", recipients=[to], thread=thread)
        job = sanitize_message(data, [policy], f"id{n}", small_engine, memory)
        assert job.verdict == "forward" and job.data is not None
        streams.remember(store, message_id=f"id{n}", sender="doc@clinic.example", recipients=[to], thread=thread,
                         disclosed=job.disclosed)  # fmt: skip
        return job

    first = send(0, ABOUT, "ins@payer.example", root)
    assert signature_marker("malaria", "mosquito") in first.disclosed["topic"]
    # Without the thread's signature (the [named] marker only), the later text keeps the rare term.
    assert "sporozoite" in small_engine.sanitize(PLAIN, MALARIA, disclosed=(named_marker("malaria"),)).text

    later = send(1, PLAIN, "ins@payer.example", root)
    assert later.data is not None and b"sporozoite" not in later.data and b"organism" in later.data
    (d,) = [d for d in later.decisions if d.term == "sporozoite"]
    assert d.reason == "stream-evidence" and d.earlier == ("id0",)

    for n, to, thread_root in ((2, "ins@payer.example", other), (3, "other@payer.example", root)):
        job = send(n, PLAIN, to, thread_root)
        assert job.data is not None and b"sporozoite" in job.data and not job.decisions
    store.close()

    # Sealed with the store key like the rest of the memory; gone with its window.
    raw = sqlite3.connect(tmp_path / "s.db").execute("SELECT terms FROM stream_memory").fetchall()
    assert raw and not any(b"mosquito" in bytes(r[0]) or b"signature" in bytes(r[0]) for r in raw)
    store = SQLiteStore(tmp_path / "s.db")
    assert store.expire_memory(streams.cutoffs([policy], now=time.time() + 31 * 86400)) == len(raw)
    store.close()
