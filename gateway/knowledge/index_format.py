"""On-disk format of the local co-occurrence index.

    magic  b"SGIDX1\\n"
    u32    length of the JSON header, then the header
    then the sections the header lists, each zstd-compressed:
      vocab      keys, "\\n"-separated, in id order
      offsets    u64[n_terms + 1] byte offsets of each posting list in `postings`
      postings   per term, its sorted document ids as LEB128 varint gaps

Varint gaps are small for frequent terms (most postings) and the general
compressor on top removes most of what is left; see the note in the README for
the measured sizes.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import zstandard

from gateway.errors import IndexFormatError

MAGIC = b"SGIDX1\n"
FORMAT_VERSION = 1

U32Array = npt.NDArray[np.uint32]


def encode_gaps(doc_ids: U32Array) -> bytes:
    """Sorted unique ids -> LEB128 varints of their gaps (first gap from -1)."""
    if len(doc_ids) == 0:
        return b""
    ids = doc_ids.astype(np.int64)
    gaps = np.diff(ids, prepend=-1).astype(np.uint64)
    nbytes = np.ones(len(gaps), dtype=np.int64)
    for k in range(1, 5):
        nbytes += gaps >= (1 << (7 * k))
    ends = np.cumsum(nbytes)
    starts = ends - nbytes
    out = np.zeros(int(ends[-1]), dtype=np.uint8)
    for k in range(5):
        sel = nbytes > k
        if not sel.any():
            break
        byte = (gaps[sel] >> np.uint64(7 * k)) & np.uint64(0x7F)
        cont = (nbytes[sel] > k + 1).astype(np.uint64) << np.uint64(7)
        out[starts[sel] + k] = (byte | cont).astype(np.uint8)
    return out.tobytes()


def decode_gaps(buf: bytes | memoryview) -> U32Array:
    b = np.frombuffer(buf, dtype=np.uint8)
    if len(b) == 0:
        return np.zeros(0, dtype=np.uint32)
    if b.max() < 0x80:  # every gap below 128: the common case for frequent terms
        return (np.cumsum(b, dtype=np.int64) - 1).astype(np.uint32)
    ends = (b & 0x80) == 0
    group = np.cumsum(ends) - ends
    starts = np.flatnonzero(np.concatenate(([True], ends[:-1])))
    pos = np.arange(len(b)) - np.repeat(starts, np.diff(np.append(starts, len(b))))
    weights = (b & 0x7F).astype(np.float64) * np.exp2(7.0 * pos)
    gaps = np.bincount(group, weights=weights).astype(np.int64)
    return (np.cumsum(gaps) - 1).astype(np.uint32)


@dataclass(frozen=True, slots=True)
class IndexData:
    header: dict[str, Any]
    vocab: list[str]
    offsets: npt.NDArray[np.uint64]
    postings: bytes


def write_index(
    path: Path,
    postings: Mapping[str, U32Array],
    *,
    n_docs: int,
    meta: Mapping[str, Any],
    level: int = 19,
) -> dict[str, Any]:
    keys = sorted(postings)
    blobs = [encode_gaps(postings[k]) for k in keys]
    offsets = np.zeros(len(keys) + 1, dtype=np.uint64)
    offsets[1:] = np.cumsum([len(b) for b in blobs], dtype=np.uint64)
    cctx = zstandard.ZstdCompressor(level=level, threads=-1)
    sections = {
        "vocab": cctx.compress("\n".join(keys).encode("utf-8")),
        "offsets": cctx.compress(np.diff(offsets).astype(np.uint32).tobytes()),
        "postings": cctx.compress(b"".join(blobs)),
    }
    header: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "n_docs": n_docs,
        "n_terms": len(keys),
        "n_postings": int(sum(len(v) for v in postings.values())),
        "sections": {name: len(data) for name, data in sections.items()},
        **meta,
    }
    raw = json.dumps(header, sort_keys=True).encode("utf-8")
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(MAGIC)
        fh.write(struct.pack("<I", len(raw)))
        fh.write(raw)
        for name in ("vocab", "offsets", "postings"):
            fh.write(sections[name])
    tmp.replace(path)
    return header


def read_index(path: Path) -> IndexData:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise IndexFormatError(f"cannot read index {path}: {exc.strerror}") from exc
    if not data.startswith(MAGIC):
        raise IndexFormatError(f"{path} is not a sanigate index (bad magic)")
    try:
        (hlen,) = struct.unpack_from("<I", data, len(MAGIC))
        pos = len(MAGIC) + 4
        header = json.loads(data[pos : pos + hlen])
        pos += hlen
        if header.get("format") != FORMAT_VERSION:
            raise IndexFormatError(f"{path}: index format {header.get('format')}, expected {FORMAT_VERSION}")
        dctx = zstandard.ZstdDecompressor()
        parts: dict[str, bytes] = {}
        for name in ("vocab", "offsets", "postings"):
            size = header["sections"][name]
            parts[name] = dctx.decompress(data[pos : pos + size])
            pos += size
    except (ValueError, KeyError, struct.error, zstandard.ZstdError) as exc:
        raise IndexFormatError(f"{path}: corrupt index ({exc})") from exc
    vocab = parts["vocab"].decode("utf-8").split("\n") if header["n_terms"] else []
    offsets = np.zeros(len(vocab) + 1, dtype=np.uint64)
    offsets[1:] = np.cumsum(np.frombuffer(parts["offsets"], dtype=np.uint32), dtype=np.uint64)
    return IndexData(header=header, vocab=vocab, offsets=offsets, postings=parts["postings"])
