"""Fonts as far as editing text needs them: the codes in a string, their Unicode, their widths.

Widths are in text-space units per unit of font size (a glyph's w0), so a
glyph's displacement is ``(w0 * Tfs + Tc + Tw) * Th``. Encodings, ToUnicode
CMaps, predefined CMaps and the standard 14 fonts' metrics come from
pdfminer's tables; the font dictionaries themselves are read with pikepdf.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import pikepdf

STANDARD_ALIASES = {
    "Arial": "Helvetica",
    "Arial,Bold": "Helvetica-Bold",
    "Arial-BoldMT": "Helvetica-Bold",
    "ArialMT": "Helvetica",
    "TimesNewRoman": "Times-Roman",
    "TimesNewRomanPSMT": "Times-Roman",
    "TimesNewRoman,Bold": "Times-Bold",
    "TimesNewRomanPS-BoldMT": "Times-Bold",
    "CourierNew": "Courier",
    "CourierNewPSMT": "Courier",
}
# A ligature glyph reads as its letters, so "di\ufb00erential" is the word "differential".
LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                           "\ufb05": "st", "\ufb06": "st"})  # fmt: skip
SUBSET = re.compile(r"^[A-Z]{6}\+")


def _name(obj: object) -> str:
    return str(obj)[1:] if isinstance(obj, pikepdf.Name) else ""


def _num(obj: object, default: float = 0.0) -> float:
    try:
        return float(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


@dataclass(slots=True)
class Font:
    """One font resource: how its strings split into codes, and what each code is."""

    base: str
    two_byte: bool  # Identity-H/V: two bytes a code
    cmap_trie: dict[int, object] | None  # another CMap: codes of varying length
    vertical: bool
    embedded: bool
    to_unicode: dict[int, str]
    encoding: dict[int, str]
    widths: dict[int, float]
    default_width: float
    std_widths: dict[str, float]  # a standard 14 font without /Widths: by character
    ascent: float
    descent: float
    flags: int
    simple: bool
    # Filled while reading the document: characters drawn with this font, by the code that drew them.
    drawn: dict[str, bytes] = field(default_factory=dict)
    decoded: dict[int, str] = field(default_factory=dict)  # a cache of ``unicode``

    def split(self, raw: bytes) -> Iterator[tuple[int, int, int, int]]:
        """(start, end, code, cid) of each character code in a string."""
        if self.simple:
            for i, b in enumerate(raw):
                yield i, i + 1, b, b
        elif self.two_byte or self.cmap_trie is None:
            for i in range(0, len(raw) - 1, 2):
                code = (raw[i] << 8) | raw[i + 1]
                yield i, i + 2, code, code
        else:
            start, node = 0, self.cmap_trie
            for i, b in enumerate(raw):
                nxt = node.get(b)
                if isinstance(nxt, dict):
                    node = nxt
                    continue
                yield start, i + 1, int.from_bytes(raw[start : i + 1], "big"), nxt if isinstance(nxt, int) else 0
                start, node = i + 1, self.cmap_trie

    def unicode(self, code: int, cid: int) -> str:
        text = self.decoded.get(code)
        if text is None:
            text = self.to_unicode.get(code)
            if text is None:
                text = self.encoding.get(code if self.simple else cid, "")
            text = self.decoded[code] = text.replace("\x00", "").translate(LIGATURES)
        return text

    def width(self, cid: int, text: str) -> float:
        w = self.widths.get(cid)
        if w is not None:
            return w
        if self.std_widths:
            return self.std_widths.get(text, self.default_width)
        return self.default_width

    def code_for(self, char: str) -> bytes | None:
        """The code that draws ``char`` in this font, if the font certainly has the glyph."""
        code = self.drawn.get(char)
        if code is not None:
            return code
        if self.embedded or not self.simple:
            return None  # a subset font: only what the document drew is sure to be there
        for c, u in self.encoding.items():
            if u == char and (c in self.widths or char in self.std_widths):
                return bytes([c])
        return None

    def space_is_byte32(self, code: bytes) -> bool:
        return code == b" " and self.simple


def standard_font(base: str) -> Font:
    """A standard 14 font with WinAnsiEncoding, for replacement text the original font cannot draw."""
    from pdfminer.encodingdb import EncodingDB
    from pdfminer.fontmetrics import FONT_METRICS

    desc, widths = FONT_METRICS[base]
    return Font(
        base=base,
        two_byte=False,
        cmap_trie=None,
        vertical=False,
        embedded=False,
        to_unicode={},
        encoding=dict(EncodingDB.get_encoding("WinAnsiEncoding")),
        widths={},
        default_width=0.5,
        std_widths={k: v / 1000 for k, v in widths.items()},
        ascent=_num(desc.get("Ascent"), 718) / 1000,
        descent=_num(desc.get("Descent"), -207) / 1000,
        flags=0,
        simple=True,
    )


def fallback_for(font: Font) -> str:
    """The standard font closest to ``font``: serif or not, fixed pitch or not, bold, italic."""
    name = font.base.lower()
    bold = any(w in name for w in ("bold", "black", "heavy", "medi", "semibold", "demi", "cmbx")) or bool(
        font.flags & (1 << 18)
    )
    italic = any(w in name for w in ("italic", "oblique", "cmti", "cmsl")) or bool(font.flags & (1 << 6))
    serif_names = ("times", "roman", "nimbusrom", "cmr", "cmbx", "cmti", "minion", "garamond", "georgia",
                   "cambria", "palatino", "century", "book", "baskerville", "caslon", "utopia", "charter")  # fmt: skip
    if font.flags & 1 or "courier" in name or "mono" in name or name.startswith("cmtt"):
        family, it = "Courier", "Oblique"
    elif font.flags & 2 or any(w in name for w in serif_names) or ("serif" in name and "sans" not in name):
        family, it = "Times", "Italic"
    else:
        family, it = "Helvetica", "Oblique"
    if family == "Times":
        style = "-BoldItalic" if bold and italic else "-Bold" if bold else "-Italic" if italic else "-Roman"
    else:
        style = "-BoldOblique" if bold and italic else "-Bold" if bold else f"-{it}" if italic else ""
    return family + style


def standard_resource(base: str) -> pikepdf.Dictionary:
    return pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.Type1,
        BaseFont=pikepdf.Name("/" + base),
        Encoding=pikepdf.Name.WinAnsiEncoding,
    )


def load_font(obj: pikepdf.Object) -> Font:
    from pdfminer.encodingdb import EncodingDB
    from pdfminer.fontmetrics import FONT_METRICS

    subtype = _name(obj.get("/Subtype"))
    base = _name(obj.get("/BaseFont"))
    plain = SUBSET.sub("", base)
    simple = subtype != "Type0"
    to_unicode = _to_unicode(obj.get("/ToUnicode"))
    widths: dict[int, float] = {}
    default_width = 0.0
    two_byte, trie, vertical = False, None, False
    descriptor = obj.get("/FontDescriptor")
    encoding: dict[int, str] = {}
    if simple:
        scale = 0.001
        if subtype == "Type3":
            matrix = obj.get("/FontMatrix")
            scale = _num(matrix[0], 0.001) if isinstance(matrix, pikepdf.Array) and len(matrix) == 6 else 0.001
        first = int(_num(obj.get("/FirstChar"), 0))
        w_arr = obj.get("/Widths")
        if isinstance(w_arr, pikepdf.Array):
            for i, w in enumerate(w_arr):
                widths[first + i] = _num(w) * scale
        if isinstance(descriptor, pikepdf.Dictionary):
            default_width = _num(descriptor.get("/MissingWidth"), 0) * scale
        enc = obj.get("/Encoding")
        if isinstance(enc, pikepdf.Name):
            encoding = dict(EncodingDB.get_encoding(_name(enc)))
        elif isinstance(enc, pikepdf.Dictionary):
            from pdfminer.psparser import LIT

            diff: list[object] = []
            for x in enc.get("/Differences", pikepdf.Array()):
                diff.append(LIT(_name(x)) if isinstance(x, pikepdf.Name) else int(_num(x)))
            encoding = dict(EncodingDB.get_encoding(_name(enc.get("/BaseEncoding")) or "StandardEncoding", diff))
        else:
            encoding = dict(EncodingDB.get_encoding("StandardEncoding"))
    else:
        enc = obj.get("/Encoding")
        enc_name = _name(enc)
        if enc_name in ("Identity-H", "Identity-V"):
            two_byte, vertical = True, enc_name.endswith("-V")
        else:
            trie, vertical = _cmap(enc)
        descendants = obj.get("/DescendantFonts")
        cid_font = descendants[0] if isinstance(descendants, pikepdf.Array) and len(descendants) else None
        if isinstance(cid_font, pikepdf.Dictionary):
            if not to_unicode:
                encoding = _collection_unicode(cid_font.get("/CIDSystemInfo"), vertical)
            descriptor = cid_font.get("/FontDescriptor")
            default_width = _num(cid_font.get("/DW"), 1000) / 1000
            widths = _cid_widths(cid_font.get("/W"))
        else:
            default_width = 1.0
    std_widths: dict[str, float] = {}
    std = STANDARD_ALIASES.get(plain, plain)
    if std in FONT_METRICS and not widths:
        std_widths = {k: v / 1000 for k, v in FONT_METRICS[std][1].items()}
    embedded = False
    ascent, descent, flags = 0.75, -0.25, 0
    if isinstance(descriptor, pikepdf.Dictionary):
        embedded = any(k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3"))
        ascent = _num(descriptor.get("/Ascent"), 750) / 1000 or 0.75
        descent = _num(descriptor.get("/Descent"), -250) / 1000 or -0.25
        flags = int(_num(descriptor.get("/Flags"), 0))
    if subtype == "Type3":
        embedded = True  # its glyphs are procedures in the document
    return Font(
        base=plain,
        two_byte=two_byte,
        cmap_trie=trie,
        vertical=vertical,
        embedded=embedded,
        to_unicode=to_unicode,
        encoding=encoding,
        widths=widths,
        default_width=default_width,
        std_widths=std_widths,
        ascent=ascent,
        descent=descent,
        flags=flags,
        simple=simple,
    )


def _to_unicode(obj: object) -> dict[int, str]:
    if not isinstance(obj, pikepdf.Stream):
        return {}
    from pdfminer.cmapdb import CMapParser, FileUnicodeMap

    try:
        umap = FileUnicodeMap()
        CMapParser(umap, io.BytesIO(obj.read_bytes())).run()
    except Exception:  # a broken ToUnicode map: fall back to the encoding
        return {}
    return {int(k): str(v) for k, v in umap.cid2unichr.items()}


def _collection_unicode(info: object, vertical: bool) -> dict[int, str]:
    """CID to Unicode for the Adobe character collections (Japan1, GB1, CNS1, Korea1), from pdfminer's tables."""
    if not isinstance(info, pikepdf.Dictionary):
        return {}
    from pdfminer.cmapdb import CMapDB

    try:
        umap = CMapDB.get_unicode_map(f"{info.get('/Registry')}-{info.get('/Ordering')}", vertical)
    except (CMapDB.CMapNotFound, KeyError, ValueError, OSError):
        return {}
    return {int(k): str(v) for k, v in getattr(umap, "cid2unichr", {}).items()}


