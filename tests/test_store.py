"""The SQLite store: schema migrations, the queue and audit filters, and the dashboard's figures."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from gateway.model.records import Step
from gateway.store.base import AuditQuery, DecisionRecord, Envelope, MessageQuery
from gateway.store.sqlite import _V1, SCHEMA_VERSION, SQLiteStore, StoreError


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
    store: SQLiteStore,
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


def test_queue_filters(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
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


def test_audit_search_chain_and_actions(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
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


def test_dashboard_figures(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
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
