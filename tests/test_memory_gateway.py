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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import aiosmtplib
import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session
from gatewaykit import CaptureHandler, config_for, send, start_capture

from gateway import streams
from gateway.config import Config
from gateway.model.engine import Engine
from gateway.model.memory import Disclosure, Memory
from gateway.serve import Gateway
from gateway.smtp import _SenderOrder
from gateway.store.base import AuditQuery, StreamQuery
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


@dataclass
class _GatedUpstream(CaptureHandler):
    """An upstream that holds a message's DATA (found by a marker in it) until the test opens its gate, then
    accepts it, or refuses it when the marker is in ``refuse_data``."""

    gates: dict[bytes, asyncio.Event] = field(default_factory=dict)
    refuse_data: set[bytes] = field(default_factory=set)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        data = envelope.original_content or b""
        for marker, gate in self.gates.items():
            if marker in data:
                await gate.wait()
                if marker in self.refuse_data:
                    return "554 5.6.0 refused after the gateway judged the next message"
        return await super().handle_DATA(server, session, envelope)


def _run_gated(tmp_path: Path, engine: Engine, scenario: object, store_url: str | None = None) -> None:
    async def main() -> None:
        up = _GatedUpstream()
        server, port = await start_capture(up)
        config = _config(tmp_path, port, 30)
        # The gate holds a message at the upstream for as long as the scenario needs: no timeout of the relay's
        # may decide the test.
        config = replace(config, upstream=replace(config.upstream, timeout=120.0),
                         store=replace(config.store, url=store_url))  # fmt: skip
        gw = Gateway(config=config, engine_in_process=engine)
        await gw.start()
        try:
            await scenario(gw, up)  # type: ignore[operator]
        finally:
            for gate in up.gates.values():
                gate.set()
            await gw.stop()
            server.close()
            await server.wait_closed()

    asyncio.run(main())


def _judging(gw: Gateway, marker: bytes, judged: list[frozenset[str]], then: asyncio.Event) -> None:
    """Record the memory each judgement of the message with ``marker`` is given (its terms); set ``then`` after
    the first."""
    judge = gw.handler.judge

    async def recording(data: bytes, policies: Any, message_id: str, config: Any, memory: Any = None,
                        **kwargs: Any) -> JobResult:  # fmt: skip
        result = await judge(data, policies, message_id, config, memory, **kwargs)
        if marker in data:
            judged.append(frozenset(memory["medical"].first) if memory else frozenset())
            then.set()
        return result

    gw.handler.judge = recording  # type: ignore[method-assign]


async def _started(gw: Gateway, port: int, sender: str, to: str, data: bytes) -> asyncio.Task[tuple[Any, str]]:
    """Send ``data`` in the background; return once the gateway holds it (in flight)."""
    before = gw.handler.in_flight
    task = asyncio.create_task(_reply_of(port, sender, to, data))
    while gw.handler.in_flight == before:  # noqa: ASYNC110 - the server under test has no event to offer
        await asyncio.sleep(0.001)
    return task


async def _reply_of(port: int, sender: str, to: str, data: bytes) -> tuple[Any, str]:
    try:
        return await send(port, sender, [to], data)
    except aiosmtplib.SMTPResponseException as exc:
        return {}, f"{exc.code} {exc.message}"
    except aiosmtplib.SMTPException as exc:  # a client's timeout: the test fails on the reply, not here
        return {}, f"{type(exc).__name__}: {exc}"


