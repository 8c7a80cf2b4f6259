"""Our WordNet reader (gateway/taxonomy/wnreader.py) must answer as nltk's reader does, without nltk."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.mapped import MappedFile
from gateway.taxonomy.wnreader import WordNetReader
from gateway.taxonomy.wordnet import WordNet, _open_reader, prepare_index


@pytest.fixture(scope="module")
def readers(wordnet: WordNet) -> tuple[WordNetReader, Any]:
    ours = wordnet._wn
    assert isinstance(ours, WordNetReader)
    database = Path(ours.root.path)
    theirs = _open_reader(str(database.parent.parent), MappedFile.open(prepare_index(database)))
    return ours, theirs


def _synset_facts(s: Any) -> tuple[object, ...]:
    # nltk keeps a synset's pointers in a set (its order follows the hash seed): compared as sets.
    return (
        s.name(), s.pos(), s.offset(), s.definition(), s.lemma_names(),
        [(lm.name(), lm.key(), lm.count()) for lm in s.lemmas()],
        sorted(h.name() for h in s.hypernyms()), sorted(h.name() for h in s.instance_hypernyms()),
        s.max_depth(),
        [[d.synset().name() + "." + d.name() for d in lm.derivationally_related_forms()] for lm in s.lemmas()],
        [[p.synset().name() + "." + p.name() for p in lm.pertainyms()] for lm in s.lemmas()],
    )  # fmt: skip


def test_synsets_and_lemmas_are_nltks(readers: tuple[WordNetReader, Any]) -> None:
    ours, theirs = readers
    nouns = list(ours.all_lemma_names("n"))
    assert nouns == list(theirs.all_lemma_names(pos="n"))
    rng = random.Random(5)
    lemmas = rng.sample(nouns, 1500) + rng.sample(list(ours.all_lemma_names()), 800)
    lemmas += ["organ", "hiv", "aids", "catholicism", "los_angeles", "dog", "good", "run", "quickly", "american"]
    seen: dict[str, Any] = {}
    for lemma in lemmas:
        for pos in (None, "n"):
            mine, nltk_s = ours.synsets(lemma, pos), theirs.synsets(lemma, pos=pos)
            assert [s.name() for s in mine] == [s.name() for s in nltk_s], (lemma, pos)
            for a, b in zip(mine, nltk_s, strict=True):
                assert _synset_facts(a) == _synset_facts(b)
                seen[a.name()] = b
        assert [lm.key() for lm in ours.lemmas(lemma)] == [lm.key() for lm in theirs.lemmas(lemma)]
    for name, b in list(seen.items())[:500]:
        assert ours.synset(name).offset() == b.offset()
        hyper = lambda x: x.hypernyms() + x.instance_hypernyms()  # noqa: E731
        assert {s.name() for s in ours.synset(name).closure(hyper)} == {s.name() for s in b.closure(hyper)}


def test_every_synset_is_nltks(readers: tuple[WordNetReader, Any]) -> None:
    ours, theirs = readers
    for pos in ("a", "s", "r"):
        mine, nltk_s = list(ours.all_synsets(pos)), list(theirs.all_synsets(pos))
        assert [s.name() for s in mine] == [s.name() for s in nltk_s]
    for a, b in zip(mine[::10], nltk_s[::10], strict=True):
        assert _synset_facts(a) == _synset_facts(b)


def test_morphy_is_nltks(readers: tuple[WordNetReader, Any]) -> None:
    ours, theirs = readers
    rng = random.Random(9)
    words = rng.sample(list(ours.all_lemma_names()), 1500)
    forms = [w + end for w in words for end in ("", "s", "es", "ed", "ing", "er", "est", "ies")]
    forms += "lives churches aardwolves abaci geese mice better ran seen men women went data criteria".split()
    for form in forms:
        for pos in (None, "n", "v", "a", "r"):
            assert ours.morphy(form, pos) == theirs.morphy(form, pos), (form, pos)
            if pos is not None:
                assert ours._morphy(form, pos) == theirs._morphy(form, pos)


def test_the_taxonomy_does_not_import_nltk() -> None:
    code = (
        "import sys\n"
        "from gateway.taxonomy.wordnet import WordNet\n"
        "w = WordNet()\n"
        "assert w.lemmatize('lives') == 'life' and w.generalizations('organ')\n"
        "assert w.senses('HIV') and w.synonyms('Catholicism')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'nltk'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_has_senses_is_whether_there_are_senses_without_parsing_a_synset() -> None:
    # A fresh WordNet (its senses not asked before): has_senses parses nothing and keeps no senses; senses() does.
    wn = WordNet()
    reader = wn._wn
    assert isinstance(reader, WordNetReader)
    words = [*list(reader.all_lemma_names())[::53], "causes", "running", "best", "fast", "glasses", "lives",
             "agreeable", "opioids", "thanks", "regards", "court", "mostly", "zzzyx", "u.s.", "o'brien"]  # fmt: skip
    reader._synsets.clear()  # the reader is shared with the other tests: its cache, emptied, must stay so
    answers = [wn.has_senses(w) for w in words]
    assert len(reader._synsets) == 0 and len(wn._sense_lists) == 0
    assert answers == [bool(wn.senses(w)) for w in words]
    # Both ways out are taken: words that are mostly something else than a noun though they have noun senses
    # ("causes", "fast"), and nouns.
    assert 0 < sum(answers) < len(answers)
    assert any(not a and reader.has_synset(w, "n") for w, a in zip(words, answers, strict=True))
    satellites = sum(1 for w in words for s in reader.synsets(w) if s.pos() == "s")
    assert satellites > 50  # the sense keys that name a head synset are exercised
