"""The admin's view of the disclosure memory, over real HTTP: a stream's accumulated disclosure, and a
memory-caused decision linking the earlier message it relied on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from adminkit import Client, RunningAdmin, write_config
from gatewaykit import ThreadedCapture

from gateway import streams
from gateway.config import load_config
from gateway.model.engine import Engine
from gateway.model.memory import removed_marker
from gateway.store.base import Envelope
from gateway.store.sqlite import SQLiteStore
from gateway.worker import sanitize_message

CLINIC, INSURER = "gp@clinic.example", "claims@insurer.example"


def _mail(body: str, mid: str) -> bytes:
    return (f"From: {CLINIC}\r\nTo: {INSURER}\r\nSubject: claim\r\nMessage-ID: {mid}\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n").encode()  # fmt: skip


@pytest.fixture
def site(tmp_path: Path, engine: Engine) -> Iterator[tuple[RunningAdmin, dict[str, str]]]:
    capture = ThreadedCapture()
    config_path = write_config(tmp_path, capture.port)
    config = load_config(config_path)
    store = SQLiteStore(config.store.path)
    policies = list(config.policies.values())
    ids = {}
    # What the gateway does for each message of a stream, in order: recall, sanitize, store, remember.
    for name, body in (("first", "The patient needs condoms and counselling."),
                       ("later", "The virus test came back positive last week.")):  # fmt: skip
        data = _mail(body, f"<{name}@clinic.example>")
        thread = streams.thread_of(data)
        memory = streams.recall(store, policies, sender=CLINIC, recipients=[INSURER], thread=thread)
        result = sanitize_message(data, policies, f"msg{name}", engine=engine, memory=memory)
        assert result.verdict == "forward" and result.decisions
        store.save(message_id=f"msg{name}", envelope=Envelope(sender=CLINIC, recipients=(INSURER,)),
                   status="forwarded", reason="sanitized", policies=["medical"], original=data,
                   sanitized=result.data, decisions=result.decisions)  # fmt: skip
        streams.remember(store, message_id=f"msg{name}", sender=CLINIC, recipients=[INSURER], thread=thread,
                         disclosed=result.disclosed)  # fmt: skip
        ids[name] = f"msg{name}"
    # A word a message took out is remembered for its thread (memory.REMOVED): the sender's, never let through.
    streams.remember(store, message_id="msgfirst", sender=CLINIC, recipients=[INSURER],
                     thread=streams.thread_of(_mail("", "<first@clinic.example>")),
                     disclosed={"medical": (removed_marker("gonorrhoea"),)})  # fmt: skip
    admin = RunningAdmin(config_path, store)
    yield admin, ids
    admin.close()
    store.close()
    capture.close()


def test_a_stream_and_the_decision_it_caused(site: tuple[RunningAdmin, dict[str, str]]) -> None:
    admin, ids = site
    bob = Client(admin.url)  # a reviewer sees the streams too
    bob.login("bob")
    listing = bob.get("/streams")
    assert listing.status == 200 and CLINIC in listing.body and INSURER in listing.body
    detail = bob.get(f"/streams?policy=medical&sender={CLINIC}&recipient={INSURER}")
    accumulated = detail.body.split('id="accumulated"')[1].split("</p>")[0]
    assert "patient" in accumulated and "counselling" in accumulated
    # What the first message wrote for "condoms" is remembered for its thread, but it was not let through.
    assert "condom" not in accumulated and "[wrote" not in accumulated
    assert "gonorrhoea" not in accumulated and "[removed" not in accumulated  # nor what a message took out
    disclosures = detail.body.split('id="disclosures"')[1]
    assert f'href="/messages/{ids["first"]}"' in disclosures and "&lt;first@clinic.example&gt;" in disclosures
    assert "No stream" in bob.get("/streams?sender=nobody@else.example").body
    page = bob.get(f"/messages/{ids['later']}")
    relied = page.body.split('class="earlier"')[1].split("</small>")[0]
    assert f'href="/messages/{ids["first"]}"' in relied
    assert "virus" in page.body and "patient" in page.body
