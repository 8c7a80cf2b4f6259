"""PDFs sanitized in place: the output looks like the input, and nothing of the entity is left anywhere in it.

The checks read the output with tools independent of the extractor:
poppler's pdftoppm (pixels), pdffonts, pdfimages and pdftotext, and a raw walk
of every object, string and decompressed stream with pikepdf.
"""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import subprocess
from pathlib import Path

import pikepdf
import pytest
from fpdf import FPDF
from pdf_builders import FONTS, chart_png, clinic_report, referral_letter
from PIL import Image, ImageChops

from extractors.base import apply_to_pieces
from extractors.limits import Limits
from extractors.pdf import extract_pdf
from extractors.pipeline import process
from gateway.errors import UnreadableContentError
from gateway.model.engine import Engine
from gateway.model.records import SanitizePolicy

POPPLER = shutil.which("pdftoppm") is not None
needs_poppler = pytest.mark.skipif(not POPPLER, reason="poppler-utils is not installed (.ci/run installs it)")
# These test the PDF path, not the model: terms and groups only (the summed evidence is test_evidence.py's).
HIV_LA = [SanitizePolicy(entities=("HIV", "Los Angeles"), alpha=1.5, evidence_budget=0)]
HIV_ONLY = [SanitizePolicy(entities=("HIV",), alpha=1.5, evidence_budget=0)]
TB_ONLY = [SanitizePolicy(entities=("tuberculosis",), alpha=1.5, evidence_budget=0)]
HIV_WORDS = re.compile(r"(?<![a-z])hiv(?![a-z])|los\s*angeles", re.IGNORECASE)


def poppler(tool: str, data: bytes, tmp: Path, *args: str) -> str:
    src = tmp / f"in-{hashlib.sha256(data).hexdigest()[:12]}.pdf"
    src.write_bytes(data)
    return subprocess.run([tool, *args, str(src), *(["-"] if tool == "pdftotext" else [])],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip


def render(data: bytes, tmp: Path) -> list[Image.Image]:
    """Every page at 30 dpi in grey, by poppler."""
    digest = hashlib.sha256(data).hexdigest()[:12]
    src = tmp / f"{digest}.pdf"
    src.write_bytes(data)
    subprocess.run(["pdftoppm", "-r", "30", "-gray", str(src), str(tmp / digest)], check=True)
    return [Image.open(p).copy() for p in sorted(tmp.glob(f"{digest}-*.pgm"))]


def changed_share(a: Image.Image, b: Image.Image) -> float:
    diff = ImageChops.difference(a, b).point(lambda v: 255 if v > 32 else 0)
    return sum(diff.histogram()[255:]) / (a.width * a.height)


def ink_share(a: Image.Image) -> float:
    return sum(a.point(lambda v: 255 if v < 200 else 0).histogram()[255:]) / (a.width * a.height)


def fonts(data: bytes, tmp: Path) -> set[str]:
    lines = poppler("pdffonts", data, tmp).splitlines()[2:]
    return {line.split()[0] for line in lines if line.strip()}


def images(data: bytes) -> list[str]:
    """Digests of the decoded image data, page by page."""
    out = []
    with pikepdf.open(io.BytesIO(data)) as pdf:
        for page in pdf.pages:
            for _name, img in sorted(page.get_images().items()):
                out.append(hashlib.sha256(img.read_bytes()).hexdigest())
    return out


def traces(data: bytes, pattern: re.Pattern[str]) -> list[str]:
    """Every place in the file where ``pattern`` is found: raw bytes, objects, strings, decompressed streams."""
    found = []
    if pattern.search(data.decode("latin-1")):
        found.append("raw bytes")
    with pikepdf.open(io.BytesIO(data)) as pdf:

        def walk(obj: object, where: str) -> None:
            if isinstance(obj, pikepdf.String):
                if pattern.search(str(obj)) or pattern.search(bytes(obj).decode("latin-1")):
                    found.append(f"string in {where}")
            elif isinstance(obj, pikepdf.Name):
                if pattern.search(str(obj)):
                    found.append(f"name in {where}")
            elif isinstance(obj, pikepdf.Array):
                for item in obj:
                    if not (isinstance(item, pikepdf.Object) and item.is_indirect):
                        walk(item, where)
            elif isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream)):
                for key in obj.keys():  # noqa: SIM118
                    if pattern.search(key):
                        found.append(f"key in {where}")
                    value = obj.get(key)
                    if not (isinstance(value, pikepdf.Object) and value.is_indirect):
                        walk(value, where)

        walk(pdf.trailer, "trailer")
        for obj in pdf.objects:
            walk(obj, f"object {obj.objgen}")
            if isinstance(obj, pikepdf.Stream):
                raw = obj.read_bytes()
                for text in (raw.decode("latin-1"), raw.decode("utf-16-be", "ignore")):
                    if pattern.search(text):
                        found.append(f"stream {obj.objgen}")
    return found


