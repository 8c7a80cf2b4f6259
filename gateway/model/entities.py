"""A sensitive entity c as K sees it: the union of its lexicalizations.

The paper names the missing synonyms of c (HIV / human immunodeficiency
virus) as a main cause of its low recall at alpha = 1: counting only one name
underestimates p(c), overestimates IC(c) and loosens every test. So c is
counted as the union of
  * its own name;
  * the synonyms and derived forms of every WordNet noun sense whose lemmas
    include that name (not senses reached by lemmatising: "AIDS" is not
    "aid"), each kept only if K uses it for c: PMI(name; synonym) >= IC(name)/2
    (or it is too rare in K to matter);
  * aliases the policy declares;
  * parts and acronyms of its name that, in K, stand for c: a candidate is
    kept when most documents that contain it also contain c
    (P(c | candidate) >= ``alias_confidence``), e.g. "Ackles" for
    "Jensen Ackles", "STD" for "sexually transmitted disease".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from gateway.errors import UnknownEntityError
from gateway.model.knowledge import Knowledge
from gateway.model.records import Entity
from gateway.model.terms import STOPWORDS, Lemmatizer, key_of

ALIAS_CONFIDENCE = 0.5
RARE_ACRONYM = 50  # paragraphs: an acronym of an entity K does not know is taken as its name below this
SYNONYM_RATIO = 0.5


def _associated(knowledge: Knowledge, base: str, n_base: int, cand: str, n_cand: int) -> bool:
    """Does K use ``cand`` for what ``base`` names? PMI(base; cand) >= IC(base) / 2.

    WordNet synonyms can be common words in other senses ("dose" for venereal
    disease, "habit" for substance abuse); counted as c they would swamp p(c).
    """
    n_both = knowledge.count([{base}, {cand}])
    if n_both == 0:
        return False
    n = knowledge.n_docs
    return math.log(n_both * n / (n_base * n_cand)) >= SYNONYM_RATIO * -math.log(n_base / n)


def _candidates(name: str) -> list[str]:
    words = [w for w in name.replace("_", " ").split() if w.lower() not in STOPWORDS]
    out: list[str] = []
    if len(words) >= 2:
        if all(w[:1].isupper() for w in words):
            out.extend(words)
        out.append("".join(w[0] for w in words).upper())
    return out


def resolve_entity(
    name: str,
    *,
    knowledge: Knowledge,
    lemmatize: Lemmatizer,
    synonyms: Callable[[str], Iterable[str]],
    aliases: Iterable[str] = (),
    min_support: int = 1,
    alias_confidence: float = ALIAS_CONFIDENCE,
) -> Entity:
    base = key_of(name, lemmatize)
    if not base:
        raise UnknownEntityError(f"entity {name!r} has no words to look for")
    keys = {base}
    acronyms: set[str] = set()

    def note_acronym(written: str, key: str) -> None:
        if len(written) > 1 and written.replace(".", "").isupper() and " " not in written.strip():
            acronyms.add(key)

    note_acronym(name, base)
    for alias in aliases:
        if k := key_of(alias, lemmatize):
            keys.add(k)
    n_base = knowledge.count([{base}])
    for syn in synonyms(name):
        k = key_of(syn, lemmatize)
        if not k or k in keys:
            continue
        note_acronym(syn, k)
        n_k = knowledge.count([{k}])
        if n_base == 0 or n_k < max(min_support, 1):
            keys.add(k)  # nothing to test against, or too rare to distort p(c)
        elif set(k.split()) < set(base.split()):
            # A part of the name ("party" of "political party"): it always co-occurs
            # with the name, so PMI says nothing; it must stand for c most of the time.
            if knowledge.count([{k}, {base}]) / n_k >= alias_confidence:
                keys.add(k)
        elif _associated(knowledge, base, n_base, k, n_k):
            keys.add(k)
    core = frozenset(keys)
    n_core = knowledge.count([core])
    for cand in _candidates(name):
        k = key_of(cand, lemmatize)
        if not k or k in keys:
            continue
        note_acronym(cand, k)
        n_k = knowledge.count([{k}])
        if n_core == 0 and n_k < RARE_ACRONYM:
            keys.add(k)  # K cannot vouch for "STI", and cannot vouch against a rare one either
        elif n_k >= max(min_support, 1) and knowledge.count([{k}, core]) / n_k >= alias_confidence:
            keys.add(k)
    final = frozenset(keys)
    # An acronym taken on trust (K knows nothing of c) names c, but its documents are not c's.
    n_c = knowledge.count([final]) if final != core and n_core else n_core
    warning = ""
    if n_c < max(min_support, 1):
        # Its names are still risky wherever they appear; only inference by counts is lost.
        warning = (
            f"entity {name!r} occurs in {n_c} document(s) of the knowledge source (looked for: "
            f"{', '.join(sorted(final))}): its names and derived forms are replaced, but related terms "
            "cannot be judged by counts; add an alias the corpus knows, or a larger K"
        )
    # With no document at all, IC(c) is that of a term K has not seen (finite, the largest there is).
    ic = -math.log(n_c / knowledge.n_docs) if n_c else -math.log(1 / (knowledge.n_docs + 1))
    return Entity(name=name, keys=final, n_docs=n_c, ic=ic, acronyms=frozenset(acronyms & final), warning=warning)
