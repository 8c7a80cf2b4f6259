"""Load test: replay the mailing-list archive through a minimal relay and through `sanigate serve`.

    nice -n 5 .venv/bin/python bench/bench_gateway.py [--limit 1500] [--concurrency 8] [--passthrough]

Every run sends the same messages over the same number of connections to the
same upstream capture server on loopback, in one command. The baseline is the
floor of any Python relay: ``minimal_relay.py`` (aiosmtpd in, aiosmtplib out,
nothing else). Then `sanigate serve` with 2 workers and the 3-entity
us-medical policy (and, with ``--passthrough``, the same gateway with no
policy). A DOCX attachment is added to 5 % of the messages and a PDF to 2 %.
Reports messages/s, p50/p99 latency, CPU per message by role, peak RSS, each
worker's memory from /proc/PID/smaps_rollup (PSS, USS, and the anonymous
memory that is the worker's own beyond the mapped, shared K), the time to
start, and the ratios of the throughputs. Results: bench/results/gateway.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import aiosmtplib

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
from gatewaykit import ThreadedCapture  # noqa: E402

ARCHIVE = ROOT.parent / "shared" / "samples" / "loadtest" / "usrp-users_lists.ettus.com_eml.tar.xz"


def load_messages(limit: int | None, rng: random.Random) -> list[tuple[str, bytes]]:
    from builders import make_docx, make_pdf

    docx, pdf = make_docx(), make_pdf(["Quarterly report. The clinic in Los Angeles treats HIV patients."])
    out: list[tuple[str, bytes]] = []
    with tarfile.open(ARCHIVE) as tar:
        for member in tar:
            if not member.isfile():
                continue
            f = tar.extractfile(member)
            if f is None:
                continue
            data = f.read()
            msg = message_from_bytes(data, policy=policy.default)
            sender = str(msg.get("From", "")) or "list@example.org"
            m = re.search(r"[\w.+-]+@[\w.-]+", sender)
            sender = m.group(0) if m else "list@example.org"
            roll = rng.random()
            if roll < 0.07 and isinstance(msg, EmailMessage):
                try:
                    if msg.get_content_maintype() != "multipart":
                        msg.make_mixed()
                    if roll < 0.05:
                        msg.add_attachment(
                            docx,
                            maintype="application",
                            subtype=("vnd.openxmlformats-officedocument.wordprocessingml.document"),
                            filename="report.docx",
                        )
                    else:
                        msg.add_attachment(pdf, maintype="application", subtype="pdf", filename="report.pdf")
                    data = msg.as_bytes()
                except Exception:
                    pass  # a message the email package cannot rebuild is replayed as it is
            out.append((sender, data))
            if limit and len(out) >= limit:
                break
    return out


def config(tmp: Path, upstream: int, policies: bool) -> Path:
    cfg = tmp / ("sanitize.toml" if policies else "passthrough.toml")
    rules = '[[senders]]\nmatch = "default"\npolicies = ["us-medical"]\n' if policies else (
        '[[senders]]\nmatch = "default"\npolicies = []\n')  # fmt: skip
    cfg.write_text(f"""
