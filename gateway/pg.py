"""PostgreSQL connections shared by the store and by K in PostgreSQL, neither of which should import the other."""

from __future__ import annotations

import re
import threading
from typing import Any

from gateway.errors import SanigateError

__all__ = ["ThreadConnections", "redact_url"]


class ThreadConnections:
    """One autocommit connection per thread to one database (rows as dicts), all closed together."""

    def __init__(self, url: str, *, label: str, error: type[SanigateError]) -> None:
        self.url = url
        self.label = label
        self.error = error
        self._local = threading.local()
        self._all: list[Any] = []
        self._lock = threading.Lock()

    def get(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or conn.broken:  # a lost server: connect again
            import psycopg
            from psycopg.rows import dict_row

            try:
                conn = psycopg.connect(self.url, autocommit=True, row_factory=dict_row, connect_timeout=10)
            except psycopg.Error as exc:
                raise self.error(f"{self.label}: cannot connect: {str(exc).strip()}") from exc
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()


def redact_url(url: str) -> str:
    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)