@pytest.fixture
def report() -> bytes:
    return clinic_report()


# -- the look is kept ---------------------------------------------------------------------------


@needs_poppler
def test_a_clinic_report_comes_back_looking_like_the_report_that_was_sent(
    engine: Engine, report: bytes, tmp_path: Path
) -> None:
    assert HIV_WORDS.search(poppler("pdftotext", report, tmp_path))
    outcome = process(report, engine=engine, policies=HIV_LA, name="report.pdf")  # verified, not held
    out = outcome.data
    assert outcome.changed and {d.term for d in outcome.decisions} >= {"hiv"}
    before, after = render(report, tmp_path), render(out, tmp_path)
    assert len(before) == len(after) == 2
    for page_before, page_after in zip(before, after, strict=True):
        assert ink_share(page_before) > 0.02  # text-heavy pages
        assert 0 < changed_share(page_before, page_after) <= 0.10
    assert images(out) == images(report) and len(images(out)) == 2
    assert fonts(report, tmp_path) <= fonts(out, tmp_path)
    assert traces(out, HIV_WORDS) == []
    text = poppler("pdftotext", out, tmp_path)
    assert "Quarterly clinic report" in text and "Counselling" in text and "confidentiality" in text


@needs_poppler
def test_a_replacement_across_a_line_end_is_not_held(engine: Engine, tmp_path: Path) -> None:
    letter = referral_letter()
    policies = [SanitizePolicy(entities=("tuberculosis",), alpha=1.5, evidence_budget=0)]
    outcome = process(letter, engine=engine, policies=policies, name="letter.pdf")
    text = poppler("pdftotext", outcome.data, tmp_path)
    assert "tuberculosis" not in text.lower() and "Mr Brown" in text
    assert traces(outcome.data, re.compile("tuberculosis", re.IGNORECASE)) == []
    before, after = render(letter, tmp_path), render(outcome.data, tmp_path)
    assert len(before) == len(after) == 2
    assert all(changed_share(a, b) <= 0.10 for a, b in zip(before, after, strict=True))


def test_words_are_replaced_where_they_are(report: bytes) -> None:
    doc = extract_pdf(report, part="r", limits=Limits())
    new = []
    for seg in doc.segments:
        edits = [(m.start(), m.end(), "virus") for m in re.finditer("HIV", seg.text)]
        new.append(apply_to_pieces(seg.pieces, edits))
    again = extract_pdf(doc.rebuild(new), part="r2", limits=Limits())
    assert again.text.count("virus") == doc.text.count("HIV") > 0
    assert again.text.replace("virus", "HIV") == doc.text  # everything else is where it was


def test_a_replacement_that_does_not_fit_becomes_a_redaction_box(tmp_path: Path) -> None:
    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.add_font("Sans", fname=str(FONTS / "DejaVuSans.ttf"))
    pdf.set_font("Sans", size=10)
    pdf.cell(40, 14, "HIV", border=1)
    pdf.cell(300, 14, "next cell of the table, with more words", border=1)
    data = bytes(pdf.output())
    doc = extract_pdf(data, part="t", limits=Limits())
    long = "a replacement far too long for the cell"
    new = [
        apply_to_pieces(s.pieces, [(m.start(), m.end(), long) for m in re.finditer("HIV", s.text)])
        for s in doc.segments
    ]
    out = doc.rebuild(new)
    again = extract_pdf(out, part="t2", limits=Limits())
    assert "HIV" not in again.text and "next cell of the table" in again.text and long not in again.text
    with pikepdf.open(io.BytesIO(out)) as opened:
        ops = [str(op.operator) for op in pikepdf.parse_content_stream(opened.pages[0])]
    assert "re" in ops and ops[-1] == "Q"  # the box, drawn after the page's own content


