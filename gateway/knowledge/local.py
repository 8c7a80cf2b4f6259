"""The embedded K: a local co-occurrence index, read into memory.

Posting lists stay varint-coded until a term is first asked for; then they
become a Roaring bitmap, kept in a bounded LRU. Counting is an intersection of
bitmaps (unions first for the alternatives of one conjunct).
"""

from __future__ import annotations

import array
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
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
        self._df = _document_frequencies(data.postings, data.offsets)
        self._cache: OrderedDict[int, FrozenBitMap] = OrderedDict()
        self._unions: OrderedDict[frozenset[str], FrozenBitMap] = OrderedDict()
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

    def __len__(self) -> int:
        return len(self._vocab)

    def items(self) -> Iterator[tuple[str, FrozenBitMap]]:
        """Every term with its documents (decoded one at a time, not cached): for copying K elsewhere."""
        for i, key in enumerate(self._vocab):
            start, end = int(self._offsets[i]), int(self._offsets[i + 1])
            yield key, FrozenBitMap(array.array("I", decode_gaps(self._postings[start:end]).tobytes()))

    def df(self, key: str) -> int:
        i = self._ids.get(key)
        return 0 if i is None else int(self._df[i])

    def _bitmap(self, i: int) -> FrozenBitMap:
        with self._lock:
            bm = self._cache.get(i)
            if bm is not None:
                self._cache.move_to_end(i)
                return bm
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        # pyroaring copies an array.array in C; a numpy array it iterates in Python.
        bm = FrozenBitMap(array.array("I", decode_gaps(self._postings[start:end]).tobytes()))
        with self._lock:
            self._cache[i] = bm
            if len(self._cache) > self._cache_terms:
                self._cache.popitem(last=False)
        return bm

    def _conjunct(self, alternatives: Collection[str]) -> FrozenBitMap | BitMap | None:
        if len(alternatives) == 1:
            (key,) = alternatives
            i = self._ids.get(key)
            return None if i is None else self._bitmap(i)
        # Entities are unions of their names and are asked for again and again.
        cache_key = frozenset(alternatives)
        with self._lock:
            found = self._unions.get(cache_key)
            if found is not None:
                self._unions.move_to_end(cache_key)
                return found
        maps = [self._bitmap(i) for k in alternatives if (i := self._ids.get(k)) is not None]
        if not maps:
            return None
        union = FrozenBitMap.union(*maps)
        with self._lock:
            self._unions[cache_key] = union
            if len(self._unions) > 256:
                self._unions.popitem(last=False)
        return union

    def count(self, conjuncts: Sequence[Collection[str]]) -> int:
        if len(conjuncts) == 1 and len(conjuncts[0]) == 1:
            (key,) = conjuncts[0]
            return self.df(key)
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


def _document_frequencies(postings: bytes, offsets: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint32]:
    """Posting-list lengths without decoding: one varint ends at each byte below 0x80."""
    ends = np.frombuffer(postings, dtype=np.int8) >= 0  # a byte below 0x80 is non-negative as int8
    if len(ends) == 0:
        return np.zeros(len(offsets) - 1, dtype=np.uint32)
    starts = np.minimum(offsets[:-1].astype(np.int64), len(ends) - 1)
    counts = np.add.reduceat(ends, starts, dtype=np.uint32)
    # reduceat gives ends[start] for an empty list (start == next start); those have no postings.
    counts[offsets[1:] == offsets[:-1]] = 0
    return counts.astype(np.uint32)
