"""The disclosure memory in the store, on both backends (SQLite, PostgreSQL): streams, threads, windows, sealing."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from test_store import MakeStore, make_store  # noqa: F401  (the per-backend fixture)

from gateway.store.base import Store, StreamQuery
from gateway.store.sqlite import SQLiteStore

if TYPE_CHECKING:
    from gateway.config import PolicyConfig
    from gateway.model.memory import Disclosure, Memory


def _query(**kw: object) -> StreamQuery:
    fields: dict[str, object] = dict(
        policies=("medical",), sender="doc@clinic.example", recipients=("ins@payer.example",)
    )
    fields.update(kw)
    return StreamQuery(**fields)  # type: ignore[arg-type]


def test_a_stream_recalls_its_own_disclosures_oldest_first(make_store: MakeStore) -> None:  # noqa: F811
    store = make_store()
    store.remember(message_id="m1", sender="Doc@Clinic.example", recipients=["Ins@Payer.example", "cc@payer.example"],
                   disclosed={"medical": ["therapy", "patient"], "places": []}, mail_id="<a@clinic>")  # fmt: skip
    store.remember(message_id="m2", sender="doc@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["viral load"]})  # fmt: skip
    store.remember(message_id="other-sender", sender="nurse@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["blood"]})  # fmt: skip
    store.remember(message_id="other-recipient", sender="doc@clinic.example", recipients=["x@else.example"],
                   disclosed={"medical": ["clinic"]})  # fmt: skip
    store.remember(message_id="other-policy", sender="doc@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"places": ["city"]})  # fmt: skip
    got = store.recall(_query())
    assert [(d.message_id, d.terms) for d in got] == [("m1", ("therapy", "patient")), ("m2", ("viral load",))]
    assert got[0].mail_id == "<a@clinic>" and got[0].recipient == "ins@payer.example"
    # Another handle on the same store (another process of the fleet) sees the same memory.
    assert [d.message_id for d in make_store().recall(_query(recipients=("CC@payer.example",)))] == ["m1"]
    assert [d.message_id for d in store.recall(_query(policies=("places",)))] == ["other-policy"]
    assert store.recall(_query(recipients=())) == []


def test_a_thread_joins_messages_of_other_senders(make_store: MakeStore) -> None:  # noqa: F811
    store = make_store()
    store.remember(message_id="t1", sender="nurse@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["therapy"]}, thread="<root@clinic>")  # fmt: skip
    store.remember(message_id="t2", sender="nurse@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["dose"]}, thread="<other@clinic>")  # fmt: skip
    assert store.recall(_query()) == []
    assert [d.message_id for d in store.recall(_query(thread="<root@clinic>"))] == ["t1"]


def test_the_window_expiry_and_purge(make_store: MakeStore) -> None:  # noqa: F811
    store = make_store()
    store.remember(message_id="old", sender="doc@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["therapy"], "places": ["city"]})  # fmt: skip
    time.sleep(0.05)
    cut = time.time()
    store.remember(message_id="new", sender="doc@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["dose"], "places": ["coast"]})  # fmt: skip
    assert [d.message_id for d in store.recall(_query(since=cut))] == ["new"]
    (summary,) = store.streams(since=0, sender="DOC@clinic.example")[:1]
    assert summary.messages == 2 and summary.sender == "doc@clinic.example"
    # medical keeps what is newer than cut; places is not configured any more: forgotten whole.
    assert store.expire_memory({"medical": cut}) == 3
    assert [d.message_id for d in store.recall(_query())] == ["new"]
    assert store.recall(_query(policies=("places",))) == []
    assert store.purge(older_than=time.time() + 1, actor="test") == 0  # no messages, but the memory goes too
    assert store.recall(_query()) == [] and store.streams(since=0) == []


def test_disclosed_terms_are_sealed_with_the_store_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cryptography.fernet import Fernet

    monkeypatch.setenv("SANIGATE_STORE_KEY", Fernet.generate_key().decode())
    store = SQLiteStore(tmp_path / "s.db")
    store.remember(message_id="m1", sender="doc@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["antiretroviral therapy"]})  # fmt: skip
    assert [d.terms for d in store.recall(_query())] == [("antiretroviral therapy",)]
    store.close()
    raw = sqlite3.connect(tmp_path / "s.db").execute("SELECT terms, encrypted FROM stream_memory").fetchone()
    assert raw[1] == 1 and b"antiretroviral" not in bytes(raw[0])
    monkeypatch.delenv("SANIGATE_STORE_KEY")
    keyless = SQLiteStore(tmp_path / "s.db")
    with pytest.raises(Exception, match="encrypted at rest"):
        keyless.recall(_query())
    keyless.close()


def test_recall_decodes_each_row_once_and_still_sees_every_change(make_store: MakeStore) -> None:  # noqa: F811
    """Rows are kept decoded between recalls; another handle's new rows, expiry and purge still show at once."""
    store, other = make_store(), make_store()  # two gateways of a fleet on one database
    opened: list[bytes] = []
    unseal = store._open

    def counting(data: bytes | None, encrypted: int) -> bytes | None:
        opened.append(bytes(data or b""))
        return unseal(data, encrypted)

    store._open = counting  # type: ignore[method-assign]
    for i in range(5):
        store.remember(message_id=f"m{i}", sender="doc@clinic.example", recipients=["ins@payer.example"],
                       disclosed={"medical": [f"term{i}", "patient"]})  # fmt: skip
    assert [d.message_id for d in store.recall(_query())] == [f"m{i}" for i in range(5)]
    assert len(opened) == 5
    assert [d.terms for d in store.recall(_query())][4] == ("term4", "patient") and len(opened) == 5
    other.remember(message_id="from-other", sender="doc@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["dose"]})  # fmt: skip
    got = store.recall(_query())
    assert [d.message_id for d in got][-1] == "from-other" and got[-1].terms == ("dose",) and len(opened) == 6
    # Another gateway expires and purges: this one's kept rows do not bring them back.
    assert other.expire_memory({"medical": got[3].at}) == 3
    assert [d.message_id for d in store.recall(_query())] == ["m3", "m4", "from-other"]
    other.purge(older_than=time.time() + 1, actor="test")
    assert store.recall(_query()) == []
    # An emptied SQLite table gives ids out again: a new row with an old id is read, not taken for the kept one.
    store.remember(message_id="after", sender="doc@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["clinic"]})  # fmt: skip
    assert [(d.message_id, d.terms) for d in store.recall(_query())] == [("after", ("clinic",))]
    other.close()


def test_the_kept_rows_are_bounded() -> None:
    from gateway.model.memory import Disclosure
    from gateway.store.disclosures import DisclosureCache

    cache = DisclosureCache(max_rows=3)

    def row(i: int) -> Disclosure:
        return Disclosure(message_id=f"m{i}", at=float(i), policy="p", sender="s", recipient="r", terms=("t",))

    for i in range(3):
        cache.add((i, float(i)), row(i))
    assert set(cache.known([(0, 0.0)])) == {(0, 0.0)}  # used: now the most recent
    cache.add((3, 3.0), row(3))
    assert len(cache) == 3 and set(cache.known([(i, float(i)) for i in range(4)])) == {(0, 0.0), (2, 2.0), (3, 3.0)}
    assert cache.known([(0, 9.0)]) == {}  # the same id at another time is another row


class _Folding:
    """The front's folded memories (streams.Folds) over one SQLite store, each ``Memory.of`` counted by its thread."""

    def __init__(self, store: SQLiteStore, policies: list[PolicyConfig]) -> None:
        from gateway import streams

        self.store, self.policies = store, policies
        self.folds = streams.Folds()
        self.folded: list[str] = []

    def recall(self, sender: str, recipient: str, root: str = "", now: float | None = None) -> Memory:
        """The kept memory, checked equal to a fold from the first row."""
        from gateway import streams

        kw: dict[str, object] = dict(sender=sender, recipients=[recipient], thread=streams.Thread(root, root), now=now)
        kept = streams.recall(self.store, self.policies, folds=self.folds, **kw)["medical"]  # type: ignore[arg-type]
        fresh = streams.recall(self.store, self.policies, **kw)["medical"]  # type: ignore[arg-type]
        assert list(kept.first.items()) == list(fresh.first.items())
        return kept


@pytest.fixture
def folding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Folding]:
    from gateway.config import parse_config
    from gateway.model.memory import Memory

    cfg = parse_config('[policies.medical]\nentities = ["HIV"]\nstream_memory_days = 1\n', source="t.toml",
                       base=Path())  # fmt: skip
    out = _Folding(SQLiteStore(tmp_path / "s.db"), list(cfg.policies.values()))
    fold = Memory.of

    def counting(rows: Iterable[Disclosure], *, thread: str = "") -> Memory:
        out.folded.append(thread)
        return fold(rows, thread=thread)

    monkeypatch.setattr(Memory, "of", counting)
    yield out
    out.store.close()


def test_folded_memories_are_extended_only_when_the_rows_only_grew(tmp_path: Path, folding: _Folding) -> None:
    """The front's memories (streams.Folds) equal a fold from the first row through every change of the rows."""
    store, folded = folding.store, folding.folded

    def both(now: float | None = None) -> Memory:
        return folding.recall("doc@clinic.example", "ins@payer.example", now=now)

    def remember(i: int, terms: list[str], at: float | None = None) -> None:
        store.remember(message_id=f"m{i}", sender="doc@clinic.example", recipients=["ins@payer.example"],
                       disclosed={"medical": terms})  # fmt: skip
        if at is not None:  # another gateway's row, written with an older time
            sqlite3.connect(tmp_path / "s.db").execute("UPDATE stream_memory SET at = ? WHERE message_id = ?",
                                                       (at, f"m{i}")).connection.commit()  # fmt: skip

    for i in range(4):
        remember(i, ["patient", f"t{i}"])
    first = both()
    assert first.sources(["patient"]) == ("m0",)
    n = len(folded)
    assert both() is first and len(folded) == n + 1  # unchanged rows: the same memory (only the fresh fold)
    remember(4, ["dose", "patient"])
    assert both().first["dose"] == "m4" and len(folded) == n + 2  # new rows: extended, not folded again
    remember(5, ["clinic"], at=time.time() - 3600)  # older than the newest: folded from the start
    assert both().first["clinic"] == "m5" and len(folded) == n + 4
    # The window moves past the first rows: folded from the start; "patient" now comes from m4.
    db = sqlite3.connect(tmp_path / "s.db")
    db.execute("UPDATE stream_memory SET at = at - 7200 WHERE message_id IN ('m0', 'm1', 'm2', 'm3')")
    db.commit()
    later = both(now=time.time() + 86400 - 5000)
    assert later.sources(["patient"]) == ("m4",) and "t0" not in later.first


def test_a_streams_version_moves_with_every_row_its_recall_would_read_and_only_then(
    make_store: MakeStore,  # noqa: F811
) -> None:
    store, other = make_store(), make_store()  # two gateways of a fleet on one database
    thread = _query(thread="<root@clinic>")
    seen = [store.stream_version(_query()), store.stream_version(thread)]
    assert store.stream_version(_query(recipients=())) == ()

    def remember(on: Store, message_id: str, sender: str = "doc@clinic.example", thread: str = "") -> None:
        on.remember(message_id=message_id, sender=sender, recipients=["ins@payer.example"],
                    disclosed={"medical": ["dose"]}, thread=thread)  # fmt: skip

    # Rows of other streams, policies or recipients move nothing.
    remember(store, "x1", sender="nurse@clinic.example")
    store.remember(message_id="x3", sender="doc@clinic.example", recipients=["else@payer.example"],
                   disclosed={"medical": ["dose"]})  # fmt: skip
    store.remember(message_id="x4", sender="doc@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"places": ["city"]})  # fmt: skip
    assert [store.stream_version(_query()), store.stream_version(thread)] == seen
    # A row of the stream, from this gateway or another, moves it; a row of the thread moves the thread's only.
    remember(other, "m1")
    assert store.stream_version(_query()) != seen[0]
    seen = [store.stream_version(_query()), store.stream_version(thread)]
    remember(store, "t1", sender="nurse@clinic.example", thread="<root@clinic>")
    assert store.stream_version(_query()) == seen[0] and store.stream_version(thread) != seen[1]
    # So do a row expired or purged, and a row given the id of one taken away.
    before = store.stream_version(_query())
    assert other.expire_memory({"medical": time.time() + 1}) >= 2
    emptied = store.stream_version(_query())
    assert emptied != before
    remember(store, "again")
    assert store.stream_version(_query()) not in (emptied, before)
    other.close()


def test_a_streams_version_can_leave_out_the_rows_a_gateway_wrote_itself(make_store: MakeStore) -> None:  # noqa: F811
    # The SMTP front judges a message against its sender's earlier messages before they are remembered; once they
    # are, the stream's version without their rows says whether anything else joined or left it meanwhile.
    store, other = make_store(), make_store()
    before = store.stream_version(_query())
    keys = store.remember(message_id="m1", sender="doc@clinic.example", recipients=["ins@payer.example", "b@x.example"],
                          disclosed={"medical": ["dose"], "places": ["city"]})  # fmt: skip
    assert len(keys) == 4 and len(set(keys)) == 4  # a row per policy and recipient
    listed = {(d.message_id, d.policy, d.recipient) for d in store.recall(_query(policies=("medical", "places")))}
    assert listed == {("m1", "medical", "ins@payer.example"), ("m1", "places", "ins@payer.example")}
    assert store.stream_version(_query()) != before
    assert store.stream_version(_query(), leaving_out=keys) == before
    assert store.stream_version(_query(), leaving_out=keys[:0]) != before
    # Another row of the stream (another gateway's) still counts, and so does one of the left-out rows' ids
    # given to a new row after an expiry (same id, another time).
    other.remember(message_id="m2", sender="doc@clinic.example", recipients=["ins@payer.example"],
                   disclosed={"medical": ["dose"]})  # fmt: skip
    assert store.stream_version(_query(), leaving_out=keys) != before
    assert other.expire_memory({"medical": time.time() + 1, "places": 0.0}) >= 3
    again = store.remember(message_id="m3", sender="doc@clinic.example", recipients=["ins@payer.example"],
                           disclosed={"medical": ["dose"]})  # fmt: skip
    assert store.stream_version(_query(), leaving_out=keys) == store.stream_version(_query()) != before
    assert [k for k in again if k in keys] == []  # known by id and time: never one of the rows left out
    other.close()


def test_a_new_threads_memory_extends_its_streams_fold(folding: _Folding) -> None:
    """A message of a thread no row belongs to has its stream's memory: extended from the last message's fold,
    whatever that message's thread, and equal to a fold from the first row; a row of its own thread counts as
    the thread's (its markers), folded on its own."""
    from gateway.model.memory import named_marker, thread_marker

    store, folded = folding.store, folding.folded

    def recall(root: str) -> Memory:
        return folding.recall("list@lists.example", "all@example.org", root)

    def remember(i: int, root: str, terms: list[str]) -> None:
        store.remember(message_id=f"m{i}", sender="list@lists.example", recipients=["all@example.org"],
                       disclosed={"medical": terms}, thread=root)  # fmt: skip

    for i in range(3):
        remember(i, f"<t{i}>", ["patient", f"w{i}", named_marker("HIV")])
    recall("<new1>")
    n = len(folded)
    remember(3, "<new1>", ["dose"])
    later = recall("<new2>")  # another new thread: the stream's fold, extended by m3's row
    assert len(folded) == n + 1 and folded[-1] == "<new2>"  # only the fresh fold
    assert later.first["dose"] == "m3" and named_marker("HIV") not in later.first
    own = recall("<t1>")  # a thread with a row of its own: its markers count
    assert own.first[named_marker("HIV")] == "m1" and own.first[thread_marker("w1")] == "m1"
    assert thread_marker("w0") not in own.first


def test_on_a_list_the_audit_names_the_reply_s_own_thread_for_a_word_another_thread_said_first(
    make_store: MakeStore,  # noqa: F811
) -> None:
    """One clinic writing to one insurer about two claims: both said "patient", claim a first. A reply on claim b is
    read in claim b's conversation, so a decision that relied on "patient" names claim b's message; a message of a
    third claim names the stream's first. The same through the front's folded memories (streams.Folds)."""
    from pathlib import Path as P

    from gateway import streams
    from gateway.config import parse_config

    cfg = parse_config('[policies.medical]\nentities = ["HIV"]\n', source="t.toml", base=P())
    policies = list(cfg.policies.values())
    store = make_store()
    for message_id, root, terms in (("a1", "<a@clinic>", ["patient", "dose"]), ("b1", "<b@clinic>", ["patient"])):
        streams.remember(store, message_id=message_id, sender="doc@clinic.example", recipients=["ins@payer.example"],
                         thread=streams.Thread(root, root), disclosed={"medical": terms})  # fmt: skip
    folds = streams.Folds()

    def memory(root: str, kept: streams.Folds | None) -> Memory:
        return streams.recall(store, policies, sender="doc@clinic.example", recipients=["ins@payer.example"],
                              thread=streams.Thread("<reply@clinic>", root), folds=kept)["medical"]  # fmt: skip

    for kept in (None, folds, folds):  # fresh, folded, and the fold kept from before
        assert memory("<b@clinic>", kept).sources(["patient"]) == ("b1",)
        assert memory("<b@clinic>", kept).sources(["patient", "dose"]) == ("a1", "b1")  # only claim a said "dose"
        assert memory("<c@clinic>", kept).sources(["patient"]) == ("a1",)
