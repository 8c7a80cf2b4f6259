"""RFC 5322 messages: every part a reader sees, taken apart and put back.

Write only what was read. Every header is either structural (addresses'
addr-specs, Message-ID, Date, MIME structure, trace, signatures: kept as they
are) or read as text: the Subject, Thread-Topic, Keywords, Comments,
Content-Description, every unknown and X- header, and the display names and
comments of every address header (From, Sender, To, Cc, Bcc, Reply-To,
Disposition-Notification-To, Resent-*, ...). Unknown headers are read rather
than dropped: mailing lists, filters and clients rely on them, and a header
read as text is rewritten only where it is risky. Preambles and epilogues are
read as text too. Every text-like part is read whatever its subtype (text/*,
JSON, XML, an octet-stream that is text, UTF-16), in its charset; a charset
Python does not know holds the part unless its bytes are plain ASCII.
HTML, DOCX and PDF parts, attachment file names (RFC 2231) and
message/rfc822 parts are read, recursively.

What cannot be inspected (encrypted parts, unknown binary types, broken
parts) is handled by ``ContentPolicy``: by default the message is held.
A signed message whose signed part changes loses its signature (it would
no longer verify), and says so in a header.
"""

from __future__ import annotations

import base64
import email
import email.header
import email.headerregistry
import email.policy
import email.utils
import mimetypes
import quopri
import re
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from email.headerregistry import Address, Group
from email.message import Message
from typing import TYPE_CHECKING, Literal

from extractors.base import Extracted, Note, Segment
from extractors.docx import DOCX_TYPES, extract_docx
from extractors.html import scan
from extractors.limits import Limits
from extractors.pdf import extract_pdf
from extractors.serialize import ParsedHeaders, as_bytes, short_line
from gateway.errors import (
    ContentError,
    EncryptedContentError,
    LimitExceededError,
    UnreadableContentError,
    UnsupportedContentError,
)

if TYPE_CHECKING:
    from gateway.model.identifiers.finding import Role

Handling = Literal["pass", "strip", "quarantine"]
SIGNATURE_HEADER_NAME = SIGNATURE_HEADER = "X-Sanigate-Signature"
ADDRESS_HEADERS = frozenset(
    h.lower()
    for h in (
        "From", "To", "Cc", "Bcc", "Reply-To", "Sender", "Resent-From", "Resent-To", "Resent-Cc", "Resent-Bcc",
        "Resent-Sender", "Resent-Reply-To", "Disposition-Notification-To", "Return-Receipt-To", "Errors-To",
        "Mail-Followup-To", "Mail-Reply-To", "Original-Recipient", "Apparently-To",
    )
)  # fmt: skip
# Structure, routing, identifiers and signatures: no words a person wrote; kept as they are.
STRUCTURAL_HEADERS = frozenset(
    h.lower()
    for h in (
        "Date", "Message-ID", "In-Reply-To", "References", "MIME-Version", "Content-Type",
        "Content-Transfer-Encoding", "Content-ID", "Content-Disposition", "Content-Language", "Content-Length",
        "Content-Location", "Content-MD5", "Received", "Return-Path", "Delivered-To", "X-Original-To",
        "DKIM-Signature", "DomainKey-Signature", "ARC-Seal", "ARC-Message-Signature", "ARC-Authentication-Results",
        "Authentication-Results", "Received-SPF", "X-Received", "X-Google-DKIM-Signature", "X-Gm-Message-State",
        "X-Google-Smtp-Source", "List-Unsubscribe", "List-Unsubscribe-Post", "List-Post", "List-Help",
        "List-Subscribe", "List-Owner", "List-Archive", "Precedence", "Auto-Submitted", "Importance", "Priority",
        "X-Priority", "X-MSMail-Priority", "Sensitivity", "Thread-Index", "X-MS-Has-Attach", "X-MS-TNEF-Correlator",
        "Autocrypt", "Resent-Date", "Resent-Message-ID", "X-Sanigate", SIGNATURE_HEADER_NAME, "X-YMail-OSG",
        "X-Gm-Gg", "IronPort-SDR", "Message-ID-Hash",
    )
)  # fmt: skip
# Fields a person writes (RFC 5322's Subject, Comments and Keywords; the organisation and a part's description,
# which a mail program takes from its user; Outlook's copy of the Subject): read as prose. Every other field read
# as text is a program's (X-AntiAbuse, User-Agent, List-Id's description, a scanner's verdict), where a capital
# alone is no evidence of a name. Address fields' display names are people's and read as prose too.
PROSE_HEADERS = frozenset(
    h.lower() for h in ("Subject", "Comments", "Keywords", "Thread-Topic", "Organization", "Content-Description")
)
_COMMENT = re.compile(r"\(((?:[^()\\]|\\.)*)\)")
_ENCRYPTED_TYPES = frozenset({"multipart/encrypted", "application/pgp-encrypted"})
_PKCS7 = frozenset({"application/pkcs7-mime", "application/x-pkcs7-mime"})
_SIGNATURES = frozenset({"application/pkcs7-signature", "application/x-pkcs7-signature", "application/pgp-signature"})
# Application types that are text by definition (read as text whatever their charset parameter says).
_TEXT_APPLICATIONS = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-javascript",
     "application/ecmascript", "application/x-sh", "application/x-csh", "application/x-tex", "application/rtf",
     "application/x-yaml", "application/yaml", "application/toml", "application/ld+json", "application/ics",
     "application/x-subrip", "application/sql", "application/csv", "application/x-perl", "application/x-python"}
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class ContentPolicy:
    """What to do with parts sanigate cannot read."""

    images: Handling = "pass"
    unknown: Handling = "quarantine"
    encrypted: Handling = "quarantine"
    unreadable: Handling = "quarantine"


