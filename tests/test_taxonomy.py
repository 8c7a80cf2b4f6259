from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import ConfigError
from gateway.model.taxonomy import ChainedTaxonomy, Sense, choose_sense
from gateway.taxonomy.org import OrgTaxonomy
from gateway.taxonomy.wordnet import WordNet, prepare_data_root


def test_wordnet_chain_for_an_instance(wordnet: WordNet) -> None:
    chain = [g.term for g in wordnet.generalizations("Los Angeles")]
    assert chain[0] == "city"  # instance hypernym first, the most specific
    assert "municipality" in chain
    assert chain.index("city") < chain.index("municipality")


def test_wordnet_synonyms_are_lexicalizations_not_lemma_accidents(wordnet: WordNet) -> None:
    assert "human immunodeficiency virus" in wordnet.synonyms("HIV")
    assert "acquired immune deficiency syndrome" in wordnet.synonyms("AIDS")
    assert "aid" not in wordnet.synonyms("AIDS")  # synsets("aids") also finds "aid"
    assert "Catholic" in wordnet.synonyms("Catholicism")  # a derived form


def test_wordnet_needs_the_debian_database(tmp_path: Path) -> None:
    from gateway.errors import TaxonomyError

    with pytest.raises(TaxonomyError, match="wordnet-base"):
        prepare_data_root(tmp_path / "root", source=tmp_path / "nowhere")


def test_sense_choice_uses_context_and_capitalization() -> None:
    senses = [
        Sense(id="mass.n.01", lemmas=("mass",), gloss="the property of a body that causes weight", frequency=35),
        Sense(id="mass.n.04", lemmas=("Mass",), gloss="the celebration of the Eucharist", frequency=10, proper=True),
    ]
    assert choose_sense(senses, context={"church", "eucharist"}, capitalized=True) is senses[1]
    assert choose_sense(senses, context={"body", "gravity"}, capitalized=False) is senses[0]


def test_mostly_non_noun_words_get_no_noun_sense(wordnet: WordNet) -> None:
    assert wordnet.senses("opposite") == []  # used as adjective/preposition far more often
    assert wordnet.senses("drama")


def test_org_taxonomy_comes_first_and_continues_in_wordnet(wordnet: WordNet, tmp_path: Path) -> None:
    f = tmp_path / "tax.toml"
    f.write_text('[parents]\n"Truvada" = "antiretroviral drug"\n"antiretroviral drug" = "drug"\n', encoding="utf-8")
    org = OrgTaxonomy.load(f, lemmatize=wordnet.lemmatize)
    tax = ChainedTaxonomy(org, wordnet)
    chain = [g.term for g in tax.generalizations("Truvada")]
    assert chain[:2] == ["antiretroviral drug", "drug"]
    assert "agent" in chain[2:]  # WordNet continues: drug -> agent -> ...
    assert tax.senses("Truvada")[0].id.startswith("org:")


def test_org_taxonomy_rejects_cycles_and_bad_files(wordnet: WordNet, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cycle"):
        OrgTaxonomy({"a drug": "b drug", "b drug": "a drug"}, lemmatize=wordnet.lemmatize)
    f = tmp_path / "bad.toml"
    f.write_text("[parents\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid TOML"):
        OrgTaxonomy.load(f, lemmatize=wordnet.lemmatize)
    f.write_text("parents = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="'parents'"):
        OrgTaxonomy.load(f, lemmatize=wordnet.lemmatize)


def test_verbs_generalize_through_verb_hypernyms(wordnet: WordNet) -> None:
    senses = wordnet.other_senses("bitten")
    assert senses and all(s.pos in ("v", "a") for s in senses)
    best = max(senses, key=lambda s: s.frequency)
    assert best.id == "bite.v.01"  # SemCor's commonest sense: with the teeth
    chain = wordnet.generalizations("bitten", best.id)
    assert chain[0].term == "grip" and all(g.pos == "v" for g in chain)


def test_adjectives_generalize_to_adjectives(wordnet: WordNet) -> None:
    # A relational adjective: the adjectives that pertain to its noun's hypernyms.
    assert wordnet.generalizations("Methodist", "methodist.a.01")[0].term == "denominational"
    catholic = [g.term for g in wordnet.generalizations("Catholic", "catholic.a.01")]
    assert "Christian" in catholic
    # No adjective pertains to "microorganism": the noun stands before the noun it modifies.
    viral = wordnet.generalizations("viral", "viral.a.01")
    assert viral[0].term == "microorganism" and viral[0].pos == "a"
    # A satellite: its head adjective.
    assert [g.term for g in wordnet.generalizations("tropical", "tropical.s.01")] == ["equatorial"]
    assert wordnet.other_senses("infection") == [] or all(s.pos != "n" for s in wordnet.other_senses("infection"))


def test_a_word_is_judged_by_its_base_form_counts(wordnet: WordNet) -> None:
    assert wordnet.senses("causes") == []  # "it causes": the verb "cause" is far commoner
    assert wordnet.senses("conditions")  # a noun of its own, and the plural of "condition"


def test_conjugation_follows_the_original_form(wordnet: WordNet) -> None:
    assert wordnet.conjugate("grip", "bitten") == "gripped"
    assert wordnet.conjugate("make", "causes") == "makes"
    assert wordnet.conjugate("pass on", "transmitted") == "passed on"
    assert wordnet.conjugate("give", "infecting") == "giving"
    assert wordnet.conjugate("give", "infect") == "give"


def test_sense_choice_weighs_what_the_text_says_most(wordnet: WordNet) -> None:
    senses = wordnet.senses("Colorado")
    state = next(s for s in senses if "state" in " ".join(s.kinds))
    # An article about a city of the state says "state" often and "river" now and then; one about
    # the river the other way round.
    assert choose_sense(senses, context={"state": 2.0, "river": 1.0, "city": 2.0}, capitalized=True) is state
    chosen = choose_sense(senses, context={"river": 2.0, "canyon": 1.6, "state": 1.0}, capitalized=True)
    assert chosen is not None and chosen.kinds == ("river",)


def test_the_word_every_sense_shares_does_not_choose_the_shortest_gloss(wordnet: WordNet) -> None:
    senses = wordnet.senses("jaundice")
    assert [s.id for s in senses][:2] == ["jaundice.n.01", "bitterness.n.02"]
    # The term weighs most in its own text; it stands in both senses' words, and counted it made the shorter
    # gloss ("a rough and bitter manner") win over the longer one that holds "symptom".
    context = {"jaundice": 5.5, "symptom": 1.0, "seizure": 3.9, "coma": 4.4}
    assert choose_sense(senses, context=context, capitalized=False) is senses[0]
    severe = wordnet.senses("severe")
    if severe:  # an adjective: in the noun senses only when the database reads it so
        assert choose_sense(severe, context={"severe": 3.0}, capitalized=False) is severe[0]


def test_a_senses_own_words_still_choose_it() -> None:
    senses = [
        Sense(id="bank.n.01", lemmas=("bank",), gloss="sloping land beside a river", frequency=20),
        Sense(id="bank.n.02", lemmas=("bank",), gloss="a financial institution that accepts deposits", frequency=25),
    ]
    assert choose_sense(senses, context={"bank": 5.0, "river": 1.0}, capitalized=False) is senses[0]
    assert choose_sense(senses, context={"bank": 5.0}, capitalized=False) is senses[1]  # the likelier by its counts