def test_the_next_message_is_judged_while_its_predecessor_is_at_the_upstream(tmp_path: Path, engine: Engine) -> None:
    # The chain of a sender's messages: the second needs only the first's judgement (what it will disclose),
    # not its send. The upstream holds the first until the second is judged; before, the second waited for
    # the first to be sent, and the two waited on each other until the relay's timeout.
    async def scenario(gw: Gateway, up: _GatedUpstream) -> None:
        clinic, insurer = "gp@clinic.example", "claims@insurer.example"
        judged: list[frozenset[str]] = []
        up.gates[b"<g1@c>"] = gate = asyncio.Event()
        _judging(gw, b"<g2@c>", judged, gate)
        listed: list[StreamQuery] = []
        recall = gw.store.recall
        gw.store.recall = lambda query: listed.append(query) or recall(query)  # type: ignore[method-assign]
        first = await _started(gw, gw.port, clinic, insurer, _mail(clinic, insurer, FIRST, "<g1@c>"))
        _r, later = await _reply_of(gw.port, clinic, insurer, _mail(clinic, insurer, LATER, "<g2@c>"))
        _r, before = await first
        assert before.startswith("2.0.0 Ok: sanitized") and later.startswith("2.0.0 Ok: sanitized"), (before, later)
        assert len(judged) == 1 and "patient" in judged[0]  # judged once, against the first's reservation
        # In its turn the stream had changed by the first's rows alone, as reserved: its rows were not read again.
        assert len(listed) == 2
        (d,) = gw.store.audit(AuditQuery(message_id=later.split(" as ")[1], kind="decision"))
        assert d.reason == "stream" and d.earlier == (before.split(" as ")[1],)
        assert [b"<g1@c>" in m.data for m in up.messages] == [True, False]  # still sent in the order they came
        assert "virus" not in _body(up.messages[1].data)

    _run_gated(tmp_path, engine, scenario)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_reservation_whose_message_is_refused_upstream_counts_no_more(
    tmp_path: Path, engine: Engine, backend: str, request: pytest.FixtureRequest
) -> None:
    # The first message is judged and reserved; the second is judged against that reservation (stricter than
    # the store alone); then the upstream refuses the first. In its turn the second finds the store without
    # the first's row and is judged again, as if the first had never been: never laxer meanwhile, and at the
    # end exactly as strict as what was really sent before it.
    url = None
    if backend == "postgresql":
        from gateway.store.postgres import PostgresStore

        url = request.getfixturevalue("postgres").new()
        upgrader = PostgresStore(url, check_schema=False)
        upgrader.upgrade()
        upgrader.close()

    async def scenario(gw: Gateway, up: _GatedUpstream) -> None:
        clinic, insurer = "gp@clinic.example", "claims@insurer.example"
        judged: list[frozenset[str]] = []
        up.gates[b"<f1@c>"] = gate = asyncio.Event()
        up.refuse_data.add(b"<f1@c>")
        _judging(gw, b"<f2@c>", judged, gate)
        first = await _started(gw, gw.port, clinic, insurer, _mail(clinic, insurer, FIRST, "<f1@c>"))
        _r, later = await _reply_of(gw.port, clinic, insurer, _mail(clinic, insurer, LATER, "<f2@c>"))
        _r, refused = await first
        assert refused.startswith("554"), refused
        assert later.startswith("2.0.0 Ok: clean"), later  # what it is alone: the first was never sent
        assert len(judged) == 2 and "patient" in judged[0] and "patient" not in judged[1]
        assert judged[1] <= judged[0]  # the first judgement was the stricter one
        assert [b"<f2@c>" in m.data for m in up.messages] == [True] and "virus test" in _body(up.messages[0].data)
        later_id = later.split(" as ")[1]
        assert gw.store.audit(AuditQuery(message_id=later_id, kind="decision")) == []
        rows = gw.store.recall(StreamQuery(policies=("medical",), sender=clinic, recipients=(insurer,)))
        assert {d.message_id for d in rows} <= {later_id}  # nothing of the refused message is remembered

    _run_gated(tmp_path, engine, scenario, url)


def test_a_turn_reads_the_reservations_of_its_senders_messages_still_on_their_way() -> None:
    def rows(message_id: str, *terms: str) -> tuple[Disclosure, ...]:
        return streams.reservation(message_id=message_id, sender="GP@clinic.example", recipients=["claims@ins"],
                                   thread=streams.Thread("", ""), disclosed={"medical": list(terms)})  # fmt: skip

    async def main() -> None:
        order = _SenderOrder()
        gp = "gp@clinic.example"
        a, b, c = order.arrive(gp), order.arrive("GP@Clinic.example"), order.arrive(gp)
        other = order.arrive("nurse@clinic.example")
        waiting = asyncio.create_task(c.wait_judged())
        a.reserve(rows("a", "patient"))
        assert b.waited_on() and not waiting.done()
        b.reserve(rows("b", "condoms"))
        await waiting  # b is judged: c may be judged now, with a's and b's reservations, oldest first
        assert not b.waited_on()
        assert [d.message_id for d in c.ahead().rows] == ["a", "b"] and other.ahead().rows == ()
        a.leave()  # a is sent (and remembered): the store has it now
        assert [d.message_id for d in c.ahead().rows] == ["b"]
        b.reserve(())  # judged again after its turn, and held: it will disclose nothing
        assert c.ahead().rows == ()
        b.leave()
        # A message that gives up before it is judged discloses nothing: the next one goes on at once, and
        # still counts the reservation of the one before it that is not sent yet.
        c.reserve(rows("c", "virus"))
        d, e = order.arrive(gp), order.arrive(gp)
        d.leave()
        await e.wait_judged()
        assert [x.message_id for x in e.ahead().rows] == ["c"]
        c.leave()
        await e.wait()  # d leaves once c is done
        assert e.ahead().rows == () and not e.pending

    asyncio.run(main())


