"""The admin interface over real HTTP on loopback: access control, CSRF, feedback, export, no content leaks."""

from __future__ import annotations

import json
import logging
import re
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


def test_throttle_blocks_after_the_limit_and_forgets_after_the_window() -> None:
    now = [1000.0]
    t = LoginThrottle(limit=3, window=60, clock=lambda: now[0])
    for _ in range(3):
        assert not t.blocked(["user:x"])
        t.failed(["user:x", "addr:1"])
    assert t.blocked(["user:x"]) and t.blocked(["addr:1"]) and not t.blocked(["user:y"])
    now[0] += 61
    assert not t.blocked(["user:x", "addr:1"])


def test_sessions_expire_and_can_be_dropped() -> None:
    now = [0.0]
    s = Sessions(lifetime=100, clock=lambda: now[0])
    a = s.create("alice", "admin")
    assert s.get(a.token) is a and s.get("forged") is None and s.get(None) is None
    s.drop(a.token)
    assert s.get(a.token) is None
    b = s.create("bob", "reviewer")
    now[0] = 101
    assert s.get(b.token) is None


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
    # The same address guessing at another name is braked too.
    assert Client(admin.url).login("alice").status == 429


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
    assert found.status == 200 and "ill health" in found.body
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
    r = alice.post(
        "/feedback",
        {
            "csrf": token,
            "message_id": ids["held"],
            "policy": "medical",
            "term": "antiretroviral therapy",
            "list": "deny",
        },
    )
    assert r.status == 303
    after = config_path.read_text()
    assert "this comment must survive" in after and "# strictness" in after
    assert load_config(config_path).policies["medical"].sanitize.deny == frozenset({"antiretroviral therapy"})
    (backup,) = config_path.parent.glob("sanigate.toml.*.bak")
    assert backup.read_text() == before
    r = alice.post(
        "/feedback",
        {
            "csrf": token,
            "message_id": ids["held"],
            "policy": "medical",
            "term": "antiretroviral therapy",
            "list": "allow",
        },
    )
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
