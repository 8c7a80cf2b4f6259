"""``sanigate quarantine``: what an administrator does with stored messages, from a shell."""

from __future__ import annotations

import argparse
import asyncio
import difflib
import email
import email.policy
import getpass
import os
import re
import time
from datetime import UTC, datetime

from gateway.config import Config, load_config
from gateway.errors import InputError, SanigateError
from gateway.relay import UpstreamError, make_upstream
from gateway.store import open_store
from gateway.store.base import AuditQuery, HoldCause, MessageQuery, Store


def _actor(by: str | None) -> str:
    return by or os.environ.get("SUDO_USER") or getpass.getuser()


def _age(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([dhm])", text.strip())
    if not m:
        raise InputError(f"--older-than takes an age like 30d, 12h or 90m, not {text!r}")
    return float(m.group(1)) * {"d": 86400, "h": 3600, "m": 60}[m.group(2)]


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _text(data: bytes) -> list[str]:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    lines = [f"{k}: {v}" for k, v in msg.items() if k.lower() in ("from", "to", "cc", "subject")]
    for part in msg.walk():
        if part.get_content_maintype() == "text":
            try:
                lines.extend(["", f"--- {part.get_content_type()}", *str(part.get_content()).splitlines()])
            except (LookupError, UnicodeError, AttributeError):
                lines.append(f"--- {part.get_content_type()} (undecodable)")
    return lines


async def release(config: Config, store: Store, message_id: str, *, original: bool, actor: str, why: str) -> str:
    """Send a stored message on through the relay, once; held or forwarded messages only.

    Asynchronous all through: the store's calls run in a thread, the relay is spoken to on the caller's loop,
    so the admin awaits it in its own loop and the CLI runs it with ``asyncio.run``.
    """
    stored = await asyncio.to_thread(store.get, message_id)
    if stored is None:
        raise InputError(f"no stored message {message_id}")
    if original and not why.strip():
        raise InputError("releasing the original needs a reason: --why '...'")
    orig, sanitized = await asyncio.to_thread(store.content, message_id)
    data = orig if original else sanitized
    if data is None:
        raise InputError(f"message {message_id} has no sanitized version ({stored.reason}); use --original")
    what = "original" if original else "sanitized"
    moved = await asyncio.to_thread(
        store.transition, message_id, to="released", allowed_from=("held", "forwarded"), actor=actor,
        why=f"release {what}: {why}".strip(),
    )  # fmt: skip
    if not moved:
        now = await asyncio.to_thread(store.get, message_id)
        raise InputError(f"message {message_id} is {now.status if now else 'gone'}: not released again")
    try:
        tx = await make_upstream(config).begin(stored.envelope.sender, xforward={}, smtputf8=False)
        try:
            accepted = [r for r in stored.envelope.recipients if (await tx.rcpt(r)).ok]
            if not accepted:
                raise UpstreamError("the relay refused every recipient")
            reply = await tx.data(data)
            if not reply.ok:
                raise UpstreamError(f"the relay refused the message: {reply}")
        finally:
            await tx.close()
    except SanigateError as exc:
        await asyncio.to_thread(
            store.transition, message_id, to=stored.status, allowed_from=("released",), actor=actor,
            why=f"release failed: {exc.message}",
        )  # fmt: skip
        raise
    return f"released {what} {message_id} to {', '.join(accepted)}"


def describe_cause(cause: HoldCause | None) -> list[str]:
    """Why a message was held, in lines a reviewer reads: the term and the part first, then the error."""
    if cause is None:
        return []
    lines = []
    if cause.term:
        lines.append(f"term:     {cause.term!r}" + (f" (entity {cause.entity})" if cause.entity else ""))
    if cause.part:
        lines.append(f"part:     {cause.part}" + (f", at {cause.location}" if cause.location else ""))
    lines.append(f"detail:   {cause.detail}")
    return lines


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    store = open_store(config.store)
    try:
        return _run(args, config, store)
    finally:
        store.close()


def _run(args: argparse.Namespace, config: Config, store: Store) -> int:
    cmd = args.q_command
    if cmd == "list":
        for m in store.list_messages(MessageQuery(status=args.status), limit=args.limit):
            rcpts = ",".join(m.envelope.recipients)
            print(f"{m.id}  {_when(m.received_at)}  {m.status:9}  {m.reason:18}  {m.changes:3d} changes  "
                  f"{m.envelope.sender} -> {rcpts}")  # fmt: skip
        return 0
    stored = store.get(args.id) if hasattr(args, "id") else None
    if hasattr(args, "id") and stored is None:
        raise InputError(f"no stored message {args.id}")
    if cmd == "show":
        assert stored is not None
        print(f"id:         {stored.id}\nreceived:   {_when(stored.received_at)}\nstatus:     {stored.status}")
        print(f"reason:     {stored.reason}")
        for line in describe_cause(stored.cause):
            print(f"            {line}")
        print(f"sender:     {stored.envelope.sender}")
        print(f"recipients: {', '.join(stored.envelope.recipients)}\nclient:     {stored.envelope.client_address}")
        print(f"policies:   {', '.join(stored.policies)}\nsize:       {stored.size} bytes")
        for a in store.audit(AuditQuery(message_id=stored.id)):
            if a.kind == "decision" and (a.reason or "").startswith("identifier "):
                print(f"  decision [{a.policy}] {a.term!r} -> {a.replacement!r}  {a.reason} part={a.part}")
            elif a.kind == "decision":
                pmi = f"{a.pmi:.2f}" if a.pmi is not None else "-"
                thr = f"{a.threshold:.2f}" if a.threshold is not None else "-"
                print(f"  decision [{a.policy}] {a.term!r} -> {a.replacement or '[REDACTED]'!r}  "
                      f"entity={a.entity} pmi={pmi} threshold={thr} part={a.part}")  # fmt: skip
                if a.earlier:
                    print(f"    with the group {' + '.join(a.group or ())}: relied on earlier {', '.join(a.earlier)}")
            else:
                print(f"  action {a.action} by {a.actor} at {_when(a.at)}: {a.why}")
        return 0
    if cmd == "diff":
        original, sanitized = store.content(args.id)
        if sanitized is None:
            print(f"(no sanitized version: {stored.reason if stored else ''})")
            return 0
        for line in difflib.unified_diff(_text(original), _text(sanitized), "original", "sanitized", lineterm=""):
            print(line)
        return 0
    if cmd == "release":
        print(asyncio.run(release(config, store, args.id, original=args.original, actor=_actor(args.by), why=args.why)))
        return 0
    if cmd == "reject":
        if not store.transition(args.id, to="rejected", allowed_from=("held",), actor=_actor(args.by), why=args.why):
            raise InputError(f"message {args.id} is not held: nothing to reject")
        print(f"rejected {args.id}")
        return 0
    if cmd == "purge":
        n = store.purge(older_than=time.time() - _age(args.older_than), actor=_actor(None))
        print(f"purged {n} message(s)")
        return 0
    raise InputError(f"unknown quarantine command {cmd}")
