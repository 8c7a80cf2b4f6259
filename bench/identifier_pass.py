"""The identifier pass alone, on the texts the worker hands it in bench_identifiers.py: its CPU, or a digest.

    nice -n 5 .venv/bin/python bench/identifier_pass.py [--messages 2000] [--kinds safe-harbor] [--runs 3]
    nice -n 5 .venv/bin/python bench/identifier_pass.py --digest [--kinds all] [--tab]

Each load-test message is read as the worker reads it (``pipeline.read``, the bench's content policy) and its
segments joined as the pipeline joins them: that text is what ``remove_identifiers`` gets. The pass then runs
over all of them in order, as a worker meets them (the name recognizer's line cache and the phone memory start
empty), with the collector tuned as a worker's is; thread CPU per text is printed for each run (each run
starts with empty caches). Whole messages are bench_identifiers.py's business: this is for telling apart two
versions of the pass itself, which the worker's other stages (and the machine's load) make hard to see there.

``--digest`` prints digests of every finding of ``Analyzer.analyze`` and of every output, decision and edit of
``remove_identifiers`` instead (``--tab`` adds the TAB development documents): equal digests on two trees show
that a change of the pass changed no finding. It runs with PYTHONHASHSEED=0 (it starts itself again so): the
order of a PDF attachment's metadata segments, and so the texts, depends on the hash seed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_identifiers import TAB_DEV, load_messages  # noqa: E402


def texts_of(messages: list[bytes]) -> list[str]:
    from extractors.base import combine
    from extractors.mail import ContentPolicy
    from extractors.pipeline import read
    from gateway.errors import SanigateError

    out = []
    for i, data in enumerate(messages):
        try:
            extracted = read(data, name=f"m{i}", kind="mail", content_policy=ContentPolicy())
        except SanigateError:
            continue  # held before any identifier is looked for
        out.append(combine(extracted.segments)[0])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--kinds", default="safe-harbor", help="the policy's identifiers, comma-separated")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--digest", action="store_true", help="digests of findings and outputs, no timing")
    ap.add_argument("--tab", action="store_true", help="with --digest: the TAB development documents too")
    args = ap.parse_args()
    if args.digest and os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})

    from gateway import heap
    from gateway.assemble import build_engine, build_identifiers
    from gateway.model.identifiers import remove_identifiers, resolve_kinds
    from gateway.model.records import SanitizePolicy

    engine = build_engine()
    texts = texts_of(load_messages(args.messages))
    if args.tab and TAB_DEV.exists():
        texts += [json.loads(line)["text"] for line in TAB_DEV.read_text().splitlines() if line.strip()]
    policy = SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"),
                            identifiers=resolve_kinds(args.kinds.split(",")))  # fmt: skip
    names = {k for e in engine.entities_of(policy) for k in e.keys}

    def named(value: str) -> bool:  # as sanitize_text asks
        return engine.key_once(value) in names

    heap.tune_collector()
    if args.digest:
        analyzer = build_identifiers(engine)
        found, passed = hashlib.sha256(), hashlib.sha256()
        for text in texts:
            fs = analyzer.analyze(text, policy.identifiers)
            found.update(repr([(f.start, f.end, f.kind, f.text, f.score, f.source, f.parts) for f in fs]).encode(
                "utf-8", "surrogatepass"))  # fmt: skip
            r = remove_identifiers(text, analyzer, policy, named=named)
            decisions = [(d.term, d.surface, d.action, d.replacement, d.reason, d.spans, d.kind) for d in r.decisions]
            passed.update(repr((r.text, decisions, r.rewritten.edits)).encode("utf-8", "surrogatepass"))
        print(f"{len(texts)} texts, {args.kinds}: findings {found.hexdigest()[:16]}, pass {passed.hexdigest()[:16]}")
        return 0
    for run in range(args.runs):
        analyzer = build_identifiers(engine)  # empty caches, as a worker starts
        load = os.getloadavg()[0]
        started = time.thread_time()
        for text in texts:
            remove_identifiers(text, analyzer, policy, named=named)
        ms = 1000 * (time.thread_time() - started) / len(texts)
        print(f"run {run + 1}: {ms:.3f} ms CPU a text ({len(texts)} texts, {args.kinds}; load {load:.2f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    raise SystemExit(main())
