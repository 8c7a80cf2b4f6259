"""Token-level accuracy on the actor dev set, per annotator, over a sweep of alpha.

python -m gateway.evaluation.actors ../shared/eval-dev/actors --alpha 1 1.5 2
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gateway.errors import UnknownEntityError
from gateway.evaluation.gold import GoldDocument, read_actor_xml
from gateway.evaluation.metrics import Scores, token_scores
from gateway.model.engine import Engine
from gateway.model.knowledge import DEFAULT_MIN_SUPPORT, DEFAULT_PRIOR_WEIGHT
from gateway.model.records import SanitizePolicy


@dataclass(frozen=True, slots=True)
class Row:
    alpha: float
    annotator: str
    scores: Scores
    utility: float
    skipped: int
    known_only: Scores  # the same, over the documents whose entity K knows


def evaluate(engine: Engine, docs: Sequence[GoldDocument], alphas: Sequence[float], **policy: object) -> list[Row]:
    rows: list[Row] = []
    for alpha in alphas:
        totals: dict[str, Scores] = {}
        known: dict[str, Scores] = {}
        utility = []
        skipped = 0
        for doc in docs:
            try:
                result = engine.sanitize(doc.text, SanitizePolicy(entities=(doc.title,), alpha=alpha, **policy))  # type: ignore[arg-type]
            except UnknownEntityError:
                skipped += 1
                is_known = False
                spans: list[tuple[int, int]] = []
                preservation = 100.0
            else:
                is_known = True
                spans = [s for d in result.decisions for s in d.spans]
                preservation = result.utility.preservation
            utility.append(preservation)
            for ann in doc.annotations:
                s = token_scores(ann.tokens, ann.masked, spans)
                totals[ann.annotator] = totals.get(ann.annotator, Scores(0, 0, 0)) + s
                if is_known:
                    known[ann.annotator] = known.get(ann.annotator, Scores(0, 0, 0)) + s
        for name, s in sorted(totals.items()):
            rows.append(Row(alpha, name, s, sum(utility) / len(utility), skipped, known.get(name, Scores(0, 0, 0))))
    return rows


def markdown(rows: Sequence[Row]) -> str:
    out = ["| alpha | annotator | precision | recall | F | F, entities K knows | utility preserved "
           "| entities unknown to K |",
           "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        out.append(f"| {r.alpha:g} | {r.annotator} | {r.scores.precision:.1f}% | {r.scores.recall:.1f}% | "
                   f"{r.scores.f_measure:.1f}% | {r.known_only.f_measure:.1f}% (R {r.known_only.recall:.1f}%) "
                   f"| {r.utility:.1f}% | {r.skipped} |")  # fmt: skip
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    from gateway.assemble import EngineConfig, build_engine

    p = argparse.ArgumentParser(prog="python -m gateway.evaluation.actors")
    p.add_argument("folder", type=Path)
    p.add_argument("--alpha", type=float, nargs="+", default=[1.0, 1.5, 2.0])
    p.add_argument("--max-group", type=int, default=3)
    p.add_argument("--unknown", default="context")
    p.add_argument("--index", type=Path)
    p.add_argument("--prior-weight", type=float, default=DEFAULT_PRIOR_WEIGHT)
    p.add_argument("--min-support", type=int, default=DEFAULT_MIN_SUPPORT)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    docs = [read_actor_xml(f) for f in sorted(args.folder.glob("*.xml"))]
    engine = build_engine(EngineConfig(index=args.index, prior_weight=args.prior_weight, min_support=args.min_support))
    rows = evaluate(engine, docs, args.alpha, max_group=args.max_group, unknown=args.unknown)
    if args.json:
        json.dump([{"alpha": r.alpha, "annotator": r.annotator, "precision": r.scores.precision,
                    "recall": r.scores.recall, "f": r.scores.f_measure, "utility": r.utility,
                    "unknown_entities": r.skipped} for r in rows], sys.stdout, indent=2)  # fmt: skip
    else:
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
