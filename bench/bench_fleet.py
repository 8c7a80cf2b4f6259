"""Two gateways, one shared store and K: PostgreSQL against SQLite + the local index, in one run.

    .venv/bin/python bench/bench_fleet.py [--limit 2000] [--concurrency 8]

Two `sanigate serve` processes (1 sanitizer worker each, this machine has 2
cores) take the replayed mailing-list archive in turns over 8 connections,
with the 3-entity us-medical policy, relaying to one capture server:

- baseline: both share one SQLite store file and each loads the local index;
- fleet: both use one PostgreSQL database for the store and for K (loaded
  with `load_index`, as `sanigate index build --to` does), with its shared
  cache of group counts.

PostgreSQL comes from $SANIGATE_TEST_POSTGRES (an admin URL), or a private
server started for the run. Reports messages/s, p50/p99, what the store
holds afterwards and, for the fleet, how many group counts the shared cache
holds. Results: bench/results/fleet.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))
from bench_gateway import load_messages, replay, save, start_gateway, stop_gateway  # noqa: E402
from gatewaykit import ThreadedCapture  # noqa: E402
from pgkit import Databases, PrivatePostgres  # noqa: E402


def config(tmp: Path, name: str, upstream: int, store: str, engine: str) -> Path:
    cfg = tmp / f"{name}.toml"
    cfg.write_text(f"""
[server]
listen = "127.0.0.1:0"
metrics_listen = "127.0.0.1:0"
workers = 1
max_in_flight = 64
max_message_size = 67108864
[upstream]
relay = "127.0.0.1:{upstream}"
[store]
{store}
[engine]
{engine}
[policies.us-medical]
entities = ["HIV", "sexually transmitted disease", "substance abuse"]
alpha = 1.5
[[senders]]
match = "default"
policies = ["us-medical"]
""")
    return cfg


def run(tmp: Path, name: str, upstream: int, store: str, engine: str, messages: list[tuple[str, bytes]],
        concurrency: int) -> dict[str, object]:  # fmt: skip
    procs = [start_gateway(config(tmp, f"{name}{i}", upstream, store, engine), tmp) for i in range(2)]
    try:
        return asyncio.run(replay([port for _p, port in procs], messages, concurrency))
    finally:
        for p, _port in procs:
            stop_gateway(p)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    from gateway.knowledge.local import LocalIndex, default_index_path
    from gateway.knowledge.postgres import load_index
    from gateway.store import open_store
    from gateway.store.base import MessageQuery
    from gateway.store.postgres import PostgresStore

    messages = load_messages(args.limit, random.Random(11))
    print(f"{len(messages)} messages, {sum(len(d) for _, d in messages) / 1e6:.1f} MB", flush=True)
    server = None
    admin = os.environ.get("SANIGATE_TEST_POSTGRES")
    if not admin:
        server = PrivatePostgres(Path(tempfile.mkdtemp(prefix="sanigate-pg-", dir="/var/tmp")))
        admin = server.admin_url
    databases = Databases(admin)
    capture = ThreadedCapture()
    try:
        url = databases.new()
        t = time.perf_counter()
        terms = load_index(LocalIndex(default_index_path()), url)
        load_s = time.perf_counter() - t
        upgrade = PostgresStore(url, check_schema=False)
        upgrade.upgrade()
        upgrade.close()
        print(f"K loaded into PostgreSQL: {terms} terms in {load_s:.1f} s", flush=True)
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            base = run(tmp, "sqlite", capture.port, f'path = "{tmp}/shared.db"', 'knowledge = "local"', messages,
                       args.concurrency)  # fmt: skip
            print("sqlite + local index:", json.dumps(base), flush=True)
            from gateway.config import StoreConfig

            sqlite_store = open_store(StoreConfig(path=tmp / "shared.db"))
            base["stored"] = sqlite_store.count_messages(MessageQuery())
            sqlite_store.close()
            fleet = run(tmp, "pg", capture.port, f'url = "{url}"',
                        f'knowledge = "postgresql"\nknowledge_url = "{url}"', messages, args.concurrency)  # fmt: skip
            print("postgresql store + K:", json.dumps(fleet), flush=True)
            pg = PostgresStore(url)
            fleet["stored"] = pg.count_messages(MessageQuery())
            fleet["shared_group_counts"] = int(pg._read().execute("SELECT COUNT(*) AS n FROM k_counts").fetchone()["n"])
            pg.close()
    finally:
        capture.close()
        databases.close()
        if server is not None:
            server.close()
    result = {"sqlite_and_local_index": base, "postgresql_store_and_k": fleet,
              "throughput_ratio": round(float(fleet["messages_per_s"]) / float(base["messages_per_s"]), 3),  # type: ignore[arg-type]
              "k_load_seconds": round(load_s, 1), "k_terms": terms, "gateways": 2, "workers_each": 1,
              "concurrency": args.concurrency}  # fmt: skip
    print("ratio postgresql/sqlite:", result["throughput_ratio"])
    save("fleet", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
