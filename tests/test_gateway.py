"""The gateway over real sockets: a real SMTP client -> sanigate -> a real upstream capture server."""

from __future__ import annotations

import asyncio
import email
import email.policy
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosmtplib
import pytest
from gatewaykit import MEDICAL, CaptureHandler, config_for, send, start_capture

from gateway.model.engine import Engine
from gateway.serve import Gateway
from gateway.smtp import TRACE_HEADER
from gateway.store.base import AuditQuery, MessageQuery

Scenario = Callable[[Gateway, CaptureHandler], Awaitable[None]]


def run(tmp_path: Path, engine: Engine, scenario: Scenario, *, upstream: bool = True, **cfg: Any) -> None:
    async def main() -> None:
        capture = CaptureHandler()
        server, port = await start_capture(capture)
        gw = Gateway(config=config_for(tmp_path, upstream_port=port if upstream else None, **cfg),
                     engine_in_process=engine)  # fmt: skip
        await gw.start()
        try:
            await scenario(gw, capture)
        finally:
            await gw.stop()
            server.close()
            await server.wait_closed()

    asyncio.run(main())


def test_sanitized_delivery_with_trace_and_audit(tmp_path: Path, engine: Engine) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        refused, reply = await send(gw.port, "doctor@clinic.example", ["a@example.com"], MEDICAL)
        assert not refused and reply.startswith("2.0.0 Ok: sanitized")
        (msg,) = up.messages
        body = msg.data.decode()
        assert "HIV" not in body and "Los Angeles" not in body and "antiretroviral" not in body
        parsed = email.message_from_bytes(msg.data, policy=email.policy.default)
        assert "policies=medical,places" in parsed[TRACE_HEADER] and "status=sanitized" in parsed[TRACE_HEADER]
        assert parsed["Received"].startswith("from ") and "sanigate" in parsed["Received"]
        assert msg.xforward.get("ADDR") == "127.0.0.1"
        message_id = reply.rsplit(" ", 1)[1]
        stored = gw.store.get(message_id)
        assert stored is not None and stored.status == "forwarded"
        original, sanitized = gw.store.content(message_id)
        assert original == MEDICAL and sanitized is not None and b"HIV" not in sanitized
        audit = gw.store.audit(AuditQuery(message_id=message_id))
        assert {a.entity for a in audit} >= {"HIV", "Los Angeles"}
        assert all(a.sender == "doctor@clinic.example" and a.policy in ("medical", "places") for a in audit)

    run(tmp_path, engine, scenario)


def test_clean_mail_passes_and_is_not_stored(tmp_path: Path, engine: Engine) -> None:
    clean = b"From: a@b.example\r\nTo: c@d.example\r\nSubject: lunch\r\n\r\nLunch on Friday?\r\n"

    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        _refused, reply = await send(gw.port, "a@b.example", ["c@d.example"], clean)
        assert "clean" in reply
        assert up.messages[0].data.endswith(clean)
        assert gw.store.list_messages() == []

    run(tmp_path, engine, scenario)


def test_partial_refusal_is_mirrored(tmp_path: Path, engine: Engine) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        up.refuse["nobody@example.com"] = "550 5.1.1 <nobody@example.com>: no such user"
        up.refuse["later@example.com"] = "450 4.2.1 mailbox busy"
        refused, reply = await send(gw.port, "x@clinic.example",
                                    ["a@example.com", "nobody@example.com", "later@example.com"], MEDICAL)  # fmt: skip
        assert refused["nobody@example.com"][0] == 550
        assert refused["later@example.com"][0] == 450
        assert up.messages[0].recipients == ["a@example.com"]
        assert reply.startswith("2.0.0")

    run(tmp_path, engine, scenario)


@pytest.mark.parametrize(("reply", "code"), [("451 4.3.0 try later", 451), ("554 5.7.1 not for us", 554)])
def test_upstream_refuses_data(tmp_path: Path, engine: Engine, reply: str, code: int) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        up.data_reply = reply
        with pytest.raises(aiosmtplib.SMTPResponseException) as info:
            await send(gw.port, "x@clinic.example", ["a@example.com"], MEDICAL)
        assert info.value.code == code

    run(tmp_path, engine, scenario)


