"""K beyond the local file: PostgreSQL (shared by a fleet) and hit counts from a search API (the paper's K).

Both are checked against the local index built from the same small corpus:
the same question must get the same count from every backend.
"""

from __future__ import annotations

import itertools
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import TINY_CORPUS
from webapis import BING_KEY, FakeAPIs

from gateway.assemble import build_engine
from gateway.config import parse_config
from gateway.errors import KnowledgeUnavailableError
from gateway.knowledge.local import LocalIndex
from gateway.knowledge.web import WebCountConfig, WebCounts
from gateway.worker import sanitize_message

ROOT = Path(__file__).resolve().parents[1]


def _questions(local: LocalIndex) -> list[list[frozenset[str]]]:
    """Single terms, pairs, triples, and entity-like unions, over the tiny corpus's vocabulary."""
    keys = sorted(k for k, _ in local.items())
    singles = [[frozenset({k})] for k in keys]
    pairs = [[frozenset({a}), frozenset({b})] for a, b in itertools.combinations(keys[:25], 2)]
    triples = [[frozenset({a}), frozenset({b}), frozenset({c})] for a, b, c in itertools.combinations(keys[:12], 3)]
    unions = [[frozenset({"hiv", "antiretroviral"}), frozenset({k})] for k in keys[:20]]
    return [*singles, *pairs, *triples, *unions, [frozenset({"hiv"}), frozenset({"no-such-term"})]]


# -- PostgreSQL ---------------------------------------------------------------------------
def test_postgresql_k_gives_the_local_counts_and_shares_its_cache(postgres: Any, tiny_index: LocalIndex) -> None:
    from gateway.knowledge.postgres import PostgresIndex, load_index

    url = postgres.new()
    assert load_index(tiny_index, url) == len(tiny_index)
    k, a, b = PostgresIndex(url), PostgresIndex(url), PostgresIndex(url)  # instances of a fleet
    try:
        assert k.n_docs == tiny_index.n_docs == len(TINY_CORPUS)
        assert set(k.phrases()) == set(tiny_index.phrases()) and "los angeles" in k.phrases()
        for q in _questions(tiny_index):
            assert k.count(q) == tiny_index.count(q), q
        group = [frozenset({"clinic"}), frozenset({"patient"}), frozenset({"hiv"})]
        assert a.count(group) == tiny_index.count(group) == 1 and a.computed == 1  # fetched, counted, shared
        assert b.count(group) == 1 and b.computed == 0  # computed once, for the fleet
    finally:
        for x in (k, a, b):
            x.close()


def test_index_build_to_postgresql(postgres: Any, tmp_path: Path) -> None:
    from gateway.knowledge.postgres import PostgresIndex

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in TINY_CORPUS.items():
        (docs / f"{name}.txt").write_text(text, encoding="utf-8")
    url = postgres.new()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "gateway.cli",
            "index",
            "build",
            str(docs),
            "--to",
            url,
            "--min-df",
            "1",
            "--min-phrase-df",
            "1",
            "--workers",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "K loaded" in r.stdout and "sanigate-ci" not in r.stdout  # a password in the URL is not printed
    k = PostgresIndex(url)
    assert k.n_docs == len(TINY_CORPUS) and k.count([frozenset({"hiv"})]) == 3
    k.close()


def test_postgresql_k_that_cannot_be_reached_is_unavailable() -> None:
    from gateway.knowledge.postgres import PostgresIndex

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(KnowledgeUnavailableError, match="cannot connect"):
        PostgresIndex(f"postgresql://nobody:secret@127.0.0.1:{port}/k")


# -- hit counts from an API -----------------------------------------------------------------------
@pytest.fixture
def apis(tiny_index: LocalIndex) -> Iterator[FakeAPIs]:
    fake = FakeAPIs({k: set(bm) for k, bm in tiny_index.items()})
    yield fake
    fake.close()


