"""The embedded store: one SQLite file in WAL mode, fsync'd on every commit.

The file (and its -wal/-shm companions) is created mode 0600. Message bodies
can be encrypted at rest (Fernet: AES-128-CBC + HMAC) with a key from the
environment; without a key they are stored as they came.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gateway.errors import ConfigError, SanigateError
from gateway.model.records import Step
from gateway.store.base import (
    AuditEntry,
    AuditQuery,
    DecisionRecord,
    Envelope,
    MessageQuery,
    Stats,
    Status,
    StoredMessage,
)

# Each step moves the schema up one version (PRAGMA user_version); never edit a released step.
_V1 = """
CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY,
    received_at REAL NOT NULL,
    sender TEXT NOT NULL,
    recipients TEXT NOT NULL,
    client TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    policies TEXT NOT NULL,
    size INTEGER NOT NULL,
    changes INTEGER NOT NULL,
    encrypted INTEGER NOT NULL,
    original BLOB NOT NULL,
    sanitized BLOB,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_status ON messages(status, received_at);
CREATE INDEX IF NOT EXISTS messages_sender ON messages(sender);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY,
    message_id TEXT NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    sender TEXT NOT NULL,
    recipients TEXT NOT NULL,
    policy TEXT NOT NULL DEFAULT '',
    entity TEXT,
    term TEXT NOT NULL DEFAULT '',
    pmi REAL,
    threshold REAL,
    action TEXT NOT NULL DEFAULT '',
    replacement TEXT,
    part TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    grp TEXT,
    actor TEXT NOT NULL DEFAULT '',
    why TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS audit_message ON audit(message_id);
