"""``sanigate milter`` end to end with a real Postfix from Debian, configured with the shipped fragment.

A private Postfix instance takes mail on a loopback port and calls sanigate through smtpd_milters before
queueing it; it delivers into a Maildir. Checked: header and body replacement, two messages in one SMTP
session, a held message (kept by sanigate and dropped by Postfix, or kept in Postfix's hold queue), a
policy refusal, and a milter that is down (the client is told to retry).
"""

from __future__ import annotations

import email
import email.policy
import os
import shutil
import signal
import smtplib
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_postfix import ROOT, Postfix, free_port, gateway_config, wait_for
from test_serve import Server

pytestmark = pytest.mark.skipif(
    shutil.which("postfix") is None or os.geteuid() != 0,
    reason="needs Debian's postfix and root (CI installs it: .ci/run)",
)

ENCRYPTED = (
    b"From: doctor@sanigate.test\r\nTo: a@example.test\r\nSubject: secret\r\nMIME-Version: 1.0\r\n"
    b'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"\r\n'
    b"Content-Transfer-Encoding: base64\r\n\r\nMIIBAAYJKoZIhvcNAQcDoIIB8TCCAe0CAQAxggGQ\r\n"
)


def note(subject: str, body: str) -> bytes:
    return (f"From: Doctor <doctor@sanigate.test>\r\nTo: a@example.test\r\nSubject: {subject}\r\n"
            f"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n").encode()  # fmt: skip


@pytest.fixture
def root() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="sanigate-milter-", dir="/var/tmp"))
    d.chmod(0o755)
    yield d
    subprocess.run(["postfix", "-c", str(d / "etc"), "stop"], capture_output=True, timeout=60)
    shutil.rmtree(d, ignore_errors=True)


def milter_config(root: Path, port: int, hold: str) -> Path:
    cfg = root / "sanigate.toml"
    cfg.write_text(f"""
[server]
metrics_listen = "127.0.0.1:0"
workers = 1
[milter]
listen = "127.0.0.1:{port}"
hold = "{hold}"
[store]
path = "{root}/store.db"
[policies.medical]
entities = ["HIV"]
# the plumbing, not the model: terms and groups only (tests/test_evidence.py has the evidence)
evidence_budget = 0
alpha = 1.5
[policies.strict]
entities = ["HIV"]
evidence_budget = 0
alpha = 1.5
on_failure = "reject"
[[senders]]
match = "strict@sanigate.test"
policies = ["strict"]
[[senders]]
match = "default"
policies = ["medical"]
""")
    return cfg


