"""What identifiers cost a worker besides the pass: the keys of replaced values, the rebuild of a rewritten
message and the check of it. Each shortcut gives what the plain definition gives."""

from __future__ import annotations

import pytest

from gateway.model.terms import key_of, normalize_word, phrase_key, tokenize
from gateway.taxonomy.wordnet import WordNet

KEY_EDGES = [
    "usrp-users@lists.ettus.com",
    "http://lists.ettus.com/mailman/listinfo/usrp-users_lists.ettus.com",
    "Rob Kossler",
    "O’Brien’s notes",  # the typographic apostrophe: the tokenizer normalizes the word with "'"
    "O'Brien's notes",
    "John’s",
    "H.I.V. and U.S. patients",
    "AIDS",
    "the children of the Smiths",
    "std::cout and usrp->get_rx()",
    "Std::Cout and 3Com",  # code and a number glued to a word: their norm is their text
    "555-123-4567 ext. 12",
    "1ST 2nd 3RD",
    "１２３ ｆｕｌｌ ｗｉｄｔｈ",  # full width digits and letters
    "café Zürich Ørsted",
    "[PERSON 1] and [EMAIL]",
    "192.168.10.2",
    "B210 X300 USB3",
    "",
    "   ",
    "gnu c",
    "Calibri_Light",
]


def _by_definition(text: str, lemmatize: object) -> str:
    """The key as it was defined: the tokens' words, each normalized again by ``phrase_key``."""
    return phrase_key([t.text for t in tokenize(text.replace("_", " "), lemmatize)], lemmatize)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", KEY_EDGES)
def test_a_key_is_what_its_definition_gives(wordnet: WordNet, text: str) -> None:
    assert key_of(text, wordnet.lemmatize) == _by_definition(text, wordnet.lemmatize)


def test_the_key_edges_are_exercised(wordnet: WordNet) -> None:
    # Tokens whose norm is not their word normalized again must be among the edges, or the comparison above would
    # not tell a key that takes the norm of every token from the definition.
    differ = {
        t.text
        for text in KEY_EDGES
        for t in tokenize(text.replace("_", " "), wordnet.lemmatize)
        if t.norm != normalize_word(t.text, wordnet.lemmatize)
    }
    assert differ >= {"O’Brien", "１２３", "3Com", "Std"}


def test_a_key_normalizes_each_word_once(wordnet: WordNet) -> None:
    asked: list[str] = []

    def lemmatize(word: str) -> str:
        asked.append(word)
        return wordnet.lemmatize(word)

    assert key_of("patients with kidneys", lemmatize) == "patient with kidney"
    assert asked.count("patients") == 1 and asked.count("kidneys") == 1


ADDR_SPECS = [
    "nbalkanas@gmail.com",
    "usrp-users@lists.ettus.com",
    '"john doe"@example.org',  # a quoted local part: quoted again by addr_spec
    '"a\\"b"@example.org',
    "o'brien+tag@example.co.uk",
    "user@[192.168.10.2]",  # a domain literal
    "postmaster",  # no domain
    "",
    "a@b@c",  # more than one addr-spec: the parse stops, the constructor raises
    "bad address@example.org",
    "line\nbreak@example.org",
    "ünïcode@exämple.org",
]
NAMES = ["", "[PERSON 1]", "Rob Kossler", "Doe, John", "[PERSON 1] via USRP-users", "line\nend"]


def _outcome(make: object) -> tuple[str, str, str, str] | str:
    try:
        a = make()  # type: ignore[operator]
    except Exception as exc:  # the same error, of the same type, or none
        return f"{type(exc).__name__}: {exc}"
    return (a.display_name, a.username, a.domain, str(a))


@pytest.mark.parametrize("spec", ADDR_SPECS)
def test_a_renamed_address_is_what_the_constructor_gives(spec: str) -> None:
    from email.headerregistry import Address

    from extractors import mail

    mail._ADDR_SPECS.clear()
    for name in NAMES:
        for _ in range(2):  # the first time parsed, then from what was kept
            expected = _outcome(lambda n=name: Address(display_name=n, addr_spec=spec))
            assert _outcome(lambda n=name: mail._address(n, spec)) == expected


def test_the_address_edges_are_exercised() -> None:
    from email.headerregistry import Address

    kinds = {type(_outcome(lambda s=s: Address(display_name="x", addr_spec=s))) for s in ADDR_SPECS}
    assert kinds == {tuple, str}  # addresses made and addresses refused


def test_a_renamed_address_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import email._header_value_parser as parser

    from extractors import mail

    mail._ADDR_SPECS.clear()
    parsed: list[str] = []
    real = parser.get_addr_spec

    def get_addr_spec(value: str) -> object:
        parsed.append(value)
        return real(value)

    monkeypatch.setattr(parser, "get_addr_spec", get_addr_spec)
    written = [str(mail._address(name, "rkossler@nd.edu")) for name in ("[PERSON 1]", "[PERSON 2]", "Rob")]
    assert written == ['"[PERSON 1]" <rkossler@nd.edu>', '"[PERSON 2]" <rkossler@nd.edu>', "Rob <rkossler@nd.edu>"]
    assert parsed == ["rkossler@nd.edu"]
