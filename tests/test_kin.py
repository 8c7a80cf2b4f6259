"""A kind read from K for a noun WordNet lacks (gateway/model/kin.py), and compounds built on a term the text
rewrites (gateway/model/compounds.py), on the shipped index and WordNet."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.model.compounds import REASON, compounds_of_flagged
from gateway.model.detection import RoundState
from gateway.model.engine import Engine
from gateway.model.generalization import Risky
from gateway.model.kin import heads_a_phrase, nearest_kin, sense_by_company
from gateway.model.records import SanitizePolicy
from gateway.model.taxonomy import Generalization
from gateway.model.terms import TermOccurrence, Token

POLICY = SanitizePolicy(entities=("HIV",), alpha=2.0)


def _read(engine: Engine, text: str) -> tuple[list[Token], dict[str, list[TermOccurrence]]]:
    tokens, occs = engine.terms_of(text, engine.entities_of(POLICY), POLICY)
    by_key: dict[str, list[TermOccurrence]] = {}
    for o in occs:
        by_key.setdefault(o.key, []).append(o)
    return list(tokens), by_key


def _start(engine: Engine, text: str, key: str, *, kin: bool, reason: str = "evidence") -> Risky:
    tokens, by_key = _read(engine, text)
    r = Risky(key, reason, None)
    engine.generalizer.start_chain(r, text, by_key[key], tokens, engine._sense_evidence(by_key),
                                   engine.entities_of(POLICY), POLICY, set(), kin=kin)  # fmt: skip
    return r


def _terms(chain: Sequence[Generalization]) -> list[str]:
    return [g.term for g in chain]


def test_a_noun_wordnet_lacks_takes_the_chain_of_its_kin_in_the_text(engine: Engine) -> None:
    text = "Doctors prescribe fentanyl and morphine for pain. Patients misuse opioids, and deaths follow opioids."
    r = _start(engine, text, "opioids", kin=True)
    # WordNet has no "opioid": the text's noun K holds it with most is a drug, and its chain is the drug's above it.
    assert r.sense is not None and r.sense.startswith("kin:")
    assert "narcotic" in _terms(r.chain) and "drug" in _terms(r.chain)
    assert r.current is not None
    # Asked without (a term risky on its own is redacted rather than written as a kind a statistic chose), and
    # on the code before: no chain at all.
    assert _start(engine, text, "opioids", kin=False).chain == []


def test_kin_is_a_tie_k_attests_at_the_papers_line(engine: Engine) -> None:
    m = engine.generalizer.measure
    kin = nearest_kin("opioids", ["city", "river", "fentanyl", "piety", "methadone"], m, 2.0)
    assert kin is not None and kin.word in ("fentanyl", "methadone")
    # A word found a little more than chance beside everything is company, not a kind.
    assert nearest_kin("especially", ["piety", "city", "river", "growth", "sacrament"], m, 2.0) is None
    # A word K barely knows has no attested company.
    assert nearest_kin("zqxjvbw", ["city", "river"], m, 2.0) is None


def test_the_kins_sense_is_the_one_whose_words_k_holds_the_word_with(engine: Engine) -> None:
    g = engine.generalizer
    liver = g.taxonomy.senses("liver")
    chosen = sense_by_company("hepatocytes", liver, g.measure, g.key)
    assert chosen is not None and chosen.id == "liver.n.01"  # the organ, not the meat or the one who lives
    blood = sense_by_company("microliter", g.taxonomy.senses("blood"), g.measure, g.key)
    assert blood is not None and blood.id == "blood.n.01"  # the fluid, not the lineage


def test_only_a_noun_heading_its_phrase_takes_a_kin(engine: Engine) -> None:
    tokens, by_key = _read(engine, "The glutamatergic neurons fire. Patients misuse opioids, and opioids are risky.")
    assert not heads_a_phrase("glutamatergic", tokens, by_key["glutamatergic"])  # an adjective's ending
    assert heads_a_phrase("opioids", tokens, by_key["opioids"])
    tokens, by_key = _read(engine, "Opioid receptors bind. The opioids receptors fire and opioids receptors differ.")
    assert not heads_a_phrase("opioids", tokens, by_key["opioids"])  # before a noun: says what kind that is


def test_a_compound_built_on_a_term_the_text_rewrites_is_written_as_its_head(engine: Engine) -> None:
    text = (
        "Alcohol-related deaths rose. Drinking alcohol at parties is common; the 46-year-old driver drank every year."
    )
    tokens, by_key = _read(engine, text)
    context = engine._sense_evidence(by_key)
    entities = engine.entities_of(POLICY)
    risky = {k: Risky(k, "group", None) for k in ("alcohol", "year")}
    for k, r in risky.items():
        engine.generalizer.start_chain(r, text, by_key[k], tokens, context, entities, POLICY, set())
    forbidden = set(risky)
    compounds_of_flagged(
        engine.generalizer, RoundState(text, by_key, risky, {}, tokens, context, entities, POLICY, forbidden)
    )
    r = risky["alcohol-related"]
    assert r.reason == REASON and r.group == ("alcohol",) and r.current is not None and r.current.term == "related"
    assert "alcohol-related" in forbidden
    # "46-year-old" is one compound: its tail "year-old" is not rewritten as "old" ("46-old").
    assert "year-old" not in risky
    # A compound of nothing the text rewrites stays as it was.
    untouched: dict[str, Risky] = {}
    compounds_of_flagged(
        engine.generalizer, RoundState(text, by_key, untouched, {}, tokens, context, entities, POLICY, set())
    )
    assert untouched == {}
    # Nor is a piece of an address or a host name: a rewrite would break it.
    mail = "Alcohol is common. Write to alcohol-related@example.org or see alcohol-related.example.org today."
    tokens, by_key = _read(engine, mail)
    risky = {"alcohol": Risky("alcohol", "group", None)}
    engine.generalizer.start_chain(risky["alcohol"], mail, by_key["alcohol"], tokens, context, entities, POLICY, set())
    compounds_of_flagged(
        engine.generalizer, RoundState(mail, by_key, risky, {}, tokens, context, entities, POLICY, set())
    )
    assert "alcohol-related" in by_key and "alcohol-related" not in risky


def test_a_hyphenated_compounds_head_is_read_in_the_texts_sense(engine: Engine) -> None:
    text = "In parliament the right-wing of the party voted against the budget, and the left-wing supported it."
    r = _start(engine, text, "right-wing", kin=False)
    # The party's wing, a social group; WordNet's first sense of "wing" (the organ of flight) before.
    assert _terms(r.chain)[:2] == ["wing", "social group"]


def test_a_phrase_k_counts_as_one_key_built_on_a_rewritten_word_is_written_as_its_head(engine: Engine) -> None:
    text = "The state flag was adopted in 1902. The state is small, and its physical condition was poor."
    tokens, by_key = _read(engine, text)
    context = engine._sense_evidence(by_key)
    entities = engine.entities_of(POLICY)
    state = Risky("state", "group", None)
    engine.generalizer.start_chain(state, text, by_key["state"], tokens, context, entities, POLICY, set())
    # "condition" rewritten elsewhere: "physical condition" is a term WordNet knows, with a chain of its own (and
    # one the engine writes as a generalization), so it is not rewritten for its word.
    risky = {"state": state, "condition": Risky("condition", "group", None)}
    compounds_of_flagged(
        engine.generalizer, RoundState(text, by_key, risky, {}, tokens, context, entities, POLICY, set(risky))
    )
    flag = risky["state flag"]  # K's phrase the taxonomy lacks: it showed the "state" the text replaced
    assert flag.reason == REASON and flag.current is not None and flag.current.term == "flag"
    assert "physical condition" in by_key and "physical condition" not in risky
