"""What the last check costs: CPU per message of the pipeline without it, and of the verifier alone.

    nice -n 5 .venv/bin/python bench/verify_cost.py [N]    # the first N (1000) messages of the load-test archive

Both are measured in the same run, on the same messages, with the 3-entity us-medical policy of the gateway
benchmark; the figure that matters is their ratio.
"""

from __future__ import annotations

import contextlib
import sys
import tarfile
import time
from pathlib import Path

ARCHIVE = (
    Path(__file__).resolve().parents[2] / "shared" / "samples" / "loadtest" / "usrp-users_lists.ettus.com_eml.tar.xz"
)


def main() -> None:
    from extractors.pipeline import _needles, process
    from gateway.assemble import EngineConfig, build_engine
    from gateway.errors import SanigateError
    from gateway.model.records import SanitizePolicy
    from gateway.verify import find_trace

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    engine = build_engine(EngineConfig())
    policy = SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"), alpha=1.5)
    messages: list[bytes] = []
    with tarfile.open(ARCHIVE) as tar:
        for member in tar:
            f = tar.extractfile(member) if member.isfile() else None
            if f is not None:
                messages.append(f.read())
            if len(messages) >= n:
                break
    needles = _needles(engine, engine.entities_of(policy))
    t0 = time.process_time()
    for data in messages:
        with contextlib.suppress(SanigateError):
            process(data, engine=engine, policies=[policy], name="m.eml", verify=False)
    t1 = time.process_time()
    for data in messages:
        find_trace(data, "mail", needles, part="m.eml")
    t2 = time.process_time()
    per = 1000 / len(messages)
    print(f"{len(messages)} messages: pipeline without the check {(t1 - t0) * per:.2f} ms each, "
          f"the check alone {(t2 - t1) * per:.2f} ms each, ratio {(t2 - t1) / (t1 - t0):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
