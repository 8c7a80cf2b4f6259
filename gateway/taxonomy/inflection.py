"""A verb written in the form of the verb it replaces ("bitten" -> "gripped", "causes" -> "makes").

LemmInflect's tables (from the SPECIALIST lexicon, with rules for words it lacks) give every form of
a lemma; the tag of the original form is the one whose form it is.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from gateway.mapped import KeyTable, MappedFile, MappedFormatError, file_lock, key_table_sections, write_mapped

# When a form is several of them ("spread": VB, VBD, VBN), the one that reads in most places.
_TAG_ORDER = ("VBN", "VBD", "VBG", "VBZ", "VBP", "VB")


_VERB_TAGS = frozenset(("VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"))  # lemminflect's uposToTags("VERB")


INFLECTIONS_NAME = "sanigate-inflections.v1.sgmap"


@functools.cache
def _lemminflect(directory: Path | None = None) -> Any:
    """LemmInflect, with its tables of verbs only, mapped from ``directory`` where they can be laid out.

    Only verbs are asked of it (lemmas with upos VERB; inflections with a verb's tag, whose
    alternates are verb tags too), and its tables of every word class are about 45 MB in each
    worker, most of them nouns; its verbs alone, as dicts, are 16 MB in each. They are read once,
    line by line as its own loaders read them, keeping the verbs' entries, and laid out in
    ``directory`` (beside WordNet's prepared index) as a mapped file every worker shares; only
    ``get`` is asked of LemmInflect's tables, and each entry is decoded when asked. Without a
    directory (or where it cannot be written) the verbs' dicts are held in memory. Either way each
    answer is the one the whole tables give (tests/test_inflection.py). LemmInflect's lemmatizer
    and inflector are process-wide singletons: the first call installs their tables.
    """
    import lemminflect
    from lemminflect.core.Inflections import Inflections
    from lemminflect.core.Lemmatizer import Lemmatizer

    lemmatizer, inflections = Lemmatizer(), Inflections()
    if hasattr(lemmatizer, "lemma_dict") and hasattr(inflections, "infl_dict"):
        return lemminflect
    mapped = _mapped_tables(directory, lemminflect.__version__) if directory is not None else None
    if mapped is not None:
        lemmatizer.lemma_dict = MappedForms(mapped.key_table("lemmas"))
        inflections.infl_dict = MappedForms(mapped.key_table("inflections"))
    else:
        lemmatizer.lemma_dict, inflections.infl_dict = _verb_tables()
    return lemminflect


def _verb_tables() -> tuple[dict[str, dict[str, tuple[str, ...]]], dict[str, dict[str, tuple[str, ...]]]]:
    """LemmInflect's lemma and inflection tables, verbs' entries only, as its loaders would give them."""
    from lemminflect.codecs.InflectionLUCodec import InflectionLUCodec
    from lemminflect.codecs.LemmaLUCodec import LemmaLUCodec
    from lemminflect.core.Inflections import Inflections
    from lemminflect.core.Lemmatizer import Lemmatizer
    from lemminflect.core.LexicalUtils import categoryToUPos

    lemmas: dict[str, dict[str, tuple[str, ...]]] = {}
    with gzip.open(Lemmatizer().lemma_lu_fn, "rb") as f:
        for line in f:
            word, category, forms = LemmaLUCodec.fromString(line.decode())
            if categoryToUPos(category) == "VERB":
                lemmas.setdefault(word, {})["VERB"] = forms
    infl: dict[str, dict[str, tuple[str, ...]]] = {}
    with gzip.open(Inflections().infl_lu_fn, "rb") as f:
        for line in f:
            word, _category, forms = InflectionLUCodec.fromString(line.decode())
            verb_forms = {tag: spellings for tag, spellings in forms.items() if tag in _VERB_TAGS}
            if verb_forms:
                infl.setdefault(word, {}).update(verb_forms)
    return lemmas, InflectionLUCodec.updateForAuxMod(infl)


def _mapped_tables(directory: Path, version: str) -> MappedFile | None:
    """The verbs' tables laid out in ``directory`` (once, by whichever process comes first); None if it
    cannot be written."""
    path = directory / INFLECTIONS_NAME
    header = {"format": INFLECTIONS_NAME, "lemminflect": version}

    def opened() -> MappedFile | None:
        try:
            found = MappedFile.open(path)
        except (OSError, MappedFormatError):
            return None
        return found if all(found.header.get(k) == v for k, v in header.items()) else None

    found = opened()
    if found is not None:
        return found
    try:
        with file_lock(directory / f".{INFLECTIONS_NAME}.lock"):
            found = opened()  # another process may have laid it out while this one waited
            if found is None:
                lemmas, infl = _verb_tables()
                sections = {**_forms_sections("lemmas", lemmas), **_forms_sections("inflections", infl)}
                write_mapped(path, header, sections)
                found = opened()
    except OSError:
        return None
    return found


def _forms_sections(name: str, table: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, bytes]:
    keys = sorted(table)
    values = [json.dumps(table[k], ensure_ascii=False, separators=(",", ":")).encode("utf-8") for k in keys]
    return key_table_sections(name, keys, values)


class MappedForms:
    """One of LemmInflect's tables (a word -> {upos or tag: spellings}), read from a mapped key table.

    LemmInflect asks its tables only ``get(word, {})``; an entry is decoded when asked."""

    def __init__(self, table: KeyTable) -> None:
        self._table = table

    def get(self, word: str, default: Any = None) -> Any:
        i = self._table.id_of(word)
        if i < 0:
            return default
        forms: dict[str, list[str]] = json.loads(bytes(self._table.value(i)))
        return {k: tuple(v) for k, v in forms.items()}

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


def verb_tag(form: str, *, tables: Path | None = None) -> str:
    """The Penn tag of a verb form ("bitten": VBN); VB when the form is no verb LemmInflect knows."""
    li = _lemminflect(tables)
    low = form.lower()
    for lemma in li.getAllLemmas(low, upos="VERB").get("VERB", ()):
        forms = li.getAllInflections(lemma, upos="VERB")
        for tag in _TAG_ORDER:
            if low in forms.get(tag, ()):
                return tag
    return "VB"


def conjugate(verb: str, like: str, *, tables: Path | None = None) -> str:
    """``verb`` (a lemma, possibly "pass on") in the form ``like`` has; the particle stays as it is.

    ``tables``: where LemmInflect's verbs are (or may be) laid out for mapping (see ``_lemminflect``)."""
    head, sep, rest = verb.partition(" ")
    tag = verb_tag(like, tables=tables)
    if tag in ("VB", "VBP"):
        return verb
    forms = _lemminflect(tables).getInflection(head, tag=tag)
    return (forms[0] if forms else head) + sep + rest
