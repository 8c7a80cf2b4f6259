"""Extract, sanitize and rebuild every kind of part; the result must still be a proper message."""

from __future__ import annotations

import email
import email.policy
import io
import zipfile
from email.message import EmailMessage

import docx
import pytest
from builders import SAMPLES, make_docx, make_mail, make_pdf
from docx.shared import RGBColor
from hypothesis import example, given
from hypothesis import strategies as st

from extractors.base import Segment, apply_to_pieces, combine, split
from extractors.html import scan
from extractors.limits import Limits
from extractors.mail import SIGNATURE_HEADER, ContentPolicy, _decoded, _unicode
from extractors.pipeline import check_output, process
from gateway.errors import (
    EncryptedContentError,
    LimitExceededError,
    ResidualRiskError,
    UnreadableContentError,
    UnsupportedContentError,
)
from gateway.model.engine import Engine
from gateway.model.records import SanitizePolicy

HIV = [SanitizePolicy(entities=("HIV",), alpha=1.5)]
HIV_LA = [SanitizePolicy(entities=("HIV", "Los Angeles"), alpha=1.5)]


def parse(data: bytes) -> EmailMessage:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    return msg


def all_text(msg: EmailMessage) -> str:
    """Everything a reader of the message could see, decoded."""
    out = [str(msg.get("Subject", "")), str(msg.get("From", "")), str(msg.get("To", ""))]
    for part in msg.walk():
        out.append(part.get_filename() or "")
        if part.get_content_type() == "text/html":  # what a reader sees of it
            out.extend(seg.text for seg in scan(part.get_content(), "h").segments)
        elif part.get_content_maintype() == "text":
            out.append(part.get_content())
    return "\n".join(out)


def shape(msg: EmailMessage) -> list[tuple[str, bool]]:
    return [(p.get_content_type(), p.get_filename() is not None) for p in msg.walk()]


# -- pieces and segments --------------------------------------------------------


def test_edits_land_in_the_piece_where_the_term_began() -> None:
    pieces = ("The ", "Los", " Angeles clinic")
    assert apply_to_pieces(pieces, [(4, 15, "a city")]) == ("The ", "a city", " clinic")
    assert apply_to_pieces(("an ", "HIV", " test"), [(0, 2, "a"), (3, 6, "virus")]) == ("a ", "virus", " test")
    assert apply_to_pieces(("unchanged",), []) == ("unchanged",)
    assert apply_to_pieces(("ab", "cd"), [(4, 4, "!")]) == ("ab", "cd!")


def test_combine_and_split_are_inverse() -> None:
    segs = [Segment("a", ("one",)), Segment("b", ("two", " three")), Segment("c", ("par\u2029sep",))]
    text, starts = combine(segs)
    assert split(text, 3) == ["one", "two three", "par\nsep"]
    assert starts[1] == text.index("two")


def test_html_scan_reads_urls_and_attributes_removes_scripts_and_keeps_markup() -> None:
    src = (
        '<p class="x">HIV <a href="/hiv%20clinic">test</a></p><script>var hiv = "HIV";</script>'
        '<img alt="HIV chart" src=a.png><!-- HIV --><meta name="d" content="HIV">'
    )
    doc = scan(src, "html")
    assert [s.text for s in doc.segments] == ["/hiv clinic", "HIV test", "HIV chart", "a.png", " HIV ", "d", "HIV"]
    out = doc.rebuild_text(
        [("/virus clinic",), ("virus ", "test"), ("virus chart",), ("a.png",), (" virus ",), ("d",), ("virus",)]
    )
    expected = (
        '<p class="x">virus <a href="/virus%20clinic">test</a></p>'
        '<img alt="virus chart" src=a.png><!-- virus --><meta name="d" content="virus">'
    )
    assert out == expected
    # A script is cut even when nothing else changes.
    assert doc.rebuild_text([s.pieces for s in doc.segments]) == src.replace('<script>var hiv = "HIV";</script>', "")


# -- mail -----------------------------------------------------------------------