Setter = Callable[[Sequence[tuple[str, ...]]], None]


@dataclass(slots=True)
class MailDocument:
    message: Message
    part: str
    parsed: ParsedHeaders
    _segments: list[Segment] = field(default_factory=list)
    _setters: list[tuple[int, int, Setter]] = field(default_factory=list)
    _after: list[Callable[[bool], None]] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    addresses: list[str] = field(default_factory=list)  # addr-specs beside a display name: never rewritten

    @property
    def segments(self) -> list[Segment]:
        return self._segments

    def _add(self, segments: Sequence[Segment], setter: Setter) -> None:
        start = len(self._segments)
        self._segments.extend(segments)
        self._setters.append((start, len(self._segments), setter))

    def rebuild(self, pieces: Sequence[tuple[str, ...]]) -> bytes:
        changed = False
        for start, end, setter in self._setters:
            new = pieces[start:end]
            if any(n != s.pieces for n, s in zip(new, self._segments[start:end], strict=True)):
                setter(new)
                changed = True
        for hook in self._after:
            hook(changed)
        return as_bytes(self.message, self.parsed)


# Parameters that are the message's structure or a file's name (read by _filename), not words anyone wrote.
_STRUCTURAL_PARAMETERS = frozenset({
    "charset", "boundary", "name", "filename", "format", "delsp", "reply-type", "type", "start", "start-info",
    "protocol", "micalg", "smime-type", "method", "report-type", "differences", "access-type", "expiration", "size",
    "creation-date", "modification-date", "read-date", "id", "number", "total", "padding", "x-unix-mode",
    "x-mac-type", "x-mac-creator", "x-apple-part-url", "action", "component", "protected-headers", "hp",
})  # fmt: skip
# RFC 2231's extended names: "title*", "title*0", "title*1*"; the library joins and decodes only names of word
# characters, the others are left as written (percent-encoded): they are decoded here too.
_EXTENDED_NAME = re.compile(r"(?P<name>[^*]+)\*(?:(?P<num>[0-9]+)(?P<enc>\*)?)?")
_CHARSET_LANGUAGE = re.compile(r"([!#$&+\-^`{}~\w]*)'[!#$&+\-^`{}~\w]*'")


