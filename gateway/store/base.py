"""The quarantine and audit store: records, and the interface every backend implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from gateway.model.memory import Disclosure
from gateway.model.records import Step
from gateway.quickinit import quick_init

Status = Literal["held", "forwarded", "released", "rejected"]
# held: nothing was delivered, waiting for a reviewer
# forwarded: the sanitized version was delivered; the original is kept for review
# released: a reviewer sent it on (sanitized or original); rejected: a reviewer refused it


@dataclass(frozen=True, slots=True, kw_only=True)
class Envelope:
    sender: str
    recipients: tuple[str, ...]
    client_address: str = ""
    client_name: str = ""
    helo: str = ""


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class DecisionRecord:
    """One disclosure decision, as the audit log keeps it."""

    policy: str
    entity: str | None
    term: str
    pmi: float | None
    threshold: float | None
    action: str
    replacement: str | None
    reason: str
    part: str
    group: tuple[str, ...] | None = None
    sense: str | None = None
    chain: tuple[Step, ...] = ()  # the generalizations tried, the accepted one last
    earlier: tuple[str, ...] = ()  # ids of the earlier messages of the stream this decision relied on


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldCause:
    """Why a message could not be sent on: what was found, and where, for the reviewer."""

    detail: str  # the error's own words (names the part; never the message's text beyond a flagged term)
    term: str | None = None  # the term still present, when the last check found one
    entity: str | None = None
    part: str | None = None  # the MIME part (or attachment) it concerns
    location: str | None = None  # where inside that part


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredMessage:
    id: str
    received_at: float
    envelope: Envelope
    status: Status
    reason: str
    policies: tuple[str, ...]
    size: int
    changes: int
    utility: float | None = None  # share of the text's information kept (eq. 8), when sanitized
    cause: HoldCause | None = None  # why it was held, when it was


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    id: int
    message_id: str
    at: float
    kind: Literal["decision", "action"]
    sender: str
    recipients: tuple[str, ...]
    policy: str = ""
    entity: str | None = None
    term: str = ""
    pmi: float | None = None
    threshold: float | None = None
    action: str = ""
    replacement: str | None = None
    part: str = ""
    reason: str = ""
    group: tuple[str, ...] | None = None
    sense: str | None = None
    chain: tuple[Step, ...] = ()
    earlier: tuple[str, ...] = ()
    actor: str = ""
    why: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageQuery:
    """Filters over stored messages; every one given must match. Text filters match exactly, ids by prefix."""

    status: Status | None = None
    sender: str | None = None
    recipient: str | None = None
    policy: str | None = None
    entity: str | None = None
    reason: str | None = None
    message_id: str | None = None
    since: float | None = None
    until: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditQuery:
    message_id: str | None = None
    kind: Literal["decision", "action"] | None = None
    sender: str | None = None
    policy: str | None = None
    entity: str | None = None
    term: str | None = None  # case-insensitive substring
    action: str | None = None
    actor: str | None = None
    since: float | None = None
    until: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Stats:
    """What the dashboard draws, over one period."""

    outcomes: list[tuple[float, str, int]] = field(default_factory=list)  # (bucket start, outcome, messages)
    decisions_by_entity: list[tuple[str, int]] = field(default_factory=list)
    top_terms: list[tuple[str, int]] = field(default_factory=list)
    utility: list[float] = field(default_factory=list)  # one per sanitized message


@dataclass(frozen=True, slots=True, kw_only=True)
class AdminToken:
    """A server-side admin session, or a device a user has logged in from; only the token's hash is stored."""

    token_hash: str
    kind: Literal["session", "device"]
    user: str
    role: str
    csrf: str
    expires: float


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamQuery:
    """Which disclosures a new message is judged against (``Store.recall``), or an administrator looks at."""

    policies: tuple[str, ...]
    sender: str
    recipients: tuple[str, ...]
    thread: str = ""  # a thread's messages count whoever in the organisation sent them
    since: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamSummary:
    """One stream (policy, sender, recipient) as the admin lists them."""

    policy: str
    sender: str
    recipient: str
    messages: int
    first_at: float
    last_at: float