def test_mail_round_trip(engine: Engine) -> None:
    data = make_mail()
    outcome = process(data, engine=engine, policies=HIV_LA, name="m.eml")
    assert outcome.kind == "mail" and outcome.changed
    before, after = parse(data), parse(outcome.data)
    assert shape(after) == shape(before)  # same parts, types and attachments
    seen = all_text(after)
    for term in ("HIV", "Los Angeles", "antiretroviral"):
        assert term not in seen
    # Addresses route the mail: untouched.
    assert [a.addr_spec for a in after["To"].addresses] == ["smith@example.com", "plain@example.com"]
    assert after["From"].addresses[0].addr_spec == "clinic@example.org"
    # Charset and transfer encoding of the text part are kept.
    plain = next(p for p in after.walk() if p.get_content_type() == "text/plain" and not p.get_filename())
    assert plain.get_content_charset() == "iso-8859-1"
    assert plain["Content-Transfer-Encoding"] == "quoted-printable"
    # HTML: markup untouched; text, alt/title and link URLs sanitized; scripts removed.
    html = next(p for p in after.walk() if p.get_content_type() == "text/html").get_content()
    assert 'href="https://example.org/pathological%20state"' in html and "<script>" not in html
    assert "<b>" in html and "<i>" in html and "<b></b>" not in html  # a replacement stays in its tag
    # The reports says which part each span came from.
    parts = {s.part for spans in outcome.spans for s in spans}
    assert any("header Subject" in p for p in parts) and any("text/html" in p for p in parts)
    assert any("filename" in p for p in parts) and any("attached message" in p for p in parts)


def test_alternative_parts_get_the_same_decisions(engine: Engine) -> None:
    after = parse(process(make_mail(), engine=engine, policies=HIV_LA, name="m.eml").data)
    plain = next(p for p in after.walk() if p.get_content_type() == "text/plain" and not p.get_filename())
    html = next(p for p in after.walk() if p.get_content_type() == "text/html")
    first_line = plain.get_content().splitlines()[0]
    html_doc = scan(html.get_content(), "h")
    assert html_doc.segments[0].text == first_line  # same sentence, same replacements


def test_subject_is_reencoded(engine: Engine) -> None:
    out = process(make_mail(), engine=engine, policies=HIV_LA, name="m.eml").data
    raw_subject = out.split(b"\r\nSubject: ", 1)[1].split(b"\r\n", 1)[0]
    assert b"=?" in raw_subject  # non-ASCII stays RFC 2047-encoded
    assert "café" in str(parse(out)["Subject"])


def test_format_flowed_and_base64_kept(engine: Engine) -> None:
    msg = EmailMessage()
    msg["Subject"] = "note"
    msg.set_content("The patient had an HIV test. \nResults follow.\n", cte="base64")
    msg.set_param("format", "flowed")
    out = parse(process(msg.as_bytes(), engine=engine, policies=HIV, name="f.eml").data)
    assert out.get_param("format") == "flowed"
    assert out["Content-Transfer-Encoding"] == "base64"
    assert "HIV" not in out.get_content()


def test_non_ascii_display_names_keep_their_addresses(engine: Engine) -> None:
    msg = EmailMessage()
    msg["From"] = '"Zoë HIV Clinic" <z@example.org>, plain@example.net'
    msg["To"] = "a@example.com"
    msg["Subject"] = "Über: the HIV test"
    msg.set_content("See you.\n")
    out = parse(process(msg.as_bytes(), engine=engine, policies=HIV, name="n.eml").data)
    (zoe, plain) = out["From"].addresses
    assert (zoe.addr_spec, plain.addr_spec) == ("z@example.org", "plain@example.net")
    assert zoe.display_name.startswith("Zoë") and "HIV" not in zoe.display_name
    assert str(out["Subject"]).startswith("Über:") and "HIV" not in str(out["Subject"])


def test_comments_in_address_headers(engine: Engine) -> None:
    raw = (
        b"From: clinic@example.org (HIV clinic, Los Angeles)\r\nTo: a@example.com\r\nSubject: hello\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nSee you.\r\n"
    )
    out = process(raw, engine=engine, policies=HIV_LA, name="c.eml").data
    head = out.split(b"\r\n\r\n", 1)[0]
    assert b"HIV" not in head and b"Los Angeles" not in head
    assert parse(out)["From"].addresses[0].addr_spec == "clinic@example.org"


def test_an_address_header_read_again_gives_the_same_segments_and_rebuild(engine: Engine) -> None:
    from extractors.mail import _ADDRESS_LISTS, _address_list, extract_mail

    raw = (
        b'From: "HIV clinic" <clinic@example.org> (Los Angeles office)\r\nTo: "Dr. Zo\xc3\xab" <z@example.org>\r\n'
        b"Cc: undisclosed-recipients:;\r\nSubject: hello\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n"
        b"See you.\r\n"
    )
    _ADDRESS_LISTS.clear()
    first = process(raw, engine=engine, policies=HIV_LA, name="a.eml").data
    kept = dict(_ADDRESS_LISTS)
    assert kept  # the From and To values were parsed once and kept
    again = process(raw, engine=engine, policies=HIV_LA, name="a.eml").data
    assert again == first and b"HIV" not in first.split(b"\r\n\r\n", 1)[0]
    assert all(_address_list(v) is parsed for v, parsed in kept.items())  # the second reading used them
    # What is kept is what a fresh parse gives: the same segments as with nothing kept.
    segments = [s for s in extract_mail(raw, part="a.eml", limits=Limits()).segments]
    _ADDRESS_LISTS.clear()
    assert [s for s in extract_mail(raw, part="a.eml", limits=Limits()).segments] == segments
    assert any("Zoë" in "".join(s.pieces) for s in segments) and any("office" in "".join(s.pieces) for s in segments)