def _free_parameters(part: Message, header: str) -> list[tuple[tuple[str, ...], str]]:
    """(names as written, decoded value) of each parameter of ``header`` that is not the structure's own (a
    continued one has a name for each piece)."""
    raw: Sequence[tuple[str, object]] = part.get_params(header=header, failobj=[])[1:]
    out: list[tuple[tuple[str, ...], str]] = []
    pieces: dict[str, list[tuple[int, str, bool, str]]] = {}
    for key, value in raw:
        m = _EXTENDED_NAME.fullmatch(key)
        base = (m.group("name") if m else key).lower()
        if base in _STRUCTURAL_PARAMETERS:
            continue
        if isinstance(value, tuple):
            out.append(((key,), str(email.utils.collapse_rfc2231_value(value))))
        elif m is None:
            out.append(((key,), email.utils.unquote(str(value))))
        else:
            num = m.group("num")
            encoded = num is None or m.group("enc") is not None
            pieces.setdefault(base, []).append((int(num or 0), email.utils.unquote(str(value)), encoded, key))
    for group in pieces.values():
        group.sort(key=lambda p: p[0])
        charset = "utf-8"
        num, first, encoded, key = group[0]
        m = _CHARSET_LANGUAGE.match(first) if encoded else None
        if m is not None:
            charset = m.group(1) or "utf-8"
            group[0] = (num, first[m.end() :], True, key)
        data = b"".join(
            urllib.parse.unquote_to_bytes(s) if enc else s.encode("utf-8", "surrogateescape") for _, s, enc, _ in group
        )
        try:
            text = data.decode(charset, "replace")
        except LookupError:
            text = data.decode("utf-8", "replace")
        out.append((tuple(k for _, _, _, k in group), text))
    return out


def parse(data: bytes, *, part: str, limits: Limits) -> Message:
    _within_header_limit(data, part, limits)
    # compat32 parsing: the modern policy builds a structured header object at
    # every header access (about 30 % of a message's time); headers a reader
    # sees are decoded with the modern parser one by one (_decoded).
    return email.message_from_bytes(data, policy=email.policy.compat32)


def _within_header_limit(data: bytes, part: str, limits: Limits) -> None:
    head = data.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
    if len(head) > limits.max_header_bytes:
        raise LimitExceededError(f"{len(head)} bytes of headers (limit {limits.max_header_bytes})", part=part)


def extract_mail(
    data: bytes,
    *,
    part: str,
    limits: Limits,
    policy: ContentPolicy = ContentPolicy(),
    parsed: Message | None = None,
) -> MailDocument:
    """``parsed``: a compat32 parse of ``data`` someone else also reads (the pipeline's check of its own output reads
    the verifier's parse). Only a reading that changes nothing may share one: no part is stripped, and the document
    is not rebuilt."""
    if parsed is None:
        msg = parse(data, part=part, limits=limits)
    else:
        if "strip" in (policy.images, policy.unknown, policy.encrypted, policy.unreadable):
            raise ValueError("a parse another reader shares cannot be read with a policy that strips parts")
        _within_header_limit(data, part, limits)
        msg = parsed
    doc = MailDocument(msg, part, ParsedHeaders(msg))  # before anything is changed, stripped or replaced
    _Walker(doc, limits, policy).message(msg, "", 0)
    return doc


