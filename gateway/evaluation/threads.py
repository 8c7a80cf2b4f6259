"""Threads: each document split into a stream of messages from one sender to one recipient.

Every message goes through the gateway's own path, in order: the stream's
memory is recalled from a real store, the message is sanitized by the
worker (MIME in, MIME out, the output verified), a delivered message's
disclosure is remembered. What arrived is joined and attacked, once with the
memory on and once with it off (each message judged alone).
"""

from __future__ import annotations

import difflib
import email
import email.policy
import itertools
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from extractors.mail import ContentPolicy
from gateway import streams
from gateway.config import PolicyConfig
from gateway.evaluation.attacker import naive_removal
from gateway.evaluation.datasets import EvalDocument
from gateway.evaluation.metrics import rank_of
from gateway.evaluation.runner import Attacker
from gateway.model.engine import Engine
from gateway.model.records import SanitizePolicy
from gateway.store.sqlite import SQLiteStore
from gateway.worker import sanitize_message

_WORD = re.compile(r"\w+(?:['\u2019]\w+)*")


def split_thread(text: str, n: int) -> list[str]:
    """``text`` cut at paragraph ends into ``n`` messages of about equal length (fewer for a short text)."""
    paragraphs = [p for p in re.split(r"\n\s*\n|\n", text) if p.strip()]
    if len(paragraphs) <= n:
        return paragraphs
    ends = list(itertools.accumulate(len(p) for p in paragraphs))  # ends[i]: length up to paragraph i
    cuts = [0]
    for k in range(1, n):
        target = k * ends[-1] / n
        # a cut after paragraph i-1, leaving at least one paragraph for every later message
        lo, hi = cuts[-1] + 1, len(paragraphs) - (n - k)
        cuts.append(min(range(lo, hi + 1), key=lambda i: abs(ends[i - 1] - target)))
    cuts.append(len(paragraphs))
    return ["\n\n".join(paragraphs[a:b]) for a, b in itertools.pairwise(cuts)]


@dataclass(slots=True)
class ThreadResult:
    doc_id: str
    entity: str
    messages: int
    delivered: int
    words: int  # in the original messages
    words_kept: int  # unchanged in what was delivered
    stream_decisions: int  # decisions the memory caused
    rank: int | None = None  # of the true entity, on the joined delivered thread


@dataclass(slots=True)
class ThreadReport:
    alpha: float
    size: int
    candidates: tuple[str, ...]
    original: dict[str, int] = field(default_factory=dict)  # doc -> rank on the joined original
    naive: dict[str, int] = field(default_factory=dict)
    runs: dict[str, list[ThreadResult]] = field(default_factory=dict)  # "memory" / "alone"
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of each run (recall, sanitize, remember)

    def summary(self, mode: str) -> dict[str, float]:
        rows = self.runs[mode]
        ranks = [r.rank for r in rows if r.rank is not None]
        messages = sum(r.messages for r in rows)
        words = sum(r.words for r in rows)
        return {
            "threads": len(rows),
            "ranked_first": 100.0 * sum(1 for r in ranks if r == 1) / len(ranks) if ranks else 0.0,
            "mean_rank": sum(ranks) / len(ranks) if ranks else 0.0,
            "delivered": 100.0 * sum(r.delivered for r in rows) / messages if messages else 100.0,
            "words_kept": 100.0 * sum(r.words_kept for r in rows) / words if words else 100.0,
            "stream_decisions": float(sum(r.stream_decisions for r in rows)),
            "ms_per_message": 1000.0 * self.seconds.get(mode, 0.0) / messages if messages else 0.0,
        }


def _mail(sender: str, recipient: str, subject: str, body: str, i: int, root: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = recipient
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{i}.{root.strip('<>')}>" if i else root
    if i:
        msg["In-Reply-To"] = root
        msg["References"] = root
    msg.set_content(body)
    return msg.as_bytes()


def _body(data: bytes) -> str:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    part = msg.get_body(preferencelist=("plain",))
    return str(part.get_content()) if part is not None else ""


def _kept(original: str, sanitized: str) -> int:
    a, b = _WORD.findall(original.lower()), _WORD.findall(sanitized.lower())
    return sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())


