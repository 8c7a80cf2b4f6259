"""A digest of every output of a worker on archive messages, to show that a speed change changed no output.

    nice -n 5 .venv/bin/python bench/output_digest.py [--limit 300] [--identifiers safe-harbor] OUT
    PYTHONPATH=/path/to/other/tree nice -n 5 .venv/bin/python /path/to/other/tree/bench/output_digest.py OUT2
    diff OUT OUT2

Runs ``gateway.worker.sanitize_message`` on the messages `bench_gateway.py` sends (same loader and seed,
CRLF), with the stream memory recalled and remembered in arrival order from a real SQLite store, as
`bench/worker_stages.py` does, and writes one line a message: verdict, reason, number of decisions and
digests of the output bytes, the decisions (every field, with the earlier messages they relied on), the
notes, utility and hold cause, and the terms the memory keeps. What varies from run to run whatever the
code is normalized first: the MIME boundaries the generator draws, the time the bench's DOCX was built
(and the zip entries' times of a rebuilt one: entries are compared by content), and a rebuilt PDF's dates
and ids (pages are compared by their content streams). ``--identifiers KINDS`` (comma-separated, as a policy's
``identifiers``) adds those kinds to the bench's policy, so that the identifier pass runs before the engine.
"""

from __future__ import annotations

import argparse
import email
import hashlib
import io
import random
import re
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_gateway import config, load_messages  # noqa: E402

from gateway import streams, worker  # noqa: E402
from gateway.config import load_config  # noqa: E402
from gateway.store import open_store  # noqa: E402

_LINE_ENDS = re.compile(rb"\r\n|\n|\r(?!\n)")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _pdf_pages(body: bytes) -> bytes:
    import pikepdf

    with pikepdf.open(io.BytesIO(body)) as pdf:
        pages = []
        for page in pdf.pages:
            contents = page.obj.Contents
            streams_ = contents if isinstance(contents, pikepdf.Array) else [contents]
            pages.append(b"".join(c.read_bytes() for c in streams_))
        return b"|".join(pages)


def normalized(data: bytes) -> bytes:
    """The output with what differs between two runs of the same code replaced by what a reader sees."""
    if b"UEsDB" in data or b"JVBER" in data:  # base64 of a ZIP (DOCX) or a PDF
        for part in email.message_from_bytes(data).walk():
            body = None if part.is_multipart() else part.get_payload(decode=True)
            if not isinstance(body, bytes):
                continue
            encoded = part.get_payload()
            raw = encoded.encode() if isinstance(encoded, str) else b""
            if b"%PDF-" in body[:1024]:
                data = data.replace(raw, b"PDF:" + _pdf_pages(body))
            elif body[:4] == b"PK\x03\x04":
                with zipfile.ZipFile(io.BytesIO(body)) as z:
                    entries = b"|".join(i.filename.encode() + b"=" + z.read(i) for i in z.infolist())
                data = data.replace(raw, b"ZIP:" + entries)
    data = re.sub(rb"===============\d+==", b"=BOUNDARY=", data)
    return re.sub(rb'w:date="[^"]*"', b'w:date=""', data)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--identifiers", default="", help="identifier kinds for the policy, e.g. safe-harbor or all")
    args = ap.parse_args()
    messages = [(s, _LINE_ENDS.sub(b"\r\n", d)) for s, d in load_messages(args.limit, random.Random(11))]
    path = config(Path(tempfile.mkdtemp()), 2525, True)
    if args.identifiers:
        kinds = ", ".join(f'"{k.strip()}"' for k in args.identifiers.split(","))
        text = path.read_text()
        path.write_text(text.replace("[policies.us-medical]\n", f"[policies.us-medical]\nidentifiers = [{kinds}]\n", 1))
    cfg = load_config(path)
    store = open_store(cfg.store)
    worker.init_worker(cfg.engine)
    lines = []
    for i, (sender, data) in enumerate(messages):
        policies = cfg.policies_for(sender)
        thread = streams.thread_for(data, policies)
        memory = streams.recall(store, policies, sender=sender, recipients=["list@example.org"], thread=thread)
        r = worker.sanitize_message(data, policies, f"m{i}", memory=memory)
        rest = repr((r.notes, r.utility, r.cause)).encode()
        lines.append(
            f"{i} {r.verdict} {r.reason} {len(r.decisions)} output={_digest(normalized(r.data or b''))}"
            f" decisions={_digest(repr(r.decisions).encode())} rest={_digest(rest)}"
            f" remembered={_digest(repr(sorted(r.disclosed.items())).encode())}"
        )
        if r.verdict == "forward" and r.disclosed:
            streams.remember(store, message_id=f"m{i}", sender=sender, recipients=["list@example.org"],
                             thread=thread, disclosed=r.disclosed)  # fmt: skip
    args.out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} messages -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
