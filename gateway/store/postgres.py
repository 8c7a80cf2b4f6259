"""The store in PostgreSQL: one quarantine and audit log shared by every gateway and admin process.

Chosen with ``[store] url = "postgresql://…"``. Passwords belong in
``~/.pgpass`` or ``$PGPASSWORD`` rather than the URL. The schema is
versioned: ``sanigate db upgrade`` applies what is missing, under an advisory
lock so that two hosts upgrading at once do it once, and a process refuses
to start on a schema that is older or newer than its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from gateway.pg import ThreadConnections, redact_url
from gateway.store.sql import Connection, Cursor, SQLStore, StoreError, split_statements

_V1 = """
CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY,
    received_at DOUBLE PRECISION NOT NULL,
    sender TEXT NOT NULL,
    recipients TEXT NOT NULL,
    client TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    policies TEXT NOT NULL,
    size BIGINT NOT NULL,
    changes INTEGER NOT NULL,
    encrypted INTEGER NOT NULL,
    original BYTEA NOT NULL,
    sanitized BYTEA,
    updated_at DOUBLE PRECISION NOT NULL,
    utility DOUBLE PRECISION
);
CREATE INDEX IF NOT EXISTS messages_status ON messages(status, received_at);
CREATE INDEX IF NOT EXISTS messages_sender ON messages(sender);
CREATE TABLE IF NOT EXISTS audit (
    id BIGSERIAL PRIMARY KEY,
    message_id TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    kind TEXT NOT NULL,
    sender TEXT NOT NULL,
    recipients TEXT NOT NULL,
    policy TEXT NOT NULL DEFAULT '',
    entity TEXT,
    term TEXT NOT NULL DEFAULT '',
    pmi DOUBLE PRECISION,
    threshold DOUBLE PRECISION,
    action TEXT NOT NULL DEFAULT '',
    replacement TEXT,
    part TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    grp TEXT,
    detail TEXT,
    actor TEXT NOT NULL DEFAULT '',
    why TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS audit_message ON audit(message_id);
CREATE INDEX IF NOT EXISTS audit_at ON audit(at);
CREATE INDEX IF NOT EXISTS audit_entity ON audit(entity, at);
CREATE TABLE IF NOT EXISTS outcomes (
    period DOUBLE PRECISION NOT NULL,
    outcome TEXT NOT NULL,
    messages BIGINT NOT NULL,
    PRIMARY KEY (period, outcome)
)
"""
# The admin interface's sessions, devices and failed logins, so that several admin processes can serve.
_V2 = """
CREATE TABLE IF NOT EXISTS admin_tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    user_name TEXT NOT NULL,
    role TEXT NOT NULL,
    csrf TEXT NOT NULL,
    expires DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS admin_login_failures (
    key TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS admin_login_failures_key ON admin_login_failures(key, at);
"""
# Why a message was held (a JSON HoldCause: the error, and the term and part when the last check names them).
_V3 = """
ALTER TABLE messages ADD COLUMN cause TEXT;
"""
# The disclosure memory (gateway/model/memory.py): one row per message, policy and recipient; terms sealed.
_V4 = """
CREATE TABLE IF NOT EXISTS stream_memory (
    id BIGSERIAL PRIMARY KEY,
    message_id TEXT NOT NULL,
    mail_id TEXT NOT NULL DEFAULT '',
    at DOUBLE PRECISION NOT NULL,
    policy TEXT NOT NULL,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    thread TEXT NOT NULL DEFAULT '',
    encrypted INTEGER NOT NULL,
    terms BYTEA NOT NULL
);
CREATE INDEX IF NOT EXISTS stream_memory_stream ON stream_memory(policy, sender, recipient, at);
CREATE INDEX IF NOT EXISTS stream_memory_thread ON stream_memory(policy, thread, at);
CREATE INDEX IF NOT EXISTS stream_memory_at ON stream_memory(at)
"""
MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4)
SCHEMA_VERSION = len(MIGRATIONS)
_LOCK = 0x5A1164  # pg_advisory_xact_lock key: one migration at a time across the fleet
_PLACEHOLDER = re.compile(r"\?")


class _Pg:
    """A psycopg connection that takes the store's ``?`` placeholders."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> Cursor:
        cur: Cursor = self.conn.execute(_PLACEHOLDER.sub("%s", sql), tuple(args))
        return cur

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]], /) -> Any:
        with self.conn.cursor() as cur:
            cur.executemany(_PLACEHOLDER.sub("%s", sql), [tuple(r) for r in rows])


class PostgresStore(SQLStore):
    def __init__(self, url: str, *, key_env: str = "SANIGATE_STORE_KEY", check_schema: bool = True) -> None:
        super().__init__(key_env=key_env)
        self.url = url
        self.label = redact_url(url)
        self._connections = ThreadConnections(url, label=self.label, error=StoreError)
        if check_schema:
            version = self.schema_version()
            if version != SCHEMA_VERSION:
                self.close()
                raise StoreError(
                    f"{self.label}: the store's schema is version {version}, this sanigate needs {SCHEMA_VERSION}: "
                    "run 'sanigate db upgrade'" if version < SCHEMA_VERSION else
                    f"{self.label}: the store's schema (version {version}) is newer than this sanigate "
                    f"({SCHEMA_VERSION})"
                )  # fmt: skip

    def _conn(self) -> _Pg:
        return _Pg(self._connections.get())

    def _read(self) -> Connection:
        return self._conn()

    @contextmanager
    def _transaction(self, what: str) -> Iterator[Connection]:
        import psycopg

        pg = self._conn()
        try:
            with pg.conn.transaction():
                yield pg
        except psycopg.Error as exc:
            raise StoreError(f"{what}: {str(exc).strip()}") from exc

    def _json_values(self, column: str) -> str:
        return f"SELECT value FROM jsonb_array_elements_text(CAST({column} AS jsonb)) AS value"

    def schema_version(self) -> int:
        import psycopg

        try:
            row = self._conn().execute("SELECT to_regclass('sanigate_schema') AS t").fetchone()
            if row is None or row["t"] is None:
                return 0
            got = self._conn().execute("SELECT version FROM sanigate_schema").fetchone()
        except psycopg.Error as exc:
            raise StoreError(f"{self.label}: {str(exc).strip()}") from exc
        return 0 if got is None else int(got["version"])

    def upgrade(self) -> tuple[int, int]:
        before = self.schema_version()
        if before > SCHEMA_VERSION:
            raise StoreError(f"{self.label}: schema version {before} is newer than this sanigate ({SCHEMA_VERSION})")
        with self._transaction(f"{self.label}: cannot migrate the schema") as db:
            db.execute("SELECT pg_advisory_xact_lock(?)", (_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS sanigate_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM sanigate_schema").fetchone()
            current = 0 if row is None else int(row["version"])  # another host may have upgraded meanwhile
            for version in range(current, SCHEMA_VERSION):
                for statement in split_statements(MIGRATIONS[version]):
                    db.execute(statement)
            if row is None:
                db.execute("INSERT INTO sanigate_schema (version) VALUES (?)", (SCHEMA_VERSION,))
            else:
                db.execute("UPDATE sanigate_schema SET version = ?", (SCHEMA_VERSION,))
        return before, SCHEMA_VERSION

    def close(self) -> None:
        self._connections.close()