def run_thread(
    engine: Engine,
    store: SQLiteStore,
    doc: EvalDocument,
    policy: PolicyConfig,
    parts: Sequence[str],
    n: int,
) -> tuple[ThreadResult, str]:
    """Send one thread through the gateway's path; (its result, the joined text that arrived)."""
    sender, recipient = f"author{n}@org.example", f"reader{n}@partner.example"
    root = f"<thread{n}@org.example>"
    delivered: list[str] = []
    result = ThreadResult(doc.doc_id, doc.entity, len(parts), 0, 0, 0, 0)
    for i, body in enumerate(parts):
        data = _mail(sender, recipient, f"Re: case {n}" if i else f"case {n}", body, i, root)
        thread = streams.thread_of(data)
        memory = streams.recall(store, [policy], sender=sender, recipients=[recipient], thread=thread)
        message_id = f"t{n}m{i}"
        job = sanitize_message(data, [policy], message_id, engine, memory)
        result.words += len(_WORD.findall(body))
        if job.verdict != "forward" or job.data is None:
            continue
        out = _body(job.data)
        delivered.append(out)
        result.delivered += 1
        result.words_kept += _kept(body, out)
        result.stream_decisions += sum(1 for d in job.decisions if d.earlier)
        streams.remember(store, message_id=message_id, sender=sender, recipients=[recipient], thread=thread,
                         disclosed=job.disclosed)  # fmt: skip
    return result, "\n\n".join(delivered)


def evaluate_threads(
    engine: Engine,
    docs: Sequence[EvalDocument],
    *,
    alpha: float,
    size: int,
    attacker: Attacker | None,
    progress: Callable[[int], None] = lambda _n: None,
    **sanitize: object,
) -> ThreadReport:
    candidates = tuple(dict.fromkeys(d.entity for d in docs))
    report = ThreadReport(alpha, size, candidates)
    threads = [(doc, split_thread(doc.text, size)) for doc in docs]
    for doc, parts in threads:
        if attacker is not None:
            joined = "\n\n".join(parts)
            report.original[doc.doc_id] = rank_of(attacker.scores(joined, candidates), doc.entity)
            report.naive[doc.doc_id] = rank_of(attacker.scores(naive_removal(joined, doc.entity), candidates),
                                               doc.entity)  # fmt: skip
    # Alone first: the memory run then finds the counts both share warm, and its extra time is the memory's own.
    for mode, days in (("alone", 0.0), ("memory", 30.0)):
        rows: list[ThreadResult] = []
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="sanigate-threads-") as tmp:
            store = SQLiteStore(Path(tmp) / "store.db")
            try:
                for n, (doc, parts) in enumerate(threads):
                    policy = PolicyConfig(
                        name="topic", content=ContentPolicy(),
                        sanitize=SanitizePolicy(entities=(doc.entity,), alpha=alpha, **sanitize),  # type: ignore[arg-type]
                        stream_memory_days=days,
                    )  # fmt: skip
                    result, joined = run_thread(engine, store, doc, policy, parts, n)
                    attacked = time.perf_counter()
                    if attacker is not None:
                        result.rank = rank_of(attacker.scores(joined, candidates), doc.entity)
                    started += time.perf_counter() - attacked  # the attacker's time is not the gateway's
                    rows.append(result)
                    progress(1)
            finally:
                store.close()
        report.runs[mode] = rows
        report.seconds[mode] = time.perf_counter() - started
    return report


def threads_markdown(report: ThreadReport) -> str:
    lines = [
        f"# Threads: {len(report.runs.get('memory', []))} documents, each split into {report.size} messages, "
        f"α = {report.alpha:g}",
        "",
        f"The attacker ranks {len(report.candidates)} candidates on the joined thread as it arrived.",
        "",
        "| what the attacker reads | ranked first | mean rank | messages delivered | words kept | memory decisions "
        "| ms per message |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, ranks in (("original thread", report.original), ("name removed (naive)", report.naive)):
        if ranks:
            first = 100.0 * sum(1 for r in ranks.values() if r == 1) / len(ranks)
            mean = sum(ranks.values()) / len(ranks)
            lines.append(f"| {label} | {first:.1f} % | {mean:.2f} | | | | |")
    for mode, label in (("alone", "sanigate, each message alone"), ("memory", "sanigate, with the stream memory")):
        if mode in report.runs:
            s = report.summary(mode)
            lines.append(f"| {label} | {s['ranked_first']:.1f} % | {s['mean_rank']:.2f} | {s['delivered']:.1f} % "
                         f"| {s['words_kept']:.1f} % | {s['stream_decisions']:.0f} "
                         f"| {s['ms_per_message']:.0f} |")  # fmt: skip
    lines += ["", "| document | entity | rank alone | rank with memory | delivered (memory) | memory decisions |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    alone = {r.doc_id: r for r in report.runs.get("alone", [])}
    for r in report.runs.get("memory", []):
        a = alone.get(r.doc_id)
        lines.append(f"| {r.doc_id} | {r.entity} | {a.rank if a else '-'} | {r.rank} | {r.delivered}/{r.messages} "
                     f"| {r.stream_decisions} |")  # fmt: skip
    return "\n".join(lines) + "\n"
