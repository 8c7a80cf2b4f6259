"""A verb written in the form of the verb it replaces ("bitten" -> "gripped", "causes" -> "makes").

LemmInflect's tables (from the SPECIALIST lexicon, with rules for words it lacks) give every form of
a lemma; the tag of the original form is the one whose form it is.
"""

from __future__ import annotations

import functools
from typing import Any

# When a form is several of them ("spread": VB, VBD, VBN), the one that reads in most places.
_TAG_ORDER = ("VBN", "VBD", "VBG", "VBZ", "VBP", "VB")


@functools.cache
def _lemminflect() -> Any:
    import lemminflect

    return lemminflect


def verb_tag(form: str) -> str:
    """The Penn tag of a verb form ("bitten": VBN); VB when the form is no verb LemmInflect knows."""
    li = _lemminflect()
    low = form.lower()
    for lemma in li.getAllLemmas(low, upos="VERB").get("VERB", ()):
        forms = li.getAllInflections(lemma, upos="VERB")
        for tag in _TAG_ORDER:
            if low in forms.get(tag, ()):
                return tag
    return "VB"


def conjugate(verb: str, like: str) -> str:
    """``verb`` (a lemma, possibly "pass on") in the form ``like`` has; the particle stays as it is."""
    head, sep, rest = verb.partition(" ")
    tag = verb_tag(like)
    if tag in ("VB", "VBP"):
        return verb
    forms = _lemminflect().getInflection(head, tag=tag)
    return (forms[0] if forms else head) + sep + rest