CREATE INDEX IF NOT EXISTS audit_at ON audit(at);
"""
_V2 = """
ALTER TABLE messages ADD COLUMN utility REAL;
ALTER TABLE audit ADD COLUMN detail TEXT;
CREATE INDEX IF NOT EXISTS audit_entity ON audit(entity, at);
CREATE TABLE IF NOT EXISTS outcomes (
    period REAL NOT NULL,
    outcome TEXT NOT NULL,
    messages INTEGER NOT NULL,
    PRIMARY KEY (period, outcome)
);
"""
MIGRATIONS: tuple[str, ...] = (_V1, _V2)
SCHEMA_VERSION = len(MIGRATIONS)
_ALL_MESSAGES = MessageQuery()
_ALL_AUDIT = AuditQuery()


class StoreError(SanigateError):
    smtp_code = 451
    smtp_status = "4.3.0"


def _cipher(key_env: str) -> Any:
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


class SQLiteStore:
    def __init__(self, path: Path, *, key_env: str = "SANIGATE_STORE_KEY") -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        path.chmod(0o600)
        self._cipher = _cipher(key_env)
        self._local = threading.local()
        self.upgrade()
        for suffix in ("-wal", "-shm"):
            companion = path.with_name(path.name + suffix)
            if companion.exists():
                companion.chmod(0o600)

    def upgrade(self) -> tuple[int, int]:
        """Apply the migrations this file lacks; (version before, version after)."""
        db = self._conn()
        before = int(db.execute("PRAGMA user_version").fetchone()[0])
        if before > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema version {before} is newer than this sanigate ({SCHEMA_VERSION})")
        for version in range(before, SCHEMA_VERSION):
            try:
                db.execute("BEGIN IMMEDIATE")
                if int(db.execute("PRAGMA user_version").fetchone()[0]) == version:  # another process may have won
                    for statement in MIGRATIONS[version].split(";"):
                        if statement.strip():
                            db.execute(statement)
                    db.execute(f"PRAGMA user_version = {version + 1}")
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise StoreError(f"{self.path}: cannot migrate the schema to version {version + 1}: {exc}") from exc
        return before, SCHEMA_VERSION

    def _conn(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a commit is on disk before we answer 250
            db.execute("PRAGMA busy_timeout=30000")
            db.row_factory = sqlite3.Row
            self._local.db = db
        return db

    def _seal(self, data: bytes | None) -> bytes | None:
        if data is None or self._cipher is None:
            return data
        return bytes(self._cipher.encrypt(data))

    def _open(self, data: bytes | None, encrypted: int) -> bytes | None:
        if data is None or not encrypted:
            return data
        if self._cipher is None:
            raise StoreError("this message is encrypted at rest; set the store key to read it")
        return bytes(self._cipher.decrypt(data))

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
    ) -> None:
        now = time.time()
        client = json.dumps({"address": envelope.client_address, "name": envelope.client_name, "helo": envelope.helo})
        recipients = json.dumps(list(envelope.recipients))
        db = self._conn()
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT INTO messages (id, received_at, sender, recipients, client, status, reason, policies, size,"
                " changes, encrypted, original, sanitized, updated_at, utility)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (message_id, now, envelope.sender, recipients, client, status, reason, json.dumps(list(policies)),
                 len(original), len(decisions), int(self._cipher is not None), self._seal(original),
                 self._seal(sanitized), now, utility),
            )  # fmt: skip
            db.executemany(
                "INSERT INTO audit (message_id, at, kind, sender, recipients, policy, entity, term, pmi, threshold,"
                " action, replacement, part, reason, grp, detail) VALUES (?,?,'decision',?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(message_id, now, envelope.sender, recipients, d.policy, d.entity, d.term, _finite(d.pmi),
                  _finite(d.threshold), d.action, d.replacement, d.part, d.reason,
                  json.dumps(list(d.group)) if d.group else None, _detail(d))
                 for d in decisions],
            )  # fmt: skip
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"cannot store message {message_id}: {exc}") from exc

    def _message(self, row: sqlite3.Row) -> StoredMessage:
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
        )

    def get(self, message_id: str) -> StoredMessage | None:
        row = self._conn().execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
        return None if row is None else self._message(row)

    def content(self, message_id: str) -> tuple[bytes, bytes | None]:
        row = (
            self._conn()
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
        where, args = _message_filter(query)
        sql = f"SELECT * FROM messages {where} ORDER BY received_at DESC, id LIMIT ? OFFSET ?"
        return [self._message(r) for r in self._conn().execute(sql, (*args, limit, offset))]

    def count_messages(self, query: MessageQuery = _ALL_MESSAGES) -> int:
        where, args = _message_filter(query)
        return int(self._conn().execute(f"SELECT COUNT(*) FROM messages {where}", args).fetchone()[0])

    def transition(self, message_id: str, *, to: Status, allowed_from: Sequence[Status], actor: str, why: str) -> bool:
        db = self._conn()
        now = time.time()
        marks = ",".join("?" * len(allowed_from))
        try:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT sender, recipients FROM messages WHERE id = ?", (message_id,)).fetchone()
            cur = db.execute(
                f"UPDATE messages SET status = ?, updated_at = ? WHERE id = ? AND status IN ({marks})",
                (to, now, message_id, *allowed_from),
            )
            if cur.rowcount != 1 or row is None:
                db.execute("ROLLBACK")
                return False
            db.execute(
                "INSERT INTO audit (message_id, at, kind, sender, recipients, action, actor, why)"
                " VALUES (?,?,'action',?,?,?,?,?)",
                (message_id, now, row["sender"], row["recipients"], to, actor, why),
            )
            db.execute("COMMIT")
            return True
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"cannot update message {message_id}: {exc}") from exc

    def log_action(self, *, message_id: str, action: str, actor: str, why: str) -> None:
        db = self._conn()
        row = db.execute("SELECT sender, recipients FROM messages WHERE id = ?", (message_id,)).fetchone()
        try:
            db.execute(
                "INSERT INTO audit (message_id, at, kind, sender, recipients, action, actor, why)"
                " VALUES (?,?,'action',?,?,?,?,?)",
                (message_id, time.time(), row["sender"] if row else "", row["recipients"] if row else "[]", action,
                 actor, why),
            )  # fmt: skip
        except sqlite3.Error as exc:
            raise StoreError(f"cannot audit {action!r} on {message_id}: {exc}") from exc

    def audit(self, query: AuditQuery = _ALL_AUDIT, *, limit: int = 500, offset: int = 0) -> list[AuditEntry]:
        where, args = _audit_filter(query)
        sql = f"SELECT * FROM audit {where} ORDER BY id LIMIT ? OFFSET ?"
        return [_entry(r) for r in self._conn().execute(sql, (*args, limit, offset))]

    def count_audit(self, query: AuditQuery = _ALL_AUDIT) -> int:
        where, args = _audit_filter(query)
        return int(self._conn().execute(f"SELECT COUNT(*) FROM audit {where}", args).fetchone()[0])

    def record_outcomes(self, counts: Mapping[tuple[float, str], int]) -> None:
        if not counts:
            return
        db = self._conn()
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT INTO outcomes (period, outcome, messages) VALUES (?,?,?)"
                " ON CONFLICT (period, outcome) DO UPDATE SET messages = messages + excluded.messages",
                [(period, outcome, n) for (period, outcome), n in counts.items()],
            )
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"cannot record outcome counts: {exc}") from exc

    def stats(self, *, since: float, bucket: float, top: int = 15) -> Stats:
        db = self._conn()
        outcomes = [
            (float(r[0]), str(r[1]), int(r[2]))
            for r in db.execute(
                "SELECT CAST(period / ? AS INTEGER) * ?, outcome, SUM(messages) FROM outcomes WHERE period >= ?"
                " GROUP BY 1, 2 ORDER BY 1, 2",
                (bucket, bucket, since),
            )
        ]
        by_entity = [
            (str(r[0]), int(r[1]))
            for r in db.execute(
                "SELECT entity, COUNT(*) FROM audit WHERE kind = 'decision' AND at >= ? AND entity IS NOT NULL"
                " GROUP BY entity ORDER BY 2 DESC, 1 LIMIT ?",
                (since, top),
            )
        ]
        terms = [
            (str(r[0]), int(r[1]))
            for r in db.execute(
                "SELECT lower(term), COUNT(*) FROM audit WHERE kind = 'decision' AND at >= ?"
                " GROUP BY lower(term) ORDER BY 2 DESC, 1 LIMIT ?",
                (since, top),
            )
        ]
        utility = [
            float(r[0])
            for r in db.execute("SELECT utility FROM messages WHERE received_at >= ? AND utility IS NOT NULL", (since,))
        ]
        return Stats(outcomes=outcomes, decisions_by_entity=by_entity, top_terms=terms, utility=utility)

    def purge(self, *, older_than: float, actor: str) -> int:
        db = self._conn()
        now = time.time()
        try:
            db.execute("BEGIN IMMEDIATE")
            ids = [r[0] for r in db.execute("SELECT id FROM messages WHERE received_at < ?", (older_than,))]
            db.executemany("DELETE FROM messages WHERE id = ?", [(i,) for i in ids])
            db.executemany(
                "INSERT INTO audit (message_id, at, kind, sender, recipients, action, actor, why)"
                " VALUES (?,?,'action','','[]','purged',?,?)",
                [(i, now, actor, f"older than {time.strftime('%Y-%m-%d %H:%M', time.gmtime(older_than))} UTC")
                 for i in ids],
            )  # fmt: skip
            db.execute("COMMIT")
            return len(ids)
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"cannot purge: {exc}") from exc

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _detail(d: DecisionRecord) -> str | None:
    if not d.chain and not d.sense:
        return None
    return json.dumps(
        {"sense": d.sense,
         "chain": [{"term": s.term, "source": s.source, "pmi": _finite(s.pmi), "threshold": _finite(s.threshold),
                    "entity": s.entity, "accepted": s.accepted, "why": s.why} for s in d.chain]}
    )  # fmt: skip


def _entry(r: sqlite3.Row) -> AuditEntry:
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
        actor=r["actor"],
        why=r["why"],
    )


def _message_filter(q: MessageQuery) -> tuple[str, tuple[Any, ...]]:
    where: list[str] = []
    args: list[Any] = []
    for column, value in (("status", q.status), ("sender", q.sender), ("reason", q.reason)):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    if q.recipient:
        where.append("EXISTS (SELECT 1 FROM json_each(messages.recipients) WHERE lower(value) = lower(?))")
        args.append(q.recipient)
    if q.policy:
        where.append("EXISTS (SELECT 1 FROM json_each(messages.policies) WHERE value = ?)")
        args.append(q.policy)
    if q.entity:
        where.append("EXISTS (SELECT 1 FROM audit a WHERE a.message_id = messages.id AND a.entity = ?)")
        args.append(q.entity)
    if q.message_id:
        where.append("id LIKE ? ESCAPE '\\'")
        args.append(_like_prefix(q.message_id))
    if q.since is not None:
        where.append("received_at >= ?")
        args.append(q.since)
    if q.until is not None:
        where.append("received_at < ?")
        args.append(q.until)
    return ("WHERE " + " AND ".join(where)) if where else "", tuple(args)


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
    if q.since is not None:
        where.append("at >= ?")
        args.append(q.since)
    if q.until is not None:
        where.append("at < ?")
        args.append(q.until)
    return ("WHERE " + " AND ".join(where)) if where else "", tuple(args)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _like_prefix(text: str) -> str:
    return _like_escape(text) + "%"