class _Walker:
    def __init__(self, doc: MailDocument, limits: Limits, policy: ContentPolicy) -> None:
        self.doc = doc
        self.limits = limits
        self.policy = policy
        self.parts = 0

    # -- headers ------------------------------------------------------------
    def message(self, msg: Message, label: str, depth: int) -> None:
        if depth > self.limits.max_depth:
            raise LimitExceededError(f"messages nested deeper than {self.limits.max_depth}", part=label or "message")
        for name, value in msg.items():
            if len(str(value)) > self.limits.max_header_line:
                raise LimitExceededError(
                    f"header {name} is {len(str(value))} characters (limit {self.limits.max_header_line})",
                    part=label or "message",
                )
        self.headers(msg, f"{label} " if label else "")
        self.entity(msg, label or "body", depth, headers_read=True)

    def headers(self, msg: Message, prefix: str) -> None:
        """Every header: structural ones kept, address headers' names read, all others read as text."""
        for index, (name, raw) in enumerate(_raw_headers(msg)):
            low = name.lower()
            if low in STRUCTURAL_HEADERS or low.startswith(
                ("x-ms-exchange-", "x-microsoft-antispam", "x-forefront-", "arc-")
            ):
                continue
            label = f"{prefix}header {name}"
            if low in ADDRESS_HEADERS:
                self._addresses(msg, index, name, raw, label)
            else:
                self._text_header(msg, index, name, raw, label)

    def _text_header(self, msg: Message, index: int, name: str, raw: object, label: str) -> None:
        value = _decoded(name, raw, label)
        if not value.strip():
            return

        def set_header(new: Sequence[tuple[str, ...]]) -> None:
            _set_header(msg, index, name, _encoded(name, "".join(new[0])))

        role: Role = "prose" if name.lower() in PROSE_HEADERS else "machine"
        self.doc._add([Segment(label, (value,), role)], set_header)

    def _addresses(self, msg: Message, index: int, name: str, raw: object, label: str) -> None:
        if _BARE_ADDRESSES.fullmatch(str(raw)):
            return  # no display name, no comment: nothing a person wrote (and the common case, parsed cheaply)
        parsed = _address_list(_unicode(raw))
        if parsed is None:
            return
        groups, comments = parsed
        segments: list[Segment] = []
        slots: list[tuple[str, int, int]] = []  # ("group", gi, -1) / ("addr", gi, ai) / ("comment", ci, -1)
        for gi, g in enumerate(groups):
            if g.display_name:
                segments.append(Segment(label, (g.display_name,)))
                slots.append(("group", gi, -1))
            for ai, a in enumerate(g.addresses):
                if a.display_name and a.display_name.strip():
                    segments.append(Segment(label, (a.display_name,)))
                    slots.append(("addr", gi, ai))
                    if a.addr_spec:
                        self.doc.addresses.append(a.addr_spec)
        for ci, c in enumerate(comments):
            if c.strip():
                segments.append(Segment(f"{label} (comment)", (c,)))
                slots.append(("comment", ci, -1))
        if not segments:
            return

        def set_addresses(new: Sequence[tuple[str, ...]]) -> None:
            names = {(kind, a, b): "".join(p) for (kind, a, b), p in zip(slots, new, strict=True)}
            out: list[Group] = []
            for gi, g in enumerate(groups):
                addrs = [
                    _address(names.get(("addr", gi, ai), a.display_name), a.addr_spec)
                    for ai, a in enumerate(g.addresses)
                ]
                out.append(Group(names.get(("group", gi, -1), g.display_name), addrs))
            value = ", ".join(str(g) if g.display_name else ", ".join(str(a) for a in g.addresses) for g in out)
            # Comments have no place in the parsed header: they follow the addresses.
            for ci, c in enumerate(comments):
                text = names.get(("comment", ci, -1), c).replace("(", "[").replace(")", "]")
                if text.strip():
                    value += f" ({text})"
            _set_header(msg, index, name, _encoded(name, value))

        self.doc._add(segments, set_addresses)

    # -- body -----------------------------------------------------------------
    def entity(self, part: Message, label: str, depth: int, *, headers_read: bool = False) -> None:
        self.parts += 1
        if self.parts > self.limits.max_parts:
            raise LimitExceededError(f"more than {self.limits.max_parts} MIME parts", part=label)
        if depth > self.limits.max_depth:
            raise LimitExceededError(f"MIME parts nested deeper than {self.limits.max_depth}", part=label)
        ctype = _content_type(part)
        if not headers_read:
            self.headers(part, f"{label} ")
        self._filename(part, label)
        self._parameters(part, label)
        if ctype in _ENCRYPTED_TYPES or (ctype in _PKCS7 and "signed" not in str(part.get_param("smime-type") or "")):
            self._cannot_read(
                part,
                label,
                EncryptedContentError(f"{ctype} (encrypted; cannot be inspected)", part=label),
                self.policy.encrypted,
            )
            return
        if ctype in _PKCS7:
            self._cannot_read(
                part,
                label,
                UnsupportedContentError("opaque S/MIME signed-data cannot be inspected", part=label),
                self.policy.unknown,
            )
            return
        if ctype == "message/rfc822" or (
            part.get_content_maintype() == "message" and isinstance(part.get_payload(), list)
        ):
            payload = part.get_payload()
            if isinstance(payload, list) and payload and isinstance(payload[0], Message):
                self.message(payload[0], f"{label} (attached message)", depth + 1)
            return
        if part.get_content_maintype() == "multipart" and not part.is_multipart():
            # Declared multipart, but no boundary was found: what a client shows is this text.
            self._plain(part, label)
            return
        if part.is_multipart():
            self._preamble(part, label)
            children = [c for c in part.get_payload() if isinstance(c, Message)]
            if ctype == "multipart/signed" and children:
                self._signed(part, children, label, depth)
                return
            for i, child in enumerate(children, 1):
                self.entity(child, f"{label}.{i}" if label != "body" else str(i), depth + 1)
            return
        if ctype in _SIGNATURES:
            return  # a detached signature: no text, dealt with by its multipart/signed
        filename = (part.get_filename() or "").lower()
        maintype = ctype.split("/", 1)[0]
        try:
            if ctype in ("text/html", "application/xhtml+xml"):
                self._html(part, label)
            elif maintype == "text" or ctype in _TEXT_APPLICATIONS or ctype.endswith(("+xml", "+json")):
                self._plain(part, label)
            elif maintype == "message":
                self._plain(part, label)  # delivery-status, disposition-notification: header-like text
            elif ctype in DOCX_TYPES or filename.endswith((".docx", ".docm")):
                self._document(part, label, "document.docx", extract_docx)
            elif ctype == "application/pdf" or filename.endswith(".pdf"):
                self._document(part, label, "document.pdf", extract_pdf)
            elif maintype in ("image", "audio", "video"):
                self._media(part, label)
            elif _is_text(part):
                self._plain(part, label)  # an octet-stream (or an unknown type) that is text
            else:
                self._cannot_read(
                    part,
                    label,
                    UnsupportedContentError(f"{ctype} attachment cannot be inspected", part=label),
                    self.policy.unknown,
                )
        except ContentError as exc:
            handling = self.policy.encrypted if isinstance(exc, EncryptedContentError) else self.policy.unreadable
            if isinstance(exc, LimitExceededError):
                raise
            self._cannot_read(part, label, exc, handling)

    def _preamble(self, part: Message, label: str) -> None:
        for attr in ("preamble", "epilogue"):
            text = getattr(part, attr)
            if not isinstance(text, str) or not text.strip():
                continue

            def set_text(new: Sequence[tuple[str, ...]], attr: str = attr) -> None:
                setattr(part, attr, "".join(new[0]))

            self.doc._add([Segment(f"{label} {attr}", (_unicode(text),))], set_text)

    def _filename(self, part: Message, label: str) -> None:
        try:
            name = part.get_filename()
        except Exception:
            name = None
        if not name or not name.strip():
            return

        def set_name(new: Sequence[tuple[str, ...]]) -> None:
            value = "".join(new[0])
            charset = None if value.isascii() else "utf-8"  # RFC 2231 where it is not ASCII
            if part.get("Content-Disposition") is not None:
                part.set_param("filename", value, header="Content-Disposition", charset=charset)
            if part.get_param("name") is not None:
                part.set_param("name", value, header="Content-Type", charset=charset)

        self.doc._add([Segment(f"{label} filename", (name,))], set_name)

    def _parameters(self, part: Message, label: str) -> None:
        """Content-Type's and Content-Disposition's parameters other than the structure's own, read as text: the
        headers are structural, but a parameter may carry any words ("x-note*=utf-8''..."), and a client or a
        program reading it sees them."""
        for header in ("Content-Type", "Content-Disposition"):
            if part.get(header) is None:
                continue
            for keys, value in _free_parameters(part, header):

                def set_value(
                    new: Sequence[tuple[str, ...]], header: str = header, keys: tuple[str, ...] = keys
                ) -> None:
                    text = "".join(new[0])
                    for key in keys:
                        part.del_param(key, header=header)
                    part.set_param(keys[0].split("*", 1)[0], text, header=header,
                                   charset=None if text.isascii() else "utf-8")  # fmt: skip

                self.doc._add([Segment(f"{label} {header} parameter", (value,), "machine")], set_value)

    def _text(self, part: Message, label: str) -> str:
        try:
            content: object = part.get_payload(decode=True)
        except (LookupError, UnicodeError, ValueError, AssertionError, KeyError) as exc:
            raise UnreadableContentError(f"text cannot be decoded ({type(exc).__name__}: {exc})", part=label) from exc
        if isinstance(content, bytes):
            content = _decode_body(content, part, label)
        if not isinstance(content, str):
            raise UnreadableContentError("text part without text", part=label)
        if _looks_binary(content):
            raise UnsupportedContentError("binary data labelled as text cannot be inspected", part=label)
        if len(content) > self.limits.text_max_chars:
            raise LimitExceededError(
                f"{len(content)} characters of text (limit {self.limits.text_max_chars})", part=label
            )
        return content

    def _plain(self, part: Message, label: str) -> None:
        text = self._text(part, label)
        if not text.strip():
            return

        def set_text(new: Sequence[tuple[str, ...]]) -> None:
            _set_text_payload(part, "".join(new[0]))

        self.doc._add([Segment(f"{label} {part.get_content_type()}", (text,))], set_text)

    def _html(self, part: Message, label: str) -> None:
        html_doc = scan(self._text(part, label), f"{label} text/html")
        segments = html_doc.segments
        done: list[bool] = []

        def set_html(new: Sequence[tuple[str, ...]]) -> None:
            _set_text_payload(part, html_doc.rebuild_text(new))
            done.append(True)

        if segments:
            self.doc._add(segments, set_html)
        if html_doc.removed:
            self.doc.notes.append(Note(f"{label} text/html", "scripts removed", f"{len(html_doc.removed)} script(s)"))

            def rebuild_anyway(_changed: bool) -> None:
                if not done:
                    set_html([s.pieces for s in segments])

            self.doc._after.append(rebuild_anyway)

    def _binary(self, part: Message, label: str) -> bytes:
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes):
            raise UnreadableContentError("attachment cannot be decoded", part=label)
        return data

    def _document(self, part: Message, label: str, default_name: str, extract: Callable[..., Extracted]) -> None:
        """A DOCX or PDF attachment: its segments, rebuilt when they change or when reading it removed anything."""
        name = part.get_filename() or default_name
        doc = extract(self._binary(part, label), part=f"{label} {name}", limits=self.limits)

        done = []

        def set_doc(new: Sequence[tuple[str, ...]]) -> None:
            _set_binary_payload(part, doc.rebuild(new))
            done.append(True)

        self.doc._add(doc.segments, set_doc)
        if doc.notes:
            self.doc.notes.extend(doc.notes)

            def rebuild_anyway(_changed: bool) -> None:
                if not done:
                    set_doc([s.pieces for s in doc.segments])

            self.doc._after.append(rebuild_anyway)

    def _media(self, part: Message, label: str) -> None:
        if self.policy.images == "pass":
            return
        err = UnsupportedContentError(f"{part.get_content_type()} cannot be inspected", part=label)
        self._cannot_read(part, label, err, self.policy.images)

    def _cannot_read(self, part: Message, label: str, err: ContentError, handling: Handling) -> None:
        if handling == "quarantine":
            raise err
        if handling == "strip":
            _strip(part, err.reason)
            self.doc.notes.append(Note(label, "stripped", err.reason))
        else:
            self.doc.notes.append(Note(label, "passed uninspected", err.reason))

    def _signed(self, part: Message, children: list[Message], label: str, depth: int) -> None:
        start = len(self.doc._segments)
        self.entity(children[0], f"{label}.1" if label != "body" else "1", depth + 1)
        end = len(self.doc._segments)
        if start == end:
            return
        signed = children[0]

        def drop_signature(changed: bool) -> None:
            # Only when a segment inside the signed part changed.
            if not changed or signed.as_bytes() == original:
                return
            _replace_with(part, signed)
            part[SIGNATURE_HEADER] = "removed: the signed content was sanitized and would no longer verify"
            self.doc.notes.append(Note(label, "signature removed", "signed content sanitized"))

        original = signed.as_bytes()
        self.doc._after.append(drop_signature)