def test_milter_with_postfix_end_to_end(root: Path) -> None:
    port = free_port()
    cfg = milter_config(root, port, "store")
    gateway = Server(cfg, root, command="milter")
    try:
        pf = Postfix.with_milter(root, port)
        with smtplib.SMTP("127.0.0.1", pf.smtp_port, timeout=60) as client:  # two messages, one session
            client.sendmail(
                "doctor@sanigate.test",
                ["a@example.test"],
                note("HIV results", "The patient had an HIV test and started antiretroviral therapy."),
            )
            client.sendmail("doctor@sanigate.test", ["a@example.test"], note("HIV again", "Another HIV test."))
            client.sendmail("doctor@sanigate.test", ["a@example.test"], note("Lunch", "Lunch at noon?"))
        wait_for(lambda: len(pf.delivered()) == 3, 60, "three deliveries", pf)  # type: ignore[arg-type]
        first, second, clean = (email.message_from_bytes(p.read_bytes(), policy=email.policy.default)
                                for p in pf.delivered())  # fmt: skip
        for m in (first, second):
            raw = m.as_bytes()
            assert b"HIV" not in raw and b"antiretroviral" not in raw, raw
            assert m["X-Sanigate"].startswith("status=sanitized; policies=medical")
        assert "HIV" not in first["Subject"] and first["Subject"].endswith("results")  # the header was replaced
        assert clean["X-Sanigate"].startswith("status=clean") and "Lunch at noon?" in clean.get_content()
        db = sqlite3.connect(root / "store.db")
        assert {r[0] for r in db.execute("SELECT term FROM audit WHERE kind = 'decision'")} >= {"HIV"}

        # Cannot be inspected: sanigate keeps the original, Postfix drops its copy, the client hears 250.
        with smtplib.SMTP("127.0.0.1", pf.smtp_port, timeout=60) as client:
            client.sendmail("doctor@sanigate.test", ["a@example.test"], ENCRYPTED)
        held = db.execute("SELECT id, reason, cause FROM messages WHERE status = 'held'").fetchall()
        assert len(held) == 1 and held[0][1] == "encrypted" and held[0][2]
        # A policy that refuses what it cannot sanitize: 554 to the client.
        with (
            smtplib.SMTP("127.0.0.1", pf.smtp_port, timeout=60) as client,
            pytest.raises(smtplib.SMTPDataError) as info,
        ):
            client.sendmail("strict@sanigate.test", ["a@example.test"], ENCRYPTED)
        assert info.value.smtp_code == 554
        time.sleep(1)
        assert len(pf.delivered()) == 3 and pf.held() == 0

        # hold = "postfix": after a reload, Postfix keeps held mail in its hold queue.
        milter_config(root, port, "postfix")
        gateway.proc.send_signal(signal.SIGHUP)
        reloaded = lambda: any("configuration reloaded" in line for line in gateway.log)  # noqa: E731
        wait_for(reloaded, 30, "the reload", pf)  # type: ignore[arg-type]
        with smtplib.SMTP("127.0.0.1", pf.smtp_port, timeout=60) as client:
            client.sendmail("doctor@sanigate.test", ["a@example.test"], ENCRYPTED)
        wait_for(lambda: pf.held() == 1, 30, "the message in Postfix's hold queue", pf)  # type: ignore[arg-type]
        assert db.execute("SELECT COUNT(*) FROM messages WHERE status = 'held'").fetchone()[0] == 2
        db.close()

        # sanigate down: Postfix tells the client to retry (milter_default_action = tempfail).
        gateway.stop()
        with (
            smtplib.SMTP("127.0.0.1", pf.smtp_port, timeout=60) as client,
            pytest.raises(smtplib.SMTPException) as down,
        ):
            client.sendmail("doctor@sanigate.test", ["a@example.test"], note("HIV", "HIV."))
        codes = [getattr(down.value, "smtp_code", 0)] + [c for c, _ in getattr(down.value, "recipients", {}).values()]
        assert any(400 <= c < 500 for c in codes), down.value
        assert len(pf.delivered()) == 3
    finally:
        gateway.stop()


@pytest.mark.parametrize(("fragment", "traces"), [("shipped", 1), ("dkim-variant", 2)])
def test_a_signing_milter_on_the_reinjection_smtpd_needs_the_documented_variant(
    root: Path, fragment: str, traces: int
) -> None:
    """README: sign after sanigate, on 10026. The shipped no_milters switches a milter there off; the variant not.

    sanigate milter stands in for OpenDKIM: it adds its own trace field to what passes the 10026 smtpd.
    """
    gw_port, reinject, milter_port = free_port(), free_port(), free_port()
    shipped = (ROOT / "config/postfix/master.cf.fragment").read_text()
    if fragment == "shipped":  # the advice as it was: only smtpd_milters added to the shipped lines
        master = shipped.rstrip() + f"\n  -o smtpd_milters=inet:127.0.0.1:{milter_port}\n"
    else:  # the commented variant, applied as the comment says
        lines = [line for line in shipped.splitlines() if not line.startswith("  -o receive_override_options")]
        master = "\n".join(line.removeprefix("#") if line.startswith("#  -o ") else line for line in lines) + "\n"
        master = master.replace("inet:127.0.0.1:8891", f"inet:127.0.0.1:{milter_port}")
        active = [line for line in master.splitlines() if not line.startswith("#")]
        assert not any("no_milters" in line for line in active) and any("smtpd_milters" in line for line in active)
    signer_dir = root / "signer"
    signer_dir.mkdir()
    signer = milter_config(signer_dir, milter_port, "store")
    content_filter = gateway_config(root, gw_port, reinject)
    gateway, stand_in = Server(content_filter, root), Server(signer, signer_dir, command="milter")
    try:
        pf = Postfix.content_filter(root, gw_port, reinject, master_fragment=master)
        pf.submit("The patient had an HIV test.")
        wait_for(lambda: len(pf.delivered()) == 1, 60, "the delivery", pf)  # type: ignore[arg-type]
        mail = email.message_from_bytes(pf.delivered()[0].read_bytes(), policy=email.policy.default)
        found = mail.get_all("X-Sanigate") or []
        assert len(found) == traces, found  # the content filter's; with the variant, the 10026 milter's too
        assert found[-1].startswith("status=sanitized") or found[0].startswith("status=sanitized")
        if traces == 2:
            assert any(t.startswith("status=clean") for t in found)  # the "signer" saw the sanitized message
    finally:
        stand_in.stop()
        gateway.stop()
