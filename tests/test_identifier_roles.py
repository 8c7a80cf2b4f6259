"""Who wrote a part of a message: a person (the body, a Subject, a sender's name) or a program (X-AntiAbuse, a log
the sender pasted). A capital alone makes no name in a program's text; every name a person wrote is still found."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from extractors.base import SEPARATOR
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


def people(analyzer: Analyzer, text: str, roles: tuple[str, ...] = ()) -> set[str]:
    found = analyzer.analyze(text, SAFE_HARBOR, roles=roles) if roles else analyzer.analyze(text, SAFE_HARBOR)  # type: ignore[arg-type]
    return {f.text for f in found if f.kind == "PERSON"}


def sanitized(engine: Engine, analyzer: Analyzer, msg: EmailMessage) -> str:
    return process(msg.as_bytes(), kind="mail", engine=engine, policies=[POLICY], identifiers=analyzer).data.decode()


def clinic_mail() -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Adaeze Okonkwo <a.okonkwo@clinic.example.org>"
    msg["To"] = "Wards <wards@clinic.example.org>"
    msg["Subject"] = "Discharge plan for Mrs Quackenbush, bed 4 (Wielgosz to review)"
    msg["X-AntiAbuse"] = "Primary Hostname - mx2.clinic.example.org"
    msg["X-Mailer"] = "Microsoft Outlook 16.0"
    msg["X-Platform"] = "Java Linux"
    # A program's field that holds a person's name with its address beside it, and one that repeats a surname
    # the body names.
    msg["X-Original-From"] = "Tomasz Zielinski <tomasz.zielinski@clinic.example.org>"
    msg["X-Referral"] = "Lindqvist ward round"
    msg.set_content(
        "Hi team,\n\n"
        "Patient: Thandiwe Mbeki\n"
        "Attending: Dr Fenwick\n"
        "Seen by Lindqvist on the ward round; Wielgosz agrees.\n"
        "| Next of kin | Oyelaran |\n\n"
        "Regards,\n"
        "Ngozi Eze\n"
    )
    return msg


def test_a_programs_header_gives_no_name_by_its_capitals(engine: Engine, analyzer: Analyzer) -> None:
    """X-Platform is written by a program: "Java Linux", words the dictionary knows, is no one's name. Read as prose,
    it is a person. (X-AntiAbuse's "Primary Hostname" stays one: the dictionary cannot tell "Hostname" from a
    surname it does not know, and a name a program writes must not pass.)"""
    out = sanitized(engine, analyzer, clinic_mail())
    assert "X-Platform: Java Linux" in out
    assert "Microsoft Outlook 16.0" in out


@pytest.mark.parametrize(
    "name",
    [
        "Okonkwo",  # the From display name
        "Adaeze",
        "Quackenbush",  # the Subject is a person's text: a title-led name
        "Wielgosz",  # and a surname alone there, no title, no census
        "Thandiwe Mbeki",  # a labelled line
        "Fenwick",
        "Lindqvist",  # the body's surname, repeated in a program's field
        "Oyelaran",  # a plain-text table's cell
        "Ngozi Eze",  # a signature
        "Tomasz Zielinski",  # a program's field, with the address that spells the name beside it
    ],
)
def test_every_name_a_person_wrote_is_still_found(engine: Engine, analyzer: Analyzer, name: str) -> None:
    out = sanitized(engine, analyzer, clinic_mail())
    assert name not in out


def test_roles_follow_the_parts_of_the_text(analyzer: Analyzer) -> None:
    """The same words read as a program's part and as a person's."""
    program, person = "built on Java Linux - mx2", "Seen by Wielgosz today."
    text = program + SEPARATOR + person
    assert people(analyzer, text, ("machine", "prose")) == {"Wielgosz"}
    assert people(analyzer, text) == {"Java Linux", "Wielgosz"}  # no roles: all prose, as before
    # A program's part gives the names shown by more than capitals: a title, a name the census lists, a name
    # found in a person's part.
    text = "Okonkwo ref Dr Fenwick\nMary Jones cc" + SEPARATOR + "Seen by Okonkwo."
    assert {"Dr Fenwick", "Mary Jones", "Okonkwo"} <= people(analyzer, text, ("machine", "prose"))
    # Folded text (a soft hyphen) keeps its parts.
    text = "built on Java Li\u00adnux" + SEPARATOR + "Seen by Wiel\u00adgosz."
    assert people(analyzer, text, ("machine", "prose")) == {"Wiel\u00adgosz"}


@pytest.mark.parametrize(
    "text",
    [
        "[INFO] [UHD] linux; GNU C++ version 9.3.0; Boost_107100\n",
        "> [WARNING] [B200] Java Linux build unlocked\n",
        "|   |   |       Java Linux: A\n|   |   |   range: 50.000 to 6000.000 MHz\n",
        "[INFO]\n            [UHD] linux; GNU C++ version 9.3.0\n",  # a level alone on its line, as HTML wraps it
        # The lines after a program's line in the same paragraph are its output too.
        "[INFO] [UHD] linux; GNU C++ version 9.3.0\nUsing Device: Single USRP:\n    Java Linux: A\n",
    ],
)
def test_a_line_a_program_printed_gives_no_name_by_its_capitals(analyzer: Analyzer, text: str) -> None:
    assert people(analyzer, text) == set()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("| Next of kin | Oyelaran |\n", "Oyelaran"),  # a table closes its rows with a bar, a tree does not
        ("[EXTERNAL] Oyelaran follow-up\n", "Oyelaran"),  # a tag, not a log's level
        ("Patient: Oyelaran\nBed: 4\n", "Oyelaran"),
        ("[INFO] [UHD] linux; GNU C++ version 9.3.0\n\nOyelaran reports no errors.\n", "Oyelaran"),  # a blank line
        ("[INFO] [UHD] linux\nRegards,\nNgozi Eze\n", "Ngozi Eze"),  # a signature shows a name anywhere
    ],
)
def test_a_persons_line_beside_a_programs_keeps_its_names(analyzer: Analyzer, text: str, name: str) -> None:
    assert name in people(analyzer, text)


def test_a_first_name_the_census_lists_is_found_in_a_programs_field(engine: Engine, analyzer: Analyzer) -> None:
    """The display name lists the first name after the surname and an office code; the program's field that spells
    the sender's address is where "Carl" is read as a name (the census lists it), and so in the display name too."""
    msg = EmailMessage()
    msg["From"] = '"Wolsieffer, Carl L. ERDC-RDE-CRL-NH CIV" <carl.wolsieffer@erdc.example.mil>'
    msg["To"] = "list@example.org"
    msg["Subject"] = "X310 timing"
    msg["X-Original-Sender"] = "Carl.L.Wolsieffer@erdc.example.mil"
    msg.set_content("The PPS input drifts.\n")
    out = sanitized(engine, analyzer, msg)
    assert "Carl L." not in out and "Wolsieffer, " not in out


