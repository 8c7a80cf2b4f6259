"""A compound built on a term the text rewrites shows that term: it is written as its head.

K counts "alcohol-related" apart from "alcohol", in a few paragraphs, so the compound is rarely a
clue of its own; but beside an "alcohol" a group or a paragraph's evidence replaced it gives the
reader back the word the text took out. Such a compound goes the way a compound the taxonomy lacks
goes (generalization.py, ``head-part``): its head ("related"), or what is above the head; when
nothing there may be written (the head is itself replaced in this text), it is redacted, as the part
it shows would be. Compounds built on c's own names are c's (derived.py) and judged before this.

The same holds for a phrase K counts as one key and the taxonomy lacks ("U.S. drug", "state flag"):
beside a "drug" the text replaced 73 times, the one "U.S. drug" left gave it back (``head-noun``:
"flag", or above "drug"). Not for a phrase the taxonomy knows ("physical condition"): that is a
term with a chain of its own, and one the engine itself writes as a generalization.
"""

from __future__ import annotations

from collections.abc import Collection

from gateway.model.derived import compound_parts
from gateway.model.detection import RoundState
from gateway.model.generalization import Generalizer, Risky
from gateway.model.terms import TermOccurrence

REASON = "compound-of-flagged"
_GLUE = frozenset("-/@.+=")  # what joins a piece to the rest of a longer token


def compounds_of_flagged(generalizer: Generalizer, state: RoundState, written: Collection[str] = ()) -> None:
    """Flag (adds to ``state.risky``) each compound or phrase of the round built on a term the round rewrites.

    ``written``: the keys of what earlier rounds wrote. A phrase holding one ("invisible city", where round one
    wrote "invisible" for "undetectable" and "city district" for "hollywood") is no compound of the writer's:
    the words met only in the engine's own output, and a decision on them would point at two of its edits."""
    text, risky, forbidden = state.text, state.risky, state.forbidden
    if not risky:
        return  # nothing rewritten: nothing is built on a term the round rewrites (and nothing is added below)
    for key, occs in state.by_key.items():
        if key in risky or not (built_on := _built_on(key, generalizer)):
            continue
        if written and " " in key and any(f" {w} " in f" {key} " for w in written):
            continue
        flagged = [k for p in built_on if (k := generalizer.key(p)) in risky and k != key]
        if not flagged or any(_glued(text, o) for o in occs):
            continue
        r = Risky(key, REASON, risky[flagged[0]].verdict, group=(flagged[0],))
        generalizer.start_chain(r, text, occs, state.tokens, state.context, state.entities, state.policy, forbidden)
        if not r.chain:
            continue  # no head to write it as ("5-year", "non-smoker"): it stays as K judged it
        risky[key] = r
        forbidden.add(key)
        state.safe.pop(key, None)


def _built_on(key: str, generalizer: Generalizer) -> list[str]:
    """The words a reader sees ``key`` built on, besides its head: a hyphenated compound's first parts, or every
    word of a phrase the taxonomy lacks (its head may be the word rewritten: "U.S. drug"); [] for neither."""
    if parts := compound_parts(key):
        return parts[:-1]
    if " " in key and not generalizer.taxonomy.senses(key):
        return key.split()
    return []


def _glued(text: str, o: TermOccurrence) -> bool:
    """The occurrence is a piece of a longer token: the tail of a longer compound ("46-year-old": K's key
    "year-old" with "year" flagged would become "46-old"), or a part of an address or a host name
    ("usrp-users-leave@lists.example.org", "usrp-users.lists.example.org"), which a rewrite would break."""
    before, after = text[o.start - 1 : o.start], text[o.end : o.end + 1]
    if (before and before in _GLUE) or (after and after in _GLUE and after != "."):
        return True
    return after == "." and text[o.end + 1 : o.end + 2].isalnum()  # a host name goes on; a sentence ends
