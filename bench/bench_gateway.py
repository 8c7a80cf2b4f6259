"""Load test: replay the mailing-list archive through `sanigate serve`, sanitizing and not.

    .venv/bin/python bench/bench_gateway.py [--limit N] [--concurrency 8]

Both runs use the same gateway, the same process pool and the same upstream
capture server on loopback; the baseline has no policy (the proxy path only),
the other the 3-entity us-medical policy. A DOCX attachment is added to 5 % of
the messages and a PDF to 2 %. Reports messages/s, p50/p99 latency and peak
RSS of the gateway and its workers, and the ratio of the two throughputs.
Results: bench/results/gateway.json.
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
                 pid: int | None = None) -> dict[str, float]:  # fmt: skip
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
    if pid is None:  # several gateways: no single process to account for
        for key in ("peak_rss_mb", "cpu_ms_per_message"):
            result.pop(key)
    return result


def start_gateway(cfg: Path, tmp: Path) -> tuple[subprocess.Popen[str], int]:
    """`sanigate serve` as a process; returns it once it listens, with its port."""
    proc = subprocess.Popen([sys.executable, "-m", "gateway.cli", "serve", "--config", str(cfg)], cwd=tmp,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = int(re.search(r":(\d+)", line.split("listening on", 1)[1]).group(1))  # type: ignore[union-attr]
    return proc, port


def stop_gateway(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(60)
    if proc.stdout is not None:
        proc.stdout.close()


def save(name: str, result: dict[str, object]) -> None:
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")


def run(cfg: Path, tmp: Path, messages: list[tuple[str, bytes]], concurrency: int) -> dict[str, float]:
    proc, port = start_gateway(cfg, tmp)
    try:
        return asyncio.run(replay([port], messages, concurrency, proc.pid))
    finally:
        stop_gateway(proc)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    messages = load_messages(args.limit, random.Random(11))
    print(f"{len(messages)} messages, {sum(len(d) for _, d in messages) / 1e6:.1f} MB", flush=True)
    capture = ThreadedCapture()
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            base = run(config(tmp, capture.port, False), tmp, messages, args.concurrency)
            print("passthrough:", json.dumps(base), flush=True)
            capture.handler.messages.clear()
            san = run(config(tmp, capture.port, True), tmp, messages, args.concurrency)
            print("sanitizing: ", json.dumps(san), flush=True)
    finally:
        capture.close()
    result = {"passthrough": base, "sanitizing": san,
              "throughput_ratio": round(san["messages_per_s"] / base["messages_per_s"], 3),
              "concurrency": args.concurrency, "workers": 2}  # fmt: skip
    print("ratio sanitizing/passthrough:", result["throughput_ratio"])
    save("gateway", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
