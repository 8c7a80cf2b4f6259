"""The fast path for clean text: most messages have nothing near the line.

For a policy (its entities and alpha) we compute, once, the risk ratio
PMI(c;t) / (IC(c)/alpha) of every term of K against the entity it discloses
most, from one pass over K's postings per entity (``WholeKnowledge``). A text
is *clean* when
  * none of its terms, nor any word of its phrases, reaches ratio 1, is a
    name of an entity or on the deny list, and (under ``unknown = "redact"``)
    none is unknown to K;
  * no two terms of one sentence that reach ``group_floor`` can form a risky
    group, by a bound that needs no intersection: a group's documents with c
    are at most the fewer of its members' (n(c,T) <= x = min n(c,t)), it is
    judged only in >= ``group_min_support`` documents, and the smoothed
    p(c|T) = (n(c,T) + m p(c)) / (n(T) + m) is then at most
    (x + m p(c)) / (max(group_min_support, x) + m), which grows with x, so
    a triple is bounded by any of its pairs.
  * no paragraph's evidence (evidence.py: the sum of the PMI of its clues,
    with a stream's joined terms) reaches ``evidence_budget`` times the
    threshold, computed exactly from the same table.
Then the full engine would change nothing, by construction: a term is risky
only at ratio >= 1, by name or by the deny list; a phrase by a word at ratio
>= 1 or a name; groups are formed only of terms at ratio >= group_floor; an
unknown term is redacted (``context``) only near a risky one. The text comes
back unchanged with no decisions, and rebuilding and verification are skipped.
``tests/test_prefilter.py`` checks the property against the full engine.

A stream's remembered terms join every sentence's groups, and the bound is loose for them: a list's everyday
words each co-occur with c often enough that no pair with them is cleared, though nearly all such texts come out
clean (a quarter of the archive's messages). For a text clean alone (``Clean.MEMORY``) the engine's rounds without
the memory would find nothing, so its first round with the memory adds only the memory's groups: the engine asks
those exactly (``Detector.first_groups_risky``) instead of running two rounds. A text with no term risky alone
whose own pairs the bound cannot clear (``Clean.GROUPS``) has its first round's groups asked the same way, its own
and the memory's.

The ratios are exact, not bounds: the same counts and smoothed PMI as
``Engine.verdict`` (a margin of 1e-9 covers float rounding).
"""

from __future__ import annotations

import enum
import itertools
import math
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from gateway.model.knowledge import Estimator
from gateway.model.records import Entity, SanitizePolicy
from gateway.model.terms import STOPWORDS

Ratios = npt.NDArray[np.float64]
_MARGIN = 1e-9


@runtime_checkable
class WholeKnowledge(Protocol):
    """A K that can answer for every term at once (the local index can; a web API cannot)."""

    @property
    def n_docs(self) -> int: ...

    def term_id(self, key: str) -> int: ...

    def document_frequencies(self) -> npt.NDArray[np.uint32]: ...

    def cooccurrences(self, keys: Collection[str]) -> npt.NDArray[np.uint32]:
        """For every term id, the documents holding it and any of ``keys``."""
        ...

    def shared_table(
        self, name: str, dtype: type[np.float64], compute: Callable[[], npt.NDArray[np.float64]]
    ) -> npt.NDArray[np.float64]:
        """``compute()``, a value per term, kept where every worker reads the same pages (``name`` says what it
        depends on besides K)."""
        ...


@dataclass(frozen=True, slots=True)
class _PolicyTable:
    ratios: Ratios  # each term's highest ratio; -inf where K holds too few documents to judge it
    cooccurrences: tuple[npt.NDArray[np.uint32], ...]  # per entity, n(c,t) for every term
    p_c: tuple[float, ...]
    thresholds: tuple[float, ...]
    by_entity: dict[Entity, npt.NDArray[np.uint32]]  # the same co-occurrences, by entity


