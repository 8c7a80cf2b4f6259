from __future__ import annotations

import pytest

from gateway.model.rewrite import REDACTION_MARKER, Edit, apply_edits, indefinite_article, with_article


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
