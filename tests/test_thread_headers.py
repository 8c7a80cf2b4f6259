"""The SMTP front's read of the thread headers: the same ids as compat32's header parser finds."""

from __future__ import annotations

import email.parser
import email.policy
import tarfile

from archive import ARCHIVE
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gateway.streams import _MSGID, Thread, _plain_fields, header_block, thread_of


def parsed(data: bytes) -> Thread:
    """As first written: every field of the header block through the library's parser."""
    try:
        headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(header_block(data))
        own = _MSGID.search(str(headers.get("Message-ID", "")))
        refs = _MSGID.findall(str(headers.get("References", "")))
        reply = _MSGID.search(str(headers.get("In-Reply-To", "")))
    except (TypeError, ValueError, LookupError):
        return Thread("", "")
    mail_id = own.group(0) if own else ""
    return Thread(mail_id, refs[0] if refs else reply.group(0) if reply else mail_id)


def test_the_archive_reads_the_same_and_mostly_without_the_parser() -> None:
    plain = total = 0
    with tarfile.open(ARCHIVE) as tar:
        for member in tar:
            f = tar.extractfile(member) if member.isfile() else None
            if f is None:
                continue
            data = f.read()
            for variant in (data, data.replace(b"\n", b"\r\n")):
                assert thread_of(variant) == parsed(variant)
            total += 1
            plain += _plain_fields(header_block(data), ("message-id",)) is not None
            if total >= 400:
                break
    assert plain > 0.9 * total  # the fast read is the common case, not a path never taken


LINES = [
    "Message-ID: <a@x>", "Message-Id:<b@x> (second)", "References: <r1@x>", "References:", " <r2@x>", "\t<r3@x> <r4@x>",
    "In-Reply-To: <p@x>", "in-reply-to: <q@x>", "Subject: hi", "From a@x", "From: a@x", ": odd", "no colon here",
    "X-\u00e9: 8bit", "X-Y:\x0b<v@x>", "", " ", "Received: by x;", "\t<m@x>", "Message-ID: <c d@x>",
]  # fmt: skip
ENDS = ["\n", "\r\n", "\r"]


@given(st.lists(st.tuples(st.sampled_from(LINES), st.sampled_from(ENDS)), max_size=12), st.sampled_from(["", "body"]))
@example([("Message-ID: <a@x>", "\n"), (" <b@x>", "\n")], "")
@example([(" <a@x>", "\n"), ("Message-ID: <b@x>", "\n")], "")
@example([("From a@x", "\n"), ("Message-ID: <b@x>", "\n")], "")
@settings(max_examples=400, deadline=None)
def test_any_header_block_reads_as_the_parser_reads_it(lines: list[tuple[str, str]], body: str) -> None:
    data = "".join(line + end for line, end in lines).encode("utf-8") + b"\n" + body.encode()
    assert thread_of(data) == parsed(data)


@given(st.lists(st.sampled_from([b"\r", b"\n", b"a", b":", b" "]), max_size=30))
@settings(max_examples=400)
def test_the_header_block_is_the_plain_rule(pieces: list[bytes]) -> None:
    data = b"".join(pieces)
    ends = [i for i in (data.find(b"\n\n"), data.find(b"\n\r\n"), data.find(b"\r\r")) if i >= 0]
    assert header_block(data) == (data[: min(ends) + 3] if ends else data)