def test_unchanged_message_passes_byte_for_byte(engine: Engine) -> None:
    msg = EmailMessage()
    msg["Subject"] = "Lunch"
    msg.set_content("Shall we meet for lunch at the usual place on Friday?\n")
    data = msg.as_bytes()
    outcome = process(data, engine=engine, policies=HIV, name="l.eml")
    assert not outcome.changed and outcome.data == data


def test_encrypted_parts_are_held(engine: Engine) -> None:
    msg = EmailMessage()
    msg["Subject"] = "secret"
    msg.set_content(b"\x30\x82\x01", maintype="application", subtype="pkcs7-mime",
                    params={"smime-type": "enveloped-data"}, filename="smime.p7m")  # fmt: skip
    with pytest.raises(EncryptedContentError) as info:
        process(msg.as_bytes(), engine=engine, policies=HIV, name="e.eml")
    assert info.value.reason == "encrypted"


def signed_mail(body: str) -> bytes:
    inner = EmailMessage()
    inner.set_content(body)
    sig = EmailMessage()
    sig.set_content(b"fake-signature-bytes", maintype="application", subtype="pgp-signature")
    outer = EmailMessage()
    outer["Subject"] = "signed"
    outer.make_mixed()
    outer.set_type("multipart/signed")
    outer.set_param("protocol", "application/pgp-signature")
    outer.attach(inner)
    outer.attach(sig)
    return outer.as_bytes()


def test_signed_mail_untouched_without_changes(engine: Engine) -> None:
    data = signed_mail("See you at the meeting on Monday.\n")
    outcome = process(data, engine=engine, policies=HIV, name="s.eml")
    assert not outcome.changed and outcome.data == data


def test_signed_mail_loses_its_signature_when_changed(engine: Engine) -> None:
    outcome = process(signed_mail("The patient had an HIV test.\n"), engine=engine, policies=HIV, name="s.eml")
    after = parse(outcome.data)
    assert after.get_content_type() == "text/plain"
    assert "removed" in after[SIGNATURE_HEADER]
    assert "HIV" not in after.get_content()
    assert any(n.action == "signature removed" for n in outcome.notes)


def image_mail() -> bytes:
    msg = EmailMessage()
    msg["Subject"] = "photo"
    msg.set_content("A photo of the HIV clinic.\n")
    msg.add_attachment(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, maintype="image", subtype="png", filename="clinic.png")
    return msg.as_bytes()


def test_images_pass_strip_or_quarantine_by_policy(engine: Engine) -> None:
    passed = parse(process(image_mail(), engine=engine, policies=HIV, name="i.eml").data)
    assert any(p.get_content_type() == "image/png" for p in passed.walk())
    stripped = process(image_mail(), engine=engine, policies=HIV, name="i.eml",
                       content_policy=ContentPolicy(images="strip"))  # fmt: skip
    assert not any(p.get_content_type() == "image/png" for p in parse(stripped.data).walk())
    assert any(n.action == "stripped" for n in stripped.notes)
    with pytest.raises(UnsupportedContentError):
        process(
            image_mail(), engine=engine, policies=HIV, name="i.eml", content_policy=ContentPolicy(images="quarantine")
        )


def test_unknown_binary_attachment_is_held_by_default(engine: Engine) -> None:
    msg = EmailMessage()
    msg["Subject"] = "data"
    msg.set_content("See attached.\n")
    msg.add_attachment(b"\x00\x01\x02", maintype="application", subtype="octet-stream", filename="blob.bin")
    with pytest.raises(UnsupportedContentError, match="octet-stream"):
        process(msg.as_bytes(), engine=engine, policies=HIV, name="b.eml")


def test_limits_nesting_and_headers(engine: Engine) -> None:
    msg = EmailMessage()
    msg.set_content("innermost HIV text\n")
    for _ in range(20):
        outer = EmailMessage()
        outer["Subject"] = "fwd"
        outer.add_attachment(msg)
        msg = outer
    with pytest.raises(LimitExceededError, match="nested"):
        process(msg.as_bytes(), engine=engine, policies=HIV, name="deep.eml")
    huge = b"Subject: " + b"x" * 300_000 + b"\r\nFrom: a@b.c\r\n\r\nbody\r\n"
    with pytest.raises(LimitExceededError, match="headers"):
        process(huge, engine=engine, policies=HIV, name="huge.eml")