def test_upstream_slow_is_a_temporary_failure(tmp_path: Path, engine: Engine) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        up.delay = 5.0  # the relay times out after 3 s
        with pytest.raises(aiosmtplib.SMTPResponseException) as info:
            await send(gw.port, "x@clinic.example", ["a@example.com"], MEDICAL)
        assert info.value.code == 451

    run(tmp_path, engine, scenario)


def test_upstream_down_is_a_temporary_failure(tmp_path: Path, engine: Engine) -> None:
    async def main() -> None:
        capture = CaptureHandler()
        server, port = await start_capture(capture)
        server.close()
        await server.wait_closed()  # nothing listens on `port` any more
        gw = Gateway(config=config_for(tmp_path, upstream_port=port), engine_in_process=engine)
        await gw.start()
        try:
            # The upstream is first needed at RCPT, so that is where the client hears it is down.
            with pytest.raises(aiosmtplib.SMTPRecipientsRefused) as info:
                await send(gw.port, "x@clinic.example", ["a@example.com"], MEDICAL)
            assert [r.code for r in info.value.recipients] == [451]
        finally:
            await gw.stop()

    asyncio.run(main())


def test_unsanitizable_message_is_held_not_forwarded(tmp_path: Path, engine: Engine) -> None:
    encrypted = (
        b"From: x@clinic.example\r\nTo: a@example.com\r\nSubject: secret\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"\r\n'
        b"Content-Transfer-Encoding: base64\r\n\r\nMIIBAAYJKoZIhvcNAQcDoIIB8TCCAe0CAQAxggGQ\r\n"
    )

    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        _refused, reply = await send(gw.port, "x@clinic.example", ["a@example.com"], encrypted)
        assert "held for review" in reply and "encrypted" in reply
        assert up.messages == []
        (held,) = gw.store.list_messages(MessageQuery(status="held"))
        assert held.reason == "encrypted" and gw.store.content(held.id)[0] == encrypted
        assert held.cause is not None and held.cause.part and held.cause.detail  # the reviewer is told which part

    run(tmp_path, engine, scenario)


def test_malformed_message_does_not_crash(tmp_path: Path, engine: Engine) -> None:
    garbage = b"\x00\x01 not a message at all \xff\xfe\r\n\r\n\x00" * 20

    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        _refused, reply = await send(gw.port, "x@clinic.example", ["a@example.com"], garbage)
        assert reply.startswith("2.0.0")  # held or passed, but answered
        _r, again = await send(gw.port, "x@clinic.example", ["a@example.com"], MEDICAL)
        assert again.startswith("2.0.0 Ok: sanitized")  # and the server is still there

    run(tmp_path, engine, scenario)


def test_oversize_is_552(tmp_path: Path, engine: Engine) -> None:
    big = MEDICAL + b"x" * 300_000 + b"\r\n"

    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        with pytest.raises(aiosmtplib.SMTPException) as info:
            await send(gw.port, "x@clinic.example", ["a@example.com"], big)
        assert "552" in str(info.value) or getattr(info.value, "code", 0) == 552
        assert up.messages == []

    run(tmp_path, engine, scenario)


def test_burst_of_concurrent_senders(tmp_path: Path, engine: Engine) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        senders = [f"user{i}@clinic.example" for i in range(6)]
        jobs = [send(gw.port, s, ["a@example.com"], MEDICAL.replace(b"HIV results", f"HIV {n}".encode()))
                for n in range(3) for s in senders]  # fmt: skip
        results = await asyncio.gather(*jobs, return_exceptions=True)
        ok = [r for r in results if isinstance(r, tuple)]
        busy = [r for r in results if _is_busy(r)]
        assert len(ok) + len(busy) == len(jobs)  # every one answered: delivered, or told to retry
        assert len(up.messages) == len(ok)
        # One sender's messages go out in the order they were accepted.
        for s in senders:
            mine = [m for m in up.messages if m.sender == s]
            assert len(mine) == len({m.data for m in mine})

    run(tmp_path, engine, scenario)


def _is_busy(r: object) -> bool:
    """Told to retry: at DATA (too many in flight) or at RCPT (too many upstream connections)."""
    if isinstance(r, aiosmtplib.SMTPRecipientsRefused):
        return {e.code for e in r.recipients} == {451}
    return isinstance(r, aiosmtplib.SMTPResponseException) and r.code == 451


