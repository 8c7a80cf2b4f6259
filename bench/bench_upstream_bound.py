"""Upstream connections against idle client sessions: the review finding of issue 17, measured.

    .venv/bin/python bench/bench_upstream_bound.py

300 clients say MAIL and wait; then all say RCPT. Before the fix each session opened an upstream connection
at MAIL (300 idle sessions, 300 upstream connections); now none is opened before RCPT and at most
max_in_flight (8 in the test configuration used here) are open at once.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import aiosmtplib
from aiosmtpd.smtp import SMTP, Envelope, Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from gatewaykit import CaptureHandler, config_for, start_capture

from gateway.assemble import EngineConfig, build_engine
from gateway.serve import Gateway

CLIENTS = 300


async def main() -> None:
    engine = build_engine(EngineConfig())
    capture = CaptureHandler()
    server, port = await start_capture(capture)
    ehlo = capture.handle_EHLO  # type: ignore[attr-defined]
    opened = 0

    async def counting(server: SMTP, session: Session, envelope: Envelope, hostname: str,
                       responses: list[str]) -> list[str]:  # fmt: skip
        nonlocal opened
        opened += 1  # one EHLO per upstream connection sanigate opens
        result: list[str] = await ehlo(server, session, envelope, hostname, responses)
        return result

    capture.handle_EHLO = counting  # type: ignore[attr-defined]
    gw = Gateway(config=config_for(Path(tempfile.mkdtemp()), upstream_port=port), engine_in_process=engine)
    await gw.start()
    clients = [aiosmtplib.SMTP(hostname="127.0.0.1", port=gw.port, timeout=30) for _ in range(CLIENTS)]
    for c in clients:
        await c.connect()
        await c.ehlo()
        await c.mail("idle@clinic.example")
    await asyncio.sleep(0.5)
    print(f"{CLIENTS} sessions idle after MAIL: upstream connections opened {opened}")
    accepted = busy = 0
    for c in clients:
        try:
            await c.rcpt("a@example.com")
            accepted += 1
        except aiosmtplib.SMTPRecipientRefused as exc:
            busy += exc.code == 451
    bound, still_open = gw.config.server.max_in_flight, gw.handler.upstream_connections
    print(f"{CLIENTS} sessions at RCPT, max_in_flight {bound}: {accepted} accepted, {busy} told 451 4.3.2, "
          f"upstream connections opened {opened}, open {still_open}")  # fmt: skip
    for c in clients:
        c.close()
    await asyncio.sleep(0.5)
    print(f"after the clients leave: upstream connections open {gw.handler.upstream_connections}")
    await gw.stop()
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
