"""How much ordinary mail the summed evidence changes, per evidence_budget (the shipped us-medical policy).

    nice -n 5 .venv/bin/python bench/evidence_changes.py [--messages 300] [--budgets 0 1 2 3]

The first archive messages' Subject and plain body, sanitized by the engine alone under us-medical's
entities and alpha at each budget (0: the evidence off). Prints the messages with any decision, the
decisions by reason, and the words the evidence lowered most often. A budget that rewrites ordinary mail
about radios for "sexually transmitted disease" is too eager for a default.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from archive import archive_texts  # noqa: E402

from gateway.assemble import build_engine  # noqa: E402
from gateway.model.records import SanitizePolicy  # noqa: E402

US_MEDICAL = ("HIV", "AIDS", "sexually transmitted disease", "substance abuse", "alcoholism", "drug addiction")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=300)
    ap.add_argument("--budgets", type=float, nargs="+", default=[0.0, 1.0, 2.0, 3.0])
    args = ap.parse_args()
    engine = build_engine()
    texts = archive_texts(args.messages, chars=6000)
    for budget in args.budgets:
        policy = SanitizePolicy(entities=US_MEDICAL, alpha=1.5, evidence_budget=budget)
        reasons: collections.Counter[str] = collections.Counter()
        lowered: collections.Counter[str] = collections.Counter()
        changed = 0
        for text in texts:
            decisions = engine.sanitize(text, policy).decisions
            changed += bool(decisions)
            reasons.update(d.reason for d in decisions)
            lowered.update(d.term for d in decisions if d.reason == "evidence")
        print(f"budget {budget:g}: {changed} of {len(texts)} messages changed; by reason {dict(reasons)}; "
              f"evidence lowered {lowered.most_common(8)}")  # fmt: skip


if __name__ == "__main__":
    main()
