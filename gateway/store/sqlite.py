"""The embedded store: one SQLite file in WAL mode, fsync'd on every commit.

The file (and its -wal/-shm companions) is created mode 0600. Message bodies
can be encrypted at rest (Fernet: AES-128-CBC + HMAC) with a key from the
environment; without a key they are stored as they came.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway.errors import ConfigError, SanigateError
from gateway.store.base import AuditEntry, DecisionRecord, Envelope, Status, StoredMessage

SCHEMA = """
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
        with self._conn() as db:
            db.executescript(SCHEMA)
        for suffix in ("-wal", "-shm"):
            companion = path.with_name(path.name + suffix)
            if companion.exists():
                companion.chmod(0o600)

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
    ) -> None:
        now = time.time()
        client = json.dumps({"address": envelope.client_address, "name": envelope.client_name, "helo": envelope.helo})
        recipients = json.dumps(list(envelope.recipients))
        db = self._conn()
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT INTO messages (id, received_at, sender, recipients, client, status, reason, policies, size,"
                " changes, encrypted, original, sanitized, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (message_id, now, envelope.sender, recipients, client, status, reason, json.dumps(list(policies)),
                 len(original), len(decisions), int(self._cipher is not None), self._seal(original),
                 self._seal(sanitized), now),
            )  # fmt: skip
            db.executemany(
                "INSERT INTO audit (message_id, at, kind, sender, recipients, policy, entity, term, pmi, threshold,"
                " action, replacement, part, reason, grp) VALUES (?,?,'decision',?,?,?,?,?,?,?,?,?,?,?,?)",
                [(message_id, now, envelope.sender, recipients, d.policy, d.entity, d.term, d.pmi, d.threshold,
                  d.action, d.replacement, d.part, d.reason, json.dumps(list(d.group)) if d.group else None)
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
        self, *, status: Status | None = None, sender: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[StoredMessage]:
        where: list[str] = []
        args: list[str] = []
        if status:
            where.append("status = ?")
            args.append(status)
        if sender:
            where.append("sender = ?")
            args.append(sender)
        sql = "SELECT * FROM messages" + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY received_at DESC LIMIT ? OFFSET ?"
        return [self._message(r) for r in self._conn().execute(sql, (*args, limit, offset))]

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

    def audit(self, *, message_id: str | None = None, limit: int = 500) -> list[AuditEntry]:
        sql = "SELECT * FROM audit" + (" WHERE message_id = ?" if message_id else "") + " ORDER BY id LIMIT ?"
        args: tuple[Any, ...] = (message_id, limit) if message_id else (limit,)
        return [
            AuditEntry(
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
                actor=r["actor"],
                why=r["why"],
            )
            for r in self._conn().execute(sql, args)
        ]

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
