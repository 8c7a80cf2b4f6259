"""The chain a sender's messages form under the stream memory, alone: its throughput against the minimal relay's.

    nice -n 5 .venv/bin/python bench/bench_chain.py [--limit 1500] [--concurrency 8]

With a policy that remembers, each message of a sender is judged against what the sender's earlier
messages disclosed, so a mailing list's messages (43 % of `bench_gateway.py`'s archive messages) follow
one another. This replays only the busiest sender's messages among `bench_gateway.py`'s (same loader and
seed), through the minimal relay and then `sanigate serve` (bench_gateway's config), in one command:
sanigate's rate here is one over the chain's link (the wait for the predecessor, then the judging and
whatever else the link holds), whatever the number of workers. Prints both rates, the ratio, the
gateway's CPU per message and the outcomes; writes `bench/results/chain.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_gateway as bg  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=1500, help="bench_gateway's messages to pick the sender's from")
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    load_at_start = Path("/proc/loadavg").read_text().split()[:3]
    messages = bg.load_messages(args.limit, random.Random(11))
    sender, _n = collections.Counter(s.lower() for s, _d in messages).most_common(1)[0]
    chain = [(s, d) for s, d in messages if s.lower() == sender]
    print(f"{len(chain)} of {len(messages)} messages from one sender", flush=True)
    capture = bg.ThreadedCapture()
    runs: dict[str, dict[str, object]] = {}
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            plan = [("minimal_relay", [sys.executable, str(HERE / "minimal_relay.py"), "--upstream",
                                       f"127.0.0.1:{capture.port}"]),
                    ("sanitizing", bg.serve_cmd(bg.config(tmp, capture.port, True)))]  # fmt: skip
            for name, cmd in plan:
                proc, port = bg.start_listening(cmd, tmp)
                try:
                    capture.handler.messages.clear()
                    runs[name] = asyncio.run(bg.replay([port], chain, args.concurrency, proc.pid))  # type: ignore[arg-type]
                finally:
                    bg.stop_gateway(proc)
    finally:
        capture.close()
    rate = {name: float(r["messages_per_s"]) for name, r in runs.items()}  # type: ignore[arg-type]
    result: dict[str, object] = {**runs, "messages": len(chain), "concurrency": args.concurrency,
                                 "ratio_to_minimal_relay": round(rate["sanitizing"] / rate["minimal_relay"], 3),
                                 "load_average_at_start": load_at_start,
                                 "load_average_at_end": Path("/proc/loadavg").read_text().split()[:3]}  # fmt: skip
    s = runs["sanitizing"]
    print(f"one sender's chain: sanigate {rate['sanitizing']} against relay {rate['minimal_relay']} messages/s,"
          f" ratio {result['ratio_to_minimal_relay']}; CPU ms a message {s['cpu_ms_per_message']};"
          f" outcomes {s['outcomes']}; load {load_at_start[0]} -> {result['load_average_at_end'][0]}")  # type: ignore[index]  # fmt: skip
    bg.save("chain", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
