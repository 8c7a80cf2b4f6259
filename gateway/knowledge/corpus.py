"""Reading corpora for the knowledge index: JSONL (.xz/.gz) or folders of text."""

from __future__ import annotations

import gzip
import json
import lzma
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from gateway.errors import InputError

MIN_PARAGRAPH_CHARS = 80


@dataclass(frozen=True, slots=True)
class Document:
    title: str
    text: str


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_corpus(path: Path) -> Iterator[Document]:
    """Documents of a JSONL file ({"title", "text"} a line) or a folder of .txt files."""
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            try:
                text = file.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            yield Document(title=file.stem, text=text)
        return
    if not path.exists():
        raise InputError(f"{path}: no such corpus file or folder")
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                yield Document(title=str(obj.get("title", "")), text=str(obj["text"]))
            except (ValueError, KeyError, AttributeError) as exc:
                raise InputError(f"{path}:{lineno}: not a JSON object with a 'text' field ({exc})") from exc


def paragraphs(text: str, min_chars: int = MIN_PARAGRAPH_CHARS) -> list[str]:
    """The counting unit: a paragraph, i.e. a line of at least ``min_chars``.

    Shorter lines (headings, list items) are joined to what follows, so that a
    heading counts together with the paragraph it introduces.
    """
    out: list[str] = []
    pending: list[str] = []
    size = 0
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        pending.append(line)
        size += len(line)
        if size >= min_chars:
            out.append("\n\n".join(pending))
            pending, size = [], 0
    if pending:
        out.append("\n\n".join(pending))
    return out
