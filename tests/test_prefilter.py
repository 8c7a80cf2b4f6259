"""The fast path for clean text must never let through what the full engine would change."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from archive import ARCHIVE, archive_texts
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gateway.model.engine import Engine
from gateway.model.records import SanitizePolicy

POLICIES = [
    SanitizePolicy(entities=("HIV", "sexually transmitted disease", "substance abuse"), alpha=1.5),
    SanitizePolicy(entities=("HIV", "Los Angeles", "Catholicism"), alpha=2.0, unknown="redact"),
    SanitizePolicy(entities=("HIV",), alpha=1.2, max_group=1, deny=frozenset({"firmware"})),
    SanitizePolicy(entities=("Catholicism",), alpha=3.0, group_floor=0.2, allow=frozenset({"church"})),
    # Terms judged one by one, so that what the fast path must see is the paragraph's summed evidence.
    SanitizePolicy(
        entities=("HIV", "substance abuse"),
        alpha=1.5,
        max_group=1,
        evidence_budget=0.6,
        evidence_floor=0.1,
        stream_evidence=True,
    ),
]

# Words around the line for these entities, and ordinary ones: a mix makes texts on both sides.
NEAR = ("antiretroviral viral load therapy condom clinic virus heroin methadone rehab infection "
        "blood test positive diagnosis Beverly Hills church pope bishop parish mass Hollywood "
        "HIV-positive AIDS-like HIVpositive HIV1 hiv2 HIVs STDs CCR5 CD4 cocaine-induced chlamydial alcoholics "
        "non-alcoholic").split()  # fmt: skip
PLAIN = ("the radio board firmware driver sample rate antenna frequency we tried again yesterday "
         "and it works with a new cable thanks for the help in the lab today").split()  # fmt: skip


def _full(engine: Engine, text: str, p: SanitizePolicy, disclosed: tuple[str, ...] = ()) -> tuple[str, int]:
    clean, engine._clean = engine._clean, None
    try:
        r = engine.sanitize(text, p, disclosed=disclosed)
    finally:
        engine._clean = clean
    return r.text, len(r.decisions)


def _fast_says_clean(engine: Engine, text: str, p: SanitizePolicy, disclosed: tuple[str, ...] = ()) -> bool:
    return engine._if_clean(text, p, engine.entities_of(p), (), disclosed) is not None


def _archive_texts(n: int) -> list[str]:
    return archive_texts(n, chars=6000)


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_clean_archive_mail_is_left_alone_exactly_as_the_full_engine_would(engine: Engine) -> None:
    texts = _archive_texts(120)
    fired = 0
    for text in texts:
        for n, p in enumerate(POLICIES[:2]):
            if _fast_says_clean(engine, text, p):
                fired += n == 0
                assert _full(engine, text, p) == (text, 0)
            assert engine.sanitize(text, p).text == _full(engine, text, p)[0]
    # Most real mail is nowhere near the line: the fast path must actually be taken (not under
    # unknown = "redact", where nearly every message has a word K does not know).
    assert fired > 0.6 * len(texts)


def test_a_text_the_engine_changes_is_never_called_clean(engine: Engine) -> None:
    text = "Her HIV test came back positive; she started antiretroviral therapy at the clinic in Beverly Hills."
    for p in POLICIES:
        full_text, n = _full(engine, text, p)
        if n:
            assert not _fast_says_clean(engine, text, p)
            assert engine.sanitize(text, p).text == full_text


@given(
    words=st.lists(st.sampled_from(NEAR + PLAIN), min_size=3, max_size=40),
    stops=st.lists(st.integers(min_value=0, max_value=39), max_size=4),
    which=st.integers(min_value=0, max_value=len(POLICIES) - 1),
    alpha=st.sampled_from([1.0, 1.5, 2.0, 4.0]),
    lines=st.lists(st.integers(min_value=0, max_value=39), max_size=3),
    disclosed=st.lists(st.sampled_from(NEAR), max_size=4),
)
# Found by this test: a remembered compound's clue is its strongest part's ("aids-like": "aids"), which the fast
# path's budget did not count, so it passed a text whose evidence the engine found over the budget.
@example(words=["load", "rehab", "rehab"], stops=[], which=4, alpha=1.0, lines=[], disclosed=["AIDS-like"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_whatever_the_fast_path_passes_the_full_engine_leaves_unchanged(
    engine: Engine, words: list[str], stops: list[int], which: int, alpha: float, lines: list[int],
    disclosed: list[str],
) -> None:  # fmt: skip
    for i in sorted(set(stops), reverse=True):
        if i < len(words):
            words.insert(i, ".")
    for i in sorted(set(lines), reverse=True):  # paragraphs: the evidence is summed per line
        if i < len(words):
            words.insert(i, "\n")
    text = " ".join(words).replace(" .", ".").strip() or "the"
    p = replace(POLICIES[which], alpha=alpha)
    # A stream's memory (the engine's keys of what earlier messages let through) joins groups and evidence.
    memory = tuple(dict.fromkeys(engine.key(w) for w in disclosed))
    if _fast_says_clean(engine, text, p, memory):
        assert _full(engine, text, p, memory) == (text, 0)
    assert engine.sanitize(text, p, disclosed=memory).text == _full(engine, text, p, memory)[0]


def test_the_fast_path_result_is_the_full_engines(engine: Engine) -> None:
    text = "We tried the new firmware on the radio board yesterday and it works with the antenna."
    p = POLICIES[0]
    assert _fast_says_clean(engine, text, p)
    fast = engine.sanitize(text, p)
    clean, engine._clean = engine._clean, None
    try:
        full = engine.sanitize(text, p)
    finally:
        engine._clean = clean
    assert (fast.text, fast.decisions, fast.rounds, fast.edits) == (full.text, full.decisions, full.rounds, full.edits)
    assert fast.utility == full.utility
    # The deny list is never passed by the fast path.
    assert not _fast_says_clean(engine, text, POLICIES[2])


def test_a_numbered_name_is_not_clean(engine: Engine) -> None:
    # "HIV1" is one token K barely knows: the fast path asks the engine's rule for numbered names.
    for text in ("The HIV1 strain was found.", "the hiv2 strain was found"):
        assert not _fast_says_clean(engine, text, POLICIES[0])
        assert "hiv" not in engine.sanitize(text, POLICIES[0]).text.lower()


def test_ratio_table_matches_the_engines_verdicts(engine: Engine) -> None:
    assert engine._clean is not None
    p = POLICIES[0]
    entities = engine.entities_of(p)
    table = engine._clean.table(entities, p.alpha)
    rng = random.Random(4)
    keys = ["antiretroviral", "clinic", "virus", "condom", "heroin", "football", "los angeles", "board"]
    keys += [engine.knowledge.phrases().__iter__().__next__()]  # type: ignore[attr-defined]
    for key in keys + [k for k in rng.sample(NEAR + PLAIN, 10) if k.islower()]:
        i = engine.knowledge.term_id(key)  # type: ignore[attr-defined]
        v = engine.verdict((frozenset({key}),), entities, p.alpha)
        if i < 0 or v.n < engine.estimator.min_support:
            continue
        assert table[i] == pytest.approx(v.ratio, rel=1e-12, abs=1e-12)


def test_the_group_bound_never_clears_a_risky_group(engine: Engine) -> None:
    """``may_be_risky`` lets the engine skip a group's entity counts: it must hold for every risky group."""
    assert engine._clean is not None
    rng = random.Random(7)
    near = [w.lower() for w in NEAR if w.isalpha()] + ["aids", "drug", "sex", "gay", "needle", "patient", "immune"]
    risky = cleared = 0
    for p in [*POLICIES[:2], SanitizePolicy(entities=("HIV",), alpha=1.0)]:
        entities = engine.entities_of(p)
        for i in range(300):
            words = near if i % 2 else near + PLAIN
            size = rng.choice((2, 3))
            conj = tuple(frozenset(rng.sample(words, rng.choice((1, 1, 2)))) for _ in range(size))
            n = engine.count(conj)
            v = engine.verdict(conj, entities, p.alpha)
            may = engine._clean.may_be_risky(conj, n, entities, p.alpha)
            if v.risky:
                risky += 1
                assert may, (conj, v)
            cleared += not may
            judged = n >= engine.estimator.group_min_support and v.risky
            assert (engine.measure.risky_group(conj, entities, p.alpha) is not None) == judged
    assert risky and cleared  # both sides of the bound were tried


