"""Read-only tables in one file that every process maps: string keys, hashed, with byte values.

A gateway runs several sanitizer processes that all need the same large,
read-only lookups (K's vocabulary and postings, WordNet's lemma index). Held as
Python dicts, each process pays for its own copy and for building it at start.
Laid out in a file and memory-mapped, the pages are the kernel's page cache,
shared by every process that maps them, and opening costs a few system calls.

A file is a magic, a little-endian u64 length and JSON header, then named
sections, each 8-byte aligned. A *key table* is five sections:

    NAME.keys      the keys, UTF-8, concatenated (in the order they were given)
    NAME.koff      u64[n + 1]: where each key starts in NAME.keys
    NAME.slots     u32[2^k]: open addressing by CRC-32 of the key, value id + 1 (0 = empty)
    NAME.vals      the values, concatenated
    NAME.voff      u64[n + 1]: where each value starts in NAME.vals

CRC-32 is stable across runs and Python versions (``hash`` is not), and
zlib computes it in C. The writer is deterministic: the same tables give the
same bytes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MAGIC = b"SGMAP1\n\0"
_ALIGN = 8


class MappedFormatError(ValueError):
    """The file is not a mapped table file, or is truncated."""


def _pad(n: int) -> int:
    return (-n) % _ALIGN


def _slot_count(n: int) -> int:
    size = 8
    while size < 2 * n:  # at most half full: short probe runs
        size *= 2
    return size


def hash_slots(encoded: Sequence[bytes]) -> npt.NDArray[np.uint32]:
    """The open-addressing slot array for keys given in id order."""
    size = _slot_count(len(encoded))
    mask = size - 1
    slots = np.zeros(size, dtype=np.uint32)
    view = slots.data  # item assignment through a memoryview is far cheaper than numpy's
    crc = zlib.crc32
    for i, kb in enumerate(encoded):
        h = crc(kb) & mask
        while view[h]:
            h = (h + 1) & mask
        view[h] = i + 1
    return slots


def key_table_sections(name: str, keys: Sequence[str], values: Sequence[bytes] | None = None) -> dict[str, bytes]:
    encoded = [k.encode("utf-8") for k in keys]
    koff = np.zeros(len(encoded) + 1, dtype=np.uint64)
    koff[1:] = np.cumsum([len(k) for k in encoded], dtype=np.uint64)
    out = {
        f"{name}.keys": b"".join(encoded),
        f"{name}.koff": koff.tobytes(),
        f"{name}.slots": hash_slots(encoded).tobytes(),
    }
    if values is not None:
        voff = np.zeros(len(values) + 1, dtype=np.uint64)
        voff[1:] = np.cumsum([len(v) for v in values], dtype=np.uint64)
        out[f"{name}.vals"] = b"".join(values)
        out[f"{name}.voff"] = voff.tobytes()
    return out


def mapped_chunks(header: Mapping[str, Any], sections: Mapping[str, bytes | memoryview]) -> list[bytes | memoryview]:
    """The bytes of a mapped file, in order (join them, or write them one by one)."""
    layout: dict[str, list[int]] = {}
    raw = b""
    # The header lists where each section is; its own length moves them, so settle it first.
    for _ in range(4):
        pos = len(MAGIC) + 8 + len(raw) + _pad(len(raw))
        layout = {}
        for sec_name, data in sections.items():
            layout[sec_name] = [pos, len(data)]
            pos += len(data) + _pad(len(data))
        new = json.dumps({**header, "sections": layout}, sort_keys=True).encode("utf-8")
        if new == raw:
            break
        raw = new
    chunks: list[bytes | memoryview] = [MAGIC, struct.pack("<Q", len(raw)), raw + b"\0" * _pad(len(raw))]
    for data in sections.values():
        chunks += [data, b"\0" * _pad(len(data))]
    return chunks


def write_mapped(path: Path, header: Mapping[str, Any], sections: Mapping[str, bytes | memoryview]) -> None:
    """Write atomically: readers in other processes see no file or the whole file."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            for chunk in mapped_chunks(header, sections):
                fh.write(chunk)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


class MappedFile:
    """A mapped table file (or the same bytes in memory, for small tables)."""

    def __init__(self, buf: mmap.mmap | bytes, *, origin: str, path: Path | None = None) -> None:
        self._buf = buf
        self.path = path
        self.view = memoryview(buf)
        if bytes(self.view[: len(MAGIC)]) != MAGIC:
            raise MappedFormatError(f"{origin}: not a sanigate mapped file")
        try:
            (hlen,) = struct.unpack_from("<Q", buf, len(MAGIC))
            start = len(MAGIC) + 8
            self.header: dict[str, Any] = json.loads(bytes(self.view[start : start + hlen]))
            self._sections: dict[str, list[int]] = self.header.pop("sections")
        except (ValueError, KeyError, struct.error) as exc:
            raise MappedFormatError(f"{origin}: corrupt header ({exc})") from exc
        for sec_name, (pos, size) in self._sections.items():
            if pos + size > len(self.view):
                raise MappedFormatError(f"{origin}: section {sec_name} runs past the end (truncated file)")

    @classmethod
    def open(cls, path: Path) -> MappedFile:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                raise MappedFormatError(f"{path}: empty file")
            return cls(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), origin=str(path), path=path)

    def section(self, name: str) -> memoryview:
        pos, size = self._sections[name]
        return self.view[pos : pos + size]

    def has(self, name: str) -> bool:
        return name in self._sections

    def array(self, name: str, dtype: type[np.generic]) -> npt.NDArray[Any]:
        return np.frombuffer(self.section(name), dtype=dtype)

    def key_table(self, name: str) -> KeyTable:
        return KeyTable(self, name)


class KeyTable:
    """Key -> id (and id -> key, id -> value) over a mapped key table; nothing is copied."""

    def __init__(self, f: MappedFile, name: str) -> None:
        self._keys = f.section(f"{name}.keys")
        self._koff = f.section(f"{name}.koff").cast("Q")
        self._slots = f.section(f"{name}.slots").cast("I")
        self._mask = len(self._slots) - 1
        self._vals = f.section(f"{name}.vals") if f.has(f"{name}.vals") else None
        self._voff = f.section(f"{name}.voff").cast("Q") if f.has(f"{name}.voff") else None

    def __len__(self) -> int:
        return len(self._koff) - 1

    def id_of(self, key: str) -> int:
        """The key's id, or -1."""
        kb = key.encode("utf-8", "surrogatepass")
        slots, koff, keys, mask = self._slots, self._koff, self._keys, self._mask
        h = zlib.crc32(kb) & mask
        while True:
            s = slots[h]
            if s == 0:
                return -1
            i = s - 1
            start = koff[i]
            end = koff[i + 1]
            if end - start == len(kb) and keys[start:end] == kb:
                return i
            h = (h + 1) & mask

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.id_of(key) >= 0

    def key(self, i: int) -> str:
        return bytes(self._keys[self._koff[i] : self._koff[i + 1]]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self)):
            yield self.key(i)

    def value(self, i: int) -> memoryview:
        assert self._vals is not None and self._voff is not None
        return self._vals[self._voff[i] : self._voff[i + 1]]

    def value_bounds(self) -> memoryview:
        assert self._voff is not None
        return self._voff


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """One process at a time prepares a file; the others wait and then find it made."""
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
