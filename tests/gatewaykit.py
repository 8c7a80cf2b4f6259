"""Real parts for gateway tests: an upstream capture server on loopback, configs, a client."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiosmtplib
from aiosmtpd.smtp import SMTP, Envelope, Session

from gateway.config import Config, parse_config


@dataclass
class Captured:
    sender: str
    recipients: list[str]
    data: bytes
    xforward: dict[str, str]


@dataclass
class CaptureHandler:
    """An upstream MTA that records what it accepts, and misbehaves on demand."""

    messages: list[Captured] = field(default_factory=list)
    refuse: dict[str, str] = field(default_factory=dict)  # recipient -> reply
    data_reply: str | None = None  # e.g. "451 4.3.0 later" or "554 5.6.0 no"
    delay: float = 0.0
    xforward: dict[str, str] = field(default_factory=dict)

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope, address: str,
                          rcpt_options: list[str]) -> str:  # fmt: skip
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.data_reply:
            return self.data_reply
        self.messages.append(Captured(envelope.mail_from or "", list(envelope.rcpt_tos),
                                      envelope.original_content or b"", dict(self.xforward)))  # fmt: skip
        return "250 2.0.0 captured"


class CaptureSMTP(SMTP):
    line_length_limit = 64 * 1024  # as lenient as Postfix

    async def smtp_XFORWARD(self, arg: str) -> None:
        for item in arg.split():
            k, _, v = item.partition("=")
            self.event_handler.xforward[k] = v
        await self.push("250 2.0.0 Ok")


async def start_capture(handler: CaptureHandler) -> tuple[asyncio.base_events.Server, int]:
    loop = asyncio.get_running_loop()

    async def ehlo_hook(server: SMTP, session: Session, envelope: Envelope, hostname: str,
                        responses: list[str]) -> list[str]:  # fmt: skip
        session.host_name = hostname
        return [*responses[:-1], responses[-1].replace("250 ", "250-", 1), "250 XFORWARD NAME ADDR PROTO HELO"]

    handler.handle_EHLO = ehlo_hook  # type: ignore[attr-defined]
    server = await loop.create_server(
        lambda: CaptureSMTP(handler, hostname="upstream", decode_data=False), host="127.0.0.1", port=0
    )
    return server, server.sockets[0].getsockname()[1]


def config_for(tmp: Path, *, upstream_port: int | None, extra: str = "", policies: str | None = None) -> Config:
    relay = f'relay = "127.0.0.1:{upstream_port}"\ntimeout = 3' if upstream_port else f'maildir = "{tmp}/maildir"'
    text = f"""
[server]
listen = "127.0.0.1:0"
metrics_listen = "127.0.0.1:0"
hostname = "sanigate.test"
max_message_size = 200000
max_in_flight = 8
workers = 1
process_timeout = 60
{extra}

[upstream]
{relay}

[store]
path = "{tmp}/store.db"

{
        policies
        or '''
[policies.medical]
entities = ["HIV"]
alpha = 1.5

[policies.places]
entities = ["Los Angeles"]
alpha = 1.5

[[senders]]
match = "doctor@clinic.example"
policies = ["medical", "places"]

[[senders]]
match = "default"
policies = ["medical"]
'''
    }
"""
    return parse_config(text, source="test.toml", base=tmp)


MEDICAL = (
    b"From: Doctor <doctor@clinic.example>\r\nTo: a@example.com\r\nSubject: HIV results\r\n"
    b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
    b"The patient had an HIV test in Los Angeles and started antiretroviral therapy.\r\n"
)


async def send(port: int, sender: str, recipients: list[str], data: bytes, **kw: Any) -> tuple[dict[str, Any], str]:
    """Send with a real SMTP client; returns (refused recipients, final reply)."""
    client = aiosmtplib.SMTP(hostname="127.0.0.1", port=port, timeout=kw.pop("timeout", 30), start_tls=False)
    await client.connect()
    try:
        refused, reply = await client.sendmail(sender, recipients, data, **kw)
        return dict(refused), reply
    finally:
        try:
            await client.quit()
        except aiosmtplib.SMTPException:
            client.close()


class ThreadedCapture:
    """The capture server on its own event loop in a thread, for tests that run sanigate as a process."""

    def __init__(self) -> None:
        import threading

        self.handler = CaptureHandler()
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.port = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def up() -> None:
            self.server, self.port = await start_capture(self.handler)
            self._ready.set()

        self.loop.run_until_complete(up())
        self.loop.run_forever()

    def close(self) -> None:
        async def down() -> None:
            self.server.close()
            await self.server.wait_closed()

        asyncio.run_coroutine_threadsafe(down(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()
