"""WordNet 3.0 from Debian's ``wordnet-base``, read by wnreader.py over tables nltk prepares once.

Debian ships the WordNet database under /usr/share/wordnet but without the
``lexnames`` file nltk needs, and nltk refuses to read files outside one of
its data roots (symlinks included). So on first use we lay out a data root of
our own (a copy of the database plus ``lexnames``) in a cache folder, and read
WordNet from there.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway.errors import TaxonomyError
from gateway.mapped import MappedFile, MappedFormatError, file_lock, key_table_sections, write_mapped
from gateway.model.measure import BoundedCache
from gateway.model.taxonomy import Generalization, Sense
from gateway.taxonomy.inflection import conjugate
from gateway.taxonomy.wnreader import MappedLemmas, WordNetReader

if TYPE_CHECKING:
    from gateway.taxonomy.wnreader import Synset

DEBIAN_WORDNET = Path("/usr/share/wordnet")
_DB_FILES = (
    "data.adj data.adv data.noun data.verb index.adj index.adv index.noun index.verb "
    "adj.exc adv.exc noun.exc verb.exc cntlist.rev"
).split()

# WordNet 3.0's lexicographer files, in file-number order (wndb(5)).
_LEXNAMES = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1),
    ("noun.animal", 1), ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1),
    ("noun.cognition", 1), ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1),
    ("noun.food", 1), ("noun.group", 1), ("noun.location", 1), ("noun.motive", 1),
    ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1), ("noun.plant", 1),
    ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1),
    ("verb.body", 2), ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2),
    ("verb.competition", 2), ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2),
    ("verb.emotion", 2), ("verb.motion", 2), ("verb.perception", 2), ("verb.possession", 2),
    ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2), ("adj.ppl", 3),
)  # fmt: skip

# Generalizing past these says nothing at all; an answer that far up is a redaction.
_TOO_GENERAL = frozenset(
    "entity.n.01 physical_entity.n.01 abstraction.n.06 object.n.01 whole.n.02 "
    "thing.n.12 matter.n.03 psychological_feature.n.01 attribute.n.02 relation.n.01 "
    "measure.n.02 group.n.01 communication.n.02 causal_agent.n.01 living_thing.n.01 "
    "organism.n.01 artifact.n.01 unit.n.03 location.n.01 region.n.03".split()
)


def default_data_root() -> Path:
    env = os.environ.get("SANIGATE_WORDNET_ROOT")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "sanigate" / "nltk_data"


def prepare_data_root(root: Path, source: Path = DEBIAN_WORDNET) -> Path:
    """Lay out ``root/corpora/wordnet`` from ``source``; idempotent."""
    target = root / "corpora" / "wordnet"
    if (target / "lexnames").exists() and (target / "data.noun").exists():
        return target
    missing = [f for f in _DB_FILES if not (source / f).is_file()]
    if missing:
        raise TaxonomyError(
            f"WordNet database not found in {source} (missing {', '.join(missing[:3])}); "
            "install Debian's wordnet-base package (apt-get install wordnet-base)"
        )
    tmp = target.with_name(f"wordnet.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in _DB_FILES:
        shutil.copyfile(source / name, tmp / name)
    with open(tmp / "lexnames", "w", encoding="ascii") as fh:
        for number, (name, pos) in enumerate(_LEXNAMES):
            fh.write(f"{number:02d}\t{name}\t{pos}\n")
    try:
        tmp.rename(target)
    except OSError:  # another process won the race; its copy is as good as ours
        shutil.rmtree(tmp, ignore_errors=True)
    return target


_LOAD_LOCK = threading.Lock()
# Words whose senses (and chains) a worker keeps: a few MB; a text's words, round after round.
ANSWER_CACHE = 4_000
# Words has_senses answered (about 100 bytes each): a worker's everyday nouns.
NOUN_CACHE = 10_000
# nltk parses every index file into a dict of dicts at start (1-3 s, ~80 MB per
# process) and binary-searches cntlist.rev on disk for every lemma count. We do
# that once, and lay the result out for memory-mapping beside the database.
PREPARED_NAME = "sanigate-index.v1.sgmap"


def _reader_class(prepared: MappedFile | None) -> Any:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _Reader(WordNetCorpusReader):  # type: ignore[misc]
        # nltk maps every WordNet to 3.0 through index.sense, which Debian
        # does not ship; we read 3.0 itself and use no multilingual data.
        def map_wn(self, version: str = "wordnet") -> None:
            return None

        def _scan_satellites(self) -> None:
            if prepared is None:
                super()._scan_satellites()

        def _load_lemma_pos_offset_map(self) -> None:
            if prepared is None:
                super()._load_lemma_pos_offset_map()
            else:
                self._lemma_pos_offset_map = MappedLemmas(prepared.key_table("lemmas"))
                self._sense_counts = prepared.key_table("counts")

        def lemma_count(self, lemma: Any) -> int:
            if prepared is None or lemma._lang != "eng":
                return int(super().lemma_count(lemma))
            i = self._sense_counts.id_of(lemma._key)
            return 0 if i < 0 else int(bytes(self._sense_counts.value(i)))

    return _Reader


def prepare_index(target: Path) -> Path:
    """Parse the database once with nltk and lay out what it parses at every start."""
    path = target / PREPARED_NAME
    if path.exists():
        return path
    with file_lock(target / f".{PREPARED_NAME}.lock"):
        if not path.exists():  # another process may have made it while we waited
            _write_prepared(target, path)
    return path


def _write_prepared(target: Path, path: Path) -> None:
    reader = _open_reader(str(target.parent.parent), None)
    lemma_map = reader._lemma_pos_offset_map
    lemmas = sorted(lemma_map)
    values = [
        ";".join(f"{pos}:{','.join(map(str, offs))}" for pos, offs in sorted(lemma_map[lemma].items())).encode("ascii")
        for lemma in lemmas
    ]
    counts: dict[str, bytes] = {}
    with open(target / "cntlist.rev", encoding="utf-8") as fh:
        for line in fh:
            key, _, count = line.rstrip("\n").rpartition(" ")
            sense_key = key.rsplit(" ", 1)[0]
            counts.setdefault(sense_key, count.encode("ascii"))
    count_keys = sorted(counts)
    sections = key_table_sections("lemmas", lemmas, values)
    sections.update(key_table_sections("counts", count_keys, [counts[k] for k in count_keys]))
    write_mapped(path, {"wordnet": "3.0", "prepared": 1}, sections)


def _open_reader(root: str, prepared: MappedFile | None) -> Any:
    import nltk

    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _reader_class(prepared)(nltk.data.find("corpora/wordnet"), None)


@functools.cache
def _load_reader(root: str) -> Any:
    target = Path(root) / "corpora" / "wordnet"
    try:
        prepared = MappedFile.open(prepare_index(target))
    except (OSError, MappedFormatError):
        return _open_reader(root, None)  # a read-only data root without the prepared index: nltk parses it
    # Our reader over the prepared tables: nltk's import is 17 MB of every worker (wnreader.py).
    return WordNetReader(target, prepared)


PERTAINYMS_NAME = "sanigate-pertainyms.v1.json"


def load_pertainyms(reader: Any) -> dict[str, tuple[str, ...]]:
    """The reverse of WordNet's pertainym pointers, laid out once beside the database (a full scan is seconds)."""
    target = Path(reader.root.path)
    path = target / PERTAINYMS_NAME
    try:
        return {k: tuple(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}
    except (OSError, ValueError):
        pass
    table: dict[str, list[str]] = {}
    for synset in reader.all_synsets("a"):
        for lemma in synset.lemmas():
            for noun in lemma.pertainyms():
                names = table.setdefault(noun.synset().name(), [])
                if lemma.name() not in names:
                    names.append(lemma.name())
    try:
        with file_lock(target / f".{PERTAINYMS_NAME}.lock"):
            tmp = path.with_name(f"{PERTAINYMS_NAME}.tmp{os.getpid()}")
            tmp.write_text(json.dumps(table, sort_keys=True), encoding="utf-8")
            tmp.replace(path)
    except OSError:
        pass  # a read-only data root: scanned again by the next process
    return {k: tuple(v) for k, v in table.items()}


@dataclass(frozen=True, slots=True)
class _Candidate:
    synset: Synset
    score: float


# Words whose lemma is kept (about 150 bytes each), the first met: a worker's everyday vocabulary. Bounds
# that a long-running worker reaches: fill-and-stop caches hold what they held at the bound for its life.
LEMMA_CACHE = 30_000


class WordNet:
    """Lemmatizer and taxonomy over WordNet 3.0."""

    def __init__(self, data_root: Path | None = None, *, source: Path = DEBIAN_WORDNET) -> None:
        root = data_root or default_data_root()
        with _LOAD_LOCK:
            prepare_data_root(root, source)
            self._wn = _load_reader(str(root))
        # LemmInflect's verbs, laid out beside the prepared index at first use (inflection.py).
        self._inflections = root / "corpora" / "wordnet"
        self._lemma_cache: dict[str, str] = {}
        self._plural_exceptions: dict[str, str] | None = None
        self._pertainyms: Mapping[str, tuple[str, ...]] | None = None
        # nltk's reader seeks in shared file objects: one thread at a time.
        self._lock = threading.RLock()
        # The taxonomy's answers, which only WordNet's files decide: a text asks the same word's senses and
        # chains again for every occurrence, round and paragraph that lowers it.
        self._sense_lists: BoundedCache[tuple[str, str], tuple[Sense, ...]] = BoundedCache(ANSWER_CACHE)
        self._chains: BoundedCache[tuple[str, str | None], tuple[Generalization, ...]] = BoundedCache(ANSWER_CACHE)
        self._nouns: BoundedCache[str, bool] = BoundedCache(NOUN_CACHE)  # has_senses' answers

    # -- lemmatizer ---------------------------------------------------------
    def lemmatize(self, word: str) -> str:
        """Noun reading first, then adjective, verb, adverb: "lives" -> "life"."""
        cached = self._lemma_cache.get(word)
        if cached is not None:
            return cached
        lemma = word
        if word.isalpha():
            with self._lock:
                for pos in ("n", "a", "v", "r"):
                    found = self._wn.morphy(word, pos)
                    if found:
                        lemma = found
                        break
        if len(self._lemma_cache) < LEMMA_CACHE:
            self._lemma_cache[word] = lemma
        return lemma

    def plural(self, noun: str) -> str:
        """Plural of a (possibly multi-word) noun; irregular forms from WordNet."""
        if self._plural_exceptions is None:
            table: dict[str, str] = {}
            with open(self._wn.root.join("noun.exc").path, encoding="utf-8") as fh:
                for line in fh:
                    parts = line.split()
                    if len(parts) >= 2 and parts[1] not in table:
                        table[parts[1]] = parts[0]
            self._plural_exceptions = table
        head, _, last = noun.rpartition(" ")
        low = last.lower()
        if low in self._plural_exceptions:
            out = self._plural_exceptions[low]
        elif low.endswith(("s", "x", "z", "ch", "sh")):
            out = low + "es"
        elif low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
            out = low[:-1] + "ies"
        else:
            out = low + "s"
        if last[:1].isupper():
            out = out[:1].upper() + out[1:]
        return f"{head} {out}" if head else out

    def conjugate(self, verb: str, like: str) -> str:
        return conjugate(verb, like, tables=self._inflections)

    def multiword_nouns(self) -> Iterator[str]:
        for name in self._wn.all_lemma_names(pos="n"):
            if "_" in name:
                yield name.replace("_", " ")

    # -- taxonomy -----------------------------------------------------------
    def senses(self, term: str) -> list[Sense]:
        return list(self._sense_lists.get(("n", term), self._sense_list))

    def has_senses(self, term: str) -> bool:
        """``bool(senses(term))``. Asked of every noun of a text whose kin is sought (kin.py): for a word WordNet's
        prepared tables hold, answered from the data lines without parsing a synset or building its senses (both
        kept: 2 KB a synset, a worker's memory filled with the nouns of its mail)."""
        known = self._sense_lists.peek(("n", term))
        if known is not None:
            return bool(known)
        if " " in term or not isinstance(self._wn, WordNetReader):
            return bool(self.senses(term))
        return self._nouns.get(term, self._has_senses)

    def _has_senses(self, term: str) -> bool:
        reader = self._wn
        assert isinstance(reader, WordNetReader)  # has_senses asks nltk's reader through senses()
        with self._lock:
            counts = reader.part_counts(term)
            if counts is None:  # a satellite's head unread: as senses() reads it
                return bool(self._senses(term))
            noun, other = counts
            return other <= noun and reader.has_synset(term, "n")

    def _sense_list(self, question: tuple[str, str]) -> tuple[Sense, ...]:
        pos, term = question
        with self._lock:
            return tuple(self._senses(term) if pos == "n" else self._other_senses(term))

    def _chain_of(self, question: tuple[str, str | None]) -> tuple[Generalization, ...]:
        with self._lock:
            return tuple(self._generalizations(*question))

    def _senses(self, term: str) -> list[Sense]:
        """Noun senses of ``term``; none when the word is mostly not a noun.

        Without a part-of-speech tagger, "opposite" in "opposite Dustin
        Hoffman" would be generalized as the noun "opposite" (-> "word").
        SemCor counts say how the word is mostly used: when its other parts of
        speech are more frequent than its noun senses, a noun generalization
        is more likely wrong than right, and the term is redacted instead.
        """
        wanted = term.replace(" ", "_").lower()
        if " " not in term and self._mostly_not_noun(wanted):
            return []
        out: list[Sense] = []
        for s in self._noun_synsets(term):
            # Frequency and capitalization of the lemma the text used, not of
            # the synset's other lemmas ("mass" in batch.n.02 is rare).
            own = [lemma for lemma in s.lemmas() if lemma.name().lower() == wanted] or list(s.lemmas())
            out.append(
                Sense(
                    id=s.name(),
                    lemmas=tuple(_display(n) for n in s.lemma_names()),
                    gloss=s.definition(),
                    is_instance=bool(s.instance_hypernyms()),
                    frequency=sum(lemma.count() for lemma in own),
                    proper=any(lemma.name()[:1].isupper() for lemma in own),
                    kinds=tuple(
                        _display(n) for h in (*s.instance_hypernyms(), *s.hypernyms()) for n in h.lemma_names()[:2]
                    ),
                )
            )
        return out

    def _mostly_not_noun(self, word: str) -> bool:
        """By the counts of the word's base form in each part of speech ("causes": the verb "cause")."""
        counts = {"n": 0, "other": 0}
        # Every base form ("conditions" is a noun of its own and the plural of "condition").
        bases = {pos: {word, *self._wn._morphy(word, pos)} for pos in ("n", "v", "a", "r")}
        for s in self._wn.synsets(word):
            base = bases["a" if s.pos() == "s" else s.pos()]
            for lemma in s.lemmas():
                if lemma.name().lower() in base:
                    counts["n" if s.pos() == "n" else "other"] += lemma.count()
        return counts["other"] > counts["n"]

    def synonyms(self, term: str) -> set[str]:
        with self._lock:
            return self._synonyms(term)

    def _synonyms(self, term: str) -> set[str]:
        """Lexicalizations of ``term``: synonyms and derived forms of its senses.

        Only senses whose lemmas carry the name itself count: synsets() also
        finds senses of the lemmatised form ("AIDS" -> aid). Derived nouns and
        adjectives are names of the same thing in text ("Catholicism" is
        written "Catholic" far more often), verbs are not.
        """
        names: set[str] = set()
        wanted = term.replace(" ", "_").lower()
        for s in self._noun_synsets(term):
            lemmas = s.lemmas()
            if not any(lemma.name().lower() == wanted for lemma in lemmas):
                continue
            for lemma in lemmas:
                names.add(_display(lemma.name()))
                for d in lemma.derivationally_related_forms():
                    if d.synset().pos() in ("n", "a", "s"):
                        names.add(_display(d.name()))
        return names

    def generalizations(self, term: str, sense: str | None = None) -> list[Generalization]:
        return list(self._chains.get((term, sense), self._chain_of))

    def _generalizations(self, term: str, sense: str | None) -> list[Generalization]:
        if sense is not None and ".n." not in sense:
            other = next((s for s in self._other_synsets(term) if s.name() == sense), None)
            if other is None:
                return []
            return list(self._verb_chain(other) if other.pos() == "v" else self._adjective_chain(other, term))
        synsets = self._noun_synsets(term)
        if not synsets:
            return []
        chosen = next((s for s in synsets if s.name() == sense), synsets[0])
        return list(self._chain(chosen))

    def other_senses(self, term: str) -> list[Sense]:
        return list(self._sense_lists.get(("o", term), self._sense_list))

    def _other_senses(self, term: str) -> list[Sense]:
        return [
            Sense(
                id=s.name(),
                lemmas=tuple(_display(n) for n in s.lemma_names()),
                gloss=s.definition(),
                frequency=sum(lemma.count() for lemma in self._own_lemmas(s, term)),
                pos="v" if s.pos() == "v" else "a",
            )
            for s in self._other_synsets(term)
        ]

    def _other_synsets(self, term: str) -> list[Synset]:
        if " " in term or not term.isalpha():
            return []
        return [s for s in self._wn.synsets(term.lower()) if s.pos() in ("v", "a", "s")]

    def _own_lemmas(self, synset: Synset, word: str) -> list[Any]:
        """The synset's lemmas that are the word itself (or its base form for that part of speech)."""
        low = word.lower()
        base = self._wn.morphy(low, synset.pos()) or low
        return [lemma for lemma in synset.lemmas() if lemma.name().lower() in (low, base)]

    def _verb_chain(self, synset: Synset) -> Iterator[Generalization]:
        """A verb's hypernyms ("transmit" -> "transfer" -> "move"), most specific first."""
        seen: set[str] = set()
        current = synset
        while parents := current.hypernyms():
            current = parents[0]
            if current.name() in seen:
                return
            seen.add(current.name())
            lemmas = tuple(_display(n) for n in current.lemma_names())
            yield Generalization(term=lemmas[0], source=f"wordnet:{current.name()}", lexicalizations=lemmas, pos="v")

    def _adjective_chain(self, synset: Synset, word: str) -> Iterator[Generalization]:
        """An adjective's generalizations, as adjectives.

        WordNet has no hypernyms for adjectives. A relational adjective pertains to a noun ("viral" to
        "virus", "Methodist" to "Methodist Church"): the adjectives that pertain to that noun's hypernyms
        generalize it ("Methodist" -> "Protestant" -> "Christian"). A satellite ("tropical", hot) has a
        head adjective that says less ("equatorial" -> ...): it comes last.
        """
        seen: set[str] = set()
        pertaining = self._pertaining()
        for lemma in self._own_lemmas(synset, word) or synset.lemmas():
            for noun in lemma.pertainyms():
                for g in self._chain(noun.synset()):
                    name = g.source.removeprefix("wordnet:")
                    for adj in pertaining.get(name, ()):
                        if adj.lower() not in seen:
                            seen.add(adj.lower())
                            yield Generalization(term=_display(adj), source=f"wordnet:{name}/pertainym", pos="a")
                    if g.term.lower() not in seen and " " not in g.term:
                        # No adjective for it: the noun itself, as English puts one before another
                        # ("viral infection" -> "microorganism infection"); a phrase does not read so.
                        seen.add(g.term.lower())
                        yield Generalization(term=g.term, source=g.source, lexicalizations=g.lexicalizations, pos="a")
        for head in synset.similar_tos() if synset.pos() == "s" else ():
            for n in head.lemma_names()[:1]:
                if n.lower() not in seen and n.lower() != word.lower():
                    seen.add(n.lower())
                    lemmas = tuple(_display(x) for x in head.lemma_names())
                    yield Generalization(term=_display(n), source=f"wordnet:{head.name()}", lexicalizations=lemmas,
                                         pos="a")  # fmt: skip

    def _pertaining(self) -> Mapping[str, tuple[str, ...]]:
        """Noun synset -> the adjectives that pertain to it; WordNet stores only the other direction."""
        if self._pertainyms is None:
            self._pertainyms = load_pertainyms(self._wn)
        return self._pertainyms

    def _noun_synsets(self, term: str) -> Sequence[Synset]:
        query = term.replace(" ", "_")
        try:
            return list(self._wn.synsets(query, pos="n"))
        except Exception as exc:  # nltk raises bare errors on odd input
            raise TaxonomyError(f"WordNet lookup failed for {term!r}: {exc}") from exc

    def _chain(self, synset: Synset) -> Iterator[Generalization]:
        """Most specific first; instance hypernyms before class hypernyms.

        Where a synset has several parents we follow the one with the deepest
        path, which keeps the steps fine-grained (utility).
        """
        seen: set[str] = set()
        current = synset
        while True:
            parents = list(current.instance_hypernyms()) + list(current.hypernyms())
            if not parents:
                return
            current = max(parents, key=lambda p: (p.max_depth(), -parents.index(p)))
            if current.name() in seen or current.name() in _TOO_GENERAL:
                return
            seen.add(current.name())
            lemmas = tuple(_display(n) for n in current.lemma_names())
            yield Generalization(term=lemmas[0], source=f"wordnet:{current.name()}", lexicalizations=lemmas)


def _display(lemma_name: str) -> str:
    return lemma_name.replace("_", " ")
