"""Memory-mapped tables: K's prepared copy and WordNet's prepared index give what the parsed originals give."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.knowledge import prepared
from gateway.knowledge.index_format import decode_gaps, read_index
from gateway.knowledge.local import LocalIndex
from gateway.mapped import MappedFile, MappedFormatError, key_table_sections, mapped_chunks, write_mapped
from gateway.taxonomy.wordnet import WordNet, _open_reader


@given(st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=60))
@settings(max_examples=60)
def test_key_table_finds_every_key_and_nothing_else(keys: list[str]) -> None:
    keys = [k for k in keys if k[:1] < "\ud800" or k[:1] > "\udfff"]  # lone surrogates are not UTF-8
    values = [k.encode("utf-8", "surrogatepass")[::-1] for k in keys]
    try:
        sections = key_table_sections("t", keys, values)
    except UnicodeEncodeError:
        return
    table = MappedFile(b"".join(mapped_chunks({}, sections)), origin="test").key_table("t")
    assert len(table) == len(keys)
    for i, k in enumerate(keys):
        assert table.id_of(k) == i and table.key(i) == k and bytes(table.value(i)) == values[i]
    assert table.id_of("\x00absent\x00") == -1
    assert list(table) == keys


def test_written_file_is_deterministic_and_truncation_is_refused(tmp_path: Path) -> None:
    sections = key_table_sections("t", ["b", "a", "los angeles"], [b"1", b"22", b"333"])
    write_mapped(tmp_path / "one", {"x": 1}, sections)
    write_mapped(tmp_path / "two", {"x": 1}, sections)
    assert (tmp_path / "one").read_bytes() == (tmp_path / "two").read_bytes()
    f = MappedFile.open(tmp_path / "one")
    assert f.header["x"] == 1 and f.key_table("t").id_of("los angeles") == 2
    data = (tmp_path / "one").read_bytes()
    (tmp_path / "cut").write_bytes(data[: len(data) - 9])
    with pytest.raises(MappedFormatError):
        MappedFile.open(tmp_path / "cut")
    (tmp_path / "other").write_bytes(b"PK\x03\x04" + data)
    with pytest.raises(MappedFormatError):
        MappedFile.open(tmp_path / "other")


def _assert_same_as_source(index: LocalIndex, source: Path) -> None:
    data = read_index(source)
    assert len(index) == len(data.vocab)
    for i, key in enumerate(data.vocab):
        ids = decode_gaps(data.postings[int(data.offsets[i]) : int(data.offsets[i + 1])])
        assert index.term_id(key) == i
        assert index.df(key) == len(ids)
        assert list(index._bitmap(i)) == ids.tolist()
    assert set(index.phrases()) == {k for k in data.vocab if " " in k}


def test_prepared_k_holds_the_source_postings(tiny_index_path: Path) -> None:
    _assert_same_as_source(LocalIndex(tiny_index_path), tiny_index_path)


def test_prepared_k_is_made_once_in_the_cache_and_shared(
    tiny_index_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prepared, "IN_MEMORY_BELOW", 0)
    first = LocalIndex(tiny_index_path, cache_dir=tmp_path)
    (made,) = tmp_path.glob("*.sgmap")
    stamp = made.stat().st_mtime_ns
    # Another process maps the same file instead of making its own.
    code = (
        "import sys; from pathlib import Path; from gateway.knowledge import prepared;"
        "prepared.IN_MEMORY_BELOW = 0; from gateway.knowledge.local import LocalIndex;"
        f"k = LocalIndex(Path({str(tiny_index_path)!r}), cache_dir=Path({str(tmp_path)!r}));"
        "print(k.df('hiv'), k.count([{'hiv'}, {'clinic'}]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["3", "2"]
    assert made.stat().st_mtime_ns == stamp and len(list(tmp_path.glob("*.sgmap"))) == 1
    _assert_same_as_source(first, tiny_index_path)


def test_a_damaged_cache_file_is_made_again(
    tiny_index_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prepared, "IN_MEMORY_BELOW", 0)
    LocalIndex(tiny_index_path, cache_dir=tmp_path)
    (made,) = tmp_path.glob("*.sgmap")
    made.write_bytes(made.read_bytes()[:100])
    again = LocalIndex(tiny_index_path, cache_dir=tmp_path)
    assert again.count([{"hiv"}, {"clinic"}]) == 2


def test_decoding_everything_at_once_matches_term_by_term() -> None:
    rng = np.random.default_rng(3)
    lists = [np.unique(rng.integers(0, 5_000_000, size=n)).astype(np.uint32) for n in (0, 1, 5, 300, 2, 0, 40_000)]
    from gateway.knowledge.index_format import IndexData, encode_gaps

    blobs = [encode_gaps(x) for x in lists]
    offsets = np.zeros(len(blobs) + 1, dtype=np.uint64)
    offsets[1:] = np.cumsum([len(b) for b in blobs])
    data = IndexData(header={}, vocab=[f"t{i}" for i in range(len(lists))], offsets=offsets, postings=b"".join(blobs))
    ids, bounds = prepared.decode_all(data)
    for i, x in enumerate(lists):
        assert ids[int(bounds[i]) : int(bounds[i + 1])].tolist() == x.tolist()


def test_prepared_wordnet_answers_as_nltk_parsing_it(wordnet: WordNet) -> None:
    root = str(Path(wordnet._wn.root.path).parent.parent)
    parsed = _open_reader(root, None)  # nltk's own parse of the index files
    names = sorted(parsed._lemma_pos_offset_map)
    sample = [*random.Random(5).sample(names, 400), "dog", "hiv", "los_angeles", "catholicism", "aids"]
    for name in sample:
        for pos in ("n", "v", "a", "s", "r"):
            assert wordnet._wn._lemma_pos_offset_map[name].get(pos) == parsed._lemma_pos_offset_map[name].get(pos)
        mine = [(s.name(), [(lemma.name(), lemma.count()) for lemma in s.lemmas()]) for s in wordnet._wn.synsets(name)]
        theirs = [(s.name(), [(lemma.name(), lemma.count()) for lemma in s.lemmas()]) for s in parsed.synsets(name)]
        assert mine == theirs
    assert "no such lemma" not in wordnet._wn._lemma_pos_offset_map
    assert wordnet._wn.synsets("dog")[0].lemmas()[0].count() == 42


def test_counts_with_an_entity_are_the_intersections_once_its_cooccurrences_are_known(tiny_index_path: Path) -> None:
    k = LocalIndex(tiny_index_path)
    entity = frozenset({"hiv", "aids", "not in k"})
    keys = [*read_index(tiny_index_path).vocab, "not in k either"]
    by_bitmaps = {key: k.count([frozenset({key}), entity]) for key in keys}
    k.cooccurrences(entity)
    assert k._cooc  # the lookup is in use
    assert {key: k.count([frozenset({key}), entity]) for key in keys} == by_bitmaps
    assert {key: k.count([entity, frozenset({key})]) for key in keys} == by_bitmaps
    assert by_bitmaps["antiretroviral"] == 3


def test_shared_tables_beside_k_are_kept_to_the_most_recently_used(
    tiny_index_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gateway.knowledge.local import MAX_SHARED_TABLES

    monkeypatch.setattr(prepared, "IN_MEMORY_BELOW", 0)  # the tiny K mapped from a file, as the shipped one is
    k = LocalIndex(tiny_index_path, cache_dir=tmp_path)
    assert k.mapped_path is not None
    n = len(read_index(tiny_index_path).vocab)

    def table(i: int) -> np.ndarray:
        return k.shared_table(f"test {i}", np.float64, lambda: np.full(n, float(i)))

    for i in range(MAX_SHARED_TABLES + 3):
        assert table(i)[0] == i
    files = list(k.mapped_path.parent.glob(f"{k.mapped_path.stem}.table-*.bin"))
    assert len(files) == MAX_SHARED_TABLES  # one file per name ever asked for, without the pruning
    assert table(0)[0] == 0 and table(MAX_SHARED_TABLES + 2)[0] == MAX_SHARED_TABLES + 2  # computed again / read
