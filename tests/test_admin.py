"""The admin interface over real HTTP on loopback: access control, CSRF, feedback, export, no content leaks."""

from __future__ import annotations

import csv
import io
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from adminkit import Client, RunningAdmin, fill_store, write_config
from gatewaykit import ThreadedCapture

from gateway.admin.auth import LoginThrottle, Sessions, hash_password, verify_password
from gateway.admin.compare import compare
from gateway.config import load_config
from gateway.model.engine import Engine
from gateway.store.base import AuditEntry, AuditQuery
from gateway.store.sqlite import SQLiteStore

Site = tuple[RunningAdmin, SQLiteStore, dict[str, str], Path]


@pytest.fixture
def capture() -> Iterator[ThreadedCapture]:
    c = ThreadedCapture()
    yield c
    c.close()


@pytest.fixture
def site(tmp_path: Path, engine: Engine, capture: ThreadedCapture) -> Iterator[Site]:
    config_path = write_config(tmp_path, capture.port)
    store = SQLiteStore(load_config(config_path).store.path)
    ids = fill_store(store, config_path, engine)
    admin = RunningAdmin(config_path, store)
    yield admin, store, ids, config_path
    admin.close()
    store.close()


# -- the parts, without a server ------------------------------------------------------
def test_password_hashes_verify_and_differ() -> None:
    h1, h2 = hash_password("a secret phrase"), hash_password("a secret phrase")
    assert h1 != h2 and h1.startswith("scrypt$")  # salted
    assert verify_password("a secret phrase", h1) and verify_password("a secret phrase", h2)
    assert not verify_password("a secret phrasE", h1)
    assert not verify_password("a secret phrase", "md5$abc") and not verify_password("x", "scrypt$broken")


def test_throttle_locks_the_pair_before_the_address_or_the_user(tmp_path: Path) -> None:
    now = [1000.0]
    store = SQLiteStore(tmp_path / "s.db")
    t = LoginThrottle(store, limit=3, window=60, clock=lambda: now[0])
    mallory = t.keys("alice", "203.0.113.5", None)
    for _ in range(3):
        assert not t.blocked(mallory)
        t.failed(mallory)
    assert t.blocked(mallory)  # the guesser is locked ...
    assert not t.blocked(t.keys("alice", "198.51.100.7", None))  # ... alice elsewhere is not
    assert not t.blocked(t.keys("bob", "203.0.113.5", None))  # nor yet the address for other names
    for i in range(9):  # 12 failures from one address, over many names: the address is locked
        t.failed(t.keys(f"user{i}", "203.0.113.5", None))
    assert t.blocked(t.keys("bob", "203.0.113.5", None)) and not t.blocked(t.keys("bob", "198.51.100.7", None))
    for i in range(9):  # 12 failures for alice over many addresses: alice is locked, except on a known device
        t.failed(t.keys("alice", f"192.0.2.{i}", None))
    assert t.blocked(t.keys("alice", "198.51.100.7", None))
    assert not t.blocked(t.keys("alice", "198.51.100.7", "her-device-token"))
    now[0] += 61
    assert not t.blocked(mallory)
    store.close()


def test_sessions_live_in_the_store_expire_and_can_be_dropped(tmp_path: Path) -> None:
    now = [0.0]
    store = SQLiteStore(tmp_path / "s.db")
    s = Sessions(store, lifetime=100, clock=lambda: now[0])
    a = s.create("alice", "admin")
    other = Sessions(SQLiteStore(tmp_path / "s.db"), lifetime=100, clock=lambda: now[0])  # another process
    assert other.get(a.token) == a and s.get("forged") is None and s.get(None) is None
    stored = store._read().execute("SELECT token_hash FROM admin_tokens").fetchall()
    assert all(a.token not in r["token_hash"] for r in stored)  # only the hash is kept
    s.drop(a.token)
    assert other.get(a.token) is None
    b = s.create("bob", "reviewer")
    now[0] = 101
    assert s.get(b.token) is None
    store.close()


