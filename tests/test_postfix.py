"""End to end with a real Postfix from Debian, configured with the shipped fragments.

A private Postfix instance (its own config, queue and mail directories) takes
mail on a loopback port, hands it to `sanigate serve` as an after-queue
content filter, takes the sanitized message back on its re-injection port and
delivers it into a Maildir. CI installs postfix; elsewhere this is skipped.
"""

from __future__ import annotations

import os
import shutil
import signal
import smtplib
import socket
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_serve import Server

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534

pytestmark = pytest.mark.skipif(
    shutil.which("postfix") is None or os.geteuid() != 0,
    reason="needs Debian's postfix and root (CI installs it: .ci/run)",
)

MASTER = """
{smtp_port} inet  n       -       n       -       -       smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
local     unix  -       n       n       -       -       local
virtual   unix  -       n       n       -       -       virtual
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
"""

MAIN = """
compatibility_level = 3.6
queue_directory = {root}/queue
data_directory = {root}/data
mail_owner = postfix
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
myhostname = mx.sanigate.test
mydomain = sanigate.test
myorigin = sanigate.test
mydestination =
mynetworks = 127.0.0.0/8
alias_maps =
alias_database =
local_recipient_maps =
virtual_mailbox_domains = example.test
virtual_mailbox_base = {root}/mail
virtual_mailbox_maps = inline:{{ {{a@example.test=a/}} }}
virtual_uid_maps = static:{nobody}
virtual_gid_maps = static:{nobody}
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
maillog_file = {root}/maillog
minimal_backoff_time = 1s
maximal_backoff_time = 2s
queue_run_delay = 1s
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Postfix:
    """A private Postfix instance under `root`, its own queue, config and SMTP port on loopback."""

    def __init__(self, root: Path, *, main_fragment: str, master_fragment: str = "") -> None:
        self.root = root
        self.etc = root / "etc"
        self.smtp_port = free_port()
        self.etc.mkdir(parents=True)
        for sub in ("queue", "data", "mail"):
            (root / sub).mkdir()
        shutil.chown(root / "data", "postfix")
        os.chown(root / "mail", NOBODY, NOBODY)
        (self.etc / "main.cf").write_text(MAIN.format(root=root, nobody=NOBODY) + main_fragment)
        (self.etc / "master.cf").write_text(MASTER.format(smtp_port=f"127.0.0.1:{self.smtp_port}") + master_fragment)
        self.postfix("check")
        self.postfix("start")
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.smtp_port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"postfix did not start: {self.log()}")

    @classmethod
    def content_filter(
        cls, root: Path, gateway_port: int, reinject_port: int, *, master_fragment: str | None = None
    ) -> Postfix:
        """Postfix with sanigate as its after-queue content filter, as config/postfix/ documents it."""
        main = (ROOT / "config/postfix/main.cf.fragment").read_text()
        master = master_fragment or (ROOT / "config/postfix/master.cf.fragment").read_text()
        return cls(
            root,
            main_fragment=main.replace("[127.0.0.1]:10025", f"[127.0.0.1]:{gateway_port}"),
            master_fragment=master.replace("127.0.0.1:10026", f"127.0.0.1:{reinject_port}"),
        )

    @classmethod
    def with_milter(cls, root: Path, milter_port: int) -> Postfix:
        main = (ROOT / "config/postfix/milter.main.cf.fragment").read_text()
        return cls(root, main_fragment=main.replace("127.0.0.1:8894", f"127.0.0.1:{milter_port}"))

    def postfix(self, *args: str) -> str:
        proc = subprocess.run(["postfix", "-c", str(self.etc), *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def log(self) -> str:
        f = self.root / "maillog"
        return f.read_text(errors="replace") if f.exists() else ""

    def delivered(self) -> list[Path]:
        new = self.root / "mail" / "a" / "new"
        return sorted(new.iterdir(), key=lambda p: p.stat().st_mtime_ns) if new.exists() else []

    def queued(self) -> int:
        return sum(1 for sub in ("incoming", "active", "deferred") for p in (self.root / "queue" / sub).rglob("*")
                   if p.is_file())  # fmt: skip

    def held(self) -> int:
        return sum(1 for p in (self.root / "queue" / "hold").rglob("*") if p.is_file())

    def submit(self, body: str) -> None:
        msg = (f"From: doctor@sanigate.test\r\nTo: a@example.test\r\nSubject: results\r\n\r\n{body}\r\n").encode()
        with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=30) as client:
            client.sendmail("doctor@sanigate.test", ["a@example.test"], msg)


def wait_for(predicate: object, seconds: float, what: str, pf: Postfix) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}\n{pf.log()[-3000:]}")


@pytest.fixture
def root() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="sanigate-postfix-", dir="/var/tmp"))
    d.chmod(0o755)  # postfix's daemons run as postfix and must reach their directories
    yield d
    subprocess.run(["postfix", "-c", str(d / "etc"), "stop"], capture_output=True, timeout=60)
    shutil.rmtree(d, ignore_errors=True)


def gateway_config(root: Path, port: int, reinject: int) -> Path:
    cfg = root / "sanigate.toml"
    cfg.write_text(f"""
[server]
listen = "127.0.0.1:{port}"
metrics_listen = "127.0.0.1:0"
workers = 1
[upstream]
relay = "127.0.0.1:{reinject}"
[store]
path = "{root}/store.db"
[policies.medical]
entities = ["HIV"]
# the plumbing, not the model: terms and groups only (tests/test_evidence.py has the evidence)
evidence_budget = 0
alpha = 1.5
[[senders]]
match = "default"
policies = ["medical"]
""")
    return cfg


def test_postfix_content_filter_end_to_end(root: Path) -> None:
    gw_port, reinject = free_port(), free_port()
    cfg = gateway_config(root, gw_port, reinject)
    gateway = Server(cfg, root)
    try:
        pf = Postfix.content_filter(root, gw_port, reinject)
        pf.submit("The patient had an HIV test and started antiretroviral therapy.")
        wait_for(lambda: len(pf.delivered()) == 1, 60, "the sanitized delivery", pf)
        mail = pf.delivered()[0].read_bytes()
        assert b"HIV" not in mail and b"antiretroviral" not in mail
        assert b"X-Sanigate: status=sanitized" in mail
        db = sqlite3.connect(root / "store.db")
        terms = {r[0] for r in db.execute("SELECT term FROM audit WHERE kind = 'decision'")}
        db.close()
        assert "HIV" in terms

        gateway.stop()  # sanigate down: Postfix must keep the mail
        pf.submit("Second note: the HIV clinic moved.")
        wait_for(lambda: "Connection refused" in pf.log() and pf.queued() >= 1, 60, "a deferral", pf)
        assert len(pf.delivered()) == 1

        gateway = Server(cfg, root)  # back up: the deferred mail is delivered, sanitized
        pf.postfix("flush")
        wait_for(lambda: len(pf.delivered()) == 2, 90, "delivery after restart", pf)
        second = pf.delivered()[1].read_bytes()
        assert b"clinic moved" in second and b"HIV" not in second
    finally:
        gateway.stop(signal.SIGTERM)
