"""The SMTP side: aiosmtpd hooks that orchestrate sanitizing, relaying and holding.

Reply semantics, in one place:
  * 250 only after the upstream accepted the sanitized message for every
    recipient it accepted at RCPT, or after the original is durably held;
  * a recipient the upstream refuses is refused with the upstream's reply;
  * upstream down, slow, or 4xx -> 451, so the sending MTA retries;
  * too many messages in flight, or as many upstream connections open -> 451 4.3.2
    (never an unbounded queue; the upstream is connected at the first RCPT, not at MAIL);
  * a policy refusal -> 554 5.7.1; oversize -> 552 (aiosmtpd's SIZE check);
  * anything unexpected -> hold the original if possible, else 451; the
    original is never forwarded.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from gateway import streams
from gateway.config import Config, PolicyConfig
from gateway.directory import Directory, DirectoryUnavailableError
from gateway.metrics import Metrics
from gateway.model.memory import Disclosure, Memory
from gateway.relay import Reply, Transaction, Upstream, UpstreamError
from gateway.slots import JobSlots
from gateway.store.base import Envelope as StoredEnvelope
from gateway.store.base import HoldCause, Store
from gateway.store.disclosures import RowKey
from gateway.worker import JobResult, sanitize_message

log = logging.getLogger("sanigate.smtp")
OUTCOME_PERIOD = 60.0  # seconds: the finest grain of the dashboard's outcome chart
TRACE_HEADER = "X-Sanigate"
XFORWARD_ATTRS = ("NAME", "ADDR", "PORT", "PROTO", "HELO", "IDENT", "SOURCE")


@dataclass(slots=True)
class _State:
    """What we keep per client session."""

    transaction: Transaction | None = None  # opened at the first RCPT, holding one of the upstream slots
    xforward: dict[str, str] = field(default_factory=dict)
    smtputf8: bool = False


class GatewaySMTP(SMTP):
    """aiosmtpd's server with XFORWARD, and upstream cleanup when a client vanishes."""

    # RFC 5321 says 1000, real mail says otherwise (HTML on one line); refusing
    # with 500 would bounce it. Postfix accepts long lines and breaks them too.
    line_length_limit = 64 * 1024

    async def smtp_XFORWARD(self, arg: str) -> None:
        if self.session is None or not self.session.host_name:
            await self.push("503 5.5.1 Error: send HELO/EHLO first")
            return
        state = self.event_handler.state(self.session)
        for item in arg.split():
            key, _, value = item.partition("=")
            if key.upper() in XFORWARD_ATTRS:
                state.xforward[key.upper()] = value
        await self.push("250 2.0.0 Ok")

    def connection_lost(self, error: Exception | None) -> None:
        handler = self.event_handler
        session = self.session
        super().connection_lost(error)
        if session is not None:
            handler.forget(session)


