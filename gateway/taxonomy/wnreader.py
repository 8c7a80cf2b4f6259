"""The part of nltk's WordNet reader sanigate uses, without importing nltk.

nltk's package imports all of nltk (17 MB of every worker, 0.6 s of its start) to read
four data files. Once ``wordnet.prepare_index`` has laid out the lemma index and the sense
counts as mapped tables, what is left is reading a synset's line at its offset and the
morphology rules, which is this module. It answers exactly as nltk's ``WordNetCorpusReader``
does for the calls sanigate makes (synsets, lemmas, morphy, synset by name, lemma counts,
hypernyms, derivations, pertainyms, depth, closure); ``tests/test_wnreader.py`` compares the
two on every noun lemma and a sample of the rest. nltk still prepares the tables once
(``wordnet.prepare_index``) and reads WordNet where no prepared table can be written.
"""

from __future__ import annotations

import gc
import mmap
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from gateway.mapped import KeyTable, MappedFile

POS_LIST = ("n", "v", "a", "r")
_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv", "s": "adj"}
_POS_NUMBERS = {"n": 1, "v": 2, "a": 3, "r": 4, "s": 5}
_SUBSTITUTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}  # fmt: skip
_SUBSTITUTIONS["s"] = _SUBSTITUTIONS["a"]
_QUOTED = re.compile(r"[\"].*?[\"]")
_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")
# Synsets kept parsed (about 2 KB each): the taxonomy keeps its answers per word above them (wordnet.py),
# so a worker that reads a few thousand synsets a day need not keep them all.
_MAX_SYNSETS = 2_000
# Lemmas kept decoded (a dict of lists, about 500 bytes each): the senses above them are cached per word too.
_MAX_DECODED = 10_000


class LemmaSummary(NamedTuple):
    lemmas: int  # len(lemmas(word))
    lower: int  # of them, named in lower case
    capitalised: int  # named with a capital
    ordinary_count: int  # the sense counts of the lower-case ones, summed


def _lemma_name(field: str) -> str:
    m = _MARKER.match(field)
    assert m is not None  # the pattern matches any string
    return m.group(1)


class MappedLemmas(Mapping[str, dict[str, list[int]]]):
    """nltk's lemma -> pos -> synset offsets, decoded from the mapped table on demand.

    A lemma WordNet lacks reads as an empty dict, as nltk's defaultdict would (without storing it).
    """

    def __init__(self, table: KeyTable) -> None:
        self._table = table
        self._decoded: dict[str, dict[str, list[int]]] = {}

    def __getitem__(self, lemma: str) -> dict[str, list[int]]:
        found = self._decoded.get(lemma)
        if found is not None:
            return found
        i = self._table.id_of(lemma)
        found = {}
        if i >= 0:
            for part in bytes(self._table.value(i)).decode("ascii").split(";"):
                pos, _, offsets = part.partition(":")
                found[pos] = [int(o) for o in offsets.split(",")] if offsets else []
        if len(self._decoded) < _MAX_DECODED:
            self._decoded[lemma] = found
        return found

    def __contains__(self, lemma: object) -> bool:
        return isinstance(lemma, str) and self._table.id_of(lemma) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


