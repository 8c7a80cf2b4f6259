"""How much a term or group discloses of each entity, as K counts it (eq. 1-3, Definition 6).

Every number the engine computes from K goes through one ``Measure``, and
every one of them is cached the same way: a bounded, thread-safe map that
forgets its oldest entries first.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from gateway.model.knowledge import Estimator, Knowledge
from gateway.model.records import Entity
from gateway.model.terms import STOPWORDS

Conjuncts = tuple[frozenset[str], ...]
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def canon(conjuncts: Iterable[frozenset[str]]) -> Conjuncts:
    """Order-free key for a count: the same set of conjuncts, the same key."""
    return tuple(sorted(conjuncts, key=hash))


def compact(conjuncts: Conjuncts) -> str:
    """One string for a count's conjuncts, order-free, as a cache key: a fifth of the memory of the
    tuple of frozensets it stands for (keys hold no control characters: they are words)."""
    if len(conjuncts) == 1 and len(conjuncts[0]) == 1:
        return next(iter(conjuncts[0]))
    return "\x1e".join(sorted(next(iter(c)) if len(c) == 1 else "\x1f".join(sorted(c)) for c in conjuncts))


# Entries per cache of a worker's Measure. Replaying the keys 1,000 archive messages asked
# (us-medical): hit rates at these bounds are within 0.01 of an unbounded cache's (verdicts 0.822,
# ICs 0.901; counts 0.594 at 50,000 against 0.604), and a worker's caches stay a few MB however long
# it runs. Counts: 20,000 (about 110 bytes each), where a worker's CPU over bench_gateway's messages
# did not change (most single-term counts come from the prefilter's table, not this cache).
COUNT_CACHE = 20_000
VERDICT_CACHE = 20_000
IC_CACHE = 20_000


class BoundedCache(Generic[K, V]):
    """The engine's one cache policy: at most ``size`` entries, the oldest forgotten first."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: dict[K, V] = {}
        self._lock = threading.Lock()

    def peek(self, key: K) -> V | None:
        """The value kept for ``key``, if any: a hit without building the caller's ``compute``."""
        return self._data.get(key)

    def get(self, key: K, compute: Callable[[K], V]) -> V:
        found = self._data.get(key)
        if found is not None:
            return found
        value = compute(key)
        with self._lock:
            if len(self._data) >= self._size:
                # dicts keep insertion order: drop the oldest tenth in one go
                for old in list(itertools.islice(self._data, max(1, self._size // 10))):
                    self._data.pop(old, None)
            self._data[key] = value
        return value

    def __len__(self) -> int:
        return len(self._data)


@dataclass(frozen=True, slots=True)
class Verdict:
    """How much a term (or group) discloses of the entity it discloses most."""

    n: int
    entity: Entity | None
    pmi: float
    threshold: float
    ratio: float  # pmi / threshold; >= 1 is risky

    @property
    def risky(self) -> bool:
        return self.ratio >= 1.0


def name_verdict(e: Entity, alpha: float) -> Verdict:
    """A name of c discloses c entirely: PMI = IC(c)."""
    return Verdict(e.n_docs, e, e.ic, e.ic / alpha, alpha)


class GroupBound(Protocol):
    """An upper bound on a group's risk from its count alone (prefilter.CleanTextFilter gives one)."""

    def may_be_risky(
        self, conjuncts: Sequence[frozenset[str]], n_t: int, entities: Sequence[Entity], alpha: float
    ) -> bool: ...

    def term_counts(self, key: str, entities: Sequence[Entity], alpha: float) -> tuple[int, list[int]] | None:
        """n(t) and n(c,t) for each of ``entities``, if known without counting (None: count them)."""
        ...

    def max_count(self, conjuncts: Sequence[frozenset[str]]) -> int:
        """At least the documents holding every conjunct (each conjunct's own, at most)."""
        ...


class Measure:
    def __init__(
        self,
        knowledge: Knowledge,
        estimator: Estimator,
        *,
        bound: GroupBound | None = None,
    ) -> None:
        self.knowledge = knowledge
        self.estimator = estimator
        self._bound = bound
        self._counts: BoundedCache[str, int] = BoundedCache(COUNT_CACHE)
        self._ics: BoundedCache[str, float] = BoundedCache(IC_CACHE)
        self._verdicts: BoundedCache[tuple[str, int, float], Verdict] = BoundedCache(VERDICT_CACHE)
        self._entity_sets: dict[tuple[Entity, ...], int] = {}
        self._numbers = itertools.count()
        self._last_set: tuple[Sequence[Entity], int] | None = None

    @property
    def min_support(self) -> int:
        return self.estimator.min_support

    # Each of these is asked about a thousand times a message, nearly always of a kept answer: a hit is read
    # first (``peek``), and the closure that computes a miss is built only for a miss.
    def count(self, conjuncts: Conjuncts) -> int:
        key = compact(conjuncts)
        found = self._counts.peek(key)
        if found is not None:
            return found
        return self._counts.get(key, lambda _k: self.knowledge.count(conjuncts))

    def ic(self, key: str) -> float:
        found = self._ics.peek(key)
        if found is not None:
            return found
        return self._ics.get(key, lambda k: self.estimator.ic(self.knowledge, self.count((frozenset({k}),))))

    def verdict(self, conjuncts: Conjuncts, entities: Sequence[Entity], alpha: float) -> Verdict:
        key = (compact(conjuncts), self._entity_set(entities), alpha)
        found = self._verdicts.peek(key)
        if found is not None:
            return found
        return self._verdicts.get(key, lambda _k: self._verdict(conjuncts, entities, alpha))

    def _entity_set(self, entities: Sequence[Entity]) -> int:
        """A number for a set of entities, never given to another: a verdict's key. Hashing the entities (a
        dataclass's hash each) for every verdict asked cost more than the rest of a kept verdict's lookup, and
        a text asks with the same entities object all through its rounds."""
        last = self._last_set
        if last is not None and last[0] is entities:
            return last[1]
        value = tuple(entities)
        number = self._entity_sets.get(value)
        if number is None:
            if len(self._entity_sets) >= 64:  # policies come and go with reloads; numbers are not reused
                self._entity_sets.clear()
            number = self._entity_sets[value] = next(self._numbers)
        if isinstance(entities, tuple):  # immutable: its identity stands for its value
            self._last_set = (entities, number)
        return number

    def _verdict(self, conjuncts: Conjuncts, entities: Sequence[Entity], alpha: float) -> Verdict:
        known = None
        if self._bound is not None and len(conjuncts) == 1 and len(conjuncts[0]) == 1:
            # A single term: its counts are read from the policy's table (the fast path's), not counted.
            known = self._bound.term_counts(next(iter(conjuncts[0])), entities, alpha)
        n_t = known[0] if known is not None else self.count(conjuncts)
        best = Verdict(n_t, None, float("-inf"), float("inf"), float("-inf"))
        for j, e in enumerate(entities):
            n_ct = known[1][j] if known is not None else self.count(canon((*conjuncts, e.keys)))
            pmi = self.estimator.pmi(self.knowledge, e.n_docs, n_t, n_ct)
            threshold = e.ic / alpha
            ratio = pmi / threshold
            if ratio > best.ratio:
                best = Verdict(n_t, e, pmi, threshold, ratio)
        return best

    def scarce(self, conjuncts: Conjuncts) -> bool:
        """Held by too few documents to be judged as a group (n(T) < group_min_support)?

        A conjunct's own documents bound the group's: a rare member settles it without an intersection.
        """
        gms = self.estimator.group_min_support
        if self._bound is not None and self._bound.max_count(conjuncts) < gms:
            return True
        return self.count(conjuncts) < gms

    def risky_group(self, conjuncts: Conjuncts, entities: Sequence[Entity], alpha: float) -> Verdict | None:
        """A group's verdict when it is judged (held by >= group_min_support documents) and risky, else None.

        The entity counts (an intersection each) are asked only when the group's own count and
        the bound leave room for risk: most groups of a long text end at one intersection.
        """
        if self.scarce(conjuncts):
            return None
        n_t = self.count(conjuncts)
        if self._bound is not None and not self._bound.may_be_risky(conjuncts, n_t, entities, alpha):
            return None
        v = self.verdict(conjuncts, entities, alpha)
        return v if v.risky else None

    def term(self, key: str, entities: Sequence[Entity], alpha: float) -> Verdict:
        return self.verdict((frozenset({key}),), entities, alpha)

    def riskiest_word(
        self, key: str, names: dict[str, Entity], entities: Sequence[Entity], alpha: float
    ) -> Verdict | None:
        """For a phrase: the verdict of its riskiest word, if that word is risky."""
        if " " not in key:
            return None
        worst: Verdict | None = None
        for word in key.split(" "):
            if word in STOPWORDS:
                continue
            if word in names:
                return name_verdict(names[word], alpha)
            v = self.term(word, entities, alpha)
            if v.n >= self.min_support and v.risky and (worst is None or v.ratio > worst.ratio):
                worst = v
        return worst
