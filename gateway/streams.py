"""The disclosure memory at the gateway's edge: which stream a message belongs to, what it recalls, what it leaves.

The model (``gateway.model.memory``) says how a memory joins the group
checks; this module reads the thread headers, asks the store for the
disclosures each policy's window still holds, and writes what a delivered
message let through. The SMTP handler calls it in each sender's turn, so a
message is always judged against every message its sender sent before it.
"""

from __future__ import annotations

import email.parser
import email.policy
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from gateway.config import PolicyConfig
from gateway.model.memory import Disclosure, Memory, counted
from gateway.store.base import Store, StreamQuery
from gateway.store.disclosures import RowKey

DAY = 86400.0
_MSGID = re.compile(r"<[^<>\s]+>")


@dataclass(frozen=True, slots=True)
class Thread:
    mail_id: str  # the message's own Message-ID ("" when it has none)
    root: str  # the first message of its thread: References' first id, else In-Reply-To, else its own


def thread_of(data: bytes) -> Thread:
    """Read the thread headers only; a message with none is the root of its own thread."""
    block = header_block(data)
    fields = _plain_fields(block, _THREAD_FIELDS)
    try:
        if fields is None:  # anything but plain ASCII fields: as the library's parser reads it
            headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(block)
            fields = {name: str(headers.get(name, "")) for name in _THREAD_FIELDS}
        own = _MSGID.search(fields.get("message-id", ""))
        refs = _MSGID.findall(fields.get("references", ""))
        reply = _MSGID.search(fields.get("in-reply-to", ""))
    except (TypeError, ValueError, LookupError):
        return Thread("", "")
    mail_id = own.group(0) if own else ""
    root = refs[0] if refs else reply.group(0) if reply else mail_id
    return Thread(mail_id, root)


_THREAD_FIELDS = ("message-id", "references", "in-reply-to")
_FIELD_NAME = re.compile(r"[\x21-\x39\x3b-\x7e]+:")  # what compat32's parser takes for a field's name
_OTHER_LINE_ENDS = b"\x0b\x0c\x1c\x1d\x1e"  # str.splitlines splits there, the mail parser does not


def _plain_fields(block: bytes, wanted: tuple[str, ...]) -> dict[str, str] | None:
    """The first value of each ``wanted`` field (lower-case names), when the header block is plain.

    The SMTP front reads three fields of every message; the library's parser builds every field of
    the block for that (7 % of the front's time on the archive). Plain means ASCII, and every line a
    field or its continuation: for anything else (8-bit bytes, a Unix From line, a line that is no
    field) None, and the caller asks the parser. A value is returned unfolded: continuation lines
    start with a space or tab, so a search for whitespace-free message ids finds what it finds in
    the folded value.
    """
    if not block.isascii() or len(block.translate(None, _OTHER_LINE_ENDS)) != len(block):
        return None
    text = block.decode("ascii")
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    fields = False
    for line in text.splitlines():
        if not line:
            break  # the empty line: the end of the header
        if line[0] in " \t":
            if not fields:
                return None  # a continuation before any field
            if current is not None:
                current.append(line)
            continue
        m = _FIELD_NAME.match(line)
        if m is None:
            return None
        fields = True
        name = line[: m.end() - 1].lower()
        if name in wanted and name not in found:
            current = found[name] = [line[m.end() :]]
        else:
            current = None
    return {name: "".join(parts) for name, parts in found.items()}


def header_block(data: bytes) -> bytes:
    """The message up to its first empty line: all its header fields, and at most a few bytes more.

    The header parser stops reading fields at the first empty line but still reads every line of
    the body (a 60 kB message costs 25 times a 2 kB header block, in the SMTP front's own process).
    Two line ends in a row, in any of the conventions the parser accepts, are an empty line.
    """
    first = len(data)
    for end in (b"\n\r\n", b"\n\n", b"\r\r"):  # each searched only up to the earliest end found so far
        i = data.find(end, 0, first + len(end))
        if 0 <= i < first:
            first = i
    return data[: first + 3] if first < len(data) else data


def thread_for(data: bytes, policies: Sequence[PolicyConfig]) -> Thread:
    """The message's thread when one of ``policies`` remembers; otherwise none (its headers are not read)."""
    return thread_of(data) if remembering(policies) else Thread("", "")


def remembering(policies: Sequence[PolicyConfig]) -> list[PolicyConfig]:
    """The policies whose memory is on (``stream_memory_days`` > 0)."""
    return [p for p in policies if p.stream_memory_days > 0]


def recall(
    store: Store,
    policies: Sequence[PolicyConfig],
    *,
    sender: str,
    recipients: Sequence[str],
    thread: Thread,
    now: float | None = None,
    folds: Folds | None = None,
) -> dict[str, Memory]:
    """Each remembering policy's memory for a message from ``sender`` to ``recipients``, within its window.

    ``folds``: the memories folded before, kept by the caller (the SMTP front) so that a stream's
    memory is extended by its new rows instead of folded again from its first row.
    """
    on = remembering(policies)
    if not on:
        return {}
    cutoff, query = _query(on, sender, recipients, thread, now)
    found = store.recall(query)
    out: dict[str, Memory] = {}
    for name, since in cutoff.items():
        rows = tuple(d for d in found if d.policy == name and d.at >= since)
        if folds is not None:
            out[name] = folds.memory((name, replace(query, since=0.0)), rows)
        else:
            out[name] = Memory.of(rows, thread=thread.root)
    return out


