"""The floor for the gateway benchmark: the least an asyncio SMTP relay can do.

    python bench/minimal_relay.py --upstream 127.0.0.1:PORT

aiosmtpd in, aiosmtplib out, one upstream connection per message (as
sanigate's relay does), 250 only after the upstream accepted. No parsing, no
store, no policy: what any Python relay on this machine costs, so that
sanigate's throughput can be read as a fraction of it. Prints
"listening on 127.0.0.1:PORT" once it accepts connections.
"""

from __future__ import annotations

import argparse
import asyncio
import signal

import aiosmtplib
from aiosmtpd.smtp import SMTP, Envelope, Session


class RelayHandler:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        try:
            await aiosmtplib.send(
                envelope.original_content or b"",
                sender=envelope.mail_from,
                recipients=envelope.rcpt_tos,
                hostname=self.host,
                port=self.port,
                start_tls=False,
                use_tls=False,
                timeout=60,
            )
        except aiosmtplib.SMTPResponseException as exc:
            return f"{exc.code} {exc.message}"
        except (aiosmtplib.SMTPException, OSError, TimeoutError):
            return "451 4.4.1 upstream unavailable"
        return "250 2.0.0 OK"


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--listen", default="127.0.0.1:0")
    args = ap.parse_args()
    up_host, up_port = args.upstream.rsplit(":", 1)
    host, port = args.listen.rsplit(":", 1)
    handler = RelayHandler(up_host, int(up_port))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, data_size_limit=64 * 1024 * 1024, enable_SMTPUTF8=True, decode_data=False),
        host=host,
        port=int(port),
    )
    print(f"listening on {host}:{server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    await stop.wait()
    server.close()
    await server.wait_closed()


if __name__ == "__main__":
    asyncio.run(main())
