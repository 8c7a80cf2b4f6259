"""One error hierarchy for the whole gateway.

Every error carries the SMTP reply it maps to, so that the SMTP edge never has
to guess: a policy decision is permanent (5xx), trouble on our side or
upstream is temporary (4xx) so that the sending MTA keeps the message.
"""

from __future__ import annotations


class SanigateError(Exception):
    smtp_code: int = 451
    smtp_status: str = "4.3.0"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def smtp_reply(self) -> str:
        return f"{self.smtp_code} {self.smtp_status} {self.message}"

    def naming(self, name: str) -> SanigateError:
        """The same error, its message led by ``name`` (the file or message it concerns)."""
        if not self.message.startswith(f"{name}:") and not self.message.startswith(f"{name} "):
            self.message = f"{name}: {self.message}"
            self.args = (self.message,)
        return self


class ConfigError(SanigateError):
    """Configuration that cannot be used (names the file and the key)."""

    smtp_code = 451
    smtp_status = "4.3.5"


class KnowledgeError(SanigateError):
    """K cannot answer (missing index, incompatible index, backend down)."""

    smtp_code = 451
    smtp_status = "4.3.0"


class KnowledgeUnavailableError(KnowledgeError):
    """K did not answer (a counting service down, slow or refusing): nothing may be decided on part of it."""


class IndexFormatError(KnowledgeError):
    """The index file is not a sanigate index, or was built incompatibly."""


class UnknownEntityError(SanigateError):
    """A sensitive entity that K has never seen cannot be protected by PMI."""

    smtp_code = 451
    smtp_status = "4.3.5"


class InputError(SanigateError):
    """Input that cannot be sanitized: empty, binary, undecodable."""

    smtp_code = 554
    smtp_status = "5.6.0"


class TaxonomyError(SanigateError):
    """The knowledge base (WordNet or an organisation taxonomy) is unusable."""

    smtp_code = 451
    smtp_status = "4.3.5"


class ContentError(InputError):
    """Content the gateway cannot inspect or sanitize; held, never forwarded in clear.

    ``reason`` is a stable code for the audit record and for policies.
    """

    reason = "unreadable"

    def __init__(self, message: str, *, part: str = "") -> None:
        super().__init__(f"{part}: {message}" if part else message)
        self.part = part


class EncryptedContentError(ContentError):
    reason = "encrypted"


class UnreadableContentError(ContentError):
    reason = "unreadable"


class UnsupportedContentError(ContentError):
    reason = "unsupported-type"


class LimitExceededError(ContentError):
    reason = "limit-exceeded"
    smtp_code = 552
    smtp_status = "5.3.4"


class ResidualRiskError(ContentError):
    """After rebuilding, a flagged term is still in the output: fail closed."""

    reason = "residual-risk"
    smtp_code = 451
    smtp_status = "4.7.0"


class TraceFoundError(ResidualRiskError):
    """The last check found a name of a protected entity in the output: the message is held.

    ``term`` is the name as the policy knows it (not message text), ``part`` the MIME part, ZIP
    entry or PDF object it was found in, and ``location`` where inside that part.
    """

    reason = "trace-found"

    def __init__(self, *, term: str, entity: str, part: str, location: str) -> None:
        super().__init__(f"{entity!r} still named ({term!r}) in the output at {location}", part=part)
        self.term = term
        self.entity = entity
        self.location = location