[server]
listen = "127.0.0.1:0"
metrics_listen = "127.0.0.1:0"
workers = 2
max_in_flight = 64
max_message_size = 67108864
[upstream]
relay = "127.0.0.1:{upstream}"
[store]
path = "{tmp}/{cfg.stem}.db"
[policies.us-medical]
entities = ["HIV", "sexually transmitted disease", "substance abuse"]
alpha = 1.5
{rules}
""")
    return cfg


def cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU time (user + system) of a process and of its live children, seconds."""
    tick = os.sysconf("SC_CLK_TCK")

    def of(p: int) -> float:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return of(pid), sum(of(int(k)) for k in out.split())


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, MB."""
    out = subprocess.run(["ps", "-o", "rss=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    kids = sum(int(x) for x in out.split())
    own = int(Path(f"/proc/{pid}/status").read_text().split("VmRSS:")[1].split()[0])
    return (own + kids) / 1024


async def replay(ports: list[int], messages: list[tuple[str, bytes]], concurrency: int,
                 pid: int | None = None, *, keep_latencies: bool = False) -> dict[str, float]:  # fmt: skip
    """Send every message over ``concurrency`` connections spread over the gateways at ``ports``.

    With ``pid`` (one gateway), also sample its memory and its CPU time and that of its workers.
    """
    queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    for m in messages:
        queue.put_nowait(m)
    latencies: list[float] = []
    outcomes: dict[str, int] = {}
    peak = 0.0

    async def sampler() -> None:
        nonlocal peak
        while pid is not None:
            peak = max(peak, rss_mb(pid))
            await asyncio.sleep(1.0)

    async def worker(port: int) -> None:
        client = aiosmtplib.SMTP(hostname="127.0.0.1", port=port, timeout=300, start_tls=False)
        await client.connect()
        while not queue.empty():
            sender, data = queue.get_nowait()
            t = time.perf_counter()
            try:
                _refused, reply = await client.sendmail(sender, ["list@example.org"], data)
                key = reply.split(":", 1)[1].split()[0] if ":" in reply else "ok"
            except aiosmtplib.SMTPResponseException as exc:
                key = f"{exc.code}"
            except aiosmtplib.SMTPException as exc:
                key = type(exc).__name__
                await client.connect()
            latencies.append(time.perf_counter() - t)
            outcomes[key] = outcomes.get(key, 0) + 1
        await client.quit()

    sample = asyncio.create_task(sampler())
    main0, workers0 = cpu_seconds(pid) if pid is not None else (0.0, 0.0)
    own0 = time.process_time()
    started = time.perf_counter()
    await asyncio.gather(*(worker(ports[i % len(ports)]) for i in range(concurrency)))
    elapsed = time.perf_counter() - started
    main1, workers1 = cpu_seconds(pid) if pid is not None else (0.0, 0.0)
    own1 = time.process_time()
    sample.cancel()
    n = len(messages)
    latencies.sort()
    result: dict[str, float] = {
        "messages": len(messages),
        "seconds": round(elapsed, 1),
        "messages_per_s": round(len(messages) / elapsed, 1),
        "p50_ms": round(1000 * statistics.median(latencies), 1),
        "p99_ms": round(1000 * latencies[int(0.99 * (len(latencies) - 1))], 1),
        "peak_rss_mb": round(peak, 1),
        # Where the two cores went, per message: the gateway's event loop, its
        # sanitizing workers, and this process (the SMTP clients and the capture server).
        "cpu_ms_per_message": {  # type: ignore[dict-item]
            "gateway": round(1000 * (main1 - main0) / n, 2),
            "workers": round(1000 * (workers1 - workers0) / n, 2),
            "bench_client_and_upstream": round(1000 * (own1 - own0) / n, 2),
        },
        "outcomes": outcomes,  # type: ignore[dict-item]
    }
    if keep_latencies:  # for combining rounds; not saved
        result["_latencies"] = latencies  # type: ignore[assignment]
    if pid is None:  # several gateways: no single process to account for
        for key in ("peak_rss_mb", "cpu_ms_per_message"):
            result.pop(key)
    return result


def start_gateway(cfg: Path, tmp: Path) -> tuple[subprocess.Popen[str], int]:
    """`sanigate serve` as a process; returns it once it listens, with its port."""
    return start_listening([sys.executable, "-m", "gateway.cli", "serve", "--config", str(cfg)], tmp)


def start_listening(cmd: list[str], cwd: Path) -> tuple[subprocess.Popen[str], int]:
    """A server process that prints "listening on HOST:PORT" once it accepts connections."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = int(re.search(r":(\d+)", line.split("listening on", 1)[1]).group(1))  # type: ignore[union-attr]
    return proc, port


