"""The knowledge source K and the information measures computed from it.

K answers one question: in how many documents do all of these terms occur?
Each argument is a set of alternatives (a term and its lexicalizations), so an
entity is counted as the union of its names, as the paper asks for.

Small counts are the main risk of a corpus-sized K: a term seen once, next to
c, would have PMI(c;t) = IC(c) and be "unequivocal". We estimate p(c|T) with a
Beta prior centred on p(c) (independence) worth ``prior_weight`` documents:

    p^(c|T) = (n(c,T) + m p(c)) / (n(T) + m)

which is the posterior mean under that prior. With many documents it is the
plain ratio; with few it is pulled towards "no association". Terms seen in
fewer than ``min_support`` documents are not judged by counts at all: they are
*unknown to K* and the decision layer treats them by context.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

TermSet = Collection[str]
"""One conjunct of a count: a document matches if it holds any of these keys."""


class Knowledge(Protocol):
    @property
    def n_docs(self) -> int: ...

    def count(self, conjuncts: Sequence[TermSet]) -> int:
        """Documents holding, for every conjunct, at least one of its keys."""
        ...

    def phrases(self) -> Collection[str]:
        """Multi-word keys K counts as terms (so the text can find them)."""
        ...


DEFAULT_PRIOR_WEIGHT = 10.0
DEFAULT_MIN_SUPPORT = 3
# A group is a conjunction: its count shrinks fast, and a handful of documents
# holding two common words next to c is noise, not an inference.
DEFAULT_GROUP_MIN_SUPPORT = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimator:
    prior_weight: float = DEFAULT_PRIOR_WEIGHT
    min_support: int = DEFAULT_MIN_SUPPORT
    group_min_support: int = DEFAULT_GROUP_MIN_SUPPORT

    def ic(self, k: Knowledge, n_t: int) -> float:
        """IC(t) = -log p(t); add-one for terms K has not seen (finite utility)."""
        return -math.log((n_t + 1) / (k.n_docs + 1))

    def pmi(self, k: Knowledge, n_c: int, n_t: int, n_ct: int) -> float:
        """Smoothed PMI(c;T) = log p^(c|T) / p(c)."""
        n = k.n_docs
        p_c = n_c / n
        if n_t + self.prior_weight <= 0 or n_c == 0:
            return -math.inf
        p_c_given_t = (n_ct + self.prior_weight * p_c) / (n_t + self.prior_weight)
        return math.log(p_c_given_t / p_c) if p_c_given_t > 0 else -math.inf

    def raw_pmi(self, k: Knowledge, n_c: int, n_t: int, n_ct: int) -> float:
        """The paper's unsmoothed PMI (eq. 2/3); -inf when they never co-occur."""
        if n_ct == 0 or n_t == 0:
            return -math.inf
        return math.log(n_ct * k.n_docs / (n_c * n_t))
