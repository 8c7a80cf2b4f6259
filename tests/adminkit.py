"""Real parts for admin-interface tests: a store with real sanitized messages, the app on a loopback port."""

from __future__ import annotations

import http.cookiejar
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from gatewaykit import MEDICAL

from gateway.admin.auth import hash_password
from gateway.admin.serve import ConfigSource, make_server
from gateway.config import load_config
from gateway.model.engine import Engine
from gateway.store.base import Envelope, HoldCause
from gateway.store.sqlite import SQLiteStore
from gateway.worker import sanitize_message

PASSWORDS = {"alice": "alice-long-password", "bob": "bob-long-password"}

# HTML and script in a message must be shown as text, never run.
HOSTILE = (
    b"From: Mallory <mallory@clinic.example>\r\nTo: a@example.com\r\n"
    b"Subject: <script>window.pwned=1</script> HIV follow-up\r\nMIME-Version: 1.0\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n\r\n"
    b'<img src=x onerror="window.pwned=2"><script>window.pwned=3</script>\r\n'
    b"The HIV clinic wrote back.\r\n"
)


def write_config(tmp: Path, relay_port: int) -> Path:
    hashes = {name: hash_password(pw) for name, pw in PASSWORDS.items()}
    path = tmp / "sanigate.toml"
    path.write_text(f"""# The admin tests' configuration: this comment must survive a policy edit.
[upstream]
relay = "127.0.0.1:{relay_port}"
timeout = 5

[store]
path = "{tmp}/var/sanigate.db"

[policies.medical]
entities = ["HIV"]
alpha = 1.5  # strictness

[[senders]]
match = "default"
policies = ["medical"]

[admin]
listen = "127.0.0.1:0"
max_failed_logins = 3
trusted_proxies = ["127.0.0.1"]  # the tests play clients at other addresses through X-Forwarded-For

[[admin.users]]
name = "alice"
role = "admin"
password_hash = "{hashes["alice"]}"

[[admin.users]]
name = "bob"
role = "reviewer"
password_hash = "{hashes["bob"]}"
""")
    return path


def fill_store(store: SQLiteStore, config_path: Path, engine: Engine) -> dict[str, str]:
    """Messages as the gateway leaves them: held with a sanitized version, forwarded, and a hostile one."""
    config = load_config(config_path)
    policies = list(config.policies.values())
    ids = {}
    for name, data, status in (
        ("held", MEDICAL, "held"),
        ("hostile", HOSTILE, "held"),
        ("forwarded", MEDICAL.replace(b"HIV results", b"HIV notes"), "forwarded"),
    ):
        result = sanitize_message(data, policies, name, engine=engine)
        assert result.verdict == "forward" and result.decisions
        message_id = f"msg{name}0001"
        store.save(
            message_id=message_id,
            envelope=Envelope(
                sender="doctor@clinic.example",
                recipients=("a@example.com", "b@example.com"),
                client_address="192.0.2.9",
            ),
            status=status,
            reason="review" if status == "held" else "sanitized",
            policies=["medical"],
            original=data,
            sanitized=result.data,
            decisions=result.decisions,
            utility=result.utility,
            cause=HoldCause(detail="'HIV' still named in the output", term="HIV", entity="HIV",
                            part="1 text/plain", location="line 2") if name == "held" else None,
        )  # fmt: skip
        ids[name] = message_id
    now = time.time() // 3600 * 3600
    counts = {(now - 7200, "clean"): 40, (now - 7200, "sanitized"): 6, (now, "clean"): 25, (now, "held"): 2}
    for day in range(1, 7):  # a week of traffic, for the dashboard
        counts[(now - day * 86400, "clean")] = 30 + 7 * day
        counts[(now - day * 86400, "sanitized")] = 3 + day
        counts[(now - day * 86400, "held")] = day % 3
    store.record_outcomes(counts)
    return ids


class RunningAdmin:
    """`sanigate admin` on a free loopback port, in a thread of this process."""

    def __init__(self, config_path: Path, store: SQLiteStore) -> None:
        self.source = ConfigSource(config_path)
        self.server = make_server(self.source, config_path, store, port=0)
        self._thread = threading.Thread(target=self.server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the admin server did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def close(self) -> None:
        self.server.should_exit = True
        self._thread.join(10)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str


class Client:
    """A cookie-keeping HTTP client that does not follow redirects: what a browser sends, seen raw."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect())

    def request(
        self, method: str, path: str, form: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> Reply:
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        try:
            with self.opener.open(req, timeout=30) as r:
                return Reply(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode())
        except urllib.error.HTTPError as e:
            return Reply(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode())

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, form: dict[str, str], **kw: dict[str, str]) -> Reply:
        return self.request("POST", path, form, **kw)

    def login(self, user: str, password: str | None = None, *, address: str | None = None) -> Reply:
        """Log in; ``address`` plays a client elsewhere, behind the trusted proxy."""
        headers = {"X-Forwarded-For": address} if address else {}
        page = self.request("GET", "/login", headers=headers)
        token = re.search(r'name="login_csrf" value="([^"]+)"', page.body)
        assert token, page.body
        return self.post(
            "/login",
            {
                "login_csrf": token.group(1),
                "username": user,
                "password": PASSWORDS[user] if password is None else password,
            },
            headers=headers,
        )

    def csrf(self, path: str = "/queue") -> str:
        m = re.search(r'name="csrf" value="([^"]+)"', self.get(path).body)
        assert m, "no CSRF token on the page"
        return m.group(1)
