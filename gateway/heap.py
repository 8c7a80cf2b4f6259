"""A sanitizer process's C heap: large blocks given back to the system once a message is done.

glibc serves a block of 128 KB or more from its own mapping, but raises that threshold to the
size of each such block freed (up to 32 MB), so that after one large message (a PDF's text of
40,000 words, its token lists and copies) later large blocks come from the heap, and a heap
only shrinks from its top: a worker that once held a large text keeps its pages for as long as
it runs. With the threshold fixed, every large block is unmapped when freed, and after a large
message the heap's free pages are returned (malloc_trim). Elsewhere than glibc: nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024  # glibc's own starting value, kept fixed
# A message this large leaves the heap fragmented enough to be worth a trim (a few ms on a 100 MB heap).
TRIM_AFTER_BYTES = 512 * 1024


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def tune() -> bool:
    """Fix glibc's mapping threshold in this process; False where the C library is not glibc."""
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        libc.mallopt(_M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD)
    )


def trim() -> bool:
    """Give the heap's free pages back to the system; True when some were."""
    libc = _libc()
    return bool(libc.malloc_trim(0)) if libc is not None else False
