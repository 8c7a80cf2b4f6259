"""The quarantine and audit store in SQL, for every backend: one set of queries, small dialect hooks.

A backend (``sqlite.py``, ``postgres.py``) gives connections, transactions,
its migrations and how to read a JSON array; queries are written with ``?``
placeholders and plain SQL both understand. Messages can be encrypted at rest
(Fernet: AES-128-CBC + HMAC) with a key from the environment.
"""

from __future__ import annotations

import json
import math
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict
from typing import Any, Protocol

from gateway.errors import ConfigError, SanigateError
from gateway.model.memory import Disclosure
from gateway.model.records import Step
from gateway.store.base import (
    AdminToken,
    AuditEntry,
    AuditQuery,
    DecisionRecord,
    Envelope,
    HoldCause,
    MessageQuery,
    Stats,
    Status,
    StoredMessage,
    StreamQuery,
    StreamSummary,
)
from gateway.store.disclosures import DisclosureCache, RowKey

_ALL_MESSAGES = MessageQuery()
_ALL_AUDIT = AuditQuery()
_ROWS_PER_READ = 500  # ids per IN (...): under SQLite's 999 host parameters of old builds


class StoreError(SanigateError):
    smtp_code = 451
    smtp_status = "4.3.0"


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    def execute(self, sql: str, args: Sequence[Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]], /) -> Any: ...


def cipher_from_env(key_env: str) -> Any:
    key = os.environ.get(key_env)
    if not key:
        return None
    from cryptography.fernet import Fernet

    try:
        return Fernet(key.encode("ascii"))
    except (ValueError, UnicodeEncodeError) as exc:
        raise ConfigError(
            f"${key_env} is not a Fernet key (32 url-safe base64 bytes; make one with "
            "'python -c \"from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())\"')"
        ) from exc


