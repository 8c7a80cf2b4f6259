"""A sanitizer process's heaps: large C blocks given back to the system once a message is done, and
Python's collector kept off what the process holds for its whole life.

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


# A full collection walks every object the process keeps (a worker's caches fill with verdicts and keys as
# messages pass, the front's with decoded memory rows): at the interpreter's default it ran every 30 archive
# messages in a worker and took 6 % of its CPU. What survives the young generations is rarely garbage, and a
# full collection still comes, a tenth as often.
FULL_COLLECTION_AFTER = 100  # collections of the middle generation (the interpreter's default: 10)
# A message's own objects (a token and a term for each word, their lists and dicts) are freed by their counts
# when it is done; at the interpreter's 700 a young collection ran every few hundred words (4 a message) and
# walked the live ones, promoting them to be walked again: 3 % of a worker's CPU. Cycles are still collected
# young, after this many new objects (a few hundred KB).
YOUNG_COLLECTION_AFTER = 10_000


def tune_collector() -> None:
    """Leave what the process loaded out of every collection, collect the young generation after more new
    objects, and run full collections a tenth as often."""
    import gc

    gc.collect()
    gc.freeze()  # K's tables, WordNet, the policy tables, the configuration: kept for the life of the process
    _young, middle, _full = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_AFTER, middle, FULL_COLLECTION_AFTER)
