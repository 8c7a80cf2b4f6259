"""The embedded K: a local co-occurrence index, read into memory.

Posting lists stay varint-coded until a term is first asked for; then they
become a Roaring bitmap, kept in a bounded LRU. Counting is an intersection of
bitmaps (unions first for the alternatives of one conjunct).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pyroaring import BitMap, FrozenBitMap

from gateway.errors import IndexFormatError
from gateway.knowledge.index_format import decode_gaps, read_index
from gateway.model.terms import NORMALIZATION_VERSION

DEFAULT_INDEX_NAME = "wikipedia-20k.sgidx"


def default_index_path() -> Path:
    return Path(str(resources.files("gateway") / "data" / DEFAULT_INDEX_NAME))


class LocalIndex:
    def __init__(self, path: Path, *, cache_terms: int = 50_000) -> None:
        data = read_index(path)
        if data.header.get("normalization") != NORMALIZATION_VERSION:
            raise IndexFormatError(
                f"{path} was built with term normalization v{data.header.get('normalization')}, "
                f"this sanigate uses v{NORMALIZATION_VERSION}; rebuild it with 'sanigate index build'"
            )
        self.path = path
        self.header: dict[str, Any] = data.header
        self._n_docs = int(data.header["n_docs"])
        self._ids = {key: i for i, key in enumerate(data.vocab)}
        self._vocab = data.vocab
        self._offsets = data.offsets
        self._postings = memoryview(data.postings)
        self._cache: OrderedDict[int, FrozenBitMap] = OrderedDict()
        self._cache_terms = cache_terms
        self._lock = threading.Lock()
        self._phrases: frozenset[str] | None = None

    @property
    def n_docs(self) -> int:
        return self._n_docs

    @property
    def min_support(self) -> int:
        return int(self.header.get("min_df", 1))

    def phrases(self) -> Collection[str]:
        if self._phrases is None:
            self._phrases = frozenset(k for k in self._vocab if " " in k)
        return self._phrases

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def df(self, key: str) -> int:
        i = self._ids.get(key)
        return 0 if i is None else len(self._bitmap(i))

    def _bitmap(self, i: int) -> FrozenBitMap:
        with self._lock:
            bm = self._cache.get(i)
            if bm is not None:
                self._cache.move_to_end(i)
                return bm
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        bm = FrozenBitMap(decode_gaps(self._postings[start:end]))
        with self._lock:
            self._cache[i] = bm
            if len(self._cache) > self._cache_terms:
                self._cache.popitem(last=False)
        return bm

    def _conjunct(self, alternatives: Collection[str]) -> FrozenBitMap | BitMap | None:
        maps = [self._bitmap(i) for k in alternatives if (i := self._ids.get(k)) is not None]
        if not maps:
            return None
        if len(maps) == 1:
            return maps[0]
        return BitMap.union(*maps)

    def count(self, conjuncts: Sequence[Collection[str]]) -> int:
        maps = []
        for alternatives in conjuncts:
            bm = self._conjunct(alternatives)
            if bm is None:
                return 0
            maps.append(bm)
        if not maps:
            return self._n_docs
        if len(maps) == 1:
            return len(maps[0])
        maps.sort(key=len)
        if len(maps) == 2:
            return int(maps[0].intersection_cardinality(maps[1]))
        acc = maps[0] & maps[1]
        for bm in maps[2:-1]:
            acc &= bm
        return int(acc.intersection_cardinality(maps[-1]))