def test_one_senders_messages_leave_in_arrival_order(tmp_path: Path, engine: Engine) -> None:
    # The first message takes far longer to sanitize than the second, which
    # arrives while the first is being worked on: the second must still go second.
    slow = MEDICAL.replace(b"Subject: ", b"Subject: first ") + b"The HIV clinic in Los Angeles called again.\r\n" * 3500
    fast = MEDICAL.replace(b"Subject: ", b"Subject: second ")

    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        first = asyncio.create_task(send(gw.port, "x@clinic.example", ["a@example.com"], slow))
        while gw.handler.in_flight == 0:  # noqa: ASYNC110 - the server under test has no event to offer
            await asyncio.sleep(0.001)
        _r, reply = await send(gw.port, "X@clinic.example", ["a@example.com"], fast)
        assert reply.startswith("2.0.0 Ok: sanitized")
        # The order is the upstream's: the first's 250 may reach its client after the second's, since its audit
        # record is written once the second may go (test_a_senders_next_message_does_not_wait_for_the_audit_record).
        assert (await first)[1].startswith("2.0.0 Ok: sanitized")
        subjects = [email.message_from_bytes(m.data)["Subject"].split()[0] for m in up.messages]
        assert subjects == ["first", "second"]

    run(tmp_path, engine, scenario)


def test_a_senders_next_message_does_not_wait_for_the_audit_record(tmp_path: Path, engine: Engine) -> None:
    # The next message needs this one sent (and its disclosures remembered), not its audit record written:
    # the record of the first is written only once the second has gone (it waits for it, up to 20 s).
    first = MEDICAL.replace(b"Subject: ", b"Subject: first ")
    second = MEDICAL.replace(b"Subject: ", b"Subject: second ")

    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        save = gw.store.save
        sent_before_record: list[int] = []
        calls: list[str] = []

        def save_once_the_next_is_sent(**kwargs: Any) -> None:
            calls.append(kwargs["message_id"])
            if len(calls) == 1:  # the first message's record
                deadline = time.monotonic() + 20
                while len(up.messages) < 2 and time.monotonic() < deadline:
                    time.sleep(0.005)
                sent_before_record.append(len(up.messages))
            save(**kwargs)

        gw.store.save = save_once_the_next_is_sent  # type: ignore[method-assign]
        one = asyncio.create_task(send(gw.port, "x@clinic.example", ["a@example.com"], first))
        while gw.handler.in_flight == 0:  # noqa: ASYNC110 - the server under test has no event to offer
            await asyncio.sleep(0.001)
        _r, reply = await send(gw.port, "x@clinic.example", ["a@example.com"], second)
        assert reply.startswith("2.0.0 Ok: sanitized") and (await one)[1].startswith("2.0.0 Ok: sanitized")
        assert sent_before_record == [2]
        subjects = [email.message_from_bytes(m.data)["Subject"].split()[0] for m in up.messages]
        assert subjects == ["first", "second"]
        assert len(gw.store.list_messages(MessageQuery())) == 2  # both audited

    run(tmp_path, engine, scenario)


def test_maildir_default_delivery(tmp_path: Path, engine: Engine) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        _refused, reply = await send(gw.port, "doctor@clinic.example", ["a@example.com"], MEDICAL)
        assert reply.startswith("2.0.0")
        (file,) = list((tmp_path / "maildir" / "new").iterdir())
        assert b"HIV" not in file.read_bytes() and file.stat().st_mode & 0o777 == 0o600

    run(tmp_path, engine, scenario, upstream=False)


def test_xforward_is_passed_upstream(tmp_path: Path, engine: Engine) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        client = aiosmtplib.SMTP(hostname="127.0.0.1", port=gw.port, timeout=30, start_tls=False)
        await client.connect()
        await client.ehlo(hostname="postfix.test")
        assert client.supports_extension("xforward")
        r = await client.execute_command(b"XFORWARD NAME=mail.example.net ADDR=192.0.2.7 PROTO=ESMTP HELO=mx")
        assert r.code == 250
        await client.sendmail("x@clinic.example", ["a@example.com"], MEDICAL)
        await client.quit()
        assert up.messages[0].xforward["ADDR"] == "192.0.2.7"
        assert up.messages[0].xforward["NAME"] == "mail.example.net"

    run(tmp_path, engine, scenario)


