"""Dashboard charts as inline SVG, drawn on the server: no script, nothing loaded from elsewhere."""

from __future__ import annotations

import time
from collections.abc import Sequence
from html import escape

PALETTE = {
    "clean": "#6a9f58",
    "sanitized": "#4e79a7",
    "held": "#e15759",
    "rejected": "#b07aa1",
    "tempfail": "#f28e2b",
    "busy": "#edc948",
    "upstream-error": "#9c755f",
    "upstream-refused": "#bab0ac",
}
_OTHER = "#76b7b2"


def stacked_bars(rows: Sequence[tuple[float, str, int]], *, bucket: float, start: float, end: float,
                 title: str) -> str:  # fmt: skip
    """Messages by outcome over time: one bar per period from start to end (empty ones too)."""
    if not rows:
        return _empty(title)
    first = start // bucket * bucket
    periods = [first + i * bucket for i in range(int((end - first) // bucket) + 1)]
    outcomes = sorted(
        {o for _p, o, _n in rows}, key=lambda o: (o not in PALETTE, list(PALETTE).index(o) if o in PALETTE else 0, o)
    )
    totals = {p: sum(n for q, _o, n in rows if q == p) for p in periods}
    top = max(totals.values(), default=0) or 1
    w, h, left, bottom = 640, 220, 44, 28
    step = (w - left - 10) / len(periods)
    bar = min(48.0, max(2.0, step - 2))
    parts = [_open(w, h + 30, title), _axis(left, h - bottom, top)]
    for i, p in enumerate(periods):
        x = left + 4 + i * step + (step - 2 - bar) / 2
        y = float(h - bottom)
        for o in outcomes:
            n = sum(v for q, oo, v in rows if q == p and oo == o)
            if not n:
                continue
            bh = (h - bottom - 10) * n / top
            y -= bh
            label = f"{_when(p, bucket)}: {n} {o}"
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{bh:.1f}" '
                         f'fill="{PALETTE.get(o, _OTHER)}"><title>{escape(label)}</title></rect>')  # fmt: skip
    parts.append(f'<text x="{left}" y="{h - 8}" class="tick">{escape(_when(periods[0], bucket))}</text>')
    parts.append(
        f'<text x="{w - 10}" y="{h - 8}" class="tick" text-anchor="end">{escape(_when(periods[-1], bucket))}</text>'
    )
    for i, o in enumerate(outcomes):  # legend
        parts.append(f'<rect x="{left + i * 110}" y="{h + 6}" width="10" height="10" fill="{PALETTE.get(o, _OTHER)}"/>'
                     f'<text x="{left + i * 110 + 14}" y="{h + 15}" class="tick">{escape(o)}</text>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def horizontal_bars(items: Sequence[tuple[str, float]], *, title: str, unit: str = "", color: str = "#4e79a7") -> str:
    if not items:
        return _empty(title)
    w, row, left = 640, 22, 200
    h = row * len(items) + 10
    top = max(v for _k, v in items) or 1
    parts = [_open(w, h, title)]
    for i, (label, value) in enumerate(items):
        y = 5 + i * row
        bw = (w - left - 70) * value / top
        shown = f"{value:g}{unit}"
        parts.append(f'<text x="{left - 6}" y="{y + 15}" text-anchor="end" class="label">{escape(_short(label))}</text>'
                     f'<rect x="{left}" y="{y + 3}" width="{bw:.1f}" height="{row - 6}" fill="{color}">'
                     f'<title>{escape(label)}: {escape(shown)}</title></rect>'
                     f'<text x="{left + bw + 6:.1f}" y="{y + 15}" class="tick">{escape(shown)}</text>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def histogram(values: Sequence[float], *, bins: int = 10, title: str) -> str:
    """Utility preservation of sanitized messages, 0-100 %, in equal bins."""
    if not values:
        return _empty(title)
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v * bins)))] += 1
    items = [(f"{100 * i // bins}-{100 * (i + 1) // bins} %", float(c)) for i, c in enumerate(counts)]
    return horizontal_bars(items, title=title, color="#59a14f")


def _open(w: int, h: int, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="100%" role="img" '
            f'aria-label="{escape(title)}"><title>{escape(title)}</title>')  # fmt: skip


def _axis(left: int, base: int, top: int) -> str:
    return (f'<line x1="{left}" y1="10" x2="{left}" y2="{base}" class="axis"/>'
            f'<line x1="{left}" y1="{base}" x2="630" y2="{base}" class="axis"/>'
            f'<text x="{left - 4}" y="16" text-anchor="end" class="tick">{top}</text>'
            f'<text x="{left - 4}" y="{base}" text-anchor="end" class="tick">0</text>')  # fmt: skip


def _empty(title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 640 40" width="100%" role="img" '
            f'aria-label="{escape(title)}"><text x="10" y="25" class="tick">No data in this period.</text>'
            "</svg>")  # fmt: skip


def _when(t: float, bucket: float) -> str:
    return time.strftime("%m-%d %H:%M" if bucket < 86400 else "%Y-%m-%d", time.gmtime(t))


def _short(label: str, n: int = 28) -> str:
    return label if len(label) <= n else label[: n - 1] + "\u2026"
