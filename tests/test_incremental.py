"""Incremental rounds (gateway/model/incremental.py) must give exactly what re-judging the whole text gives."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from archive import ARCHIVE, archive_texts

from gateway.evaluation.datasets import read_topics, topic_documents
from gateway.model.detection import RoundState
from gateway.model.engine import Engine
from gateway.model.incremental import LineTerms, TextMemo
from gateway.model.records import SanitizePolicy, SanitizeResult
from gateway.model.terms import TermOccurrence, Token, extract_terms

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpora/wikipedia-20k.jsonl.xz"
TAB = SHARED / "eval-dev/tab/tab-dev.jsonl"


def _archive_texts(n: int) -> list[str]:
    return archive_texts(n, chars=5000)


@pytest.fixture(scope="module")
def topic_articles() -> list[tuple[str, str]]:
    """The dev topic articles (the paper's experiment), each cut after ~6,000 characters, with its entity."""
    if not CORPUS.exists():
        pytest.skip("the shared corpus is not here")
    docs = topic_documents(read_topics(ROOT / "config/eval/topics.toml"), CORPUS, max_chars=6000)
    return [(d.text, d.entity) for d in docs]


def _same(a: SanitizeResult, b: SanitizeResult) -> None:
    assert a.text == b.text
    assert [asdict(d) for d in a.decisions] == [asdict(d) for d in b.decisions]
    assert (a.rounds, a.utility, a.edits) == (b.rounds, b.utility, b.edits)


def _both(engine: Engine, text: str, p: SanitizePolicy, **kw: object) -> tuple[SanitizeResult, SanitizeResult]:
    fast = engine.sanitize(text, p, **kw)  # type: ignore[arg-type]
    engine.incremental = False
    try:
        full = engine.sanitize(text, p, **kw)  # type: ignore[arg-type]
    finally:
        engine.incremental = True
    return fast, full


def test_topic_articles_come_out_as_the_full_rejudge_gives_them(
    engine: Engine, topic_articles: list[tuple[str, str]]
) -> None:
    several_rounds = 0
    for i, (text, entity) in enumerate(topic_articles):
        policies = [SanitizePolicy(entities=(entity,), alpha=1.5)]
        if i % 3 == 0:
            policies.append(SanitizePolicy(entities=(entity, "HIV", "Catholicism"), alpha=1.0))
        if i % 3 == 1:
            policies.append(SanitizePolicy(entities=(entity,), alpha=3.0, mode="redact", max_rounds=1))
        for p in policies:
            fast, full = _both(engine, text, p)
            _same(fast, full)
            several_rounds += fast.rounds > 1 and bool(fast.decisions)
    assert several_rounds >= 10  # the later rounds were exercised, not only the first


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_archive_mail_comes_out_as_the_full_rejudge_gives_it(engine: Engine) -> None:
    policies = [
        SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"), alpha=1.5),
        SanitizePolicy(entities=("Los Angeles", "Catholicism"), alpha=2.0, unknown="redact"),
        SanitizePolicy(entities=("software", "radio"), alpha=1.2, group_floor=0.2),
    ]
    changed = 0
    for text in _archive_texts(40):
        for p in policies:
            fast, full = _both(engine, text, p)
            _same(fast, full)
            changed += bool(fast.decisions)
    assert changed >= 20


def test_a_streams_memory_and_earlier_policies_are_judged_as_in_a_full_rejudge(
    engine: Engine, topic_articles: list[tuple[str, str]]
) -> None:
    """The memory's keys join groups; a key the text loses to an edit joins them in the next round."""
    rng = random.Random(3)
    for text, entity in topic_articles[:8]:
        p = SanitizePolicy(entities=(entity,), alpha=2.0)
        keys = sorted({o.key for o in engine.terms_of(text, engine.entities_of(p), p)[1]})
        disclosed = set(rng.sample(keys, min(30, len(keys))))
        fast, full = _both(engine, text, p, disclosed=disclosed, avoid={rng.choice(keys)})
        _same(fast, full)


def test_units_below_their_budget_are_not_summed_again(engine: Engine, topic_articles: list[tuple[str, str]]) -> None:
    """A later round (and the memory's first, on the text the text's own rounds left) sums again only the units an
    edit touched: the others are the same sums below the same budget (evidence._Below). Same output as summing all."""
    rng = random.Random(5)
    summed = {True: 0, False: 0}
    several_rounds = 0
    for text, entity in topic_articles[:8]:
        p = SanitizePolicy(entities=(entity,), alpha=2.0)
        keys = sorted({o.key for o in engine.terms_of(text, engine.entities_of(p), p)[1]})
        disclosed = set(rng.sample(keys, min(10, len(keys))))
        for incremental in (True, False):
            engine.incremental = incremental
            try:
                before = engine.evidence.units_summed
                result = engine.sanitize(text, p, disclosed=disclosed)
                summed[incremental] += engine.evidence.units_summed - before
            finally:
                engine.incremental = True
            if incremental:
                fast = result
            else:
                _same(fast, result)
        several_rounds += fast.rounds > 2
    assert several_rounds >= 4
    assert 0 < summed[True] < 0.75 * summed[False]  # 701 of 1,414 when written


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_memorys_first_round_reuses_the_reading_of_the_text_its_own_rounds_left(engine: Engine) -> None:
    """The text's own last round found nothing in the text the memory's first round then reads: that round groups
    no term by key again, nor builds its units and context (incremental.Reading). Same output as re-reading it."""
    rng = random.Random(8)
    p = SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"), alpha=1.5)
    reused = 0
    texts = _archive_texts(150)
    # What earlier messages of a stream let through: words of other messages.
    pool = sorted({o.key for t in texts[::10] for o in engine.terms_of(t, engine.entities_of(p), p)[1]})
    for text in texts:
        disclosed = set(rng.sample(pool, min(30, len(pool))))
        read: dict[bool, int] = {}
        out: dict[bool, SanitizeResult] = {}
        for incremental in (True, False):
            engine.incremental = incremental
            try:
                before = engine.readings
                out[incremental] = engine.sanitize(text, p, disclosed=disclosed)
                read[incremental] = engine.readings - before
            finally:
                engine.incremental = True
        _same(out[True], out[False])
        # One reading less: the memory's first round (none when the text's own rounds stopped at their cap, on a
        # text they had just changed, or the fast path passed the text whole).
        assert read[False] - read[True] in (0, 1)
        reused += read[False] - read[True]
    assert reused >= 4  # 6 when written


def _round_state(
    engine: Engine,
    text: str,
    by_key: dict[str, list[TermOccurrence]],
    tokens: list[Token],
    p: SanitizePolicy,
    memo: TextMemo,
    remembered: dict[str, tuple[frozenset[str], float]],
) -> RoundState:
    """What a round hands ``Detector.groups``: the text's terms as ``classify`` finds them, with ``remembered``."""
    entities = engine.entities_of(p)
    risky, safe = engine.detector.classify(by_key, tokens, entities, p, ())
    return RoundState(text, by_key, risky, safe, tokens, {}, entities, p, set(risky), remembered=remembered,
                      memo=memo.groups)  # fmt: skip


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_memorys_round_does_not_judge_the_texts_own_groups_again(engine: Engine) -> None:
    """A unit whose own members formed no risky group in the text's own rounds forms none in the memory's: only
    its groups with the remembered members are judged (GroupMemo.own)."""
    p = SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"), alpha=1.5)
    entities = engine.entities_of(p)
    checked = 0
    for text in _archive_texts(40):
        memo = engine.reader.text_memo(p, entities)
        tokens, occs = engine.terms_of(text, entities, p, memo=memo)
        by_key: dict[str, list[TermOccurrence]] = {}
        for o in occs:
            by_key.setdefault(o.key, []).append(o)
        first = _round_state(engine, text, by_key, tokens, p, memo, {})
        before = set(first.risky)
        engine.detector.groups(first)
        if set(first.risky) != before or not memo.groups.own:
            continue  # a risky group changed the members: the memory's round judges those units anew
        # Forget which groups were judged, for the text and the worker: a group judged again would be noted again.
        memo.groups.judged.clear()
        engine.detector._safe_groups.of(entities, p.alpha).clear()
        # A remembered term too rare to form a group with anything: the groups holding it are all scarce.
        engine.detector.groups(
            _round_state(engine, text, by_key, tokens, p, memo, {"zorblaxian": (frozenset({"zorblaxian"}), 1.0)})
        )
        assert not [g for g in memo.groups.judged if frozenset({"zorblaxian"}) not in g]
        checked += 1
    assert checked >= 10  # 29 of 40 when written


def _edited(text: str, rng: random.Random) -> str:
    """A few edits of the kinds a round makes: a word replaced by a phrase or the marker, a line joined or split."""
    words = list(re.finditer(r"\w+", text))
    for m in sorted(rng.sample(words, min(6, len(words))), key=lambda m: -m.start()):
        new = rng.choice(["[REDACTED]", "infectious disease", "a city", "U.S. Army", "std::cout", "x", ""])
        text = text[: m.start()] + new + text[m.end() :]
    if "\n" in text and rng.random() < 0.5:
        i = rng.choice([m.start() for m in re.finditer("\n", text)])
        text = text[:i] + rng.choice([" ", ". ", "\n\n", ""]) + text[i + 1 :]
    return text


def test_lines_read_again_only_where_changed_give_the_whole_texts_terms(
    engine: Engine, topic_articles: list[tuple[str, str]]
) -> None:
    rng = random.Random(11)
    texts = [t for t, _ in topic_articles[:10]]
    if ARCHIVE.exists():
        texts += _archive_texts(30)
    texts.append("The U.S.\nArmy base. U.S. Army\n\nH.I.V. in 2005. Next\r\nstd::cout << hiv;\n[REDACTED] clinic")

    def extract(t: str) -> tuple[list[object], list[object]]:
        return extract_terms(t, engine.language.lemmatize, engine.phrase_set)  # type: ignore[return-value]

    reread = 0
    for text in texts:
        lines = LineTerms(extract)  # type: ignore[arg-type]
        assert lines.terms(text) == extract(text)
        for _ in range(3):
            text = _edited(text, rng)
            before = lines.lines_extracted
            assert lines.terms(text) == extract(text)
            reread += lines.lines_extracted - before
    assert reread > 0


def test_a_text_read_again_with_a_line_changed_tokenizes_that_line_only(
    engine: Engine, topic_articles: list[tuple[str, str]]
) -> None:
    """The pipeline's check reads the rebuilt content, which differs from the engine's output in a few lines (a header
    folded anew): the reader starts from its last reading under the same phrases (Reader.terms_of)."""
    p = SanitizePolicy(entities=("HIV", "sexually transmitted disease"), alpha=1.5)
    entities = engine.entities_of(p)
    rng = random.Random(4)
    for text, _entity in topic_articles[:6]:
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        lines[i] = "HIV and an STD: the Hiv clinic. " + lines[i]  # the acronyms are read again too
        again = "\n".join(lines)
        engine.forget_texts()
        engine.terms_of(text, entities)
        before = engine.reader.lines_read_again
        read = engine.terms_of(again, entities)
        assert engine.reader.lines_read_again - before == 1
        engine.forget_texts()
        assert read == engine.terms_of(again, entities)  # as a whole reading gives it
        assert engine.reader.lines_read_again - before == 1


def test_the_output_does_not_depend_on_the_hash_seed(topic_articles: list[tuple[str, str]]) -> None:
    """WordNet's pointers and a generalization's words are read in a fixed order, not a set's."""
    code = (
        "import json, sys\n"
        "from dataclasses import asdict\n"
        "from gateway.assemble import build_engine\n"
        "from gateway.model.records import SanitizePolicy\n"
        "texts = json.load(sys.stdin)\n"
        "e = build_engine()\n"
        "out = [e.sanitize(t, SanitizePolicy(entities=(c, 'HIV'), alpha=2.0)) for t, c in texts]\n"
        "print(json.dumps([[r.text, [asdict(d) for d in r.decisions]] for r in out]))\n"
    )
    payload = json.dumps([[t[:3000], c] for t, c in topic_articles[:6]])
    outs = [
        subprocess.run(
            [sys.executable, "-c", code],
            input=payload,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    ]
    assert outs[0] == outs[1]
    assert '"action": "generalize"' in outs[0]  # there were chains to follow
