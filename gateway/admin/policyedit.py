"""Feedback from review to policy: add a term to a policy's allow or deny list in the config file.

The file is edited with tomlkit so that its comments and layout survive; the
previous version is kept beside it; the new text must parse as a valid
configuration before it replaces the old one (atomically). The running
gateway picks the change up on its next reload (SIGHUP).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import tomlkit

from gateway.config import parse_config
from gateway.errors import ConfigError, InputError

ListName = Literal["allow", "deny"]


@dataclass(frozen=True, slots=True)
class PolicyChange:
    policy: str
    term: str
    list: ListName
    backup: Path
    removed_from_other: bool


def add_term(config_path: Path, *, policy: str, term: str, to: ListName, clock: float | None = None) -> PolicyChange:
    term = " ".join(term.split())
    if not term:
        raise InputError("no term given")
    if to not in ("allow", "deny"):
        raise InputError(f"a term goes to the allow or deny list, not {to!r}")
    text = read_config(config_path)
    doc = tomlkit.parse(text)
    policies = doc.get("policies")
    if policies is None or policy not in policies:
        raise InputError(f"{config_path}: no policy {policy!r}")
    table = policies[policy]
    other: ListName = "deny" if to == "allow" else "allow"
    removed = False
    if other in table and term in [str(t) for t in table[other]]:
        table[other] = [t for t in table[other] if str(t) != term]
        removed = True
    if to not in table:
        table[to] = tomlkit.array()
    if term not in [str(t) for t in table[to]]:
        table[to].append(term)
    backup = commit_edit(config_path, text, tomlkit.dumps(doc), clock=clock)
    return PolicyChange(policy, term, to, backup, removed)


def read_config(config_path: Path) -> str:
    """The configuration's text, to edit and then ``commit_edit``."""
    try:
        return config_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{config_path}: cannot read ({exc.strerror})") from exc


def commit_edit(config_path: Path, old: str, new: str, *, clock: float | None = None) -> Path:
    """Replace the configuration by ``new`` if it is valid, keeping ``old`` beside it; the backup's path."""
    parse_config(new, source=str(config_path), base=config_path.parent)  # never write a file the gateway refuses
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(clock if clock is not None else time.time()))
    backup = config_path.with_name(f"{config_path.name}.{stamp}.bak")
    mode = config_path.stat().st_mode & 0o777
    _write(backup, old, mode)
    _write(config_path, new, mode)
    return backup


def _write(path: Path, text: str, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
