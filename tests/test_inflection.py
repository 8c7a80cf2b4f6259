"""LemmInflect read for verbs only, held in memory or mapped (gateway/taxonomy/inflection.py), answers as its
whole tables do."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from gateway.taxonomy.inflection import (
    INFLECTIONS_NAME,
    MappedForms,
    _lemminflect,
    _mapped_tables,
    _verb_tables,
    conjugate,
    verb_tag,
)

TAGS = ("VBD", "VBN", "VBG", "VBZ")
# The whole tables, in a process of their own; with 500 words of every class from them.
ASK = r"""
import json, random, sys
import lemminflect as li
from lemminflect.core.Lemmatizer import Lemmatizer
words = json.load(sys.stdin) + random.Random(3).sample(sorted(Lemmatizer()._getLemmaDict()), 500)
print(json.dumps({w: [li.getAllLemmas(w, upos="VERB"), li.getAllInflections(w, upos="VERB"),
                      [li.getInflection(w, tag=t) for t in TAGS]] for w in words}))
""".replace("TAGS", repr(TAGS))


def test_verb_answers_are_those_of_the_whole_tables() -> None:
    li = _lemminflect()
    from lemminflect.core.Lemmatizer import Lemmatizer

    rng = random.Random(2)
    verbs = sorted(Lemmatizer().lemma_dict)
    words = [*rng.sample(verbs, 1500), "bitten", "went", "causes", "spread", "be", "can", "data", "house"]
    words += ["running", "clinic", "antiretroviral", "happiness", "quickly", "blorfed", "HIV", "tests", "better"]
    whole = json.loads(subprocess.run([sys.executable, "-c", ASK], input=json.dumps(words), capture_output=True,
                                      text=True, check=True).stdout)  # fmt: skip
    ours = {w: [li.getAllLemmas(w, upos="VERB"), li.getAllInflections(w, upos="VERB"),
                [li.getInflection(w, tag=t) for t in TAGS]] for w in whole}  # fmt: skip
    assert len(whole) > len(set(words)) + 400
    assert json.loads(json.dumps(ours)) == whole


def test_a_verb_is_written_in_the_form_it_replaces() -> None:
    assert verb_tag("bitten") == "VBN"
    assert conjugate("grip", "bitten") == "gripped"
    assert conjugate("make", "causes") == "makes"
    assert conjugate("pass on", "went") == "passed on"


def test_the_mapped_verb_tables_hold_every_entry_as_the_dicts_do(tmp_path: Path) -> None:
    import lemminflect

    lemmas, infl = _verb_tables()
    mapped = _mapped_tables(tmp_path, lemminflect.__version__)
    assert mapped is not None and (tmp_path / INFLECTIONS_NAME).exists()
    for table, name in ((lemmas, "lemmas"), (infl, "inflections")):
        forms = MappedForms(mapped.key_table(name))
        assert len(forms) == len(table) > 1000
        for word, entry in table.items():  # LemmInflect asks its tables only get(word, {})
            got = forms.get(word, {})
            assert got == entry and list(got) == list(entry)
            assert all(type(v) is type(entry[k]) for k, v in got.items())
        assert forms.get("blorfed", {}) == {} and forms.get("", None) is None
    # laid out once: a second process (here, call) maps the same file
    assert _mapped_tables(tmp_path, lemminflect.__version__) is not None


def test_a_read_only_directory_falls_back_to_the_tables_in_memory(tmp_path: Path) -> None:
    import lemminflect

    missing = tmp_path / "no" / "such" / "directory"
    assert _mapped_tables(missing, lemminflect.__version__) is None
