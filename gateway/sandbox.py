"""Work done in a forked child process, under a time and a memory limit.

The child starts as a copy of this process (K, WordNet and the libraries already loaded, shared
copy-on-write) and everything it allocates goes when it exits: a hostile PDF cannot cost the
gateway more than the limits, and a very large text's tokens never enter a long-running worker's
heap, where the cache entries made meanwhile would pin its arenas for the worker's life.

The function's result comes back through a pipe (it must pickle). The function should not raise:
it reports its own failures in its result. The child's death (a signal, the memory limit hit
outside the function, an exception it let out) is ``ChildDiedError``; no result in time is
``ChildTimeoutError`` (the child is killed). Callers turn both into their own typed errors.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import resource
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TypeVar

T = TypeVar("T")


class ChildError(Exception):
    """The forked child gave no result."""


class ChildDiedError(ChildError):
    pass


class ChildTimeoutError(ChildError):
    pass


def address_space() -> int:
    """This process's virtual size in bytes (what RLIMIT_AS counts, mapped files included)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def run_forked(
    func: Callable[..., T],
    args: tuple[object, ...],
    *,
    max_seconds: float,
    max_memory: int,
    may_fork: bool = False,
) -> T:
    """``func(*args)`` in a forked child whose address space is limited to ``max_memory`` bytes.

    ``may_fork``: the child may start children of its own (multiprocessing forbids that to a daemon
    child, so it is then an ordinary one, still killed and joined here).
    """
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, func, args, max_memory), daemon=not may_fork)
    gc.freeze()  # objects that exist now are not collected in the child: no copy-on-write storm
    try:
        proc.start()
    finally:
        gc.unfreeze()
    send.close()
    try:
        if not recv.poll(max_seconds):
            raise ChildTimeoutError(f"no result within {max_seconds:g} s")
        result: T = recv.recv()
    except EOFError as exc:
        raise ChildDiedError("the child process died") from exc
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join(5)
    return result


def _child(conn: Connection, func: Callable[..., object], args: tuple[object, ...], max_memory: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (max_memory, max_memory))
    conn.send(func(*args))
