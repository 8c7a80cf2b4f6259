"""Names half removed: capitalised words left beside a ``[PERSON n]`` placeholder in the worker's output.

    nice -n 5 .venv/bin/python bench/half_names.py [--limit 300] [--kinds safe-harbor]

The bench's archive messages (bench_gateway.load_messages, the same sample as output_digest.py) go through
``worker.sanitize_message`` with the policy's identifiers; the output's headers and text parts are searched for
"Word [PERSON n]" and "[PERSON n] Word". Not every hit is a leak ("Hi [PERSON 1]", "Primary [PERSON 7]" where a
technical word was read as a name), so the hits are counted by word, most frequent first: a surname left
beside its first name's placeholder shows up as a name among them.
"""

from __future__ import annotations

import argparse
import email
import random
import re
import sys
import tempfile
from collections import Counter
from email import policy as email_policy
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_gateway import config, load_messages  # noqa: E402

from gateway import worker  # noqa: E402
from gateway.config import load_config  # noqa: E402

_BESIDE = re.compile(r"\[PERSON \d+\] ([A-Z][a-z]+)\b|\b([A-Z][a-z]+) \[PERSON \d+\]")
_LINE_ENDS = re.compile(rb"\r?\n")


def visible_text(data: bytes) -> str:
    msg = email.message_from_bytes(data, policy=email_policy.default)
    out = [" ".join(str(v) for _, v in msg.items())]
    for part in msg.walk():
        if part.get_content_maintype() == "text":
            try:
                out.append(part.get_content())
            except (LookupError, ValueError):
                continue
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--kinds", default="safe-harbor", help="the policy's identifiers, comma-separated")
    args = ap.parse_args()
    messages = [(s, _LINE_ENDS.sub(b"\r\n", d)) for s, d in load_messages(args.limit, random.Random(11))]
    path = config(Path(tempfile.mkdtemp()), 2525, True)
    kinds = ", ".join(f'"{k.strip()}"' for k in args.kinds.split(","))
    text = path.read_text()
    path.write_text(text.replace("[policies.us-medical]\n", f"[policies.us-medical]\nidentifiers = [{kinds}]\n", 1))
    cfg = load_config(path)
    worker.init_worker(cfg.engine)
    words: Counter[str] = Counter()
    for i, (sender, data) in enumerate(messages):
        r = worker.sanitize_message(data, cfg.policies_for(sender), f"m{i}", memory=None)
        if r.data is not None:
            words.update(a or b for a, b in _BESIDE.findall(visible_text(r.data)))
    print(f"{sum(words.values())} capitalised words beside a [PERSON n] in {len(messages)} messages")
    for word, n in words.most_common(30):
        print(f"{n:6d}  {word}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
