"""One parse of a rewritten message's bytes for both checks before it leaves (``pipeline.check_and_verify``).

The verifier parses the output (``gateway.verify.parse_mail``) and walks it first; the pipeline's check then
extracts the same tree. That is only the check it was if its reading changes nothing the verifier read, and reads
what its own parse of the bytes gives: both are shown here on crafted mail (encoded words, RFC 2231 names,
quoted-printable soft breaks, base64 split over lines, an odd charset, nested message/rfc822, a signed part, DOCX
and PDF attachments) and on archive mail; and the traces the verifier alone can see are still found.
"""

from __future__ import annotations

import base64
import email
import email.message
from email.message import Message

import pytest
from adversarial import cases
from archive import archive_messages

from extractors.limits import Limits
from extractors.mail import ContentPolicy, extract_mail
from extractors.pipeline import SEE_ALL, check_and_verify, process
from gateway.errors import ResidualRiskError, TraceFoundError
from gateway.model.engine import Engine
from gateway.model.records import SanitizePolicy
from gateway.verify import find_trace, parse_mail

HIV = [SanitizePolicy(entities=("HIV",), alpha=1.5)]
_HEAD = "From: Ann Example <ann@example.org>\r\nTo: bob@example.com\r\nSubject: Results\r\nMIME-Version: 1.0\r\n"


def _mixed(*parts: str, head: str = "") -> bytes:
    body = "".join(f"--b\r\n{p}\r\n" for p in parts)
    return f"{_HEAD}{head}Content-Type: multipart/mixed; boundary=b\r\n\r\npreamble\r\n{body}--b--\r\n".encode()


ENCODED_WORD = _mixed(
    "Content-Type: text/plain\r\n\r\nThe meeting is on Tuesday.", head="X-Note: =?utf-8?q?HIV_clinic?=\r\n"
)
RFC2231_NAME = _mixed(
    "Content-Type: text/plain\r\n\r\nSee the file.",
    "Content-Type: text/plain; name*=utf-8''HIV%20results.txt\r\nContent-Disposition: attachment; "
    "filename*0*=utf-8''HIV%20res; filename*1=ults.txt\r\n\r\nplain words",
)
QP_SOFT_BREAK = _mixed("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
                       "The patient's H=\r\nIV test came back, caf=C3=A9 after.")  # fmt: skip
BASE64_SPLIT = _mixed(
    "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
    "VGhlIHBhdGllbnQn\r\ncyBISVYgdGVzdCBj\r\nYW1lIGJhY2su"  # "The patient's HIV test came back."
)
ODD_CHARSET = _mixed("Content-Type: text/plain; charset=koi8-r\r\nContent-Transfer-Encoding: 8bit\r\n\r\n").replace(
    b"\r\n\r\n\r\n--b--", b"\r\n\r\n\xf0\xd2\xc9\xd7\xc5\xd4 HIV\r\n--b--"
)
NESTED = _mixed(
    "Content-Type: message/rfc822\r\n\r\nFrom: c@example.org\r\nSubject: =?utf-8?b?SElWIHRlc3Q=?=\r\n"
    "Content-Type: multipart/alternative; boundary=c\r\n\r\n--c\r\nContent-Type: text/plain\r\n\r\nHIV test\r\n"
    "--c\r\nContent-Type: text/html\r\n\r\n<p>H<b></b>IV test</p>\r\n--c--"
)
SIGNED = (
    f'{_HEAD}Content-Type: multipart/signed; protocol="application/pgp-signature"; boundary=s\r\n\r\n'
    "--s\r\nContent-Type: text/plain\r\n\r\nThe HIV test is negative.\r\n--s\r\n"
    "Content-Type: application/pgp-signature\r\n\r\n-----BEGIN PGP SIGNATURE-----\r\nabc\r\n"
    "-----END PGP SIGNATURE-----\r\n--s--\r\n"
).encode()
CRAFTED = {
    "encoded-word": ENCODED_WORD, "rfc2231-name": RFC2231_NAME, "qp-soft-break": QP_SOFT_BREAK,
    "base64-split": BASE64_SPLIT, "odd-charset": ODD_CHARSET, "nested-rfc822": NESTED, "signed": SIGNED,
}  # fmt: skip


def _snapshot(msg: Message) -> list[object]:
    """Everything a reader of the tree could read, part by part (the verifier's own caches left out)."""
    out: list[object] = []
    for part in msg.walk():
        state = {k: v for k, v in vars(part).items() if k not in ("_first", "_params")}
        payload = state.pop("_payload")
        out.append((id(part), sorted(state.items(), key=str), [id(p) for p in payload] if isinstance(payload, list)
                    else payload))  # fmt: skip
    return out


def _reading(data: bytes, parsed: Message | None) -> list[object]:
    doc = extract_mail(data, part="m.eml", limits=Limits(), policy=SEE_ALL, parsed=parsed)
    return [*((s.part, s.pieces, s.role) for s in doc.segments), *doc.notes, *doc.addresses]


