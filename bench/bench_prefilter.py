"""The fast path for clean text: how often it is taken, and the engine's time with and without it.

    nice -n 5 .venv/bin/python bench/bench_prefilter.py [--limit 400]

The plain-text bodies (with Subject) of the first ``--limit`` archive messages,
sanitized with the gateway benchmark's us-medical policy by one engine, warm,
once with the fast path and once without, alternating message by message, in
one run. Results: bench/results/prefilter.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from test_prefilter import _archive_texts  # noqa: E402

from gateway.assemble import build_engine  # noqa: E402
from gateway.model.records import SanitizePolicy  # noqa: E402

POLICY = SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"), alpha=1.5)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=400)
    args = ap.parse_args()
    texts = _archive_texts(args.limit)
    engine = build_engine()
    fast_filter = engine._clean
    for text in texts:  # warm: every term's counts are cached on both paths
        engine.sanitize(text, POLICY)
        engine._clean = None
        engine.sanitize(text, POLICY)
        engine._clean = fast_filter
    taken = sum(engine._if_clean(t, POLICY, engine.entities_of(POLICY), ()) is not None for t in texts)
    with_fast, without = [], []
    for text in texts:
        engine._clean = fast_filter
        engine.reader.forget()  # each side tokenizes the text itself
        t = time.perf_counter()
        engine.sanitize(text, POLICY)
        with_fast.append(time.perf_counter() - t)
        engine._clean = None
        engine.reader.forget()
        t = time.perf_counter()
        engine.sanitize(text, POLICY)
        without.append(time.perf_counter() - t)
    engine._clean = fast_filter
    result = {
        "messages": len(texts),
        "fast_path_taken": taken,
        "fast_path_share": round(taken / len(texts), 3),
        "ms_per_message_with_fast_path": round(1000 * statistics.fmean(with_fast), 2),
        "ms_per_message_without": round(1000 * statistics.fmean(without), 2),
        "speedup": round(sum(without) / sum(with_fast), 2),
        "load_average_at_end": Path("/proc/loadavg").read_text().split()[:3],
    }
    print(json.dumps(result))
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "prefilter.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
