"""The store on both backends (SQLite, PostgreSQL): migrations, filters, the dashboard's figures, concurrency.

Every test taking ``make_store`` runs once per backend, on a real SQLite file
and a real PostgreSQL database.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gateway.model.records import Step
from gateway.store.base import AuditQuery, DecisionRecord, Envelope, MessageQuery
from gateway.store.sql import SQLStore
from gateway.store.sqlite import _V1, SCHEMA_VERSION, SQLiteStore, StoreError

MakeStore = Callable[[], SQLStore]


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """A function giving a handle on one fresh, upgraded store (call it again: another handle, same store)."""
    opened: list[SQLStore] = []
    if request.param == "sqlite":
        path = tmp_path / "s.db"

        def make() -> SQLStore:
            opened.append(SQLiteStore(path))
            return opened[-1]
    else:
        from gateway.store.postgres import PostgresStore

        url = request.getfixturevalue("postgres").new()
        upgrader = PostgresStore(url, check_schema=False)
        upgrader.upgrade()
        upgrader.close()

        def make() -> SQLStore:
            opened.append(PostgresStore(url))
            return opened[-1]

    yield make
    for s in opened:
        s.close()


def _decision(term: str, entity: str = "HIV", **kw: object) -> DecisionRecord:
    fields: dict[str, object] = dict(
        policy="medical",
        entity=entity,
        term=term,
        pmi=7.0,
        threshold=4.7,
        action="generalize",
        replacement="ill health",
        reason="pmi",
        part="body",
    )
    fields.update(kw)
    return DecisionRecord(**fields)  # type: ignore[arg-type]


def _save(
    store: SQLStore,
    message_id: str,
    *,
    sender: str = "a@x.example",
    recipients: tuple[str, ...] = ("b@y",),
    status: str = "held",
    decisions: tuple[DecisionRecord, ...] = (),
    utility: float | None = None,
    policies: tuple[str, ...] = ("medical",),
) -> None:
    store.save(
        message_id=message_id,
        envelope=Envelope(sender=sender, recipients=recipients),
        status=status,  # type: ignore[arg-type]
        reason="sanitized",
        policies=policies,
        original=b"Subject: x\r\n\r\nbody\r\n",
        sanitized=None,
        decisions=decisions,
        utility=utility,
    )


def test_a_version_1_file_is_migrated_and_keeps_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(_V1)  # what sanigate 0.1 wrote, with no user_version
    db.execute(
        "INSERT INTO messages VALUES ('old1', 1.0, 's@x', '[\"r@y\"]', '{}', 'held', 'review', '[\"medical\"]',"
        " 10, 0, 0, x'00', NULL, 1.0)"
    )
    db.execute(
        "INSERT INTO audit (message_id, at, kind, sender, recipients, term) VALUES ('old1', 1.0, 'decision',"
        " 's@x', '[\"r@y\"]', 'HIV')"
    )
    db.commit()
    db.close()
    store = SQLiteStore(path)
    assert store.upgrade() == (SCHEMA_VERSION, SCHEMA_VERSION)  # done once, at open
    old = store.get("old1")
    assert old is not None and old.utility is None and old.envelope.recipients == ("r@y",)
    (entry,) = store.audit(AuditQuery(message_id="old1"))
    assert entry.term == "HIV" and entry.chain == ()
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer than this sanigate"):
        SQLiteStore(path)


def test_queue_filters(make_store: MakeStore) -> None:
    store = make_store()
    _save(
        store,
        "m1",
        sender="doc@clinic.example",
        recipients=("Ann@Example.com", "bo@example.com"),
        decisions=(_decision("HIV"),),
    )
    _save(
        store,
        "m2",
        status="forwarded",
        decisions=(_decision("Los Angeles", entity="Los Angeles"),),
        policies=("places",),
    )
    _save(store, "x3", status="forwarded")

    def ids(**kw: object) -> list[str]:
        return sorted(m.id for m in store.list_messages(MessageQuery(**kw)))  # type: ignore[arg-type]

    assert ids() == ["m1", "m2", "x3"]
    assert ids(status="forwarded") == ["m2", "x3"]
    assert ids(sender="doc@clinic.example") == ["m1"]
    assert ids(recipient="ann@example.com") == ["m1"]  # recipients match whatever their case
    assert ids(policy="places") == ["m2"] and ids(policy="medic") == []
    assert ids(entity="HIV") == ["m1"] and ids(entity="Los Angeles") == ["m2"]
    assert ids(message_id="m") == ["m1", "m2"] and ids(message_id="%") == []  # a prefix, not a pattern
    assert ids(since=time.time() + 60) == [] and len(ids(until=time.time() + 60)) == 3
    assert store.count_messages(MessageQuery(status="forwarded")) == 2
    page = store.list_messages(MessageQuery(), limit=2, offset=2)
    assert len(page) == 1


def test_audit_search_chain_and_actions(make_store: MakeStore) -> None:
    store = make_store()
    chain = (
        Step(
            term="infection",
            source="wordnet",
            pmi=5.0,
            threshold=4.7,
            entity="HIV",
            accepted=False,
            why="still discloses",
        ),
        Step(term="ill health", source="wordnet", pmi=1.9, threshold=4.7, entity="HIV", accepted=True),
    )
    _save(
        store,
        "m1",
        decisions=(
            _decision("HIV", chain=chain, sense="hiv.n.01", group=("HIV", "clinic")),
            _decision("antiretroviral", pmi=float("inf")),
        ),
    )
    store.log_action(message_id="m1", action="downloaded original", actor="alice", why="legal hold")
    (hiv,) = store.audit(AuditQuery(term="hi"))  # a substring, any case
    assert hiv.chain == chain and hiv.sense == "hiv.n.01" and hiv.group == ("HIV", "clinic")
    (anti,) = store.audit(AuditQuery(term="ANTI"))
    assert anti.pmi is None  # infinity is not a number the log can keep
    assert store.audit(AuditQuery(term="%")) == []
    (act,) = store.audit(AuditQuery(kind="action"))
    assert (act.actor, act.why, act.sender) == ("alice", "legal hold", "a@x.example")
    assert store.count_audit(AuditQuery(kind="decision")) == 2 and store.count_audit() == 3


def test_dashboard_figures(make_store: MakeStore) -> None:
    store = make_store()
    _save(store, "m1", decisions=(_decision("HIV"), _decision("hiv"), _decision("clinic", entity="HIV")), utility=0.8)
    _save(store, "m2", decisions=(_decision("Los Angeles", entity="Los Angeles"),), utility=0.5)
    _save(store, "m3")
    day = 86400.0
    store.record_outcomes({(10 * day, "clean"): 3, (10 * day + 60, "clean"): 2, (11 * day, "held"): 1})
    store.record_outcomes({(10 * day, "clean"): 4})  # counts add up
    stats = store.stats(since=0, bucket=day)
    assert stats.outcomes == [(10 * day, "clean", 9), (11 * day, "held", 1)]
    assert stats.decisions_by_entity == [("HIV", 3), ("Los Angeles", 1)]
    assert stats.top_terms[0] == ("hiv", 2)
    assert sorted(stats.utility) == [0.5, 0.8]
    assert store.stats(since=11 * day, bucket=day).outcomes == [(11 * day, "held", 1)]


def _writer(kind: str, where: str, worker: int, n: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """One gateway process: stores n messages, then tries to release every message of both processes."""
    if kind == "sqlite":
        store: SQLStore = SQLiteStore(Path(where))
    else:
        from gateway.store.postgres import PostgresStore

        store = PostgresStore(where)
    for i in range(n):
        _save(store, f"w{worker}-{i:03d}", decisions=(_decision("HIV"),))
    released = 0
    deadline = time.monotonic() + 60
    todo = [f"w{w}-{i:03d}" for i in range(n) for w in (0, 1)]
    while todo and time.monotonic() < deadline:
        missing = []
        for message_id in todo:
            if store.get(message_id) is None:
                missing.append(message_id)  # the other process has not stored it yet
            elif store.transition(message_id, to="released", allowed_from=("held",), actor=f"gw{worker}", why="race"):
                released += 1
        todo = missing
    store.close()
    out.put(released)


def test_two_processes_lose_nothing_and_release_each_message_once(make_store: MakeStore) -> None:
    store = make_store()
    kind = "sqlite" if isinstance(store, SQLiteStore) else "postgres"
    where = str(store.path) if isinstance(store, SQLiteStore) else store.url  # type: ignore[attr-defined]
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue[int] = ctx.Queue()
    n = 40
    procs = [ctx.Process(target=_writer, args=(kind, where, w, n, out)) for w in (0, 1)]
    for p in procs:
        p.start()
    released = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
    assert sum(released) == 2 * n  # every message released, by one process or the other
    assert store.count_messages(MessageQuery(status="released")) == 2 * n
    actions = store.audit(AuditQuery(kind="action"), limit=1000)
    assert len(actions) == 2 * n and len({a.message_id for a in actions}) == 2 * n  # never twice
    assert store.count_audit(AuditQuery(kind="decision")) == 2 * n


def test_postgres_waits_for_db_upgrade(postgres: object, tmp_path: Path) -> None:
    import subprocess
    import sys

    from gateway.store.postgres import SCHEMA_VERSION, PostgresStore

    url = postgres.new()  # type: ignore[attr-defined]
    with pytest.raises(StoreError, match="run 'sanigate db upgrade'"):
        PostgresStore(url)
    config = tmp_path / "c.toml"
    config.write_text(f'[store]\nurl = "{url}"\n')
    run = [sys.executable, "-m", "gateway.cli", "db", "--config", str(config)]
    up = subprocess.run([*run, "upgrade"], capture_output=True, text=True, timeout=60)
    assert up.returncode == 0 and f"schema version 0 -> {SCHEMA_VERSION}" in up.stdout, up.stderr
    again = subprocess.run([*run, "upgrade"], capture_output=True, text=True, timeout=60)
    assert f"already at {SCHEMA_VERSION}" in again.stdout
    store = PostgresStore(url)
    assert store.schema_version() == SCHEMA_VERSION
    store.close()


def test_admin_tokens_and_login_failures_are_shared(make_store: MakeStore) -> None:
    from gateway.store.base import AdminToken

    one, two = make_store(), make_store()  # two processes' handles on one store
    one.create_token(AdminToken(token_hash="h1", kind="session", user="alice", role="admin", csrf="c", expires=200.0))
    assert two.get_token("h1", kind="session", now=100.0) == AdminToken(
        token_hash="h1", kind="session", user="alice", role="admin", csrf="c", expires=200.0
    )
    assert two.get_token("h1", kind="device", now=100.0) is None  # a session token is not a device token
    assert two.get_token("h1", kind="session", now=200.0) is None  # expired
    two.drop_token("h1")
    assert one.get_token("h1", kind="session", now=100.0) is None
    one.login_failed(["pair:alice|1", "addr:1"], at=10.0)
    two.login_failed(["pair:alice|1"], at=20.0)
    assert one.login_failures(["pair:alice|1", "addr:1", "user:x"], since=5.0) == {"pair:alice|1": 2, "addr:1": 1}
    assert one.login_failures(["pair:alice|1"], since=15.0) == {"pair:alice|1": 1}
    two.login_succeeded(["pair:alice|1"], forget_before=0.0)
    assert one.login_failures(["pair:alice|1", "addr:1"], since=0.0) == {"addr:1": 1}
