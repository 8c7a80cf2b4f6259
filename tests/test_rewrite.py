from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.model.rewrite import (
    REDACTION_MARKER,
    Edit,
    TextEdit,
    apply_edits,
    apply_text_edits,
    compose,
    indefinite_article,
    with_article,
)


@pytest.mark.parametrize(
    ("phrase", "article"),
    [("infection", "an"), ("HIV test", "an"), ("virus", "a"), ("university", "a"), ("hour", "an"),
     ("FBI agent", "an"), ("CDC report", "a"), ("euro", "a"), ("one-off", "a"), ("umbrella", "an")],
)  # fmt: skip
def test_indefinite_article(phrase: str, article: str) -> None:
    assert indefinite_article(phrase) == article


def test_article_before_the_term_is_fixed() -> None:
    text = "She took an HIV test."
    start = text.index("HIV")
    edit = with_article(text, start, start + 3, "virus")
    assert apply_edits(text, [edit]).text == "She took a virus test."
    text = "He had a flu shot."
    start = text.index("flu")
    edit = with_article(text, start, start + 3, "infection")
    assert apply_edits(text, [edit]).text == "He had an infection shot."


def test_redaction_marker_never_keeps_an() -> None:
    text = "An HIV test was done."
    edit = with_article(text, 3, 6, REDACTION_MARKER)
    assert apply_edits(text, [edit]).text == f"A {REDACTION_MARKER} test was done."


def test_spans_map_back_to_the_original() -> None:
    text = "alpha beta gamma delta"
    rw = apply_edits(text, [Edit(6, 10, "BBBBBBBB", 6), Edit(17, 22, "D", 17)])
    assert rw.text == "alpha BBBBBBBB gamma D"
    g = rw.text.index("gamma")
    assert rw.to_original(g, g + 5) == (11, 16)
    assert rw.to_original(7, 9) == (6, 10)  # inside a replacement: the whole replaced span
    assert rw.to_original(0, 5) == (0, 5)


@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(1, 5), st.text("xyz", max_size=7)), max_size=8),
    st.integers(0, 60),
    st.integers(1, 6),
)
def test_untouched_spans_map_back_to_themselves(raw: list[tuple[int, int, str]], start: int, length: int) -> None:
    text = "abcdefghij" * 7
    edits, last = [], -1
    for s, n, rep in sorted(raw):
        if s > last and s + n <= len(text):
            edits.append(Edit(s, s + n, rep, s))
            last = s + n
    rw = apply_edits(text, edits)
    end = min(start + length, len(text))
    if any(e.start < end and start < e.end for e in edits) or start >= end:
        return
    shift = sum(len(e.text) - (e.end - e.start) for e in edits if e.end <= start)
    new = (start + shift, end + shift)
    assert rw.text[new[0] : new[1]] == text[start:end]
    assert rw.to_original(*new) == (start, end)
    for e, ns, ne in zip(rw.edits, rw.new_starts, rw.new_ends, strict=True):
        if ne > ns:
            assert rw.to_original(ns, ne) == (e.start, e.end)


def _edits_strategy(n: int) -> st.SearchStrategy[list[tuple[int, int, str]]]:
    return st.lists(
        st.tuples(st.integers(0, n), st.integers(1, 4), st.text("XYZ ", min_size=1, max_size=6)), max_size=6
    )


def _non_overlapping(raw: list[tuple[int, int, str]], size: int) -> list[Edit]:
    out, last = [], -1
    for s, n, rep in sorted(raw):
        if s >= last and s + n <= size:
            out.append(Edit(s, s + n, rep, s))
            last = s + n
    return out


@given(_edits_strategy(40), _edits_strategy(60), _edits_strategy(80))
def test_composed_edits_equal_applying_rounds_in_turn(
    r1: list[tuple[int, int, str]], r2: list[tuple[int, int, str]], r3: list[tuple[int, int, str]]
) -> None:
    original = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    composed: list[TextEdit] = []
    current = original
    for raw in (r1, r2, r3):
        edits = _non_overlapping(raw, len(current))
        composed = compose(composed, current, edits)
        current = apply_edits(current, edits).text
        assert apply_text_edits(original, composed) == current
        ends = [(e.start, e.end) for e in composed]
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(ends))


def test_markers_in_a_run_or_inside_a_word_read_as_one_gap() -> None:
    from gateway.model.rewrite import REDACTION_MARKER as M
    from gateway.model.rewrite import apply_edits, tidy_markers

    text = f"a {M} {M} {M} b; {M}-{M} c; x{M}y and \u0627\u0644{M}\u064e\u0628 d. {M}\n\n{M} e"
    out = apply_edits(text, tidy_markers(text)).text
    assert out == f"a {M} b; {M} c; {M} and {M} d. {M}\n\n{M} e"
    assert tidy_markers(out) == []


def test_replacements_keep_english_number() -> None:
    from gateway.model.rewrite import surface_replacement
    from gateway.model.terms import tokenize

    def lemma(w: str) -> str:
        return {"states": "state", "infections": "infection"}.get(w, w)

    def plural(w: str) -> str:
        return w + "es" if w.endswith("s") else w + "s"

    toks = tokenize("infections", lemma)
    kw = {"original": "infections", "tokens": toks, "plural": plural, "sentence_initial": False, "shouting": False}
    assert surface_replacement("ill health", lemmatize=lemma, **kw) == "ill health"  # type: ignore[arg-type]
    assert surface_replacement("states", lemmatize=lemma, **kw) == "states"  # type: ignore[arg-type]
    assert surface_replacement("virus", lemmatize=lemma, **kw) == "viruses"  # type: ignore[arg-type]