_ADDR = r"\s*<?[^\s<>\"(),;:@\\]+@[^\s<>\"(),;:\\]+>?\s*"
_BARE_ADDRESSES = re.compile(rf"{_ADDR}(?:,{_ADDR})*")


def _address_list(value: str) -> tuple[tuple[Group, ...], tuple[str, ...]] | None:
    """An address header's groups and decoded comments; None when it names no group (or does not parse).

    The registry's address parser is the costliest part of reading a list's message (a fifth of the
    extraction on the archive), and the same values come back message after message (a list's From
    "Name via list", its To and Cc) and again when the pipeline reads its own output: the answer is a
    function of the value, and Group and Address are immutable, so it is kept (``_ADDRESS_LISTS``).
    """
    found = _ADDRESS_LISTS.get(value, _MISSING)
    if found is not _MISSING:
        return found  # type: ignore[return-value]
    parsed: tuple[tuple[Group, ...], tuple[str, ...]] | None = None
    try:
        # Parsed as an address list whatever its name: the registry knows only the common ones.
        groups = getattr(email.policy.default.header_factory("To", value), "groups", None)
    except Exception:
        groups = None  # no display names to find; the verifier still reads the header as it leaves
    if groups:
        comments = []
        for m in _COMMENT.finditer(value):
            try:
                comments.append(str(email.header.make_header(email.header.decode_header(m.group(1)))))
            except Exception:
                comments.append(m.group(1))
        parsed = (tuple(groups), tuple(comments))
    if len(_ADDRESS_LISTS) >= _MAX_ADDRESS_LISTS:
        _ADDRESS_LISTS.clear()  # a worker's everyday values come back within the next messages
    _ADDRESS_LISTS[value] = parsed
    return parsed