# -- text that is not page content ----------------------------------------------------------------


def _everything_but_the_page_says_hiv() -> bytes:
    pdf = FPDF(unit="pt")
    pdf.set_title("HIV results")
    pdf.set_subject("HIV")
    pdf.set_keywords("HIV, clinic")
    pdf.set_author("HIV clinic")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.start_section("HIV results")
    pdf.multi_cell(0, 14, "Minutes of the garden committee: the roses need water and the hedge needs cutting.")
    pdf.text_annotation(50, 200, "Sticky note: HIV positive, call back")
    pdf.link(50, 250, 100, 20, "https://example.org/hiv?result=HIV")
    pdf.embed_file(basename="HIV_results.txt", bytes=b"HIV positive", desc="HIV results")
    buf = io.BytesIO(bytes(pdf.output()))
    with pikepdf.open(buf) as doc:
        root = doc.Root
        xmp = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
               b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
               b'xmlns:dc="http://purl.org/dc/elements/1.1/" dc:format="application/pdf"><dc:title><rdf:Alt>'
               b'<rdf:li xml:lang="x-default">HIV results</rdf:li></rdf:Alt></dc:title></rdf:Description>'
               b'</rdf:RDF></x:xmpmeta><?xpacket end="w"?>')  # fmt: skip
        root.Metadata = doc.make_stream(xmp, Type=pikepdf.Name.Metadata, Subtype=pikepdf.Name.XML)
        js = doc.make_stream(b"app.alert('HIV');")
        names = root.get("/Names") or pikepdf.Dictionary()
        names.JavaScript = pikepdf.Dictionary(
            Names=pikepdf.Array([pikepdf.String("HIV"), pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS=js)])
        )
        root.Names = names
        appearance = doc.make_stream(
            b"/Tx BMC BT /Helv 10 Tf 2 4 Td (HIV positive) Tj ET EMC",
            Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Form, BBox=[0, 0, 150, 20],
            Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(Helv=pikepdf.Dictionary(
                Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica,
                Encoding=pikepdf.Name.WinAnsiEncoding))),
        )  # fmt: skip
        field = doc.make_indirect(pikepdf.Dictionary(
            Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Widget, FT=pikepdf.Name.Tx, T=pikepdf.String("status"),
            V=pikepdf.String("HIV positive"), TU=pikepdf.String("HIV status"), Rect=[50, 300, 200, 320],
            AP=pikepdf.Dictionary(N=appearance), P=doc.pages[0].obj,
        ))  # fmt: skip
        doc.pages[0].obj.Annots.append(field)
        root.AcroForm = pikepdf.Dictionary(Fields=pikepdf.Array([field]))
        doc.pages[0].obj.Contents = doc.make_stream(
            doc.pages[0].obj.Contents.read_bytes() + b"\n/Span <</ActualText (HIV)>> BDC EMC"
        )
        out = io.BytesIO()
        doc.save(out)
    return out.getvalue()


def test_metadata_annotations_links_bookmarks_fields_and_files_are_sanitized_or_removed(engine: Engine) -> None:
    data = _everything_but_the_page_says_hiv()
    hiv = re.compile(r"(?<![a-z])hiv(?![a-z])", re.IGNORECASE)
    assert len(traces(data, hiv)) > 8
    outcome = process(data, engine=engine, policies=HIV_ONLY, name="m.pdf")
    assert traces(outcome.data, hiv) == []
    removed = " ".join(n.reason for n in outcome.notes)
    assert "JavaScript" in removed and "embedded files" in removed
    with pikepdf.open(io.BytesIO(outcome.data)) as doc:
        assert "roses need water" in extract_pdf(outcome.data, part="o", limits=Limits()).text
        assert str(doc.docinfo["/Title"]) and "results" in str(doc.docinfo["/Title"])  # sanitized, not dropped
        with doc.open_outline() as outline:
            assert [item.title for item in outline.root] and "results" in outline.root[0].title
        assert len(doc.pages[0].obj.Annots) >= 3  # the note, the link and the field are still there


def test_a_clean_pdf_with_nothing_unread_passes_byte_for_byte(engine: Engine) -> None:
    data = referral_letter()
    outcome = process(data, engine=engine, policies=HIV_ONLY, name="l.pdf")
    assert not outcome.changed and not outcome.notes and outcome.data == data


