"""What the privacy model decides, as plain records (serialised into reports and the audit log)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from gateway.errors import ConfigError
from gateway.model.rewrite import TextEdit
from gateway.quickinit import quick_init

Action = Literal["generalize", "redact", "omit"]  # omit: a modifier left out (modifiers.py)
Mode = Literal["generalize", "redact"]
UnknownTerms = Literal["context", "redact", "keep"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SanitizePolicy:
    """One (alpha, C)-sanitized instance and how to enforce it.

    ``max_group`` is the largest group of co-occurring terms judged together
    (1 = the paper's Algorithm 1 alone). Only terms whose own PMI reaches
    ``group_floor`` of the threshold enter groups, and at most
    ``group_candidates`` per sentence, which bounds the cost per sentence to
    C(n,2) + C(n,3) counts. A stream's memory adds at most ``memory_candidates``
    earlier terms to every sentence's groups (only groups with a term of the text are counted).

    ``evidence_budget``: weak clues add up (evidence.py); a paragraph whose clues, summed as
    naive-Bayes evidence, reach ``evidence_budget`` times the threshold IC(c)/alpha has its
    strongest clues generalized (0 turns it off). Only clues at least ``evidence_floor`` of the
    way to the threshold on their own count. With a stream's memory, what earlier messages
    let through counts towards every paragraph of the next.
    """

    entities: tuple[str, ...]
    alpha: float = 1.5
    mode: Mode = "generalize"
    max_group: int = 3
    group_candidates: int = 6
    group_floor: float = 0.4
    memory_candidates: int = 12
    evidence_budget: float = 2.0
    evidence_floor: float = 0.2
    # A stream's remembered clues join each paragraph's sum. Off by default: a 30-day list stream's riskiest
    # clues reach the budget on their own (memory_candidates x evidence_floor > evidence_budget), so every later
    # message of it was rewritten, for no gain on the threads evaluation (README, Memory). Groups across
    # messages (the memory's own rule) do not depend on it, nor does a thread that named c: its own remembered
    # clues count towards its later messages' paragraphs for c whatever this says (evidence.py).
    stream_evidence: bool = False
    # Ranks and exact quantities in a paragraph that names c are coarsened (facts.py).
    coarsen_facts: bool = True
    # An adjective or adverb the summed evidence must lower but WordNet cannot generalize is left out where it
    # modifies the next word ("Jewish community" -> "community"; modifiers.py).
    omit_modifiers: bool = True
    # The evidence budget in a text that names c, or whose thread named c in an earlier message (memory.py): its
    # clues are no chance co-occurrences of everyday words, which is what the larger default budget spares.
    # 0: the same as evidence_budget.
    named_budget: float = 1.0
    # The evidence floor of a message that opens a remembered thread (the stream's memory is on and holds nothing of
    # its thread yet, memory.OPENING), where it is below ``evidence_floor``. A thread's later messages are judged
    # with its remembered clues beside every paragraph; the opener is the one message the memory cannot make
    # stricter, and what the thread tells of c is then mostly what its opener tells: weaker clues count in it too.
    # 1: no lower floor. With ``memory_share`` below, 0.15 meets issue 15's targets on the 22 topic threads
    # (docs/evaluation.md, sixteenth pass); alone it cost 0.4 point of words kept, under the 70 % bound.
    opening_floor: float = 0.15
    # The most a thread's remembered clues count towards a later paragraph's evidence, as a share of its budget (0: no
    # bound). Summed, the thread's strongest remembered clues are over a named budget on their own in most of its
    # later messages (the 22 topic threads: about 1.8 budgets at the median, up to 6), so every clue at the floor was
    # lowered in them however little it added; bounded, a later paragraph may still add the rest of its budget.
    memory_share: float = 0.375
    # In a text about c (it, or its thread, named c), K's second-order co-occurrence (related.py) counts beside
    # its PMI in the summed evidence, for rare words whose few paragraphs K cannot tie to c first-hand.
    second_order: bool = True
    unknown: UnknownTerms = "context"
    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    aliases: tuple[tuple[str, str], ...] = ()
    max_rounds: int = 3
    # Identifier kinds (gateway.model.identifiers.kinds) removed before the entities are judged.
    identifiers: frozenset[str] = frozenset()
    address_level: Literal["none", "city", "state"] = "none"  # what of an address may stay

    def __post_init__(self) -> None:
        if not self.entities and not self.identifiers:
            raise ConfigError("a policy needs at least one sensitive entity or identifier kind")
        if self.address_level not in ("none", "city", "state"):
            raise ConfigError(f"address_level must be 'none', 'city' or 'state', got {self.address_level!r}")
        if not (self.alpha >= 1.0 and math.isfinite(self.alpha)):
            raise ConfigError(f"alpha must be a number >= 1, got {self.alpha!r}")
        if self.mode not in ("generalize", "redact"):
            raise ConfigError(f"mode must be 'generalize' or 'redact', got {self.mode!r}")
        if self.unknown not in ("context", "redact", "keep"):
            raise ConfigError(f"unknown must be 'context', 'redact' or 'keep', got {self.unknown!r}")
        if not 1 <= self.max_group <= 3:
            raise ConfigError(f"max_group must be 1, 2 or 3, got {self.max_group!r}")
        if not (self.evidence_budget >= 0 and math.isfinite(self.evidence_budget)):
            raise ConfigError(f"evidence_budget must be a number >= 0 (0: off), got {self.evidence_budget!r}")
        if not (self.named_budget >= 0 and math.isfinite(self.named_budget)):
            raise ConfigError(f"named_budget must be a number >= 0 (0: evidence_budget), got {self.named_budget!r}")
        if not 0 < self.evidence_floor <= 1:
            raise ConfigError(f"evidence_floor must be in (0, 1], got {self.evidence_floor!r}")
        if not 0 < self.opening_floor <= 1:
            raise ConfigError(f"opening_floor must be in (0, 1], got {self.opening_floor!r}")
        if not (self.memory_share >= 0 and math.isfinite(self.memory_share)):
            raise ConfigError(f"memory_share must be a number >= 0 (0: no bound), got {self.memory_share!r}")
        if self.memory_candidates < 0:
            raise ConfigError("memory_candidates must be at least 0")
        if self.max_rounds < 1:
            raise ConfigError("max_rounds must be at least 1")

    def budget(self, named: bool) -> float:
        """The evidence budget for an entity the text (or its thread) named, or did not."""
        if named and self.named_budget > 0:
            return min(self.evidence_budget, self.named_budget)
        return self.evidence_budget


@dataclass(frozen=True, slots=True)
class Entity:
    name: str
    keys: frozenset[str]
    n_docs: int
    ic: float
    # Keys that are acronyms ("hiv", "std", "vd"): written in mixed case ("Vd",
    # "Std") a word is not the acronym.
    acronyms: frozenset[str] = frozenset()
    # Set when K barely knows c: only its names are replaced (a warning for the operator, not a refusal).
    warning: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One generalization tried for a risky term."""

    term: str
    source: str
    pmi: float | None
    threshold: float | None
    entity: str | None
    accepted: bool
    why: str = ""


# The reasons of the summed evidence's decisions (evidence.py): a clue lowered for its paragraph, safe alone.
SUMMED = frozenset({"evidence", "stream-evidence"})


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    term: str
    surface: str
    entity: str | None
    pmi: float | None
    threshold: float | None
    ic_term: float
    action: Action
    replacement: str | None
    reason: str
    group: tuple[str, ...] | None = None
    earlier: tuple[str, ...] = ()  # keys of the group that earlier messages of the stream disclosed
    sense: str | None = None
    chain: tuple[Step, ...] = ()
    spans: tuple[tuple[int, int], ...] = ()
    kind: str | None = None  # an identifier's kind ("PERSON", "PHONE"); None for a sensitive-entity decision

    @property
    def flags_term(self) -> bool:
        """Whether the term discloses c wherever it stands, so that the output must not hold it again.

        Not so for a clue the summed evidence lowered (evidence.py): it is safe alone, and was lowered only for
        its paragraph's sum. Another term may still be written as it ("misuse" -> "use" beside a lowered "use");
        the engine's last round judges every paragraph's sum again, with it.
        """
        return self.kind is None and self.reason not in SUMMED

    def as_report(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "term": self.surface,
            "key": self.term,
            "entity": self.entity,
            "pmi": _num(self.pmi),
            "threshold": _num(self.threshold),
            "ic_term": _num(self.ic_term),
            "action": self.action,
            "replacement": self.replacement,
            "reason": self.reason,
            "group": list(self.group) if self.group else None,
            "earlier": list(self.earlier),
            "sense": self.sense,
            "chain": [
                {"term": s.term, "source": s.source, "pmi": _num(s.pmi), "threshold": _num(s.threshold),
                 "entity": s.entity, "accepted": s.accepted, "why": s.why}
                for s in self.chain
            ],
            "spans": [list(s) for s in self.spans],
        }  # fmt: skip


def _num(x: float | None) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return round(x, 4)


@dataclass(frozen=True, slots=True)
class Utility:
    original: float
    sanitized: float

    @property
    def preservation(self) -> float:
        return 100.0 if self.original == 0 else 100.0 * self.sanitized / self.original

    def as_report(self) -> dict[str, float]:
        return {
            "original": round(self.original, 3),
            "sanitized": round(self.sanitized, 3),
            "preservation": round(self.preservation, 2),
        }


@dataclass(frozen=True, slots=True)
class SanitizeResult:
    text: str
    decisions: tuple[Decision, ...]
    utility: Utility
    entities: tuple[Entity, ...]
    policy: SanitizePolicy
    rounds: int = 1
    edits: tuple[TextEdit, ...] = ()  # on the original text: apply them and get ``text``
    # Per entity the text is about, its signature of c (related.py): the text's own terms K ties to c at the
    # line, as the sender wrote them. The stream's memory keeps them for the thread's later messages.
    signature: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.decisions)

    def as_report(self) -> dict[str, Any]:
        return {
            "entities": [
                {
                    "name": e.name,
                    "ic": round(e.ic, 4),
                    "documents": e.n_docs,
                    "lexicalizations": sorted(e.keys),
                    **({"warning": e.warning} if e.warning else {}),
                }
                for e in self.entities
            ],
            "alpha": self.policy.alpha,
            "mode": self.policy.mode,
            "utility": self.utility.as_report(),
            "rounds": self.rounds,
            "decisions": [d.as_report() for d in self.decisions],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Explanation:
    term: str
    key: str
    known: bool
    n_term: int
    ic_term: float
    per_entity: tuple[dict[str, Any], ...]
    risky: bool
    sense: str | None
    chain: tuple[Step, ...]
    chosen: str | None
