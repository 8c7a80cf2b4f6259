"""The output taken apart layer by layer, with none of the extractors' code.

Every layer a program could read yields *views*: (part, location, text).
Mail: each header raw and RFC 2047/2231-decoded (signatures and hashes
excepted), each preamble and epilogue, each body after its transfer encoding,
in its charset, and as UTF-16 when it is. ZIP: each entry's name and
contents, XML also with its tags removed so that words split over runs are
whole. PDF: a raw object walk, each stream decompressed: every string,
every name, the text shown by each BT…ET block (glyph codes mapped through
every ToUnicode CMap of the file), and whole streams (XMP, JavaScript,
embedded files, recursively). Content that is neither text nor a container
yields its printable runs (``strings``).

Readers are deliberately lenient: a detector must read what a recipient's
program might, so undecodable bytes are replaced, never a reason to look away.
"""

from __future__ import annotations

import base64
import binascii
import email
import email.header
import email.policy
import email.utils
import html
import io
import re
import urllib.parse
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from email.message import Message

from gateway.errors import LimitExceededError


@dataclass(frozen=True, slots=True)
class View:
    part: str
    location: str
    text: str
    binary: bool = False  # printable runs of binary content: only whole words count


@dataclass(frozen=True, slots=True, kw_only=True)
class Bounds:
    max_depth: int = 12
    max_expanded: int = 256 * 1024 * 1024  # bytes decompressed from all streams and entries together


# Values that are signatures, hashes or relay trace (queue ids such as "1l81fX-0005VD-FB"): random letters
# and the relays' own names, nothing a person wrote. Trace is added by the organisation's MTAs on the way.
OPAQUE_HEADERS = frozenset(
    h.lower()
    for h in (
        "DKIM-Signature", "ARC-Seal", "ARC-Message-Signature", "X-Google-DKIM-Signature", "Thread-Index",
        "X-MS-TNEF-Correlator", "X-Gm-Message-State", "X-Google-Smtp-Source", "X-MS-Exchange-CrossTenant-Id",
        "X-Microsoft-Antispam-Message-Info", "X-Forefront-Antispam-Report", "X-MS-Exchange-AntiSpam-MessageData-0",
        "X-MS-Exchange-AntiSpam-MessageData-1", "X-MS-Exchange-AntiSpam-MessageData-ChunkCount",
        "X-MS-Exchange-AntiSpam-MessageData-Original-0", "X-Microsoft-Antispam-Mailbox-Delivery",
        "X-Microsoft-Antispam-Message-Info-Original", "Autocrypt", "X-Received", "X-ME-Sender", "X-ME-Proxy",
        "Received", "X-YMail-OSG", "X-Gm-Gg", "IronPort-SDR", "Message-ID-Hash",
    )
)  # fmt: skip
OPAQUE_PREFIXES = ("x-ms-exchange-", "x-microsoft-antispam", "x-forefront-", "arc-")
_BLOCK_CLOSE = re.compile(
    r"</(?:[a-z]+:)?(?:p|div|td|th|tr|li|h[1-6]|title|table|tc)\s*>|<(?:[a-z]+:)?(?:br|tab|cr)\b[^>]*>", re.I
)
_TAG = re.compile(r"<[^>]*>")
_PRINTABLE = re.compile(rb"[\t\x20-\x7e]{6,}")
_UTF16LE = re.compile(rb"(?:[\x20-\x7e]\x00){6,}")


class _Budget:
    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.left = bounds.max_expanded

    def take(self, n: int, part: str) -> None:
        self.left -= n
        if self.left < 0:
            raise LimitExceededError(
                f"more than {self.bounds.max_expanded} bytes to verify once decompressed", part=part
            )


