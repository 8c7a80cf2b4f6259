"""Crafted files, one per channel through which a name could leave: what an attacker would try.

Each case hides the entity's name (HIV unless said) in one place and keeps
everything else clean, so a case leaks exactly when that channel is copied
through unread. Built by hand (raw MIME, raw OOXML parts, fpdf2 PDFs) so the
bytes are what a hostile or careless sender's program would write.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

import docx

CLEAN = "The quarterly meeting is moved to Tuesday afternoon in the small room."


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    kind: str  # mail, docx, pdf, text
    data: bytes
    entity: str = "HIV"
    pdf: bool = False  # a PDF-side channel (issue 14)


def _mail(
    headers: str = "", body: str = CLEAN, ctype: str = "text/plain; charset=us-ascii", cte: str = "7bit"
) -> bytes:
    return (
        "From: Ann Example <ann@example.org>\r\nTo: bob@example.com\r\nSubject: Meeting\r\n"
        "Date: Mon, 23 Nov 2026 10:00:00 +0000\r\nMessage-ID: <case-1@example.org>\r\n"
        f"{headers}MIME-Version: 1.0\r\nContent-Type: {ctype}\r\nContent-Transfer-Encoding: {cte}\r\n\r\n{body}\r\n"
    ).encode()


def _multipart(second: str, *, preamble: str = "", epilogue: str = "", headers: str = "") -> bytes:
    return _mail(
        headers,
        f"{preamble}\r\n--B\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n{CLEAN}\r\n"
        f"--B\r\n{second}\r\n--B--\r\n{epilogue}",
        ctype='multipart/mixed; boundary="B"',
    )


def _part(ctype: str, body: str, extra: str = "") -> str:
    return f"Content-Type: {ctype}\r\n{extra}\r\n{body}"


def _html(html: str) -> bytes:
    return _multipart(_part("text/html; charset=utf-8", html))


def _docx(
    mutate: Callable[[dict[str, bytes]], None] | None = None, doc_hook: Callable[..., None] | None = None
) -> bytes:
    d = docx.Document()
    p = d.add_paragraph(CLEAN)
    if doc_hook:
        doc_hook(d, p)
    buf = io.BytesIO()
    d.save(buf)
    if mutate is None:
        return buf.getvalue()
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    mutate(parts)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in parts.items():
            z.writestr(name, body)
    return out.getvalue()


def _replace(parts: dict[str, bytes], member: str, old: bytes, new: bytes) -> None:
    assert old in parts[member], (member, old)
    parts[member] = parts[member].replace(old, new, 1)


def _add_part(parts: dict[str, bytes], member: str, body: bytes, ctype: str, rel_type: str | None = None) -> None:
    parts[member] = body
    _replace(
        parts,
        "[Content_Types].xml",
        b"</Types>",
        f'<Override PartName="/{member}" ContentType="{ctype}"/></Types>'.encode(),
    )
    if rel_type:
        rels = "_rels/.rels" if not member.startswith("word/") else "word/_rels/document.xml.rels"
        target = member if rels == "_rels/.rels" else member.removeprefix("word/")
        _replace(
            parts,
            rels,
            b"</Relationships>",
            f'<Relationship Id="rIdX9" Type="{rel_type}" Target="{target}"/></Relationships>'.encode(),
        )


BODY = b"<w:body>"
W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _body_xml(xml: bytes) -> Callable[[dict[str, bytes]], None]:
    return lambda parts: _replace(parts, "word/document.xml", BODY, BODY + xml)


def _custom_props(parts: dict[str, bytes]) -> None:
    _add_part(
        parts,
        "docProps/custom.xml",
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Properties xmlns="http://schemas.openxmlformats.org/'
        b'officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'docPropsVTypes"><property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="Project">'
        b"<vt:lpwstr>HIV cohort</vt:lpwstr></property></Properties>",
        "application/vnd.openxmlformats-officedocument.custom-properties+xml",
        f"{REL}/custom-properties",
    )


def _app_props(parts: dict[str, bytes]) -> None:
    app = parts.get("docProps/app.xml")
    assert app is not None
    parts["docProps/app.xml"] = app.replace(
        b"</Properties>", b"<Company>HIV Clinic</Company><Manager>Head of HIV</Manager></Properties>"
    )


def _core_more(parts: dict[str, bytes]) -> None:
    _replace(
        parts,
        "docProps/core.xml",
        b"</cp:coreProperties>",
        b"<dc:identifier>HIV-2026-7</dc:identifier><cp:version>HIV draft</cp:version>"
        b"<dc:language>HIV</dc:language></cp:coreProperties>",
    )


def _comment_author(d: docx.document.Document, p: object) -> None:
    run = d.paragraphs[0].runs[0]
    d.add_comment(run, text="Fine.", author="HIV Unit", initials="HIV")


def _revision(parts: dict[str, bytes]) -> None:
    _body_xml(
        b'<w:p><w:ins w:id="7" w:author="HIV Unit" w:date="2026-01-01T00:00:00Z"><w:r><w:t>Agreed.</w:t>'
        b"</w:r></w:ins></w:p>"
    )(parts)


def _hyperlink(parts: dict[str, bytes]) -> None:
    _replace(
        parts,
        "word/_rels/document.xml.rels",
        b"</Relationships>",
        f'<Relationship Id="rIdH1" Type="{REL}/hyperlink" Target="https://example.org/hiv-clinic" '
        'TargetMode="External"/></Relationships>'.encode(),
    )
    _body_xml(
        f'<w:p><w:hyperlink xmlns:r="{REL}" r:id="rIdH1" w:tooltip="HIV results"><w:r><w:t>our site</w:t>'
        "</w:r></w:hyperlink></w:p>".encode()
    )(parts)


def _embedded_docx(parts: dict[str, bytes]) -> None:
    inner = docx.Document()
    inner.add_paragraph("The HIV test came back positive.")
    buf = io.BytesIO()
    inner.save(buf)
    parts["word/embeddings/Microsoft_Word_Document1.docx"] = buf.getvalue()
    _replace(
        parts,
        "[Content_Types].xml",
        b"</Types>",
        b'<Default Extension="docx" ContentType="application/vnd.openxmlformats-officedocument.'
        b'wordprocessingml.document"/></Types>',
    )
    _replace(
        parts,
        "word/_rels/document.xml.rels",
        b"</Relationships>",
        f'<Relationship Id="rIdE1" Type="{REL}/package" Target="embeddings/Microsoft_Word_Document1.docx"/>'
        "</Relationships>".encode(),
    )


def _doc_variables(parts: dict[str, bytes]) -> None:
    _replace(
        parts,
        "word/settings.xml",
        b"</w:settings>",
        b'<w:docVars><w:docVar w:name="Topic" w:val="HIV cohort"/></w:docVars></w:settings>',
    )


def _custom_xml(parts: dict[str, bytes]) -> None:
    parts["customXml/item1.xml"] = b'<?xml version="1.0"?><study><topic>HIV</topic></study>'
    _replace(
        parts,
        "[Content_Types].xml",
        b"</Types>",
        b'<Override PartName="/customXml/item1.xml" ContentType="application/xml"/></Types>',
    )


def _picture_name(parts: dict[str, bytes]) -> None:
    _body_xml(
        b'<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/'
        b'wordprocessingDrawing"><wp:extent cx="10" cy="10"/><wp:docPr id="5" name="HIV chart.png"/>'
        b"</wp:inline></w:drawing></w:r></w:p>"
    )(parts)


def _mail_with_docx(data: bytes) -> bytes:
    import base64

    b64 = base64.encodebytes(data).decode("ascii")
    return _multipart(
        _part(
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            b64,
            'Content-Disposition: attachment; filename="report.docx"\r\nContent-Transfer-Encoding: base64\r\n',
        )
    )


def _pdf(setup: Callable[..., None]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text=CLEAN)
    setup(pdf)
    return bytes(pdf.output())


def _raw_pdf(extra_catalog: str, extra_objects: list[str], page_extra: str = "") -> bytes:
    """A small PDF written object by object, with its cross-reference table."""
    content = b"BT /F1 12 Tf 72 720 Td (" + CLEAN.encode() + b") Tj ET"
    objects = [
        f"<< /Type /Catalog /Pages 2 0 R {extra_catalog} >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        f"/Resources << /Font << /F1 5 0 R >> >> {page_extra} >>",
        f"<< /Length {len(content)} >>\nstream\n{content.decode()}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        *extra_objects,
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def cases() -> list[Case]:
    utf16 = CLEAN + " The HIV clinic is closed."
    out = [
        # -- mail headers and MIME --
        Case("header Thread-Topic", "mail", _mail("Thread-Topic: HIV results\r\n")),
        Case("header Keywords", "mail", _mail("Keywords: HIV, results\r\n")),
        Case("header Comments", "mail", _mail("Comments: about the HIV test\r\n")),
        Case("header X-custom", "mail", _mail("X-Case-Topic: HIV\r\n")),
        Case("header Organization", "mail", _mail("Organization: HIV Clinic\r\n")),
        Case("header encoded-word", "mail", _mail("Keywords: =?utf-8?q?H=49V?=\r\n")),
        Case("display name Sender", "mail", _mail('Sender: "HIV Clinic" <clinic@example.org>\r\n')),
        Case("display name Bcc", "mail", _mail('Bcc: "HIV ward" <ward@example.org>\r\n')),
        Case(
            "display name Disposition-Notification-To",
            "mail",
            _mail('Disposition-Notification-To: "HIV desk" <desk@example.org>\r\n'),
        ),
        Case(
            "Content-Description",
            "mail",
            _multipart(_part("text/plain", "notes", "Content-Description: HIV notes\r\n")),
        ),
        Case("preamble", "mail", _multipart(_part("text/plain", "notes"), preamble="HIV results follow.")),
        Case("epilogue", "mail", _multipart(_part("text/plain", "notes"), epilogue="HIV results above.")),
        Case(
            "RFC 2231 continuation",
            "mail",
            _multipart(
                _part('image/png; name*0="H"; name*1="IV.png"', "iVBORw0KGgo=", "Content-Transfer-Encoding: base64\r\n")
            ),
        ),
        Case(
            "attachment filename",
            "mail",
            _multipart(_part("text/plain", "notes", 'Content-Disposition: attachment; filename="HIV_results.txt"\r\n')),
        ),
        Case("text/csv", "mail", _multipart(_part("text/csv", "patient,result\r\n1,HIV positive"))),
        Case(
            "text/calendar",
            "mail",
            _multipart(
                _part(
                    "text/calendar; method=REQUEST",
                    "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:HIV clinic visit\r\nEND:VEVENT\r\nEND:VCALENDAR",
                )
            ),
        ),
        Case(
            "text/x-vcard",
            "mail",
            _multipart(_part("text/x-vcard", "BEGIN:VCARD\r\nFN:Ann\r\nORG:HIV Clinic\r\nEND:VCARD")),
        ),
        Case("application/json", "mail", _multipart(_part("application/json", '{"diagnosis": "HIV"}'))),
        Case(
            "octet-stream text",
            "mail",
            _multipart(
                _part(
                    "application/octet-stream",
                    "The HIV results are attached.",
                    'Content-Disposition: attachment; filename="notes"\r\n',
                )
            ),
        ),
        Case(
            "UTF-16 body",
            "mail",
            _multipart(
                _part(
                    "text/plain; charset=utf-16",
                    __import__("base64").encodebytes(utf16.encode("utf-16")).decode(),
                    "Content-Transfer-Encoding: base64\r\n",
                )
            ),
        ),
        Case(
            "message/rfc822 header",
            "mail",
            _multipart(_part("message/rfc822", "From: a@example.org\r\nKeywords: HIV\r\nSubject: x\r\n\r\nhello")),
        ),
        # -- HTML --
        Case("html title", "mail", _html("<html><head><title>HIV results</title></head><body>Hi</body></html>")),
        Case(
            "html meta content",
            "mail",
            _html('<html><head><meta name="description" content="HIV results"></head><body>Hi</body></html>'),
        ),
        Case("html comment", "mail", _html("<html><body><!-- HIV results -->Hi</body></html>")),
        Case("html input value", "mail", _html('<html><body><form><input value="HIV"></form></body></html>')),
        Case(
            "html link URL", "mail", _html('<html><body><a href="https://example.org/hiv?HIV">site</a></body></html>')
        ),
        Case("html script", "mail", _html("<html><body><script>var d = 'HIV';</script>Hi</body></html>")),
        Case(
            "html style",
            "mail",
            _html("<html><head><style>/* HIV */ p {color: red}</style></head><body>Hi</body></html>"),
        ),
        Case("html data attribute", "mail", _html('<html><body><p data-topic="HIV">Hi</p></body></html>')),
        # -- DOCX --
        Case("docx embedded docx", "docx", _docx(_embedded_docx)),
        Case("docx custom properties", "docx", _docx(_custom_props)),
        Case("docx app properties", "docx", _docx(_app_props)),
        Case("docx core identifier/version/language", "docx", _docx(_core_more)),
        Case("docx comment author", "docx", _docx(doc_hook=_comment_author)),
        Case("docx revision author", "docx", _docx(_revision)),
        Case("docx hyperlink", "docx", _docx(_hyperlink)),
        Case(
            "docx content control",
            "docx",
            _docx(
                _body_xml(
                    b'<w:sdt><w:sdtPr><w:alias w:val="HIV status"/><w:tag w:val="HIV"/></w:sdtPr>'
                    b"<w:sdtContent><w:p><w:r>"
                    b"<w:t>Negative</w:t></w:r></w:p></w:sdtContent></w:sdt>"
                )
            ),
        ),
        Case(
            "docx bookmark",
            "docx",
            _docx(
                _body_xml(
                    b'<w:p><w:bookmarkStart w:id="3" w:name="HIV_results"/><w:r><w:t>See</w:t></w:r>'
                    b'<w:bookmarkEnd w:id="3"/></w:p>'
                )
            ),
        ),
        Case(
            "docx field code",
            "docx",
            _docx(
                _body_xml(
                    b'<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r>'
                    b'<w:instrText xml:space="preserve"> MERGEFIELD HIV_Status </w:instrText></w:r>'
                    b'<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>value</w:t>'
                    b'</w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>'
                )
            ),
        ),
        Case("docx document variable", "docx", _docx(_doc_variables)),
        Case("docx customXml", "docx", _docx(_custom_xml)),
        Case("docx picture name", "docx", _docx(_picture_name)),
        Case("docx in mail, custom properties", "mail", _mail_with_docx(_docx(_custom_props))),
        # -- spellings --
        Case("glued to another script", "text", "患者HIV阳性。 The clinic is open.".encode()),
        Case("glued to digits after", "text", b"The HIV1 strain was found."),
        Case("glued to digits before", "text", b"Patient 43HIV was seen."),
        Case("glued compound", "text", b"She is HIVpositive since May."),
        Case("dotted acronym", "text", b"Her H.I.V. test came back."),
        Case("full width", "text", "Her ＨＩＶ test came back.".encode()),
        Case("soft hyphen", "text", "Her H\u00adIV test came back.".encode()),
        Case("zero-width space", "text", "Her H\u200bIV test came back.".encode()),
        Case("Cyrillic look-alike", "text", "Her \u041dIV test came back.".encode()),
        Case("derived AIDS-like", "text", b"She had AIDS-like symptoms.", entity="AIDS"),
        Case("derived Houstonians", "text", b"Many Houstonians came to the fair.", entity="Houston"),
        Case("derived Chicago-style", "text", b"We ate Chicago-style pizza.", entity="Chicago"),
        Case("derived cocaine-induced", "text", b"It was a cocaine-induced psychosis.", entity="cocaine"),
        # -- integrity --
        Case(
            "notes.txt that starts like headers",
            "text",
            b"Subject: notes\nTo: myself\n\nThe HIV clinic opens at nine.\n",
        ),
        # -- PDF (issue 14's side; the verifier's check is ours) --
        Case("pdf Info dict", "pdf", _pdf(lambda p: p.set_title("HIV results")), pdf=True),
        Case(
            "pdf XMP metadata",
            "pdf",
            _pdf(
                lambda p: p.set_xmp_metadata(
                    '<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:subject>HIV</dc:subject>'
                    "</rdf:Description>"
                )
            ),
            pdf=True,
        ),
        Case("pdf annotation", "pdf", _pdf(lambda p: p.text_annotation(10, 10, "HIV results")), pdf=True),
        Case("pdf link URL", "pdf", _pdf(lambda p: p.link(10, 10, 20, 10, "https://example.org/hiv?HIV")), pdf=True),
        Case("pdf outline", "pdf", _pdf(lambda p: p.start_section("HIV results")), pdf=True),
        Case(
            "pdf embedded file",
            "pdf",
            _pdf(lambda p: p.embed_file(basename="notes.txt", bytes=b"HIV positive")),
            pdf=True,
        ),
        Case(
            "pdf JavaScript",
            "pdf",
            _raw_pdf("/OpenAction 6 0 R", ["<< /S /JavaScript /JS (app.alert('HIV');) >>"]),
            pdf=True,
        ),
        Case(
            "pdf form field value",
            "pdf",
            _raw_pdf(
                "/AcroForm << /Fields [6 0 R] >>",
                [
                    "<< /FT /Tx /T (diagnosis) /V <FEFF00480049005600> /Rect [72 600 300 620] /Subtype /Widget "
                    "/Type /Annot >>"
                ],
                "/Annots [6 0 R]",
            ),
            pdf=True,
        ),
    ]
    return out
