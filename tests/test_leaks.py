"""Nothing unread leaves: the adversarial suite, and the verifier on its own.

Every crafted case (``adversarial.py``) hides an entity's name in one channel.
Sanitized at alpha = 1.5, each must either leave with no trace of the name,
checked here by a scanner of the test's own (decode every MIME part and
header, unzip every entry, inflate every PDF stream, fold spellings, search)
or be held with a typed error that names why. Few may be held.
"""

from __future__ import annotations

import email
import email.header
import email.policy
import io
import re
import unicodedata
import zipfile
import zlib
from email.message import Message

import pytest
from adversarial import Case, cases

from extractors.pipeline import plain_word, process
from gateway.errors import ContentError, TraceFoundError
from gateway.model.engine import Engine
from gateway.model.normalize import fold, undot
from gateway.model.records import Entity, SanitizePolicy
from gateway.verify import Needles, find_trace
from gateway.verify.layers import _CONTROL_BYTES, _HIGH_BYTES, _decode_text

CASES = cases()
MAX_HELD = 3  # of the non-PDF cases (today none)


def _test_scanner_texts(data: bytes, kind: str) -> list[str]:
    """A second, blunt reader: every layer decoded, for the test's own search."""
    out: list[str] = []
    if kind == "mail":
        msg = email.message_from_bytes(data, policy=email.policy.compat32)
        for part in msg.walk():
            for k, v in part.items():
                out.append(
                    str(email.header.make_header(email.header.decode_header(str(v)))) if "=?" in str(v) else str(v)
                )
                out.append(k)
            out.append(str(part.preamble or "") + str(part.epilogue or ""))
            fn = part.get_filename()
            out.append(fn or "")
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                out.extend(_test_scanner_texts(payload, "blob"))
        return out
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                out.append(info.filename)
                out.extend(_test_scanner_texts(z.read(info), "blob"))
        return out
    if data[:5] == b"%PDF-":
        for m in re.finditer(rb"stream\r?\n(.*?)endstream", data, re.S):
            try:
                out.extend(_test_scanner_texts(zlib.decompressobj().decompress(m.group(1)), "blob"))
            except zlib.error:
                out.append(m.group(1).decode("latin-1"))
        out.append(data.decode("latin-1"))
        return out
    for enc in ("utf-16",) if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ("utf-8", "latin-1"):
        try:
            text = data.decode(enc)
            break
        except UnicodeDecodeError:
            continue
    out.append(re.sub(r"<[^>]*>", "", text))
    out.append(text)
    return out


def _bluntly_named(data: bytes, kind: str, names: list[str]) -> bool:
    texts = [undot(fold(unicodedata.normalize("NFKC", t))) for t in _test_scanner_texts(data, kind)]
    import urllib.parse

    texts += [urllib.parse.unquote(t) for t in texts]
    return any(n in t for t in texts for n in names)


def _policy(case: Case) -> SanitizePolicy:
    return SanitizePolicy(entities=(case.entity,), alpha=1.5)


def _name(case: Case) -> str:
    return {"mail": "case.eml", "docx": "case.docx", "pdf": "case.pdf", "text": "notes.txt"}[case.kind]


def _outcome(engine: Engine, case: Case) -> str:
    """'clean' or 'held: <reason>'; fails the test on a leak."""
    try:
        outcome = process(case.data, engine=engine, policies=[_policy(case)], name=_name(case))
    except ContentError as exc:
        assert exc.reason and exc.message, "a held case says why"
        return f"held: {exc.reason}: {exc.message}"
    entity = engine.entity(case.entity)
    surface = [case.entity] + [k.upper() for k in entity.acronyms]
    assert not _bluntly_named(outcome.data, outcome.kind, surface), f"{case.name}: the name left"
    return "clean"


@pytest.mark.parametrize("case", [c for c in CASES if not c.pdf], ids=lambda c: c.name)
def test_crafted_case_is_delivered_clean_or_held(engine: Engine, case: Case) -> None:
    _outcome(engine, case)


@pytest.mark.parametrize("case", [c for c in CASES if c.pdf], ids=lambda c: c.name)
def test_crafted_pdf_case_never_leaks(engine: Engine, case: Case) -> None:
    # The PDF side of the extractors is issue 14's; whatever it does, the verifier must not let the name out.
    _outcome(engine, case)


# Spellings the engine reads as the name: sanitized and delivered, never left for the last check to hold.
DELIVERED = ("glued to digits after", "glued to digits before", "glued compound", "dotted acronym", "full width")


@pytest.mark.parametrize("name", DELIVERED)
def test_spelling_is_sanitized_not_held(engine: Engine, name: str) -> None:
    (case,) = [c for c in CASES if c.name == name]
    assert _outcome(engine, case) == "clean"


