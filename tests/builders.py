"""Test inputs built with the real libraries: a message, a DOCX with tracked changes, a PDF."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

import docx
from docx.shared import RGBColor

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"


def make_mail() -> bytes:
    msg = EmailMessage()
    msg["From"] = '"HIV Clinic" <clinic@example.org>'
    msg["To"] = "Dr Smith <smith@example.com>, plain@example.com"
    msg["Subject"] = "HIV test: café meeting in Los Angeles"
    msg.set_content(
        "The patient had an HIV test in Los Angeles.\nShe started antiretroviral therapy.\n", charset="iso-8859-1",
        cte="quoted-printable",
    )  # fmt: skip
    msg.add_alternative(
        "<html><body><p>The patient had an <b>HIV</b> test in Los <i>Angeles</i>.</p>"
        '<img src="cid:x" alt="HIV chart" title="Los Angeles clinic"><a href="https://example.org/hiv">link</a>'
        "<script>var s = 'HIV';</script></body></html>",
        subtype="html",
    )
    msg.add_attachment(b"plain attachment text about HIV", maintype="text", subtype="plain",
                       filename="HIV results für Los Angeles.txt")  # fmt: skip
    inner = EmailMessage()
    inner["Subject"] = "Fwd: HIV clinic hours"
    inner["From"] = "nurse@example.org"
    inner.set_content("The HIV clinic in Los Angeles opens at nine.\n")
    msg.add_attachment(inner)
    return msg.as_bytes()


def make_docx() -> bytes:
    d = docx.Document()
    d.core_properties.title = "HIV clinic report"
    d.core_properties.keywords = "HIV, Los Angeles"
    d.core_properties.author = "Los Angeles HIV Unit"
    p = d.add_paragraph("The patient had an ")
    run = p.add_run("HIV")
    run.bold = True
    run.font.color.rgb = RGBColor(0xC0, 0x00, 0x00)
    d.add_comment(run, text="Call the HIV clinic in Los Angeles", author="Ward 5", initials="W5")
    p.add_run(" test in Los ")
    p.add_run("Angeles").italic = True
    p.add_run(".")
    table = d.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Diagnosis"
    table.cell(0, 1).text = "HIV"
    d.sections[0].header.paragraphs[0].text = "HIV clinic, Los Angeles"
    d.sections[0].footer.paragraphs[0].text = "Confidential: HIV"
    buf = io.BytesIO()
    d.save(buf)
    return _with_tracked_deletion(buf.getvalue())


def _with_tracked_deletion(data: bytes) -> bytes:
    """Add a tracked deletion of 'antiretroviral therapy' to the body, as Word writes it."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename == "word/document.xml":
                deletion = (
                    b'<w:p><w:r><w:t xml:space="preserve">Kept text. </w:t></w:r>'
                    b'<w:del w:id="1" w:author="x" w:date="2024-01-01T00:00:00Z"><w:r>'
                    b"<w:delText>antiretroviral therapy</w:delText></w:r></w:del></w:p>"
                )
                body = body.replace(b"<w:sectPr", deletion + b"<w:sectPr", 1)
            dst.writestr(item, body)
    return out.getvalue()


def make_pdf(pages: list[str]) -> bytes:
    """One page of plain Helvetica text per item (the layout tests build richer ones in test_pdf.py)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.set_title("test")
    # FPDF stamps the current time into the document information; its digits sometimes pass Luhn and read as a
    # CARD, so an unpinned date made the identifier findings of the same message differ from run to run.
    pdf.set_creation_date(datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC))
    for text in pages:
        pdf.add_page()
        pdf.set_font("Helvetica", size=10)
        pdf.multi_cell(0, 13, text)
    return bytes(pdf.output())
