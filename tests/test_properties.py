"""Properties of sanitize() on the shipped K, over generated texts."""

from __future__ import annotations

import itertools
import re
import unicodedata

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gateway.model.engine import Engine
from gateway.model.normalize import INVISIBLE_CLASS, fold, fold_with_offsets, undot
from gateway.model.records import SanitizePolicy
from gateway.model.rewrite import Edit, TextEdit, apply_text_edits, compose
from gateway.model.terms import _WORD

WORDS = (
    "HIV AIDS antiretroviral therapy condom viral load undetectable clinic patient doctor blood transfusion "
    "Los Angeles Hollywood Dodgers Beverly Hills California city beach Catholic rosary Vatican priest Mass "
    "church football music weather report meeting budget invoice project garden coffee train Zorblaxian"
).split()
FILLER = ["the", "a", "an", "and", "with", "in", "of", "was", "is", "at", "for"]

sentences = st.lists(st.sampled_from(WORDS + FILLER), min_size=3, max_size=14).map(
    lambda ws: " ".join(ws).capitalize() + "."
)
texts = st.lists(sentences, min_size=1, max_size=6).map(" ".join)
policies = st.builds(
    lambda ents, alpha, mode: SanitizePolicy(entities=tuple(ents), alpha=alpha, mode=mode),
    st.lists(st.sampled_from(["HIV", "Los Angeles", "Catholicism"]), min_size=1, max_size=3, unique=True),
    st.sampled_from([1.0, 1.5, 2.0]),
    st.sampled_from(["generalize", "redact"]),
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(text=texts, policy=policies)
# "Los Angeles" written as "city" where the summed evidence lowered another "city": a lowered clue is safe alone, so
# it does not flag the term (Decision.flags_term, as the pipeline's check reads it); found by a fuzz of this property.
@example(
    text="Train aids invoice doctor hills antiretroviral coffee therapy california for city a vatican needle. Beach "
    "a hiv mass beach zorblaxian.\n\nTrain hollywood vatican city for for meeting clinic. Antiretroviral catholic "
    "report city. Doctor an drug condom catholic patient.\n\nSex report abuse load. Report syphilis therapy los "
    "angeles.",
    policy=SanitizePolicy(entities=("Los Angeles",), alpha=2.0, mode="generalize"),
)
def test_output_holds_no_flagged_term(engine: Engine, text: str, policy: SanitizePolicy) -> None:
    result = engine.sanitize(text, policy)
    flagged = {d.term for d in result.decisions if d.flags_term}
    _tokens, occs = engine.terms_of(result.text, result.entities)
    assert not flagged & {o.key for o in occs}


@SETTINGS
@given(text=texts, policy=policies)
def test_sanitizing_twice_changes_nothing(engine: Engine, text: str, policy: SanitizePolicy) -> None:
    once = engine.sanitize(text, policy)
    twice = engine.sanitize(once.text, policy)
    assert twice.text == once.text
    assert not twice.decisions


@SETTINGS
@given(text=texts, policy=policies)
# Found by this test: round one wrote "invisible" and "city district" side by side, and the compounds pass read
# "invisible city" as a phrase of the text, with a span over "undetectable hollywood".
@example(
    text="Hiv antiretroviral beverly catholic undetectable hollywood city los church project.",
    policy=SanitizePolicy(entities=("HIV", "Los Angeles", "Catholicism"), alpha=1.0, mode="generalize"),
)
def test_spans_point_at_the_replaced_text(engine: Engine, text: str, policy: SanitizePolicy) -> None:
    result = engine.sanitize(text, policy)
    keys_at: dict[tuple[int, int], set[str]] = {}
    for d in result.decisions:
        for span in d.spans:
            keys_at.setdefault(span, set()).add(d.term)
    for (start, end), keys in keys_at.items():
        assert 0 <= start < end <= len(text)
        assert engine.key(text[start:end]) in keys
    # and nothing outside the spans (and the articles before them) changed
    if not result.decisions:
        assert result.text == text


@SETTINGS
@given(text=texts, policy=policies)
def test_edits_rebuild_the_output(engine: Engine, text: str, policy: SanitizePolicy) -> None:
    from gateway.model.rewrite import apply_text_edits

    result = engine.sanitize(text, policy)
    assert apply_text_edits(text, result.edits) == result.text


# The dotted-acronym rule as first written: one expression that tries its look-behind at every position.
_DOTTED_PLAIN = re.compile(r"(?<![^\W\d_])((?:[A-Z]\. ?){2,}[A-Z]?)(?![^\W\d_])")


@given(
    st.lists(st.sampled_from(["H.", "I. ", "V.", "S", "x", "é", "1", ".", " ", "_", "-", "\n", "U.S."]), max_size=12)
)
def test_undot_is_the_plain_rule(pieces: list[str]) -> None:
    text = "".join(pieces)
    # undot skips along the text to capitals (and returns at once without a dotted pair); what it reads is the same.
    assert undot(text) == _DOTTED_PLAIN.sub(lambda m: m.group(1).replace(".", "").replace(" ", ""), text)


# The word expression as first written: three alternatives, none of which the regex engine can skip to.
_WORD_PLAIN = re.compile(
    rf"(?:[^\W\d_]\.){{2,}}|[^\W\d_](?:[^\W_]|[\-'\u2019{INVISIBLE_CLASS}])*(?<![\-'\u2019{INVISIBLE_CLASS}])"
    r"|\d[\w.,:/\-]*"
)


@given(
    st.lists(st.sampled_from(["H", "iv", "é", "ß", "٣", "4", ".", "-", "'", "\u2019", "\u00ad", "_", " ", ",", "/"]))
)
@example(["H", ".", "iv", ".", " ", "H", ".", "4", "iv", "-", " ", "é", "\u00ad", "ß", "'", " ", "٣", ",", "4", "/"])
@example(["iv", "-", "'", "-", "\u00ad", "H", "-", "-", "-", " ", "é", "'", "\u2019", "_", "iv", "-", "-", "4", "-"])
@settings(max_examples=300)
def test_words_are_the_plain_rule(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert [m.span() for m in _WORD.finditer(text)] == [m.span() for m in _WORD_PLAIN.finditer(text)]


@given(st.lists(st.sampled_from(["A", "Z", "a", "z", "É", "é", "Ａ", "\u212a", "\ud800", "1", " ", "\n"]), max_size=40))
@settings(max_examples=300)
def test_shouting_is_the_plain_count(pieces: list[str]) -> None:
    from gateway.model.engine import _is_shouting

    text = "".join(pieces)
    # As first written: the ASCII capitals and small letters, each found by a regular expression.
    upper, lower = len(re.findall(r"[A-Z]", text)), len(re.findall(r"[a-z]", text))
    assert _is_shouting(text) == (upper + lower >= 20 and upper > 0.9 * (upper + lower))


def _fold_plain(text: str) -> str:
    """``fold`` as first written: NFKC always, then the whole invisible class, then the look-alikes."""
    from gateway.model.normalize import _ANY_LOOKALIKE, _DISGUISED, _INVISIBLE, _latin_lookalike

    if text.isascii():
        return text
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    return _DISGUISED.sub(_latin_lookalike, text) if _ANY_LOOKALIKE.search(text) else text


# Invisible characters inside and beyond the BMP (a tag character, a musical symbol's format mark), text NFKC already
# leaves alone and text it changes (a combining accent to compose, a ligature, full width), a look-alike, an emoji.
_FOLD_ALPHABET = [*"aHIV e.", "\u200b", "\u00ad", "\ufeff", "\U000e0041", "\U0001d173", "\U000110bd", "\u0301",
                  "\ufb01", "\uff28", "\u0410", "\u00e9", "\U0001f600", "\u00a0"]  # fmt: skip


@given(st.lists(st.sampled_from(_FOLD_ALPHABET), max_size=30).map("".join))
@example("H\U000e0041IV")  # an astral invisible inside a name: removed only by the astral ranges
@example("H\u200bI\U0001f600V")  # a BMP invisible beside an astral character that is not one
@example("Cafe\u0301 \u00adHIV")  # not NFKC: composed first, then the soft hyphen removed
@settings(max_examples=300)
def test_fold_is_the_plain_rule(text: str) -> None:
    # fold skips NFKC when the quick check says it changes nothing and leaves the astral ranges out when the text
    # has no character beyond the BMP; what it gives is the same.
    assert fold(text) == _fold_plain(text)


# ASCII, invisible characters, full-width digits and letters, Cyrillic and Greek look-alikes, a no-break space.
_DISGUISE_ALPHABET = st.sampled_from(
    [*"ab HIV19-@.", "\u200b", "\u00ad", "\u2060", "\uff15", "\uff28", "\u0410", "\u0399", "\u00a0", "\u00e9"]
)


@given(st.lists(_DISGUISE_ALPHABET, max_size=40).map("".join))
@settings(max_examples=300)
def test_folding_with_offsets_reads_as_fold_and_points_into_the_original(text: str) -> None:
    view = fold_with_offsets(text)
    blanks = str.maketrans({"\u00a0": " "})  # blanks outside ASCII are kept (the matchers read them as blanks)
    if view is None:
        assert fold(text) == text.translate(blanks)
        return
    folded, starts, ends = view
    assert folded.translate(blanks) == fold(text)
    assert len(starts) == len(ends) == len(folded)
    for i, ch in enumerate(folded):
        assert 0 <= starts[i] < ends[i] <= len(text)
        assert ch in fold(text[starts[i] : ends[i]]) or ch in text[starts[i] : ends[i]]
    assert starts == sorted(starts)


def _edits(draw: st.DrawFn, text: str, replacements: st.SearchStrategy[str]) -> list[tuple[int, int, str]]:
    """Non-overlapping edits of ``text`` (deletions and insertions among them), sorted."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    out: list[tuple[int, int, str]] = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        if out and a < out[-1][1]:
            continue
        new = draw(replacements)
        if a == b and (not new or (out and out[-1][1] == a)):
            continue  # an empty edit, or an insertion where another edit ends: neither is one the engine makes
        out.append((a, b, new))
    return out


@st.composite
def _two_steps(draw: st.DrawFn) -> tuple[str, list[TextEdit], str, list[Edit]]:
    original = draw(st.text(alphabet="ab ", max_size=24))
    base = [TextEdit(a, b, t) for a, b, t in _edits(draw, original, st.sampled_from(["", "x", "xyz"]))]
    current = apply_text_edits(original, base)
    later = [Edit(a, b, t, a) for a, b, t in _edits(draw, current, st.sampled_from(["", "Q", "QR"]))]
    return original, base, current, later


# A round that rewrites what an earlier round wrote and reaches the place where that round deleted a word:
# "a greater cognitive decline" -> "an extraordinary process" (cognitive left out) -> "a process".
@example(("and a greater cognitive decline", [TextEdit(4, 13, "an extraordinary"), TextEdit(14, 24, ""),
                                              TextEdit(24, 31, "process")],
          "and an extraordinary process", [Edit(4, 21, "a ", 4)]))  # fmt: skip
@given(_two_steps())
def test_composed_edits_rebuild_the_text_from_the_original(case: tuple[str, list[TextEdit], str, list[Edit]]) -> None:
    original, base, current, later = case
    composed = compose(base, current, later)
    assert apply_text_edits(original, composed) == apply_text_edits(current, later)
    # Each original character is edited once at most: the pipeline maps the edits to parts by their offsets.
    spans = sorted((e.start, e.end) for e in composed)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