def test_a_paragraph_whose_clues_add_up_is_not_clean(engine: Engine) -> None:
    # No term is risky and no group is judged (max_group = 1): only the summed evidence changes the text.
    p = replace(POLICIES[4], evidence_budget=1.0, evidence_floor=0.2)
    text = "The virus test came back positive last week."
    assert _full(engine, text, replace(p, evidence_budget=0)) == (text, 0)
    assert _full(engine, text, p)[1] > 0
    assert not _fast_says_clean(engine, text, p)
    # The same words over two paragraphs are two smaller sums: clean, and the engine agrees.
    split = "The virus came back.\nThe test was positive last week."
    if _fast_says_clean(engine, split, p):
        assert _full(engine, split, p) == (split, 0)
    # What a stream disclosed counts towards every paragraph: a clean text may not be clean after it.
    calm = "Her test came back positive last week."
    memory = ("virus", "immune", "transmission")
    if _full(engine, calm, p, memory)[1]:
        assert not _fast_says_clean(engine, calm, p, memory)
    assert _fast_says_clean(engine, calm, replace(p, evidence_budget=0), memory)


def test_a_text_clean_alone_is_judged_with_the_memorys_groups_as_the_engine_judges_them(engine: Engine) -> None:
    # "transmit" beside a remembered "clinic" or "blood": the bound on a pair with a remembered term (the fewer
    # of their documents with c) cannot clear either pair, so the memory's groups are counted as the engine's
    # round with the memory counts them: the pair with "clinic" is safe and the text passes as it is, the pair
    # with "blood" is risky and the text goes to the algorithm.
    assert engine._clean is not None
    p = POLICIES[0]
    entities = engine.entities_of(p)
    text = "The transmit was fine yesterday."
    _tokens, occs = engine.terms_of(text, entities, p)
    units = [(o.key, o.sentence) for o in occs]
    for word, changed in (("clinic", False), ("blood", True)):
        memory = (engine.key(word),)
        assert not engine._clean.is_clean(units, p, entities, allow=(), deny=(), joined=memory)
        assert engine._clean.is_clean(units, p, entities, allow=(), deny=())
        full_text, n = _full(engine, text, p, memory)
        assert (n > 0) == changed
        assert _fast_says_clean(engine, text, p, memory) == (not changed)
        fast = engine.sanitize(text, p, disclosed=memory)
        assert (fast.text, len(fast.decisions)) == (full_text, n)
        if not changed:
            assert fast.utility == engine._utility([o.key for o in occs], ())