def test_few_crafted_cases_are_held(engine: Engine) -> None:
    held = [c.name for c in CASES if not c.pdf and _outcome(engine, c) != "clean"]
    assert len(held) <= MAX_HELD, held


def test_every_crafted_case_names_the_entity_before_sanitizing(engine: Engine) -> None:
    """The verifier, on its own: it sees the hidden name in every crafted input, whatever the channel."""
    missed = []
    for case in CASES:
        found = find_trace(case.data, case.kind, _needles(engine, [engine.entity(case.entity)]), part=case.name)
        if found is None:
            missed.append(case.name)
    assert not missed


def _needles(engine: Engine, entities: list[Entity]) -> Needles:
    return Needles(entities, is_plain_word=lambda w: plain_word(engine, w))


@pytest.mark.parametrize(
    "text",
    [
        "HIV", "43HIV", "HIV1", "HIVpositive", "患者HIV阳性", "H.I.V.", "ＨＩＶ", "H\u00adIV", "H\u200bIV",
        "\u041dIV", "the hiv test", "human immunodeficiency virus", "Human-Immunodeficiency Viruses",
        "H-I-V", "H-I-V-positive", "the h.i.v. test", "the h. i. v. test", "the h.i.v test",
    ],
)  # fmt: skip
def test_verifier_finds_every_spelling(engine: Engine, text: str) -> None:
    assert _needles(engine, [engine.entity("HIV")]).find(f"See {text} here.") is not None


@pytest.mark.parametrize(
    "text",
    [
        "ARCHIVE", "archive", "xHIVa", "hive", "the chivalry", "namespace std;", "std::cout", "She aids them.",
        "illegal", "Illinois", "he lost", "ill-fated", "a8VDk2Jx", "x9los7", "loss", "Losing", "LoS",
        "e.g. a hive", "X-Ray", "T-Shirt", "COVID-19", "www.h.i.com", "A-I-D", "s.t.d.io",
    ],
)  # fmt: skip
def test_verifier_ignores_ordinary_words(engine: Engine, text: str) -> None:
    entities = [engine.entity(n) for n in ("HIV", "AIDS", "sexually transmitted disease", "Los Angeles")]
    assert _needles(engine, entities).find(f"Note: {text} here.") is None


@pytest.mark.parametrize(
    ("entity", "text"),
    [
        ("HIV", "H\u0301IV"), ("HIV", "HI\u0323V\u0308"), ("HIV", "\u041d\u0301IV"), ("Catholicism", "Cathólicism"),
        ("Catholicism", "Catho\u0301lics"), ("Los Angeles", "Ángeles"), ("Los Angeles", "A\u030aNGELES"),
    ],
)  # fmt: skip
def test_verifier_reads_latin_letters_with_diacritics(engine: Engine, entity: str, text: str) -> None:
    # A reader reads "H\u0301IV" (no precomposed H with an acute: NFKC leaves the mark) and "Cathólicism" as the
    # names; before, neither the sanitizer nor the verifier did, and the message left as written.
    assert _needles(engine, [engine.entity(entity)]).find(f"See {text} here.") is not None


def test_verifier_keeps_the_marks_of_other_scripts_letters(engine: Engine) -> None:
    # Only a Latin letter's marks go: "й" stays "й" (not "и") whether or not the text also holds a Latin accent.
    from gateway.verify.needles import _bare

    assert _bare("Москва й é") == "Москва й e" and _bare("한국 é") == "한국 e"
    assert _needles(engine, [engine.entity("HIV")]).find("See Hélène and Zürich here.") is None


def test_a_name_written_with_a_combining_mark_is_held(engine: Engine) -> None:
    # The rewritten path (a plain HIV in the first part is generalized), where both checks read one parse.
    data = (
        "From: a@example.org\r\nTo: b@example.com\r\nSubject: hi\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\n'
        "Her HIV test came back.\r\n--B\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
        "Her H\u0301IV test came back.\r\n--B--\r\n"
    ).encode()
    with pytest.raises(TraceFoundError) as err:
        process(data, engine=engine, policies=[SanitizePolicy(entities=("HIV",), alpha=1.5)], name="m.eml")
    assert err.value.entity == "HIV" and err.value.part == "2 text/plain"


