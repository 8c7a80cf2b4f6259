"""gateway/heap.py: a worker gives back the pages large blocks took once they are freed (glibc)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# After one large block freed, glibc serves the next large blocks from its heap; small blocks kept between
# them (a cache's entries) pin that heap, so freeing the large ones gives nothing back, unless tuned.
PROBE = r"""
import sys
from pathlib import Path
from gateway import heap

def anonymous_mb():
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Anonymous:"):
            return int(line.split()[1]) / 1024

if sys.argv[1] == "tuned":
    assert heap.tune()
warm = bytearray(1_000_000)
del warm
before = anonymous_mb()
blocks, survivors = [], []
for _ in range(400):
    blocks.append(bytearray(200_000))
    survivors.append(bytearray(600))
for b in blocks:
    b[::4096] = b"x" * len(b[::4096])  # touch every page
held = anonymous_mb()
del blocks, b
heap.trim()
print(before, held, anonymous_mb())
"""


def _run(mode: str) -> tuple[float, float, float]:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True).stdout
    before, held, after = map(float, out.split())
    return before, held, after


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc")
def test_large_blocks_are_given_back_once_freed_in_a_tuned_process() -> None:
    before, held, after = _run("tuned")
    assert held - before > 70  # 80 MB were held
    assert after - before < 10


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc")
def test_untuned_the_trim_alone_gives_back_what_is_between_the_survivors() -> None:
    before, held, after = _run("plain")
    assert held - before > 70
    assert after - before < 20  # malloc_trim releases whole free pages inside the heap too
