"""Names spelt by an address (``analyzer._address_names``) are tried only where the last word stands after a blank.

Compared with the definition (the search at every place the last word stands, its pattern compiled for every
address) on texts written to hit the edges and on archive texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from archive import ARCHIVE, archive_texts

from gateway.model.identifiers import Analyzer, Finding
from gateway.model.identifiers import analyzer as A
from gateway.model.identifiers import kinds as K
from gateway.model.identifiers.lowered import Lowered
from gateway.model.identifiers.names import Lexicon
from gateway.taxonomy.lexicon import WordNetLexicon
from gateway.taxonomy.wordnet import WordNet


@pytest.fixture(scope="module")
def analyzer(wordnet: WordNet) -> Analyzer:
    return Analyzer(lexicon=WordNetLexicon(wordnet))


def _definition(text: str, addresses: Sequence[str], lexicon: Lexicon) -> list[Finding]:
    out: list[Finding] = []
    seen: set[str] = set()
    low = text.lower()
    for address in addresses:
        local = address.partition("@")[0].lower()
        if local in seen:
            continue
        seen.add(local)
        parts = re.split(r"[._-]", local)
        if 2 <= len(parts) <= 3 and all(p.isalpha() and len(p) >= 2 for p in parts):
            words, last = [re.escape(p) for p in parts], parts[-1]
        elif len(parts) == 1 and local.isalpha() and len(local) >= 5:
            words, last = [re.escape(local[0]) + r"[^\W\d_]*", re.escape(local[1:])], local[1:]
        else:
            continue
        name = re.compile(r"[ \t]+".join(f"({w})" for w in words) + r"\Z", re.IGNORECASE)
        at = low.find(last)
        while at != -1:
            end = at + len(last)
            if not (text[end : end + 1].isalnum() or text[end : end + 1] == "_"):
                m = name.search(text, max(0, at - 64), end)
                if m is not None and (m.start() == 0 or not text[m.start() - 1].isalnum()):
                    names = m.groups()
                    if all(n[0].isupper() for n in names) and not all(lexicon.is_ordinary(n) for n in names):
                        out.append(Finding(start=m.start(), end=end, kind=K.PERSON, text=m.group(), score=0.75,
                                           source="name of an address"))  # fmt: skip
            at = low.find(last, end)
    return out


ADDRESSES = ["nidhi.panda@cyronics.com", "rkossler@nd.edu", "mary-ann.baker@x.org", "support.team@x.org", "a.b@x"]
EDGES = [
    "From: Nidhi Panda <nidhi.panda@cyronics.com>\n\nRegards,\n*Nidhi Panda*\n",
    "Rob Kossler <rkossler@nd.edu> wrote:\n\nRob Kossler via USRP-users; R Kossler, Rob\tKossler and Rob  Kossler",
    "Nidhi\tPanda, NIDHI PANDA, nidhi panda, Nidhi.Panda, Nidhi-Panda, xNidhi Panda, Nidhi Pandas, Panda alone",
    "Mary Ann Baker and Mary-Ann Baker, Mary Ann\tBaker; Support Team (support.team@x.org); Rob\nKossler",
    "Panda at the start: Panda. Kossler at the end: Rob Kossler",
    "\u0130stanbul R\u00f6b Kossler, \u00c9mile Panda Nidhi Panda",
]


@pytest.mark.parametrize("text", EDGES)
def test_address_names_are_what_the_definition_finds(analyzer: Analyzer, text: str) -> None:
    lexicon = analyzer._lexicon
    assert A._address_names(text, ADDRESSES, lexicon, Lowered(text)) == _definition(text, ADDRESSES, lexicon)


def test_the_edges_are_exercised(analyzer: Analyzer) -> None:
    found = [f.text for text in EDGES for f in _definition(text, ADDRESSES, analyzer._lexicon)]
    assert {"Nidhi Panda", "Rob Kossler", "Rob\tKossler", "Rob  Kossler", "Nidhi\tPanda"} <= set(found)
    assert len(found) >= 12


def test_the_pattern_is_compiled_only_where_a_name_may_end(analyzer: Analyzer, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []

    class Counting:
        IGNORECASE = re.IGNORECASE

        @staticmethod
        def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
            compiled.append(pattern)
            return re.compile(pattern, flags)

        escape = staticmethod(re.escape)

    monkeypatch.setattr(A, "re", Counting)
    text = "Write to nidhi.panda@cyronics.com or rkossler@nd.edu (addresses:Panda/Kossler)."
    assert A._address_names(text, ADDRESSES, analyzer._lexicon) == []
    assert compiled == []  # "panda" and "kossler" stand after ".", "r", ":" and "/": after no blank
    A._address_names("Hi Nidhi Panda", ADDRESSES, analyzer._lexicon)
    assert len(compiled) == 1


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_address_names_on_archive_texts(analyzer: Analyzer) -> None:
    lexicon = analyzer._lexicon
    found = 0
    for text in archive_texts(300, chars=20_000):
        addresses = re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", text)
        want = _definition(text, addresses, lexicon)
        assert A._address_names(text, addresses, lexicon, Lowered(text)) == want
        found += len(want)
    assert found > 20
