"""A very large text is judged in a forked child (gateway.worker.LARGE_TEXT_CHARS): the result is the one the
worker would have given in its own heap, and a child that dies, runs out of memory or never answers holds the
message, never lets it through."""

from __future__ import annotations

import dataclasses
import email
import email.policy
import io
import os
import signal
import time
from email.message import EmailMessage

import pikepdf
import pytest
from builders import make_pdf

from extractors.mail import ContentPolicy
from gateway import worker
from gateway.config import PolicyConfig
from gateway.model.engine import Engine
from gateway.model.memory import Memory
from gateway.model.records import SanitizePolicy

POLICY = PolicyConfig(name="medical", sanitize=SanitizePolicy(entities=("HIV", "substance abuse"), alpha=1.5),
                      content=ContentPolicy(), on_failure="reject")  # fmt: skip
BODY = (
    "The clinic in Los Angeles treats patients with AIDS. Her viral load fell after antiretroviral therapy, "
    "and the nurse spoke about condoms, needle exchange and methadone at the meeting.\n"
)


def _mail(body: str, pdf: bytes | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "gp@clinic.example", "claims@insurer.example", "follow-up"
    msg["Message-ID"] = "<f1@clinic.example>"
    msg.set_content(body)
    if pdf is not None:
        msg.add_attachment(pdf, maintype="application", subtype="pdf", filename="report.pdf")
    return msg.as_bytes()


def _large() -> bytes:
    body = "".join(f"Visit {i}. {BODY}" for i in range(200))
    assert len(body) > worker.LARGE_TEXT_CHARS
    return _mail(body)


def test_a_large_text_judged_in_a_child_comes_out_as_in_the_worker(engine: Engine) -> None:
    data = _large()
    memory = {"medical": Memory({"antiretroviral": "<earlier@clinic.example>"})}
    here = worker.sanitize_message(data, [POLICY], "big.eml", engine=engine, memory=memory, isolate=False)
    child = worker.sanitize_message(data, [POLICY], "big.eml", engine=engine, memory=memory, isolate=True)
    assert here.verdict == "forward" and here.reason == "sanitized" and here.decisions
    assert child == here


@pytest.mark.parametrize("pdf", [False, True], ids=["text", "with a PDF rebuilt from the child"])
def test_every_text_in_a_child_gives_the_same_result(engine: Engine, monkeypatch: pytest.MonkeyPatch,
                                                     pdf: bool) -> None:  # fmt: skip
    # The PDF is read in the worker's own child, then rebuilt in a child of the text's child.
    monkeypatch.setattr(worker, "LARGE_TEXT_CHARS", 0)
    data = _mail(BODY, make_pdf(["Quarterly report. The clinic in Los Angeles treats HIV patients."]) if pdf else None)
    here = worker.sanitize_message(data, [POLICY], "m.eml", engine=engine, isolate=False)
    child = worker.sanitize_message(data, [POLICY], "m.eml", engine=engine, isolate=True)
    assert here.verdict == "forward" and here.changes
    assert child.data is not None and here.data is not None
    assert _readable(child.data) == _readable(here.data) and len(_readable(here.data)) == (3 if pdf else 1)
    assert dataclasses.replace(child, data=None) == dataclasses.replace(here, data=None)


def _readable(data: bytes) -> list[bytes]:
    """Each part's decoded body; a PDF by its pages' content (qpdf draws a new /ID from the clock at each save)."""
    out = []
    for part in email.message_from_bytes(data, policy=email.policy.default).walk():
        body = None if part.is_multipart() else part.get_payload(decode=True)
        if isinstance(body, bytes) and body.startswith(b"%PDF-"):
            with pikepdf.open(io.BytesIO(body)) as pdf:
                body = b"|".join(page.obj.Contents.read_bytes() for page in pdf.pages)
        out.append(body or b"")
    return out


def _killed(job: object, extracted: object) -> object:
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


def test_a_child_that_dies_holds_the_message(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "_judge", _killed)
    job = worker.sanitize_message(_large(), [POLICY], "big.eml", engine=engine, isolate=True)
    assert (job.verdict, job.data, job.reason) == ("hold", None, "sanitizer-crashed")
    assert job.cause is not None and "died" in job.cause.detail


def test_a_child_out_of_memory_refuses_as_the_policy_says(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    real = worker.process

    def greedy(*args: object, **kwargs: object) -> object:
        bytearray(1024**3)  # beyond the child's limit: a MemoryError inside the sanitizer
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(worker, "process", greedy)
    monkeypatch.setattr(worker, "CHILD_MAX_MEMORY", 256 * 1024**2)
    job = worker.sanitize_message(_large(), [POLICY], "big.eml", engine=engine, isolate=True)
    assert (job.verdict, job.data, job.reason) == ("reject", None, "limit-exceeded")  # on_failure = "reject"
    # The same job in the worker itself (no limit there) is forwarded: the limit is the child's.
    monkeypatch.setattr(worker, "process", real)
    assert worker.sanitize_message(_large(), [POLICY], "big.eml", engine=engine, isolate=True).verdict == "forward"


def _slow(job: object, extracted: object) -> object:
    time.sleep(30)
    raise AssertionError("unreachable")


def test_a_child_that_never_answers_is_killed_and_held(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "_judge", _slow)
    monkeypatch.setattr(worker, "CHILD_MAX_SECONDS", 0.5)
    started = time.monotonic()
    job = worker.sanitize_message(_large(), [POLICY], "big.eml", engine=engine, isolate=True)
    assert (job.verdict, job.data, job.reason) == ("hold", None, "timeout")
    assert time.monotonic() - started < 10


def test_small_texts_stay_in_the_worker(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "_judge_in_child", _killed)
    job = worker.sanitize_message(_mail(BODY), [POLICY], "m.eml", engine=engine, isolate=True)
    assert job.verdict == "forward"