def test_a_text_whose_own_pairs_the_bound_cannot_clear_is_judged_by_its_groups_as_the_engine_judges_them(
    engine: Engine,
) -> None:
    # No term of these is risky alone, and the bound clears neither pair; the engine's groups find the pair of
    # "transmit" and "clinic" safe and the one with "blood" risky: only the first is passed as it is.
    assert engine._clean is not None
    p = POLICIES[0]
    entities = engine.entities_of(p)
    for word, changed in (("clinic", False), ("blood", True)):
        text = f"The transmit and the {word} were fine yesterday."
        _tokens, occs = engine.terms_of(text, entities, p)
        assert not engine._clean.is_clean([(o.key, o.sentence) for o in occs], p, entities, allow=(), deny=())
        full_text, n = _full(engine, text, p)
        assert (n > 0) == changed
        assert _fast_says_clean(engine, text, p) == (not changed)
        fast = engine.sanitize(text, p)
        assert (fast.text, len(fast.decisions)) == (full_text, n)
        if not changed:
            assert (fast.rounds, fast.utility) == (1, engine._utility([o.key for o in occs], ()))


def test_the_ratio_table_is_a_file_every_worker_maps(engine: Engine) -> None:
    # A worker's own copy was 3 MB of its heap (and K's document frequencies 1.6 MB more); mapped from a file
    # beside K, its pages are shared as K's are. The table is what the computation gives in memory.
    import numpy as np

    from gateway.model.prefilter import CleanTextFilter

    assert engine._clean is not None
    k = engine._clean._k
    for p in POLICIES[:2]:
        entities = engine.entities_of(p)
        fresh = CleanTextFilter(k, engine.estimator)  # as a new worker: the table is read from the file
        mapped = fresh.table(entities, p.alpha)
        assert isinstance(mapped.base, np.memmap) and not mapped.flags.writeable  # the file's pages
        t = fresh._table(entities, p.alpha)
        computed = fresh._ratios(t.cooccurrences, t.p_c, t.thresholds)
        assert computed.base is None
        assert np.array_equal(mapped, computed)
        assert isinstance(fresh._frequencies().base, np.memmap)
    # Another alpha is another table, under another name.
    other = CleanTextFilter(k, engine.estimator).table(engine.entities_of(POLICIES[0]), 1.7)
    assert not np.array_equal(other, CleanTextFilter(k, engine.estimator).table(engine.entities_of(POLICIES[0]), 1.5))
