"""What a capitalised word is, read from WordNet: the lexicon the name recognizer asks."""

from __future__ import annotations

import threading
from importlib import resources
from typing import Any

from gateway.model.identifiers.names import WordClass
from gateway.model.terms import STOPWORDS
from gateway.taxonomy.wnreader import WordNetReader
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


class WordNetLexicon:
    def __init__(self, wordnet: WordNet) -> None:
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

    def word_class(self, word: str) -> WordClass:
        found = self._cache.get(word)
        if found is None:
            with self._wordnet._lock:
                found = self._classify(word)
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
            with self._wordnet._lock:
                found = any(
                    lm.name()[:1].islower()
                    for pos in ("n", "v", "a", "r")
                    if (base := self._wn.morphy(low, pos))
                    for lm in self._wn.lemmas(base)
                )
            if len(self._ordinary) < 200_000:
                self._ordinary[low] = found
        return found

    def _classify(self, word: str) -> WordClass:
        low = word.lower().replace("’", "'").replace(" ", "_")
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
        proper = [lm for lm in lemmas if lm.name()[:1].isupper() and (word.isupper() or not lm.name().isupper())]
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
