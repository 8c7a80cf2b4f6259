"""A rebuilt message writes what no decision touched as it was read, and says the same as before.

The serializer (extractors/serialize.py) writes header fields the parser made and nothing replaced as the
sender folded them, instead of folding every field again through compat32; ``_encoded`` gives a short
ASCII value back without the header registry's parse and fold. Both are compared with the old path
(compat32's generator, the registry's fold) as definitions, on crafted messages and on the archive.
"""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Iterator

import pytest
from archive import ARCHIVE, archive_messages
from hypothesis import given
from hypothesis import strategies as st

import extractors.mail as mail
from extractors.limits import Limits
from extractors.mail import _encoded, _raw_headers, _unicode
from extractors.pipeline import SEE_ALL, _compose, extract, process
from extractors.serialize import _CRLF, _LINE_END, crlf, short_line
from gateway.model.engine import Engine
from gateway.model.identifiers import Analyzer, resolve_kinds
from gateway.model.records import SanitizePolicy
from gateway.model.rewrite import Edit, TextEdit, compose
from gateway.taxonomy.lexicon import WordNetLexicon
from gateway.taxonomy.wordnet import WordNet

OLD_OUT = email.policy.compat32.clone(linesep="\r\n")
REGISTRY = email.policy.default.clone(linesep="\r\n")
IDS = [SanitizePolicy(entities=("HIV",), alpha=1.5, identifiers=resolve_kinds(["safe-harbor"]))]


def registry_fold(name: str, value: str) -> str:
    """The definition ``_encoded`` keeps: the header registry's parse and fold."""
    folded: str = REGISTRY.header_factory(name, value).fold(policy=REGISTRY)
    return folded.split(":", 1)[1].strip()


def old_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mail, "as_bytes", lambda message, _parsed: message.as_bytes(policy=OLD_OUT))


@pytest.fixture(scope="module")
def analyzer(wordnet: WordNet) -> Analyzer:
    return Analyzer(lexicon=WordNetLexicon(wordnet))


MESSAGE = (
    b"Received: from relay.example.org (relay.example.org [192.0.2.7])\n"
    b"\tby mx.example.com (Postfix) with ESMTPS id 4AbCdE\n"
    b"\tfor <list@example.com>; Mon, 3 Mar 2025 10:00:00 +0000 (UTC)\n"
    b"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.org; s=k1; h=from:to:subject:date;"
    b" bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGhpcyBpcyBub3QgYSByZWFsIHNpZ25hdHVyZQ==\n"
    b"X-Long-Note: a list header that runs well past seventy-eight characters on one line, as senders write them\n"
    b"X-Folded:\n  starts on the next line\n"
    b"From: Margaret Okonkwo <m.okonkwo@example.org>\n"
    b"To: list@example.com\n"
    b"Subject: results for HIV testing\n"
    b"Date: Mon, 3 Mar 2025 10:00:00 +0000\n"
    b"Message-ID: <abc@example.org>\n"
    b"MIME-Version: 1.0\n"
    b"Content-Type: text/plain; charset=us-ascii\n"
    b"\n"
    b"Hello all,\n\nthe HIV results are in.\n\nRegards,\nMargaret Okonkwo\n"
)


def fields(data: bytes) -> Iterator[bytes]:
    """The header fields of a message's top level, each with its folding, CRLF-ended."""
    head = data.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    for f in re.split(rb"\n(?![ \t])", head):
        yield f.replace(b"\n", b"\r\n") + b"\r\n"


def test_untouched_fields_leave_as_they_came(engine: Engine, analyzer: Analyzer) -> None:
    out = process(MESSAGE, engine=engine, policies=IDS, name="m.eml", identifiers=analyzer).data
    changed = {b"From", b"Subject"}
    kept = [f for f in fields(MESSAGE) if f.split(b":", 1)[0] not in changed]
    assert len(kept) == 9
    for f in kept:
        assert f in out, f  # folding, tabs and the line past 78 characters as sent
    assert b"X-Folded:\r\n  starts on the next line\r\n" in out  # no blank added after the colon
    assert b"Okonkwo" not in out and b"HIV" not in out
    # The fields a decision touched are folded as compat32 folds them, as before.
    msg = email.message_from_bytes(out, policy=email.policy.compat32)
    for name in ("From", "Subject"):
        value = msg[name]
        assert OLD_OUT.fold_binary(name, value) in out