class SanitizingHandler:
    def __init__(
        self,
        *,
        config: Callable[[], Config],
        upstream: Callable[[], Upstream],
        store: Store,
        pool: Callable[[], Executor],
        metrics: Metrics,
        engine_in_process: Any = None,
        directory: Callable[[], Directory | None] = lambda: None,
    ) -> None:
        self._config = config
        self._directory = directory
        self._upstream = upstream
        self._store = store
        self._pool = pool
        self._metrics = metrics
        self._engine = engine_in_process  # tests may run the sanitizer in-process
        self._states: dict[int, _State] = {}
        self._order = _SenderOrder()
        self._outcomes: dict[tuple[float, str], int] = {}
        self._in_flight = 0
        self._upstreams = 0  # upstream connections open; at most max_in_flight
        self._store_thread = ThreadPoolExecutor(max_workers=2, thread_name_prefix="store")
        # One message at a time, as in a worker process: the engine keeps a text's state across its rounds
        # (the evidence's clues, the second order's signature), which a concurrent message would overwrite.
        self._engine_thread = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="sanitizer") if engine_in_process else None
        )
        self._folds = streams.Folds()  # each stream's memory, extended by its new rows between recalls
        self._slots = JobSlots(lambda: self._config().server.workers)  # the pool's jobs, a sender's chain first

    def _count(self, outcome: str) -> None:
        self._metrics.messages.labels(outcome=outcome).inc()
        period = time.time() // OUTCOME_PERIOD * OUTCOME_PERIOD
        self._outcomes[(period, outcome)] = self._outcomes.get((period, outcome), 0) + 1

    def take_outcomes(self) -> dict[tuple[float, str], int]:
        """Counts by (period, outcome) since the last call, for the store's dashboard table."""
        counts, self._outcomes = self._outcomes, {}
        return counts

    @property
    def in_flight(self) -> int:
        """Messages whose DATA has arrived and that are not answered yet."""
        return self._in_flight

    @property
    def upstream_connections(self) -> int:
        return self._upstreams

    # -- session bookkeeping -------------------------------------------------
    def state(self, session: Session) -> _State:
        return self._states.setdefault(id(session), _State())

    def forget(self, session: Session) -> None:
        state = self._states.pop(id(session), None)
        if state is not None and state.transaction is not None:
            self._upstreams -= 1
            asyncio.get_running_loop().create_task(state.transaction.close())

    async def _drop_transaction(self, session: Session) -> None:
        state = self.state(session)
        if state.transaction is not None:
            tx, state.transaction = state.transaction, None
            self._upstreams -= 1
            await tx.close()

    async def _open_upstream(self, session: Session, sender: str) -> str | None:
        """Open the upstream transaction for this session's message; an SMTP reply when it cannot be."""
        if self._upstreams >= self._config().server.max_in_flight:
            self._count("busy")
            return "451 4.3.2 Too busy, try again later"
        state = self.state(session)
        xforward = dict(state.xforward)
        if "ADDR" not in xforward and session.peer:
            xforward["ADDR"] = str(session.peer[0])
        self._upstreams += 1  # taken before the await, so concurrent sessions cannot overshoot the bound
        try:
            tx = await self._upstream().begin(sender, xforward=xforward, smtputf8=state.smtputf8)
        except UpstreamError as exc:
            self._upstreams -= 1
            self._count("upstream-error")
            log.warning("MAIL from %s: %s", sender, exc.message)
            return exc.smtp_reply
        except BaseException:
            self._upstreams -= 1
            raise
        if self._states.get(id(session)) is not state:  # the client left while we connected
            self._upstreams -= 1
            await tx.close()
            return "421 4.4.2 Connection closed"
        state.transaction = tx
        return None

    # -- hooks --------------------------------------------------------------------
    async def handle_EHLO(self, server: SMTP, session: Session, envelope: Envelope, hostname: str,
                          responses: list[str]) -> list[str]:  # fmt: skip
        session.host_name = hostname
        await self._drop_transaction(session)
        last = responses[-1].replace("250 ", "250-", 1)
        extra = ["250-XFORWARD " + " ".join(XFORWARD_ATTRS)]
        if not any("PIPELINING" in r for r in responses):
            extra.append("250-PIPELINING")
        return [*responses[:-1], last, *extra[:-1], extra[-1].replace("250-", "250 ", 1)]

    async def handle_RSET(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        await self._drop_transaction(session)
        return "250 OK"

    async def handle_QUIT(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        await self._drop_transaction(session)
        return "221 Bye"

    async def handle_MAIL(self, server: SMTP, session: Session, envelope: Envelope, address: str,
                          mail_options: list[str]) -> str:  # fmt: skip
        if self._in_flight >= self._config().server.max_in_flight:
            self._count("busy")
            return "451 4.3.2 Too busy, try again later"
        await self._drop_transaction(session)
        # No upstream connection yet: an idle client after MAIL costs the relay nothing.
        self.state(session).smtputf8 = any(o.upper() == "SMTPUTF8" for o in mail_options)
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope, address: str,
                          rcpt_options: list[str]) -> str:  # fmt: skip
        if envelope.mail_from is None:
            return "503 5.5.1 Error: need MAIL command"
        if self.state(session).transaction is None:
            refused = await self._open_upstream(session, envelope.mail_from)
            if refused is not None:
                return refused
        tx = self.state(session).transaction
        assert tx is not None
        try:
            reply = await tx.rcpt(address)
        except UpstreamError as exc:
            await self._drop_transaction(session)
            return exc.smtp_reply
        if not reply.ok:
            return str(reply)  # the upstream's own refusal, for this recipient only
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        started = time.monotonic()
        message_id = uuid.uuid4().hex[:20]
        data = envelope.original_content or b""
        sender = envelope.mail_from or ""
        config = self._config()
        if self._in_flight >= config.server.max_in_flight:
            await self._drop_transaction(session)
            self._count("busy")
            return "451 4.3.2 Too busy, try again later"
        self._in_flight += 1
        self._metrics.in_flight.set(self._in_flight)
        turn = self._order.arrive(sender)
        try:
            reply = await self._deliver(session, envelope, message_id, data, config, turn)
        finally:
            turn.leave()
            self._in_flight -= 1
            self._metrics.in_flight.set(self._in_flight)
            await self._drop_transaction(session)
            self._metrics.latency.observe(time.monotonic() - started)
        log.info("message %s from %s to %s: %s", message_id, sender, ",".join(envelope.rcpt_tos), reply)
        return reply

    # -- the work -----------------------------------------------------------------
    async def _deliver(self, session: Session, envelope: Envelope, message_id: str, data: bytes,
                       config: Config, turn: _Turn) -> str:  # fmt: skip
        sender = envelope.mail_from or ""
        try:
            policies = await self.policies_for(sender, config)
        except DirectoryUnavailableError as exc:
            self._count("tempfail")
            log.warning("message %s from %s: %s", message_id, sender, exc.message)
            return "451 4.4.3 The sender's directory groups cannot be looked up now, try again later"
        names = [p.name for p in policies]
        stored_env = StoredEnvelope(
            sender=sender, recipients=tuple(envelope.rcpt_tos),
            client_address=self.state(session).xforward.get("ADDR", str(session.peer[0]) if session.peer else ""),
            client_name=self.state(session).xforward.get("NAME", ""), helo=session.host_name or "",
        )  # fmt: skip
        thread = streams.thread_for(data, policies)
        remembers = bool(streams.remembering(policies))
        if turn.pending and remembers:
            # What the sender's earlier message discloses is this one's memory: sanitized now, against the
            # memory as it is, it would be sanitized again in its turn (183 of 400 archive messages were).
            # Once it is judged, what it will disclose is known (its reservation): no need to wait for its send.
            await turn.wait_judged()
        # Taken before the recall: a message remembered meanwhile is then in both, never in neither.
        ahead = turn.ahead() if remembers else _Ahead(())
        try:
            stored, version = await self._recall_versioned(policies, sender, envelope.rcpt_tos, thread)
        except Exception:
            log.exception("message %s: the stream memory cannot be read", message_id)
            self._count("tempfail")
            return "451 4.3.0 Stream memory unavailable, try again later"
        memory = streams.ahead(stored, ahead.rows, recipients=envelope.rcpt_tos, thread=thread)
        result = await self.judge(data, policies, message_id, config, memory, urgent=turn.waited_on)
        turn.reserve(self._reservation(message_id, sender, envelope.rcpt_tos, thread, result) if remembers else ())
        await turn.wait()  # sanitized in parallel, but sent (or held) in the order it arrived
        if memory and result.verdict == "forward":
            # The sender's earlier messages are all sent (or failed) now: judge against what they really disclosed,
            # the store's rows (a reservation whose message was not sent counts no more).
            try:
                now = await self._recall_if_changed(policies, sender, envelope.rcpt_tos, thread, version, stored,
                                                    memory, ahead.remembered())  # fmt: skip
            except Exception:
                log.exception("message %s: the stream memory cannot be read", message_id)
                self._count("tempfail")
                return "451 4.3.0 Stream memory unavailable, try again later"
            # Only the terms reach the engine: the same terms, the same decisions.
            if any(now[n] is not m and now[n].first.keys() != m.first.keys() for n, m in memory.items()):
                result = await self.judge(data, policies, message_id, config, now, urgent=turn.waited_on)
                turn.reserve(self._reservation(message_id, sender, envelope.rcpt_tos, thread, result))
        self.count_decisions(result)
        if result.verdict == "reject":
            self._count("rejected")
            return f"554 5.7.1 Message refused by policy ({result.reason})"
        if result.verdict == "tempfail":
            self._count("tempfail")
            return f"451 4.7.0 Message cannot be sanitized now ({result.reason}), try again later"
        if result.verdict == "hold" or result.data is None:
            return await self._hold(message_id, stored_env, names, data, result)
        out = self._trace(result, message_id, names, session, config) + result.data
        tx = self.state(session).transaction
        if tx is None:
            return "451 4.4.1 Upstream transaction lost, try again later"
        try:
            reply = await tx.data(out)
        except UpstreamError as exc:
            self._count("upstream-error")
            return f"451 {exc.smtp_status if exc.smtp_code < 500 else '4.4.2'} {exc.message}"
        if not reply.ok:
            self._count("upstream-refused")
            return _mirror(reply)
        outcome = "sanitized" if result.decisions else "clean"
        self._count(outcome)
        try:  # still in this sender's turn: the next message recalls it
            turn.remembered(await self.remember(message_id, sender, envelope.rcpt_tos, thread, result))
        except Exception:
            log.exception("message %s delivered but what it disclosed could not be remembered", message_id)
        # The sender's next message needs this one sent and remembered, not its audit record written.
        turn.leave()
        if result.decisions:
            try:
                await self._store_call(
                    self._store.save, message_id=message_id, envelope=stored_env, status="forwarded",
                    reason=result.reason, policies=names, original=data, sanitized=result.data,
                    decisions=result.decisions, utility=result.utility,
                )  # fmt: skip
            except Exception:
                # Delivered already: a retry would deliver twice. Say it loudly instead.
                log.exception("message %s delivered but its audit record could not be stored", message_id)
        return f"250 2.0.0 Ok: {outcome} as {message_id}"

    async def policies_for(self, sender: str, config: Config) -> list[PolicyConfig]:
        """The sender's policies; when a rule names a directory group, after asking the directory (in a thread)."""
        directory = self._directory()
        if not config.uses_groups or directory is None:
            return config.policies_for(sender)
        groups = await asyncio.to_thread(directory.groups_of, sender)
        return config.policies_for(sender, groups)

    async def _hold(self, message_id: str, env: StoredEnvelope, names: list[str], data: bytes,
                    result: JobResult) -> str:  # fmt: skip
        try:
            await self._store_call(
                self._store.save, message_id=message_id, envelope=env, status="held", reason=result.reason,
                policies=names, original=data, sanitized=None, decisions=result.decisions, cause=result.cause,
            )  # fmt: skip
        except Exception:
            log.exception("message %s could not be held", message_id)
            self._count("tempfail")
            return "451 4.3.0 Message could not be held for review, try again later"
        self._count("held")
        return f"250 2.0.0 Ok: held for review as {message_id} ({result.reason})"

    async def recall(self, policies: list[PolicyConfig], sender: str, recipients: list[str],
                     thread: streams.Thread) -> dict[str, Memory]:  # fmt: skip
        """What the message's streams disclosed before, for each policy that remembers (from the store's thread)."""
        if not streams.remembering(policies):
            return {}
        found: dict[str, Memory] = await self._store_call(
            streams.recall, store=self._store, policies=policies, sender=sender, recipients=tuple(recipients),
            thread=thread, folds=self._folds,
        )  # fmt: skip
        return found

    async def _recall_versioned(self, policies: list[PolicyConfig], sender: str, recipients: list[str],
                                thread: streams.Thread) -> tuple[dict[str, Memory], tuple[object, ...]]:  # fmt: skip
        """``recall``, with the stream's version read just before (a row added meanwhile moves the version)."""
        if not streams.remembering(policies):
            return {}, ()

        def both() -> tuple[dict[str, Memory], tuple[object, ...]]:
            version = streams.version(self._store, policies, sender=sender, recipients=recipients, thread=thread)
            return streams.recall(self._store, policies, sender=sender, recipients=tuple(recipients), thread=thread,
                                  folds=self._folds), version  # fmt: skip

        found: tuple[dict[str, Memory], tuple[object, ...]] = await self._store_call(both)
        return found

    async def _recall_if_changed(self, policies: list[PolicyConfig], sender: str, recipients: list[str],
                                 thread: streams.Thread, version: tuple[object, ...], memory: dict[str, Memory],
                                 judged: dict[str, Memory] | None = None,
                                 ahead: tuple[RowKey, ...] | None = None) -> dict[str, Memory]:  # fmt: skip
        """The memory again, read only when a row joined or left the stream since ``version``: a busy stream's
        hundreds of rows listed and matched for every message were a fifth of the front's CPU.

        ``memory`` is what the stream held at ``version``; ``judged`` that, extended by the reservations of
        messages then on their way, and ``ahead`` the rows those messages were remembered with, when each
        was remembered with the reservation counted (else None). Then a stream that changed by those rows
        alone holds ``judged``, and its rows are not read again either."""

        def now(leaving_out: tuple[RowKey, ...] = ()) -> tuple[object, ...]:
            return streams.version(self._store, policies, sender=sender, recipients=recipients, thread=thread,
                                   leaving_out=leaving_out)  # fmt: skip

        def again() -> dict[str, Memory]:
            if judged is not None and ahead is not None and now(ahead) == version:
                return judged
            if not ahead and now() == version:
                return memory
            return streams.recall(self._store, policies, sender=sender, recipients=tuple(recipients), thread=thread,
                                  folds=self._folds)  # fmt: skip

        found: dict[str, Memory] = await self._store_call(again)
        return found

    @staticmethod
    def _reservation(message_id: str, sender: str, recipients: list[str], thread: streams.Thread,
                     result: JobResult) -> tuple[Disclosure, ...]:  # fmt: skip
        """What a judged message will be remembered with, if it is sent (nothing unless it is to be forwarded)."""
        if result.verdict != "forward" or result.data is None:
            return ()
        return streams.reservation(message_id=message_id, sender=sender, recipients=recipients, thread=thread,
                                   disclosed=result.disclosed)  # fmt: skip

    async def remember(self, message_id: str, sender: str, recipients: list[str], thread: streams.Thread,
                       result: JobResult) -> list[RowKey]:  # fmt: skip
        """Keep what a delivered message let through; call it before the sender's next message may go. The rows'
        (id, at)."""
        if not result.disclosed:
            return []
        keys: list[RowKey] = await self._store_call(
            streams.remember, store=self._store, message_id=message_id, sender=sender, recipients=tuple(recipients),
            thread=thread, disclosed=result.disclosed,
        )  # fmt: skip
        return keys

    async def judge(self, data: bytes, policies: list[PolicyConfig], message_id: str, config: Config,
                    memory: dict[str, Memory] | None = None, *,
                    urgent: Callable[[], bool] = lambda: False) -> JobResult:  # fmt: skip
        """Sanitize in the pool; a timeout, a dead worker or a bug is a hold, never an exception.

        ``urgent``: is another message waiting on this one (JobSlots: it goes to the pool first)?
        """
        try:
            return await self._run(data, policies, message_id, config, memory, urgent)
        except (TimeoutError, BrokenProcessPool) as exc:
            why = "timeout" if isinstance(exc, asyncio.TimeoutError) else "sanitizer-crashed"
            detail = (f"not sanitized within process_timeout ({config.server.process_timeout:g} s)" if why == "timeout"
                      else "the sanitizer process died on this message")  # fmt: skip
            return JobResult("hold", None, why, (), cause=HoldCause(detail=detail))
        except Exception as exc:
            log.exception("message %s: internal error", message_id)
            return JobResult("hold", None, "internal-error", (), cause=HoldCause(detail=type(exc).__name__))

    def record(self, outcome: str) -> None:
        """Count a message's outcome (metrics and the dashboard)."""
        self._count(outcome)

    async def save(self, **record: Any) -> None:
        """Store a message (``Store.save``'s arguments) from the store's thread."""
        await self._store_call(self._store.save, **record)

    @contextlib.contextmanager
    def in_progress(self) -> Iterator[bool]:
        """Count a message as in flight; yields False when max_in_flight are already."""
        if self._in_flight >= self._config().server.max_in_flight:
            yield False
            return
        self._in_flight += 1
        self._metrics.in_flight.set(self._in_flight)
        try:
            yield True
        finally:
            self._in_flight -= 1
            self._metrics.in_flight.set(self._in_flight)

    def count_decisions(self, result: JobResult) -> None:
        for d in result.decisions:
            self._metrics.decisions.labels(entity=d.entity or "-", action=d.action).inc()

    async def _run(self, data: bytes, policies: list[Any], message_id: str, config: Config,
                   memory: dict[str, Memory] | None = None,
                   urgent: Callable[[], bool] = lambda: False) -> JobResult:  # fmt: skip
        loop = asyncio.get_running_loop()
        if self._engine is not None:
            job = loop.run_in_executor(
                self._engine_thread, sanitize_message, data, policies, message_id, self._engine, memory
            )
            return await asyncio.wait_for(job, config.server.process_timeout)

        async def in_pool() -> JobResult:
            async with self._slots.slot(urgent):
                return await loop.run_in_executor(self._pool(), sanitize_message, data, policies, message_id, None,
                                                  memory)  # fmt: skip

        # The wait for a slot counts, as the wait in the pool's queue did.
        return await asyncio.wait_for(in_pool(), config.server.process_timeout)

    async def _store_call(self, fn: Callable[..., Any], **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._store_thread, lambda: fn(**kwargs))

    def _trace(self, result: JobResult, message_id: str, names: list[str], session: Session, config: Config) -> bytes:
        peer = session.peer[0] if session.peer else "unknown"
        received = (
            f"Received: from {session.host_name or 'unknown'} ([{peer}])\r\n"
            f"\tby {config.server.hostname} (sanigate) with ESMTP id {message_id};\r\n"
            f"\t{email.utils.formatdate(localtime=False)}\r\n"
        )
        return (received + f"{TRACE_HEADER}:{trace_value(result, message_id, names)}\r\n").encode("ascii", "replace")

    def close(self) -> None:
        self._store_thread.shutdown(wait=True)
        if self._engine_thread is not None:
            self._engine_thread.shutdown(wait=True)


class _SenderOrder:
    """One sender's messages leave in the order they arrived; other senders do not wait.

    Only the delivery takes turns: the sanitizing of a sender's messages runs
    in parallel (one list address can be half of all traffic), and each
    message then waits for the one that arrived before it to be sent or held.
    Under a policy that remembers, a message whose predecessor is still on its
    way waits first for the predecessor to be judged: its memory is what the
    predecessor will disclose (its reservation, ``_Turn.reserve``), which is
    known from then on. The predecessor's upstream DATA and the write of its
    memory then overlap the next message's judging, instead of lengthening
    each link of the chain; if the predecessor is not sent after all, the next
    message finds its memory changed in its turn and is judged again.
    """

    def __init__(self) -> None:
        self._last: dict[str, _Turn] = {}

    def arrive(self, sender: str) -> _Turn:
        key = sender.lower()
        turn = _Turn(self._last, key, self._last.get(key))
        self._last[key] = turn
        return turn


class _Turn:
    def __init__(self, last: dict[str, _Turn], key: str, previous: _Turn | None) -> None:
        loop = asyncio.get_running_loop()
        self._last = last
        self._key = key
        self._previous = previous  # dropped once this turn is done: a busy sender's turns must not form a list
        self._done: asyncio.Future[None] = loop.create_future()  # sent, held or given up
        self._judged: asyncio.Future[None] = loop.create_future()  # its reservation is known
        self._reserved: tuple[Disclosure, ...] = ()
        self._kept: tuple[tuple[Disclosure, ...], tuple[RowKey, ...]] | None = None  # a reservation, as remembered

    def waited_on(self) -> bool:
        """Has a later message of the same sender arrived, that waits for this one to be judged?"""
        return self._last.get(self._key) is not self and not self._judged.done()

    @property
    def pending(self) -> bool:
        """Is an earlier message of the same sender still on its way (neither sent nor held yet)?"""
        return self._previous is not None and not self._previous._done.done()

    async def wait(self) -> None:
        if self._previous is not None:
            await asyncio.shield(self._previous._done)

    async def wait_judged(self) -> None:
        """Until the previous message is judged (its reservation made) or done."""
        previous = self._previous
        if previous is not None and not previous._done.done():
            await asyncio.wait((previous._judged, previous._done), return_when=asyncio.FIRST_COMPLETED)

    def reserve(self, rows: tuple[Disclosure, ...]) -> None:
        """What this message will disclose if it is sent, for the sender's later messages to be judged against."""
        self._reserved = rows
        if not self._judged.done():
            self._judged.set_result(None)

    def remembered(self, keys: Sequence[RowKey]) -> None:
        """This message was sent and its reservation written to the store as the rows ``keys``."""
        self._kept = (self._reserved, tuple(keys))

    def ahead(self) -> _Ahead:
        """The reservations of the sender's earlier messages still on their way, oldest first (a message done
        is in the store's memory if it was sent, and its predecessors were done before it)."""
        turns: list[tuple[_Turn, tuple[Disclosure, ...]]] = []
        turn = self._previous
        while turn is not None and not turn._done.done():
            turns.append((turn, turn._reserved))
            turn = turn._previous
        return _Ahead(tuple(reversed(turns)))

    def leave(self) -> None:
        """Let the next message go; if this one gave up before its turn, only once its predecessor is done."""
        if not self._judged.done():
            self._judged.set_result(None)  # given up before its reservation: it discloses nothing
        if self._previous is None or self._previous._done.done():
            self._finish()
        else:
            self._previous._done.add_done_callback(lambda _f: self._finish())

    def _finish(self) -> None:
        if not self._done.done():
            self._done.set_result(None)
        self._previous = None
        if self._last.get(self._key) is self:
            del self._last[self._key]


@dataclass(frozen=True, slots=True)
class _Ahead:
    """The reservations a message was judged with: each earlier message still on its way, and what it reserved."""

    turns: tuple[tuple[_Turn, tuple[Disclosure, ...]], ...]

    @property
    def rows(self) -> tuple[Disclosure, ...]:
        return tuple(d for _turn, reserved in self.turns for d in reserved)

    def remembered(self) -> tuple[RowKey, ...] | None:
        """The store's rows of those reservations, when each message that reserved anything was sent and remembered
        with the reservation counted here (not one it was judged again to); else None. Call it once they are done."""
        keys: list[RowKey] = []
        for turn, reserved in self.turns:
            if turn._kept is None:
                if reserved:
                    return None  # not sent, or not remembered: the store lacks what was counted
                continue  # nothing counted, nothing remembered (held, refused, or sent with nothing to keep)
            if turn._kept[0] != reserved:
                return None
            keys.extend(turn._kept[1])
        return tuple(keys)


def trace_value(result: JobResult, message_id: str, names: list[str]) -> str:
    """The X-Sanigate header's value (after the colon), the same from the SMTP and the milter front ends."""
    status = "held" if result.verdict == "hold" else "sanitized" if result.decisions else "clean"
    return f" status={status}; policies={','.join(names) or '-'}; changes={result.changes}; id={message_id}"


def _mirror(reply: Reply) -> str:
    if 400 <= reply.code < 500 or reply.code >= 600 or reply.code < 400:
        return f"451 4.4.0 Upstream answered: {reply}"
    return str(reply)