def test_compare_pairs_parts_and_ties_changes_to_decisions() -> None:
    original = b"From: a@example.com\r\nSubject: HIV results\r\n\r\nThe HIV test in Los Angeles.\r\n"
    sanitized = original.replace(b"HIV", b"ill health").replace(b"Los Angeles", b"a city")
    decision = AuditEntry(
        id=1,
        message_id="m",
        at=0,
        kind="decision",
        sender="",
        recipients=(),
        term="HIV",
        replacement="ill health",
        part="body text/plain, header Subject",
    )
    c = compare(original, sanitized, [decision])
    assert [(x.before, x.after) for x in c.changes] == [
        ("HIV", "ill health"),
        ("HIV", "ill health"),
        ("Los Angeles", "a city"),
    ]
    assert c.changes[0].decisions == [decision] and c.changes[2].decisions == []
    body = next(p for p in c.parts if p.label.startswith("body"))
    assert "".join(t for t, _ in body.original) == "The HIV test in Los Angeles.\r\n"


# -- access control -------------------------------------------------------------------
def test_every_page_needs_a_login(site: Site) -> None:
    admin, store, ids, _ = site
    anon = Client(admin.url)
    for path in (
        "/",
        "/queue",
        f"/messages/{ids['held']}",
        f"/messages/{ids['held']}/original.eml",
        "/audit",
        "/dashboard",
    ):
        r = anon.get(path)
        assert r.status == 303 and r.headers["location"] == "/login", path
        assert "HIV" not in r.body
    r = anon.post(f"/messages/{ids['held']}/release", {"version": "sanitized"})
    assert r.status == 403
    assert store.get(ids["held"]).status == "held"  # type: ignore[union-attr]
    assert anon.get("/static/admin.css").status == 200  # the stylesheet of the login page


def test_wrong_password_then_lockout(site: Site) -> None:
    admin, *_ = site
    c = Client(admin.url)
    for _ in range(3):
        assert c.login("bob", "wrong password").status == 401
    r = c.login("bob")  # the right password, but too late
    assert r.status == 429 and "Too many" in r.body


def test_a_guesser_cannot_lock_a_user_out(site: Site) -> None:
    """Failures lock the guesser's own (user, address) pair; the user's known browser is never locked."""
    admin, *_ = site
    alice = Client(admin.url)
    assert alice.login("alice", address="198.51.100.7").status == 303  # her browser, now known
    mallory = Client(admin.url)
    for _ in range(3):
        assert mallory.login("alice", "guess", address="203.0.113.5").status == 401
    assert mallory.login("alice", address="203.0.113.5").status == 429
    assert Client(admin.url).login("alice", address="198.51.100.7").status == 303  # alice elsewhere: fine
    # Guesses from many addresses lock the name, but only for browsers alice has not used.
    for i in range(9):
        assert Client(admin.url).login("alice", "guess", address=f"192.0.2.{i}").status == 401
    assert Client(admin.url).login("alice", address="198.51.100.8").status == 429
    assert alice.post("/logout", {"csrf": alice.csrf()}).status == 303  # the device cookie stays
    assert alice.login("alice", address="198.51.100.9").status == 303


def test_one_address_behind_a_proxy_is_not_everyone(site: Site) -> None:
    admin, *_ = site
    for name in ("bob", "carol", "dave"):  # 3 names x 3 failures from one address: 9 < 12, still open
        for _ in range(3):
            assert Client(admin.url).login(name, "guess", address="203.0.113.5").status == 401
    assert Client(admin.url).login("alice", address="203.0.113.5").status == 303
    for _ in range(3):  # 12: now that address is braked for every name ...
        Client(admin.url).login("erin", "guess", address="203.0.113.5")
    assert Client(admin.url).login("alice", address="203.0.113.5").status == 429
    # ... and the rest of the users behind the same proxy (other X-Forwarded-For) are not.
    assert Client(admin.url).login("bob", address="198.51.100.7").status == 303