def test_policy_rejection_is_554(tmp_path: Path, engine: Engine) -> None:
    encrypted = (
        b"From: x@clinic.example\r\nTo: a@example.com\r\nSubject: s\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"\r\n\r\nMIIB\r\n'
    )
    strict = """
[policies.strict]
entities = ["HIV"]
on_failure = "reject"

[[senders]]
match = "default"
policies = ["strict"]
"""

    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        with pytest.raises(aiosmtplib.SMTPResponseException) as info:
            await send(gw.port, "x@clinic.example", ["a@example.com"], encrypted)
        assert info.value.code == 554 and "5.7.1" in info.value.message
        assert up.messages == [] and gw.store.list_messages() == []

    run(tmp_path, engine, scenario, policies=strict)


class _BrokenEngine(Engine):
    """The real engine with a bug injected: sanitize() raises."""

    def __init__(self, real: Engine) -> None:
        self.__dict__.update(real.__dict__)

    def sanitize(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected failure")


def test_internal_error_holds_the_original(tmp_path: Path, engine: Engine) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        _refused, reply = await send(gw.port, "x@clinic.example", ["a@example.com"], MEDICAL)
        assert "held for review" in reply and "internal-error" in reply
        assert up.messages == []  # never the original in clear
        (held,) = gw.store.list_messages(MessageQuery(status="held"))
        assert gw.store.content(held.id)[0] == MEDICAL

    run(tmp_path, _BrokenEngine(engine), scenario)


def test_store_failure_while_holding_is_451(tmp_path: Path, engine: Engine) -> None:
    from gateway.store.sqlite import StoreError

    encrypted = (
        b"From: x@clinic.example\r\nTo: a@example.com\r\nSubject: s\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"\r\n\r\nMIIB\r\n'
    )

    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        def failing_save(**kwargs: Any) -> None:
            raise StoreError("disk full (injected)")

        gw.store.save = failing_save  # type: ignore[method-assign]
        with pytest.raises(aiosmtplib.SMTPResponseException) as info:
            await send(gw.port, "x@clinic.example", ["a@example.com"], encrypted)
        assert info.value.code == 451  # the sender keeps the message and retries
        assert up.messages == []

    run(tmp_path, engine, scenario)


def test_upstream_connections_are_opened_at_rcpt_and_bounded(tmp_path: Path, engine: Engine) -> None:
    """Idle clients after MAIL hold no upstream connection; past max_in_flight (8 here) RCPT gets 451 4.3.2."""

    async def scenario(gw: Gateway, capture: CaptureHandler) -> None:
        clients = [aiosmtplib.SMTP(hostname="127.0.0.1", port=gw.port, timeout=10) for _ in range(30)]
        for c in clients:
            await c.connect()
            await c.ehlo()
            await c.mail("idle@clinic.example")
        assert gw.handler.upstream_connections == 0  # 30 sessions after MAIL, nothing opened upstream
        replies = []
        for c in clients[:12]:
            try:
                replies.append((await c.rcpt("a@example.com")).code)
            except aiosmtplib.SMTPRecipientRefused as exc:
                replies.append(exc.code)
        assert replies == [250] * 8 + [451] * 4
        assert gw.handler.upstream_connections == 8
        await clients[0].rset()  # a finished transaction gives its slot back
        assert gw.handler.upstream_connections == 7
        assert (await clients[9].rcpt("a@example.com")).code == 250
        for c in clients[1:5]:
            c.close()  # clients that vanish give theirs back too
        await asyncio.sleep(0.3)
        assert gw.handler.upstream_connections == 4
        for c in clients[5:]:
            try:
                await c.quit()
            except aiosmtplib.SMTPException:
                c.close()
        await asyncio.sleep(0.3)
        assert gw.handler.upstream_connections == 0
        # and mail still flows afterwards
        _refused, reply = await send(gw.port, "x@clinic.example", ["a@example.com"], MEDICAL)
        assert reply.startswith("2.0.0 Ok: sanitized")

    run(tmp_path, engine, scenario)