_MISSING = object()
# Address header values kept (a value and its parse, under 1 KB each): a worker's correspondents (650 after
# 1,000 archive messages).
_MAX_ADDRESS_LISTS = 2048
_ADDRESS_LISTS: dict[str, tuple[tuple[Group, ...], tuple[str, ...]] | None] = {}


def _address(display_name: str, addr_spec: str) -> Address:
    """``Address(display_name=display_name, addr_spec=addr_spec)``, with the addr-spec's parse kept.

    The constructor parses the addr-spec again for every address of a header a setter writes (an identifier
    pass renames the sender of nearly every message), for the same few correspondents (``_ADDRESS_LISTS``). What
    it keeps of the parse is the user name and the domain; given those, it checks the same inputs for line ends
    (the addr-spec had none, or its first parse raised and nothing was kept) and stores the same three values.
    """
    parts = _ADDR_SPECS.get(addr_spec)
    if parts is None:
        address = Address(display_name=display_name, addr_spec=addr_spec)  # raises as it always did
        if len(_ADDR_SPECS) >= _MAX_ADDRESS_LISTS:
            _ADDR_SPECS.clear()
        _ADDR_SPECS[addr_spec] = (address.username, address.domain)
        return address
    return Address(display_name=display_name, username=parts[0], domain=parts[1])


