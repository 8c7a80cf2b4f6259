"""Engine benchmark: time per document against size, cold start, count latency.

    .venv/bin/python bench/bench_engine.py [--corpus ../shared/corpora/wikipedia-20k.jsonl.xz]

Documents are real Wikipedia paragraphs, cut to size. Each timing is reported
next to a baseline measured in the same run: term extraction alone (the part
every pass over a text must pay), so the figures carry over between machines.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from gateway.assemble import build_engine
from gateway.knowledge.corpus import read_corpus
from gateway.model.records import SanitizePolicy
from gateway.model.terms import extract_terms

SIZES = (5_000, 20_000, 50_000, 100_000, 200_000, 400_000)
ENTITIES = ("HIV", "Los Angeles", "Catholicism")
HERE = Path(__file__).resolve().parent


def documents(corpus: Path, size: int, n: int, rng: random.Random) -> list[str]:
    paras = [p for d in itertools.islice(read_corpus(corpus), 3000, 9000) for p in d.text.split("\n") if len(p) > 200]
    rng.shuffle(paras)
    out, it = [], iter(paras)
    for _ in range(n):
        parts: list[str] = []
        total = 0
        while total < size:
            p = next(it)
            parts.append(p)
            total += len(p) + 2
        out.append("\n\n".join(parts)[:size])
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def cold_start() -> dict[str, float]:
    code = (
        "import time; t=time.perf_counter();"
        "from gateway.assemble import build_engine; from gateway.model.records import SanitizePolicy;"
        "e=build_engine(); t1=time.perf_counter();"
        "p=SanitizePolicy(entities=('HIV','Los Angeles','Catholicism'));"
        "e.sanitize('The patient with HIV lives in Los Angeles.', p);"
        "t2=time.perf_counter(); print(t1-t, t2-t)"
    )
    runs = []
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
        runs.append((float(out[0]), float(out[1])))
    return {"load_s": statistics.median(r[0] for r in runs), "first_message_s": statistics.median(r[1] for r in runs)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared/corpora/wikipedia-20k.jsonl.xz")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "engine.json")
    args = ap.parse_args()
    rng = random.Random(7)
    result: dict[str, object] = {"cold_start": cold_start()}
    print("cold start:", result["cold_start"])

    engine = build_engine()
    policy = SanitizePolicy(entities=ENTITIES, alpha=1.5)
    k = engine.knowledge
    # A gateway that has been up for a while has the common vocabulary's
    # posting lists decoded; measure new documents after 200 others.
    cold = []
    for d in documents(args.corpus, 5_000, 200, rng):
        t = time.perf_counter()
        engine.sanitize(d, policy)
        cold.append(time.perf_counter() - t)
    result["cold_caches_5k"] = {
        "first_30_p50_ms": 1000 * statistics.median(cold[:30]),
        "last_30_p50_ms": 1000 * statistics.median(cold[-30:]),
    }
    print("5 KB while caches fill:", result["cold_caches_5k"])
    rows = []
    for size in SIZES:
        n = 50 if size <= 5_000 else (8 if size <= 50_000 else 3)
        docs = documents(args.corpus, size, n, rng)
        extract, first, again, distinct = [], [], [], []
        for d in docs:
            t = time.perf_counter()
            _tokens, occs = extract_terms(d, engine.language.lemmatize, engine.phrase_set)
            extract.append(time.perf_counter() - t)
            distinct.append(len({o.key for o in occs}))
            t = time.perf_counter()
            engine.sanitize(d, policy)
            first.append(time.perf_counter() - t)
            t = time.perf_counter()
            engine.sanitize(d, policy)
            again.append(time.perf_counter() - t)
        row = {
            "size_bytes": size,
            "docs": n,
            "distinct_terms_p50": statistics.median(distinct),
            "first_seen_p50_ms": 1000 * statistics.median(first),
            "first_seen_p99_ms": 1000 * pct(first, 0.99),
            "repeat_p50_ms": 1000 * statistics.median(again),
            "extract_only_p50_ms": 1000 * statistics.median(extract),
            "ms_per_distinct_term": 1000
            * statistics.median(f / max(1, dt) for f, dt in zip(first, distinct, strict=True)),
        }
        row["ratio_to_extraction"] = row["first_seen_p50_ms"] / row["extract_only_p50_ms"]
        rows.append(row)
        print(json.dumps(row))
    result["by_size"] = rows

    # Count latency: random 3-term sets from one document's terms.
    doc = documents(args.corpus, 5_000, 1, rng)[0]
    _t, occs = extract_terms(doc, engine.language.lemmatize, engine.phrase_set)
    vocab = sorted({o.key for o in occs if o.key in k})  # type: ignore[operator]
    triples = [tuple(rng.sample(vocab, 3)) for _ in range(3000)]
    for tr in triples:  # load their bitmaps first: the steady state of a running gateway
        k.count([{x} for x in tr])
    times, single = [], []
    for tr in triples:
        t = time.perf_counter()
        k.count([{tr[0]}, {tr[1]}, {tr[2]}])
        times.append(time.perf_counter() - t)
        t = time.perf_counter()
        k.count([{tr[0]}])
        single.append(time.perf_counter() - t)
    result["count3"] = {
        "p50_us": 1e6 * statistics.median(times),
        "p99_us": 1e6 * pct(times, 0.99),
        "baseline_single_term_p50_us": 1e6 * statistics.median(single),
    }
    print("3-term count:", result["count3"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
