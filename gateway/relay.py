"""Where sanitized mail goes: an upstream SMTP server (Postfix's re-injection port) or a Maildir.

The upstream transaction is opened while the client's is: at the client's
first RCPT (not at MAIL, so an idle client holds nothing upstream), and each
RCPT is passed on as it arrives, so a recipient the upstream refuses is
refused to the client with the upstream's own reply. DATA goes up only once the
message is sanitized. Any trouble upstream becomes a 4xx for the client,
which keeps the message and retries.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import aiosmtplib

from gateway.config import Config
from gateway.errors import SanigateError


class UpstreamError(SanigateError):
    """The upstream said no, or could not be reached; carries the reply to give the client."""

    def __init__(self, message: str, *, code: int = 451, status: str = "4.4.1") -> None:
        super().__init__(message)
        self.smtp_code = code
        self.smtp_status = status


@dataclass(frozen=True, slots=True)
class Reply:
    code: int
    message: str

    @property
    def ok(self) -> bool:
        return 200 <= self.code < 300

    def __str__(self) -> str:
        return f"{self.code} {self.message}"


class Transaction(Protocol):
    async def rcpt(self, address: str) -> Reply: ...

    async def data(self, message: bytes) -> Reply: ...

    async def close(self) -> None: ...


class Upstream(Protocol):
    async def begin(self, sender: str, *, xforward: Mapping[str, str], smtputf8: bool) -> Transaction: ...


# -- SMTP ------------------------------------------------------------------------


class SMTPUpstream:
    def __init__(self, host: str, port: int, *, timeout: float = 30.0, local_hostname: str = "sanigate") -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self.local_hostname = local_hostname

    async def begin(self, sender: str, *, xforward: Mapping[str, str], smtputf8: bool) -> Transaction:
        client = aiosmtplib.SMTP(hostname=self.host, port=self.port, timeout=self.timeout,
                                 local_hostname=self.local_hostname, start_tls=False)  # fmt: skip
        try:
            await client.connect()
            await client.ehlo()
            if xforward and client.supports_extension("xforward"):
                attrs = " ".join(f"{k}={_xtext(v)}" for k, v in xforward.items() if v)
                if attrs:
                    await client.execute_command(b"XFORWARD " + attrs.encode("ascii", "replace"))
            options = ["SMTPUTF8"] if smtputf8 and client.supports_extension("smtputf8") else []
            if client.supports_extension("8bitmime"):
                options.append("BODY=8BITMIME")
            await client.mail(sender, options=options)
        except aiosmtplib.SMTPResponseException as exc:
            await _quietly_close(client)
            raise _upstream_refusal(exc.code, exc.message, "MAIL") from exc
        except (TimeoutError, aiosmtplib.SMTPException, OSError) as exc:
            await _quietly_close(client)
            raise UpstreamError(f"upstream {self.host}:{self.port} unavailable ({type(exc).__name__})") from exc
        return _SMTPTransaction(client)


def _xtext(value: str) -> str:
    return "".join(ch if 33 <= ord(ch) <= 126 and ch not in "+=" else f"+{ord(ch):02X}" for ch in value[:255])


def _upstream_refusal(code: int, message: str, stage: str) -> UpstreamError:
    status = "4.4.0" if 400 <= code < 500 else "5.0.0"
    first = message.split(" ", 1)[0] if message else ""
    if first.count(".") == 2 and first[0] in "245":
        status, message = first, message[len(first) :].strip()
    return UpstreamError(f"upstream refused {stage}: {message}", code=code if 400 <= code < 600 else 451, status=status)


async def _quietly_close(client: aiosmtplib.SMTP) -> None:
    try:
        if client.is_connected:
            await asyncio.wait_for(client.quit(), 5)
    except Exception:
        client.close()


class _SMTPTransaction:
    def __init__(self, client: aiosmtplib.SMTP) -> None:
        self.client = client

    async def rcpt(self, address: str) -> Reply:
        return await self._reply("RCPT", self.client.rcpt(address))

    async def data(self, message: bytes) -> Reply:
        return await self._reply("DATA", self.client.data(message))

    async def _reply(self, stage: str, command: Awaitable[aiosmtplib.SMTPResponse]) -> Reply:
        """The upstream's answer, refusals included; a lost upstream is an UpstreamError."""
        try:
            r = await command
            return Reply(r.code, r.message)
        except aiosmtplib.SMTPResponseException as exc:  # also SMTPRecipientRefused
            return Reply(exc.code, exc.message)
        except (TimeoutError, aiosmtplib.SMTPException, OSError) as exc:
            raise UpstreamError(f"upstream lost during {stage} ({type(exc).__name__})") from exc

    async def close(self) -> None:
        await _quietly_close(self.client)


# -- Maildir ------------------------------------------------------------------------


class MaildirUpstream:
    """Deliver into a local Maildir: the embedded default, for trying sanigate out."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for sub in ("tmp", "new", "cur"):
            (root / sub).mkdir(parents=True, exist_ok=True)

    async def begin(self, sender: str, *, xforward: Mapping[str, str], smtputf8: bool) -> Transaction:
        return _MaildirTransaction(self.root, sender)


class _MaildirTransaction:
    def __init__(self, root: Path, sender: str) -> None:
        self.root = root
        self.sender = sender
        self.recipients: list[str] = []

    async def rcpt(self, address: str) -> Reply:
        self.recipients.append(address)
        return Reply(250, "2.1.5 OK")

    async def data(self, message: bytes) -> Reply:
        name = await asyncio.get_running_loop().run_in_executor(None, self._write, message)
        return Reply(250, f"2.0.0 delivered to Maildir as {name}")

    def _write(self, message: bytes) -> str:
        name = f"{time.time():.6f}.{uuid.uuid4().hex}.{socket.gethostname()}"
        head = f"Return-Path: <{self.sender}>\r\nDelivered-To: {', '.join(self.recipients)}\r\n".encode()
        tmp = self.root / "tmp" / name
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, head + message)
            os.fsync(fd)
        finally:
            os.close(fd)
        tmp.rename(self.root / "new" / name)
        dfd = os.open(self.root / "new", os.O_RDONLY)
        try:
            os.fsync(dfd)  # the rename is on disk before we answer 250
        finally:
            os.close(dfd)
        return name

    async def close(self) -> None:
        return None


def make_upstream(config: Config) -> Upstream:
    """Where the configuration sends mail: the relay's SMTP server, or the Maildir when there is none."""
    u = config.upstream
    if u.host:
        return SMTPUpstream(u.host, u.port, timeout=u.timeout, local_hostname=config.server.hostname)
    return MaildirUpstream(u.maildir)
