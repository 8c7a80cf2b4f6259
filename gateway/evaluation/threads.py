"""Threads: each document split into a stream of messages from one sender to one recipient.

Every message goes through the gateway's own path, in order: the stream's
memory is recalled from a real store, the message is sanitized by the
worker (MIME in, MIME out, the output verified), a delivered message's
disclosure is remembered. What arrived is joined and attacked, once with the
memory on and once with it off (each message judged alone).

Each attacker also ranks the later messages alone, joined (the second message
on): the memory never changes the first message of a thread, which an attacker
of the whole thread reads too, so this is where the memory's own effect shows.

A first place is a sign: the true candidate's score above its best rival's.
The margin between them says by how much, and an attacker that reads passages
(the sentence attacker) reads each text again with its passages cut elsewhere
(``CUTS``): one word more or less early in a thread moves every later cut,
and with a margin of a few thousandths, the cut decides. A count of first
places that holds at every cut is one a mechanism made.
"""

from __future__ import annotations

import difflib
import email
import email.policy
import itertools
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Protocol, runtime_checkable

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
CUTS = 4  # the passage cuts an attacker that reads passages reads a text at: offsets of 0, 1/4, 1/2, 3/4 a passage


@runtime_checkable
class _Cut(Protocol):
    """An attacker that reads a text in passages, and can read it with the passages cut ``offset`` words later."""

    def shifted(self, offset: int) -> Attacker: ...


