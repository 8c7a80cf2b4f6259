"""The embedded store: one SQLite file in WAL mode, fsync'd on every commit.

The file (and its -wal/-shm companions) is created mode 0600. Message bodies
can be encrypted at rest (Fernet: AES-128-CBC + HMAC) with a key from the
environment; without a key they are stored as they came.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gateway.store.disclosures import RowKey
from gateway.store.sql import Connection, SQLStore, StoreError, split_statements

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLiteStore", "StoreError"]

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
# The admin interface's sessions, devices and failed logins, so that several admin processes can serve.
_V3 = """
CREATE TABLE IF NOT EXISTS admin_tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    user_name TEXT NOT NULL,
    role TEXT NOT NULL,
    csrf TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS admin_login_failures (
    key TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS admin_login_failures_key ON admin_login_failures(key, at);
"""
# Why a message was held (a JSON HoldCause: the error, and the term and part when the last check names them).
_V4 = """
ALTER TABLE messages ADD COLUMN cause TEXT;
"""
# The disclosure memory (gateway/model/memory.py): one row per message, policy and recipient; terms sealed.
_V5 = """
CREATE TABLE IF NOT EXISTS stream_memory (
    id INTEGER PRIMARY KEY,
    message_id TEXT NOT NULL,
    mail_id TEXT NOT NULL DEFAULT '',
    at REAL NOT NULL,
    policy TEXT NOT NULL,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    thread TEXT NOT NULL DEFAULT '',
    encrypted INTEGER NOT NULL,
    terms BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS stream_memory_stream ON stream_memory(policy, sender, recipient, at);
CREATE INDEX IF NOT EXISTS stream_memory_thread ON stream_memory(policy, thread, at);
CREATE INDEX IF NOT EXISTS stream_memory_at ON stream_memory(at);
"""
MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4, _V5)
SCHEMA_VERSION = len(MIGRATIONS)


class SQLiteStore(SQLStore):
    def __init__(self, path: Path, *, key_env: str = "SANIGATE_STORE_KEY") -> None:
        super().__init__(key_env=key_env)
        self.path = path
        self.label = str(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        path.chmod(0o600)
        self._local = threading.local()
        self.upgrade()  # an embedded store keeps itself current; a server database waits for `sanigate db upgrade`
        for suffix in ("-wal", "-shm"):
            companion = path.with_name(path.name + suffix)
            if companion.exists():
                companion.chmod(0o600)

    def schema_version(self) -> int:
        return int(self._conn().execute("PRAGMA user_version").fetchone()[0])

    def upgrade(self) -> tuple[int, int]:
        db = self._conn()
        before = self.schema_version()
        if before > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema version {before} is newer than this sanigate ({SCHEMA_VERSION})")
        for version in range(before, SCHEMA_VERSION):
            try:
                db.execute("BEGIN IMMEDIATE")
                if self.schema_version() == version:  # another process may have won
                    for statement in split_statements(MIGRATIONS[version]):
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

    def _read(self) -> Connection:
        return self._conn()

    @contextmanager
    def _transaction(self, what: str) -> Iterator[Connection]:
        db = self._conn()
        try:
            db.execute("BEGIN IMMEDIATE")
            yield db
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"{what}: {exc}") from exc
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _pairs(self, sql: str, args: Sequence[Any]) -> list[RowKey]:
        # Plain tuples: a busy stream's recall lists hundreds of rows, twice a message (a Row each, read by name,
        # was a fifth of the front's recall).
        cursor = self._conn().cursor()
        cursor.row_factory = None
        rows: list[RowKey] = cursor.execute(sql, args).fetchall()
        return rows

    def _json_values(self, column: str) -> str:
        return f"SELECT value FROM json_each({column})"

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
