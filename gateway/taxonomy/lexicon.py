"""What a capitalised word is, read from WordNet: the lexicon the name recognizer asks."""

from __future__ import annotations

import functools
import hashlib
import threading
import types
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from gateway.mapped import KeyTable, MappedFile, MappedFormatError, file_lock, key_table_sections, write_mapped
from gateway.model.identifiers.names import WordClass
from gateway.model.terms import STOPWORDS
from gateway.taxonomy import wnreader
from gateway.taxonomy.wnreader import _SUBSTITUTIONS, POS_LIST, WordNetReader
from gateway.taxonomy.wordnet import WordNet

# A capitalised word whose ordinary senses are this frequent in SemCor is an ordinary word
# capitalised ("Court", "State"), even when WordNet also knows a person or place of that name.
COMMON_COUNT = 8
# Words WordNet leaves out (it has nouns, verbs, adjectives and adverbs only) that open sentences.
_FUNCTION_WORDS = frozenset(
    "i you he she it we they me him her us them my your his its our their mine yours hers ours theirs this that "
    "these those who whom whose which what where when why how if unless although though because since while as "
    "at in on of for from with without within by to into onto upon under over between among against during "
    "after before until till about above below across along around behind beside besides beyond despite "
    "except inside outside through throughout toward towards via per and or but nor so yet the a an no not "
    "yes any each every either neither both all some such there here then than thus hence however moreover "
    "furthermore nevertheless nonetheless therefore accordingly also too very "
    # Indefinite pronouns: "Anyone tried this?", "Something is off" open as many sentences as names do.
    "anyone anybody anything anywhere someone somebody something somewhere everyone everybody everything "
    "everywhere noone nobody nothing nowhere whichever wherever whoever whatever whenever "
    # Days and months name dates (found as dates), not people.
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "january february march april may june july august september october november december jan feb mar apr jun "
    "jul aug sep sept oct nov dec".split()
)