@pytest.mark.parametrize(
    "rtf",
    [r"{\rtf1 Her \u72?\u73?\u86? test.}", r"{\rtf1 Her \'48\'49\'56 test.}", r"{\rtf1\ansi Her H{\b I}V test.\par}"],
)
def test_an_rtf_part_is_read_as_rtf_shows_it(engine: Engine, rtf: str) -> None:
    # RTF is read as text by both checks: its escapes and the control words inside a word hid the name (sent as
    # written before); a reader's program shows "HIV".
    data = (
        "From: a@example.org\r\nTo: b@example.com\r\nSubject: hi\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nSee the notes.\r\n'
        f"--B\r\nContent-Type: application/rtf\r\n\r\n{rtf}\r\n--B--\r\n"
    ).encode()
    with pytest.raises(TraceFoundError) as err:
        process(data, engine=engine, policies=[SanitizePolicy(entities=("HIV",), alpha=1.5)], name="m.eml")
    assert err.value.location == "text as RTF shows it"


def test_verifier_skips_relay_trace_and_signatures() -> None:
    from gateway.verify import views

    data = (
        b"Received: from relay by mx id 1l81fX-0005VD-FB; Fri, 05 Feb 2021 09:01:07 -0500\r\n"
        b"DKIM-Signature: v=1; b=abcHIVdef\r\nFrom: a@example.org\r\nSubject: hi\r\n\r\nhello\r\n"
    )
    where = [v.location for v in views(data, "mail", part="m")]
    assert "header Subject" in where and "header Received" not in where and "header DKIM-Signature" not in where


@pytest.mark.parametrize(
    "text",
    ["AIDS-like", "Houstonians", "Chicago-style", "cocaine-induced", "Catholics"],
)
def test_verifier_finds_derived_and_compound_forms(engine: Engine, text: str) -> None:
    entities = [engine.entity(n) for n in ("AIDS", "Houston", "Chicago", "cocaine", "Catholicism")]
    assert _needles(engine, entities).find(f"Some {text} things.") is not None


def test_verifier_error_names_term_part_and_location(engine: Engine) -> None:
    data = (
        b"From: a@example.org\r\nTo: b@example.com\r\nSubject: hi\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nhello\r\n'
        b"--B\r\nContent-Type: image/png\r\nContent-Description: HIV chart\r\n\r\nxx\r\n--B--\r\n"
    )
    from extractors.pipeline import verify_output

    with pytest.raises(TraceFoundError) as err:
        verify_output(data, "mail", engine=engine, policies=[SanitizePolicy(entities=("HIV",))], name="m.eml")
    assert err.value.term.lower() == "hiv" and err.value.entity == "HIV"
    assert err.value.part == "2" and err.value.location == "header Content-Description"
    assert err.value.reason == "trace-found" and err.value.smtp_code == 451


def test_clean_mail_passes_byte_for_byte(engine: Engine) -> None:
    data = (
        b"From: Ann <a@example.org>\r\nTo: b@example.com\r\nSubject: Lunch\r\nX-Mailer: Thing 1.0\r\n"
        b"Keywords: lunch\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=B\r\n\r\n"
        b"This is a multi-part message in MIME format.\r\n--B\r\nContent-Type: text/plain\r\n\r\nSee you at noon.\r\n"
        b"--B\r\nContent-Type: text/html\r\n\r\n<html><!-- x --><head><title>Lunch</title><style>p{}</style></head>"
        b'<body><p title="t">See you <a href="https://example.org/menu">at noon</a>.</p></body></html>\r\n--B--\r\n'
    )
    outcome = process(data, engine=engine, policies=[SanitizePolicy(entities=("HIV",), alpha=1.5)], name="m.eml")
    assert not outcome.changed and outcome.data == data


def test_utf8_subject_keeps_its_characters(engine: Engine) -> None:
    data = "From: a@example.org\r\nTo: b@example.com\r\nSubject: Jörg HIV ☃\r\n\r\nhello\r\n".encode()
    outcome = process(data, engine=engine, policies=[SanitizePolicy(entities=("HIV",), alpha=1.5)], name="m.eml")
    msg = email.message_from_bytes(outcome.data, policy=email.policy.default)
    subject = str(msg["Subject"])
    assert subject.startswith("Jörg ") and subject.endswith(" ☃") and "HIV" not in subject


def test_a_text_file_that_starts_like_headers_is_text(engine: Engine) -> None:
    data = b"Subject: notes\nTo: myself\n\nThe HIV clinic opens at nine.\n"
    outcome = process(data, engine=engine, policies=[SanitizePolicy(entities=("HIV",), alpha=1.5)], name="notes.txt")
    assert outcome.kind == "text" and outcome.changed
    assert outcome.data.startswith(b"Subject: notes\nTo: myself\n\n") and b"HIV" not in outcome.data


def _mail_part(msg: Message, ctype: str) -> Message:
    return next(p for p in msg.walk() if p.get_content_type() == ctype)