def test_sessions_are_shared_by_admin_processes(site: Site) -> None:
    admin, store, ids, config_path = site
    second = RunningAdmin(config_path, SQLiteStore(store.path))
    try:
        c = Client(admin.url)
        assert c.login("bob").status == 303
        c.base = second.url  # the same browser, routed to another admin process
        assert c.get("/queue").status == 200
        token = c.csrf()
        assert c.post(f"/messages/{ids['held']}/reject", {"csrf": token, "why": "spam"}).status == 303
        assert c.post("/logout", {"csrf": token}).status == 303
        c.base = admin.url
        assert c.get("/queue").status == 303  # logged out everywhere
    finally:
        second.close()


def test_huge_page_numbers_are_400(site: Site) -> None:
    admin, *_ = site
    alice = Client(admin.url)
    alice.login("alice")
    for page in ("99999999999999999999999", "1000001", "9" * 400):
        assert alice.get(f"/queue?page={page}").status == 400
    token = alice.csrf()
    assert alice.post("/audit", {"csrf": token, "offset": "9" * 30}).status == 400
    assert alice.get("/queue?page=2").status == 200


def test_a_reviewer_cannot_do_admin_actions(site: Site) -> None:
    admin, store, ids, config_path = site
    bob = Client(admin.url)
    assert bob.login("bob").status == 303
    token = bob.csrf()
    assert bob.get(f"/messages/{ids['held']}/original.eml").status == 403
    r = bob.post(
        f"/messages/{ids['held']}/release", {"csrf": token, "version": "original", "why": "x", "confirm": "yes"}
    )
    assert r.status == 403
    before = config_path.read_text()
    r = bob.post(
        "/feedback", {"csrf": token, "message_id": ids["held"], "policy": "medical", "term": "HIV", "list": "allow"}
    )
    assert r.status == 403 and config_path.read_text() == before
    assert store.get(ids["held"]).status == "held"  # type: ignore[union-attr]
    page = bob.get(f"/messages/{ids['held']}").body
    assert "Download original" not in page and 'id="release-original"' not in page


def test_forged_posts_are_refused(site: Site) -> None:
    admin, store, ids, _ = site
    alice = Client(admin.url)
    assert alice.login("alice").status == 303
    token = alice.csrf()
    target = f"/messages/{ids['held']}/reject"
    assert alice.post(target, {"why": "no token"}).status == 403
    assert alice.post(target, {"csrf": token[:-2] + "xx", "why": "bad token"}).status == 403
    r = alice.post(target, {"csrf": token, "why": "cross-site"}, headers={"Origin": "https://evil.example"})
    assert r.status == 403
    assert store.get(ids["held"]).status == "held"  # type: ignore[union-attr]
    assert alice.post(target, {"csrf": token, "why": "a real decision"}).status == 303
    assert store.get(ids["held"]).status == "rejected"  # type: ignore[union-attr]
    (action,) = [a for a in store.audit(AuditQuery(message_id=ids["held"], kind="action"))]
    assert action.actor == "alice" and action.why == "a real decision"


def test_a_login_form_from_elsewhere_is_refused(site: Site) -> None:
    admin, *_ = site
    c = Client(admin.url)
    r = c.post("/login", {"username": "alice", "password": "alice-long-password"})
    assert r.status == 403 and "sanigate_session" not in r.headers.get("set-cookie", "")


