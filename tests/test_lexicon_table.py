"""The word-class table answers as the lexicon answers from WordNet itself, word by word.

The table holds an entry for every form WordNet's morphology reads as a lemma; any other word has no sense, so it
is "unknown" and no ordinary word. Both halves are checked on the words of real mail and of a clinic's letter: the
entries (a table made for those words) and the words left out of it (which the table calls "unknown").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from archive import archive_texts

from gateway.taxonomy.lexicon import WordNetLexicon, class_keys, prepare_word_classes, table_name
from gateway.taxonomy.wnreader import POS_LIST, WordNetReader
from gateway.taxonomy.wordnet import WordNet

LETTER = """Dear Dr. Okonkwo, Mrs Eleanor Vasquez of Fresno, California, was SEEN by the Foreigners' Office in
New York on Tuesday; Ms O'Brien and Jean-Pierre Doe (DOE, AIDS, Aids) read The Times. İstanbul, Straße, Cheers,
Grace Baker and Nick Foster went to the Court of Appeal and Baker Street with the Russians and Europeans."""
_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def _words(wordnet: WordNet) -> list[str]:
    """Words as the name recognizer asks about them: as written, capitalised, in capitals, and some pairs."""
    texts = [LETTER, *archive_texts(120, chars=4000)]
    words = {w for text in texts for w in _WORD.findall(text)}
    pairs = {" ".join(m) for text in texts for m in re.findall(r"([A-Z][a-z]+) ([A-Z][a-z]+)", text)}
    return sorted({form for w in words | pairs for form in (w, w.capitalize(), w.upper())})


def test_the_table_answers_as_wordnet_does(wordnet: WordNet, tmp_path: Path) -> None:
    reader = wordnet._wn
    assert isinstance(reader, WordNetReader)
    words = _words(wordnet)
    lows = {w.lower().replace("’", "'").replace(" ", "_") for w in words}
    lows |= {w.lower().replace("’", "'") for w in words}
    # A table of the entries these words can need; every other word must be answered as one the table lacks.
    keys = [k for k in class_keys(reader) if k in lows]
    path = prepare_word_classes(wordnet, keys=keys, path=tmp_path / "classes.sgmap")
    assert path is not None and path.exists()
    table = WordNetLexicon(wordnet, table=path)
    plain = WordNetLexicon(wordnet, table=False)
    assert table._table is not None and plain._table is None
    assert [(table.word_class(w), table.is_ordinary(w)) for w in words] == [
        (plain.word_class(w), plain.is_ordinary(w)) for w in words
    ]
    # The comparison means something only if the words have every class and both kinds of lookup.
    classes = {plain.word_class(w) for w in words}
    assert {"common", "place", "person", "demonym", "proper", "unknown"} <= classes
    assert len(keys) > 1000 and len(lows - set(keys)) > 1000
    # "DOE" (an agency) and "Doe" (a surname) differ only by case: the table keeps both answers.
    assert plain.word_class("DOE") != plain.word_class("Doe")
    assert table.word_class("DOE") == plain.word_class("DOE") and table.word_class("Doe") == plain.word_class("Doe")


def test_every_form_morphology_reads_has_a_key(wordnet: WordNet) -> None:
    reader = wordnet._wn
    assert isinstance(reader, WordNetReader)
    keys = set(class_keys(reader))
    read = [low for low in {w.lower() for w in _words(wordnet)} if any(reader._morphy(low, p) for p in POS_LIST)]
    assert len(read) > 1000
    assert [low for low in read if low not in keys] == []
    # Inflected forms and exception-list forms are keys of their own ("foreigners", "seen", "geese").
    assert {"foreigners", "seen", "geese", "russians"} <= keys


def test_a_table_that_is_missing_or_made_by_other_code_is_not_read(wordnet: WordNet, tmp_path: Path) -> None:
    assert WordNetLexicon(wordnet, table=tmp_path / "missing.sgmap")._table is None
    (tmp_path / "garbage.sgmap").write_bytes(b"not a table")
    assert WordNetLexicon(wordnet, table=tmp_path / "garbage.sgmap")._table is None
    # The default table's name carries a digest of the code and the words its answers come from.
    assert re.fullmatch(r"sanigate-wordclasses\.[0-9a-f]{16}\.sgmap", table_name())


def test_the_tables_name_follows_what_its_answers_come_from(monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.taxonomy import lexicon

    before = table_name()
    monkeypatch.setattr(lexicon, "COMMON_COUNT", lexicon.COMMON_COUNT + 1)
    table_name.cache_clear()
    try:
        assert table_name() != before  # another threshold: other answers, another table
    finally:
        monkeypatch.undo()
        table_name.cache_clear()
    assert table_name() == before
    # Compiled code, not its file: the same functions give the same name in another process.
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "from gateway.taxonomy.lexicon import table_name; print(table_name())"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert out.stdout.strip() == before
