"""The milter edits that turn Postfix's copy of a message into the sanitized one (no MTA needed)."""

from __future__ import annotations

from kilter.protocol.messages import AddHeader, ChangeHeader, ReplaceBody

from gateway.milter import CHUNK, _assemble, _edits

RECEIVED = [
    ("Received", b" from a by b;\n\tMon, 1 Jan 2024"),
    ("Received", b" from c by d"),
    ("Subject", b" HIV results"),
    ("X-Note", b" HIV"),
    ("To", b" a@example.test"),
]


def test_changed_removed_and_added_fields_and_a_long_body() -> None:
    original = _assemble(RECEIVED, b"The HIV test.\r\n")
    body = b"The infection test.\r\n" * 8000  # longer than one SMFIR_REPLBODY
    sanitized = (
        b"Received: from a by b;\r\n\tMon, 1 Jan 2024\r\nReceived: from c by d\r\nSubject: infection results\r\n"
        b"To: a@example.test\r\nX-Sanigate-Signature: removed\r\n\r\n" + body
    )
    edits = _edits(RECEIVED, original, sanitized, leading_space=True)
    assert edits is not None
    headers = [e for e in edits if not isinstance(e, ReplaceBody)]
    assert ChangeHeader(1, "Subject", b" infection results") in headers
    assert ChangeHeader(1, "X-Note", b"") in headers  # an empty value deletes the field
    assert AddHeader("X-Sanigate-Signature", b" removed") in headers
    assert not any(isinstance(e, ChangeHeader) and e.name == "Received" for e in headers)  # folding kept: unchanged
    chunks = [e.content for e in edits if isinstance(e, ReplaceBody)]
    assert b"".join(chunks) == body and all(len(c) <= CHUNK for c in chunks) and len(chunks) == 3
    # Without the leading-space option, values go without it.
    plain = _edits([(n, v[1:]) for n, v in RECEIVED], original, sanitized, leading_space=False)
    assert plain is not None and ChangeHeader(1, "Subject", b"infection results") in plain


def test_unchanged_is_no_edit_and_a_foreign_header_list_is_refused() -> None:
    original = _assemble(RECEIVED, b"Lunch?\r\n")
    assert _edits(RECEIVED, original, original, leading_space=True) == []
    assert _edits(RECEIVED[:2], original, original + b"x", leading_space=True) is None
