"""The quarantine and audit store: records, and the interface every backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

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


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
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
    actor: str = ""
    why: str = ""


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
    ) -> None:
        """Keep a message durably (committed and fsync'd) before anyone is told it is safe."""
        ...

    def get(self, message_id: str) -> StoredMessage | None: ...

    def content(self, message_id: str) -> tuple[bytes, bytes | None]:
        """(original, sanitized) of a stored message."""
        ...

    def list_messages(
        self, *, status: Status | None = None, sender: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[StoredMessage]: ...

    def transition(self, message_id: str, *, to: Status, allowed_from: Sequence[Status], actor: str, why: str) -> bool:
        """Move a message to ``to`` if it is in ``allowed_from``, auditing who and why; once only."""
        ...

    def audit(self, *, message_id: str | None = None, limit: int = 500) -> list[AuditEntry]: ...

    def purge(self, *, older_than: float, actor: str) -> int: ...

    def close(self) -> None: ...