class SQLStore(ABC):
    label: str  # where it is, for messages (a file, or a URL without its password)

    def __init__(self, *, key_env: str) -> None:
        self._cipher = cipher_from_env(key_env)
        self._disclosures = DisclosureCache()

    # -- what a backend provides ---------------------------------------------------
    @abstractmethod
    def _read(self) -> Connection:
        """A connection for one statement outside any transaction."""

    @abstractmethod
    def _transaction(self, what: str) -> AbstractContextManager[Connection]:
        """A write transaction, committed durably on exit; a database error becomes StoreError(what)."""

    def _pairs(self, sql: str, args: Sequence[Any]) -> list[RowKey]:
        """The (id, at) of each row ``sql`` selects (as ``id`` and ``at``), in its order."""
        return [(int(r["id"]), float(r["at"])) for r in self._read().execute(sql, args).fetchall()]

    @abstractmethod
    def _json_values(self, column: str) -> str:
        """A subquery giving one row per element of the JSON array in ``column``, as ``value``."""

    @abstractmethod
    def schema_version(self) -> int: ...

    @abstractmethod
    def upgrade(self) -> tuple[int, int]:
        """Apply the migrations the database lacks; (version before, version after)."""

    @abstractmethod
    def close(self) -> None: ...

    # -- sealing -------------------------------------------------------------------
    def _seal(self, data: bytes | None) -> bytes | None:
        if data is None or self._cipher is None:
            return data
        return bytes(self._cipher.encrypt(data))

    def _open(self, data: bytes | None, encrypted: int) -> bytes | None:
        if data is None or not encrypted:
            return None if data is None else bytes(data)
        if self._cipher is None:
            raise StoreError("this message is encrypted at rest; set the store key to read it")
        return bytes(self._cipher.decrypt(bytes(data)))

    # -- messages ------------------------------------------------------------------
    def save(
        self,
        *,
        message_id: str,
        envelope: Envelope,
        status: Status,
        reason: str,
        policies: Sequence[str],
        original: bytes,
        sanitized: bytes | None,
        decisions: Sequence[DecisionRecord],
        utility: float | None = None,
        cause: HoldCause | None = None,
    ) -> None:
        now = time.time()
        client = json.dumps({"address": envelope.client_address, "name": envelope.client_name, "helo": envelope.helo})
        recipients = json.dumps(list(envelope.recipients))
        with self._transaction(f"cannot store message {message_id}") as db:
            db.execute(
                "INSERT INTO messages (id, received_at, sender, recipients, client, status, reason, policies, size,"
                " changes, encrypted, original, sanitized, updated_at, utility, cause)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (message_id, now, envelope.sender, recipients, client, status, reason, json.dumps(list(policies)),
                 len(original), len(decisions), int(self._cipher is not None), self._seal(original),
                 self._seal(sanitized), now, utility, json.dumps(asdict(cause)) if cause else None),
            )  # fmt: skip
            if decisions:
                db.executemany(
                    "INSERT INTO audit (message_id, at, kind, sender, recipients, policy, entity, term, pmi, threshold,"
                    " action, replacement, part, reason, grp, detail)"
                    " VALUES (?,?,'decision',?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [(message_id, now, envelope.sender, recipients, d.policy, d.entity, d.term, _finite(d.pmi),
                      _finite(d.threshold), d.action, d.replacement, d.part, d.reason,
                      json.dumps(list(d.group)) if d.group else None, _detail(d))
                     for d in decisions],
                )  # fmt: skip

    def get(self, message_id: str) -> StoredMessage | None:
        row = self._read().execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
        return None if row is None else _message(row)

    def content(self, message_id: str) -> tuple[bytes, bytes | None]:
        row = (
            self._read()
            .execute("SELECT original, sanitized, encrypted FROM messages WHERE id = ?", (message_id,))
            .fetchone()
        )
        if row is None:
            raise StoreError(f"no message {message_id}")
        original = self._open(row["original"], row["encrypted"])
        assert original is not None
        return original, self._open(row["sanitized"], row["encrypted"])

    def list_messages(
        self, query: MessageQuery = _ALL_MESSAGES, *, limit: int = 50, offset: int = 0
    ) -> list[StoredMessage]:
        where, args = self._message_filter(query)
        sql = f"SELECT * FROM messages {where} ORDER BY received_at DESC, id LIMIT ? OFFSET ?"
        return [_message(r) for r in self._read().execute(sql, (*args, limit, offset)).fetchall()]

    def count_messages(self, query: MessageQuery = _ALL_MESSAGES) -> int:
        where, args = self._message_filter(query)
        return int(self._read().execute(f"SELECT COUNT(*) AS n FROM messages {where}", args).fetchone()["n"])

    def transition(self, message_id: str, *, to: Status, allowed_from: Sequence[Status], actor: str, why: str) -> bool:
        """Atomic compare-and-set on the status: of two processes releasing one message, one wins."""
        now = time.time()
        marks = ",".join("?" * len(allowed_from))
        with self._transaction(f"cannot update message {message_id}") as db:
            cur = db.execute(
                f"UPDATE messages SET status = ?, updated_at = ? WHERE id = ? AND status IN ({marks})",
                (to, now, message_id, *allowed_from),
            )
            if cur.rowcount != 1:
                return False
            db.execute(
                "INSERT INTO audit (message_id, at, kind, sender, recipients, action, actor, why)"
                " SELECT id, ?, 'action', sender, recipients, ?, ?, ? FROM messages WHERE id = ?",
                (now, to, actor, why, message_id),
            )
        return True

    def purge(self, *, older_than: float, actor: str) -> int:
        now = time.time()
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(older_than))
        with self._transaction("cannot purge") as db:
            ids = [
                r["id"] for r in db.execute("SELECT id FROM messages WHERE received_at < ?", (older_than,)).fetchall()
            ]
            db.execute("DELETE FROM stream_memory WHERE at < ?", (older_than,))
            if ids:
                db.executemany("DELETE FROM messages WHERE id = ?", [(i,) for i in ids])
                db.executemany(
                    "INSERT INTO audit (message_id, at, kind, sender, recipients, action, actor, why)"
                    " VALUES (?,?,'action','','[]','purged',?,?)",
                    [(i, now, actor, f"older than {when} UTC") for i in ids],
                )
        return len(ids)

    # -- the disclosure memory -------------------------------------------------------
    def remember(
        self,
        *,
        message_id: str,
        sender: str,
        recipients: Sequence[str],
        disclosed: Mapping[str, Sequence[str]],
        thread: str = "",
        mail_id: str = "",
    ) -> list[RowKey]:
        now = time.time()
        rows = [
            (message_id, mail_id, now, policy, sender.lower(), r.lower(), thread, int(self._cipher is not None),
             self._seal(json.dumps(list(terms)).encode("utf-8")))
            for policy, terms in disclosed.items() if terms
            for r in dict.fromkeys(recipients)
        ]  # fmt: skip
        if not rows:
            return []
        keys: list[RowKey] = []
        with self._transaction(f"cannot remember what message {message_id} disclosed") as db:
            for row in rows:  # one by one, for their ids: a message has a row per policy and recipient, mostly one
                r = db.execute(
                    "INSERT INTO stream_memory (message_id, mail_id, at, policy, sender, recipient, thread, encrypted,"
                    " terms) VALUES (?,?,?,?,?,?,?,?,?) RETURNING id, at",
                    row,
                ).fetchall()[0]
                keys.append((int(r["id"]), float(r["at"])))
        return keys

    @staticmethod
    def _stream(query: StreamQuery) -> tuple[str, list[Any]]:
        """The WHERE clause (and its arguments) of the rows ``recall(query)`` reads."""
        pol = ",".join("?" * len(query.policies))
        rcpt = ",".join("?" * len(query.recipients))
        stream = "sender = ?" if not query.thread else "(sender = ? OR thread = ?)"
        args: list[Any] = [*query.policies, *(r.lower() for r in query.recipients), query.sender.lower()]
        if query.thread:
            args.append(query.thread)
        return f"policy IN ({pol}) AND recipient IN ({rcpt}) AND {stream} AND at >= ?", [*args, query.since]

    def recall(self, query: StreamQuery) -> list[Disclosure]:
        if not query.policies or not query.recipients:
            return []
        where, args = self._stream(query)
        # Which rows the stream holds now, from its index; only those this process has not decoded are read whole.
        keys = self._pairs(f"SELECT id, at FROM stream_memory WHERE {where} ORDER BY at, id", args)
        found = self._disclosures.known(keys)
        if len(found) == len(keys):  # every row decoded before (a busy stream's usual case)
            return list(found.values())
        missing = [k for k in keys if k not in found]
        for start in range(0, len(missing), _ROWS_PER_READ):
            ids = [i for i, _at in missing[start : start + _ROWS_PER_READ]]
            marks = ",".join("?" * len(ids))
            for r in self._read().execute(f"SELECT * FROM stream_memory WHERE id IN ({marks})", ids).fetchall():
                key = (int(r["id"]), float(r["at"]))
                sealed = self._open(r["terms"], r["encrypted"])
                assert sealed is not None
                found[key] = self._disclosures.add(
                    key,
                    Disclosure(message_id=r["message_id"], at=r["at"], policy=r["policy"], sender=r["sender"],
                               recipient=r["recipient"], terms=tuple(json.loads(sealed)), thread=r["thread"],
                               mail_id=r["mail_id"]),
                )  # fmt: skip
        # A row deleted between the two reads (expiry, purge) is not returned: as if read after the delete.
        return [found[k] for k in keys if k in found]

    def stream_version(self, query: StreamQuery, *, leaving_out: Sequence[RowKey] = ()) -> tuple[object, ...]:
        # A row is known by its id and time (store/disclosures.py): a row added, or one taken and another given its id,
        # moves the sums. Aggregated in the database: a busy stream's hundreds of rows are not handed to Python.
        if not query.policies or not query.recipients:
            return ()
        where, args = self._stream(query)
        for key in leaving_out:  # by id and time: another row given a left-out row's id still counts
            where += " AND NOT (id = ? AND at = ?)"
            args += key
        row = (
            self._read()
            .execute(
                f"SELECT COUNT(*) AS n, COALESCE(SUM(id), 0) AS ids, COALESCE(SUM(at), 0) AS ats, MAX(at) AS last"
                f" FROM stream_memory WHERE {where}",
                args,
            )
            .fetchone()
        )
        return (int(row["n"]), int(row["ids"]), float(row["ats"]), row["last"])

    def streams(self, *, since: float, sender: str | None = None, limit: int = 100) -> list[StreamSummary]:
        where = "at >= ?"
        args: list[Any] = [since]
        if sender:
            where += " AND sender = ?"
            args.append(sender.lower())
        rows = (
            self._read()
            .execute(
                "SELECT policy, sender, recipient, COUNT(DISTINCT message_id) AS n, MIN(at) AS first_at,"
                f" MAX(at) AS last_at FROM stream_memory WHERE {where} GROUP BY policy, sender, recipient"
                " ORDER BY last_at DESC, sender, recipient, policy LIMIT ?",
                (*args, limit),
            )
            .fetchall()
        )
        return [StreamSummary(policy=r["policy"], sender=r["sender"], recipient=r["recipient"], messages=int(r["n"]),
                              first_at=r["first_at"], last_at=r["last_at"]) for r in rows]  # fmt: skip

    def expire_memory(self, cutoffs: Mapping[str, float]) -> int:
        with self._transaction("cannot expire the disclosure memory") as db:
            n = 0
            for policy, cutoff in cutoffs.items():
                n += db.execute("DELETE FROM stream_memory WHERE policy = ? AND at < ?", (policy, cutoff)).rowcount
            if cutoffs:
                marks = ",".join("?" * len(cutoffs))
                n += db.execute(f"DELETE FROM stream_memory WHERE policy NOT IN ({marks})", tuple(cutoffs)).rowcount
            else:
                n += db.execute("DELETE FROM stream_memory").rowcount
        return n

    # -- the audit log ---------------------------------------------------------------
    def log_action(self, *, message_id: str, action: str, actor: str, why: str) -> None:
        with self._transaction(f"cannot audit {action!r} on {message_id}") as db:
            row = db.execute("SELECT sender, recipients FROM messages WHERE id = ?", (message_id,)).fetchone()
            db.execute(
                "INSERT INTO audit (message_id, at, kind, sender, recipients, action, actor, why)"
                " VALUES (?,?,'action',?,?,?,?,?)",
                (message_id, time.time(), row["sender"] if row else "", row["recipients"] if row else "[]", action,
                 actor, why),
            )  # fmt: skip

    def audit(self, query: AuditQuery = _ALL_AUDIT, *, limit: int = 500, offset: int = 0) -> list[AuditEntry]:
        where, args = _audit_filter(query)
        sql = f"SELECT * FROM audit {where} ORDER BY id LIMIT ? OFFSET ?"
        return [_entry(r) for r in self._read().execute(sql, (*args, limit, offset)).fetchall()]

    def count_audit(self, query: AuditQuery = _ALL_AUDIT) -> int:
        where, args = _audit_filter(query)
        return int(self._read().execute(f"SELECT COUNT(*) AS n FROM audit {where}", args).fetchone()["n"])

    # -- the dashboard -----------------------------------------------------------------
    def record_outcomes(self, counts: Mapping[tuple[float, str], int]) -> None:
        if not counts:
            return
        with self._transaction("cannot record outcome counts") as db:
            db.executemany(
                "INSERT INTO outcomes (period, outcome, messages) VALUES (?,?,?)"
                " ON CONFLICT (period, outcome) DO UPDATE SET messages = outcomes.messages + excluded.messages",
                [(period, outcome, n) for (period, outcome), n in counts.items()],
            )

    def stats(self, *, since: float, bucket: float, top: int = 15) -> Stats:
        db = self._read()
        buckets: dict[tuple[float, str], int] = {}
        for r in db.execute("SELECT period, outcome, messages FROM outcomes WHERE period >= ?", (since,)).fetchall():
            key = (float(r["period"]) // bucket * bucket, str(r["outcome"]))
            buckets[key] = buckets.get(key, 0) + int(r["messages"])
        by_entity = [
            (str(r["entity"]), int(r["n"]))
            for r in db.execute(
                "SELECT entity, COUNT(*) AS n FROM audit WHERE kind = 'decision' AND at >= ? AND entity IS NOT NULL"
                " GROUP BY entity ORDER BY n DESC, entity LIMIT ?",
                (since, top),
            ).fetchall()
        ]
        terms = [
            (str(r["t"]), int(r["n"]))
            for r in db.execute(
                "SELECT lower(term) AS t, COUNT(*) AS n FROM audit WHERE kind = 'decision' AND at >= ?"
                " GROUP BY lower(term) ORDER BY n DESC, t LIMIT ?",
                (since, top),
            ).fetchall()
        ]
        utility = [
            float(r["utility"])
            for r in db.execute(
                "SELECT utility FROM messages WHERE received_at >= ? AND utility IS NOT NULL", (since,)
            ).fetchall()
        ]
        return Stats(outcomes=[(p, o, n) for (p, o), n in sorted(buckets.items())], decisions_by_entity=by_entity,
                     top_terms=terms, utility=utility)  # fmt: skip

    # -- the admin interface's sessions and login brake (shared by every admin process) ---
    def create_token(self, token: AdminToken) -> None:
        with self._transaction("cannot store the admin session") as db:
            db.execute("DELETE FROM admin_tokens WHERE expires <= ?", (time.time(),))
            db.execute(
                "INSERT INTO admin_tokens (token_hash, kind, user_name, role, csrf, expires) VALUES (?,?,?,?,?,?)",
                (token.token_hash, token.kind, token.user, token.role, token.csrf, token.expires),
            )

    def get_token(self, token_hash: str, *, kind: str, now: float) -> AdminToken | None:
        row = (
            self._read()
            .execute(
                "SELECT token_hash, kind, user_name, role, csrf, expires FROM admin_tokens"
                " WHERE token_hash = ? AND kind = ? AND expires > ?",
                (token_hash, kind, now),
            )
            .fetchone()
        )
        if row is None:
            return None
        return AdminToken(token_hash=str(row["token_hash"]), kind="device" if row["kind"] == "device" else "session",
                          user=str(row["user_name"]),
                          role=str(row["role"]), csrf=str(row["csrf"]), expires=float(row["expires"]))  # fmt: skip

    def drop_token(self, token_hash: str) -> None:
        with self._transaction("cannot end the admin session") as db:
            db.execute("DELETE FROM admin_tokens WHERE token_hash = ?", (token_hash,))

    def drop_tokens_of(self, user: str) -> int:
        """End every session and forget every device of a user (a removed user, a changed password)."""
        with self._transaction("cannot end the user's sessions") as db:
            return int(db.execute("DELETE FROM admin_tokens WHERE lower(user_name) = lower(?)", (user,)).rowcount)

    def login_failed(self, keys: Sequence[str], *, at: float) -> None:
        with self._transaction("cannot record a failed login") as db:
            db.executemany("INSERT INTO admin_login_failures (key, at) VALUES (?, ?)", [(k, at) for k in keys])

    def login_failures(self, keys: Sequence[str], *, since: float) -> dict[str, int]:
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        rows = (
            self._read()
            .execute(
                f"SELECT key, COUNT(*) AS n FROM admin_login_failures WHERE key IN ({marks}) AND at > ? GROUP BY key",
                (*keys, since),
            )
            .fetchall()
        )
        return {str(r["key"]): int(r["n"]) for r in rows}

    def login_succeeded(self, keys: Sequence[str], *, forget_before: float) -> None:
        with self._transaction("cannot record a login") as db:
            db.executemany("DELETE FROM admin_login_failures WHERE key = ?", [(k,) for k in keys])
            db.execute("DELETE FROM admin_login_failures WHERE at <= ?", (forget_before,))

    # -- filters ------------------------------------------------------------------------
    def _message_filter(self, q: MessageQuery) -> tuple[str, tuple[Any, ...]]:
        where: list[str] = []
        args: list[Any] = []
        for column, value in (("status", q.status), ("sender", q.sender), ("reason", q.reason)):
            if value:
                where.append(f"{column} = ?")
                args.append(value)
        if q.recipient:
            where.append(f"EXISTS ({self._json_values('messages.recipients')} WHERE lower(value) = lower(?))")
            args.append(q.recipient)
        if q.policy:
            where.append(f"EXISTS ({self._json_values('messages.policies')} WHERE value = ?)")
            args.append(q.policy)
        if q.entity:
            where.append("EXISTS (SELECT 1 FROM audit a WHERE a.message_id = messages.id AND a.entity = ?)")
            args.append(q.entity)
        if q.message_id:
            where.append("id LIKE ? ESCAPE '\\'")
            args.append(_like_escape(q.message_id) + "%")
        _period("received_at", q.since, q.until, where, args)
        return ("WHERE " + " AND ".join(where)) if where else "", tuple(args)


def _message(row: Any) -> StoredMessage:
    client = json.loads(row["client"])
    return StoredMessage(
        id=row["id"],
        received_at=row["received_at"],
        envelope=Envelope(
            sender=row["sender"],
            recipients=tuple(json.loads(row["recipients"])),
            client_address=client.get("address", ""),
            client_name=client.get("name", ""),
            helo=client.get("helo", ""),
        ),
        status=row["status"],
        reason=row["reason"],
        policies=tuple(json.loads(row["policies"])),
        size=row["size"],
        changes=row["changes"],
        utility=row["utility"],
        cause=HoldCause(**json.loads(row["cause"])) if row["cause"] else None,
    )


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _detail(d: DecisionRecord) -> str | None:
    if not d.chain and not d.sense and not d.earlier:
        return None
    detail: dict[str, Any] = {
        "sense": d.sense,
        "chain": [{"term": s.term, "source": s.source, "pmi": _finite(s.pmi), "threshold": _finite(s.threshold),
                   "entity": s.entity, "accepted": s.accepted, "why": s.why} for s in d.chain],
    }  # fmt: skip
    if d.earlier:
        detail["earlier"] = list(d.earlier)
    return json.dumps(detail)


def _entry(r: Any) -> AuditEntry:
    detail = json.loads(r["detail"]) if r["detail"] else {}
    return AuditEntry(
        id=r["id"],
        message_id=r["message_id"],
        at=r["at"],
        kind=r["kind"],
        sender=r["sender"],
        recipients=tuple(json.loads(r["recipients"])),
        policy=r["policy"],
        entity=r["entity"],
        term=r["term"],
        pmi=r["pmi"],
        threshold=r["threshold"],
        action=r["action"],
        replacement=r["replacement"],
        part=r["part"],
        reason=r["reason"],
        group=tuple(json.loads(r["grp"])) if r["grp"] else None,
        sense=detail.get("sense"),
        chain=tuple(Step(**step) for step in detail.get("chain", ())),
        earlier=tuple(detail.get("earlier", ())),
        actor=r["actor"],
        why=r["why"],
    )


def _audit_filter(q: AuditQuery) -> tuple[str, tuple[Any, ...]]:
    where: list[str] = []
    args: list[Any] = []
    exact = (("message_id", q.message_id), ("kind", q.kind), ("sender", q.sender), ("policy", q.policy),
             ("entity", q.entity), ("action", q.action), ("actor", q.actor))  # fmt: skip
    for column, value in exact:
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    if q.term:
        where.append("lower(term) LIKE ? ESCAPE '\\'")
        args.append("%" + _like_escape(q.term.lower()) + "%")
    _period("at", q.since, q.until, where, args)
    return ("WHERE " + " AND ".join(where)) if where else "", tuple(args)


def _period(column: str, since: float | None, until: float | None, where: list[str], args: list[Any]) -> None:
    if since is not None:
        where.append(f"{column} >= ?")
        args.append(since)
    if until is not None:
        where.append(f"{column} < ?")
        args.append(until)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def split_statements(script: str) -> Iterator[str]:
    for statement in script.split(";"):
        if statement.strip():
            yield statement