def test_a_scanned_pdf_is_held() -> None:
    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.image(io.BytesIO(chart_png()), x=50, y=50, w=400)
    with pytest.raises(UnreadableContentError, match="images of text"):
        extract_pdf(bytes(pdf.output()), part="scan.pdf", limits=Limits())


def _with_an_earlier_revision(data: bytes) -> bytes:
    """An incremental update as an editor appends one: the old Info ('HIV results') stays in the file's bytes."""
    root = re.search(rb"/Root (\d+ \d+ R)", data)
    size = re.search(rb"/Size (\d+)", data)
    assert root and size
    n, startxref = int(size[1]), int(re.findall(rb"startxref\s+(\d+)", data)[-1])
    info = f"{n} 0 obj\n<< /Title (Minutes) >>\nendobj\n".encode()
    orphan = f"{n + 1} 0 obj\n(HIV positive: an object nothing refers to)\nendobj\n".encode()
    xref_at = len(data) + len(info) + len(orphan)
    tail = (
        f"xref\n{n} 2\n{len(data):010d} 00000 n \n{len(data) + len(info):010d} 00000 n \n"
        f"trailer\n<< /Size {n + 2} /Root {root[1].decode()} /Info {n} 0 R /Prev {startxref} >>\n"
        f"startxref\n{xref_at}\n%%EOF\n"
    )
    return data + info + orphan + tail.encode()


def test_earlier_revisions_and_orphan_objects_do_not_leave(engine: Engine) -> None:
    pdf = FPDF(unit="pt")
    pdf.set_title("HIV results")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 14, "Minutes of the garden committee: the roses need water.")
    data = _with_an_earlier_revision(bytes(pdf.output()))
    hiv = re.compile(r"(?<![a-z])hiv(?![a-z])", re.IGNORECASE)
    assert hiv.search(data.decode("latin-1"))
    with pikepdf.open(io.BytesIO(data)) as doc:
        assert str(doc.docinfo["/Title"]) == "Minutes"  # a reader sees only the last revision
    outcome = process(data, engine=engine, policies=HIV_ONLY, name="r.pdf")
    reasons = " ".join(n.reason for n in outcome.notes)
    assert "earlier revisions" in reasons and "nothing in the document refers to" in reasons
    assert traces(outcome.data, hiv) == [] and outcome.data.count(b"%%EOF") == 1


@needs_poppler
def test_a_pdf_attached_to_a_message_is_sanitized_in_place(engine: Engine, report: bytes, tmp_path: Path) -> None:
    import email
    import email.policy
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["From"] = "clinic@example.org"
    msg["To"] = "board@example.com"
    msg["Subject"] = "Quarterly report"
    msg.set_content("Please find the report attached.\n")
    msg.add_attachment(report, maintype="application", subtype="pdf", filename="report.pdf")
    outcome = process(msg.as_bytes(), engine=engine, policies=HIV_LA, name="m.eml")
    out = email.message_from_bytes(outcome.data, policy=email.policy.default)
    assert isinstance(out, EmailMessage)
    attached = next(p for p in out.iter_attachments() if p.get_filename() == "report.pdf").get_payload(decode=True)
    assert isinstance(attached, bytes) and attached != report
    assert len(render(attached, tmp_path)) == 2 and fonts(report, tmp_path) <= fonts(attached, tmp_path)
    assert traces(attached, HIV_WORDS) == [] and "Counselling" in poppler("pdftotext", attached, tmp_path)


def test_a_ligature_reads_as_its_letters() -> None:
    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.add_font("Sans", fname=str(FONTS / "DejaVuSans.ttf"))
    pdf.set_font("Sans", size=11)
    pdf.multi_cell(0, 14, "Signi\ufb01cant \ufb01ndings of the di\ufb00erential test were discussed.")
    assert (
        "Significant findings of the differential test"
        in extract_pdf(bytes(pdf.output()), part="l", limits=Limits()).text
    )