def test_no_article_inside_a_longer_name_or_after_a_determiner_further_back() -> None:
    from gateway.model.rewrite import determiner_before, sentence_initial

    t = "It is the much larger Atlanta area. The Western and Atlantic Railroad. In Atlanta, [REDACTED] Airport."
    assert determiner_before(t, t.index("Atlanta area"))
    assert determiner_before(t, t.index("Railroad"))
    assert determiner_before(t, t.index("Airport"))
    assert not determiner_before(t, t.index("Atlanta,"))  # "In" opens the sentence: not part of a name
    text = "sea level.[14]\nAtlanta was founded. The patient was treated for weeks in the city of\nAtlanta."
    assert sentence_initial(text, text.index("Atlanta"), [0])
    assert not sentence_initial(text, text.rindex("Atlanta"), [0])  # a wrapped line goes on


def test_verbs_take_the_tense_and_adjectives_neither_number_nor_article() -> None:
    from gateway.model.rewrite import surface_replacement
    from gateway.model.terms import tokenize
    from gateway.taxonomy.inflection import conjugate

    def same(w: str) -> str:
        return w

    def kw(original: str, *, initial: bool = False) -> dict[str, object]:
        return {"original": original, "tokens": tokenize(original, same), "plural": lambda w: w + "s",
                "sentence_initial": initial, "shouting": False, "conjugate": conjugate, "lemmatize": same}  # fmt: skip

    assert surface_replacement("grip", pos="v", **kw("bitten")) == "gripped"  # type: ignore[arg-type]
    assert surface_replacement("make", pos="v", **kw("causes")) == "makes"  # not the plural "makess"
    assert surface_replacement("pass on", pos="v", **kw("Transmitting", initial=True)) == "Passing on"  # type: ignore[arg-type]
    # "Methodists" is a plural noun, "Methodist" before a noun an adjective: no plural, no article.
    assert surface_replacement("denominational", pos="a", **kw("Methodist")) == "denominational"  # type: ignore[arg-type]
    # A name becomes a common noun with its article; a head in capitals is a name ("a" would not fit).
    name = kw("Colorado")
    assert surface_replacement("American state", name=True, **name) == "an American state"  # type: ignore[arg-type]
    assert surface_replacement("Atlanta", name=True, **name) == "Atlanta"  # type: ignore[arg-type]


def test_articles_agree_with_the_word_two_edits_of_a_round_left_after_them() -> None:
    from gateway.model.rewrite import Edit, agree_articles, apply_edits

    text = "It was bitten by an infected mosquito. An old ape and a elk."
    an = text.index("an infected")
    mosquito = text.index("mosquito")
    # The omission wrote "a " for "mosquito"; the same round replaced "mosquito" by "animal".
    round_edits = [Edit(an, mosquito, "a ", an + 3), Edit(mosquito, mosquito + 8, "animal", mosquito)]
    rewritten = apply_edits(text, round_edits)
    assert "by a animal" in rewritten.text
    fixed = apply_edits(rewritten.text, agree_articles(rewritten)).text
    assert fixed == "It was bitten by an animal. An old ape and a elk."  # what no edit touched stays as written
    capital = apply_edits("A infected bat.", [Edit(0, 11, "An ", 2), Edit(11, 14, "creature", 11)])
    assert apply_edits(capital.text, agree_articles(capital)).text == "A creature."


def test_a_unit_written_onto_a_number_takes_no_article() -> None:
    from gateway.model.rewrite import surface_replacement
    from gateway.model.terms import tokenize

    toks = tokenize("GHz", str.lower)
    kw = {"original": "GHz", "tokens": toks, "plural": lambda w: w + "s", "sentence_initial": False, "shouting": False}
    assert surface_replacement("rate", **kw) == "a rate"  # type: ignore[arg-type]  # a name: "in Atlanta" -> "in a city"
    assert surface_replacement("rate", attached=True, **kw) == "rate"  # type: ignore[arg-type]  # "3.6GHz"


def test_people_of_a_kind_stay_plural_and_take_no_article() -> None:
    from gateway.model.rewrite import determiner_before, surface_replacement
    from gateway.model.terms import tokenize

    def lemma(w: str) -> str:
        return {"texans": "texan", "catholics": "catholic"}.get(w, w)

    def plural(w: str) -> str:
        return w + "s"

    for word, replacement in (("Texans", "American"), ("Catholics", "person")):
        toks = tokenize(word, lemma)
        kw = {"original": word, "tokens": toks, "plural": plural, "sentence_initial": False, "shouting": False}
        assert surface_replacement(replacement, lemmatize=lemma, name=True, **kw) == replacement + "s"  # type: ignore[arg-type]
    wales = tokenize("Wales", lemma)  # a name that is its own lemma stays a name: "in Wales" -> "in a country"
    kw = {"original": "Wales", "tokens": wales, "plural": plural, "sentence_initial": False, "shouting": False}
    assert surface_replacement("country", lemmatize=lemma, name=True, **kw) == "a country"  # type: ignore[arg-type]
    text = "Most Methodists sing. Two Texans came. He met Texans."
    assert determiner_before(text, text.index("Methodists"))
    assert determiner_before(text, text.index("Texans came"))
    assert not determiner_before(text, text.rindex("Texans"))
