"""Quarantine review from the shell, against a real store and a real relay."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gatewaykit import MEDICAL, ThreadedCapture

from gateway.config import load_config
from gateway.review import release
from gateway.store.base import AuditQuery, DecisionRecord, Envelope, HoldCause
from gateway.store.sqlite import SQLiteStore


@pytest.fixture
def capture() -> Iterator[ThreadedCapture]:
    c = ThreadedCapture()
    yield c
    c.close()


def setup(tmp: Path, port: int) -> tuple[Path, SQLiteStore]:
    cfg = tmp / "sanigate.toml"
    cfg.write_text(f'[upstream]\nrelay = "127.0.0.1:{port}"\n[store]\npath = "{tmp}/store.db"\n', encoding="utf-8")
    store = SQLiteStore(tmp / "store.db")
    env = Envelope(sender="doctor@clinic.example", recipients=("a@example.com", "b@example.com"))
    decision = DecisionRecord(
        policy="medical", entity="HIV", term="HIV", pmi=7.1, threshold=4.7,
        action="generalize", replacement="infection", reason="entity-name", part="body",
    )  # fmt: skip
    store.save(message_id="held1", envelope=env, status="held", reason="encrypted", policies=["medical"],
               original=MEDICAL, sanitized=None, decisions=[])  # fmt: skip
    # What the last check's error carries when it finds a term in the output (see gateway.worker.cause_of).
    trace = HoldCause(detail="'HIV' still named in the output", term="HIV", entity="HIV", part="2 application/pdf",
                      location="page 3")  # fmt: skip
    store.save(message_id="held2", envelope=env, status="held", reason="residual-risk", policies=["medical"],
               original=MEDICAL, sanitized=None, decisions=[], cause=trace)  # fmt: skip
    store.save(message_id="fwd1", envelope=env, status="forwarded", reason="sanitized", policies=["medical"],
               original=MEDICAL, sanitized=MEDICAL.replace(b"HIV", b"infection"), decisions=[decision])  # fmt: skip
    return cfg, store


def cli(cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gateway.cli", "quarantine", "--config", str(cfg), *args],
                          capture_output=True, text=True, timeout=60, cwd=cfg.parent)  # fmt: skip


def test_list_show_diff(tmp_path: Path, capture: ThreadedCapture) -> None:
    cfg, _store = setup(tmp_path, capture.port)
    out = cli(cfg, "list").stdout
    assert "held1" in out and "fwd1" in out and "encrypted" in out
    assert "held1" in cli(cfg, "list", "--status", "held").stdout
    assert "fwd1" not in cli(cfg, "list", "--status", "held").stdout
    show = cli(cfg, "show", "fwd1").stdout
    assert "decision [medical] 'HIV' -> 'infection'" in show and "pmi=7.10" in show
    diff = cli(cfg, "diff", "fwd1").stdout
    assert "-The patient had an HIV test" in diff and "+The patient had an infection test" in diff
    assert cli(cfg, "show", "nope").returncode == 1
    held = cli(cfg, "show", "held2").stdout
    assert "term:     'HIV' (entity HIV)" in held and "part:     2 application/pdf, at page 3" in held


def test_a_held_message_records_its_cause(tmp_path: Path) -> None:
    from gateway.errors import EncryptedContentError, ResidualRiskError
    from gateway.worker import cause_of

    class Found(ResidualRiskError):  # the shape of the last check's error: term, entity, part, location
        def __init__(self) -> None:
            super().__init__("'HIV' still named", part="1.2 text/html")
            self.term, self.entity, self.location = "HIV", "HIV", "characters 10-13"

    assert cause_of(Found()) == HoldCause(detail="1.2 text/html: 'HIV' still named", term="HIV", entity="HIV",
                                          part="1.2 text/html", location="characters 10-13")  # fmt: skip
    plain = cause_of(EncryptedContentError("S/MIME enveloped data", part="2 application/pkcs7-mime"))
    assert plain.part == "2 application/pkcs7-mime" and plain.term is None


def test_release_reinjects_once_and_is_audited(tmp_path: Path, capture: ThreadedCapture) -> None:
    cfg, store = setup(tmp_path, capture.port)
    proc = cli(cfg, "release", "fwd1", "--by", "alice", "--why", "checked")
    assert proc.returncode == 0, proc.stderr
    (msg,) = capture.handler.messages
    assert msg.recipients == ["a@example.com", "b@example.com"] and b"infection" in msg.data
    again = cli(cfg, "release", "fwd1", "--by", "bob")
    assert again.returncode == 1 and "not released again" in again.stderr
    assert len(capture.handler.messages) == 1
    actions = [a for a in store.audit(AuditQuery(message_id="fwd1")) if a.kind == "action"]
    assert [(a.action, a.actor) for a in actions] == [("released", "alice")]


def test_original_release_needs_a_reason(tmp_path: Path, capture: ThreadedCapture) -> None:
    cfg, _store = setup(tmp_path, capture.port)
    proc = cli(cfg, "release", "held1", "--original")
    assert proc.returncode == 1 and "needs a reason" in proc.stderr
    ok = cli(cfg, "release", "held1", "--original", "--why", "false positive", "--by", "carol")
    assert ok.returncode == 0, ok.stderr
    assert capture.handler.messages[0].data == MEDICAL


def test_concurrent_releases_send_once(tmp_path: Path, capture: ThreadedCapture) -> None:
    cfg, _store = setup(tmp_path, capture.port)
    config = load_config(cfg, base=tmp_path)

    async def both() -> list[object]:
        stores = [SQLiteStore(tmp_path / "store.db") for _ in range(2)]
        return await asyncio.gather(
            *(release(config, s, "fwd1", original=False, actor=f"admin{i}", why="") for i, s in enumerate(stores)),
            return_exceptions=True,
        )

    results = asyncio.run(both())
    assert sum(isinstance(r, str) for r in results) == 1
    assert len(capture.handler.messages) == 1


def test_reject_and_purge(tmp_path: Path, capture: ThreadedCapture) -> None:
    cfg, store = setup(tmp_path, capture.port)
    assert cli(cfg, "reject", "held1", "--by", "dave", "--why", "spam").returncode == 0
    assert store.get("held1").status == "rejected"  # type: ignore[union-attr]
    assert cli(cfg, "reject", "fwd1").returncode == 1  # only held messages can be rejected
    time.sleep(0.05)
    assert "purged 3" in cli(cfg, "purge", "--older-than", "0m").stdout
    assert store.list_messages() == []
    assert any(a.action == "purged" for a in store.audit())


def test_encryption_at_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cryptography.fernet import Fernet

    monkeypatch.setenv("SANIGATE_STORE_KEY", Fernet.generate_key().decode())
    store = SQLiteStore(tmp_path / "enc.db")
    env = Envelope(sender="s@x.example", recipients=("r@y.example",))
    store.save(message_id="m1", envelope=env, status="held", reason="r", policies=[], original=MEDICAL,
               sanitized=None, decisions=[])  # fmt: skip
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("enc.db*"))  # the WAL is checkpointed on close
    assert b"antiretroviral" not in raw
    assert SQLiteStore(tmp_path / "enc.db").content("m1")[0] == MEDICAL
    monkeypatch.delenv("SANIGATE_STORE_KEY")
    from gateway.store.sqlite import StoreError

    with pytest.raises(StoreError, match="encrypted at rest"):
        SQLiteStore(tmp_path / "enc.db").content("m1")