def cuts_of(attacker: Attacker, cuts: int = CUTS) -> list[Attacker]:
    """The attacker at each of ``cuts`` passage cuts, evenly spaced over a passage (itself first); one reading when
    it reads no passages."""
    if not isinstance(attacker, _Cut):
        return [attacker]
    from gateway.evaluation.sentence_attacker import PASSAGE_WORDS

    return [attacker, *(attacker.shifted(k * PASSAGE_WORDS // cuts) for k in range(1, cuts))]


def margin_of(scores: Mapping[str, float], true: str) -> float:
    """The true candidate's score minus its best rival's: at least 0 exactly when it is ranked first (rank_of)."""
    return scores[true] - max((s for name, s in scores.items() if name != true), default=scores[true])


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
    ranks: dict[str, int] = field(default_factory=dict)  # attacker -> rank of the true entity on the joined thread
    # attacker -> its rank on the later messages joined (from the second on: what a memory can change)
    later_ranks: dict[str, int] = field(default_factory=dict)
    # attacker -> its rank on the first message alone: what the memory changes only through an opening floor
    first_ranks: dict[str, int] = field(default_factory=dict)
    margins: dict[str, float] = field(default_factory=dict)  # attacker -> margin_of on the joined thread
    # attacker -> its ranks at each passage cut (cuts_of; the first is ``ranks``): on the joined thread, on the later
    # messages, on the first message alone
    cut_ranks: dict[str, list[int]] = field(default_factory=dict)
    cut_later_ranks: dict[str, list[int]] = field(default_factory=dict)
    cut_first_ranks: dict[str, list[int]] = field(default_factory=dict)


@dataclass(slots=True)
class ThreadReport:
    alpha: float
    size: int
    candidates: tuple[str, ...]
    attackers: tuple[str, ...] = ()
    original: dict[str, dict[str, int]] = field(default_factory=dict)  # attacker -> doc -> rank on the original
    naive: dict[str, dict[str, int]] = field(default_factory=dict)
    original_later: dict[str, dict[str, int]] = field(default_factory=dict)  # on the original's later messages
    runs: dict[str, list[ThreadResult]] = field(default_factory=dict)  # "memory" / "alone"
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of each run (recall, sanitize, remember)
    one_stream: bool = False  # every thread in one stream (one sender, one recipient), interleaved
    cuts: int = CUTS  # the passage cuts each thread is read at (``cuts_of``)

    def summary(self, mode: str) -> dict[str, float]:
        """A run's figures; ``ranked_first`` and ``mean_rank`` for each attacker as ``<figure> <attacker>``, on
        the later messages as ``ranked_first_later <attacker>`` and ``mean_rank_later <attacker>``, and on the
        first message alone as ``ranked_first_first <attacker>``."""
        rows = self.runs[mode]
        messages = sum(r.messages for r in rows)
        words = sum(r.words for r in rows)
        attacked: dict[str, float] = {}
        for name in self.attackers:
            ranks = [r.ranks[name] for r in rows if name in r.ranks]
            attacked[f"ranked_first {name}"] = 100.0 * sum(1 for r in ranks if r == 1) / len(ranks) if ranks else 0.0
            attacked[f"mean_rank {name}"] = sum(ranks) / len(ranks) if ranks else 0.0
            later = [r.later_ranks[name] for r in rows if name in r.later_ranks]
            attacked[f"ranked_first_later {name}"] = (
                100.0 * sum(1 for r in later if r == 1) / len(later) if later else 0.0
            )
            attacked[f"mean_rank_later {name}"] = sum(later) / len(later) if later else 0.0
            first = [r.first_ranks[name] for r in rows if name in r.first_ranks]
            attacked[f"ranked_first_first {name}"] = (
                100.0 * sum(1 for r in first if r == 1) / len(first) if first else 0.0
            )
            margins = [r.margins[name] for r in rows if name in r.margins]
            attacked[f"mean_margin {name}"] = sum(margins) / len(margins) if margins else 0.0
            for what, of in (("", "cut_ranks"), ("_later", "cut_later_ranks"), ("_first", "cut_first_ranks")):
                at = _first_at_cuts([getattr(r, of)[name] for r in rows if name in getattr(r, of)])
                if at:
                    attacked[f"ranked_first_cuts{what} {name}"] = sum(at) / len(at)
                    attacked[f"ranked_first_cuts{what}_min {name}"] = min(at)
                    attacked[f"ranked_first_cuts{what}_max {name}"] = max(at)
        return {
            "threads": len(rows),
            **attacked,
            "delivered": 100.0 * sum(r.delivered for r in rows) / messages if messages else 100.0,
            "words_kept": 100.0 * sum(r.words_kept for r in rows) / words if words else 100.0,
            "stream_decisions": float(sum(r.stream_decisions for r in rows)),
            "ms_per_message": 1000.0 * self.seconds.get(mode, 0.0) / messages if messages else 0.0,
        }


def _first_at_cuts(ranks: Sequence[Sequence[int]]) -> list[float]:
    """The share of threads (%) ranked first at each cut, from each thread's ranks at every cut."""
    if not ranks:
        return []
    return [100.0 * sum(1 for r in ranks if r[k] == 1) / len(ranks) for k in range(min(len(r) for r in ranks))]


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


class _ThreadRun:
    """One thread under way: its messages sent one at a time, in order, what arrived kept."""

    def __init__(self, doc: EvalDocument, policy: PolicyConfig, parts: Sequence[str], n: int, stream: int) -> None:
        self.doc, self.policy, self.parts, self.n = doc, policy, parts, n
        self.sender, self.recipient = f"author{stream}@org.example", f"reader{stream}@partner.example"
        self.root = f"<thread{n}@org.example>"
        self.delivered: list[tuple[int, str]] = []
        self.result = ThreadResult(doc.doc_id, doc.entity, len(parts), 0, 0, 0, 0)

    def send(self, engine: Engine, store: SQLiteStore, i: int) -> None:
        """Message ``i`` through the gateway's path: recalled, sanitized, and remembered once delivered."""
        body, policy, n = self.parts[i], self.policy, self.n
        data = _mail(self.sender, self.recipient, f"Re: case {n}" if i else f"case {n}", body, i, self.root)
        thread = streams.thread_of(data)
        memory = streams.recall(store, [policy], sender=self.sender, recipients=[self.recipient], thread=thread)
        message_id = f"t{n}m{i}"
        job = sanitize_message(data, [policy], message_id, engine, memory)
        self.result.words += len(_WORD.findall(body))
        if job.verdict != "forward" or job.data is None:
            return
        out = _body(job.data)
        self.delivered.append((i, out))
        self.result.delivered += 1
        self.result.words_kept += _kept(body, out)
        self.result.stream_decisions += sum(1 for d in job.decisions if d.earlier)
        streams.remember(store, message_id=message_id, sender=self.sender, recipients=[self.recipient],
                         thread=thread, disclosed=job.disclosed)  # fmt: skip

    def arrived(self) -> tuple[str, str]:
        """The joined text that arrived, and the same of the messages from the second on."""
        return "\n\n".join(out for _i, out in self.delivered), "\n\n".join(o for i, o in self.delivered if i > 0)

    def first(self) -> str:
        """What arrived of the first message ("" when it was held)."""
        return next((out for i, out in self.delivered if i == 0), "")


def run_thread(
    engine: Engine,
    store: SQLiteStore,
    doc: EvalDocument,
    policy: PolicyConfig,
    parts: Sequence[str],
    n: int,
) -> tuple[ThreadResult, str, str]:
    """Send one thread through the gateway's path; (its result, the joined text that arrived, and the same of the
    messages from the second on)."""
    run = _ThreadRun(doc, policy, parts, n, n)
    for i in range(len(parts)):
        run.send(engine, store, i)
    return run.result, *run.arrived()


def evaluate_threads(
    engine: Engine,
    docs: Sequence[EvalDocument],
    *,
    alpha: float,
    size: int,
    attackers: Mapping[str, Attacker],
    progress: Callable[[int], None] = lambda _n: None,
    one_stream: bool = False,
    cuts: int = CUTS,
    **sanitize: object,
) -> ThreadReport:
    """``one_stream``: every thread from one sender to one recipient, their messages interleaved (the first of
    each thread, then the second of each, ...), as threads share a list's stream; else a stream per thread.
    ``cuts``: how many passage cuts an attacker that reads passages reads each thread at (``cuts_of``)."""
    candidates = tuple(dict.fromkeys(d.entity for d in docs))
    report = ThreadReport(alpha, size, candidates, tuple(attackers), one_stream=one_stream, cuts=cuts)
    threads = [(doc, split_thread(doc.text, size)) for doc in docs]
    for name, attacker in attackers.items():
        original, naive = report.original.setdefault(name, {}), report.naive.setdefault(name, {})
        for doc, parts in threads:
            joined = "\n\n".join(parts)
            original[doc.doc_id] = rank_of(attacker.scores(joined, candidates), doc.entity)
            naive[doc.doc_id] = rank_of(attacker.scores(naive_removal(joined, doc.entity), candidates), doc.entity)
            original_later = report.original_later.setdefault(name, {})
            original_later[doc.doc_id] = rank_of(attacker.scores("\n\n".join(parts[1:]), candidates), doc.entity)
    # Alone first: the memory run then finds the counts both share warm, and its extra time is the memory's own.
    for mode, days in (("alone", 0.0), ("memory", 30.0)):
        started = time.perf_counter()
        runs = [
            _ThreadRun(doc, PolicyConfig(
                name="topic", content=ContentPolicy(),
                sanitize=SanitizePolicy(entities=(doc.entity,), alpha=alpha, **sanitize),  # type: ignore[arg-type]
                stream_memory_days=days,
            ), parts, n, 0 if one_stream else n)
            for n, (doc, parts) in enumerate(threads)
        ]  # fmt: skip
        # A stream per thread: each thread whole, one after the other; one stream: message by message, interleaved.
        order = [(r, i) for i in range(size) for r in runs if i < len(r.parts)] if one_stream else [
            (r, i) for r in runs for i in range(len(r.parts))]  # fmt: skip
        with tempfile.TemporaryDirectory(prefix="sanigate-threads-") as tmp:
            store = SQLiteStore(Path(tmp) / "store.db")
            try:
                for run, i in order:
                    run.send(engine, store, i)
            finally:
                store.close()
        for run in runs:
            joined, later = run.arrived()
            attacked = time.perf_counter()
            first = run.first()
            for name, attacker in attackers.items():
                scores = attacker.scores(joined, candidates)
                run.result.ranks[name] = rank_of(scores, run.doc.entity)
                run.result.margins[name] = margin_of(scores, run.doc.entity)
                run.result.later_ranks[name] = rank_of(attacker.scores(later, candidates), run.doc.entity)
                if first:
                    run.result.first_ranks[name] = rank_of(attacker.scores(first, candidates), run.doc.entity)
                if len(cut := cuts_of(attacker, cuts)) > 1:
                    ranks = (run.result.cut_ranks, run.result.cut_later_ranks, run.result.cut_first_ranks)
                    for into, text in zip(ranks, (joined, later, first), strict=True):
                        if text:
                            into[name] = [rank_of(a.scores(text, candidates), run.doc.entity) for a in cut]
            started += time.perf_counter() - attacked  # the attackers' time is not the gateway's
            progress(1)
        report.runs[mode] = [run.result for run in runs]
        report.seconds[mode] = time.perf_counter() - started
    return report


def threads_markdown(report: ThreadReport) -> str:
    lines = [
        f"# Threads: {len(report.runs.get('memory', []))} documents, each split into {report.size} messages, "
        f"α = {report.alpha:g}"
        + (
            ", all in one stream (one sender, one recipient), interleaved"
            if report.one_stream
            else ", each its own stream"
        ),
        "",
        f"Each attacker ranks {len(report.candidates)} candidates on the joined thread as it arrived, and on its "
        "later messages alone (the second on, joined: what the memory makes stricter; it changes a thread's first "
        "message only through an opening floor).",
        "",
        "| run | messages delivered | words kept | memory decisions | ms per message |",
        "|---|---|---|---|---|",
    ]
    runs = (("alone", "sanigate, each message alone"), ("memory", "sanigate, with the stream memory"))
    for mode, label in runs:
        if mode in report.runs:
            s = report.summary(mode)
            lines.append(f"| {label} | {s['delivered']:.1f} % | {s['words_kept']:.1f} % | {s['stream_decisions']:.0f} "
                         f"| {s['ms_per_message']:.0f} |")  # fmt: skip
    for name in report.attackers:
        lines += ["", f"## {name}", "", "| what the attacker reads | ranked first | mean rank |", "|---|---|---|"]
        for label, ranks in (("original thread", report.original.get(name, {})),
                             ("name removed (naive)", report.naive.get(name, {}))):  # fmt: skip
            if ranks:
                first = 100.0 * sum(1 for r in ranks.values() if r == 1) / len(ranks)
                lines.append(f"| {label} | {first:.1f} % | {sum(ranks.values()) / len(ranks):.2f} |")
        if ranks := report.original_later.get(name, {}):
            first = 100.0 * sum(1 for r in ranks.values() if r == 1) / len(ranks)
            lines.append(
                f"| original thread: later messages | {first:.1f} % | {sum(ranks.values()) / len(ranks):.2f} |"
            )
        for mode, label in runs:
            if mode in report.runs:
                s = report.summary(mode)
                lines.append(f"| {label} | {s[f'ranked_first {name}']:.1f} % | {s[f'mean_rank {name}']:.2f} |")
        for mode, label in runs:
            if mode in report.runs:
                s = report.summary(mode)
                lines.append(f"| {label}: later messages | {s[f'ranked_first_later {name}']:.1f} % "
                             f"| {s[f'mean_rank_later {name}']:.2f} |")  # fmt: skip
        if "alone" in report.runs:
            firsts = [r.first_ranks[name] for r in report.runs["alone"] if name in r.first_ranks]
            # In one stream a thread's first message is judged with the stream's other threads, and with an opening
            # floor (SanitizePolicy.opening_floor) at a lower floor: then not the same as alone.
            memory_firsts = [r.first_ranks.get(name) for r in report.runs.get("memory", [])]
            alike = memory_firsts == [r.first_ranks.get(name) for r in report.runs["alone"]]
            same = "the same in both runs" if alike and not report.one_stream else (
                "the run alone's; with the memory a thread's first may differ")  # fmt: skip
            lines.append(f"| sanigate: the first message alone ({same}) "
                         f"| {report.summary('alone')[f'ranked_first_first {name}']:.1f} % "
                         f"| {sum(firsts) / len(firsts) if firsts else 0.0:.2f} |")  # fmt: skip
        lines += _robust(report, name, runs)
    header = " | ".join(f"{n} alone | {n} with memory" for n in report.attackers)
    lines += ["", "Ranks on the joined thread, on its later messages in brackets.", "",
              f"| document | entity | {header} | delivered (memory) | memory decisions |",
              "|---|---|" + "---|---|" * len(report.attackers) + "---|---|"]  # fmt: skip
    alone = {r.doc_id: r for r in report.runs.get("alone", [])}
    for r in report.runs.get("memory", []):
        a = alone.get(r.doc_id)
        cells = " | ".join(f"{_ranks(a, n)} | {_ranks(r, n)}" for n in report.attackers)
        lines.append(f"| {r.doc_id} | {r.entity} | {cells} | {r.delivered}/{r.messages} | {r.stream_decisions} |")
    return "\n".join(lines) + "\n"


def _robust(report: ThreadReport, name: str, runs: Sequence[tuple[str, str]]) -> list[str]:
    """The margin on the joined thread, and first places at every passage cut (when the attacker reads passages)."""
    summaries = {mode: report.summary(mode) for mode, _label in runs if mode in report.runs}
    lines = ["", "The margin: the topic's score minus its best rival's, at least 0 when it is ranked first. Over the "
             f"passage cuts: the share ranked first with the attacker's passages cut at {report.cuts} offsets, a "
             "fraction of a passage apart (the mean, the range in brackets; an attacker reading no passages: -).", "",
             "| run | mean margin (joined) | ranked first over the passage cuts: joined | later messages "
             "| first message alone |", "|---|---|---|---|---|"]  # fmt: skip
    for mode, label in runs:
        if (s := summaries.get(mode)) is None:
            continue
        cells = []
        for what in ("", "_later", "_first"):
            key = f"ranked_first_cuts{what} {name}"
            cells.append(f"{s[key]:.1f} % ({s[f'ranked_first_cuts{what}_min {name}']:.1f}–"
                         f"{s[f'ranked_first_cuts{what}_max {name}']:.1f} %)" if key in s else "-")  # fmt: skip
        lines.append(f"| {label} | {s[f'mean_margin {name}']:+.4f} | " + " | ".join(cells) + " |")
    return lines


def _ranks(row: ThreadResult | None, attacker: str) -> str:
    if row is None or attacker not in row.ranks:
        return "-"
    return f"{row.ranks[attacker]} ({row.later_ranks.get(attacker, '-')})"