class Store(Protocol):
    def save(
        self,
        *,
        message_id: str,
        envelope: Envelope,
        status: Status,
        reason: str,
        policies: Sequence[str],
        original: bytes,
        sanitized: bytes | None,
        decisions: Sequence[DecisionRecord],
        utility: float | None = None,
        cause: HoldCause | None = None,
    ) -> None:
        """Keep a message durably (committed and fsync'd) before anyone is told it is safe."""
        ...

    def get(self, message_id: str) -> StoredMessage | None: ...

    def content(self, message_id: str) -> tuple[bytes, bytes | None]:
        """(original, sanitized) of a stored message."""
        ...

    def list_messages(self, query: MessageQuery = ..., *, limit: int = 50, offset: int = 0) -> list[StoredMessage]:
        """Newest first."""
        ...

    def count_messages(self, query: MessageQuery = ...) -> int: ...

    def transition(self, message_id: str, *, to: Status, allowed_from: Sequence[Status], actor: str, why: str) -> bool:
        """Move a message to ``to`` if it is in ``allowed_from``, auditing who and why; once only."""
        ...

    def log_action(self, *, message_id: str, action: str, actor: str, why: str) -> None:
        """Audit something a person did that does not change a message's status (a download, a policy edit)."""
        ...

    def audit(self, query: AuditQuery = ..., *, limit: int = 500, offset: int = 0) -> list[AuditEntry]:
        """Oldest first."""
        ...

    def count_audit(self, query: AuditQuery = ...) -> int: ...

    def record_outcomes(self, counts: Mapping[tuple[float, str], int]) -> None:
        """Add to the per-period message counts by outcome ((period start, outcome) -> messages)."""
        ...

    def stats(self, *, since: float, bucket: float, top: int = 15) -> Stats: ...

    def purge(self, *, older_than: float, actor: str) -> int:
        """Delete messages (and the disclosure memory) older than ``older_than``, auditing each message."""
        ...

    # -- the disclosure memory ------------------------------------------------------
    def remember(
        self,
        *,
        message_id: str,
        sender: str,
        recipients: Sequence[str],
        disclosed: Mapping[str, Sequence[str]],
        thread: str = "",
        mail_id: str = "",
    ) -> list[tuple[int, float]]:
        """Keep what a delivered message let through (policy -> terms), per recipient, sealed like messages; the
        rows' (id, at), as ``stream_version`` knows them."""
        ...

    def recall(self, query: StreamQuery) -> list[Disclosure]:
        """Disclosures of the query's streams since ``query.since``, oldest first."""
        ...

    def stream_version(
        self, query: StreamQuery, *, leaving_out: Sequence[tuple[int, float]] = ()
    ) -> tuple[object, ...]:
        """What changes whenever a row joins or leaves what ``recall(query)`` reads (their ids and times), read
        without reading the rows; ``leaving_out``: rows (id, at) not to count."""
        ...

    def streams(self, *, since: float, sender: str | None = None, limit: int = 100) -> list[StreamSummary]:
        """Streams with a disclosure since ``since``, most recent first."""
        ...

    def expire_memory(self, cutoffs: Mapping[str, float]) -> int:
        """Forget disclosures older than each policy's cutoff (policy -> time; a policy not named: everything)."""
        ...

    def create_token(self, token: AdminToken) -> None: ...

    def get_token(self, token_hash: str, *, kind: str, now: float) -> AdminToken | None: ...

    def drop_token(self, token_hash: str) -> None: ...

    def drop_tokens_of(self, user: str) -> int: ...

    def login_failed(self, keys: Sequence[str], *, at: float) -> None: ...

    def login_failures(self, keys: Sequence[str], *, since: float) -> dict[str, int]:
        """Failed logins by key since a time."""
        ...

    def login_succeeded(self, keys: Sequence[str], *, forget_before: float) -> None: ...

    def close(self) -> None: ...
