"""K in PostgreSQL: one co-occurrence index shared by every instance, read a term at a time.

``sanigate index build CORPUS --to postgresql://…`` loads it: one row per term
with its document frequency and its posting list as a serialized Roaring
bitmap. A process reads the vocabulary with each term's document frequency
at start (a term's own count is then a lookup) and fetches posting lists only
for the terms of a group (kept in a bounded LRU), so the postings, the bulk
of K, may be larger than any one machine's memory. A group count whose
postings are not at hand is first looked up in a shared table, and stored
there once computed: fetched and intersected once for the whole fleet. A
database that does not answer makes ``count`` raise
KnowledgeUnavailableError, and the gateway holds the message.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Sequence
from typing import Any

from pyroaring import BitMap, FrozenBitMap

from gateway.errors import IndexFormatError, KnowledgeUnavailableError
from gateway.knowledge.local import LocalIndex
from gateway.model.terms import NORMALIZATION_VERSION
from gateway.pg import ThreadConnections, redact_url

SCHEMA = """
CREATE TABLE IF NOT EXISTS k_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS k_terms (key TEXT PRIMARY KEY, df INTEGER NOT NULL, postings BYTEA NOT NULL);
CREATE TABLE IF NOT EXISTS k_counts (query TEXT PRIMARY KEY, n BIGINT NOT NULL, at DOUBLE PRECISION NOT NULL)
"""


def _canonical(conjuncts: Sequence[Collection[str]]) -> str:
    return json.dumps(sorted(sorted(c) for c in conjuncts), ensure_ascii=False)


def load_index(local: LocalIndex, url: str, *, progress: Any = None) -> int:
    """Copy a built local index into PostgreSQL (replacing any K there); the number of terms."""
    import psycopg

    with psycopg.connect(url) as conn:
        for statement in SCHEMA.split(";"):
            conn.execute(statement)
        conn.execute("TRUNCATE k_terms, k_counts, k_meta")
        with conn.cursor() as cur, cur.copy("COPY k_terms (key, df, postings) FROM STDIN") as copy:
            for n, (key, bitmap) in enumerate(local.items(), 1):
                copy.write_row((key, len(bitmap), bitmap.serialize()))
                if progress is not None and n % 10_000 == 0:
                    progress(10_000)
        meta = {"n_docs": local.n_docs, "min_df": local.min_support, "normalization": NORMALIZATION_VERSION,
                "source": str(local.path), "loaded_at": time.time(),
                "phrases": sorted(local.phrases())}  # fmt: skip
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO k_meta (key, value) VALUES (%s, %s)",
                            [(k, json.dumps(v)) for k, v in meta.items()])  # fmt: skip
        conn.commit()
    return len(local)


class PostgresIndex:
    def __init__(self, url: str, *, cache_terms: int = 50_000) -> None:
        self.url = url
        self.label = redact_url(url)
        self._connections = ThreadConnections(url, label=self.label, error=KnowledgeUnavailableError)
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, FrozenBitMap | None] = OrderedDict()
        self._cache_terms = cache_terms
        self.computed = 0  # group counts this process computed itself (not from the shared table)
        meta = {r["key"]: json.loads(r["value"]) for r in self._rows("SELECT key, value FROM k_meta")}
        if "n_docs" not in meta:
            raise IndexFormatError(f"{self.label}: no K loaded here; run 'sanigate index build CORPUS --to URL'")
        if meta.get("normalization") != NORMALIZATION_VERSION:
            raise IndexFormatError(f"{self.label}: K was built with term normalization v{meta.get('normalization')}, "
                                   f"this sanigate uses v{NORMALIZATION_VERSION}; rebuild it")  # fmt: skip
        self._n_docs = int(meta["n_docs"])
        self._min_df = int(meta.get("min_df", 1))
        self._phrases = frozenset(meta.get("phrases", ()))
        self._df = {r["key"]: int(r["df"]) for r in self._rows("SELECT key, df FROM k_terms")}

    # -- the database ---------------------------------------------------------------
    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        import psycopg

        try:
            return list(self._connections.get().execute(sql, tuple(args)).fetchall())
        except psycopg.Error as exc:
            raise KnowledgeUnavailableError(f"{self.label}: {str(exc).strip()}") from exc

    # -- Knowledge ------------------------------------------------------------------
    @property
    def n_docs(self) -> int:
        return self._n_docs

    @property
    def min_support(self) -> int:
        return self._min_df

    def phrases(self) -> Collection[str]:
        return self._phrases

    def _bitmaps(self, keys: Collection[str]) -> dict[str, FrozenBitMap | None]:
        found: dict[str, FrozenBitMap | None] = {}
        with self._lock:
            for k in keys:
                if k in self._cache:
                    self._cache.move_to_end(k)
                    found[k] = self._cache[k]
        missing = [k for k in keys if k not in found]
        if missing:
            rows = self._rows("SELECT key, postings FROM k_terms WHERE key = ANY(%s)", (missing,))
            got = {r["key"]: FrozenBitMap.deserialize(bytes(r["postings"])) for r in rows}
            with self._lock:
                for k in missing:
                    found[k] = self._cache[k] = got.get(k)
                while len(self._cache) > self._cache_terms:
                    self._cache.popitem(last=False)
        return found

    def df(self, key: str) -> int:
        return self._df.get(key, 0)

    def count(self, conjuncts: Sequence[Collection[str]]) -> int:
        if not conjuncts:
            return self._n_docs
        if len(conjuncts) == 1 and len(conjuncts[0]) == 1:
            (key,) = conjuncts[0]
            return self.df(key)
        keys = {k for c in conjuncts for k in c}
        if any(all(self._df.get(k, 0) == 0 for k in c) for c in conjuncts):
            return 0  # a conjunct no document holds
        with self._lock:
            at_hand = all(k in self._cache for k in keys if k in self._df)
        if at_hand:  # intersecting bitmaps already here costs microseconds; a round trip costs more
            return self._intersect(conjuncts)
        query = _canonical(conjuncts)
        shared = self._rows("SELECT n FROM k_counts WHERE query = %s", (query,))
        if shared:
            return int(shared[0]["n"])
        n = self._intersect(conjuncts)
        self.computed += 1
        self._rows("INSERT INTO k_counts (query, n, at) VALUES (%s, %s, %s) ON CONFLICT (query) DO NOTHING"
                   " RETURNING n", (query, n, time.time()))  # fmt: skip
        return n

    def _intersect(self, conjuncts: Sequence[Collection[str]]) -> int:
        maps = self._bitmaps({k for c in conjuncts for k in c})
        sets: list[FrozenBitMap | BitMap] = []
        for alternatives in conjuncts:
            present = [m for k in alternatives if (m := maps[k]) is not None]
            if not present:
                return 0
            sets.append(present[0] if len(present) == 1 else FrozenBitMap.union(*present))
        sets.sort(key=len)
        acc = sets[0]
        for bm in sets[1:]:
            acc = acc & bm
        return len(acc)

    def close(self) -> None:
        self._connections.close()