def test_a_message_knows_the_rows_its_reservations_became_only_when_each_became_them() -> None:
    # In its turn a message asks whether the stream changed by its predecessors' rows alone (Store.stream_version
    # leaving them out); that holds only if each was remembered with the reservation the message was judged with.
    def rows(message_id: str) -> tuple[Disclosure, ...]:
        return streams.reservation(message_id=message_id, sender="gp@c", recipients=["ins@x"],
                                   thread=streams.Thread("", ""), disclosed={"medical": ["patient"]})  # fmt: skip

    async def main() -> None:
        order = _SenderOrder()
        sent, held, last = order.arrive("gp@c"), order.arrive("gp@c"), order.arrive("gp@c")
        sent.reserve(rows("sent"))
        held.reserve(())
        ahead = last.ahead()
        sent.remembered([(7, 1.5), (8, 1.5)])
        sent.leave()
        held.leave()  # held: nothing counted, nothing kept
        assert ahead.remembered() == ((7, 1.5), (8, 1.5))
        last.leave()

        refused, judged_again, then = order.arrive("gp@c"), order.arrive("gp@c"), order.arrive("gp@c")
        refused.reserve(rows("refused"))
        assert then.ahead().remembered() is None  # still on its way
        refused.leave()  # refused upstream: never remembered
        judged_again.reserve(rows("judged_again"))
        ahead = then.ahead()
        assert ahead.remembered() is None
        judged_again.remembered([(9, 2.5)])
        assert then.ahead().remembered() == ((9, 2.5),)  # the refused one is done: only judged_again is ahead
        judged_again.reserve(rows("judged_again"))  # judged again in its turn (another time, other rows)
        judged_again.remembered([(10, 3.5)])
        assert ahead.remembered() is None and then.ahead().remembered() == ((10, 3.5),)

    asyncio.run(main())


def test_reservations_extend_a_memory_as_the_store_will_once_they_are_remembered() -> None:
    thread = streams.Thread("<t2@c>", "<t1@c>")

    def row(message_id: str, to: str, policy: str, root: str, *terms: str) -> Disclosure:
        (d,) = streams.reservation(message_id=message_id, sender="gp@c", recipients=[to], disclosed={policy: terms},
                                   thread=streams.Thread("", root), at=1.0)  # fmt: skip
        return d

    stored = [row("s1", "ins@x", "medical", "<o@c>", "patient", "dose"),
              row("s2", "ins@x", "medical", "<t1@c>", "dose")]  # fmt: skip
    reserved = (row("r1", "ins@x", "medical", "<t1@c>", "condoms", "patient"),
                row("r2", "else@x", "medical", "", "hiv"), row("r3", "INS@x", "medical", "<o@c>", "virus"),
                row("r4", "ins@x", "other", "", "leg"))  # fmt: skip
    memory = {"medical": Memory.of(stored, thread=thread.root)}
    extended = streams.ahead(memory, reserved, recipients=["ins@x"], thread=thread)
    # The store's fold of the same rows once remembered (a row per recipient and policy, the sender's own only).
    remembered = Memory.of([*stored, *(d for d in reserved if d.policy == "medical" and d.recipient == "ins@x")],
                           thread=thread.root)  # fmt: skip
    assert list(extended["medical"].first.items()) == list(remembered.first.items())  # the same terms, ids, order
    assert extended["medical"].first["condoms"] == "r1" and "hiv" not in extended["medical"].first
    assert streams.ahead(memory, (), recipients=["ins@x"], thread=thread) == memory
