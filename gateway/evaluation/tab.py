"""Scoring identifier detection against span gold the way the TAB literature does.

The Text Anonymization Benchmark (Pilán et al., 2022) scores masking token
by token: recall is the share of the tokens inside gold mentions that the
system masked (per annotator, and per mention type), precision the share of
masked tokens that some gold mention covers. A token is a word (``\\w+``);
punctuation is not scored. Entity-level recall counts a mention as found only
when every one of its tokens is masked.

Gold is JSON lines: {"id", "text", "spans": [[start, end, type], ...]}; a
fourth element, when present, names the annotator.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.errors import InputError
from gateway.evaluation.metrics import Scores

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Mention:
    start: int
    end: int
    type: str
    annotator: str = "gold"


@dataclass(frozen=True, slots=True)
class TabDocument:
    doc_id: str
    text: str
    mentions: tuple[Mention, ...]


def read_tab(path: Path) -> list[TabDocument]:
    docs: list[TabDocument] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            text = row["text"]
            mentions = tuple(
                Mention(int(s[0]), int(s[1]), str(s[2]), str(s[3]) if len(s) > 3 else "gold") for s in row["spans"]
            )
            doc_id = str(row["id"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, IndexError) as exc:
            raise InputError(
                f"{path}:{n}: not a TAB line {{id, text, spans: [[start, end, type], ...]}} ({exc})"
            ) from exc
        for m in mentions:
            if not 0 <= m.start < m.end <= len(text):
                raise InputError(f"{path}:{n}: span [{m.start}, {m.end}] is outside the document")
        docs.append(TabDocument(doc_id, text, mentions))
    if not docs:
        raise InputError(f"{path}: no documents")
    return docs


@dataclass(slots=True)
class TabScores:
    """Token-level scores, summed over documents (a micro average, as TAB reports them)."""

    overall: dict[str, Scores] = field(default_factory=dict)  # per annotator
    by_type: dict[str, Scores] = field(default_factory=dict)  # recall per gold mention type (all annotators)
    entity_found: dict[str, int] = field(default_factory=dict)  # per type: mentions wholly masked
    entity_total: dict[str, int] = field(default_factory=dict)
    documents: int = 0
    tokens: int = 0

    def add(self, other: TabScores) -> None:
        for target, source in ((self.overall, other.overall), (self.by_type, other.by_type)):
            for k, v in source.items():
                target[k] = target.get(k, Scores(0, 0, 0)) + v
        for t2, s2 in ((self.entity_found, other.entity_found), (self.entity_total, other.entity_total)):
            for k, n in s2.items():
                t2[k] = t2.get(k, 0) + n
        self.documents += other.documents
        self.tokens += other.tokens

    @property
    def scored(self) -> bool:
        return any(s.gold for s in self.overall.values())

    def as_report(self) -> dict[str, Any]:
        def pr(s: Scores) -> dict[str, float | int | None]:
            return {"precision": _ratio(s.true_positives, s.detected), "recall": _ratio(s.true_positives, s.gold),
                    "f": _f(s), "gold_tokens": s.gold, "masked_tokens": s.detected}  # fmt: skip

        return {
            "documents": self.documents,
            "tokens": self.tokens,
            "annotators": {k: pr(v) for k, v in sorted(self.overall.items())},
            "recall_by_type": {k: _ratio(v.true_positives, v.gold) for k, v in sorted(self.by_type.items())},
            "entity_recall_by_type": {
                k: _ratio(self.entity_found.get(k, 0), n) for k, n in sorted(self.entity_total.items())
            },
        }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _f(s: Scores) -> float | None:
    if not s.gold or not s.detected:
        return None
    p, r = s.true_positives / s.detected, s.true_positives / s.gold
    return round(2 * p * r / (p + r), 4) if p + r else 0.0


def score_document(doc: TabDocument, masked: Iterable[tuple[int, int]]) -> TabScores:
    spans = sorted(masked)
    tokens = [m.span() for m in _WORD.finditer(doc.text)]
    hit = _covered(tokens, spans)
    out = TabScores(documents=1, tokens=len(tokens))
    annotators = sorted({m.annotator for m in doc.mentions}) or ["gold"]
    for ann in annotators:
        gold = _covered(tokens, sorted((m.start, m.end) for m in doc.mentions if m.annotator == ann))
        tp = sum(1 for h, g in zip(hit, gold, strict=True) if h and g)
        out.overall[ann] = Scores(tp, sum(hit), sum(gold))
    for m in doc.mentions:
        inside = [i for i, (a, b) in enumerate(tokens) if a < m.end and m.start < b]
        found = sum(1 for i in inside if hit[i])
        prev = out.by_type.get(m.type, Scores(0, 0, 0))
        out.by_type[m.type] = prev + Scores(found, found, len(inside))
        out.entity_total[m.type] = out.entity_total.get(m.type, 0) + 1
        if inside and found == len(inside):
            out.entity_found[m.type] = out.entity_found.get(m.type, 0) + 1
    return out


def _covered(tokens: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[bool]:
    """For each token, whether a span overlaps it (both sorted by start)."""
    out: list[bool] = []
    j = 0
    for a, b in tokens:
        while j < len(spans) and spans[j][1] <= a:
            j += 1
        k = j
        hit = False
        while k < len(spans) and spans[k][0] < b:
            if spans[k][1] > a:
                hit = True
                break
            k += 1
        out.append(hit)
    return out


def evaluate_tab(docs: Sequence[TabDocument], mask: Callable[[str], Iterable[tuple[int, int]]]) -> TabScores:
    total = TabScores()
    for doc in docs:
        total.add(score_document(doc, mask(doc.text)))
    return total


@dataclass(frozen=True, slots=True)
class Spread:
    """Corpus scores over the documents drawn again with replacement (a bootstrap over documents): how much a
    figure owes to which documents happened to be in the set, and so what to expect on others of the same kind.
    Each interval holds the central ``level`` share of the resampled figures."""

    resamples: int
    level: float
    recall: tuple[float, float]
    precision: tuple[float, float]
    f: tuple[float, float]
    floor: float
    recall_below_floor: float  # the share of resamples whose recall is under ``floor``

    def as_report(self) -> dict[str, Any]:
        return {"resamples": self.resamples, "level": self.level, "recall": list(self.recall),
                "precision": list(self.precision), "f": list(self.f), "floor": self.floor,
                "recall_below_floor": self.recall_below_floor}  # fmt: skip


def bootstrap(
    documents: Sequence[Scores], *, resamples: int, seed: int = 0, level: float = 0.9, floor: float = 0.85
) -> Spread:
    """``documents``: one annotator's token scores, document by document. Each resample draws as many documents
    as there are, with replacement, and sums them as the corpus figure does (a micro average)."""
    if not documents or resamples < 1:
        raise ValueError("a bootstrap needs documents and at least one resample")
    rng = random.Random(seed)
    n = len(documents)
    recalls, precisions, fs = [], [], []
    for _ in range(resamples):
        tp = detected = gold = 0
        for _ in range(n):
            d = documents[rng.randrange(n)]
            tp, detected, gold = tp + d.true_positives, detected + d.detected, gold + d.gold
        r = tp / gold if gold else 1.0
        p = tp / detected if detected else 1.0
        recalls.append(r)
        precisions.append(p)
        fs.append(2 * p * r / (p + r) if p + r else 0.0)
    below = sum(1 for r in recalls if r < floor) / resamples

    def central(values: list[float]) -> tuple[float, float]:
        values.sort()
        tail = (1 - level) / 2
        return round(values[int(tail * (len(values) - 1))], 4), round(values[int((1 - tail) * (len(values) - 1))], 4)

    return Spread(resamples, level, central(recalls), central(precisions), central(fs), floor, round(below, 4))


def markdown(scores: TabScores, *, title: str) -> str:
    rep = scores.as_report()

    def pct(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    lines = [f"# {title}", "", f"{rep['documents']} documents, {rep['tokens']} word tokens.", ""]
    lines += ["| annotator | recall | precision | F | gold tokens | masked tokens |", "|---|---|---|---|---|---|"]
    for ann, s in rep["annotators"].items():
        lines.append(f"| {ann} | {pct(s['recall'])} | {pct(s['precision'])} | {pct(s['f'])} | {s['gold_tokens']} "
                     f"| {s['masked_tokens']} |")  # fmt: skip
    lines += ["", "| mention type | token recall | entity recall |", "|---|---|---|"]
    for t, r in rep["recall_by_type"].items():
        lines.append(f"| {t} | {pct(r)} | {pct(rep['entity_recall_by_type'].get(t))} |")
    return "\n".join(lines) + "\n"