class _IndexedMessage(Message):
    """compat32's message with an index of its header names, built at the first question.

    The walk asks each part for its content type, charset, parameters and file name, and
    ``Message.get`` compares every header's name for each question (list mail has 40 and more).
    The verifier only reads what it parsed; the index is rebuilt should the header list change.
    """

    _first: tuple[list[tuple[str, str]], int, dict[str, tuple[str, str]]] | None = None

    def get(self, name: str, failobj: object = None) -> object:  # type: ignore[override]
        headers: list[tuple[str, str]] = self._headers  # type: ignore[attr-defined]
        index = self._first
        if index is None or index[0] is not headers or index[1] != len(headers):
            first: dict[str, tuple[str, str]] = {}
            for k, v in headers:
                first.setdefault(k.lower(), (k, v))
            index = self._first = (headers, len(headers), first)
        found = index[2].get(name.lower())
        if found is None:
            return failobj
        return self.policy.header_fetch_parse(*found)

    _params: dict[str, object] | None = None

    def _get_params_preserve(self, failobj: object, header: str) -> object:
        """The library's parameter list of a header value, parsed once: the walk asks a part's Content-Type for
        its parameters, its file name, its name and its charset, and the library parses the value for each."""
        value = self.get(header, _NO_HEADER)
        if value is _NO_HEADER:
            return failobj
        if not isinstance(value, str):  # a value with 8-bit bytes comes as a Header, which is not hashable
            return super()._get_params_preserve(failobj, header)  # type: ignore[misc]
        cache = self._params
        if cache is None:
            cache = self._params = {}
        found = cache.get(value)
        if found is None:
            found = cache[value] = super()._get_params_preserve(failobj, header)  # type: ignore[misc]
        return found


_NO_HEADER = object()


def parse_mail(data: bytes, *, indexed: bool = True) -> Message:
    """The output as the verifier reads it (compat32, lenient); ``indexed=False``: the library's plain class."""
    return email.message_from_bytes(data, _class=_IndexedMessage if indexed else Message, policy=email.policy.compat32)


def views(
    data: bytes, kind: str, *, part: str, bounds: Bounds | None = None, parsed: Message | None = None
) -> Iterator[View]:
    """``parsed``: ``parse_mail(data)`` when the caller made it (this walk reads it before anyone else does)."""
    budget = _Budget(bounds or Bounds())
    if kind == "mail":
        yield from _mail(parsed if parsed is not None else parse_mail(data), part, 0, budget)
    else:
        yield from _content(data, part, None, 0, budget)


# -- mail --------------------------------------------------------------------
def _header_text(value: object) -> str:
    s = str(value)
    try:
        return s.encode("ascii", "surrogateescape").decode("utf-8")
    except UnicodeError:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# RFC 2231 allows any attribute-char in a parameter's name ("x-note*0*="); the library decodes only names of word
# characters and leaves the others as written, percent-encoded, where a reader that decodes them would see text.
_EXTENDED = re.compile(r"(?P<name>[^*]+)\*(?:(?P<num>[0-9]+)(?P<enc>\*)?)?")
_CHARSET_LANGUAGE = re.compile(r"([!#$&+\-^`{}~\w]*)'[!#$&+\-^`{}~\w]*'")


def _loose_rfc2231(params: Sequence[tuple[str, object]]) -> str:
    """The extended parameters the library left encoded, continuations joined and decoded, one a line."""
    parts: dict[str, list[tuple[int, str, bool]]] = {}
    for k, v in params:
        m = _EXTENDED.fullmatch(k)
        if m is None or not isinstance(v, str):
            continue
        num = m.group("num")
        encoded = num is None or m.group("enc") is not None
        parts.setdefault(m.group("name"), []).append((int(num or 0), email.utils.unquote(v), encoded))
    lines: list[str] = []
    for name, pieces in parts.items():
        pieces.sort(key=lambda p: p[0])
        charset = "utf-8"
        first = pieces[0]
        m = _CHARSET_LANGUAGE.match(first[1]) if first[2] else None
        if m is not None:
            charset = m.group(1) or "utf-8"
            pieces[0] = (first[0], first[1][m.end() :], True)
        raw = b"".join(
            urllib.parse.unquote_to_bytes(s) if enc else s.encode("utf-8", "surrogateescape") for _, s, enc in pieces
        )
        try:
            text = raw.decode(charset, "replace")
        except LookupError:
            text = raw.decode("utf-8", "replace")
        lines.append(f"{name}={text}")
    return "\n".join(lines)


