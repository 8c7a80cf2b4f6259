"""What shows that a capitalised word found by its capital alone names a thing and not a person: the message's own
addresses show it as a domain's name, or the text writes a release number after it. A person's name stays one."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from extractors.pipeline import process
from gateway.model.engine import Engine
from gateway.model.identifiers import Analyzer, resolve_kinds
from gateway.model.records import SanitizePolicy
from gateway.taxonomy.wordnet import WordNet

SAFE_HARBOR = resolve_kinds(["safe-harbor"])
POLICY = SanitizePolicy(entities=(), identifiers=SAFE_HARBOR)


@pytest.fixture(scope="module")
def analyzer(wordnet: WordNet) -> Analyzer:
    from gateway.taxonomy.lexicon import WordNetLexicon

    return Analyzer(lexicon=WordNetLexicon(wordnet))


def people(analyzer: Analyzer, text: str, addresses: tuple[str, ...] = ()) -> set[str]:
    return {f.text for f in analyzer.analyze(text, SAFE_HARBOR, addresses=addresses) if f.kind == "PERSON"}


def mail(sender: str, body: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "list@example.org"
    msg["Subject"] = "Board bring-up"
    msg.set_content(body)
    return msg


def sanitized(engine: Engine, analyzer: Analyzer, msg: EmailMessage) -> str:
    return process(msg.as_bytes(), kind="mail", engine=engine, policies=[POLICY], identifiers=analyzer).data.decode()


def test_a_word_the_senders_domain_shows_is_no_person_by_its_capital(engine: Engine, analyzer: Analyzer) -> None:
    """A list's message comes from lists.vehere.example: "Vehere" is the company, and the From field shows it to
    every reader whatever the body says."""
    msg = mail("Dana via Radio-users <radio-users@lists.vehere.example>", "We asked Vehere about the board.\n")
    assert "We asked Vehere about the board." in sanitized(engine, analyzer, msg)


def test_a_surname_that_is_also_the_senders_domain_is_still_found(engine: Engine, analyzer: Analyzer) -> None:
    # A family's domain: the display name makes "Okonkwo" a person, and every other mention of it one too.
    msg = mail("Adaeze Okonkwo <ada@okonkwo.example>", "Okonkwo will call the ward after the scan.\n")
    assert "Okonkwo" not in sanitized(engine, analyzer, msg).split("\r\n\r\n", 1)[1]
    # Without the domain beside it, a surname alone is a person (the rule needs the address).
    assert people(analyzer, "We asked Vehere about the board.") == {"Vehere"}
    # A word the census lists as a surname stays a person even where a domain shows it.
    assert "Nguyen" in people(analyzer, "We asked Nguyen about it.", ("a@nguyen.example",))


def test_a_word_with_a_release_number_is_a_product_wherever_it_stands(analyzer: Analyzer) -> None:
    text = "I installed Vivado 2019.1 on Xubuntu 18.04.5 and then Vivado crashed. Xubuntu is fine."
    assert people(analyzer, text) == set()


@pytest.mark.parametrize(
    "text",
    [
        "Temperature: Okonkwo 37.5 overnight.",  # a measurement, not a release
        "Seen Okonkwo 12.03.61 in clinic.",  # a day, month and year
        "Visit Okonkwo 20.04 booked.",  # a day and month
        "Okonkwo 2.1 litres in.",
    ],
)
def test_a_name_before_a_number_that_is_no_release_stays_a_person(analyzer: Analyzer, text: str) -> None:
    assert "Okonkwo" in people(analyzer, text)


DEVICE_REPORT = (
    "Using Device: Single USRP:\n"
    "  RX Channel: 0\n    RX DSP: 0\n    RX Dboard: A\n    RX Subdev: FE-RX2\n"
    "  TX Channel: 0\n    TX DSP: 0\n    TX Dboard: A\n    TX Subdev: FE-TX2\n"
)


def test_a_devices_labels_are_no_people(analyzer: Analyzer) -> None:
    """An acronym that opens labels of several words at the start of lines, with codes for values: a device's
    report. As an HTML part writes it too, a line a part, indented with no-break spaces."""
    assert people(analyzer, DEVICE_REPORT) == set()
    html = "\n\n\u2029\n\n".join("\xa0 \xa0" + line.strip() for line in DEVICE_REPORT.splitlines())
    assert people(analyzer, html) == set()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # Initials before a surname: each initials open one label.
        ("JR Okonkwo: 4417\nAB Fenwick: 4418\nCD Lindqvist: 4419\n", "JR Okonkwo"),
        # Words in the values: a ward's note, though one acronym opens two labels.
        ("JR Okonkwo: stable overnight\nJR Lindqvist: discharged home\n", "JR Okonkwo"),
    ],
)
def test_labels_that_name_people_stay_people(analyzer: Analyzer, text: str, name: str) -> None:
    assert name in people(analyzer, text)


def test_a_word_after_a_measurement_is_a_unit_wherever_it_stands(analyzer: Analyzer) -> None:
    text = "Setting RX Rate: 25.000000 Msps...\nCan the E320 capture 56 Msps on two channels?"
    assert people(analyzer, text) == set()
    # A measurement, then a comma: the next word is no unit.
    assert "Okonkwo" in people(analyzer, "Temperature 37.5, Okonkwo reports chills.")
