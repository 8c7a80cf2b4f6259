"""The share of the shared samples that is held (a typed error) rather than delivered, by reason.

Runs the pipeline of whichever checkout it is started from, so the same command gives the before and after:

    nice -n 5 .venv/bin/python bench/held_share.py [SAMPLES_DIR]   # default ../shared/samples (email, docx, pdf)
    nice -n 5 .venv/bin/python bench/held_share.py --archive [LIMIT]   # the load-test archive, us-medical policy
"""

from __future__ import annotations

import collections
import json
import sys
from collections.abc import Iterator
from pathlib import Path


def main() -> None:
    from extractors.pipeline import process
    from gateway.assemble import EngineConfig, build_engine
    from gateway.errors import SanigateError
    from gateway.model.records import SanitizePolicy

    samples = Path(__file__).resolve().parents[2] / "shared" / "samples"
    if sys.argv[1:2] == ["--archive"]:
        items = _archive(samples / "loadtest" / "usrp-users_lists.ettus.com_eml.tar.xz", sys.argv[2:3])
        policy = SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"), alpha=1.5)
    else:
        root = Path(sys.argv[1]) if len(sys.argv) > 1 else samples
        files = sorted(p for sub in ("email", "docx", "pdf") for p in (root / sub).rglob("*") if p.is_file())
        items = ((str(p.relative_to(root)), p.name, p.read_bytes()) for p in files)
        policy = SanitizePolicy(entities=("HIV", "Los Angeles", "Catholicism"), alpha=1.5)
    engine = build_engine(EngineConfig())
    reasons: collections.Counter[str] = collections.Counter()
    held: dict[str, str] = {}
    n = 0
    for key, name, data in items:
        n += 1
        try:
            process(data, engine=engine, policies=[policy], name=name)
        except SanigateError as exc:
            reason = getattr(exc, "reason", type(exc).__name__)
            reasons[reason] += 1
            held[key] = f"{reason}: {exc.message[:160]}"
    print(json.dumps({"files": n, "held": sum(reasons.values()), "by_reason": reasons, "held_files": held}, indent=1))


def _archive(path: Path, limit: list[str]) -> Iterator[tuple[str, str, bytes]]:
    import tarfile

    most = int(limit[0]) if limit else None
    with tarfile.open(path) as tar:
        count = 0
        for member in tar:
            f = tar.extractfile(member) if member.isfile() else None
            if f is None:
                continue
            yield member.name, "message.eml", f.read()
            count += 1
            if most and count >= most:
                return


if __name__ == "__main__":
    main()
