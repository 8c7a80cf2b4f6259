"""The embedded K: a local co-occurrence index, memory-mapped (``prepared``) and shared.

Posting lists stay in the mapped file until a term is first asked for; then they
become a Roaring bitmap, kept in a bounded LRU. Counting is an intersection of
bitmaps (unions first for the alternatives of one conjunct).
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap, FrozenBitMap

from gateway.errors import IndexFormatError
from gateway.knowledge.prepared import open_prepared
from gateway.mapped import KeyTable, MappedFile
from gateway.model.terms import MAX_PHRASE_TOKENS, NORMALIZATION_VERSION

DEFAULT_INDEX_NAME = "wikipedia-20k.sgidx"
_Item = TypeVar("_Item", bound=np.generic)


def default_index_path() -> Path:
    return Path(str(resources.files("gateway") / "data" / DEFAULT_INDEX_NAME))


class LocalIndex:
    def __init__(self, path: Path, *, cache_bytes: int = 12 << 20, cache_dir: Path | None = None) -> None:
        mapped, header = open_prepared(path, cache_dir=cache_dir)
        if header.get("normalization") != NORMALIZATION_VERSION:
            raise IndexFormatError(
                f"{path} was built with term normalization v{header.get('normalization')}, "
                f"this sanigate uses v{NORMALIZATION_VERSION}; rebuild it with 'sanigate index build'"
            )
        self.path = path
        self.header: dict[str, Any] = header
        self._n_docs = int(str(header["n_docs"]))
        self._mapped = mapped
        self.mapped_path = mapped.path
        self._terms = mapped.key_table("terms")
        self._bounds = self._terms.value_bounds()
        self._cache: OrderedDict[int, FrozenBitMap] = OrderedDict()
        self._unions: OrderedDict[frozenset[str], FrozenBitMap] = OrderedDict()
        # An entity's co-occurrence with every term, once computed (cooccurrences): a count of
        # (term, entity) is then a lookup, the same number the intersection would give.
        self._cooc: dict[frozenset[str], npt.NDArray[np.uint32]] = {}
        # Decoded bitmaps are the worker's own memory (the mapped postings are shared): bounded by size,
        # since one frequent term's bitmap weighs as much as a thousand rare ones'.
        self._cache_bytes = cache_bytes
        self._cached_bytes = 0
        self._lock = threading.Lock()
        self._phrases = MappedPhrases(mapped, self._terms)

    @property
    def n_docs(self) -> int:
        return self._n_docs

    @property
    def min_support(self) -> int:
        return int(self.header.get("min_df", 1))

    def phrases(self) -> MappedPhrases:
        return self._phrases

    def __contains__(self, key: object) -> bool:
        return key in self._terms

    def __len__(self) -> int:
        return len(self._terms)

    def term_id(self, key: str) -> int:
        """The key's id in K (-1 if K lacks it): ids index ``documents`` and ``df_of``."""
        return self._terms.id_of(key)

    def items(self) -> Iterator[tuple[str, FrozenBitMap]]:
        """Every term with its documents (decoded one at a time, not cached): for copying K elsewhere."""
        for i in range(len(self._terms)):
            yield self._terms.key(i), self._decode(i)

    def df(self, key: str) -> int:
        i = self._terms.id_of(key)
        return 0 if i < 0 else (self._bounds[i + 1] - self._bounds[i]) >> 2

    def documents(self) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]]:
        """Every posting list at once, for whole-K computations: ids, and each term's bounds in them."""
        ids = np.frombuffer(self._mapped.section("terms.vals"), dtype=np.uint32)
        return ids, np.frombuffer(self._bounds, dtype=np.uint64) // 4

    def document_frequencies(self) -> npt.NDArray[np.uint32]:
        return self.shared_table(
            "df", np.uint32, lambda: (np.diff(np.frombuffer(self._bounds, dtype=np.uint64)) // 4).astype(np.uint32)
        )

    def shared_table(
        self, name: str, dtype: type[_Item], compute: Callable[[], npt.NDArray[_Item]]
    ) -> npt.NDArray[_Item]:
        """A table of one value per term, computed from K once and kept in a file beside it, mapped read-only: its
        pages are shared by every worker, as K's are, instead of being each worker's own memory (the clean-text
        test's tables: 5 MB a worker). ``name`` says everything the table depends on besides K; the file's name
        holds it with K's own size and time, so a rebuilt K is never read with an older table. Computed in memory
        where the file can be neither read nor written."""
        path = self._mapped.path
        if path is None:
            return compute()
        try:
            st = path.stat()
        except OSError:
            return compute()
        tag = f"{name}\n{st.st_size}\n{st.st_mtime_ns}\n{np.dtype(dtype).str}"
        digest = hashlib.sha256(tag.encode("utf-8")).hexdigest()[:20]
        cache = path.with_name(f"{path.stem}.table-{digest}.bin")
        try:
            found = np.memmap(cache, dtype=dtype, mode="r")
            if len(found) == len(self._terms):
                with contextlib.suppress(OSError):
                    os.utime(cache)  # in use: the newest are the ones kept (_prune_tables)
                return _plain(found)
        except (OSError, ValueError):
            pass
        table = compute()
        tmp = cache.with_name(f"{cache.name}.tmp{os.getpid()}")
        try:
            table.tofile(tmp)
            tmp.replace(cache)
            found = np.memmap(cache, dtype=dtype, mode="r")
        except (OSError, ValueError):
            tmp.unlink(missing_ok=True)  # a read-only K: kept in memory, computed again by the next process
            return table
        _prune_tables(path)
        return _plain(found) if len(found) == len(table) else table

    def cooccurrences(self, keys: Collection[str]) -> npt.NDArray[np.uint32]:
        """For every term id, the documents holding it and any of ``keys``: one pass over all postings.

        Kept beside the mapped K (named by the keys), so each entity's pass is made once, not per worker.
        """
        present = sorted(k for k in keys if self._terms.id_of(k) >= 0)
        cache = None
        if self._mapped.path is not None:
            digest = hashlib.sha256("\n".join(present).encode("utf-8")).hexdigest()[:20]
            cache = self._mapped.path.with_name(f"{self._mapped.path.stem}.cooc-{digest}.u32")
            try:
                found = np.memmap(cache, dtype=np.uint32, mode="r")  # shared by the workers, like K
                if len(found) == len(self._terms):
                    self._cooc[frozenset(keys)] = found
                    return found
            except (OSError, ValueError):
                pass
        mask = np.zeros(self._n_docs, dtype=bool)
        for k in present:
            mask[np.frombuffer(self._terms.value(self._terms.id_of(k)), dtype=np.uint32)] = True
        ids, bounds = self.documents()
        counts = np.zeros(len(self._terms), dtype=np.uint32)
        if len(ids):
            starts = np.minimum(bounds[:-1], len(ids) - 1).astype(np.int64)
            counts = np.add.reduceat(mask[ids], starts, dtype=np.uint32)
            counts[bounds[1:] == bounds[:-1]] = 0
        if cache is not None:
            tmp = cache.with_name(f"{cache.name}.tmp{os.getpid()}")
            try:
                counts.tofile(tmp)
                tmp.replace(cache)
            except OSError:
                tmp.unlink(missing_ok=True)  # a read-only cache: computed again next time
        self._cooc[frozenset(keys)] = counts
        return counts

    def _cooc_count(self, single: Collection[str], table: npt.NDArray[np.uint32]) -> int:
        (key,) = single
        i = self._terms.id_of(key)
        return 0 if i < 0 else int(table[i])

    def _decode(self, i: int) -> FrozenBitMap:
        # pyroaring copies an array.array in C; anything else it iterates in Python.
        return FrozenBitMap(array.array("I", self._terms.value(i).tobytes()))

    def _bitmap(self, i: int) -> FrozenBitMap:
        with self._lock:
            bm = self._cache.get(i)
            if bm is not None:
                self._cache.move_to_end(i)
                return bm
        bm = self._decode(i)
        with self._lock:
            if i not in self._cache:
                self._cache[i] = bm
                self._cached_bytes += _bitmap_bytes(bm)
            while self._cached_bytes > self._cache_bytes and len(self._cache) > 1:
                _key, old = self._cache.popitem(last=False)
                self._cached_bytes -= _bitmap_bytes(old)
        return bm

    def _conjunct(self, alternatives: Collection[str]) -> FrozenBitMap | BitMap | None:
        if len(alternatives) == 1:
            (key,) = alternatives
            i = self._terms.id_of(key)
            return None if i < 0 else self._bitmap(i)
        # Entities are unions of their names and are asked for again and again.
        cache_key = frozenset(alternatives)
        with self._lock:
            found = self._unions.get(cache_key)
            if found is not None:
                self._unions.move_to_end(cache_key)
                return found
        maps = [self._bitmap(i) for k in alternatives if (i := self._terms.id_of(k)) >= 0]
        if not maps:
            return None
        union = FrozenBitMap.union(*maps)
        with self._lock:
            self._unions[cache_key] = union
            if len(self._unions) > 64:  # an entity's union is asked again and again; a chain step's rarely
                self._unions.popitem(last=False)
        return union

    def count(self, conjuncts: Sequence[Collection[str]]) -> int:
        if len(conjuncts) == 1 and len(conjuncts[0]) == 1:
            (key,) = conjuncts[0]
            return self.df(key)
        if len(conjuncts) == 2 and self._cooc:
            a, b = conjuncts
            if len(a) == 1 and (table := self._cooc.get(b if isinstance(b, frozenset) else frozenset(b))) is not None:
                return self._cooc_count(a, table)
            if len(b) == 1 and (table := self._cooc.get(a if isinstance(a, frozenset) else frozenset(a))) is not None:
                return self._cooc_count(b, table)
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


# Shared tables kept beside a K (3.4 MB each for the shipped K: one per policy's entities and alpha, and K's
# document frequencies): every policy a gateway loads, and those of reloads and evaluations, without filling
# the disk with one file per alpha ever tried.
MAX_SHARED_TABLES = 32


def _prune_tables(path: Path) -> None:
    """Remove all but the ``MAX_SHARED_TABLES`` most recently used tables beside ``path``. A process that has one
    mapped keeps reading it (the mapping holds the file); a worker started later computes it again."""
    tables = []
    for f in path.parent.glob(f"{path.stem}.table-*.bin"):
        with contextlib.suppress(OSError):
            tables.append((f.stat().st_mtime_ns, f))
    tables.sort(reverse=True)
    for _mtime, f in tables[MAX_SHARED_TABLES:]:
        f.unlink(missing_ok=True)


def _plain(mapped: np.memmap[Any, np.dtype[_Item]]) -> npt.NDArray[_Item]:
    """The mapped table as a plain array over the same pages: np.memmap's indexing is a Python method, and the
    clean-text test reads one element at a time, for every term of every text."""
    return mapped.view(np.ndarray)


def _bitmap_bytes(bm: FrozenBitMap) -> int:
    st = bm.get_statistics()
    return 64 + int(st["n_bytes_array_containers"] + st["n_bytes_run_containers"] + st["n_bytes_bitset_containers"])


class MappedPhrases(Collection[str]):
    """K's multi-word keys, read from the mapped file: a ``PhraseSource`` for ``PhraseSet``."""

    def __init__(self, mapped: MappedFile, terms: KeyTable) -> None:
        self._terms = terms
        self._prefixes = mapped.key_table("phrase_prefixes")
        raw = bytes(mapped.section("first_words")).decode("utf-8")
        self.first_words: frozenset[str] = frozenset(raw.split("\n")) if raw else frozenset()

    def is_phrase(self, key: str) -> bool:
        return " " in key and key.count(" ") < MAX_PHRASE_TOKENS and self._terms.id_of(key) >= 0

    def is_prefix(self, key: str) -> bool:
        return self._prefixes.id_of(key) >= 0

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and " " in key and self._terms.id_of(key) >= 0

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._terms if " " in k)

    def __len__(self) -> int:
        return sum(1 for _ in self)
