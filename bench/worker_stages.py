"""Where a worker's CPU goes, stage by stage, on archive messages.

    nice -n 5 .venv/bin/python bench/worker_stages.py [--limit 200]

Runs ``gateway.worker.sanitize_message`` in this process exactly as a `sanigate serve` worker calls it, on
the messages `bench_gateway.py` sends (same loader and seed, line ends made CRLF as aiosmtplib sends
them), with the stream memory recalled before and remembered after each message from a real SQLite store,
in arrival order, as the SMTP front does. Each stage of the pipeline is timed in CPU time (thread time, so
other work on the machine moves it less than wall time): extraction (the message, and the pipeline's
re-read of a rebuilt one), the engine, the rebuild, the parse of a rewritten output that both checks read, the
pipeline's check of the rebuilt content, the independent last check, and the memory's read of the output.
Prints ms of CPU per message, and the CPU of ``sanitize_message`` by what it did to the message (clean,
rewritten for one term only, rewritten otherwise).
"""

from __future__ import annotations

import argparse
import collections
import functools
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_gateway import config, load_messages  # noqa: E402

import extractors.mail as mail  # noqa: E402
import extractors.pipeline as pipeline  # noqa: E402
from gateway import streams, worker  # noqa: E402
from gateway.config import load_config  # noqa: E402
from gateway.store import open_store  # noqa: E402

_LINE_ENDS = re.compile(rb"\r\n|\n|\r(?!\n)")


def timed(owner: Any, name: str, label: str, spent: collections.Counter[str]) -> None:
    """Wrap ``owner.name`` so that the CPU time spent in it adds up under ``label``."""
    inner: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label] += time.thread_time() - started

    setattr(owner, name, wrapper)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=200)
    args = ap.parse_args()
    messages = [(s, _LINE_ENDS.sub(b"\r\n", d)) for s, d in load_messages(args.limit, random.Random(11))]
    tmp = Path(tempfile.mkdtemp())
    cfg = load_config(config(tmp, 2525, True))
    store = open_store(cfg.store)
    worker.init_worker(cfg.engine)
    spent: collections.Counter[str] = collections.Counter()
    timed(pipeline, "extract", "extract (and the check's re-read)", spent)
    timed(pipeline, "sanitize_extracted", "engine", spent)
    timed(mail.MailDocument, "rebuild", "rebuild", spent)
    timed(pipeline, "check_output", "check_output (re-read + flagged terms)", spent)
    timed(pipeline, "parse_mail", "parse_mail (a rewritten output, for both checks)", spent)
    timed(pipeline, "verify_output", "verify_output (the last check)", spent)
    timed(worker, "disclosed_terms", "disclosed_terms (the memory's read)", spent)
    outcomes: collections.Counter[str] = collections.Counter()
    by_kind: collections.Counter[str] = collections.Counter()  # CPU of sanitize_message, by what it did
    kinds: collections.Counter[str] = collections.Counter()
    started = time.thread_time()
    for i, (sender, data) in enumerate(messages):
        policies = cfg.policies_for(sender)
        thread = streams.thread_for(data, policies)
        memory = streams.recall(store, policies, sender=sender, recipients=["list@example.org"], thread=thread)
        before = time.thread_time()
        result = worker.sanitize_message(data, policies, f"m{i}", memory=memory)
        kind = _kind(result)
        by_kind[kind] += time.thread_time() - before
        kinds[kind] += 1
        outcomes[result.reason] += 1
        if result.verdict == "forward" and result.disclosed:
            streams.remember(store, message_id=f"m{i}", sender=sender, recipients=["list@example.org"],
                             thread=thread, disclosed=result.disclosed)  # fmt: skip
    total = time.thread_time() - started
    n = len(messages)
    print(f"{n} messages {dict(outcomes)}; load average {Path('/proc/loadavg').read_text().split()[:3]}")
    print(f"  {'all (with the store)':42s} {1000 * total / n:7.2f} ms CPU/message")
    for label, seconds in spent.items():
        print(f"  {label:42s} {1000 * seconds / n:7.2f} ms CPU/message")
    print("sanitize_message, by what it did to the message:")
    for kind, count in kinds.most_common():
        print(f"  {kind:42s} {1000 * by_kind[kind] / count:7.2f} ms CPU/message ({count} messages)")
    return 0


def _kind(result: worker.JobResult) -> str:
    """Clean, rewritten for one term only (the list's "abuse" in X-AntiAbuse, mostly), or rewritten otherwise."""
    if result.reason != "sanitized":
        return result.reason
    terms = {d.term for d in result.decisions}
    return f"sanitized for {next(iter(terms))!r} only" if len(terms) == 1 else "sanitized, several terms"


if __name__ == "__main__":
    raise SystemExit(main())
