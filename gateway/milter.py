"""``sanigate milter``: the same sanitizing, policies, store and audit as ``sanigate serve``, as a milter.

Postfix keeps the queue and calls sanigate from its smtpd (``smtpd_milters``), before the message is
queued, alongside other milters (OpenDKIM, rspamd). At the end of each message sanigate answers with
what to change: the headers the sanitizer rewrote (``SMFIR_CHGHEADER``/``ADDHEADER``) and the new body
(``SMFIR_REPLBODY``), plus an ``X-Sanigate`` trace header. A message that cannot be sanitized is held: by
default its original goes into sanigate's quarantine and Postfix drops its copy (``[milter] hold =
"store"``; a release re-injects it through ``[upstream]``), or Postfix keeps it in its hold queue
(``hold = "postfix"``). A policy's ``on_failure = "reject"`` or ``"tempfail"`` becomes 554 or 451 to the
client, and anything sanigate cannot do safely (a busy gateway, a directory or store that does not
answer) is 451: the client retries, nothing passes unsanitized.

The wire format is kilter.protocol's (a sans-I/O parser and state machine of the milter protocol); the
connection handling is asyncio, so each message waits for the sanitizer pool without holding a thread.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field

from kilter.protocol.buffer import SimpleBuffer
from kilter.protocol.core import FilterProtocol
from kilter.protocol.messages import (
    Abort,
    ActionFlags,
    AddHeader,
    Body,
    ChangeHeader,
    Close,
    Connect,
    Continue,
    Discard,
    EndOfMessage,
    EnvelopeFrom,
    EnvelopeRecipient,
    Header,
    Helo,
    Macro,
    Message,
    Negotiate,
    ProtocolFlags,
    Quarantine,
    ReplaceBody,
    ReplyCode,
)

from gateway import streams
from gateway.config import Config
from gateway.directory import DirectoryUnavailableError
from gateway.serve import Gateway
from gateway.smtp import TRACE_HEADER, SanitizingHandler, trace_value
from gateway.store.base import Envelope as StoredEnvelope
from gateway.worker import JobResult

log = logging.getLogger("sanigate.milter")

WANTED_ACTIONS = ActionFlags.ADD_HEADERS | ActionFlags.CHANGE_HEADERS | ActionFlags.CHANGE_BODY | ActionFlags.QUARANTINE
WANTED_OPTIONS = ProtocolFlags.NO_UNKNOWN | ProtocolFlags.NO_DATA | ProtocolFlags.HEADER_LEADING_SPACE
CHUNK = 65_535 - 1  # the largest body piece one SMFIR_REPLBODY may carry
BUFFER = 1 << 21  # the MTA sends at most 64 KiB (1 MiB if negotiated, which we do not) a packet


@dataclass
class _Message:
    """What one milter connection has seen of the current SMTP transaction."""

    client_address: str = ""
    client_name: str = ""
    helo: str = ""
    queue_id: str = ""
    sender: str = ""
    recipients: list[str] = field(default_factory=list)
    headers: list[tuple[str, bytes]] = field(default_factory=list)  # as received: name, value
    body: bytearray = field(default_factory=bytearray)
    size: int = 0

    def new_transaction(self) -> None:
        self.sender, self.recipients, self.headers, self.body, self.size = "", [], [], bytearray(), 0


class MilterFront:
    """One task per MTA connection: parse events, answer each, decide at the end of each message."""

    def __init__(self, handler: SanitizingHandler, config: Config, hold: str) -> None:
        self.handler = handler
        self.config = config  # replaced by the gateway on reload
        self.hold = hold

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        proto = FilterProtocol(abort_on_unknown=True)
        inbuf = SimpleBuffer(BUFFER)
        msg = _Message()
        leading_space = False
        try:
            while data := await reader.read(1 << 16):
                inbuf[:] = data
                for event in proto.read_from(inbuf):
                    if isinstance(event, Close):
                        return
                    if isinstance(event, Negotiate):
                        options = WANTED_OPTIONS & event.protocol_flags
                        leading_space = ProtocolFlags.HEADER_LEADING_SPACE in options
                        replies: list[Message] = [
                            Negotiate(min(event.version, 6), WANTED_ACTIONS & event.action_flags, options)
                        ]
                    else:
                        replies = await self._answer(event, msg, leading_space)
                    for reply in replies:
                        out = SimpleBuffer(CHUNK + 1024)
                        proto.write_to(out, reply)  # type: ignore[arg-type]
                        writer.write(out[:].tobytes())
                    await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception:  # a protocol error: drop this connection; Postfix applies its milter_default_action
            log.exception("milter connection from %s: protocol error", msg.client_address or "?")
        finally:
            writer.close()

    async def _answer(self, event: Message, msg: _Message, leading_space: bool) -> list[Message]:
        match event:
            case Macro():
                if "i" in event.macros:
                    msg.queue_id = event.macros["i"]
                return []
            case Abort():
                msg.new_transaction()
                return []
            case Connect():
                msg.client_name, msg.client_address = event.hostname, str(event.address or "")
            case Helo():
                msg.helo = event.hostname
            case EnvelopeFrom():
                msg.new_transaction()
                msg.sender = _address(bytes(event.sender))
            case EnvelopeRecipient():
                msg.recipients.append(_address(bytes(event.recipient)))
            case Header():
                value = bytes(event.value)
                msg.headers.append((event.name, value if leading_space else b" " + value))
                msg.size += len(event.name) + len(value) + 3
            case Body():
                msg.body += bytes(event.content)
                msg.size += len(event.content)
            case EndOfMessage():
                msg.body += bytes(event.content)
                try:
                    return await self._end_of_message(msg, leading_space)
                finally:
                    msg.new_transaction()
        if msg.size > self.config.server.max_message_size:
            return [_reply(552, "5.3.4", "Message too big")]
        return [Continue()]

    async def _end_of_message(self, msg: _Message, leading_space: bool) -> list[Message]:
        config = self.config
        handler = self.handler
        message_id = uuid.uuid4().hex[:20]
        original = _assemble(msg.headers, bytes(msg.body))
        where = f"message {message_id} (queue id {msg.queue_id or '?'}) from {msg.sender}"
        with handler.in_progress() as admitted:
            if not admitted:
                handler.record("busy")
                return [_reply(451, "4.3.2", "Too busy, try again later")]
            try:
                policies = await handler.policies_for(msg.sender, config)
            except DirectoryUnavailableError as exc:
                handler.record("tempfail")
                log.warning("%s: %s", where, exc.message)
                return [_reply(451, "4.4.3", "The sender's directory groups cannot be looked up now")]
            names = [p.name for p in policies]
            # The stream memory as it is now: a milter has no per-sender turn, so two messages of one
            # sender at once may each be judged without the other (the content filter orders them).
            thread = streams.thread_for(original, policies)
            try:
                memory = await handler.recall(policies, msg.sender, list(msg.recipients), thread)
            except Exception:
                log.exception("%s: the stream memory cannot be read", where)
                handler.record("tempfail")
                return [_reply(451, "4.3.0", "Stream memory unavailable, try again later")]
            result = await handler.judge(original, policies, message_id, config, memory)
            handler.count_decisions(result)
            envelope = StoredEnvelope(sender=msg.sender, recipients=tuple(msg.recipients),
                                      client_address=msg.client_address, client_name=msg.client_name,
                                      helo=msg.helo)  # fmt: skip
            replies = await self._verdict(result, message_id, names, envelope, original, msg, leading_space)
            if result.verdict == "forward" and result.disclosed and isinstance(replies[-1], Continue):
                try:
                    await handler.remember(message_id, msg.sender, list(msg.recipients), thread, result)
                except Exception:
                    log.exception("%s: accepted, but what it disclosed could not be remembered", where)
        log.info("%s to %s: %s", where, ",".join(msg.recipients), type(replies[-1]).__name__)
        return replies

    async def _verdict(self, result: JobResult, message_id: str, names: list[str], envelope: StoredEnvelope,
                       original: bytes, msg: _Message, leading_space: bool) -> list[Message]:  # fmt: skip
        handler = self.handler
        if result.verdict == "reject":
            handler.record("rejected")
            return [_reply(554, "5.7.1", f"Message refused by policy ({result.reason})")]
        if result.verdict == "tempfail":
            handler.record("tempfail")
            return [_reply(451, "4.7.0", f"Message cannot be sanitized now ({result.reason}), try again later")]
        trace = trace_value(result, message_id, names).encode("ascii", "replace")
        if result.verdict == "hold" or result.data is None:
            try:
                await handler.save(message_id=message_id, envelope=envelope, status="held", reason=result.reason,
                                   policies=names, original=original, sanitized=None, decisions=result.decisions,
                                   cause=result.cause)  # fmt: skip
            except Exception:
                log.exception("message %s could not be held", message_id)
                handler.record("tempfail")
                return [_reply(451, "4.3.0", "Message could not be held for review, try again later")]
            handler.record("held")
            if self.hold == "postfix":  # Postfix's hold queue keeps it; the store keeps the record and evidence
                return [AddHeader(TRACE_HEADER, trace), Quarantine(f"sanigate {message_id}: {result.reason}"),
                        Continue()]  # fmt: skip
            return [Discard()]  # kept in sanigate's quarantine only: released from there, through [upstream]
        edits = _edits(msg.headers, original, result.data, leading_space)
        if edits is None:
            handler.record("tempfail")
            log.error("message %s: the sanitized message could not be expressed as milter edits", message_id)
            return [_reply(451, "4.3.0", "Message cannot be sanitized now, try again later")]
        outcome = "sanitized" if result.decisions else "clean"
        if result.decisions:
            try:  # the audit record first: nothing is accepted that the log does not show
                await handler.save(message_id=message_id, envelope=envelope, status="forwarded",
                                   reason=result.reason, policies=names, original=original, sanitized=result.data,
                                   decisions=result.decisions, utility=result.utility)  # fmt: skip
            except Exception:
                log.exception("message %s: audit record not stored", message_id)
                handler.record("tempfail")
                return [_reply(451, "4.3.0", "Message cannot be recorded now, try again later")]
        handler.record(outcome)
        return [*edits, AddHeader(TRACE_HEADER, trace), Continue()]


def _reply(code: int, status: str, text: str) -> ReplyCode:
    return ReplyCode(f"{code} {status} {text}".encode("ascii", "replace") + b"\0")


def _address(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").strip().removeprefix("<").removesuffix(">")


def _crlf(value: bytes) -> bytes:
    return value.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _assemble(headers: list[tuple[str, bytes]], body: bytes) -> bytes:
    """The message as the client sent it: Postfix gives folded header lines with bare LF."""
    head = b"".join(name.encode("ascii", "replace") + b":" + _crlf(value) + b"\r\n" for name, value in headers)
    return head + b"\r\n" + body


def _split(message: bytes) -> tuple[list[tuple[str, bytes]], bytes]:
    """Header fields (name, value after the colon, folding kept) and the body of a message."""
    end = message.find(b"\r\n\r\n")
    head, body = (message, b"") if end < 0 else (message[: end + 2], message[end + 4 :])
    fields: list[tuple[str, bytes]] = []
    for line in head.split(b"\r\n")[:-1] if head.endswith(b"\r\n") else head.split(b"\r\n"):
        if line[:1] in (b" ", b"\t") and fields:
            name, value = fields[-1]
            fields[-1] = (name, value + b"\r\n" + line)
        elif b":" in line:
            raw_name, _, value = line.partition(b":")
            fields.append((raw_name.decode("ascii", "replace"), value))
    return fields, body


def _edits(received: list[tuple[str, bytes]], original: bytes, sanitized: bytes,
           leading_space: bool) -> list[Message] | None:  # fmt: skip
    """The milter edits that turn the message Postfix holds into ``sanitized``; None if they cannot."""
    if sanitized == original:
        return []
    before, old_body = _split(original)
    after, new_body = _split(sanitized)
    if [n for n, _ in before] != [n for n, _ in received]:
        return None  # we would be editing a header list other than Postfix's
    edits: list[Message] = []
    names = {n.lower() for n, _ in before} | {n.lower() for n, _ in after}
    for lower in sorted(names):
        old = [(n, v) for n, v in before if n.lower() == lower]
        new = [(n, v) for n, v in after if n.lower() == lower]
        for i in range(max(len(old), len(new)) - 1, -1, -1):  # from the last, so deletions keep indexes
            if i >= len(new):
                edits.append(ChangeHeader(i + 1, old[i][0], b""))  # an empty value deletes the field
            elif i >= len(old):
                edits.append(AddHeader(new[i][0], _wire(new[i][1], leading_space)))
            elif _norm(old[i][1]) != _norm(new[i][1]):
                edits.append(ChangeHeader(i + 1, old[i][0], _wire(new[i][1], leading_space)))
    if new_body != old_body:
        edits.extend(ReplaceBody(new_body[i : i + CHUNK]) for i in range(0, max(len(new_body), 1), CHUNK))
    return edits


def _norm(value: bytes) -> bytes:
    return value.replace(b"\r\n", b"\n").strip()


def _wire(value: bytes, leading_space: bool) -> bytes:
    """A header value as the milter protocol carries it: folded with LF, the leading space only if negotiated."""
    value = value.replace(b"\r\n", b"\n")
    return value if leading_space else value.removeprefix(b" ")


class MilterGateway(Gateway):
    """The gateway with the milter front end instead of the SMTP listener."""

    front: MilterFront | None = None

    async def _listen(self) -> None:
        m = self.config.milter
        self.front = MilterFront(self.handler, self.config, m.hold)
        self._server = await asyncio.start_server(self.front.connection, host=m.host, port=m.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self.listen_host = m.host
        log.info("milter listening on %s:%d (held messages: %s)", m.host, self.port, m.hold)
        if m.hold == "store" and self.config.upstream.host is None:
            log.warning("held messages are released through [upstream], which names no relay: a release would go "
                        "into the Maildir %s; set [upstream] relay to a Postfix port without this milter",
                        self.config.upstream.maildir)  # fmt: skip

    async def reload(self) -> bool:
        ok = await super().reload()
        if ok and self.front is not None:
            self.front.config = self.config
            self.front.hold = self.config.milter.hold
        return ok
