"""A sanitizer worker's own memory, stage by stage, over the messages bench_gateway.py sends.

    nice -n 5 .venv/bin/python bench/worker_memory.py [--messages 750] [--skip-large]

One process does what a worker of `sanigate serve` does (gateway.worker.init_worker, then
sanitize_message for every other message of bench_gateway's 1,500: its share with two workers)
under the us-medical policy, and reports its anonymous memory (the worker's own; K and WordNet
are mapped files) from /proc/self/smaps_rollup after each stage. The messages are written to a
temporary folder by a child process first, so that reading them leaves nothing in this one.
``--skip-large`` leaves out messages of 1 MB or more (the archive has one, whose PDF gives a text
of 42,000 tokens). ``--stream-memory``: each message is judged with what a real SQLite store's stream
memory recalls (one stream, every message remembered once delivered, in order), as the gateway's front
hands it to a worker; ``--rounds N`` sends the share N times, as bench_gateway.py's three rounds do.
Without them, no stream memory: bench_gateway.py measures a whole gateway's workers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]


def anonymous_mb() -> float:
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Anonymous:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise SystemExit("no /proc/self/smaps_rollup")


def _children_cpu() -> float:
    """CPU of the children that ended (the PDF sandbox's, and those judging very large texts)."""
    t = os.times()
    return t.children_user + t.children_system


def dump(folder: Path) -> None:
    import random

    import bench_gateway

    for i, (_sender, data) in enumerate(bench_gateway.load_messages(1500, random.Random(11))):
        (folder / f"{i:05d}.eml").write_bytes(data)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=750)
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--stream-memory", action="store_true")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dump:
        dump(args.dump)
        return 0
    stages: list[tuple[str, float]] = [("interpreter", anonymous_mb())]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        subprocess.run([sys.executable, __file__, "--dump", str(folder)], check=True)
        files = sorted(folder.iterdir())[: 2 * args.messages : 2]
        if args.skip_large:
            files = [f for f in files if f.stat().st_size < 1_000_000]
        files *= args.rounds
        from bench_gateway import config

        from gateway import streams
        from gateway.config import load_config
        from gateway.store import open_store
        from gateway.worker import check_policies, init_worker, sanitize_message

        stages.append(("imports", anonymous_mb()))
        cfg = load_config(config(folder, 25, True))
        store = open_store(cfg.store) if args.stream_memory else None
        init_worker(cfg.engine)
        policies = cfg.policies_for("someone@example.org")
        check_policies(policies)
        stages.append(("engine ready", anonymous_mb()))
        started = time.process_time()
        children = _children_cpu()
        marks = {10, 100, 300, 750, len(files)}
        sender, recipients = "list@example.org", ["someone@example.org"]
        for i, f in enumerate(files, 1):
            data = f.read_bytes()
            if store is None:
                sanitize_message(data, policies, f.name)
            else:
                thread = streams.thread_for(data, policies)
                memory = streams.recall(store, policies, sender=sender, recipients=recipients, thread=thread)
                result = sanitize_message(data, policies, f"m{i}", memory=memory)
                if result.verdict == "forward" and result.disclosed:
                    streams.remember(store, message_id=f"m{i}", sender=sender, recipients=recipients,
                                     thread=thread, disclosed=result.disclosed)  # fmt: skip
            if i in marks:
                stages.append((f"after {i} messages", anonymous_mb()))
        cpu = time.process_time() - started
        cpu_children = _children_cpu() - children
    load = Path("/proc/loadavg").read_text().split()[:3]
    for name, mb in stages:
        print(f"{name:24s} {mb:7.1f} MB")
    print(json.dumps({"anonymous_mb": dict(stages), "cpu_s": round(cpu, 1), "children_cpu_s": round(cpu_children, 1),
                      "load_average_at_end": load}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
