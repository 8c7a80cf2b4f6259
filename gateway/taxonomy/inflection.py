"""A verb written in the form of the verb it replaces ("bitten" -> "gripped", "causes" -> "makes").

LemmInflect's tables (from the SPECIALIST lexicon, with rules for words it lacks) give every form of
a lemma; the tag of the original form is the one whose form it is.
"""

from __future__ import annotations

import functools
import gzip
from typing import Any

# When a form is several of them ("spread": VB, VBD, VBN), the one that reads in most places.
_TAG_ORDER = ("VBN", "VBD", "VBG", "VBZ", "VBP", "VB")


_VERB_TAGS = frozenset(("VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"))  # lemminflect's uposToTags("VERB")


@functools.cache
def _lemminflect() -> Any:
    """LemmInflect, with its tables read for verbs only.

    Only verbs are asked of it (lemmas with upos VERB; inflections with a verb's tag, whose
    alternates are verb tags too), and its tables of every word class are about 45 MB in each
    worker, most of them nouns. Read here line by line as its own loaders read them, keeping the
    verbs' entries: each answer is the one the whole tables give (tests/test_inflection.py).
    """
    import lemminflect
    from lemminflect.codecs.InflectionLUCodec import InflectionLUCodec
    from lemminflect.codecs.LemmaLUCodec import LemmaLUCodec
    from lemminflect.core.Inflections import Inflections
    from lemminflect.core.Lemmatizer import Lemmatizer
    from lemminflect.core.LexicalUtils import categoryToUPos

    lemmatizer, inflections = Lemmatizer(), Inflections()
    if not hasattr(lemmatizer, "lemma_dict"):
        lemmas: dict[str, dict[str, tuple[str, ...]]] = {}
        with gzip.open(lemmatizer.lemma_lu_fn, "rb") as f:
            for line in f:
                word, category, forms = LemmaLUCodec.fromString(line.decode())
                if categoryToUPos(category) == "VERB":
                    lemmas.setdefault(word, {})["VERB"] = forms
        lemmatizer.lemma_dict = lemmas
    if not hasattr(inflections, "infl_dict"):
        infl: dict[str, dict[str, tuple[str, ...]]] = {}
        with gzip.open(inflections.infl_lu_fn, "rb") as f:
            for line in f:
                word, _category, forms = InflectionLUCodec.fromString(line.decode())
                verb_forms = {tag: spellings for tag, spellings in forms.items() if tag in _VERB_TAGS}
                if verb_forms:
                    infl.setdefault(word, {}).update(verb_forms)
        inflections.infl_dict = InflectionLUCodec.updateForAuxMod(infl)
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