def test_verifier_reads_pdf_text_drawn_with_an_embedded_font(engine: Engine) -> None:
    from fpdf import FPDF

    needles = _needles(engine, [engine.entity("HIV")])

    def render(text: str) -> bytes:
        # An embedded TrueType font: the page shows glyph codes (Identity-H), mapped to letters by ToUnicode.
        pdf = FPDF()
        pdf.add_page()
        pdf.add_font("dejavu", fname="/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
        pdf.set_font("dejavu", size=12)
        pdf.cell(text=text)
        return bytes(pdf.output())

    for text, named in (("Jörg HIV ☃", True), ("Jörg human immunodeficiency virus ☃", True), ("Jörg fine ☃", False)):
        found = find_trace(render(text), "pdf", needles, part="p.pdf")
        assert (found is not None) == named, text


def test_verifier_reads_words_split_over_docx_runs(engine: Engine) -> None:
    import docx

    d = docx.Document()
    p = d.add_paragraph("Her ")
    p.add_run("H").bold = True
    p.add_run("IV test.")
    buf = io.BytesIO()
    d.save(buf)
    found = find_trace(buf.getvalue(), "docx", _needles(engine, [engine.entity("HIV")]), part="d.docx")
    assert found is not None and found[0].part == "d.docx:word/document.xml"


def test_a_trace_holds_the_message_whatever_on_failure_says(engine: Engine) -> None:
    from extractors.mail import ContentPolicy
    from gateway.config import PolicyConfig
    from gateway.worker import sanitize_message

    data = _mail_with_unread_trace()
    pc = PolicyConfig(name="strict", sanitize=SanitizePolicy(entities=("HIV",)), content=ContentPolicy(),
                      on_failure="reject")  # fmt: skip
    job = sanitize_message(data, [pc], "m.eml", engine=engine)
    assert job.verdict == "hold" and job.data is None
    assert job.cause is not None and job.cause.term and job.cause.part == "2 (attached message)"
    assert job.cause.location == "header Message-ID"


def _mail_with_unread_trace() -> bytes:
    # A name in a Message-ID: structural, so not rewritten; the last check must still see it.
    return (
        b"From: a@example.org\r\nTo: b@example.com\r\nSubject: hi\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nhello\r\n'
        b"--B\r\nContent-Type: message/rfc822\r\n\r\nMessage-ID: <HIV-results@example.org>\r\nSubject: x\r\n\r\nhi\r\n"
        b"--B--\r\n"
    )


def test_the_verifier_tells_text_from_binary_by_the_plain_counts() -> None:
    # Control characters other than tab, line ends and form feed (over a tenth: binary), 8-bit bytes that are
    # not UTF-8 (over a third: binary), counted in C; the rule is the plain one.
    assert set(_CONTROL_BYTES) == {b for b in range(256) if b < 9 or 13 < b < 32}
    assert set(_HIGH_BYTES) == set(range(0x80, 0x100))
    assert _decode_text(b"HIV " * 20 + b"\x01" * 8, None) is not None
    assert _decode_text(b"HIV " * 20 + b"\x01" * 9, None) is None
    assert _decode_text(b"HIV " * 20 + bytes([0xE9]) * 40, None) is not None  # Latin-1 text
    assert _decode_text(b"HIV " * 20 + bytes([0xFF]) * 41, None) is None


@pytest.mark.parametrize(
    "params",
    [
        "x-note*=utf-8''H%49V%20positive",  # a hyphen in the name: the library leaves the value encoded
        "x-note*0*=utf-8''H%49; x-note*1=V",  # continued, the second piece not encoded
        "x-note*=iso-8859-1'en'H%49V",
    ],
)
def test_an_extended_parameter_the_library_leaves_encoded_is_read_decoded(engine: Engine, params: str) -> None:
    data = (
        "From: a@example.org\r\nTo: b@example.com\r\nSubject: hello\r\nMIME-Version: 1.0\r\n"
        f"Content-Type: text/plain; charset=utf-8; {params}\r\n\r\nThe results are in.\r\n"
    ).encode()
    needles = _needles(engine, [engine.entity("HIV")])
    found = find_trace(data, "mail", needles, part="m")
    assert found is not None and found[0].location == "header content-type parameters (RFC 2231 decoded)"
    # The extractor reads such a parameter too (extractors.mail._free_parameters): it leaves sanitized.
    out = process(data, engine=engine, policies=[SanitizePolicy(entities=("HIV",), alpha=1.5)], name="m.eml")
    assert out.changed and find_trace(out.data, "mail", needles, part="m") is None


def test_parameters_the_library_decodes_are_not_read_twice() -> None:
    from gateway.verify import views

    data = (
        b"From: a@example.org\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Disposition: attachment; filename*=utf-8''notes%20HIV.txt\r\n\r\nhello\r\n"
    )
    where = [v.location for v in views(data, "mail", part="m")]
    assert "header content-disposition parameters" in where
    assert not any(w.endswith("(RFC 2231 decoded)") for w in where)
