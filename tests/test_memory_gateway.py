"""The disclosure memory over real sockets: a real SMTP client -> sanigate -> a real upstream capture server.

Alone, "The virus test came back positive" is harmless under an HIV policy at
alpha 1.5; after the same sender told the same recipient about a patient who
needs condoms, the pair (patient, virus) points at HIV, and the later message
is generalized, its audit naming the earlier message.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
from pathlib import Path
from typing import Any

from gatewaykit import CaptureHandler, config_for, send, start_capture

from gateway.config import Config
from gateway.model.engine import Engine
from gateway.serve import Gateway
from gateway.store.base import AuditQuery
from gateway.worker import JobResult

FIRST = "The patient needs condoms and counselling."
LATER = "The virus test came back positive last week."


def _mail(sender: str, to: str, body: str, mid: str, refs: str = "") -> bytes:
    thread = f"In-Reply-To: {refs}\r\nReferences: {refs}\r\n" if refs else ""
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: claim 1187\r\nMessage-ID: {mid}\r\n{thread}"
            f"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n").encode()  # fmt: skip


def _config(tmp: Path, port: int, days: float) -> Config:
    return config_for(tmp, upstream_port=port, policies=f"""
[policies.medical]
entities = ["HIV"]
# the groups' memory alone; the evidence a stream sums is tests/test_evidence.py's
evidence_budget = 0
alpha = 1.5
stream_memory_days = {days}

