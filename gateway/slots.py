"""Which message goes to a free sanitizer process next: one that another message of its sender waits on.

A policy that remembers makes each sender's messages a chain: a message is judged against what its
sender's previous message disclosed, so it waits for that one to be sent (smtp._SenderOrder). A mailing
list is one sender and half of an archive's messages, so its chain sets the pace of the whole gateway.
Handed to the process pool as they came, the chain's next message queued behind every other sender's,
and the pool sat idle while the chain waited (measured: 60 % of two cores busy with the memory on, 90 %
with it off). ``JobSlots`` keeps at most as many jobs in the pool as it has processes and gives a freed
one to the longest-waiting urgent message (one that a later message waits on), else the longest-waiting
message. Each message is still judged exactly as before; only the order of the judging changes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field


@dataclass(slots=True)
class _Waiting:
    urgent: Callable[[], bool]  # asked when a slot frees: is another message waiting on this one now?
    ready: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class JobSlots:
    """At most ``size()`` jobs at a time; the freed slot goes to the oldest urgent waiter, else the oldest."""

    def __init__(self, size: Callable[[], int]) -> None:
        self._size = size
        self._busy = 0
        self._waiting: list[_Waiting] = []

    @property
    def busy(self) -> int:
        return self._busy

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @contextlib.asynccontextmanager
    async def slot(self, urgent: Callable[[], bool] = lambda: False) -> AsyncIterator[None]:
        if self._busy < self._size() and not self._waiting:
            self._busy += 1
        else:
            entry = _Waiting(urgent)
            self._waiting.append(entry)
            try:
                await entry.ready  # the slot is handed over with the result: ``_busy`` already counts it
            except BaseException:
                if entry in self._waiting:
                    self._waiting.remove(entry)
                elif entry.ready.done() and not entry.ready.cancelled():
                    self._release()  # handed a slot, then cancelled (a timeout) before it ran: pass it on
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        """Hand the slot to the next waiter, or free it (a smaller ``size()`` after a reload: free it)."""
        while self._waiting and self._busy <= self._size():
            i = next((k for k, w in enumerate(self._waiting) if w.urgent()), 0)
            entry = self._waiting.pop(i)
            if not entry.ready.done():
                entry.ready.set_result(None)
                return
        self._busy -= 1