def _mails() -> list[bytes]:
    crafted = cases()
    attached = [_attached(c.data, c.kind) for c in crafted if c.kind in ("docx", "pdf")]
    return [*CRAFTED.values(), *(c.data for c in crafted if c.kind == "mail"), *attached, *archive_messages(60)]


def _attached(data: bytes, kind: str) -> bytes:
    ctype = "application/pdf" if kind == "pdf" else DOCX_TYPE
    encoded = base64.encodebytes(data).decode("ascii")
    attachment = (
        f'Content-Type: {ctype}\r\nContent-Disposition: attachment; filename="report.{kind}"\r\n'
        f"Content-Transfer-Encoding: base64\r\n\r\n{encoded}"
    )
    return _mixed("Content-Type: text/plain\r\n\r\nAttached.", attachment)


DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def test_the_checks_reading_of_the_verifiers_parse_changes_nothing_and_reads_what_its_own_parse_gives() -> None:
    mails = _mails()
    assert len(mails) > 100
    for data in mails:
        parsed = parse_mail(data)
        find_trace(data, "mail", _NO_NAMES, part="m.eml", parsed=parsed)  # the verifier's walk, as it runs first
        before = _snapshot(parsed)
        assert _reading(data, parsed) == _reading(data, None)
        assert _snapshot(parsed) == before


class _Nothing:
    """Needles that match nothing: the verifier's walk over every view, with no early return."""

    def find(self, text: str, *, strict: bool = False) -> None:
        return None


_NO_NAMES = _Nothing()  # type: ignore[var-annotated]


@pytest.mark.parametrize(
    ("header", "location"),
    [
        ("Content-ID: <HIV-results@clinic.example>\r\n", "header Content-ID"),  # a field the extractors keep as is
        ("Content-Language: =?utf-8?b?SElW?=\r\n", "header Content-Language (RFC 2047 decoded)"),
    ],
)
def test_a_rewritten_message_still_holds_a_trace_only_the_verifier_reads(
    engine: Engine, header: str, location: str
) -> None:
    # The body is rewritten (so both checks read the one parse); the trace is where the extractors do not look.
    data = _mixed(f"{header}Content-Type: text/plain\r\n\r\nThe patient's HIV test came back positive.")
    with pytest.raises(TraceFoundError) as caught:
        process(data, engine=engine, policies=HIV, name="m.eml")
    assert caught.value.location == location and caught.value.part == "1"
    # And nested, in an attached message's part, in a Content-ID (extended parameters are read by the extractor
    # since extractors.mail._free_parameters, so one no longer makes a trace only the verifier reads).
    nested = _mixed(
        "Content-Type: message/rfc822\r\n\r\nFrom: c@example.org\r\nSubject: HIV test\r\n"
        "Content-ID: <HIV-notes@clinic.example>\r\nContent-Type: text/plain; xnote*=utf-8''H%49V\r\n\r\nThe HIV test."
    )
    with pytest.raises(TraceFoundError) as caught:
        process(nested, engine=engine, policies=HIV, name="m.eml")
    assert caught.value.location == "header Content-ID" and caught.value.part == "1 (attached message)"


@pytest.mark.parametrize("name", ["qp-soft-break", "base64-split", "nested-rfc822", "rfc2231-name", "encoded-word"])
def test_when_both_checks_would_fail_the_checks_error_is_raised(engine: Engine, name: str) -> None:
    # The output as if the rebuild had written nothing back: the check (reading the verifier's parse after it)
    # finds the flagged term through the transfer encoding, the nested message or the header's encoding, and its
    # error is the one raised although the verifier finds the name too.
    data = CRAFTED[name]
    text = " ".join(seg.text for seg in extract_mail(data, part="m", limits=Limits()).segments)
    result = engine.sanitize(text, HIV[0])
    assert result.decisions
    assert find_trace(data, "mail", _needles(engine), part="m.eml") is not None
    with pytest.raises(ResidualRiskError, match="hiv"):
        check_and_verify(data, "mail", engine=engine, policies=HIV, results=[result], name="m.eml", limits=Limits())


def _needles(engine: Engine) -> object:
    from extractors.pipeline import _needles as needles_of

    return needles_of(engine, engine.entities_of(HIV[0]))


def test_a_rewritten_message_is_parsed_once_for_both_checks(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[int] = []
    library = email.message_from_bytes

    def counted(data: bytes, *args: object, **kwargs: object) -> email.message.Message:
        parses.append(len(data))
        return library(data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(email, "message_from_bytes", counted)
    outcome = process(CRAFTED["qp-soft-break"], engine=engine, policies=HIV, name="m.eml")
    assert outcome.changed
    assert len(parses) == 2  # the message read, and its output (three with a parse for each check)


def test_a_shared_parse_is_not_read_by_a_policy_that_strips() -> None:
    strip = ContentPolicy(unknown="strip")
    with pytest.raises(ValueError, match="strips"):
        extract_mail(ENCODED_WORD, part="m", limits=Limits(), policy=strip, parsed=parse_mail(ENCODED_WORD))
