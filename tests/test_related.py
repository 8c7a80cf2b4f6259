"""K's second-order co-occurrence: a rare term whose few paragraphs are full of what K ties to c
(gateway/model/related.py), and what the summed evidence does with it (gateway/model/evidence.py)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from extractors.pipeline import DEFAULT_LIMITS, check_output
from gateway.config import parse_config
from gateway.knowledge.build import BuildConfig, build_index
from gateway.knowledge.local import LocalIndex
from gateway.model.engine import Engine
from gateway.model.knowledge import Estimator
from gateway.model.memory import named_marker
from gateway.model.records import SanitizePolicy
from gateway.model.taxonomy import ChainedTaxonomy
from gateway.taxonomy.org import OrgTaxonomy
from gateway.taxonomy.wordnet import WordNet

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