class _Root:
    """Where the database is, as nltk's reader gives it (``root.path``, ``root.join(name).path``)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self._dir = path

    def join(self, name: str) -> _Root:
        return _Root(self._dir / name)


class Lemma:
    __slots__ = ("_key", "_lex_id", "_lexname_index", "_name", "_reader", "_synset")

    def __init__(self, reader: WordNetReader, synset: Synset, name: str, lexname_index: int, lex_id: int) -> None:
        self._reader = reader
        self._synset = synset
        self._name = name
        self._lexname_index = lexname_index
        self._lex_id = lex_id
        self._key = ""

    def name(self) -> str:
        return self._name

    def key(self) -> str:
        return self._key

    def synset(self) -> Synset:
        return self._synset

    def count(self) -> int:
        return self._reader.lemma_count(self)

    def _related(self, symbol: str) -> list[Lemma]:
        found = []
        for pos, offset, index in self._synset._lemma_pointers.get((self._name, symbol), ()):
            target = self._reader.synset_from_pos_and_offset(pos, offset)
            if target is not None:
                found.append(target._lemmas[index])
        return found

    def derivationally_related_forms(self) -> list[Lemma]:
        return self._related("+")

    def pertainyms(self) -> list[Lemma]:
        return self._related("\\")

    def __repr__(self) -> str:
        return f"Lemma('{self._synset._name}.{self._name}')"


class Synset:
    __slots__ = ("__weakref__", "_definition", "_lemma_pointers", "_lemmas", "_max_depth", "_name", "_offset",
                 "_pointers", "_pos", "_reader")  # fmt: skip

    def __init__(self, reader: WordNetReader) -> None:
        self._reader = reader
        self._name = ""
        self._pos = ""
        self._offset = 0
        self._definition = ""
        self._lemmas: list[Lemma] = []
        self._pointers: dict[str, list[tuple[str, int]]] = {}
        self._lemma_pointers: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
        self._max_depth: int | None = None

    def name(self) -> str:
        return self._name

    def pos(self) -> str:
        return self._pos

    def offset(self) -> int:
        return self._offset

    def definition(self) -> str:
        return self._definition

    def lemmas(self) -> list[Lemma]:
        return list(self._lemmas)

    def lemma_names(self) -> list[str]:
        return [lemma._name for lemma in self._lemmas]

    def _related(self, symbol: str) -> list[Synset]:
        found = []
        for pos, offset in self._pointers.get(symbol, ()):
            target = self._reader.synset_from_pos_and_offset(pos, offset)
            if target is not None:
                found.append(target)
        return found

    def hypernyms(self) -> list[Synset]:
        return self._related("@")

    def instance_hypernyms(self) -> list[Synset]:
        return self._related("@i")

    def similar_tos(self) -> list[Synset]:
        return self._related("&")

    def max_depth(self) -> int:
        """The longest hypernym path to a root (WordNet 3.0's hypernyms hold no cycle)."""
        if self._max_depth is None:
            parents = self.hypernyms() + self.instance_hypernyms()
            self._max_depth = 1 + max(p.max_depth() for p in parents) if parents else 0
        return self._max_depth

    def closure(self, rel: Callable[[Synset], Iterable[Synset]], depth: int = -1) -> Iterator[Synset]:
        """Breadth first under ``rel``, each synset once, without this one (as nltk's)."""
        seen: set[Synset] = set()
        queue: deque[tuple[Synset, int]] = deque([(self, 0)])
        while queue:
            node, d = queue.popleft()
            if node in seen:
                continue
            if node != self:
                yield node
            seen.add(node)
            if d != depth:
                queue.extend((child, d + 1) for child in rel(node) if child not in seen)

    def __hash__(self) -> int:
        return hash(self._name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Synset) and self._name == other._name

    def __lt__(self, other: Synset) -> bool:
        return self._name < other._name

    def __repr__(self) -> str:
        return f"Synset('{self._name}')"


class WordNetReader:
    """Synsets read from the database files by offset, lemmas and sense counts from the prepared tables."""

    def __init__(self, database: Path, prepared: MappedFile) -> None:
        self.root = _Root(database)
        self._dir = database
        self._lemma_pos_offset_map = MappedLemmas(prepared.key_table("lemmas"))
        self._sense_counts = prepared.key_table("counts")
        self._data: dict[str, mmap.mmap] = {}
        self._exceptions: dict[str, dict[str, list[str]]] = {}
        self._synsets: dict[tuple[str, int], Synset | None] = {}
        self._lock = threading.Lock()

    # -- nltk's calls -------------------------------------------------------
    def synsets(self, lemma: str, pos: str | None = None) -> list[Synset]:
        lemma = lemma.lower()
        index = self._lemma_pos_offset_map
        found = []
        for p in POS_LIST if pos is None else pos:
            for form in self._morphy(lemma, p):
                for offset in index[form].get(p, []):
                    s = self.synset_from_pos_and_offset(p, offset)
                    if s is not None:
                        found.append(s)
        return found

    def lemmas(self, lemma: str, pos: str | None = None) -> list[Lemma]:
        lemma = lemma.lower()
        return [lm for s in self.synsets(lemma, pos) for lm in s._lemmas if lm._name.lower() == lemma]

    def synset(self, name: str) -> Synset:
        lemma, pos, number = name.lower().rsplit(".", 2)
        offset = self._lemma_pos_offset_map[lemma][pos][int(number) - 1]
        found = self.synset_from_pos_and_offset(pos, offset)
        if found is None:
            raise LookupError(f"no synset {name!r}")
        return found

    def morphy(self, form: str, pos: str | None = None) -> str | None:
        for p in [pos] if pos else POS_LIST:
            analyses = self._morphy(form, p)
            if analyses:
                return analyses[0]
        return None

    def all_synsets(self, pos: str | None = None) -> Iterator[Synset]:
        """Every synset of a part of speech in file order ("a" holds the satellites; "s" only them)."""
        for p in ("n", "v", "a", "r") if pos is None else (pos,):
            data = self._data_file(p)
            offset = 0
            while offset < len(data):
                end = data.find(b"\n", offset)
                end = len(data) if end < 0 else end
                if not data[offset : offset + 1].isspace():  # the licence at the top is indented
                    s = self.synset_from_pos_and_offset(p, offset)
                    if s is not None and (p != "s" or s._pos == "s"):
                        yield s
                offset = end + 1

    def all_lemma_names(self, pos: str | None = None) -> Iterator[str]:
        index = self._lemma_pos_offset_map
        return iter(index) if pos is None else (lemma for lemma in index if pos in index[lemma])

    def lemma_count(self, lemma: Lemma) -> int:
        i = self._sense_counts.id_of(lemma._key)
        return 0 if i < 0 else int(bytes(self._sense_counts.value(i)))

    def lemma_summary(self, lemma: str) -> LemmaSummary | None:
        """What ``lemmas(lemma)`` holds, counted from the lemma fields of the data lines alone (no synset parsed:
        the lexicon asks it of every capitalised word it meets); None where a satellite's head cannot be read."""
        lemma = lemma.lower()
        index = self._lemma_pos_offset_map
        total = named = lower = capitalised = 0
        for p in POS_LIST:
            for form in self._morphy(lemma, p):
                for offset in index[form].get(p, []):
                    if (line := self._line_at(p, offset)) is None:
                        continue
                    _offset, lexname, ss_type, n_hex, rest = line.split(" ", 4)
                    n_lemmas = int(n_hex, 16)
                    fields = rest.split(" ", 2 * n_lemmas)
                    for i in range(0, 2 * n_lemmas, 2):
                        name = _lemma_name(fields[i])
                        if name.lower() != lemma:
                            continue
                        named += 1
                        capitalised += name[:1].isupper()
                        if not name[:1].islower():
                            continue
                        lower += 1
                        head = ":"  # no head: "name%pos:lexname:id::"
                        if ss_type == "s":  # the key names the head: the first lemma of the first similar synset
                            found = self._head_of(fields[-1])
                            if found is None:
                                return None
                            head = found
                        key = f"{name}%{_POS_NUMBERS[ss_type]}:{int(lexname):02d}:{int(fields[i + 1], 16):02d}:{head}"
                        i_count = self._sense_counts.id_of(key.lower())
                        total += 0 if i_count < 0 else int(bytes(self._sense_counts.value(i_count)))
        return LemmaSummary(named, lower, capitalised, total)

    def part_counts(self, word: str) -> tuple[int, int] | None:
        """The sense counts of ``word``'s base forms in its noun synsets and in its other synsets (every synset
        ``synsets(word)`` gives; a lemma counts where it is named as a base form of its synset's part of speech),
        read from the data lines without parsing a synset: whether a word is mostly a noun is asked of every noun
        of a text (kin.py), and parsed synsets are kept (about 2 KB each). None where a satellite's head cannot be
        read."""
        word = word.lower()
        index = self._lemma_pos_offset_map
        bases = {p: {word, *self._morphy(word, p)} for p in POS_LIST}
        counts = [0, 0]
        for p in POS_LIST:
            for form in self._morphy(word, p):
                for offset in index[form].get(p, []):
                    if (line := self._line_at(p, offset)) is None:
                        continue
                    _offset, lexname, ss_type, n_hex, rest = line.split(" ", 4)
                    base = bases["a" if ss_type == "s" else ss_type]
                    n_lemmas = int(n_hex, 16)
                    fields = rest.split(" ", 2 * n_lemmas)
                    head: str | None = ":"  # no head: "name%pos:lexname:id::"
                    if ss_type == "s":  # the key names the head: the first lemma of the first similar synset
                        head = None
                    for i in range(0, 2 * n_lemmas, 2):
                        name = _lemma_name(fields[i])
                        if name.lower() not in base:
                            continue
                        if head is None:
                            head = self._head_of(fields[-1])
                            if head is None:
                                return None
                        key = f"{name}%{_POS_NUMBERS[ss_type]}:{int(lexname):02d}:{int(fields[i + 1], 16):02d}:{head}"
                        i_count = self._sense_counts.id_of(key.lower())
                        counts[ss_type != "n"] += 0 if i_count < 0 else int(bytes(self._sense_counts.value(i_count)))
        return counts[0], counts[1]

    def has_synset(self, word: str, pos: str) -> bool:
        """``bool(synsets(word, pos))``, without parsing one."""
        word = word.lower()
        index = self._lemma_pos_offset_map
        data = self._data_file(pos)
        for form in self._morphy(word, pos):
            for offset in index[form].get(pos, []):
                if data[offset : offset + 8] == f"{offset:08d}".encode():
                    return True
        return False

    def _head_of(self, pointers: str) -> str | None:
        """ "name:lex_id" of a satellite's head, from the pointer fields of its data line (``Synset._parse``)."""
        fields = pointers.split(" ")
        for i in range(1, 1 + 4 * int(fields[0]), 4):
            if fields[i] == "&" and fields[i + 3] == "0000":
                line = self._line_at(fields[i + 2], int(fields[i + 1]))
                if line is None:
                    return None
                first, lex_id = line.split(" ", 6)[4:6]
                return f"{_lemma_name(first)}:{int(lex_id, 16):02d}"
        return None

    def synset_from_pos_and_offset(self, pos: str, offset: int) -> Synset | None:
        cache_key = (pos, offset)
        if cache_key in self._synsets:
            return self._synsets[cache_key]
        line = self._line_at(pos, offset)
        found = None if line is None else self._parse(line)
        with self._lock:
            if len(self._synsets) >= _MAX_SYNSETS:
                self._synsets.clear()
                # A synset and its lemmas refer to each other: dropped, they are garbage only a full collection
                # frees, which a worker runs rarely (heap.py), while the cache fills again beside them.
                gc.collect()
            self._synsets[cache_key] = found
        return found

    # -- the database -------------------------------------------------------
    def _line_at(self, pos: str, offset: int) -> str | None:
        """The data line of the synset at ``offset``; None where no synset's line starts there."""
        data = self._data_file(pos)
        end = data.find(b"\n", offset)
        line = data[offset : end if end >= 0 else len(data)].decode("utf-8")
        return line if line[:8] == f"{offset:08d}" else None

    def _data_file(self, pos: str) -> mmap.mmap:
        name = _FILES[pos]
        found = self._data.get(name)
        if found is None:
            with open(self._dir / f"data.{name}", "rb") as fh:
                found = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)  # shared page cache, not the heap
            self._data[name] = found
        return found

    def _exception_map(self, pos: str) -> dict[str, list[str]]:
        name = _FILES[pos]
        found = self._exceptions.get(name)
        if found is None:
            found = {}
            with open(self._dir / f"{name}.exc", encoding="utf-8") as fh:
                for line in fh:
                    terms = line.split()
                    found[terms[0]] = terms[1:]
            self._exceptions[name] = found
        return found

    def _morphy(self, form: str, pos: str) -> list[str]:
        exceptions = self._exception_map(pos)
        if form in exceptions:
            forms = exceptions[form]
        else:
            forms = [form[: -len(old)] + new for old, new in _SUBSTITUTIONS[pos] if form.endswith(old)]
        index = self._lemma_pos_offset_map
        result: list[str] = []
        for f in [form, *forms]:
            if f in index and pos in index[f] and f not in result:
                result.append(f)
        return result

    def _parse(self, line: str) -> Synset:
        """A data file line (wndb(5)), as nltk's ``_synset_from_pos_and_line`` reads it."""
        s = Synset(self)
        columns, gloss = line.strip().split("|")
        s._definition = _QUOTED.sub("", gloss).strip().strip("; ")
        fields = columns.split()
        s._offset = int(fields[0])
        lexname_index = int(fields[1])
        s._pos = fields[2]
        n_lemmas = int(fields[3], 16)
        i = 4
        for _ in range(n_lemmas):
            m = _MARKER.match(fields[i])
            assert m is not None  # the pattern matches any string
            s._lemmas.append(Lemma(self, s, m.group(1), lexname_index, int(fields[i + 1], 16)))
            i += 2
        n_pointers = int(fields[i])
        i += 1
        for _ in range(n_pointers):
            symbol, offset, pos, ids = fields[i], int(fields[i + 1]), fields[i + 2], fields[i + 3]
            i += 4
            if ids == "0000":
                pointers = s._pointers.setdefault(symbol, [])
                if (pos, offset) not in pointers:  # nltk keeps them in a set
                    pointers.append((pos, offset))
            else:
                source = s._lemmas[int(ids[:2], 16) - 1]._name
                s._lemma_pointers.setdefault((source, symbol), []).append((pos, offset, int(ids[2:], 16) - 1))
        for lemma in s._lemmas:
            head_name = head_id = ""
            if s._pos == "s":
                head = s.similar_tos()[0]._lemmas[0]
                head_name, head_id = head._name, f"{head._lex_id:02d}"
            lemma._key = (
                f"{lemma._name}%{_POS_NUMBERS[s._pos]}:{lemma._lexname_index:02d}:{lemma._lex_id:02d}:"
                f"{head_name}:{head_id}"
            ).lower()
        first = s._lemmas[0]._name.lower()
        s._name = f"{first}.{s._pos}.{self._lemma_pos_offset_map[first][s._pos].index(s._offset) + 1:02d}"
        return s
