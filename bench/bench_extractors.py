"""Extraction + rebuild throughput per content type, and outcomes over the sample set.

    .venv/bin/python bench/bench_extractors.py

For every sample file: extract its segments and rebuild it from them (the
extractor alone, no engine), timed; then the whole pipeline with a 3-entity
policy, to count outcomes. For PDFs, the same measures are taken in the same
run with the extractor of commit BASELINE (the one that re-rendered risky
PDFs as plain text), plus the whole pipeline (extract, sanitize, rebuild,
verify) on the layout test documents: before/after ratios. Results in
bench/results/extractors.json.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

from extractors.limits import Limits
from extractors.mail import ContentPolicy
from extractors.pipeline import detect_kind, extract, process
from gateway.assemble import build_engine
from gateway.errors import SanigateError
from gateway.model.records import SanitizePolicy

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent.parent / "shared" / "samples"
REPEAT = 3
BASELINE = "f21e50e"  # main before PDFs were sanitized in place: risky PDFs re-rendered as plain text


def main() -> int:
    files = sorted(p for sub in ("email", "docx", "pdf") for p in (SAMPLES / sub).rglob("*") if p.is_file())
    limits, see_all = Limits(), ContentPolicy(unknown="pass", images="pass", encrypted="pass", unreadable="pass")
    per_type: dict[str, dict[str, float]] = collections.defaultdict(lambda: {"files": 0, "bytes": 0, "seconds": 0.0})
    for path in files:
        data = path.read_bytes()
        kind = detect_kind(data, path.name)
        try:
            t = time.perf_counter()
            for _ in range(REPEAT):
                doc = extract(data, kind, name=path.name, limits=limits, policy=see_all)
                doc.rebuild([s.pieces for s in doc.segments])
            elapsed = (time.perf_counter() - t) / REPEAT
        except SanigateError:
            continue
        row = per_type[kind]
        row["files"] += 1
        row["bytes"] += len(data)
        row["seconds"] += elapsed
    throughput = {
        k: {**v, "MB_per_s": v["bytes"] / 1e6 / v["seconds"], "files_per_s": v["files"] / v["seconds"]}
        for k, v in per_type.items()
    }
    engine = build_engine()
    policies = [SanitizePolicy(entities=("HIV", "Los Angeles", "Catholicism"), alpha=1.5)]
    outcomes: collections.Counter[str] = collections.Counter()
    by_type: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for path in files:
        data = path.read_bytes()
        try:
            o = process(data, engine=engine, policies=policies, name=path.name)
            key = "sanitized" if o.changed else ("modified (attachments stripped)" if o.notes else "passed unchanged")
        except SanigateError as exc:
            key = f"error: {type(exc).__name__}"
        outcomes[key] += 1
        by_type[detect_kind(data, path.name)][key] += 1
    result = {
        "pdf_before_after": pdf_before_after(engine, [p for p in files if detect_kind(b"", p.name) == "pdf"]),
        "throughput": throughput,
        "outcomes": dict(outcomes),
        "outcomes_by_kind": {k: dict(v) for k, v in by_type.items()},
        "files": len(files),
    }
    for k, v in throughput.items():
        mb, rate, fps = v["bytes"] / 1e6, v["MB_per_s"], v["files_per_s"]
        print(f"{k:5} {int(v['files']):4d} files {mb:7.2f} MB  {rate:7.2f} MB/s  {fps:8.1f} files/s")
    print(json.dumps(result["outcomes"], indent=1))
    print(json.dumps(result["pdf_before_after"], indent=1))
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "extractors.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


def _baseline_pdf() -> types.ModuleType:
    cmd = ["git", "-C", str(HERE.parent), "show", f"{BASELINE}:extractors/pdf.py"]
    src = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    mod = types.ModuleType("baseline_pdf")
    sys.modules["baseline_pdf"] = mod
    exec(compile(src, "baseline_pdf.py", "exec"), mod.__dict__)
    return mod


def pdf_before_after(engine: Any, files: list[Path]) -> dict[str, Any]:
    """PDF throughput of the baseline extractor and of this one, measured in the same run."""
    import extractors.pipeline as pipeline
    from extractors.pdf import extract_pdf

    sys.path.insert(0, str(HERE.parent / "tests"))
    from pdf_builders import clinic_report, referral_letter

    limits = Limits()
    old = _baseline_pdf()
    docs = [
        ("report.pdf", clinic_report(), ("HIV", "Los Angeles")),
        ("letter.pdf", referral_letter(), ("tuberculosis",)),
    ]
    out: dict[str, Any] = {"baseline": BASELINE}
    for label, reader in (("before", old.extract_pdf), ("after", extract_pdf)):
        read, size, seconds = 0, 0, 0.0
        for path in files:
            data = path.read_bytes()
            try:
                t = time.perf_counter()
                for _ in range(REPEAT):
                    doc = reader(data, part=path.name, limits=limits)
                    doc.rebuild([s.pieces for s in doc.segments])
                seconds += (time.perf_counter() - t) / REPEAT
            except SanigateError:
                continue
            read, size = read + 1, size + len(data)
        saved = pipeline.extract_pdf
        pipeline.extract_pdf = reader
        try:
            t = time.perf_counter()
            for _ in range(REPEAT):
                for name, data, entities in docs:
                    process(data, engine=engine, policies=[SanitizePolicy(entities=entities, alpha=1.5)], name=name)
            full = (time.perf_counter() - t) / REPEAT
        finally:
            pipeline.extract_pdf = saved
        out[label] = {
            "sample_files_read": read,
            "sample_MB_per_s": size / 1e6 / seconds if seconds else 0.0,
            "sample_files_per_s": read / seconds if seconds else 0.0,
            "sanitized_docs_per_s": len(docs) / full,
        }
    out["ratio_after_over_before"] = {
        k: out["after"][k] / out["before"][k] for k in ("sample_MB_per_s", "sanitized_docs_per_s") if out["before"][k]
    }
    return out


if __name__ == "__main__":
    raise SystemExit(main())
