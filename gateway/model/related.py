"""A second, independent source of relatedness: how near a term is to c in word vectors.

K measures a term's tie to c by the paragraphs that hold both, and so knows
nothing of a rare word whose few paragraphs happen not to name c
("sporozoites", "jaundice" for malaria in a K built without the malaria
article). Word vectors trained on another corpus generalize to such words.
Their cosine is not a probability, so it is read on the scale the paper's
line uses: a term as near to c as c itself discloses all of c (PMI = IC(c)),
a term no nearer than chance discloses nothing, and in between linearly:

    related(c; t) = IC(c) * max(0, (cos(t, c) - chance(c)) / (1 - chance(c)))

``chance(c)`` is the cosine with c that the common words of the language (the
vectors' 20,000 most frequent) reach by chance: the ``CHANCE_QUANTILE`` of
them stay below it. A word that is nearer than all but one word in a hundred
carries some evidence of c; one that is not carries none.

This estimate counts as a clue (evidence.py) beside K's own PMI, the larger
of the two, and only for an entity the text (or its thread) names: a text
about c is where its weak clues matter, and where a reader already holding
that c is one of the candidates ranks them; ordinary mail keeps K's judgement
alone. The same line and budget apply, and a clue is generalized along its
chain to the first generalization both sources find below it, never redacted.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from gateway.model.measure import BoundedCache, Measure, canon
from gateway.model.records import Entity

# Of the common words, all but this share are no nearer to c than chance.
CHANCE_QUANTILE = 0.99
# Words and phrases whose vectors a worker keeps (each 200 bytes).
VECTOR_CACHE = 4_000

Vector = npt.NDArray[np.float32]


class Vectors(Protocol):
    def vector(self, key: str) -> Vector | None:
        """The unit vector of a key (a word or phrase), None when the source does not know it."""
        ...

    def chance(self, v: Vector, quantile: float) -> float:
        """The cosine with ``v`` that the ``quantile`` of common words stay below."""
        ...


class Relatedness:
    """related(c; t) for the keys of a term, per entity, from an injected vector source."""

    def __init__(self, vectors: Vectors, *, quantile: float = CHANCE_QUANTILE) -> None:
        self.vectors = vectors
        self.quantile = quantile
        self._keys: BoundedCache[str, tuple[Vector | None]] = BoundedCache(VECTOR_CACHE)
        self._entities: BoundedCache[Entity, tuple[Vector | None, float]] = BoundedCache(256)

    def _vector(self, key: str) -> Vector | None:
        return self._keys.get(key, lambda k: (self.vectors.vector(k),))[0]

    def _entity(self, e: Entity) -> tuple[Vector | None, float]:
        def compute(e: Entity) -> tuple[Vector | None, float]:
            found = [v for k in sorted(e.keys) if (v := self.vectors.vector(k)) is not None]
            if not found:
                return None, 1.0
            mean = np.mean(found, axis=0)
            n = float(np.linalg.norm(mean))
            if n == 0:
                return None, 1.0
            v = (mean / n).astype(np.float32)
            return v, min(self.vectors.chance(v, self.quantile), 0.999)

        return self._entities.get(e, compute)

    def share(self, keys: frozenset[str], e: Entity, kind: str | None = None) -> float:
        """Where a term written as any of ``keys`` stands between chance (0) and c itself (1).

        With ``kind`` (what c generalizes to, safely: "state capital" for Denver), a term counts only by how
        much nearer it is to c than to that kind: one as near to every state capital as to Denver tells a
        reader what the generalization already does, not which one."""
        ev, chance = self._entity(e)
        if ev is None:
            return 0.0
        kv = self._vector(kind) if kind else None
        best = 0.0
        for k in keys:
            v = self._vector(k)
            if v is not None:
                floor = chance if kv is None else max(chance, float(v @ kv))
                best = max(best, (float(v @ ev) - floor) / (1.0 - chance))
        return min(best, 1.0)

    def pmis(
        self, keys: frozenset[str], entities: Sequence[Entity], kinds: Sequence[str | None] = ()
    ) -> tuple[float, ...]:
        """related(c; t) for every c, on the scale of PMI."""
        kinds = tuple(kinds) or tuple(None for _ in entities)
        return tuple(e.ic * self.share(keys, e, kind) for e, kind in zip(entities, kinds, strict=True))


class SecondOrder:
    """K's second-order co-occurrence: a rare term whose few paragraphs are full of what K ties to c.

    K holds "sporozoites" in 6 paragraphs, none of them with malaria: its first-order count cannot attest
    the tie. But those paragraphs hold "plasmodium", "mosquito", "parasite": terms K does tie to c. Let S
    be the terms of the text that K ties to c at the line on their own (its signature of c here, names
    aside). If a term relates to c through S (c and t independent given S), then

        p(c | t) ~ p(c | S) p(S | t),   so   PMI2(c; t) = PMI(c; S) + log p(S | t)

    with S read as "any of S" (one count each: K counts a conjunct of alternatives), both smoothed as
    K's PMI is. It is used only where K's own count could not have shown the tie: when the number of
    paragraphs the estimate expects to hold both, n(t) p(c | t), is below the ``min_support`` K needs to
    attest a clue. No new threshold: the estimate meets the same line, floor and budget.
    """

    def __init__(self, measure: Measure) -> None:
        self.measure = measure
        self._signature: dict[Entity, tuple[frozenset[str], float, float]] = {}
        self._values: dict[tuple[frozenset[str], Entity], float] = {}

    def read(self, signature: Mapping[Entity, Collection[str]]) -> None:
        """A new text: each c's signature S (keys of the text K ties to c at the line)."""
        self._values.clear()
        self._signature.clear()
        m = self.measure
        est, k = m.estimator, m.knowledge
        for e, keys in signature.items():
            s = frozenset(keys)
            if not s:
                continue
            n_s = m.count((s,))
            n_cs = m.count(canon((s, e.keys)))
            self._signature[e] = (s, est.pmi(k, e.n_docs, n_s, n_cs), n_s / k.n_docs)

    def pmi(self, keys: frozenset[str], e: Entity) -> float:
        found = self._signature.get(e)
        if found is None:
            return 0.0
        cache_key = (keys, e)
        value = self._values.get(cache_key)
        if value is None:
            value = self._values[cache_key] = self._compute(keys, e, *found)
        return value

    def _compute(self, keys: frozenset[str], e: Entity, s: frozenset[str], pmi_cs: float, p_s: float) -> float:
        if keys & s or pmi_cs <= 0:
            return 0.0
        m = self.measure
        est = m.estimator
        n_t = m.count((keys,))
        if n_t == 0:
            return 0.0
        n_ts = m.count(canon((keys, s)))
        p_s_given_t = (n_ts + est.prior_weight * p_s) / (n_t + est.prior_weight)
        estimate = pmi_cs + math.log(p_s_given_t)
        p_c_given_t = math.exp(estimate) * e.n_docs / m.knowledge.n_docs
        if n_t * p_c_given_t >= est.min_support:
            return 0.0  # K's own count could show this tie: its first-order PMI stands
        return max(estimate, 0.0)