def version(store: Store, policies: Sequence[PolicyConfig], *, sender: str, recipients: Sequence[str],
            thread: Thread, now: float | None = None,
            leaving_out: Sequence[RowKey] = ()) -> tuple[object, ...]:  # fmt: skip
    """What changes whenever a row joins or leaves what ``recall`` would read now (``Store.stream_version``), but
    for the rows ``leaving_out``."""
    on = remembering(policies)
    return store.stream_version(_query(on, sender, recipients, thread, now)[1], leaving_out=leaving_out) if on else ()


def _query(on: Sequence[PolicyConfig], sender: str, recipients: Sequence[str], thread: Thread,
           now: float | None) -> tuple[dict[str, float], StreamQuery]:  # fmt: skip
    """Each remembering policy's window, and the store's query for all of them."""
    now = time.time() if now is None else now
    cutoff = {p.name: now - p.stream_memory_days * DAY for p in on}
    return cutoff, StreamQuery(policies=tuple(cutoff), sender=sender, recipients=tuple(recipients),
                               thread=thread.root, since=min(cutoff.values()))  # fmt: skip


class Folds:
    """The last memory folded for each (policy, stream query but its window), with the rows it was folded from.

    A stream's rows come back oldest first, and the store hands out the same decoded row objects
    while it keeps them (store/disclosures.py): when the rows of a recall begin with the rows of the
    last one, the memory is the last one extended by the new rows (a term keeps the message that
    disclosed it first). Anything else (a row expired, another gateway's row older than the newest,
    a row decoded again) is folded from the start. Thread-safe.
    """

    def __init__(self, max_streams: int = 1024) -> None:
        self.max_streams = max_streams
        self._last: OrderedDict[tuple[str, StreamQuery], tuple[tuple[Disclosure, ...], Memory]] = OrderedDict()
        self._lock = threading.Lock()

    def memory(self, key: tuple[str, StreamQuery], rows: tuple[Disclosure, ...]) -> Memory:
        name, query = key
        if query.thread and all(d.thread != query.thread for d in rows):
            # No row of the message's own thread: every row counts as for any other thread (``counted``), and the
            # stream's fold is extended from the last message's, whatever its thread (a list starts a thread
            # with most messages: each folded its stream's hundreds of rows from the first).
            key = (name, replace(query, thread=""))
        with self._lock:
            last = self._last.get(key)
        if (
            last is not None
            and len(last[0]) <= len(rows)
            and all(a is b for a, b in zip(last[0], rows[: len(last[0])], strict=True))
        ):
            if len(last[0]) == len(rows):
                memory = last[1]
            else:
                first = dict(last[1].first)
                for d in rows[len(last[0]) :]:
                    for t in counted(d, key[1].thread):
                        first.setdefault(t, d.message_id)
                memory = Memory(first)
        else:
            memory = Memory.of(rows, thread=key[1].thread)
        with self._lock:
            self._last[key] = (rows, memory)
            self._last.move_to_end(key)
            while len(self._last) > self.max_streams:
                self._last.popitem(last=False)
        return memory


def remember(
    store: Store,
    *,
    message_id: str,
    sender: str,
    recipients: Sequence[str],
    thread: Thread,
    disclosed: Mapping[str, Sequence[str]],
) -> list[RowKey]:
    """Keep what a message disclosed; its rows' (id, at)."""
    if any(disclosed.values()):
        return store.remember(message_id=message_id, sender=sender, recipients=recipients, disclosed=disclosed,
                              thread=thread.root, mail_id=thread.mail_id)  # fmt: skip
    return []


def reservation(*, message_id: str, sender: str, recipients: Sequence[str], thread: Thread,
                disclosed: Mapping[str, Sequence[str]], at: float | None = None) -> tuple[Disclosure, ...]:  # fmt: skip
    """The rows ``remember`` will write for a message judged to be forwarded, before it is sent (``ahead``)."""
    at = time.time() if at is None else at
    # As the store keeps them: a row per recipient, the sender in lower case (store/sql.py remember).
    return tuple(
        Disclosure(message_id=message_id, at=at, policy=policy, sender=sender.lower(), recipient=r.lower(),
                   terms=tuple(terms), thread=thread.root, mail_id=thread.mail_id)
        for policy, terms in disclosed.items() if terms
        for r in dict.fromkeys(recipients)
    )  # fmt: skip


def ahead(memory: Mapping[str, Memory], rows: Sequence[Disclosure], *, recipients: Sequence[str],
          thread: Thread) -> dict[str, Memory]:  # fmt: skip
    """``memory`` (the store's rows, folded) extended by ``rows``: the reservations of the sender's messages that
    are judged and still on their way, oldest first. They are newer than every row the store holds of the
    sender's stream (a message is remembered only after its predecessors), so they fold last, as they will
    once remembered: the memory the message will have when its turn comes, if they are all sent."""
    if not rows:
        return dict(memory)
    to = {r.lower() for r in recipients}
    out: dict[str, Memory] = {}
    for name, m in memory.items():
        mine = [d for d in rows if d.policy == name and d.recipient in to]
        if not mine:
            out[name] = m
            continue
        first = dict(m.first)
        for d in mine:
            for t in counted(d, thread.root):
                first.setdefault(t, d.message_id)
        out[name] = Memory(first)
    return out


def cutoffs(policies: Sequence[PolicyConfig], now: float | None = None) -> dict[str, float]:
    """For ``Store.expire_memory``: each policy's oldest disclosure worth keeping (a policy with memory off: none)."""
    now = time.time() if now is None else now
    return {p.name: (now - p.stream_memory_days * DAY) if p.stream_memory_days > 0 else now for p in policies}
