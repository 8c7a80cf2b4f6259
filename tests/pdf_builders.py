"""PDFs with real layout for the PDF tests: columns, a chart image, a table, several fonts, page numbers."""

from __future__ import annotations

import io
from pathlib import Path

from fpdf import FPDF
from PIL import Image, ImageDraw

FONTS = Path("/usr/share/fonts/truetype/dejavu")  # Debian's fonts-dejavu-core (.ci/run installs it)

REPORT_PARAGRAPHS = [
    "The clinic in Los Angeles reviewed the care of patients living with HIV during the last quarter. "
    "Most patients started antiretroviral therapy within two weeks of the diagnosis, and the share of "
    "patients whose viral load was suppressed rose from seventy to eighty-one percent.",
    "Counselling sessions were held every Tuesday. Nurses followed up missed appointments by telephone, "
    "and the pharmacy kept a two-month stock of every regimen. The HIV testing service moved to the new "
    "wing of the building in March, next to the vaccination room.",
    "Staff attended a training on confidentiality. Letters to employers never mention the diagnosis; "
    "referrals to specialists are sent by the secure portal, and paper records stay in the locked "
    "archive on the second floor.",
    "The board thanked the volunteers who drove patients to their appointments and the donors who paid "
    "for the new waiting room furniture, the children's corner and the water fountain in the hall.",
]


class _Report(FPDF):
    def footer(self) -> None:
        self.set_y(-30)
        self.set_font("Helvetica", size=8)
        self.cell(0, 10, f"Page {self.page_no()} of {{nb}}", align="C")


def chart_png() -> bytes:
    img = Image.new("RGB", (240, 140), "white")
    draw = ImageDraw.Draw(img)
    for i, (h, colour) in enumerate([(60, "#1f77b4"), (95, "#ff7f0e"), (120, "#2ca02c"), (80, "#d62728")]):
        draw.rectangle((20 + i * 55, 130 - h, 55 + i * 55, 130), fill=colour)
    draw.line((10, 130, 230, 130), fill="black", width=2)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def clinic_report() -> bytes:
    """Two pages, two columns: a title, headings, a bar chart, a table, page numbers; four fonts."""
    pdf = _Report(unit="pt", format="A4")
    pdf.set_margins(50, 50, 50)
    pdf.add_font("Serif", fname=str(FONTS / "DejaVuSerif.ttf"))
    pdf.add_font("Sans", fname=str(FONTS / "DejaVuSans.ttf"))
    pdf.add_font("Sans", style="B", fname=str(FONTS / "DejaVuSans-Bold.ttf"))
    pdf.set_title("Quarterly report of the clinic")
    pdf.set_author("Clinic board")
    for page in range(2):
        pdf.add_page()
        pdf.set_font("Sans", "B", 20)
        pdf.cell(0, 30, "Quarterly clinic report" if page == 0 else "Services and staff", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "I", 10)
        pdf.cell(0, 16, "Prepared for the board, second quarter", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(6)
        with pdf.text_columns(ncols=2, gutter=20, text_align="J", line_height=1.25, balance=True) as cols:
            for k, para in enumerate(REPORT_PARAGRAPHS):
                if k % 2 == 0:
                    pdf.set_font("Sans", "B", 11)
                    cols.write(text=f"Section {k // 2 + 1}\n")
                pdf.set_font("Serif", size=10)
                cols.write(text=para + "\n\n")
        y = pdf.get_y() + 10
        pdf.image(io.BytesIO(chart_png()), x=50, y=y, w=200)
        pdf.set_xy(270, y)
        pdf.set_font("Helvetica", size=9)
        pdf.set_left_margin(270)
        with pdf.table(width=270, col_widths=(120, 70, 80), align="LEFT") as table:
            for row in (("Service", "Visits", "Change"), ("HIV testing", "412", "+8 %"),
                        ("Therapy", "388", "+3 %"), ("Counselling", "120", "-2 %")):  # fmt: skip
                r = table.row()
                for cell in row:
                    r.cell(cell)
        pdf.set_left_margin(50)
    return bytes(pdf.output())


def referral_letter() -> bytes:
    """Two pages of a letter in Times, with 'pulmonary tuberculosis' falling across line ends."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_margins(72, 72, 72)
    body = (
        "Dear colleague, I am referring Mr Brown, aged 54, who was treated for pulmonary tuberculosis in 2019 and "
        "now reports a persistent cough, night sweats and weight loss. A chest radiograph last week showed "
        "changes that may be an old scar or a reactivation of pulmonary tuberculosis. His sputum samples are "
        "pending. He lives with his daughter and two grandchildren, who have not been screened yet. "
    )
    for page in range(2):
        pdf.add_page()
        pdf.set_font("Times", "B", 14)
        pdf.cell(0, 20, "Referral to the chest clinic" if page == 0 else "Background", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Times", size=12)
        for k in range(4):
            pdf.multi_cell(0, 15, body * (1 + k % 2), align="J")
            pdf.ln(8)
    return bytes(pdf.output())