@needs_poppler
def test_a_longer_replacement_stays_in_its_column(report: bytes, tmp_path: Path) -> None:
    doc = extract_pdf(report, part="r", limits=Limits())
    new = []
    for seg in doc.segments:
        edits = [(m.start(), m.end(), "an exceptionally long generalization") for m in re.finditer("HIV", seg.text)]
        new.append(apply_to_pieces(seg.pieces, edits))
    out = doc.rebuild(new)
    html = poppler("pdftotext", out, tmp_path, "-bbox", "-f", "1", "-l", "1")
    pattern = r'xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)".*?>([^<]*)<'
    words = [(float(x0), float(y0), float(x1), w) for x0, y0, x1, w in re.findall(pattern, html)]
    top = min(y for _x0, y, _x1, w in words if w == "Staff")  # the first word of the right column
    bottom = min(y for _x0, y, _x1, w in words if w == "Service")  # the table under the columns
    right_column = min(x0 for x0, _y, _x1, w in words if w == "Staff")
    left = [x1 for x0, y, x1, _w in words if top - 1 <= y < bottom and x0 < right_column - 20]
    assert len(left) > 50 and max(left) <= right_column  # nothing of the left column runs into the right
    assert "HIV" not in poppler("pdftotext", out, tmp_path)


def test_page_labels_and_tagged_structure_text_are_read(engine: Engine) -> None:
    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 14, "Minutes of the garden committee: the roses need water.")
    with pikepdf.open(io.BytesIO(bytes(pdf.output()))) as doc:
        doc.Root.PageLabels = pikepdf.Dictionary(
            Nums=[0, pikepdf.Dictionary(S=pikepdf.Name.D, P=pikepdf.String("HIV-"))]
        )
        figure = pikepdf.Dictionary(
            Type=pikepdf.Name.StructElem, S=pikepdf.Name.Figure, Alt=pikepdf.String("HIV chart")
        )
        root = pikepdf.Dictionary(Type=pikepdf.Name.StructTreeRoot, K=doc.make_indirect(figure))
        figure.P = doc.make_indirect(root)
        doc.Root.StructTreeRoot = figure.P
        buf = io.BytesIO()
        doc.save(buf)
    hiv = re.compile(r"(?<![a-z])hiv(?![a-z])", re.IGNORECASE)
    outcome = process(buf.getvalue(), engine=engine, policies=HIV_ONLY, name="p.pdf")
    assert outcome.changed and traces(outcome.data, hiv) == []


@needs_poppler
def test_a_word_hyphenated_at_a_line_end_is_read_whole(engine: Engine, tmp_path: Path) -> None:
    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.set_font("Times", size=12)
    for line in ("Dear colleague, I am referring Mr Brown, who was treated for tuber-",
                 "culosis in 2019 and now reports a persistent cough and night sweats."):  # fmt: skip
        pdf.cell(0, 15, line, new_x="LMARGIN", new_y="NEXT")
    data = bytes(pdf.output())
    assert "tuberculosis in 2019" in extract_pdf(data, part="h", limits=Limits()).text
    outcome = process(data, engine=engine, policies=TB_ONLY, name="h.pdf")
    text = poppler("pdftotext", outcome.data, tmp_path)
    assert "tuber" not in text and "culosis" not in text and "persistent cough" in text


SAMPLE_PDFS = (
    "contrib/matplotlib.pdf",
    "font-size-test.pdf",
    "zen_of_python_corrupted.pdf",
    "contrib/issue-1062-filters.pdf",
    "contrib/issue-1008-inline-ascii85.pdf",
    "jo.pdf",
    "simple4.pdf",
    "contrib/issue-00369-excel.pdf",
)


@pytest.mark.parametrize("name", SAMPLE_PDFS)
def test_sample_pdfs_with_text_are_read(name: str) -> None:
    from builders import SAMPLES

    doc = extract_pdf((SAMPLES / "pdf" / "pdfminer" / name).read_bytes(), part=name, limits=Limits())
    assert doc.pages >= 1 and len(doc.text.strip()) >= 16


def test_xmp_with_undeclared_prefixes_is_read_not_dropped(engine: Engine) -> None:
    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 14, "Minutes of the garden committee: the roses need water.")
    pdf.set_xmp_metadata(
        '<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/">'
        "<dc:subject>HIV results</dc:subject></rdf:Description>"
    )
    outcome = process(bytes(pdf.output()), engine=engine, policies=HIV_ONLY, name="x.pdf")
    assert outcome.changed and not outcome.notes
    with pikepdf.open(io.BytesIO(outcome.data)) as doc:
        xmp = doc.Root.Metadata.read_bytes().decode()
    assert "results" in xmp and not re.search(r"(?<![a-z])hiv(?![a-z])", xmp, re.IGNORECASE)