def test_a_programs_text_keeps_the_names_it_carries(engine: Engine, analyzer: Analyzer) -> None:
    """Programs write patients' names too: an EHR's header, a laboratory system's log. A name no dictionary knows
    and the census does not list is still a person there (MISC is not a Safe Harbor kind: a name demoted to it
    passes through). Only a run whose every word is the program's vocabulary (words the dictionary knows,
    acronyms: "Java Linux") is a thing in a program's text."""
    msg = EmailMessage()
    msg["From"] = "Lab System <lims@clinic.example>"
    msg["To"] = "billing@insurer.example"
    msg["Subject"] = "result ready"
    msg["X-Patient"] = "Xiomara Quetzaltenango"
    msg["X-Referring"] = "Okonkwo-Baptiste"
    msg["X-EHR-Note"] = "[INFO] discharge summary for Ngozi Okonkwo-Baptiste filed"
    msg["X-Platform"] = "Java Linux"
    msg.set_content(
        "[INFO] patient Iolanthe Vrbanic discharged\n[ERROR] sample of Xiomara Quetzaltenango rejected\n"
        "[INFO] Patient Teodora Zhelyazkova admitted\n"  # a label the dictionary knows, before the name
    )
    out = sanitized(engine, analyzer, msg)
    for name in ("Xiomara", "Quetzaltenango", "Okonkwo", "Baptiste", "Iolanthe", "Vrbanic", "Teodora", "Zhelyazkova"):
        assert name not in out
    assert "X-Platform: Java Linux" in out


def test_a_content_type_parameter_nobody_defined_is_read_as_text(engine: Engine, analyzer: Analyzer) -> None:
    # Content-Type is structural, but a parameter outside the structure's own carries whatever was written in it.
    data = (
        b"From: a@example.org\r\nTo: b@example.com\r\nSubject: results\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: text/plain; charset=utf-8; x-patient="Dorota Wojciechowska, SSN 123-45-6789"\r\n'
        b"Content-Disposition: inline; x-note*0*=utf-8''Dorota%20Wojcie; x-note*1=chowska\r\n"
        b"\r\nThe results are in.\r\n"
    )
    out = process(data, kind="mail", engine=engine, policies=[POLICY], identifiers=analyzer).data.decode()
    assert "Wojciechowska" not in out and "Wojcie" not in out and "123-45-6789" not in out
    assert 'charset="utf-8"' in out and "x-patient=" in out and "x-note=" in out and "x-note*1" not in out