[[senders]]
match = "default"
policies = ["medical"]
""")  # fmt: skip


def _run(tmp_path: Path, engine: Engine, days: float, scenario: object) -> None:
    async def main() -> None:
        capture = CaptureHandler()
        server, port = await start_capture(capture)
        gw = Gateway(config=_config(tmp_path, port, days), engine_in_process=engine)
        await gw.start()
        try:
            await scenario(gw, capture)  # type: ignore[operator]
        finally:
            await gw.stop()
            server.close()
            await server.wait_closed()

    asyncio.run(main())


def _body(data: bytes) -> str:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    return str(msg.get_body().get_content())  # type: ignore[union-attr]


def test_a_later_message_is_generalized_because_of_an_earlier_one(tmp_path: Path, engine: Engine) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        clinic, insurer = "gp@clinic.example", "claims@insurer.example"
        _r, first = await send(gw.port, clinic, [insurer], _mail(clinic, insurer, FIRST, "<c1@clinic.example>"))
        assert first.startswith("2.0.0 Ok: sanitized"), first
        first_id = first.split(" as ")[1]
        _r, later = await send(gw.port, clinic, [insurer], _mail(clinic, insurer, LATER, "<c2@clinic.example>"))
        assert later.startswith("2.0.0 Ok: sanitized"), later
        later_id = later.split(" as ")[1]
        assert "virus" not in _body(up.messages[1].data) and "test came back positive" in _body(up.messages[1].data)
        (decision,) = gw.store.audit(AuditQuery(message_id=later_id, kind="decision"))
        assert decision.term == "virus" and decision.reason == "stream"
        assert decision.earlier == (first_id,) and set(decision.group or ()) == {"virus", "patient"}
        # Earlier messages are never changed: the first went out as it was sanitized alone.
        assert "patient" in _body(up.messages[0].data)

        # Another recipient saw nothing of the stream: the same text is harmless to them.
        _r, other = await send(gw.port, clinic, ["billing@else.example"],
                               _mail(clinic, "billing@else.example", LATER, "<c3@clinic.example>"))  # fmt: skip
        assert other.startswith("2.0.0 Ok: clean"), other
        assert "virus test" in _body(up.messages[2].data)

        # A colleague replying in the thread to the same recipient joins its memory.
        nurse = "nurse@clinic.example"
        in_thread = _mail(nurse, insurer, LATER, "<c4@clinic.example>", refs="<c1@clinic.example>")
        _r, reply = await send(gw.port, nurse, [insurer], in_thread)
        assert reply.startswith("2.0.0 Ok: sanitized"), reply
        (d,) = gw.store.audit(AuditQuery(message_id=reply.split(" as ")[1], kind="decision"))
        assert d.earlier[0] == first_id
        # ...but a message of the nurse's own, outside the thread, does not.
        _r, own = await send(gw.port, nurse, [insurer], _mail(nurse, insurer, LATER, "<c5@clinic.example>"))
        assert own.startswith("2.0.0 Ok: clean"), own

    _run(tmp_path, engine, 30, scenario)


def test_no_memory_when_it_is_off(tmp_path: Path, engine: Engine) -> None:
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        clinic, insurer = "gp@clinic.example", "claims@insurer.example"
        await send(gw.port, clinic, [insurer], _mail(clinic, insurer, FIRST, "<c1@clinic.example>"))
        _r, later = await send(gw.port, clinic, [insurer], _mail(clinic, insurer, LATER, "<c2@clinic.example>"))
        assert later.startswith("2.0.0 Ok: clean"), later
        assert gw.store.streams(since=0) == []

    _run(tmp_path, engine, 0, scenario)


def test_concurrent_messages_of_a_sender_are_judged_in_order(tmp_path: Path, engine: Engine) -> None:
    # The first message is slow to sanitize; the second arrives meanwhile. It must be judged against the
    # first before it leaves (it waits for the first's turn, then reads the memory the first left).
    slow_first = FIRST + "\r\n" + "The clinic called again about the counselling.\r\n" * 1500

    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        judged: list[bytes] = []
        judge = gw.handler.judge

        async def counting(data: bytes, *args: Any, **kwargs: Any) -> JobResult:
            judged.append(data)
            return await judge(data, *args, **kwargs)

        gw.handler.judge = counting  # type: ignore[method-assign]
        clinic, insurer = "gp@clinic.example", "claims@insurer.example"
        first = asyncio.create_task(send(gw.port, clinic, [insurer], _mail(clinic, insurer, slow_first, "<s1@c>")))
        while gw.handler.in_flight == 0:  # noqa: ASYNC110 - the server under test has no event to offer
            await asyncio.sleep(0.001)
        _r, later = await send(gw.port, clinic, [insurer], _mail(clinic, insurer, LATER, "<s2@c>"))
        _r, before = await first
        assert later.startswith("2.0.0 Ok: sanitized"), later
        (d,) = gw.store.audit(AuditQuery(message_id=later.split(" as ")[1], kind="decision"))
        assert d.reason == "stream" and d.earlier == (before.split(" as ")[1],)
        assert len(judged) == 2  # each sanitized once: the second not first against a memory about to change

    _run(tmp_path, engine, 30, scenario)


def test_a_message_reads_its_streams_rows_again_only_when_a_row_joined_it(tmp_path: Path, engine: Engine) -> None:
    # Before sending, the front asks whether the stream changed while the message was judged (a count and sums
    # in the database); only then are its rows listed and matched again.
    async def scenario(gw: Gateway, up: CaptureHandler) -> None:
        listed: list[str] = []
        recall = gw.store.recall
        judge = gw.handler.judge
        joined = asyncio.Event()

        def counting(query: Any) -> Any:
            listed.append(query.sender)
            return recall(query)

        async def meanwhile(data: bytes, *args: Any, **kwargs: Any) -> JobResult:
            result = await judge(data, *args, **kwargs)
            if b"<m2@clinic>" in data and not joined.is_set():  # another gateway of the fleet remembers meanwhile
                joined.set()
                await asyncio.to_thread(gw.store.remember, message_id="elsewhere", sender="doc@clinic.example",
                                        recipients=["ins@payer.example"], disclosed={"medical": ["dose"]})  # fmt: skip
            return result

        gw.store.recall = counting  # type: ignore[method-assign]
        gw.handler.judge = meanwhile  # type: ignore[method-assign]
        await send(gw.port, "doc@clinic.example", ["ins@payer.example"],
                   _mail("doc@clinic.example", "ins@payer.example", FIRST, "<m1@clinic>"))  # fmt: skip
        assert len(listed) == 1  # nothing joined the stream while it was judged
        _r, reply = await send(gw.port, "doc@clinic.example", ["ins@payer.example"],
                               _mail("doc@clinic.example", "ins@payer.example", LATER, "<m2@clinic>"))  # fmt: skip
        assert len(listed) == 3 and reply.startswith("2.0.0 Ok")  # a row joined: read again before sending

    _run(tmp_path, engine, 30, scenario)