def census_names(name: str) -> frozenset[str]:
    """One of the census's lists of frequent names (``gateway/data/given-names.txt``, ``surnames.txt``), lower
    case, function words aside: "May" and "June" are months before they are anyone's name."""
    text = resources.files("gateway").joinpath(f"data/{name}.txt").read_text(encoding="utf-8")
    names = (line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return frozenset(n for n in names if n not in STOPWORDS and n not in _FUNCTION_WORDS)


# The word-class table (``prepare_word_classes``): what the lexicon would answer for every word WordNet knows in
# any form, laid out once beside the database, so a worker reads one entry where it would read a word's synsets
# (64 us for an ordinary word, 200-500 us for a name or place, the first time a worker meets the word). Three
# bytes a word: its class written as it is, its class written in capitals, and whether it is an ordinary word.
_CODES: dict[WordClass, bytes] = {"common": b"c", "place": b"l", "person": b"p", "demonym": b"d", "proper": b"r",
                                  "mixed": b"m", "unknown": b"u"}  # fmt: skip
_CLASSES: dict[int, WordClass] = {code[0]: cls for cls, code in _CODES.items()}


@functools.cache
def table_name() -> str:
    """The table's file name, with a digest of the code and words its answers come from: a table made by other
    code is not read (and ``prepare_word_classes`` makes a new one). The code is digested as compiled (its
    instructions, names and constants), so an edit elsewhere in these modules, or of a comment, keeps the table;
    the rest of WordNet's reader is held to nltk's answers by tests/test_wnreader.py."""
    digest = hashlib.blake2b(digest_size=8)
    functions = (WordNetLexicon._classify_key, WordNetLexicon._ordinary_key, class_keys, WordNetReader.lemma_summary,
                 WordNetReader.lemmas, WordNetReader.morphy, WordNetReader._morphy)  # fmt: skip
    for function in functions:
        _digest_code(digest, function.__code__)
    for words in (STOPWORDS, _FUNCTION_WORDS, wnreader._SUBSTITUTIONS.items(), [COMMON_COUNT]):
        digest.update(repr(sorted(words)).encode("utf-8"))
    return f"sanigate-wordclasses.{digest.hexdigest()}.sgmap"


def _digest_code(digest: Any, code: types.CodeType) -> None:
    digest.update(code.co_code)
    digest.update(repr(code.co_names).encode("utf-8"))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _digest_code(digest, const)  # a comprehension's or lambda's own code
        else:
            digest.update(repr(const).encode("utf-8"))


def _key(word: str) -> str:
    """The form of a word that its class depends on (with ``word.isupper()``)."""
    return word.lower().replace("’", "'").replace(" ", "_")


def class_keys(reader: WordNetReader) -> list[str]:
    """Every form ``morphy`` reads as a lemma of some part of speech: the lemmas, the exception lists' forms, and
    each lemma with each suffix a detachment rule takes off. A form outside this list has no lemma, so no sense:
    its class is "unknown" and it is no ordinary word (``tests/test_lexicon_table.py`` checks both)."""
    keys: set[str] = set()
    for lemma in reader.all_lemma_names():
        keys.add(lemma)
        senses = reader._lemma_pos_offset_map[lemma]
        for pos in POS_LIST:
            if pos not in senses:
                continue
            for old, new in _SUBSTITUTIONS[pos]:
                if lemma.endswith(new):
                    keys.add(lemma[: len(lemma) - len(new)] + old)
    for pos in POS_LIST:
        keys.update(reader._exception_map(pos))
    return sorted(keys)


def prepare_word_classes(
    wordnet: WordNet, *, keys: Iterable[str] | None = None, path: Path | None = None
) -> Path | None:
    """Lay out the word-class table beside WordNet's database, unless it is there (None: the database is read
    by nltk's reader, whose answers the table would not be made from). ``keys``/``path``: a partial table
    elsewhere, for tests. About a minute of CPU (391,055 forms), once: ``sanigate index prepare`` and the
    image build run it."""
    reader = wordnet._wn
    if not isinstance(reader, WordNetReader):
        return None
    path = path or Path(reader.root.path) / table_name()
    if path.exists():
        return path
    with file_lock(path.with_name(f".{path.name}.lock")):
        if path.exists():  # another process made it while we waited
            return path
        lexicon = WordNetLexicon(wordnet, table=False)
        names = sorted(set(keys)) if keys is not None else class_keys(reader)
        values = []
        with wordnet._lock:
            for key in names:
                lower = lexicon._classify_key(key, upper=False)
                # The class depends on the case only through a name WordNet writes in capitals ("DOE").
                upper = lexicon._classify_key(key, upper=True) if key.upper() != key.lower() else lower
                ordinary = lexicon._ordinary_key(key)
                values.append(_CODES[lower] + _CODES[upper] + (b"1" if ordinary else b"0"))
        sections = key_table_sections("classes", names)
        sections["classes.codes"] = b"".join(values)  # three bytes a key, in the keys' order
        write_mapped(path, {"word_classes": 1, "wordnet": "3.0"}, sections)
        reader._lemma_pos_offset_map._decoded.clear()  # the build's lemmas, not a worker's vocabulary
    return path


class WordNetLexicon:
    """``table``: read the word-class table where it has been laid out (``prepare_word_classes``); without it,
    or False, each word's synsets are read the first time it is asked about (the same answers)."""

    def __init__(self, wordnet: WordNet, *, table: bool | Path = True) -> None:
        self._wordnet = wordnet
        self._given = census_names("given-names")
        self._surnames = census_names("surnames")
        self._wn: Any = wordnet._wn
        self._cache: dict[str, WordClass] = {}
        self._ordinary: dict[str, bool] = {}
        self._lock = threading.Lock()
        self._place = self._wn.synset("location.n.01")
        self._person = self._wn.synset("person.n.01")
        self._group = self._wn.synset("social_group.n.01")
        self._table = self._open_table(table)

    def _open_table(self, table: bool | Path) -> tuple[KeyTable, memoryview] | None:
        if table is False or not isinstance(self._wn, WordNetReader):
            return None
        path = table if isinstance(table, Path) else Path(self._wn.root.path) / table_name()
        try:
            mapped = MappedFile.open(path)
            return mapped.key_table("classes"), mapped.section("classes.codes")
        except (OSError, MappedFormatError, KeyError):
            return None  # not prepared: read from WordNet, word by word

    def word_class(self, word: str) -> WordClass:
        found = self._cache.get(word)
        if found is None:
            key = _key(word)
            if self._table is not None and key not in STOPWORDS and key not in _FUNCTION_WORDS:
                keys, codes = self._table
                i = keys.id_of(key)
                found = "unknown" if i < 0 else _CLASSES[codes[3 * i + word.isupper()]]
            else:
                with self._wordnet._lock:
                    found = self._classify_key(key, upper=word.isupper())
            if len(self._cache) < 200_000:
                self._cache[word] = found
        return found

    def is_given_name(self, word: str) -> bool:
        return word.lower() in self._given

    def is_surname(self, word: str) -> bool:
        return word.lower() in self._surnames

    def is_ordinary(self, word: str) -> bool:
        low = word.lower().replace("’", "'")
        if low in STOPWORDS or low in _FUNCTION_WORDS:
            return True
        found = self._ordinary.get(low)
        if found is None:
            if self._table is not None:
                keys, codes = self._table
                i = keys.id_of(low)
                found = i >= 0 and codes[3 * i + 2] == ord("1")
            else:
                with self._wordnet._lock:
                    found = self._ordinary_key(low)
            if len(self._ordinary) < 200_000:
                self._ordinary[low] = found
        return found

    def _ordinary_key(self, low: str) -> bool:
        return any(
            lm.name()[:1].islower()
            for pos in ("n", "v", "a", "r")
            if (base := self._wn.morphy(low, pos))
            for lm in self._wn.lemmas(base)
        )

    def _classify(self, word: str) -> WordClass:
        return self._classify_key(_key(word), upper=word.isupper())

    def _classify_key(self, low: str, *, upper: bool) -> WordClass:
        """``low``: the word's ``_key``; ``upper``: whether it is written in capitals."""
        if low in STOPWORDS or low in _FUNCTION_WORDS:
            return "common"
        # Most capitalised words are ordinary ones (a sentence's first word) or unknown to WordNet: the lemma
        # fields and sense counts tell both before any synset is read (sanigate's reader; nltk's reads them all).
        # An ordinary word with no capitalised lemma has no proper sense to weigh: common, whatever its count.
        summary = self._wn.lemma_summary(low) if isinstance(self._wn, WordNetReader) else None
        if (
            summary is not None
            and summary.lemmas
            and (summary.ordinary_count >= COMMON_COUNT or (summary.lower and not summary.capitalised))
        ):
            return "common"
        lemmas = list(self._wn.lemmas(low)) if summary is None or summary.lemmas else []
        for pos in ("n", "v", "a", "r"):
            if lemmas:
                break
            base = self._wn.morphy(low, pos)  # "Seen" is "see", "Foreigners" "foreigner"
            lemmas = list(self._wn.lemmas(base)) if base else []
        if not lemmas:
            return "unknown"
        common = sum(lm.count() for lm in lemmas if lm.name()[:1].islower())
        has_common = any(lm.name()[:1].islower() for lm in lemmas)
        if common >= COMMON_COUNT:
            return "common"
        # "DOE" (an agency) says nothing about "Doe" (a surname).
        proper = [lm for lm in lemmas if lm.name()[:1].isupper() and (upper or not lm.name().isupper())]
        kinds: set[str] = set()
        for lm in proper:
            s = lm.synset()
            if s.pos() in ("a", "s"):
                kinds.add("demonym" if any(p.name()[:1].isupper() for p in lm.pertainyms()) else "proper")
                continue
            if s.instance_hypernyms():
                roots = set(s.closure(lambda x: x.instance_hypernyms() + x.hypernyms()))
                kinds.add("place" if self._place in roots else "person" if self._person in roots else "proper")
            else:
                # "Russian", "European": a people's name, with an adjective of its place beside it.
                adjective = any(p.name()[:1].isupper() for a in lemmas if a.synset().pos() in ("a", "s")
                                for p in a.pertainyms())  # fmt: skip
                roots = set(s.closure(lambda x: x.hypernyms()))
                people = self._person in roots or self._group in roots
                kinds.add("demonym" if people and adjective else "proper")
        for k in ("place", "person", "demonym", "proper"):
            if k in kinds:
                return k
        return "common" if has_common else "unknown"
