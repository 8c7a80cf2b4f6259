"""A second source of relatedness that reaches terms K's first-order counts cannot judge.

K measures a term's tie to c by the paragraphs that hold both, and so knows nothing of a rare word
whose few paragraphs happen not to name c ("sporozoites", "jaundice" for malaria in a K built without
the malaria article). Two second sources were measured against the MiniLM attacker on the 22 dev topics
(docs/evaluation.md, "fifth pass"): GloVe word vectors (cosine to c on the paper's scale, beyond chance)
and K's own second-order co-occurrence, below. The vectors lowered words that are *like* c (other cities
for a city, other diseases for a disease) as much as words that point *at* c, and added nothing on top of
the second order; they would also have made the GloVe attacker no longer independent. The second order
is what the engine uses.

It counts as a clue (evidence.py) beside K's own PMI, the larger of the two, and only for an entity the
text (or its thread) names: a text about c is where its weak clues matter; ordinary mail keeps K's
first-order judgement alone. The same line, floor and budget apply, and a clue is generalized along its
chain to the first generalization that brings its paragraph below the line, never redacted.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

from gateway.model.measure import Measure, canon
from gateway.model.records import Entity

# A term of the text belongs to c's signature when its own PMI reaches this share of the line IC(c)/alpha:
# the line itself, the terms the paper calls risky.
SIGNATURE_SHARE = 1.0


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

    def __init__(self, measure: Measure, *, share: float = SIGNATURE_SHARE) -> None:
        self.measure = measure
        self.share = share
        # Per c, each signature the text is judged with: its own, and its own joined to its thread's.
        self._signature: dict[Entity, list[tuple[frozenset[str], float, float]]] = {}
        self._values: dict[tuple[frozenset[str], Entity], float] = {}
        # Counts the texts read: what was derived from one signature (evidence.py's clues) is valid for it only.
        self.generation = 0
        # Counts the texts judged (``new_text``): what does not depend on a signature is kept for a text's rounds.
        self.texts = 0
        self.own: dict[str, tuple[str, ...]] = {}  # the last text's own signature, per entity name
        self.lent: dict[Entity, frozenset[str]] = {}  # the terms its thread added to it

    def new_text(self) -> None:
        """A new text: no signature until its first round reads one."""
        self.clear()
        self.texts += 1

    def clear(self) -> None:
        self._values.clear()
        self._signature.clear()
        self.generation += 1
        self.own = {}
        self.lent = {}

    def read(
        self, signature: Mapping[Entity, Collection[str]], thread: Mapping[str, Collection[str]] | None = None
    ) -> None:
        """A new text: each c's signature S (keys of the text K ties to c at the line), and the signature its
        thread's earlier messages had (``thread``, by entity name; memory.py).

        With a thread's signature the text is judged with both S and S joined to the thread's, a term by the
        larger estimate: a larger S may dilute p(c | S), and the memory only makes a message stricter.
        """
        self.clear()
        thread = thread or {}
        for e, keys in signature.items():
            s = frozenset(keys)
            if s:
                self.own[e.name] = tuple(sorted(s))
            joined = s | frozenset(thread.get(e.name, ()))
            if joined != s:
                self.lent[e] = joined - s
            self._signature[e] = [self._of(s, e) for s in dict.fromkeys((s, joined)) if s]

    def _of(self, s: frozenset[str], e: Entity) -> tuple[frozenset[str], float, float]:
        m = self.measure
        est, k = m.estimator, m.knowledge
        n_s = m.count((s,))
        n_cs = m.count(canon((s, e.keys)))
        return s, est.pmi(k, e.n_docs, n_s, n_cs), n_s / k.n_docs

    def pmi(self, keys: frozenset[str], e: Entity) -> float:
        """PMI2(c; t) of a term written as any of ``keys``, in the text last read; 0 where it does not apply."""
        found = self._signature.get(e)
        if not found:
            return 0.0
        cache_key = (keys, e)
        value = self._values.get(cache_key)
        if value is None:
            value = self._values[cache_key] = max(self._compute(keys, e, *f) for f in found)
        return value

    def by_thread(self, keys: frozenset[str], e: Entity) -> bool:
        """Whether the thread's signature raised this term's estimate above what the text's own S gives."""
        found = self._signature.get(e)
        if e not in self.lent or not found:
            return False
        own = self._compute(keys, e, *found[0]) if e.name in self.own else 0.0
        return self.pmi(keys, e) > own

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
        if p_s_given_t <= 0:
            return 0.0
        estimate = pmi_cs + math.log(p_s_given_t)
        p_c_given_t = math.exp(estimate) * e.n_docs / m.knowledge.n_docs
        if n_t * p_c_given_t >= est.min_support:
            return 0.0  # K's own count could show this tie: its first-order PMI stands
        return max(estimate, 0.0)