# -- DOCX -----------------------------------------------------------------------


def docx_xml(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return "\n".join(z.read(n).decode("utf-8") for n in z.namelist() if n.endswith(".xml"))


def test_docx_round_trip(engine: Engine) -> None:
    data = make_docx()
    assert "antiretroviral" in docx_xml(data)
    outcome = process(data, engine=engine, policies=HIV_LA, name="r.docx")
    assert outcome.kind == "docx" and outcome.changed
    xml = docx_xml(outcome.data)
    for term in ("HIV", "Los Angeles", "antiretroviral", "delText"):
        assert term not in xml
    d = docx.Document(io.BytesIO(outcome.data))
    assert "HIV" not in d.core_properties.title and "HIV" not in d.core_properties.author
    assert d.sections[0].header.paragraphs[0].text and "HIV" not in d.sections[0].header.paragraphs[0].text
    assert "HIV" not in d.tables[0].cell(0, 1).text
    assert "comments.xml" in str(outcome.spans)  # the comment was read, and sanitized above


def test_docx_replaced_run_keeps_its_formatting(engine: Engine) -> None:
    d = docx.Document(io.BytesIO(process(make_docx(), engine=engine, policies=HIV_LA, name="r.docx").data))
    runs = d.paragraphs[0].runs
    bold = [r for r in runs if r.bold]
    assert len(bold) == 1
    assert bold[0].text and bold[0].text != "HIV"  # the replacement sits in the formatted run
    assert bold[0].font.color.rgb == RGBColor(0xC0, 0x00, 0x00)
    assert "Los" not in d.paragraphs[0].text and "Angeles" not in d.paragraphs[0].text


def test_docx_rebuild_rewrites_only_the_changed_parts(engine: Engine) -> None:
    data = make_docx()
    out = process(data, engine=engine, policies=HIV_LA, name="r.docx").data
    before, after = zipfile.ZipFile(io.BytesIO(data)), zipfile.ZipFile(io.BytesIO(out))
    assert before.namelist() == after.namelist() and after.testzip() is None
    raw = {i.filename: (i.CRC, i.compress_size) for i in before.infolist()}
    same = [i.filename for i in after.infolist() if (i.CRC, i.compress_size) == raw[i.filename]]
    assert "word/styles.xml" in same and "word/document.xml" not in same and "docProps/core.xml" not in same


def test_docx_strict_charts_and_equations_are_read() -> None:
    from extractors.docx import extract_docx

    def texts(name: str) -> str:
        path = next((SAMPLES / "docx").rglob(name))
        return " ".join(s.text for s in extract_docx(path.read_bytes(), part=name, limits=Limits()).segments)

    assert "Cellaa" in texts("strict.docx")  # ISO 29500 Strict namespaces
    assert "Category 1" in texts("shp-inline-shape-access.docx")  # a chart's category names
    assert len(texts("equations.docx")) > 80  # the equations' own text, not only the prose


def test_docx_text_in_an_element_nobody_reads_is_not_passed() -> None:
    from extractors.docx import extract_docx

    src = zipfile.ZipFile(io.BytesIO(make_docx()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename == "word/document.xml":
                odd = b'<w:p><x:note xmlns:x="urn:example:notes">HIV clinic, Los Angeles</x:note></w:p>'
                body = body.replace(b"<w:sectPr", odd + b"<w:sectPr", 1)
            dst.writestr(item, body)
    with pytest.raises(UnsupportedContentError, match="<note>"):
        extract_docx(out.getvalue(), part="odd.docx", limits=Limits())


def test_zip_bomb_is_refused(engine: Engine) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", b"\0" * (300 * 1024 * 1024))
    with pytest.raises(LimitExceededError, match=r"zip bomb|uncompressed"):
        process(buf.getvalue(), engine=engine, policies=HIV, name="bomb.docx")


# -- PDF ------------------------------------------------------------------------


def test_risky_pdf_is_sanitized_in_place(engine: Engine) -> None:
    from extractors.pdf import extract_pdf

    data = make_pdf(["The patient had an HIV test in Los Angeles.", "Page two: antiretroviral therapy."])
    outcome = process(data, engine=engine, policies=HIV_LA, name="r.pdf")
    assert outcome.changed and outcome.data != data and outcome.data.startswith(b"%PDF-")
    doc = extract_pdf(outcome.data, part="out", limits=Limits())
    assert doc.pages == 2
    assert "HIV" not in doc.text and "Los Angeles" not in doc.text and "patient" in doc.text


def test_safe_pdf_passes_unchanged(engine: Engine) -> None:
    data = make_pdf(["Minutes of the garden committee: the roses need water."])
    outcome = process(data, engine=engine, policies=HIV, name="s.pdf")
    assert not outcome.changed and outcome.data == data


def test_pdf_page_limit(engine: Engine) -> None:
    data = make_pdf([f"page {i}" for i in range(12)])
    with pytest.raises(LimitExceededError, match="pages"):
        process(data, engine=engine, policies=HIV, name="long.pdf", limits=Limits(pdf_max_pages=5))


def test_encrypted_pdf_is_held(engine: Engine) -> None:
    data = (SAMPLES / "pdf/pdfminer/encryption/aes-128.pdf").read_bytes()
    with pytest.raises(EncryptedContentError):
        process(data, engine=engine, policies=HIV, name="aes-128.pdf")


# -- fail closed --------------------------------------------------------------------


def test_a_flagged_term_left_in_the_output_is_a_leak(engine: Engine) -> None:
    text = "The patient had an HIV test."
    result = engine.sanitize(text, HIV[0])
    assert result.decisions
    with pytest.raises(ResidualRiskError, match="hiv"):
        check_output(text.encode(), "text", engine=engine, results=[result], name="t.txt", limits=Limits())
    check_output(result.text.encode(), "text", engine=engine, results=[result], name="t.txt", limits=Limits())


def test_tracked_deletions_never_leave_even_in_a_clean_document(engine: Engine) -> None:
    # Nothing risky is visible, but a deletion holding "antiretroviral therapy" travels in the file.
    clean = docx.Document()
    clean.add_paragraph("Minutes of the garden committee.")
    buf = io.BytesIO()
    clean.save(buf)
    from builders import _with_tracked_deletion

    data = _with_tracked_deletion(buf.getvalue())
    assert "antiretroviral" in docx_xml(data)
    outcome = process(data, engine=engine, policies=HIV, name="minutes.docx")
    assert "antiretroviral" not in docx_xml(outcome.data) and "garden committee" in docx_xml(outcome.data)
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "a@example.org", "b@example.org", "Minutes"
    msg.set_content("The minutes are attached.\n")
    msg.add_attachment(data, maintype="application", filename="minutes.docx",
                       subtype="vnd.openxmlformats-officedocument.wordprocessingml.document")  # fmt: skip
    sent = process(msg.as_bytes(), engine=engine, policies=HIV, name="m.eml")
    assert any(n.action == "tracked deletions removed" for n in sent.notes)
    attached = email.message_from_bytes(sent.data, policy=email.policy.default)
    part = next(p for p in attached.walk() if p.get_filename() == "minutes.docx")
    assert "antiretroviral" not in docx_xml(part.get_content())


@given(
    name=st.sampled_from(["Subject", "X-AntiAbuse", "Keywords", "Thread-Topic", "Orig-Date", "Comments"]),
    value=st.lists(
        st.sampled_from(["HIV", " ", "\t", "\r\n ", "=?", "?=", "utf-8?q?H=49V", "(x)", "1 Jan 2024 10:00 -0000"])
    ).map("".join),
)
@example(name="Orig-Date", value="1 Jan 2024 10:00 -0000")
def test_a_text_header_reads_as_the_header_registry_decodes_it(name: str, value: str) -> None:
    # Plain ASCII with no encoded word skips the registry's parser; what it reads must not change.
    try:
        expected: str | None = str(email.policy.default.header_factory(name, _unicode(value)))
    except Exception:
        expected = None  # the registry refuses it: so must the extractor
    try:
        assert _decoded(name, value, "header") == expected
    except UnreadableContentError:
        assert expected is None or "\ufffd" in expected


def test_parameters_of_the_structure_are_not_read_and_others_are() -> None:
    from extractors.mail import extract_mail

    data = (
        b"From: a@example.org\r\nMIME-Version: 1.0\r\n"
        b"Content-Type: text/plain; charset=utf-8; format=flowed; delsp=yes; x-note*=utf-8''H%49V%20clinic\r\n"
        b'Content-Disposition: inline; filename="a.txt"; size=12; title="Los Angeles"\r\n\r\nhello\r\n'
    )
    doc = extract_mail(data, part="m", limits=Limits())
    params = [s.pieces[0] for s in doc.segments if s.part.endswith("parameter")]
    assert params == ["HIV clinic", "Los Angeles"]
