"""Bounds on what one message may cost: nesting, sizes, pages, time, memory."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from gateway.errors import LimitExceededError, UnreadableContentError


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    max_depth: int = 12  # MIME / message/rfc822 nesting
    max_parts: int = 500
    max_header_bytes: int = 256 * 1024  # all headers of one message together
    max_header_line: int = 64 * 1024  # one header field
    zip_max_entries: int = 5_000
    zip_max_total: int = 200 * 1024 * 1024  # uncompressed bytes of a DOCX
    zip_max_ratio: float = 200.0  # uncompressed / compressed, per entry
    pdf_max_pages: int = 300
    pdf_max_seconds: float = 30.0
    pdf_max_memory: int = 1024 * 1024 * 1024
    text_max_chars: int = 20_000_000


def check_zip(data: bytes, limits: Limits, *, part: str) -> zipfile.ZipFile:
    """Open a zip package after checking it is no zip bomb."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise UnreadableContentError(f"not a readable zip package ({exc})", part=part) from exc
    if len(infos) > limits.zip_max_entries:
        raise LimitExceededError(f"{len(infos)} entries in the package (limit {limits.zip_max_entries})", part=part)
    total = sum(i.file_size for i in infos)
    if total > limits.zip_max_total:
        raise LimitExceededError(
            f"{total} bytes uncompressed (limit {limits.zip_max_total}): a zip bomb or too large", part=part
        )
    for i in infos:
        if i.file_size > 1024 * 1024 and i.file_size > limits.zip_max_ratio * max(1, i.compress_size):
            raise LimitExceededError(
                f"entry {i.filename} expands {i.file_size / max(1, i.compress_size):.0f}x (limit "
                f"{limits.zip_max_ratio:.0f}x): a zip bomb",
                part=part,
            )
    return zf