def _cmap(enc: object) -> tuple[dict[int, object] | None, bool]:
    from pdfminer.cmapdb import CMap, CMapDB, CMapParser

    try:
        if isinstance(enc, pikepdf.Name):
            cmap = CMapDB.get_cmap(_name(enc))
        elif isinstance(enc, pikepdf.Stream):
            cmap = CMap()
            CMapParser(cmap, io.BytesIO(enc.read_bytes())).run()
        else:
            return None, False
    except Exception:
        return None, False
    trie = getattr(cmap, "code2cid", None)
    vertical = bool(getattr(cmap, "is_vertical", lambda: False)())
    return (trie if isinstance(trie, dict) and trie else None), vertical


def _cid_widths(w: object) -> dict[int, float]:
    out: dict[int, float] = {}
    if not isinstance(w, pikepdf.Array):
        return out
    items = list(w)
    i = 0
    while i + 1 < len(items):
        first = int(_num(items[i]))
        nxt = items[i + 1]
        if isinstance(nxt, pikepdf.Array):
            for k, v in enumerate(nxt):
                out[first + k] = _num(v) / 1000
            i += 2
        elif i + 2 < len(items):
            last, width = int(_num(nxt)), _num(items[i + 2]) / 1000
            if last - first <= 65536:
                for c in range(first, last + 1):
                    out[c] = width
            i += 3
        else:
            break
    return out
