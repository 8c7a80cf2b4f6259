"""The shared mailing-list archive (../shared/samples/loadtest) as message texts for tests that compare engines."""

from __future__ import annotations

import tarfile
from email import message_from_bytes, policy
from pathlib import Path

ARCHIVE = Path(__file__).resolve().parents[1].parent / "shared/samples/loadtest/usrp-users_lists.ettus.com_eml.tar.xz"


def archive_texts(n: int, *, chars: int) -> list[str]:
    """The first ``n`` messages with a plain body, as Subject, a blank line and the body, cut at ``chars``."""
    out: list[str] = []
    with tarfile.open(ARCHIVE) as tar:
        for member in tar:
            f = tar.extractfile(member) if member.isfile() else None
            if f is None:
                continue
            msg = message_from_bytes(f.read(), policy=policy.default)
            body = msg.get_body(("plain",)) if hasattr(msg, "get_body") else None
            try:
                text = body.get_content() if body is not None else ""
            except (LookupError, ValueError):
                continue
            if text.strip():
                out.append(f"{msg.get('Subject', '')}\n\n{text}"[:chars])
            if len(out) >= n:
                break
    return out


def archive_messages(n: int) -> list[bytes]:
    """The first ``n`` messages of the archive as they were sent."""
    out: list[bytes] = []
    with tarfile.open(ARCHIVE) as tar:
        for member in tar:
            f = tar.extractfile(member) if member.isfile() else None
            if f is not None:
                out.append(f.read())
            if len(out) >= n:
                break
    return out