def _mail(msg: Message, part: str, depth: int, budget: _Budget) -> Iterator[View]:
    if depth > budget.bounds.max_depth:
        raise LimitExceededError(f"nested deeper than {budget.bounds.max_depth} to verify", part=part)
    raw_headers: list[tuple[str, object]] = msg._headers  # type: ignore[attr-defined]
    for name, value in raw_headers:
        if name.lower() in OPAQUE_HEADERS or name.lower().startswith(OPAQUE_PREFIXES):
            continue
        raw = _header_text(value)
        where = f"header {name}"
        yield View(part, where, raw)
        if "=?" in raw:
            try:
                decoded = str(email.header.make_header(email.header.decode_header(" ".join(raw.split()))))
            except (UnicodeError, LookupError, ValueError, email.errors.HeaderParseError):
                decoded = ""
            yield View(part, f"{where} (RFC 2047 decoded)", decoded)
    for h in ("content-type", "content-disposition"):
        params = msg.get_params(header=h, failobj=[])
        if not params:
            continue
        values: list[str] = []
        for k, raw_value in params:
            param: object = raw_value
            if isinstance(param, tuple):
                param = email.utils.collapse_rfc2231_value(param)
            values.append(f"{k}={param}")
        yield View(part, f"header {h} parameters", "\n".join(values))
        loose = _loose_rfc2231(params)
        if loose:
            yield View(part, f"header {h} parameters (RFC 2231 decoded)", loose)
        for name_value in (msg.get_filename(), msg.get_param("name")):
            v: object = name_value
            if isinstance(v, tuple):
                v = email.utils.collapse_rfc2231_value(v)
            if isinstance(v, str) and "=?" in v:
                try:
                    v = str(email.header.make_header(email.header.decode_header(v)))
                except (UnicodeError, LookupError, ValueError, email.errors.HeaderParseError):
                    continue
                yield View(part, f"header {h} file name", v)
    payload = msg.get_payload()
    if msg.is_multipart() and isinstance(payload, list):
        if msg.preamble:
            yield View(part, "preamble", msg.preamble)
        if msg.epilogue:
            yield View(part, "epilogue", msg.epilogue)
        for i, child in enumerate(payload, 1):
            if isinstance(child, Message):
                if msg.get_content_maintype() == "message":  # the message inside a message/rfc822 part
                    label = f"{part} (attached message)"
                else:
                    label = f"{part}.{i}" if depth else str(i)
                yield from _mail(child, label, depth + 1, budget)
        return
    try:
        body = msg.get_payload(decode=True)
    except (ValueError, AssertionError, LookupError):
        body = None
    if not isinstance(body, bytes):
        body = _header_text(payload).encode("utf-8", "replace") if isinstance(payload, str) else b""
    budget.take(len(body), part)
    ctype = msg.get_content_type()
    label = f"{part} {ctype}"
    media = msg.get_content_maintype() in ("image", "audio", "video")
    if media and body[:4] != b"PK\x03\x04" and b"%PDF-" not in body[:1024]:
        yield View(label, "printable runs", _strings(body), binary=True)  # pixels and samples: no text
        return
    yield from _content(body, label, msg.get_content_charset(), depth + 1, budget)


# -- content sniffed --------------------------------------------------------
def _content(data: bytes, part: str, charset: str | None, depth: int, budget: _Budget) -> Iterator[View]:
    if depth > budget.bounds.max_depth:
        raise LimitExceededError(f"nested deeper than {budget.bounds.max_depth} to verify", part=part)
    if not data:
        return
    head = data[:1024]
    if data[:4] == b"PK\x03\x04":
        yield from _zip(data, part, depth, budget)
        return
    if b"%PDF-" in head:
        yield from _pdf(data, part, depth, budget)
        return
    text = _decode_text(data, charset)
    if text is None:
        yield View(part, "printable runs", _strings(data), binary=True)
        return
    yield from _text_views(text, part, "text")


# Counted with bytes.translate (in C): control characters other than tab, line ends and form feed; 8-bit bytes.
_CONTROL_BYTES = bytes([*range(9), *range(14, 32)])
_HIGH_BYTES = bytes(range(0x80, 0x100))