def test_pages_carry_no_content_in_urls_or_logs(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    admin, _store, ids, _ = site
    caplog.set_level(logging.INFO)
    alice = Client(admin.url)
    alice.login("alice")
    page = alice.get(f"/messages/{ids['held']}")
    assert page.status == 200 and "HIV" in page.body  # the content is on the page...
    hrefs = re.findall(r'(?:href|action)="([^"]*)"', page.body)
    assert hrefs and not any("HIV" in h or "Angeles" in h for h in hrefs)  # ...never in a link
    token = alice.csrf()
    found = alice.post("/audit", {"csrf": token, "term": "HIV"})
    assert found.status == 200 and "HIV → pathological state" in found.body  # the decision, as written
    assert page.headers["cache-control"] == "no-store"
    assert "script-src" not in page.headers["content-security-policy"]  # default-src 'none': no script at all
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert f"/messages/{ids['held']}" in logged and "POST /audit" in logged
    assert "HIV" not in logged and "Angeles" not in logged and "results" not in logged


def test_hostile_html_in_a_message_is_text(site: Site) -> None:
    admin, _store, ids, _ = site
    alice = Client(admin.url)
    alice.login("alice")
    body = alice.get(f"/messages/{ids['hostile']}").body
    assert "<script>window.pwned" not in body and "<img src=x" not in body
    assert "&lt;script&gt;window" in body and "&lt;img src=x onerror=" in body


# -- acting on messages -----------------------------------------------------------------
def test_release_original_needs_reason_and_confirmation(site: Site, capture: ThreadedCapture) -> None:
    admin, store, ids, _ = site
    alice = Client(admin.url)
    alice.login("alice")
    token = alice.csrf()
    target = f"/messages/{ids['forwarded']}/release"
    assert alice.post(target, {"csrf": token, "version": "original", "why": "", "confirm": "yes"}).status == 400
    assert alice.post(target, {"csrf": token, "version": "original", "why": "court order"}).status == 400
    assert capture.handler.messages == []
    r = alice.post(target, {"csrf": token, "version": "original", "why": "court order", "confirm": "yes"})
    assert r.status == 303
    (sent,) = capture.handler.messages
    assert b"HIV notes" in sent.data and sorted(sent.recipients) == ["a@example.com", "b@example.com"]
    assert store.get(ids["forwarded"]).status == "released"  # type: ignore[union-attr]
    assert alice.post(target, {"csrf": token, "version": "original", "why": "again", "confirm": "yes"}).status == 409
    assert len(capture.handler.messages) == 1  # never twice


def test_admin_downloads_the_original_and_it_is_audited(
    site: Site,
) -> None:
    admin, store, ids, _ = site
    alice = Client(admin.url)
    alice.login("alice")
    r = alice.get(f"/messages/{ids['held']}/original.eml")
    assert r.status == 200 and r.headers["content-type"].startswith("message/rfc822") and "HIV results" in r.body
    actions = store.audit(AuditQuery(message_id=ids["held"], kind="action"))
    assert [(a.action, a.actor) for a in actions] == [("downloaded original", "alice")]


def test_feedback_edits_the_policy_file_with_a_backup(
    site: Site,
) -> None:
    admin, store, ids, config_path = site
    before = config_path.read_text()
    alice = Client(admin.url)
    alice.login("alice")
    token = alice.csrf()

    def feedback(listing: str) -> int:
        form = {"csrf": token, "message_id": ids["held"], "policy": "medical", "term": "antiretroviral therapy"}
        return alice.post("/feedback", {**form, "list": listing}).status

    assert feedback("deny") == 303
    after = config_path.read_text()
    assert "this comment must survive" in after and "# strictness" in after
    assert load_config(config_path).policies["medical"].sanitize.deny == frozenset({"antiretroviral therapy"})
    (backup,) = config_path.parent.glob("sanigate.toml.*.bak")
    assert backup.read_text() == before
    assert feedback("allow") == 303
    policy = load_config(config_path).policies["medical"].sanitize
    assert policy.allow == frozenset({"antiretroviral therapy"}) and policy.deny == frozenset()
    r = alice.post(
        "/feedback", {"csrf": token, "message_id": ids["held"], "policy": "nope", "term": "x", "list": "allow"}
    )
    assert r.status == 400
    actions = store.audit(AuditQuery(message_id=ids["held"], kind="action"))
    assert [a.action for a in actions] == ["policy deny-list", "policy allow-list"]
    assert all(a.actor == "alice" for a in actions)


def test_audit_export_as_csv_and_json(site: Site) -> None:
    admin, store, _ids, _ = site
    alice = Client(admin.url)
    alice.login("alice")
    token = alice.csrf()
    as_json = alice.post("/audit/export", {"csrf": token, "format": "json", "entity": "HIV", "kind": "decision"})
    rows = json.loads(as_json.body)
    assert rows and all(r["entity"] == "HIV" and r["kind"] == "decision" for r in rows)
    assert len(rows) == store.count_audit(AuditQuery(entity="HIV", kind="decision"))
    as_csv = alice.post("/audit/export", {"csrf": token, "format": "csv", "term": "hiv"})
    lines = as_csv.body.strip().splitlines()
    assert as_csv.headers["content-type"].startswith("text/csv") and lines[0].startswith("id,at,message_id")
    assert len(lines) - 1 == sum(1 for r in rows if "hiv" in r["term"].lower())


def test_csv_export_neutralises_formulas(site: Site) -> None:
    admin, store, ids, _ = site
    for why in ('=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "fine"):
        store.log_action(message_id=ids["held"], action="note", actor="=cmd|' /C calc'!A0", why=why)
    alice = Client(admin.url)
    alice.login("alice")
    body = alice.post("/audit/export", {"csrf": alice.csrf(), "format": "csv", "action": "note"}).body
    rows = list(csv.DictReader(io.StringIO(body)))
    assert [r["why"] for r in rows] == ["'=HYPERLINK(\"http://evil.example\",\"x\")", "'+1+1", "'-2+3", "'@SUM(A1)",
                                        "'\tx", "'\rx", "fine"]  # fmt: skip
    assert all(r["actor"] == "'=cmd|' /C calc'!A0" for r in rows)
    as_json = json.loads(alice.post("/audit/export", {"csrf": alice.csrf(), "format": "json", "action": "note"}).body)
    assert as_json[0]["why"].startswith("=HYPERLINK")  # JSON is data, not a spreadsheet: left as it was


def test_queue_filters_and_dashboard(site: Site) -> None:
    admin, _store, ids, _ = site
    alice = Client(admin.url)
    alice.login("alice")
    held = alice.get("/queue?status=held").body
    assert ids["held"] in held and ids["hostile"] in held and ids["forwarded"] not in held
    assert ids["forwarded"] in alice.get("/queue?status=forwarded&entity=HIV&recipient=B@example.com").body
    assert ids["held"] not in alice.get("/queue?sender=other@example.com").body
    assert alice.get("/queue?since=2001-13-01").status == 400
    dash = alice.get("/dashboard?days=1").body
    assert "<svg" in dash and "clean 65" in dash and "held 2" in dash and "HIV" in dash


def _user_cli(config_path: Path, *args: str, password: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gateway.cli", "admin", "user", *args, "--config", str(config_path)],
                          input=password + "\n", capture_output=True, text=True, timeout=60,
                          cwd=config_path.parent)  # fmt: skip


def test_admin_users_are_managed_from_the_command_line(site: Site) -> None:
    admin, _store, _ids, config_path = site
    added = _user_cli(config_path, "add", "carol", "--role", "reviewer", password="carol-long-password")
    assert added.returncode == 0, added.stderr
    assert "this comment must survive" in config_path.read_text()  # edited with tomlkit, comments kept
    assert list(config_path.parent.glob("sanigate.toml.*.bak"))  # and the previous file kept
    carol = Client(admin.url)  # the running interface re-reads the file: no restart
    assert carol.login("carol", "carol-long-password").status == 303
    assert carol.get("/queue").status == 200
    again = _user_cli(config_path, "add", "carol", password="carol-long-password")
    assert again.returncode == 1 and "exists already" in again.stderr
    assert _user_cli(config_path, "add", "dave", password="short").returncode == 1

    changed = _user_cli(config_path, "passwd", "carol", password="carol-new-password")
    assert changed.returncode == 0 and "2 session(s) and device(s) ended" in changed.stdout, changed.stdout
    assert carol.get("/queue").status == 303  # her sessions ended with the old password
    assert Client(admin.url).login("carol", "carol-long-password").status == 401
    assert Client(admin.url).login("carol", "carol-new-password").status == 303

    removed = _user_cli(config_path, "remove", "carol")
    assert removed.returncode == 0, removed.stderr
    assert Client(admin.url).login("carol", "carol-new-password").status == 401
    last_admin = _user_cli(config_path, "remove", "alice")
    assert last_admin.returncode == 1 and "last user with the admin role" in last_admin.stderr
    assert _user_cli(config_path, "remove", "nobody").returncode == 1
    assert Client(admin.url).login("alice").status == 303
