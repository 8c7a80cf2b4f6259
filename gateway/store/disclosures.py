"""Decoded rows of the disclosure memory, kept between recalls.

A stream's memory is read for every message of the stream, and a busy stream (a mailing list:
one sender, one recipient) holds hundreds of rows: reading and decoding every row for every
message made the SMTP front's recall O(stream size) in JSON and Fernet work. A row of
``stream_memory`` is written once and never changed, only deleted (expiry, purge), so its
decoded form can be kept. The store still asks the database which rows the stream holds now
(ids and times only, from the stream's index), so a row another gateway wrote a moment ago is
found, and a row expired or purged anywhere is not returned; only the rows this process has not
decoded yet are read whole.

A row is known by its id *and* its time: SQLite may give a deleted row's id to a new row (an
``INTEGER PRIMARY KEY`` without AUTOINCREMENT reuses the largest id once it is deleted), and the
new row then has a later time.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable

from gateway.model.memory import Disclosure

RowKey = tuple[int, float]  # (id, at)
DEFAULT_ROWS = 20_000  # ~1 KB each with their terms; a 30-day list stream of 600 messages is 600 rows


class DisclosureCache:
    """The most recently recalled rows, decoded; thread-safe (the front recalls from a pool of threads)."""

    def __init__(self, max_rows: int = DEFAULT_ROWS) -> None:
        self.max_rows = max_rows
        self._rows: OrderedDict[RowKey, Disclosure] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def known(self, keys: Iterable[RowKey]) -> dict[RowKey, Disclosure]:
        """The rows among ``keys`` that are kept, marked as recently used."""
        out: dict[RowKey, Disclosure] = {}
        with self._lock:
            rows = self._rows
            for key in keys:
                d = rows.get(key)
                if d is not None:
                    rows.move_to_end(key)
                    out[key] = d
        return out

    def add(self, key: RowKey, disclosure: Disclosure) -> Disclosure:
        """Keep a decoded row (its terms interned: a stream repeats the same words row after row)."""
        kept = Disclosure(message_id=disclosure.message_id, at=disclosure.at, policy=sys.intern(disclosure.policy),
                          sender=disclosure.sender, recipient=disclosure.recipient,
                          terms=tuple(sys.intern(t) for t in disclosure.terms), thread=disclosure.thread,
                          mail_id=disclosure.mail_id)  # fmt: skip
        with self._lock:
            self._rows[key] = kept
            self._rows.move_to_end(key)
            while len(self._rows) > self.max_rows:
                self._rows.popitem(last=False)
        return kept
