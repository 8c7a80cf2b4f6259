"""K laid out for memory-mapping: prepared once from the shipped index, shared by every process.

The shipped index (``index_format``) is compressed: small to ship, and
byte-reproducible from the corpus. Decompressing it in every sanitizer process
costs each one its own copy (118 MB for the 20k-article K) and most of a
second. So the first process to open an index prepares a mapped copy in the
cache folder, named by the index's SHA-256, and every process maps that copy:

    terms           key table (``gateway.mapped``): the vocabulary, each key's
                    value its sorted document ids as u32 (so df = bytes / 4)
    phrase_prefixes key table: every proper word-prefix of a multi-word key
                    ("los" and "los angeles" of "los angeles county")
    first_words     the first words of multi-word keys, "\\n"-separated: small,
                    and read into a set, since it is asked for every token

Posting lists are decoded into bitmaps only when a count needs them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gateway.errors import IndexFormatError
from gateway.knowledge.index_format import IndexData, read_index
from gateway.mapped import MappedFile, MappedFormatError, file_lock, key_table_sections, mapped_chunks, write_mapped
from gateway.model.terms import MAX_PHRASE_TOKENS

PREPARED_FORMAT = 1
# Below this, preparing in memory is cheaper than a cache file (and tests' tiny indexes leave none behind).
IN_MEMORY_BELOW = 4 * 1024 * 1024


def default_cache_dir() -> Path:
    env = os.environ.get("SANIGATE_CACHE_DIR")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "sanigate" / "index"


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def decode_all(data: IndexData) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]]:
    """Every posting list as u32 document ids, and where each term's list starts (in ids).

    Vectorized over runs of terms at a time, so preparing a large K needs
    bounded memory beyond its output.
    """
    raw = np.frombuffer(data.postings, dtype=np.uint8)
    offsets = data.offsets.astype(np.int64)
    n_terms = len(offsets) - 1
    ends_cum = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum(raw < 0x80, out=ends_cum[1:])
    id_bounds = ends_cum[offsets]  # term i's ids are [id_bounds[i], id_bounds[i+1])
    out = np.empty(int(id_bounds[-1]), dtype=np.uint32)
    chunk_bytes = 1 << 24
    t = 0
    while t < n_terms:
        u = int(np.searchsorted(offsets, offsets[t] + chunk_bytes, side="right")) - 1
        u = min(max(u, t + 1), n_terms)
        b = raw[offsets[t] : offsets[u]]
        if len(b):
            ends = b < 0x80
            group: npt.NDArray[np.int64] = np.cumsum(ends) - ends
            starts = np.flatnonzero(np.concatenate(([True], ends[:-1])))
            pos = np.arange(len(b)) - np.repeat(starts, np.diff(np.append(starts, len(b))))
            weights = (b & 0x7F).astype(np.float64) * np.exp2(7.0 * pos)
            gaps = np.bincount(group, weights=weights).astype(np.int64)
            counts = np.diff(id_bounds[t : u + 1])
            cs = np.cumsum(gaps)
            first = id_bounds[t:u] - id_bounds[t]  # index in this chunk of each term's first id
            base = np.where(first > 0, cs[np.maximum(first - 1, 0)], 0)
            out[id_bounds[t] : id_bounds[u]] = (cs - np.repeat(base, counts) - 1).astype(np.uint32)
        t = u
    return out, id_bounds.astype(np.uint64)


def _phrase_parts(vocab: list[str]) -> tuple[list[str], list[str]]:
    prefixes: set[str] = set()
    firsts: set[str] = set()
    for key in vocab:
        if " " not in key:
            continue
        words = key.split(" ")
        if len(words) > MAX_PHRASE_TOKENS:
            continue
        firsts.add(words[0])
        for i in range(1, len(words)):
            prefixes.add(" ".join(words[:i]))
    return sorted(prefixes), sorted(firsts)


def prepare_bytes(source: Path) -> dict[str, bytes]:
    data = read_index(source)
    docs, bounds = decode_all(data)
    byte_bounds = (bounds * 4).astype(np.uint64)
    prefixes, firsts = _phrase_parts(data.vocab)
    sections = key_table_sections("terms", data.vocab)
    sections["terms.vals"] = docs.tobytes()
    sections["terms.voff"] = byte_bounds.tobytes()
    sections.update(key_table_sections("phrase_prefixes", prefixes))
    sections["first_words"] = "\n".join(firsts).encode("utf-8")
    return sections


def _header(source: Path, digest: str) -> dict[str, object]:
    return {"prepared": PREPARED_FORMAT, "source": source.name, "source_sha256": digest}


def open_prepared(source: Path, *, cache_dir: Path | None = None) -> tuple[MappedFile, dict[str, object]]:
    """The mapped copy of ``source`` (prepared now if there is none yet) and the source's header."""
    target_dir = cache_dir or default_cache_dir()
    try:
        size = source.stat().st_size
        digest = _known_digest(source, target_dir) if size >= IN_MEMORY_BELOW else file_digest(source)
    except OSError as exc:
        raise IndexFormatError(f"cannot read index {source}: {exc.strerror}") from exc
    source_header = read_index_header(source)
    if size < IN_MEMORY_BELOW:
        return _in_memory(source, digest), source_header
    target = target_dir / f"{source.stem}-{digest[:20]}.v{PREPARED_FORMAT}.sgmap"
    found = _try_open(target, digest)
    if found is not None:
        return found, source_header
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        with file_lock(target_dir / f".{target.name}.lock"):
            found = _try_open(target, digest)  # another process may have prepared it while we waited
            if found is None:
                write_mapped(target, _header(source, digest), prepare_bytes(source))
                found = _try_open(target, digest)
    except OSError:
        found = None  # a read-only cache: this process keeps its own copy
    return found or _in_memory(source, digest), source_header