def test_the_old_generator_refolded_what_it_never_changed(engine: Engine, analyzer: Analyzer,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # What the verbatim path is for: the same message through compat32's generator loses the sender's folding.
    old_rebuild(monkeypatch)
    out = process(MESSAGE, engine=engine, policies=IDS, name="m.eml", identifiers=analyzer).data
    assert not all(f in out for f in fields(MESSAGE) if f.split(b":", 1)[0] not in {b"From", b"Subject"})


def header_values(*, every_field: bool = False) -> list[tuple[str, str]]:
    values = [
        ("Subject", "Re: [USRP-users] B210 on [PERSON 1] systems"),
        ("Subject", "  padded  "),
        ("Subject", "two  blanks"),
        ("Subject", "tab\there"),
        ("Subject", "=?utf-8?q?encoded?="),
        ("Subject", "x" * 80),
        ("From", '"[PERSON 1]" <a@example.org>'),
        ("From", '"[PERSON 1], [PERSON 2] (US 333G) via USRP-users" <usrp-users@lists.ettus.com> (US 333G)'),
        ("To", '"[PERSON 1] D. Leech" <p@example.com>, "[EMAIL]" <usrp-users@lists.example.com>'),
        ("X-Mailer", "[PERSON 1] "),
        ("Subject", "caf\u00e9"),
    ]
    if ARCHIVE.exists():
        for data in archive_messages(300):
            msg = email.message_from_bytes(data, policy=email.policy.compat32)
            for part in msg.walk():
                for name, raw in _raw_headers(part):
                    if not every_field and not (mail._UNSTRUCTURED(name) or name.lower() in mail.ADDRESS_HEADERS):
                        continue  # a structured field (Date, Content-Type): structure, never written by a setter
                    value = _unicode(raw)
                    values.append((name, value))
                    # What a setter writes back: the same value with a capitalised word replaced.
                    values.append((name, re.sub(r"\b[A-Z][a-z]{3,}\b", "[PERSON 1]", value, count=1)))
    return values


def test_encoded_gives_what_the_registry_gives() -> None:
    values = header_values()
    fast = addresses = 0
    for name, value in values:
        try:
            want = registry_fold(name, value)
        except Exception:
            continue  # a value the registry cannot parse: no setter writes it
        assert _encoded(name, value) == want, (name, value)
        fast += short_line(name, value.strip())
        addresses += name.lower() in mail.ADDRESS_HEADERS
    assert fast > 20 and fast < len(values) and addresses > 10  # both paths are taken, addresses too


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_archive_messages_rebuilt_say_what_the_old_rebuild_said(engine: Engine, analyzer: Analyzer,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    def read(data: bytes) -> list[tuple[str, str]]:
        return [(s.part, " ".join(s.text.split()))
                for s in extract(data, "mail", name="m", limits=Limits(), policy=SEE_ALL).segments]  # fmt: skip

    def payloads(data: bytes) -> list[object]:
        msg = email.message_from_bytes(data, policy=email.policy.compat32)
        return [p.get_payload(decode=True) for p in msg.walk() if not p.is_multipart()]

    messages = archive_messages(60)
    new = [process(d, engine=engine, policies=IDS, name="m", kind="mail", identifiers=analyzer) for d in messages]
    old_rebuild(monkeypatch)
    old = [process(d, engine=engine, policies=IDS, name="m", kind="mail", identifiers=analyzer) for d in messages]
    verbatim = 0
    for data, a, b in zip(messages, old, new, strict=True):
        assert b.changed and a.decisions == b.decisions
        assert read(b.data) == read(a.data)  # the same text everywhere, up to the blanks of a folding
        assert payloads(b.data) == payloads(a.data)  # every part's content, byte for byte
        verbatim += sum(f in b.data for f in fields(data))
        assert b.data.count(b"\r\n") == b.data.count(b"\n")  # CRLF throughout
    assert verbatim > 60 * 10  # most fields of the archive's messages leave as they came


@given(st.text(alphabet="ab \n", min_size=0, max_size=40), st.lists(st.tuples(st.integers(0, 40), st.integers(0, 6),
       st.text(alphabet="XY", max_size=3)), max_size=8))  # fmt: skip
def test_first_policy_edits_compose_as_compose_does(text: str, raw: list[tuple[int, int, str]]) -> None:
    edits = [TextEdit(min(a, len(text)), min(a + n, len(text)), t) for a, n, t in raw]
    want = compose([], text, [Edit(e.start, e.end, e.text, e.start) for e in edits])
    assert _compose([], text, edits) == want
    base = [TextEdit(0, min(1, len(text)), "Z")]  # with edits before it, compose itself is used
    assert _compose(base, text, edits) == compose(base, text, [Edit(e.start, e.end, e.text, e.start) for e in edits])


def test_a_short_line_is_written_as_compat32_folds_it() -> None:
    # A field a setter replaced (Subject, a display name, Content-Type's file name, a new transfer encoding)
    # skips compat32's Header algorithm when it fits on a line: the bytes must be the ones it would write.
    short = 0
    for name, value in header_values(every_field=True):
        value = value.strip()
        if short_line(name, value):
            short += 1
            assert OLD_OUT.fold_binary(name, value) == f"{name}: {value}\r\n".encode("ascii", "surrogateescape")
    assert short > 100


@given(st.lists(st.sampled_from(["a", " ", "\r", "\n", "\r\n", "\r\r", "\n\r", "\u2028", "\x85"]), max_size=30))
def test_line_ends_are_made_crlf_as_the_generator_does(pieces: list[str]) -> None:
    text = "".join(pieces)
    # crlf skips the regex when no line end needs changing or only bare line feeds do; what it writes is the same.
    assert crlf(text) == _LINE_END.sub(_CRLF, text)


@given(
    st.text(
        alphabet=st.sampled_from(["a", "Z", "1", " ", "%", "#", "é", "ß", "½", "٣", "\u2160", "中", "_"]), max_size=12
    )
)
def test_an_attribute_value_has_a_letter_as_isalpha_says(value: str) -> None:
    from extractors.html import _has_letter

    # The HTML scanner's test for a value worth reading: a search in C for ASCII values, isalpha for the others.
    assert _has_letter(value) == any(ch.isalpha() for ch in value)