def smaps(pid: int) -> dict[str, float]:
    """A process's memory in MB: RSS, PSS (shared pages divided among their users), USS (pages no
    other process maps) and anonymous (heap: its own, unlike the mapped K's file pages)."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        fields[name] = int(rest.split()[0])
    return {"rss_mb": round(fields["Rss"] / 1024, 1), "pss_mb": round(fields["Pss"] / 1024, 1),
            "uss_mb": round((fields["Private_Clean"] + fields["Private_Dirty"]) / 1024, 1),
            "anonymous_mb": round(fields["Anonymous"] / 1024, 1),
            "file_pss_mb": round(fields.get("Pss_File", 0) / 1024, 1)}  # fmt: skip


def worker_memory(pid: int) -> list[dict[str, float]]:
    """The sanitizer processes of a gateway (not multiprocessing's resource tracker)."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    pids = [int(k) for k in out.split()]
    return [smaps(k) for k in pids if b"resource_tracker" not in Path(f"/proc/{k}/cmdline").read_bytes()]


def stop_gateway(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(60)
    if proc.stdout is not None:
        proc.stdout.close()


def save(name: str, result: dict[str, object]) -> None:
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")


def combine(parts: list[dict[str, object]]) -> dict[str, object]:
    """Rounds of one server as one run: totals, latency percentiles over every message."""
    n = sum(int(p["messages"]) for p in parts)  # type: ignore[call-overload]
    seconds = sum(float(p["seconds"]) for p in parts)  # type: ignore[arg-type]
    lat = sorted(x for p in parts for x in p.pop("_latencies"))  # type: ignore[attr-defined]
    out: dict[str, object] = {"messages": n, "seconds": round(seconds, 1), "messages_per_s": round(n / seconds, 1),
                              "p50_ms": round(1000 * statistics.median(lat), 1),
                              "p99_ms": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1),
                              "peak_rss_mb": max(float(p["peak_rss_mb"]) for p in parts)}  # type: ignore[arg-type]  # fmt: skip
    cpu: dict[str, float] = {}
    outcomes: dict[str, int] = {}
    for p in parts:
        m = int(p["messages"])  # type: ignore[call-overload]
        for k, v in p["cpu_ms_per_message"].items():  # type: ignore[attr-defined]
            cpu[k] = cpu.get(k, 0.0) + v * m / n
        for k, v in p["outcomes"].items():  # type: ignore[attr-defined]
            outcomes[k] = outcomes.get(k, 0) + v
    out["cpu_ms_per_message"] = {k: round(v, 2) for k, v in cpu.items()}
    out["outcomes"] = outcomes
    return out


def serve_cmd(cfg: Path) -> list[str]:
    return [sys.executable, "-m", "gateway.cli", "serve", "--config", str(cfg)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=1500)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3, help="the servers take turns, a share of the messages each")
    ap.add_argument("--passthrough", action="store_true", help="also run the gateway with no policy")
    args = ap.parse_args()
    load_at_start = Path("/proc/loadavg").read_text().split()[:3]
    messages = load_messages(args.limit, random.Random(11))
    print(f"{len(messages)} messages, {sum(len(d) for _, d in messages) / 1e6:.1f} MB", flush=True)
    capture = ThreadedCapture()
    parts: dict[str, list[dict[str, object]]] = {}
    starts: dict[str, float] = {}
    memory: list[dict[str, float]] = []
    procs: dict[str, tuple[subprocess.Popen[str], int]] = {}
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            plan = [("minimal_relay", [sys.executable, str(HERE / "minimal_relay.py"), "--upstream",
                                       f"127.0.0.1:{capture.port}"])]  # fmt: skip
            if args.passthrough:
                plan.append(("passthrough", serve_cmd(config(tmp, capture.port, False))))
            plan.append(("sanitizing", serve_cmd(config(tmp, capture.port, True))))
            try:
                for name, cmd in plan:
                    started = time.perf_counter()
                    procs[name] = start_listening(cmd, tmp)
                    starts[name] = round(time.perf_counter() - started, 2)
                # The servers take turns on the same share of messages, so that the load other
                # work puts on the machine falls on each of them alike.
                size = -(-len(messages) // args.rounds)
                for r in range(args.rounds):
                    share = messages[r * size : (r + 1) * size]
                    for name, _cmd in plan:
                        proc, port = procs[name]
                        capture.handler.messages.clear()
                        one = replay([port], share, args.concurrency, proc.pid, keep_latencies=True)
                        parts.setdefault(name, []).append(asyncio.run(one))  # type: ignore[arg-type]
                    print(f"round {r + 1}:", {n: p[-1]["messages_per_s"] for n, p in parts.items()}, flush=True)
                memory = worker_memory(procs["sanitizing"][0].pid)
            finally:
                for proc, _port in procs.values():
                    stop_gateway(proc)
    finally:
        capture.close()
    runs = {name: {**combine(p), "start_s": starts[name]} for name, p in parts.items()}
    runs["sanitizing"]["worker_memory"] = memory
    for name, r in runs.items():
        print(f"{name}:", json.dumps(r), flush=True)
    rate = {name: float(r["messages_per_s"]) for name, r in runs.items()}  # type: ignore[arg-type]
    result: dict[str, object] = {**runs, "concurrency": args.concurrency, "workers": 2, "rounds": args.rounds,
                                 "load_average_at_start": load_at_start,
                                 "load_average_at_end": Path("/proc/loadavg").read_text().split()[:3]}  # fmt: skip
    result["ratio_to_minimal_relay"] = round(rate["sanitizing"] / rate["minimal_relay"], 3)
    if "passthrough" in rate:
        result["ratio_to_passthrough"] = round(rate["sanitizing"] / rate["passthrough"], 3)
    print("sanitizing / minimal relay:", result["ratio_to_minimal_relay"], "load average at start and end:",
          load_at_start, result["load_average_at_end"])  # fmt: skip
    save("gateway", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