class Clean(enum.Enum):
    """The clean-text test's answer (``CleanTextFilter.judge``)."""

    YES = "clean"
    # Clean alone, but a pair of one of its terms with a term of the stream's memory may group by the bound: the
    # bound is loose there (a memory's everyday words beside a list's), so only the groups the engine's memory
    # round would form can tell (Detector.first_groups_risky), counted exactly.
    MEMORY = "the memory's groups to judge"
    # No term is risky alone, but the bound clears neither some pair of its own nor, perhaps, with the memory.
    GROUPS = "its groups to judge"
    NO = "not clean"


# Term ids kept (a key and a large int, about 130 bytes): the first met, a worker's everyday words.
_MAX_IDS = 30_000


class CleanTextFilter:
    """Per-policy ratio tables over a ``WholeKnowledge``, and the clean-text test."""

    def __init__(self, knowledge: WholeKnowledge, estimator: Estimator) -> None:
        self._k = knowledge
        self._estimator = estimator
        self._df: npt.NDArray[np.uint32] | None = None
        self._tables: dict[tuple[tuple[Entity, ...], float], _PolicyTable] = {}
        self._ids: dict[str, int] = {}
        self._dfs: dict[str, int] = {}  # key -> n(t) (0 when K lacks it), for max_count
        self._last: tuple[Sequence[Entity], float, _PolicyTable] | None = None  # _table's last answer
        self._floor_ids: dict[tuple[tuple[Entity, ...], float, float], dict[str, int]] = {}  # _at_floor
        self._lock = threading.Lock()

    def table(self, entities: Sequence[Entity], alpha: float) -> Ratios:
        """Every term's highest ratio over ``entities``; -inf where K holds too few documents to judge."""
        return self._table(entities, alpha).ratios

    def _table(self, entities: Sequence[Entity], alpha: float) -> _PolicyTable:
        # Asked for each term and group a text's rounds count, with the same entities object all through a text:
        # the last answer is kept for it (hashing the entities, a dataclass's hash each, cost more than the rest).
        last = self._last
        if last is not None and last[0] is entities and last[1] == alpha:
            return last[2]
        cache_key = (tuple(entities), alpha)
        found = self._tables.get(cache_key)
        if found is not None:
            if isinstance(entities, tuple):  # immutable: its identity stands for its value
                self._last = (entities, alpha, found)
            return found
        with self._lock:
            found = self._tables.get(cache_key)
            if found is None:
                found = self._build(entities, alpha)
                if len(self._tables) >= 16:  # policies come and go with reloads
                    self._tables.clear()
                self._tables[cache_key] = found
        if isinstance(entities, tuple):  # immutable: its identity stands for its value
            self._last = (entities, alpha, found)
        return found

    def _frequencies(self) -> npt.NDArray[np.uint32]:
        if self._df is None:
            self._df = self._k.document_frequencies()
        return self._df

    def _build(self, entities: Sequence[Entity], alpha: float) -> _PolicyTable:
        n = self._k.n_docs
        coocs, p_cs, thresholds = [], [], []
        by_entity: dict[Entity, npt.NDArray[np.uint32]] = {}
        for e in entities:
            if e.n_docs == 0 or n == 0:
                continue  # an entity K never saw discloses nothing (the engine's PMI is -inf)
            counts = self._k.cooccurrences(e.keys)
            coocs.append(counts)
            by_entity[e] = counts
            p_cs.append(e.n_docs / n)
            thresholds.append(e.ic / alpha)
        # The table is a function of K, the entities' keys, documents and IC, alpha and the estimator: shared
        # by the workers beside K (3 MB each) under a name that holds all of them.
        m, min_support = self._estimator.prior_weight, self._estimator.min_support
        name = "ratios v1\n" + repr(
            (
                [(sorted(e.keys), e.n_docs, e.ic.hex()) for e in entities if e.n_docs and n],
                alpha.hex(),
                float(m).hex(),
                min_support,
            )
        )
        best = self._k.shared_table(name, np.float64, lambda: self._ratios(coocs, p_cs, thresholds))
        return _PolicyTable(best, tuple(coocs), tuple(p_cs), tuple(thresholds), by_entity)

    def _ratios(
        self, coocs: Sequence[npt.NDArray[np.uint32]], p_cs: Sequence[float], thresholds: Sequence[float]
    ) -> npt.NDArray[np.float64]:
        m = self._estimator.prior_weight
        n_t = self._frequencies().astype(np.float64)
        best = np.full(len(n_t), -np.inf)
        for counts, p_c, threshold in zip(coocs, p_cs, thresholds, strict=True):
            with np.errstate(divide="ignore"):
                pmi = np.log(((counts.astype(np.float64) + m * p_c) / (n_t + m)) / p_c)
            np.maximum(best, pmi / threshold, out=best)
        best[self._frequencies() < self._estimator.min_support] = -np.inf
        return best

    def _at_floor(self, entities: Sequence[Entity], alpha: float, floor: float) -> dict[str, int]:
        """Key -> its id when its ratio reaches ``floor``, else -1, as found so far: a stream's memory is walked
        for every message of the stream, and a key's answer is a function of K, the entities, alpha and floor."""
        cache_key = (tuple(entities), alpha, floor)
        found = self._floor_ids.get(cache_key)
        if found is None or len(found) > 50_000:
            if len(self._floor_ids) >= 16:
                self._floor_ids.clear()
            found = self._floor_ids[cache_key] = {}
        return found

    def _id(self, key: str) -> int:
        found = self._ids.get(key)
        if found is None:
            found = self._k.term_id(key)
            if len(self._ids) < _MAX_IDS:
                self._ids[key] = found
        return found

    def is_clean(self, terms: Iterable[tuple[str, int]], policy: SanitizePolicy, entities: Sequence[Entity],
                 *, allow: Collection[str], deny: Collection[str], joined: Collection[str] = ()) -> bool:  # fmt: skip
        """Would the engine leave a text with these terms (key, sentence) as it is? False when in doubt.

        ``joined``: terms that join every sentence's groups (a stream's memory), never a group of their own.
        """
        return self.judge(terms, policy, entities, allow=allow, deny=deny, joined=joined) is Clean.YES

    def judge(self, terms: Iterable[tuple[str, int]], policy: SanitizePolicy, entities: Sequence[Entity],
              *, allow: Collection[str], deny: Collection[str], joined: Collection[str] = ()) -> Clean:  # fmt: skip
        """``is_clean``, telling apart a text that is clean but for the bound on its pairs with ``joined``."""
        t = self._table(entities, policy.alpha)
        ratios = t.ratios
        floor = (min(1.0, policy.group_floor) if policy.max_group >= 2 else 1.0) - _MARGIN
        names = {k for e in entities for k in e.keys}
        df = self._frequencies()
        min_support = self._estimator.min_support
        redact_unknown = policy.unknown == "redact"
        # Each key is judged at its first unit; then only whether it is a group candidate (its id, else -1).
        at_floor: dict[str, int] = {}
        candidates: dict[int, set[int]] = {}  # sentence -> terms at the group floor
        for key, sentence in terms:
            i = at_floor.get(key)
            if i is None:
                if key in allow:
                    at_floor[key] = -1
                    continue
                i = self._id(key)
                if key in deny or key in names:
                    return Clean.NO
                if i >= 0 and ratios[i] >= 1.0 - _MARGIN:
                    return Clean.NO
                if redact_unknown and (i < 0 or df[i] < min_support):
                    return Clean.NO
                if " " in key and not self._words_clean(key, ratios, names):
                    return Clean.NO
                i = at_floor[key] = i if i >= 0 and ratios[i] >= floor else -1
            if i >= 0:
                candidates.setdefault(sentence, set()).add(i)
        if policy.max_group < 2:
            return Clean.YES
        if any(self._may_group(itertools.combinations(sorted(c), 2), t) for c in candidates.values() if len(c) >= 2):
            return Clean.GROUPS
        own: set[int] = set().union(*candidates.values())
        at = self._at_floor(entities, policy.alpha, floor)
        extra: set[int] = set()
        for k in joined:
            i = at.get(k)
            if i is None:
                j = self._id(k)
                i = at[k] = j if j >= 0 and ratios[j] >= floor else -1
            if i >= 0 and k not in allow:
                extra.add(i)
        extra -= own
        # A triple with a joined term is bounded by its pairs: the text's own, checked above, and these.
        return Clean.MEMORY if self._may_group(itertools.product(sorted(own), sorted(extra)), t) else Clean.YES

    def may_be_risky(self, conjuncts: Sequence[Collection[str]], n_t: int, entities: Sequence[Entity],
                     alpha: float) -> bool:  # fmt: skip
        """Could a group ``conjuncts`` held by ``n_t`` documents be risky? False only when it cannot be.

        The module's bound with the group's own count: n(c,T) <= min(n(T), min over conjuncts of
        n(c, conjunct)), a conjunct of alternatives counting at most the sum of theirs.
        """
        t = self._table(entities, alpha)
        m = self._estimator.prior_weight
        ids = [[self._id(k) for k in alternatives] for alternatives in conjuncts]
        for counts, p_c, threshold in zip(t.cooccurrences, t.p_c, t.thresholds, strict=True):
            x = n_t
            for alternatives in ids:
                x = min(x, sum(int(counts[i]) for i in alternatives if i >= 0))
            p = (x + m * p_c) / (n_t + m)
            if p > 0 and math.log(p / p_c) / threshold >= 1.0 - _MARGIN:
                return True
        return False

    def term_counts(self, key: str, entities: Sequence[Entity], alpha: float) -> tuple[int, list[int]] | None:
        """n(t) and n(c,t) for each entity, read from the policy's table (None: K lacks the key).

        The same numbers K's count gives (the table is its co-occurrences), without a count each.
        """
        i = self._id(key)
        if i < 0:
            return None
        by_entity = self._table(entities, alpha).by_entity
        return int(self._frequencies()[i]), [int(c[i]) if (c := by_entity.get(e)) is not None else 0 for e in entities]

    def max_count(self, conjuncts: Sequence[Collection[str]]) -> int:
        """An upper bound on the documents holding every conjunct: the fewest any one conjunct is in."""
        # Asked of every pair of every unit a round judges: each key's count is kept as an int, so that a
        # pair costs two dict lookups rather than two ids, two array reads and their conversions.
        dfs = self._dfs
        fewest = -1
        for alternatives in conjuncts:
            n = 0
            for k in alternatives:
                d = dfs.get(k)
                if d is None:
                    i = self._id(k)
                    d = int(self._frequencies()[i]) if i >= 0 else 0
                    if len(dfs) < _MAX_IDS:
                        dfs[k] = d
                n += d
            if fewest < 0 or n < fewest:
                fewest = n
        return max(fewest, 0)

    def within_budget(self, terms: Iterable[tuple[str, int]], policy: SanitizePolicy, entities: Sequence[Entity],
                      *, allow: Collection[str], joined: Collection[str] = (),
                      parts: Mapping[str, Sequence[str]] | None = None) -> bool:  # fmt: skip
        """Is every paragraph's accumulated evidence below the budget? ``terms``: (key, paragraph).

        The engine's Accumulator sums the same clues (PMI >= evidence_floor of the threshold, known to K),
        so the answer is exact; ``joined`` terms (a stream's memory) count towards every paragraph. The engine
        sums only the first ``memory_candidates`` of them that are clues; all of them are summed here, which can
        only send a text to the engine that it would have passed, never pass one it would change.
        ``parts``: the keys of a hyphenated compound's parts, by the compound's key. The engine's clue for a
        compound is the largest of its own and its parts' ("aids-like" tells what "aids" does); here each part
        counts beside the compound, once for each compound it is a part of: never less than the largest.
        """
        if policy.evidence_budget <= 0 or policy.mode == "redact":
            return True
        t = self._table(entities, policy.alpha)
        parts = parts or {}
        paragraphs: dict[int, set[int]] = {}
        # A part's id with the compound it stands for: one entry per compound, beside the compound's own.
        in_compounds: dict[int, set[tuple[int, str]]] = {}
        for key, p in terms:
            if key in allow:
                continue
            if (i := self._id(key)) >= 0:
                paragraphs.setdefault(p, set()).add(i)
            for part in parts.get(key, ()):
                if (j := self._id(part)) >= 0:
                    in_compounds.setdefault(p, set()).add((j, key))
        names = {k for e in entities for k in e.keys}
        extra = {i for k in joined if k not in allow and k not in names and (i := self._id(k)) >= 0}
        extra_parts = [
            j
            for k in joined
            if k not in allow and k not in names
            for part in parts.get(k, ())
            if (j := self._id(part)) >= 0
        ]
        if not paragraphs and not extra and not in_compounds and not extra_parts:
            return True
        df = self._frequencies()
        m = self._estimator.prior_weight
        for counts, p_c, threshold in zip(t.cooccurrences, t.p_c, t.thresholds, strict=True):
            floor = max(0.0, policy.evidence_floor * threshold)
            budget = policy.evidence_budget * threshold * (1.0 - _MARGIN)

            def clues(ids: Collection[int], counts: npt.NDArray[np.uint32] = counts, p_c: float = p_c,
                      floor: float = floor) -> dict[int, float]:  # fmt: skip
                if not ids:
                    return {}
                a = np.fromiter(ids, dtype=np.int64, count=len(ids))
                n_t = df[a].astype(np.float64)
                with np.errstate(divide="ignore"):
                    pmi = np.log(((counts[a].astype(np.float64) + m * p_c) / (n_t + m)) / p_c)
                attested = counts[a] >= self._estimator.min_support
                keep = (n_t >= self._estimator.min_support) & attested & (pmi > 0) & (pmi >= floor)
                return dict(zip(a[keep].tolist(), pmi[keep].tolist(), strict=True))

            own = clues(
                set().union(*paragraphs.values(), *({j for j, _ in c} for c in in_compounds.values()))
                if paragraphs or in_compounds
                else set()
            )
            earlier = clues(extra - set(own))
            of_parts = clues(set(extra_parts))
            base = sum(earlier.values()) + sum(of_parts.get(j, 0.0) for j in extra_parts)
            if base >= budget:
                return False
            for p in paragraphs.keys() | in_compounds.keys():
                total = sum(own.get(i, 0.0) for i in paragraphs.get(p, ()))
                total += sum(own.get(j, 0.0) for j, _ in in_compounds.get(p, ()))
                if base + total >= budget:
                    return False
        return True

    def _words_clean(self, key: str, ratios: Ratios, names: Collection[str]) -> bool:
        for word in key.split(" "):
            if word in STOPWORDS:
                continue
            if word in names:
                return False
            j = self._id(word)
            if j >= 0 and ratios[j] >= 1.0 - _MARGIN:
                return False
        return True

    def _may_group(self, pairs: Iterable[tuple[int, int]], t: _PolicyTable) -> bool:
        """Could any of these pairs (hence any triple holding one) be a risky group? See the module's bound."""
        df = self._frequencies()
        gms = self._estimator.group_min_support
        m = self._estimator.prior_weight
        for a, b in pairs:
            if min(df[a], df[b]) < gms:
                continue  # fewer documents hold both than a group needs to be judged
            for counts, p_c, threshold in zip(t.cooccurrences, t.p_c, t.thresholds, strict=True):
                x = float(min(counts[a], counts[b]))
                p = (x + m * p_c) / (max(gms, x) + m)
                if math.log(p / p_c) / threshold >= 1.0 - _MARGIN:
                    return True
        return False
