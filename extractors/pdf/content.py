"""One content stream's text: where each glyph is, what a reader gets, and the stream with words replaced.

The stream is interpreted as far as text needs it (graphics state stack, CTM,
text state, text and line matrices), so each glyph is known by the operator
and the bytes that drew it, its Unicode text, its width and its place. Words
are replaced where they are: the replaced glyphs leave the content (each
becomes a TJ kerning of the same width, so nothing else moves), and the
replacement is shown in the same text state, font and size, fitted to the
space; with a standard font of the same style where the original (often a
subset) lacks a glyph; or, where nothing fits, a redaction box is drawn over
the place and the text is gone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import pikepdf
from pikepdf import Array, ContentStreamInstruction, Name, Operator, String

from extractors.pdf.fonts import Font, fallback_for, standard_font
from gateway.errors import UnsupportedContentError

Matrix = tuple[float, float, float, float, float, float]
IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
SHOW = frozenset({"Tj", "TJ", "'", '"'})
HYPHENS = frozenset({"-", "\u00ad", "\u2010"})
WORD_GAP = 0.15  # a gap wider than this many ems between glyphs reads as a space
SPACE_EM = 0.4  # a space the font has no glyph for: a gap that reads as a space even squeezed to 50 %
MIN_SQUEEZE = 0.5  # narrowest horizontal scaling of a replacement in the original size
MIN_SHRINK = 0.3  # below this, with a smaller size as well, the replacement does not fit: a box


def mul(m: Matrix, n: Matrix) -> Matrix:
    a, b, c, d, e, f = m
    aa, bb, cc, dd, ee, ff = n
    return (
        a * aa + b * cc,
        a * bb + b * dd,
        c * aa + d * cc,
        c * bb + d * dd,
        e * aa + f * cc + ee,
        e * bb + f * dd + ff,
    )


def num(obj: object, default: float = 0.0) -> float:
    try:
        value = float(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return value if math.isfinite(value) else default


@dataclass(slots=True)
class TextState:
    font: Font | None = None
    font_name: Name | None = None
    size: float = 0.0
    tc: float = 0.0
    tw: float = 0.0
    th: float = 1.0
    tl: float = 0.0
    rise: float = 0.0


@dataclass(slots=True)
class Glyph:
    op: int
    elem: int  # which string of a TJ array (0 for the other operators)
    start: int  # the code's bytes in that string
    end: int
    text: str
    width: float  # w0 * Tfs + Tc + Tw: the displacement before horizontal scaling
    x: float  # origin in the stream's user space
    y: float
    dx: float  # unit vector along the baseline
    dy: float
    adv: float  # displacement in user space
    size: float  # font size in user space
    scale: float  # user length of one text-space unit along the baseline
    trm: Matrix  # glyph space to user space


@dataclass(slots=True)
class Shown:
    state: TextState
    glyphs: list[int] = field(default_factory=list)


@dataclass(slots=True)
class StreamText:
    ops: list[ContentStreamInstruction | pikepdf.ContentStreamInlineImage]
    glyphs: list[Glyph]
    shown: dict[int, Shown]
    positioning: list[int]
    marked: list[tuple[int, Name]]  # strings in marked-content property lists: (operator, key)
    unread: list[int]  # text shown in a font that cannot be read: removed on rebuild
    pieces: list[str] = field(default_factory=list)
    owner: list[int] = field(default_factory=list)  # glyph of each piece, -1 for a space or line break
    line_of: list[int] = field(default_factory=list)  # line of each glyph


FontLookup = Callable[[Name], Font | None]


def scan(ops: list[ContentStreamInstruction | pikepdf.ContentStreamInlineImage], fonts: FontLookup) -> StreamText:
    ctm = IDENTITY
    ts = TextState()
    stack: list[tuple[Matrix, TextState]] = []
    tm = tlm = IDENTITY
    out = StreamText(ops, [], {}, [], [], [])

    def next_line(tx: float, ty: float) -> None:
        nonlocal tm, tlm
        tlm = mul((1.0, 0.0, 0.0, 1.0, tx, ty), tlm)
        tm = tlm

    for i, ins in enumerate(ops):
        if not isinstance(ins, ContentStreamInstruction):
            continue
        op = str(ins.operator)
        args = ins.operands
        if op == "q":
            stack.append((ctm, replace(ts)))
        elif op == "Q":
            if stack:
                ctm, ts = stack.pop()
        elif op == "cm" and len(args) == 6:
            ctm = mul(tuple(num(a) for a in args), ctm)  # type: ignore[arg-type]
        elif op == "BT":
            tm = tlm = IDENTITY
            out.positioning.append(i)
        elif op == "Tf" and len(args) == 2:
            ts.font_name = args[0] if isinstance(args[0], Name) else None
            ts.font = fonts(args[0]) if isinstance(args[0], Name) else None
            ts.size = num(args[1])
        elif op in ("Tc", "Tw", "Tz", "TL", "Ts") and len(args) == 1:
            v = num(args[0])
            if op == "Tc":
                ts.tc = v
            elif op == "Tw":
                ts.tw = v
            elif op == "Tz":
                ts.th = v / 100
            elif op == "TL":
                ts.tl = v
            else:
                ts.rise = v
        elif op in ("Td", "TD") and len(args) == 2:
            if op == "TD":
                ts.tl = -num(args[1])
            next_line(num(args[0]), num(args[1]))
            out.positioning.append(i)
        elif op == "Tm" and len(args) == 6:
            tm = tlm = tuple(num(a) for a in args)  # type: ignore[assignment]
            out.positioning.append(i)
        elif op == "T*":
            next_line(0.0, -ts.tl)
            out.positioning.append(i)
        elif op in SHOW and args:
            if op == '"' and len(args) == 3:
                ts.tw, ts.tc = num(args[0]), num(args[1])
            if op in ("'", '"'):
                next_line(0.0, -ts.tl)
                out.positioning.append(i)
            font = ts.font
            if font is None:
                out.unread.append(i)
                continue
            shown = Shown(replace(ts))
            out.shown[i] = shown
            items = list(args[0]) if op == "TJ" and isinstance(args[0], Array) else [args[-1]]
            for elem, item in enumerate(items):
                if not isinstance(item, String):
                    tm = mul((1.0, 0.0, 0.0, 1.0, -num(item) / 1000 * ts.size * ts.th, 0.0), tm)
                    continue
                raw = bytes(item)
                for start, end, code, cid in font.split(raw):
                    text = font.unicode(code, cid)
                    if len(text) == 1 and text not in font.drawn:
                        font.drawn[text] = raw[start:end]
                    tw = ts.tw if font.simple and code == 32 else 0.0
                    width = font.width(cid, text) * ts.size + ts.tc + tw
                    base = mul(tm, ctm)
                    scale = math.hypot(base[0], base[1])
                    hs = ts.size * ts.th
                    trm = (
                        hs * base[0],
                        hs * base[1],
                        ts.size * base[2],
                        ts.size * base[3],
                        ts.rise * base[2] + base[4],
                        ts.rise * base[3] + base[5],
                    )
                    dx, dy = (base[0] / scale, base[1] / scale) if scale else (1.0, 0.0)
                    tx = width * ts.th
                    shown.glyphs.append(len(out.glyphs))
                    out.glyphs.append(
                        Glyph(
                            op=i,
                            elem=elem,
                            start=start,
                            end=end,
                            text=text,
                            width=width,
                            x=trm[4],
                            y=trm[5],
                            dx=dx,
                            dy=dy,
                            adv=tx * scale,
                            size=abs(ts.size) * math.hypot(base[2], base[3]),
                            scale=scale,
                            trm=trm,
                        )
                    )
                    tm = (tm[0], tm[1], tm[2], tm[3], tx * tm[0] + tm[4], tx * tm[1] + tm[5])
        elif op in ("BDC", "DP") and len(args) == 2 and isinstance(args[1], pikepdf.Dictionary):
            for key in args[1].keys():  # noqa: SIM118 (a pikepdf Dictionary)
                if isinstance(args[1].get(key), String):
                    out.marked.append((i, Name(key)))
    _layout(out)
    return out


def _layout(st: StreamText) -> None:
    """The text a reader gets: glyphs in content order, a space at a gap, a line break where the line changes."""
    pieces, owner, line_of = st.pieces, st.owner, st.line_of
    line = 0
    prev: Glyph | None = None
    for gi, g in enumerate(st.glyphs):
        if prev is not None:
            vx = g.x - (prev.x + prev.dx * prev.adv)
            vy = g.y - (prev.y + prev.dy * prev.adv)
            along = vx * prev.dx + vy * prev.dy
            across = -vx * prev.dy + vy * prev.dx
            size = max(prev.size, g.size, 1e-6)
            turned = abs(g.dx - prev.dx) > 0.05 or abs(g.dy - prev.dy) > 0.05
            if turned or abs(across) > 0.5 * size or along < -0.5 * size - prev.adv:
                # A wrap to the next line of the same paragraph reads as a space, so a phrase can cross it;
                # a jump (a new paragraph, column or block) is a line break.
                wrap = not turned and along < 0 and 0.5 * size < -across <= 2.0 * size
                line += 1
                if (
                    wrap
                    and prev.text in HYPHENS
                    and len(pieces) > 1
                    and pieces[-2][-1:].isalpha()
                    and g.text[:1].islower()
                ):
                    pieces[-1] = (
                        ""  # "tuber-" at a line end and "culosis" read as one word: the hyphen reads as nothing
                    )
                else:
                    pieces.append(" " if wrap and not prev.text[-1:].isspace() else "\n")
                    owner.append(-1)
            elif along > WORD_GAP * size and not (prev.text[-1:].isspace() or g.text[:1].isspace()):
                pieces.append(" ")
                owner.append(-1)
        pieces.append(g.text)
        owner.append(gi)
        line_of.append(line)
        prev = g


@dataclass(slots=True)
class _Line:
    start: float
    end: float
    y: float
    size: float


class Editor:
    """Replaces the changed pieces of one stream; ``add_font`` names a standard font in the stream's resources."""

    def __init__(self, st: StreamText, add_font: Callable[[str], Name]) -> None:
        self.st = st
        self.add_font = add_font
        self.removed: set[int] = set()
        self.inserts: dict[int, list[ContentStreamInstruction]] = {}
        self.boxes: list[ContentStreamInstruction] = []
        self.used_room: dict[int, float] = {}
        self._lines: dict[int, _Line] | None = None

    def apply(self, new: Sequence[str]) -> list[ContentStreamInstruction | pikepdf.ContentStreamInlineImage]:
        st = self.st
        old = st.pieces
        n = len(old)
        i = 0
        while i < n:
            if new[i] == old[i]:
                i += 1
                continue
            j = i
            while True:
                k = j + 1
                while k < n and new[k] == old[k] and old[k] == "":
                    k += 1
                if k < n and new[k] != old[k]:
                    j = k
                    continue
                break
            self._run(i, j, "".join(new[i : j + 1]))
            i = j + 1
        return self._rewrite()

    def _run(self, i: int, j: int, text: str) -> None:
        st = self.st
        glyphs = [st.owner[k] for k in range(i, j + 1) if st.owner[k] >= 0]
        if not glyphs:
            if text.strip():
                raise UnsupportedContentError("a PDF replacement with no glyph to take the place of")
            return
        parts: list[list[int]] = []
        for g in glyphs:
            if parts and st.line_of[g] == st.line_of[parts[-1][-1]]:
                parts[-1].append(g)
            else:
                parts.append([g])
        for g in glyphs:
            self.removed.add(g)
            font = st.shown[st.glyphs[g].op].state.font
            if font is not None and font.vertical:
                raise UnsupportedContentError("a replaced word in vertical writing (PDF)")
        chunks = self._distribute(text.split(), parts)
        for part, chunk in zip(parts, chunks, strict=True):
            if chunk:
                self._place(part, " ".join(chunk))

    def _distribute(self, words: list[str], parts: list[list[int]]) -> list[list[str]]:
        """Words of a replacement over the lines the replaced text took, so that the least room is the most."""
        if len(parts) == 1:
            return [words]
        if len(parts) > 4 or len(words) > 12:
            return [words] + [[] for _ in parts[1:]]
        spans = [self._span(p) for p in parts]
        best: tuple[float, list[list[str]]] = (-1.0, [words] + [[] for _ in parts[1:]])
        for cuts in itertools.combinations_with_replacement(range(len(words) + 1), len(parts) - 1):
            bounds = [0, *cuts, len(words)]
            chunks = [words[bounds[k] : bounds[k + 1]] for k in range(len(parts))]
            score = math.inf
            for chunk, span, part in zip(chunks, spans, parts, strict=True):
                if chunk:
                    score = min(score, span / max(self._natural(" ".join(chunk), part[0]), 1e-9))
            if score > best[0]:
                best = (score, chunks)
        return best[1]

    def _span(self, part: list[int]) -> float:
        first, last = self.st.glyphs[part[0]], self.st.glyphs[part[-1]]
        ex, ey = last.x + last.dx * last.adv, last.y + last.dy * last.adv
        return max(0.0, (ex - first.x) * first.dx + (ey - first.y) * first.dy)

    def _encode(self, text: str, font: Font) -> list[bytes | None] | None:
        """Codes for each character (None: a space the font has no glyph for); None if a glyph is missing."""
        out: list[bytes | None] = []
        for ch in text:
            code = font.code_for(ch)
            if code is None and ch != " ":
                return None
            out.append(code)
        return out

    def _font_for(self, text: str, g: Glyph, *, probe: bool = False) -> tuple[Font, Name, list[bytes | None]] | None:
        state = self.st.shown[g.op].state
        assert state.font is not None and state.font_name is not None
        codes = self._encode(text, state.font)
        if codes is not None:
            return state.font, state.font_name, codes
        base = fallback_for(state.font)
        std = standard_font(base)
        codes = self._encode(text, std)
        if codes is None:
            return None
        return std, Name("/Probe") if probe else self.add_font(base), codes

    def _advance(self, font: Font, codes: list[bytes | None], text: str, state: TextState, size: float) -> float:
        """Displacement of the replacement in text space before horizontal scaling."""
        total = 0.0
        for ch, code in zip(text, codes, strict=True):
            if code is None:
                total += SPACE_EM * size
                continue
            cid = int.from_bytes(code, "big")
            tw = state.tw if font.simple and code == b" " else 0.0
            total += font.width(cid, ch) * size + state.tc + tw
        return total

    def _natural(self, text: str, gi: int) -> float:
        g = self.st.glyphs[gi]
        state = self.st.shown[g.op].state
        chosen = self._font_for(text, g, probe=True)
        if chosen is None:
            return math.inf
        font, _name, codes = chosen
        return self._advance(font, codes, text, state, state.size) * state.th * g.scale

    def _place(self, part: list[int], text: str) -> None:
        st = self.st
        g = st.glyphs[part[0]]
        state = st.shown[g.op].state
        width = self._span(part)
        chosen = self._font_for(text, g)
        if chosen is None or state.size == 0 or g.scale == 0 or state.th == 0:
            self._box(part, width)
            return
        font, name, codes = chosen
        size, th = state.size, state.th
        natural = self._advance(font, codes, text, state, size) * th * g.scale
        shift = natural - width  # a shorter replacement closes the gap: the rest of the line moves left
        if natural > width:
            shift = min(natural - width, self._room(part))
            ratio = (width + shift) / natural
            if ratio < MIN_SHRINK:
                self._box(part, width)
                return
            if ratio < 0.999:
                if ratio < MIN_SQUEEZE:
                    size = state.size * ratio / 0.6
                th = (width + shift) / (self._advance(font, codes, text, state, size) * g.scale)
                th = min(th, state.th)
        line = st.line_of[part[0]]
        self.used_room[line] = self.used_room.get(line, 0.0) + shift
        items: list[object] = []
        for code in codes:
            if code is None:
                items.append(-1000 * SPACE_EM)
            else:
                items.append(String(code))
        advance = self._advance(font, codes, text, state, size)
        back = (advance - shift / (g.scale * th)) * 1000 / size
        items.append(round(back, 3))
        ops: list[ContentStreamInstruction] = []
        refont = name != state.font_name or size != state.size
        if refont:
            ops.append(ContentStreamInstruction([name, round(size, 4)], Operator("Tf")))
        if th != state.th:
            ops.append(ContentStreamInstruction([round(th * 100, 3)], Operator("Tz")))
        ops.append(ContentStreamInstruction([Array(items)], Operator("TJ")))
        if th != state.th:
            ops.append(ContentStreamInstruction([round(state.th * 100, 3)], Operator("Tz")))
        if refont and state.font_name is not None:
            ops.append(ContentStreamInstruction([state.font_name, state.size], Operator("Tf")))
        self.inserts[part[0]] = ops

    def _box(self, part: list[int], width: float) -> None:
        g = self.st.glyphs[part[0]]
        font = self.st.shown[g.op].state.font
        unit = math.hypot(g.trm[0], g.trm[1])
        if unit == 0:
            return  # nothing of it was visible
        asc, desc = (font.ascent, font.descent) if font else (0.75, -0.25)
        self.boxes += [
            ContentStreamInstruction([], Operator("q")),
            ContentStreamInstruction([round(v, 5) for v in g.trm], Operator("cm")),
            ContentStreamInstruction([0], Operator("g")),
            ContentStreamInstruction([0, round(desc, 4), round(width / unit, 4), round(asc - desc, 4)], Operator("re")),
            ContentStreamInstruction([], Operator("f")),
            ContentStreamInstruction([], Operator("Q")),
        ]

    def _line_info(self) -> dict[int, _Line]:
        if self._lines is None:
            self._lines = {}
            for gi, g in enumerate(self.st.glyphs):
                ln = self.st.line_of[gi]
                info = self._lines.get(ln)
                if info is None:
                    self._lines[ln] = _Line(g.x, g.x + g.adv, g.y, g.size)
                else:
                    info.start = min(info.start, g.x)
                    info.end = max(info.end, g.x + g.adv)
        return self._lines

    def _room(self, part: list[int]) -> float:
        """How far the rest of a horizontal line can move right before it meets other text or its column's edge."""
        st = self.st
        g, last = st.glyphs[part[0]], st.glyphs[part[-1]]
        if abs(g.dy) > 1e-6 or g.dx <= 0:
            return 0.0
        ln = st.line_of[part[0]]
        stop = next((p for p in st.positioning if p > last.op), len(st.ops))
        end = last.x + last.adv
        k = part[-1] + 1
        while k < len(st.glyphs) and st.glyphs[k].op < stop and st.line_of[k] == ln:
            end = max(end, st.glyphs[k].x + st.glyphs[k].adv)
            k += 1
        lines = self._line_info()
        me = lines[ln]
        # The column's edge: the widest of the nearby lines that start where this one does (not a title or a
        # running head that spans the page).
        band = 8 * me.size
        column = [info.end for info in lines.values() if abs(info.start - me.start) < 1.0 and abs(info.y - me.y) < band]
        right = max(column) if column else end
        while k < len(st.glyphs) and st.line_of[k] == ln:  # text further on the line that does not move
            if st.glyphs[k].x > end - 0.1:
                right = min(right, st.glyphs[k].x - 0.5 * me.size)
            k += 1
        for k, info in lines.items():  # text of another column or cell beside this line
            if k != ln and abs(info.y - me.y) < me.size and info.start > end - 0.1:
                right = min(right, info.start - 0.5 * me.size)
        return max(0.0, right - end - self.used_room.get(ln, 0.0))

    def _rewrite(self) -> list[ContentStreamInstruction | pikepdf.ContentStreamInlineImage]:
        st = self.st
        touched = {st.glyphs[g].op for g in self.removed}
        unread = set(st.unread)
        out: list[ContentStreamInstruction | pikepdf.ContentStreamInlineImage] = []
        for i, ins in enumerate(st.ops):
            if i in touched:
                out.extend(self._rewrite_op(i))
            elif i in unread:
                continue
            else:
                out.append(ins)
        if self.boxes:
            out = [ContentStreamInstruction([], Operator("q")), *out, ContentStreamInstruction([], Operator("Q"))]
            out += self.boxes
        return out

    def _rewrite_op(self, i: int) -> list[ContentStreamInstruction]:
        st = self.st
        ins = st.ops[i]
        assert isinstance(ins, ContentStreamInstruction)
        op, args = str(ins.operator), list(ins.operands)
        shown = st.shown[i]
        state = shown.state
        if state.size == 0:
            raise UnsupportedContentError("a replaced word in a zero-size font (PDF)")
        out: list[ContentStreamInstruction] = []
        if op == '"':
            out += [
                ContentStreamInstruction([args[0]], Operator("Tw")),
                ContentStreamInstruction([args[1]], Operator("Tc")),
            ]
        if op in ("'", '"'):
            out.append(ContentStreamInstruction([], Operator("T*")))
        items = list(args[0]) if op == "TJ" else [args[-1]]
        by_elem: dict[int, list[int]] = {}
        for gi in shown.glyphs:
            by_elem.setdefault(st.glyphs[gi].elem, []).append(gi)
        current: list[object] = []

        def flush() -> None:
            if current:
                out.append(ContentStreamInstruction([Array(current)], Operator("TJ")))
                current.clear()

        for e, item in enumerate(items):
            if not isinstance(item, String):
                current.append(item)
                continue
            raw = bytes(item)
            buf = bytearray()
            pos = 0
            for gi in by_elem.get(e, []):
                g = st.glyphs[gi]
                if gi in self.inserts:
                    if buf:
                        current.append(String(bytes(buf)))
                        buf.clear()
                    flush()
                    out.extend(self.inserts[gi])
                if gi in self.removed:
                    if buf:
                        current.append(String(bytes(buf)))
                        buf.clear()
                    current.append(round(-g.width * 1000 / state.size, 3))
                else:
                    buf += raw[g.start : g.end]
                pos = g.end
            buf += raw[pos:]
            if buf:
                current.append(String(bytes(buf)))
        flush()
        return out
