"""How many crafted cases leak: run the pipeline on each, then search the output with the verifier.

Two steps, so that the "before" figure runs the pipeline of another checkout (main) and the same
scanner reads both results:

    # the pipeline of a checkout, writing outputs and outcomes
    (cd /work/main && PYTHONPATH=/work/wt/leaks/tests .venv/bin/python /work/wt/leaks/bench/leak_count.py run DIR)
    # the scan, with this checkout's verifier
    .venv/bin/python bench/leak_count.py scan DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def run(out: Path) -> None:
    from adversarial import cases

    from extractors.pipeline import process
    from gateway.assemble import EngineConfig, build_engine
    from gateway.errors import SanigateError
    from gateway.model.records import SanitizePolicy

    engine = build_engine(EngineConfig())
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for i, case in enumerate(cases()):
        policy = SanitizePolicy(entities=(case.entity,), alpha=1.5)
        name = {"mail": "case.eml", "docx": "case.docx", "pdf": "case.pdf", "text": "notes.txt"}[case.kind]
        try:
            outcome = process(case.data, engine=engine, policies=[policy], name=name)
        except SanigateError as exc:
            results.append({"case": case.name, "entity": case.entity, "kind": case.kind, "held": exc.message})
            continue
        path = out / f"{i:03d}.out"
        path.write_bytes(outcome.data)
        results.append({"case": case.name, "entity": case.entity, "kind": case.kind, "output": path.name,
                        "output_kind": outcome.kind})  # fmt: skip
    (out / "results.json").write_text(json.dumps(results, indent=1))


def scan(out: Path) -> None:
    from extractors.pipeline import plain_word
    from gateway.assemble import EngineConfig, build_engine
    from gateway.verify import Needles, find_trace

    engine = build_engine(EngineConfig())
    results = json.loads((out / "results.json").read_text())
    leaked = held = clean = 0
    for r in results:
        if "held" in r:
            held += 1
            print(f"held    {r['case']}: {r['held'][:150]}")
            continue
        e = engine.entity(r["entity"])
        needles = Needles([e], is_plain_word=lambda w: plain_word(engine, w))
        found = find_trace((out / r["output"]).read_bytes(), r["output_kind"], needles, part=r["case"])
        if found:
            leaked += 1
            print(f"LEAKED  {r['case']}: {found[1].term!r} in {found[0].part} {found[0].location}")
        else:
            clean += 1
            print(f"clean   {r['case']}")
    print(json.dumps({"cases": len(results), "leaked": leaked, "held": held, "delivered_clean": clean}))


if __name__ == "__main__":
    {"run": run, "scan": scan}[sys.argv[1]](Path(sys.argv[2]))