def _known_digest(source: Path, cache_dir: Path) -> str:
    """The file's SHA-256, remembered by path, size, time and inode: hashing a large K at every start costs."""
    st = source.stat()
    stamp = f"{source.resolve()}\t{st.st_size}\t{st.st_mtime_ns}\t{st.st_ino}"
    memo = cache_dir / "digests.tsv"
    try:
        for line in memo.read_text(encoding="utf-8").splitlines():
            known, _, digest = line.rpartition("\t")
            if known == stamp:
                return digest
    except OSError:
        pass
    digest = file_digest(source)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with open(memo, "a", encoding="utf-8") as fh:  # one short line: appends do not interleave
            fh.write(f"{stamp}\t{digest}\n")
    except OSError:
        pass
    return digest


def _in_memory(source: Path, digest: str) -> MappedFile:
    chunks = mapped_chunks(_header(source, digest), prepare_bytes(source))
    return MappedFile(b"".join(chunks), origin=f"{source} (in memory)")


def _try_open(path: Path, digest: str) -> MappedFile | None:
    if not path.exists():
        return None
    try:
        f = MappedFile.open(path)
    except (OSError, MappedFormatError):
        return None
    if f.header.get("source_sha256") != digest or f.header.get("prepared") != PREPARED_FORMAT:
        return None
    return f


def read_index_header(path: Path) -> dict[str, object]:
    import json
    import struct

    from gateway.knowledge.index_format import FORMAT_VERSION, MAGIC

    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC) + 4)
            if not head.startswith(MAGIC):
                raise IndexFormatError(f"{path} is not a sanigate index (bad magic)")
            (hlen,) = struct.unpack_from("<I", head, len(MAGIC))
            header: dict[str, object] = json.loads(fh.read(hlen))
    except OSError as exc:
        raise IndexFormatError(f"cannot read index {path}: {exc.strerror}") from exc
    except (ValueError, struct.error) as exc:
        raise IndexFormatError(f"{path}: corrupt index ({exc})") from exc
    if header.get("format") != FORMAT_VERSION:
        raise IndexFormatError(f"{path}: index format {header.get('format')}, expected {FORMAT_VERSION}")
    return header