_ADDR_SPECS: dict[str, tuple[str, str]] = {}


_FOLD = re.compile(r"\r?\n(?=[ \t])")


def _unicode(raw: object) -> str:
    """A header value as parsed (8-bit bytes as surrogates) in Unicode: UTF-8 as sent, else Latin-1."""
    s = str(raw)
    if "\n" in s:  # unfolded only when folded: most fields are one line, and the regex is a call for each
        s = _FOLD.sub("", s)
    if s.isascii() or not any("\udc80" <= ch <= "\udcff" for ch in s):
        return s
    data = s.encode("utf-8", "surrogateescape")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _decoded(name: str, raw: object, label: str) -> str:
    """A header as a reader sees it: raw UTF-8 or RFC 2047 decoded, unfolded."""
    value = _unicode(raw)
    if value.isascii() and "=?" not in value and _UNSTRUCTURED(name):
        # What the unstructured parser gives back for plain ASCII with no encoded word: the value itself
        # (it only splits at blanks, and decodes encoded words). Most of a list's headers are such.
        return value
    try:
        decoded = str(email.policy.default.header_factory(name, value))
    except Exception as exc:
        raise UnreadableContentError(f"undecodable {name} header ({exc})", part=label) from exc
    if "\ufffd" in decoded and "\ufffd" not in value:
        # An encoded word in a charset Python does not know: what it says cannot be read.
        raise UnreadableContentError(f"header {name} is in an unknown charset", part=label)
    return decoded


def _unstructured(registry: Mapping[str, type]) -> Callable[[str], bool]:
    """Is a header read by the registry's unstructured parser (its default, and Subject's)?"""
    unstructured = email.headerregistry.UnstructuredHeader
    special = frozenset(n for n, cls in registry.items() if not issubclass(cls, unstructured))
    return lambda name: name.lower() not in special


_UNSTRUCTURED = _unstructured(email.policy.default.header_factory.registry)  # type: ignore[attr-defined]


def _raw_headers(msg: Message) -> list[tuple[str, object]]:
    """The header fields as parsed, 8-bit bytes kept as surrogates (``items()`` would mangle them)."""
    headers: list[tuple[str, object]] = msg._headers  # type: ignore[attr-defined]
    return list(headers)


def _set_header(msg: Message, index: int, name: str, value: str) -> None:
    """Replace the ``index``-th header field in place (a name may occur several times)."""
    headers: list[tuple[str, object]] = msg._headers  # type: ignore[attr-defined]
    headers[index] = (name, value)


def _decode_body(raw: bytes, part: Message, label: str) -> str:
    charset = part.get_content_charset()
    if charset is None and raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        charset = "utf-16"
    if charset is None and _utf16_without_bom(raw):
        charset = "utf-16-le" if raw[1:2] == b"\x00" else "utf-16-be"
    if charset is None:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("latin-1")  # undeclared 8-bit text: every byte a character
    try:
        return raw.decode(charset, "replace")
    except LookupError:
        if raw.isascii():
            return raw.decode("ascii")
        raise UnreadableContentError(f"text in an unknown charset ({charset})", part=label) from None


