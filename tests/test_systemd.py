"""The systemd units and the compose file, checked for real.

The units are checked by ``systemd-analyze verify`` (pointing ExecStart at this checkout's sanigate);
the readiness protocol by running ``sanigate serve``, ``milter`` and ``admin`` with $NOTIFY_SOCKET
pointing at a datagram socket of the test's, as systemd would: READY=1 only once the port answers,
RELOADING=1 then READY=1 on SIGHUP, STOPPING=1 on SIGTERM. The compose file is checked against the
files and addresses it names.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from adminkit import write_config as admin_config
from test_postfix import free_port
from test_serve import POLICIES

from gateway.config import parse_config

ROOT = Path(__file__).resolve().parents[1]
UNITS = ("sanigate.service", "sanigate-milter.service", "sanigate-admin.service")
SANIGATE = Path(sys.executable).with_name("sanigate")


def test_units_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        if os.environ.get("SANIGATE_CI"):
            raise AssertionError("systemd-analyze is missing (.ci/run installs systemd)")
        pytest.skip("needs systemd-analyze")
    for name in UNITS:
        text = (ROOT / "config/systemd" / name).read_text()
        assert "Type=notify" in text and "User=sanigate" in text and "ExecReload=/bin/kill -HUP $MAINPID" in text
        (tmp_path / name).write_text(text.replace("/opt/sanigate/.venv/bin/sanigate", str(SANIGATE)))
    proc = subprocess.run([analyze, "verify", *(str(tmp_path / n) for n in UNITS)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0 and proc.stderr.strip() == "", proc.stderr  # warnings count as failures
    sysusers = (ROOT / "config/systemd/sanigate.sysusers").read_text()
    assert any(line.split()[:2] == ["u", "sanigate"] for line in sysusers.splitlines())


class NotifySocket:
    """What systemd listens on: a datagram socket whose messages we collect."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="sanigate-notify-"))
        self.path = self.dir / "notify"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(self.path))
        self.sock.settimeout(0.2)

    def wait_for(self, field: str, seconds: float = 120) -> list[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                fields = self.sock.recv(4096).decode().split("\n")
            except TimeoutError:
                continue
            if field in fields:
                return fields
        raise AssertionError(f"no {field} from the service")

    def close(self) -> None:
        self.sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def notify() -> Iterator[NotifySocket]:
    n = NotifySocket()
    yield n
    n.close()


def _start(command: str, cfg: Path, cwd: Path, notify: NotifySocket) -> subprocess.Popen[bytes]:
    env = {**os.environ, "NOTIFY_SOCKET": str(notify.path)}
    return subprocess.Popen([str(SANIGATE), command, "--config", str(cfg)], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True


def _stop(proc: subprocess.Popen[bytes], notify: NotifySocket) -> None:
    proc.send_signal(signal.SIGTERM)
    notify.wait_for("STOPPING=1", 30)
    assert proc.wait(60) in (0, -signal.SIGTERM)  # uvicorn ends by re-raising SIGTERM; systemd counts it clean


def _reload_then_stop(proc: subprocess.Popen[bytes], notify: NotifySocket, port: int, ready_seconds: float) -> None:
    """SIGHUP: RELOADING=1, then READY=1 again with the port still answering; then a clean stop."""
    proc.send_signal(signal.SIGHUP)
    notify.wait_for("RELOADING=1", 30)
    notify.wait_for("READY=1", ready_seconds)
    assert proc.poll() is None and _answers(port)
    _stop(proc, notify)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("command", ["serve", "milter"])
def test_ready_once_listening_and_reload_on_sighup(command: str, tmp_path: Path, notify: NotifySocket) -> None:
    port = free_port()
    listen = f'[server]\nlisten = "127.0.0.1:{port}"\nmetrics_listen = "127.0.0.1:0"\nworkers = 1\n'
    if command == "milter":
        listen = f'[server]\nmetrics_listen = "127.0.0.1:0"\nworkers = 1\n[milter]\nlisten = "127.0.0.1:{port}"\n'
    cfg = tmp_path / "sanigate.toml"
    cfg.write_text(listen + f'[store]\npath = "{tmp_path}/store.db"\n' + POLICIES.format(deny=""))
    proc = _start(command, cfg, tmp_path, notify)
    try:
        ready = notify.wait_for("READY=1")
        assert _answers(port)  # readiness comes after the workers answered and the port is bound
        assert any(f.startswith("STATUS=") and str(port) in f for f in ready)
        _reload_then_stop(proc, notify, port, 60)
    finally:
        _kill(proc)


def test_admin_ready_and_reload(tmp_path: Path, notify: NotifySocket) -> None:
    cfg = admin_config(tmp_path, free_port())
    port = free_port()
    cfg.write_text(cfg.read_text().replace('listen = "127.0.0.1:0"', f'listen = "127.0.0.1:{port}"'))
    proc = _start("admin", cfg, tmp_path, notify)
    try:
        notify.wait_for("READY=1", 60)
        assert _answers(port)
        _reload_then_stop(proc, notify, port, 30)  # uvicorn leaves SIGHUP alone; sanigate re-reads its file
    finally:
        _kill(proc)


def test_compose_file_is_consistent() -> None:
    """What `docker compose config` would catch, and what it would not: files, config, pinned addresses."""
    compose = yaml.safe_load((ROOT / "docker/compose.yaml").read_text())
    services = compose["services"]
    subnet = compose["networks"]["mail"]["ipam"]["config"][0]["subnet"]
    addresses = {name: s["networks"]["mail"]["ipv4_address"] for name, s in services.items()}
    assert all(a.rsplit(".", 1)[0] == subnet.rsplit(".", 1)[0] for a in addresses.values())
    for service in services.values():
        build = service.get("build")
        if build:
            assert (ROOT / "docker" / build["context"] / build["dockerfile"]).is_file()
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (ROOT / "docker" / source).exists(), source
            else:
                assert source in compose["volumes"], source
    mounted = next(v for v in services["sanigate"]["volumes"] if v.endswith("/etc/sanigate/sanigate.toml:ro"))
    config = parse_config((ROOT / "docker" / mounted.split(":")[0]).read_text(), source="compose", base=ROOT)
    assert services["sanigate"]["command"][0] in ("serve", "milter")
    assert (config.upstream.host, config.upstream.port) == (addresses["postfix"], 10026)
    assert str(config.server.port) in services["sanigate"]["expose"]
    postfix_image = (ROOT / "docker/Dockerfile.postfix").read_text()
    assert f"[{addresses['sanigate']}]:{config.server.port}" in postfix_image  # Postfix reaches sanigate there
    assert "USER sanigate" in (ROOT / "docker/Dockerfile").read_text()  # the dedicated user, as with systemd
    shipped = parse_config((ROOT / "config/sanigate.toml").read_text(), source="shipped", base=ROOT)
    assert config.policies["us-medical"].sanitize.entities == shipped.policies["us-medical"].sanitize.entities
