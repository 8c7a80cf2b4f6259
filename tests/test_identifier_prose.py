"""Where a finding ends in formal prose (gateway/model/identifiers/prose.py): the words beside a found value that
belong to it, which TAB's annotators count as the value's tokens and which, left beside a placeholder, say part
of what it hid.

The sentences are our own, written for these tests in the manner of a court's judgment; none is taken from the
TAB documents.
"""

from __future__ import annotations

import pytest

from gateway.model.identifiers import Analyzer, remove_identifiers, resolve_kinds
from gateway.model.records import SanitizePolicy
from gateway.taxonomy.wordnet import WordNet

ALL = resolve_kinds(["all"])
SAFE_HARBOR = resolve_kinds(["safe-harbor"])


@pytest.fixture(scope="module")
def analyzer(wordnet: WordNet) -> Analyzer:
    from gateway.taxonomy.lexicon import WordNetLexicon

    return Analyzer(lexicon=WordNetLexicon(wordnet))


def found(analyzer: Analyzer, text: str, kinds: frozenset[str] = ALL) -> list[tuple[str, str]]:
    return [(f.kind, f.text) for f in analyzer.analyze(text, kinds)]


def replaced(analyzer: Analyzer, text: str, kinds: frozenset[str] = SAFE_HARBOR) -> str:
    return remove_identifiers(text, analyzer, SanitizePolicy(entities=(), identifiers=kinds)).text


def test_a_courts_name_in_its_own_language_is_part_of_its_name(analyzer: Analyzer) -> None:
    text = "The appeal went to the Regional Administrative Court (krajský správní soud), which dismissed it."
    assert ("ORG", "Regional Administrative Court (krajský správní soud)") in found(analyzer, text)
    # A foreign word of the gloss that the capitals alone read as a surname is the gloss's, not a person.
    text = "Her complaint reached the Supreme Court (Najvyšší súd) in Bratislava."
    assert found(analyzer, text) == [("ORG", "Supreme Court (Najvyšší súd)"), ("LOC", "Bratislava")]
    # Brackets that hold English, a person, or an acronym's aside stay out of the name.
    for text, name in [
        ("The case went to the Regional Court (see below) on appeal.", "Regional Court"),
        ("The Labour Court (Larry Dodd presiding) sat in March.", "Labour Court"),
        ("The claim went to the Labour Court (Dodd) in March.", "Labour Court"),
        ("It ran on the CPU (gnuradio) of the FPGA.", "CPU"),
    ]:
        names = [value for kind, value in found(analyzer, text) if kind != "PERSON"]
        assert name in names and not any("(" in value for value in names), text


def test_a_name_owned_by_another_is_one_name(analyzer: Analyzer) -> None:
    text = "He wrote to the Tenants’ Housing Grant office and to the Auditors' Department of the Ministry of Finance."
    assert found(analyzer, text) == [
        ("MISC", "Tenants’ Housing Grant"),
        ("ORG", "Auditors' Department of the Ministry of Finance"),
    ]
    assert replaced(analyzer, text, ALL) == "He wrote to the [MISC] office and to the [ORGANIZATION 1]."
    assert ("ORG", "Court of Cassation’s Registry") in found(analyzer, "He wrote to the Court of Cassation’s Registry.")
    # A found person is never taken into a thing's name, nor a contraction.
    assert ("MISC", "Housing Grant") in found(analyzer, "That's Housing Grant money.")


def test_a_place_keeps_the_kind_of_place_it_is(analyzer: Analyzer) -> None:
    text = "They moved from Ankara province to the province of Antalya, then to Lyon city."
    assert [v for k, v in found(analyzer, text, SAFE_HARBOR) if k == "LOC"] == [
        "Ankara province",
        "province of Antalya",
        "Lyon city",
    ]
    assert replaced(analyzer, text) == "They moved from [PLACE 1] to the [PLACE 2], then to [PLACE 3]."


def test_days_and_months_that_share_a_date_are_one_date(analyzer: Analyzer) -> None:
    text = "The hearings were held on 3 and 4 May 2001, in January, March and July 1987, and between 1975 and 1979."
    assert found(analyzer, text, SAFE_HARBOR) == [
        ("DATE", "3 and 4 May 2001"),
        ("DATE", "January, March and July 1987"),
        ("DATE", "between 1975 and 1979"),
    ]
    # Safe Harbor keeps the year and nothing of the days or months (the former code left "3 and", "January,
    # March and" beside the year).
    assert replaced(analyzer, text) == "The hearings were held in 2001, in 1987, and between 1975 and 1979."
    # A number before a date after a comma is not a day of it: a case number or a paragraph and a judgment's date.
    for text in ("See nos. 12345/01 and 12346/01, 14 May 2006.", "See Article 5 § 4, 14 May 2006."):
        assert ("DATE", "14 May 2006") in found(analyzer, text), text


def test_a_part_of_a_month_is_part_of_the_date_and_stays_with_the_year(analyzer: Analyzer) -> None:
    text = "At the end of August 2015 and in early October 1997 she moved."
    assert found(analyzer, text, SAFE_HARBOR) == [("DATE", "end of August 2015"), ("DATE", "early October 1997")]
    assert replaced(analyzer, text) == "At the end of 2015 and in early 1997 she moved."
    assert replaced(analyzer, text, ALL) == "At the [DATE] and in [DATE] she moved."


def test_an_age_written_as_years_is_an_age(analyzer: Analyzer) -> None:
    text = "She was 47 years of age when her son, then twenty-three years old, left."
    assert found(analyzer, text) == [("AGE", "47 years of age"), ("DURATION", "twenty-three years old")]
    # Under Safe Harbor an age under 90 stays as written; one over 89 is one of "90 or older" (the age pattern reads
    # "years of age" as it reads "years old": before, only the duration's widening did, and Safe Harbor asks for no
    # durations, so "92 years of age" stayed).
    assert replaced(analyzer, text) == text
    older = "She was 92 years of age, then ninety-four years of age."
    assert found(analyzer, older, SAFE_HARBOR) == [("AGE", "92 years of age"), ("AGE", "ninety-four years of age")]
    assert "92" not in replaced(analyzer, older) and "ninety-four" not in replaced(analyzer, older)


def test_an_amount_with_its_currencys_country_is_one_amount(analyzer: Analyzer) -> None:
    assert found(analyzer, "He was ordered to pay 4,500 Danish kroner.") == [("QUANTITY", "4,500 Danish kroner")]