def _readme_config(name: str, endpoint: str, tmp: Path) -> WebCountConfig:
    """One of the README's worked configurations, pointed at the local stand-in."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- web-k:{name} -->\s*```toml\n(.*?)```", readme, re.S)
    assert m, f"README has no worked configuration {name}"
    text = re.sub(r'endpoint = "[^"]*"', f'endpoint = "{endpoint}"', m.group(1))
    config = parse_config(text, source="README.md", base=tmp)
    assert config.engine.knowledge == "web" and config.engine.web is not None
    web = config.engine.web
    return WebCountConfig(
        **{
            **{f: getattr(web, f) for f in web.__dataclass_fields__},
            "total_docs": 8,
            "cache": tmp / f"{name}.db",
            "backoff": 0.01,
        }
    )


def test_elasticsearch_count_gives_the_local_counts_and_caches(
    apis: FakeAPIs, tiny_index: LocalIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ES_API_KEY", "abc")
    config = _readme_config("elasticsearch", f"{apis.base}/wikipedia/_count", tmp_path)
    k = WebCounts(config)
    questions = _questions(tiny_index)[:60]
    for q in questions:
        assert k.count(q) == tiny_index.count(q), q
    asked = apis.requests
    assert asked == k.calls > 0
    again = WebCounts(config)  # a restart: the persistent cache answers
    assert [again.count(q) for q in questions] == [tiny_index.count(q) for q in questions]
    assert again.calls == 0 and apis.requests == asked
    k.close()
    again.close()


def test_web_search_api_counts_zero_and_refuses_a_wrong_key(
    apis: FakeAPIs, tiny_index: LocalIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BING_SEARCH_KEY", BING_KEY)
    config = _readme_config("web-search", f"{apis.base}/v7.0/search", tmp_path)
    k = WebCounts(config)
    q = [frozenset({"los angeles"}), frozenset({"clinic"})]
    assert k.count(q) == tiny_index.count(q) == 1
    assert k.count([frozenset({"hiv"}), frozenset({"football"})]) == 0  # no webPages in the reply
    monkeypatch.setenv("BING_SEARCH_KEY", "wrong")
    wrong = WebCounts(_readme_config("web-search", f"{apis.base}/v7.0/search", tmp_path / "other"))
    with pytest.raises(KnowledgeUnavailableError, match="HTTP 401"):
        wrong.count([frozenset({"hiv"}), frozenset({"clinic"})])
    assert wrong.calls == 1  # a refusal is not retried
    k.close()
    wrong.close()


def test_transient_failures_are_retried_and_a_dead_api_fails_closed(
    apis: FakeAPIs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ES_API_KEY", "abc")
    config = _readme_config("elasticsearch", f"{apis.base}/wikipedia/_count", tmp_path)
    k = WebCounts(WebCountConfig(**{**{f: getattr(config, f) for f in config.__dataclass_fields__}, "cache": None}))
    apis.fail_next, apis.throttle_next = 2, 1
    assert k.count([frozenset({"hiv"}), frozenset({"clinic"})]) == 2
    assert k.calls == 4  # 500, 500, 429 (Retry-After), then the answer
    apis.delay = 1.0
    slow = WebCounts(
        WebCountConfig(
            **{
                **{f: getattr(config, f) for f in config.__dataclass_fields__},
                "cache": None,
                "timeout": 0.2,
                "retries": 1,
            }
        )
    )
    with pytest.raises(KnowledgeUnavailableError, match=r"2 attempts.*Timeout"):
        slow.count([frozenset({"hiv"}), frozenset({"patient"})])
    assert slow.calls == 2


def test_the_gateway_holds_a_message_when_k_does_not_answer(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    down = WebCounts(
        WebCountConfig(
            endpoint=f"http://127.0.0.1:{port}/k/_count",
            total_docs=1000,
            count_path="count",
            retries=1,
            backoff=0.01,
            timeout=0.5,
        )
    )
    engine = build_engine(knowledge=down)
    config = parse_config('[policies.p]\nentities = ["HIV"]\non_failure = "reject"\n', source="t", base=tmp_path)
    mail = b"From: a@example.org\r\nTo: b@example.org\r\nSubject: s\r\n\r\nThe HIV test was negative.\r\n"
    result = sanitize_message(mail, list(config.policies.values()), "m1", engine=engine)
    assert result.verdict == "hold" and result.reason == "knowledge-unavailable" and result.data is None


def test_calls_are_spaced_to_the_configured_rate(apis: FakeAPIs, monkeypatch: pytest.MonkeyPatch) -> None:
    import gateway.knowledge.web as web

    waits: list[float] = []
    monkeypatch.setattr(web.time, "sleep", waits.append)  # record the waits instead of waiting
    k = WebCounts(
        WebCountConfig(
            endpoint=f"{apis.base}/wikipedia/_count",
            total_docs=8,
            count_path="count",
            method="POST",
            body='{"query": {"query_string": {"query": {query}}}}',
            rate=10.0,
        )
    )
    for term in ("hiv", "clinic", "patient", "asthma", "influenza"):
        k.count([frozenset({term}), frozenset({"the"})])
    assert k.calls == 5 and len(waits) == 4  # the first call goes at once
    # Each call's slot is 1/rate after the previous one's: waits of 0.1, 0.2, 0.3, 0.4 s less the time spent.
    assert all(w > 0 for w in waits) and 0.7 < sum(waits) <= 1.0 + 1e-6
