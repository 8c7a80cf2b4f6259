"""`sanigate serve` as operators run it: a separate process with its sanitizer pool."""

from __future__ import annotations

import datetime
import re
import signal
import smtplib
import sqlite3
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from gatewaykit import MEDICAL, ThreadedCapture

POLICIES = """
[policies.medical]
entities = ["HIV"]
alpha = 1.5
{deny}

[[senders]]
match = "default"
policies = ["medical"]
"""


def write_config(tmp: Path, upstream: int, *, deny: str = "", extra: str = "") -> Path:
    cfg = tmp / "sanigate.toml"
    cfg.write_text(
        f"""
[server]
listen = "127.0.0.1:0"
hostname = "sanigate.test"
workers = 1
metrics_listen = "127.0.0.1:0"
{extra}

[upstream]
relay = "127.0.0.1:{upstream}"
timeout = 20

[store]
path = "{tmp}/store.db"
"""
        + POLICIES.format(deny=deny),
        encoding="utf-8",
    )
    return cfg


class Server:
    def __init__(self, cfg: Path, cwd: Path, command: str = "serve") -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", command, "--config", str(cfg)],
            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None and self.proc.stderr is not None
        line = self.proc.stdout.readline()  # blocks until the pool is warm and the socket is bound
        m = re.search(r"listening on [\d.]+:(\d+)(?:, metrics on [\d.]+:(\d+))?", line)
        if not m:
            self.proc.kill()
            _out, err = self.proc.communicate()
            raise AssertionError(f"no listening line: {line!r} {err}")
        self.port = int(m.group(1))
        self.metrics_port = int(m.group(2) or 0)
        self.log: list[str] = []
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(15)  # the pool's workers hold the pipe until they notice and exit
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.proc.stderr is not None and not self._reader.is_alive():
            self.proc.stderr.close()


@pytest.fixture
def capture() -> Iterator[ThreadedCapture]:
    c = ThreadedCapture()
    yield c
    c.close()


def smtp_send(port: int, data: bytes, *, tls: bool = False) -> str:
    with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
        client.ehlo("client.test")
        if tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            client.starttls(context=ctx)
            client.ehlo("client.test")
        client.mail("doctor@clinic.example")
        client.rcpt("a@example.com")
        code, reply = client.data(data)
        assert code == 250, reply
        return reply.decode()


def test_serve_end_to_end_with_metrics(tmp_path: Path, capture: ThreadedCapture) -> None:
    server = Server(write_config(tmp_path, capture.port), tmp_path)
    try:
        reply = smtp_send(server.port, MEDICAL)
        assert "sanitized" in reply
        assert b"HIV" not in capture.handler.messages[0].data
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10).read().decode()
        assert 'sanigate_messages_total{outcome="sanitized"} 1.0' in metrics
        assert 'sanigate_decisions_total{action="generalize",entity="HIV"}' in metrics
        assert "sanigate_message_seconds_bucket" in metrics
        # Logs are JSON and carry no message content.
        time.sleep(0.2)
        assert any('"msg": "message ' in line for line in server.log)
        assert not any("antiretroviral" in line for line in server.log)
    finally:
        server.stop()
    assert server.proc.returncode == 0


def test_sighup_reloads_and_refuses_a_bad_config(tmp_path: Path, capture: ThreadedCapture) -> None:
    cfg = write_config(tmp_path, capture.port)
    server = Server(cfg, tmp_path)
    try:
        smtp_send(server.port, MEDICAL.replace(b"antiretroviral therapy", b"a lunch break"))
        assert b"lunch" in capture.handler.messages[-1].data
        write_config(tmp_path, capture.port, deny='deny = ["lunch"]')
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 20
        while not any("reloaded" in line for line in server.log) and time.time() < deadline:
            time.sleep(0.1)
        smtp_send(server.port, MEDICAL.replace(b"antiretroviral therapy", b"a lunch break"))
        assert b"lunch" not in capture.handler.messages[-1].data
        cfg.write_text("[policies.broken]\nentities = 3\n", encoding="utf-8")
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 20
        while not any("reload refused" in line for line in server.log) and time.time() < deadline:
            time.sleep(0.1)
        assert any("policies.broken.entities" in line for line in server.log)
        smtp_send(server.port, MEDICAL)  # still serving, with the previous configuration
        assert b"HIV" not in capture.handler.messages[-1].data
    finally:
        server.stop()


def test_invalid_config_is_a_clear_startup_error(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[server]\nlisten = "nowhere"\n', encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "gateway.cli", "serve", "--config", str(cfg)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 1
    assert "bad.toml: server.listen: must be HOST:PORT" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_killed_mid_transaction_loses_nothing(tmp_path: Path, capture: ThreadedCapture) -> None:
    capture.handler.delay = 30.0  # upstream sits on DATA: sanigate is killed while waiting
    server = Server(write_config(tmp_path, capture.port), tmp_path)
    outcome: dict[str, object] = {}

    def client() -> None:
        try:
            outcome["reply"] = smtp_send(server.port, MEDICAL)
        except (smtplib.SMTPException, OSError) as exc:
            outcome["error"] = exc

    t = threading.Thread(target=client)
    t.start()
    time.sleep(3.0)
    server.stop(signal.SIGKILL)
    t.join(30)
    # The client never got a 250: its MTA keeps the message and retries.
    assert "reply" not in outcome and isinstance(outcome["error"], (smtplib.SMTPException, OSError))
    # The store survives the kill, and a restarted gateway delivers the retry.
    db = sqlite3.connect(tmp_path / "store.db")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    capture.handler.delay = 0.0
    again = Server(write_config(tmp_path, capture.port), tmp_path)
    try:
        assert "sanitized" in smtp_send(again.port, MEDICAL)
    finally:
        again.stop()


def test_held_message_survives_a_kill(tmp_path: Path, capture: ThreadedCapture) -> None:
    encrypted = (
        b"From: x@clinic.example\r\nTo: a@example.com\r\nSubject: s\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"\r\n\r\nMIIB\r\n'
    )
    server = Server(write_config(tmp_path, capture.port), tmp_path)
    reply = smtp_send(server.port, encrypted)
    server.stop(signal.SIGKILL)  # right after the 250
    assert "held for review" in reply
    message_id = reply.split(" as ", 1)[1].split()[0]
    db = sqlite3.connect(tmp_path / "store.db")
    row = db.execute("SELECT status, original FROM messages WHERE id = ?", (message_id,)).fetchone()
    db.close()
    assert row == ("held", encrypted)
    assert (tmp_path / "store.db").stat().st_mode & 0o777 == 0o600


def make_cert(tmp: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sanigate.test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256())
    )  # fmt: skip
    cert_path, key_path = tmp / "tls.crt", tmp / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    key_path.chmod(0o600)
    return cert_path, key_path


def test_starttls(tmp_path: Path, capture: ThreadedCapture) -> None:
    cert, key = make_cert(tmp_path)
    server = Server(write_config(tmp_path, capture.port, extra=f'tls_cert = "{cert}"\ntls_key = "{key}"'), tmp_path)
    try:
        assert "sanitized" in smtp_send(server.port, MEDICAL, tls=True)
    finally:
        server.stop()