def _decode_text(data: bytes, charset: str | None) -> str | None:
    """Text a recipient's program would show, or None for binary content."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", "replace")
    sample = data[:4096]
    nuls = sample.count(0)
    if nuls > len(sample) // 4:
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        if max(even, odd) > 0.8 * (len(sample) // 2) and min(even, odd) < 0.2 * (len(sample) // 2):
            return data.decode("utf-16-le" if odd > even else "utf-16-be", "replace")
        return None
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    if controls > len(sample) // 10:
        return None
    for cs in (charset, "utf-8"):
        if cs:
            try:
                return data.decode(cs)
            except (LookupError, UnicodeError):
                continue
    if len(sample) - len(sample.translate(None, _HIGH_BYTES)) > len(sample) // 3:
        return None  # neither UTF-8 nor a text in a single-byte charset: binary
    return data.decode("latin-1")


def _text_views(text: str, part: str, where: str) -> Iterator[View]:
    yield View(part, where, text)
    if _RTF_START.match(text):
        yield View(part, f"{where} as RTF shows it", _rtf_text(text))
    if "<" in text and ">" in text:
        yield View(part, f"{where} without markup", html.unescape(_TAG.sub("", _BLOCK_CLOSE.sub("\n", text))))
    elif "&" in text:
        yield View(part, f"{where} unescaped", html.unescape(text))
    if "%" in text:
        yield View(part, f"{where} URL-decoded", urllib.parse.unquote(html.unescape(text)))


# RTF (application/rtf, text/rtf, read as text): a reader sees the characters its escapes stand for ("\\'48",
# "\\u72?") and a word whose letters control words split ("H{\\b I}V"), not the escapes.
_RTF_START = re.compile(r"\s*\{\\rtf")
_RTF_TOKEN = re.compile(
    r"\\'([0-9a-fA-F]{2})|\\u(-?\d+) ?(?:\\'[0-9a-fA-F]{2}|[^\\{}])?|\\([a-z]+)-?\d* ?|\\(.)|[{}\r\n]", re.S
)


def _rtf_token(m: re.Match[str]) -> str:
    byte, code, word, symbol = m.group(1, 2, 3, 4)
    if byte is not None:
        return bytes([int(byte, 16)]).decode("cp1252", "replace")
    if code is not None:
        n = int(code)
        return chr(n + 65536 if n < 0 else n) if -65536 < n < 0x110000 else ""
    if word is not None:
        return "\n" if word in ("par", "line", "sect", "page", "row", "cell", "tab") else ""
    if symbol is not None:
        return symbol if symbol in "\\{}" else ""
    return ""  # a group's braces, a line end of the file (no line end of the text)


def _rtf_text(text: str) -> str:
    return _RTF_TOKEN.sub(_rtf_token, text)


def _strings(data: bytes) -> str:
    runs = [m.group().decode("latin-1") for m in _PRINTABLE.finditer(data)]
    runs += [m.group().decode("utf-16-le") for m in _UTF16LE.finditer(data)]
    return "\n".join(runs)


# -- ZIP ---------------------------------------------------------------------
def _zip(data: bytes, part: str, depth: int, budget: _Budget) -> Iterator[View]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        yield View(part, "printable runs", _strings(data), binary=True)
        return
    with zf:
        for info in infos:
            entry = f"{part}:{info.filename}"
            yield View(entry, "entry name", info.filename)
            budget.take(info.file_size, entry)
            try:
                content = zf.read(info)
            except (zipfile.BadZipFile, ValueError, OSError, NotImplementedError, zlib.error, RuntimeError):
                yield View(entry, "printable runs", _strings(data), binary=True)  # encrypted or broken: what shows
                continue
            yield from _content(content, entry, None, depth + 1, budget)


# -- PDF: a raw object walk -----------------------------------------------------
_STREAM = re.compile(rb"stream\r?\n")
_ENDSTREAM = b"endstream"
_FILTERS = re.compile(rb"/(FlateDecode|Fl|ASCIIHexDecode|AHx|ASCII85Decode|A85|DCTDecode|JPXDecode|CCITTFaxDecode|"
                      rb"JBIG2Decode|LZWDecode|RunLengthDecode|Crypt)\b")  # fmt: skip
_NOT_TEXT_STREAM = re.compile(rb"/Length[123]\b|/Subtype\s*/(?:Image|Type1C|CIDFontType0C|OpenType)\b")
_IMAGE_FILTERS = {b"DCTDecode", b"JPXDecode", b"CCITTFaxDecode", b"JBIG2Decode"}
_PDF_NAME = re.compile(rb"/([^\s/\[\]()<>{}%]+)")
_HEX_STRING = re.compile(rb"<([0-9A-Fa-f\s]*)>")
_ESCAPES = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("b"): b"\b", ord("f"): b"\f"}
_TEXT_OPS = re.compile(rb"BT\b(.*?)\bET\b", re.S)
_BFCHAR = re.compile(rb"beginbfchar(.*?)endbfchar", re.S)
_BFRANGE = re.compile(rb"beginbfrange(.*?)endbfrange", re.S)


def _pdf(data: bytes, part: str, depth: int, budget: _Budget) -> Iterator[View]:
    streams: list[tuple[int, bytes]] = []
    outside: list[bytes] = []
    pos = 0
    for m in _STREAM.finditer(data):
        if m.start() < pos:
            continue
        end = data.find(_ENDSTREAM, m.end())
        if end < 0:
            end = len(data)
        dict_start = data.rfind(b"obj", pos, m.start())
        header = data[max(dict_start, pos) : m.start()]
        outside.append(data[pos : m.start()])
        decoded = _decode_stream(data[m.end() : end], header, part, budget)
        if decoded is not None:
            streams.append((m.start(), decoded))
        pos = end + len(_ENDSTREAM)
    outside.append(data[pos:])
    rest = b"\n".join(outside)
    yield from _pdf_objects(rest, part, "objects outside streams")
    cmaps = [cmap for _at, s in streams if b"begincmap" in s and (cmap := _cmap(s))]
    for at, s in streams:
        where = f"stream at byte {at}"
        if s[:4] == b"PK\x03\x04" or s[:5] == b"%PDF-":
            yield from _content(s, f"{part} (embedded file at byte {at})", None, depth + 1, budget)
            continue
        text = _decode_text(s, None)
        if text is not None:
            yield from _text_views(text, part, where)
        else:
            yield View(part, f"{where}, printable runs", _strings(s), binary=True)
        # Content and object streams hold strings whatever else they hold (glyph codes are bytes).
        yield from _pdf_objects(s, part, where)
        for i, block in enumerate(_TEXT_OPS.finditer(s)):
            for shown in _shown_text(block.group(1), cmaps):
                yield View(part, f"{where}, text block {i + 1}", shown)


def _decode_stream(raw: bytes, header: bytes, part: str, budget: _Budget) -> bytes | None:
    filters = _FILTERS.findall(header)
    if any(f in _IMAGE_FILTERS for f in filters) or b"/Crypt" in header or _NOT_TEXT_STREAM.search(header):
        return None  # pixels, font programs, or encrypted: no letters to read (random bytes would only mislead)
    out = raw
    for f in filters:
        try:
            if f in (b"FlateDecode", b"Fl"):
                d = zlib.decompressobj()
                out = d.decompress(out, budget.left + 1)
            elif f in (b"ASCIIHexDecode", b"AHx"):
                out = binascii.unhexlify(re.sub(rb"\s|>.*", b"", out, flags=re.S) + b"0" * (len(out) % 2))
            elif f in (b"ASCII85Decode", b"A85"):
                out = base64.a85decode(out.strip().removeprefix(b"<~"), adobe=False, ignorechars=b" \t\n\r\x0b")
            else:
                return out  # LZW, run-length: shown as printable runs
        except (zlib.error, binascii.Error, ValueError):
            return out
    budget.take(len(out), part)
    return out


def _literal_strings(buf: bytes) -> Iterator[tuple[int, bytes]]:
    """Literal strings ``(...)`` with nesting and escapes, and where each began."""
    i = buf.find(b"(")
    n = len(buf)
    while 0 <= i < n:
        depth, j, out = 1, i + 1, bytearray()
        while j < n and depth:
            c = buf[j]
            if c == 0x5C and j + 1 < n:  # backslash
                nxt = buf[j + 1]
                if nxt in _ESCAPES:
                    out += _ESCAPES[nxt]
                    j += 2
                elif 0x30 <= nxt <= 0x37:
                    k = j + 1
                    while k < n and k < j + 4 and 0x30 <= buf[k] <= 0x37:
                        k += 1
                    out.append(int(buf[j + 1 : k], 8) & 0xFF)
                    j = k
                elif nxt in (0x0A, 0x0D):
                    j += 2
                else:
                    out.append(nxt)
                    j += 2
                continue
            if c == 0x28:
                depth += 1
            elif c == 0x29:
                depth -= 1
                if not depth:
                    break
            out.append(c)
            j += 1
        yield i, bytes(out)
        i = buf.find(b"(", j + 1)


def _pdf_string(b: bytes) -> str:
    if b[:2] == b"\xfe\xff":
        return b[2:].decode("utf-16-be", "replace")
    if b[:3] == b"\xef\xbb\xbf":
        return b[3:].decode("utf-8", "replace")
    return b.decode("latin-1")


def _pdf_objects(buf: bytes, part: str, where: str) -> Iterator[View]:
    strings = [_pdf_string(s) for _at, s in _literal_strings(buf)]
    strings += [_pdf_string(_unhex(m.group(1))) for m in _HEX_STRING.finditer(buf) if m.group(1).strip()]
    if strings:
        yield View(part, f"{where}, strings", "\n".join(strings))
    names = [urllib.parse.unquote(n.decode("latin-1").replace("#", "%")) for n in _PDF_NAME.findall(buf)]
    if names:
        yield View(part, f"{where}, names", "\n".join(names))


def _unhex(h: bytes) -> bytes:
    h = re.sub(rb"\s", b"", h)
    try:
        return binascii.unhexlify(h + b"0" * (len(h) % 2))
    except binascii.Error:
        return b""


def _cmap(stream: bytes) -> dict[bytes, str]:
    mapping: dict[bytes, str] = {}
    for block in _BFCHAR.findall(stream):
        items = _HEX_STRING.findall(block)
        for src, dst in zip(items[0::2], items[1::2], strict=False):
            mapping[_unhex(src)] = _unhex(dst).decode("utf-16-be", "replace")
    for block in _BFRANGE.findall(stream):
        for line in block.splitlines():
            items = _HEX_STRING.findall(line)
            if len(items) < 3:
                continue
            lo, hi = _unhex(items[0]), _unhex(items[1])
            dst = _unhex(items[2])
            if not lo or len(lo) != len(hi) or not dst:
                continue
            a, b = int.from_bytes(lo, "big"), int.from_bytes(hi, "big")
            base = int.from_bytes(dst, "big")
            for k in range(min(b - a + 1, 65536)):
                try:
                    mapping[(a + k).to_bytes(len(lo), "big")] = chr(base + k)
                except (ValueError, OverflowError):
                    break
    return mapping


_SHOW_TOKENS = re.compile(rb"\((?:\\.|[^\\()])*\)|<[0-9A-Fa-f\s]*>|-?\d*\.?\d+|T[dDm*J]|'|\"|\[|\]", re.S)


def _shown_text(block: bytes, cmaps: list[dict[bytes, str]]) -> Iterator[str]:
    """The text of one BT…ET block: strings in order, a space where the text moves or a big gap is kerned."""
    pieces: list[tuple[bytes, bool]] = []  # (string bytes, is_break)
    for tok in _SHOW_TOKENS.findall(block):
        if tok[:1] == b"(":
            pieces.append((next(_literal_strings(tok))[1], False))
        elif tok[:1] == b"<":
            pieces.append((_unhex(tok[1:-1]), False))
        elif tok in (b"Td", b"TD", b"Tm", b"T*", b"'", b'"'):
            pieces.append((b"", True))
        elif tok[:1] in b"-0123456789." and tok not in (b"[", b"]"):
            try:
                if float(tok) < -150:
                    pieces.append((b"", True))
            except ValueError:
                pass
    yield "".join(" " if brk else s.decode("latin-1") for s, brk in pieces)
    for cmap in cmaps:
        widths = {len(k) for k in cmap}
        if not widths:
            continue
        w = max(widths)
        out: list[str] = []
        for s, brk in pieces:
            if brk:
                out.append(" ")
                continue
            for k in range(0, len(s), w):
                out.append(cmap.get(s[k : k + w], ""))
        yield "".join(out)
