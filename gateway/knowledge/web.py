"""K from hit counts: ask a search or count API in how many documents a set of terms occurs, as the paper did.

Everything about the API is configuration: the endpoint, GET with the query
in a parameter or POST with a JSON body, how a term, an alternative (OR) and
a conjunction (AND) are written, headers (with ``${ENV}`` expansion for
keys), and the dotted path to the total in the JSON reply. README gives an
Elasticsearch/OpenSearch ``_count`` and a commercial web search API.

Counts are kept in a persistent cache (SQLite, with an age limit), the API
is called at most ``rate`` times a second, each call has a timeout, and
failures are retried with exponential backoff (honouring ``Retry-After``).
When the API still fails, ``count`` raises ``KnowledgeUnavailableError``:
the gateway then holds the message; it never decides on half a K.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from gateway.errors import ConfigError, KnowledgeUnavailableError
from gateway.knowledge.webconfig import WebCountConfig

__all__ = ["WebCountConfig", "WebCounts"]


_ENV = re.compile(r"\$\{(\w+)\}")


def _expand(value: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in os.environ:
            raise ConfigError(f"header needs ${m.group(1)}, which is not set")
        return os.environ[m.group(1)]

    return _ENV.sub(sub, value)


class _RateLimit:
    def __init__(self, per_second: float) -> None:
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self.next = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        with self.lock:
            now = time.monotonic()
            slot = max(now, self.next)
            self.next = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


class _Cache:
    def __init__(self, path: Path, max_age: float) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.max_age = max_age
        self.local = threading.local()
        self._db().execute("CREATE TABLE IF NOT EXISTS counts (query TEXT PRIMARY KEY, n INTEGER, at REAL)")

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self.local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            self.local.db = db
        return db

    def get(self, query: str) -> int | None:
        row = self._db().execute("SELECT n, at FROM counts WHERE query = ?", (query,)).fetchone()
        if row is None or time.time() - row[1] > self.max_age:
            return None
        return int(row[0])

    def put(self, query: str, n: int) -> None:
        self._db().execute("INSERT OR REPLACE INTO counts VALUES (?, ?, ?)", (query, n, time.time()))

    def close(self) -> None:
        db = getattr(self.local, "db", None)
        if db is not None:
            db.close()
            self.local.db = None


class WebCounts:
    """A Knowledge whose counts come from an HTTP API."""

    def __init__(self, config: WebCountConfig, *, phrases: Collection[str] = ()) -> None:
        if config.total_docs < 1:
            raise ConfigError("engine.web.total_docs: must be the number of documents the service searches")
        if config.method not in ("GET", "POST"):
            raise ConfigError(f"engine.web.method: GET or POST, not {config.method!r}")
        if config.method == "POST" and "{query}" not in config.body:
            raise ConfigError("engine.web.body: a POST needs a JSON body template with {query} in it")
        self.config = config
        self._phrases = frozenset(phrases)
        self._headers = {k: _expand(v) for k, v in config.headers.items()}
        self._rate = _RateLimit(config.rate)
        self._cache = _Cache(config.cache, config.cache_days * 86400) if config.cache else None
        self._local = threading.local()
        self.calls = 0  # requests sent (for tests and the benchmark)

    @property
    def n_docs(self) -> int:
        return self.config.total_docs

    @property
    def min_support(self) -> int:
        return self.config.min_support

    def phrases(self) -> Collection[str]:
        return self._phrases

    def count(self, conjuncts: Sequence[Collection[str]]) -> int:
        if not conjuncts or any(not c for c in conjuncts):
            return self.n_docs if not conjuncts else 0
        query = self.config.query(conjuncts)
        if self._cache is not None:
            cached = self._cache.get(query)
            if cached is not None:
                return cached
        n = self._ask(query)
        if self._cache is not None:
            self._cache.put(query, n)
        return n

    def _session(self) -> Any:
        s = getattr(self._local, "session", None)
        if s is None:
            import requests

            s = requests.Session()
            s.headers.update(self._headers)
            self._local.session = s
        return s

    def _ask(self, query: str) -> int:
        import requests

        c = self.config
        last = "no attempt"
        for attempt in range(c.retries + 1):
            if attempt:
                time.sleep(c.backoff * 2 ** (attempt - 1))
            self._rate.wait()
            self.calls += 1
            try:
                if c.method == "GET":
                    r = self._session().get(c.endpoint, params={**c.params, c.query_param: query}, timeout=c.timeout)
                else:
                    body = c.body.replace("{query}", json.dumps(query))
                    r = self._session().post(c.endpoint, data=body.encode(), timeout=c.timeout,
                                             headers={"Content-Type": "application/json"})  # fmt: skip
            except requests.RequestException as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if r.status_code == 429 or r.status_code >= 500:
                last = f"HTTP {r.status_code}"
                wait = r.headers.get("Retry-After", "")
                if wait.isdigit() and attempt < c.retries:
                    time.sleep(min(float(wait), 30.0))
                continue
            if r.status_code != 200:
                raise KnowledgeUnavailableError(f"{c.endpoint}: HTTP {r.status_code}: {r.text[:200]}")
            return self._total(r.text)
        raise KnowledgeUnavailableError(f"{c.endpoint}: no count after {c.retries + 1} attempts ({last})")

    def _total(self, text: str) -> int:
        try:
            node: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            raise KnowledgeUnavailableError(f"{self.config.endpoint}: the reply is not JSON") from exc
        for part in self.config.count_path.split("."):
            if not isinstance(node, dict) or part not in node:
                if self.config.missing_is_zero and isinstance(node, dict):
                    return 0
                raise KnowledgeUnavailableError(f"{self.config.endpoint}: no {self.config.count_path} in the reply")
            node = node[part]
        if isinstance(node, dict) and "value" in node:  # Elasticsearch's hits.total {"value": n}
            node = node["value"]
        if not isinstance(node, int) or node < 0:
            raise KnowledgeUnavailableError(f"{self.config.endpoint}: {self.config.count_path} is not a count")
        return node

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