def _utf16_without_bom(raw: bytes) -> bool:
    sample = raw[:512]
    half = len(sample) // 2
    return half >= 4 and (sample[1::2].count(0) > 0.9 * half or sample[0::2].count(0) > 0.9 * half)


def _is_text(part: Message) -> bool:
    """An attachment whose bytes are text (UTF-8, UTF-16 or plain ASCII) whatever its declared type."""
    try:
        raw = part.get_payload(decode=True)
    except Exception:
        return False
    if not isinstance(raw, bytes) or not raw.strip():
        return False
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or _utf16_without_bom(raw):
        return True
    try:
        text = raw[:65536].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < 65536 - 4:
            return False
        text = raw[: exc.start].decode("utf-8")
    return not _looks_binary(text) and "\x00" not in text


def _encoded(name: str, value: str) -> str:
    """A header value ready for the wire: RFC 2047 where it is not ASCII, folded."""
    plain = value.strip()
    if short_line(name, plain) and (_UNSTRUCTURED(name) or name.lower() in ADDRESS_HEADERS):
        # A short line of printable ASCII words in a header a setter writes (text, or addresses as Address
        # renders them): the registry's parse and fold give it back as it is (tests/test_rebuild_fast.py, on
        # the archive's headers), at a fraction of a rebuild's CPU.
        return plain
    folded: str = _FOLDING.header_factory(name, value).fold(policy=_FOLDING)
    return folded.split(":", 1)[1].strip()


_FOLDING = email.policy.default.clone(linesep="\r\n")


def _content_type(part: Message) -> str:
    """The declared type; from the file name when the declaration is broken."""
    ctype = part.get_content_type()
    header = part.get("Content-Type")
    if header is None or "/" not in str(header).split(";", 1)[0]:
        name = part.get_filename()
        guess = mimetypes.guess_type(name)[0] if name else None
        if guess:
            return guess
    return ctype


_ODD = re.compile("[\x00-\x08\x0b\x0e-\x1f\ufffd]")


def _looks_binary(text: str) -> bool:
    sample = text[:4096]
    return bool(sample) and len(_ODD.findall(sample)) > 0.1 * len(sample)


def _set_text_payload(part: Message, text: str) -> None:
    """New text in the part's own charset and transfer encoding; every other header kept."""
    declared = part.get_content_charset()  # a parse of the Content-Type's parameters: asked once
    charset = declared or "us-ascii"
    if declared is None and part.get_content_maintype() != "text" and not text.isascii():
        charset = "utf-8"
        part.set_param("charset", charset)
    try:
        raw = text.encode(charset)
    except (LookupError, UnicodeEncodeError):
        charset = "utf-8"
        raw = text.encode(charset)
        part.set_param("charset", charset)
    cte = (part.get("Content-Transfer-Encoding") or "7bit").strip().lower()
    if cte not in ("base64", "quoted-printable", "8bit", "binary") and not raw.isascii():
        cte = "quoted-printable"  # 7bit cannot carry it
        del part["Content-Transfer-Encoding"]
        part["Content-Transfer-Encoding"] = cte
    if cte == "base64":
        body = base64.encodebytes(raw).decode("ascii")
    elif cte == "quoted-printable":
        body = quopri.encodestring(raw).decode("ascii")
    else:
        # The email package's own representation of 8-bit bytes in a str payload.
        body = raw.decode("ascii", "surrogateescape")
    part.set_payload(body)


def _set_binary_payload(part: Message, data: bytes) -> None:
    del part["Content-Transfer-Encoding"]
    part["Content-Transfer-Encoding"] = "base64"
    part.set_payload(base64.encodebytes(data).decode("ascii"))


def _strip(part: Message, reason: str) -> None:
    for h in list(part.keys()):
        if h.lower().startswith("content-"):
            del part[h]
    part["Content-Type"] = "text/plain; charset=us-ascii"
    part["Content-Disposition"] = "inline"
    part.set_payload(f"[An attachment was removed by sanigate: {reason}.]\r\n")


def _replace_with(container: Message, child: Message) -> None:
    for h in list(container.keys()):
        if h.lower().startswith("content-"):
            del container[h]
    for h, v in child.items():
        if h.lower().startswith("content-"):
            container[h] = v
    container.set_payload(child.get_payload())
