"""The verifier's header index: the same views as the library's plain message, on real and crafted mail."""

from __future__ import annotations

import pytest
from archive import archive_messages

from gateway.verify.layers import Bounds, _Budget, _mail, parse_mail

DUPLICATES = (
    b"From: a@example.org\r\nContent-Type: text/plain; charset=latin-1\r\n"
    b"Content-Type: text/html; charset=utf-8\r\nSubject: =?utf-8?q?caf=C3=A9?=\r\n\r\ncaf\xe9 HIV\r\n"
)
ATTACHMENT = (
    b"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n"
    b'--b\r\nContent-Type: application/octet-stream; NAME="=?utf-8?q?HIV.txt?="\r\n'
    b"Content-Disposition: attachment; filename*=utf-8''clinic%20HIV.txt\r\n"
    b"Content-Transfer-Encoding: base64\r\n\r\nSElWIHRlc3Q=\r\n--b--\r\n"
)


def _views(data: bytes, *, indexed: bool) -> list[tuple[str, str, str, bool]]:
    msg = parse_mail(data, indexed=indexed)
    return [(v.part, v.location, v.text, v.binary) for v in _mail(msg, "m", 0, _Budget(Bounds()))]


@pytest.mark.parametrize("data", [DUPLICATES, ATTACHMENT], ids=["duplicate-headers", "attachment-names"])
def test_crafted_mail_reads_the_same(data: bytes) -> None:
    assert _views(data, indexed=True) == _views(data, indexed=False)
    assert parse_mail(data).get_content_charset() == parse_mail(data, indexed=False).get_content_charset()


def test_archive_mail_reads_the_same() -> None:
    for data in archive_messages(150):
        assert _views(data, indexed=True) == _views(data, indexed=False)


def test_a_changed_header_list_is_read_again() -> None:
    msg = parse_mail(DUPLICATES)
    assert msg.get("x-new") is None
    msg["X-New"] = "added"
    assert msg.get("X-NEW") == "added"
    del msg["Content-Type"]
    assert msg.get_content_type() == "text/plain" and msg.get_content_charset() is None
