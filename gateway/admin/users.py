"""``sanigate admin user add|passwd|remove``: the admin interface's users, edited in the configuration file.

The file is edited with tomlkit (comments kept), checked as a whole before it
replaces the old one, and the old one kept beside it, as for policy feedback.
A running admin interface re-reads the file when it changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit

from gateway.admin.auth import hash_password
from gateway.admin.policyedit import commit_edit, read_config
from gateway.errors import InputError

ROLES = ("reviewer", "admin")
MIN_PASSWORD = 10


def _load(config_path: Path) -> tuple[str, Any, Any]:
    text = read_config(config_path)
    doc = tomlkit.parse(text)
    if "admin" not in doc:
        doc["admin"] = tomlkit.table()
    admin = doc["admin"]
    if "users" not in admin:
        admin["users"] = tomlkit.aot()
    return text, doc, admin["users"]


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise InputError(f"use at least {MIN_PASSWORD} characters")


def add_user(config_path: Path, name: str, *, role: str, password: str) -> Path:
    """Add a user; the backup's path."""
    name = name.strip()
    if not name:
        raise InputError("a user needs a name")
    if role not in ROLES:
        raise InputError(f"the role is reviewer or admin, not {role!r}")
    _check_password(password)
    text, doc, users = _load(config_path)
    if any(str(u.get("name")) == name for u in users):
        raise InputError(f"{config_path}: user {name!r} exists already (change the password with 'passwd')")
    entry = tomlkit.table()
    entry.update({"name": name, "role": role, "password_hash": hash_password(password)})
    users.append(entry)
    return commit_edit(config_path, text, tomlkit.dumps(doc))


def set_password(config_path: Path, name: str, *, password: str) -> Path:
    _check_password(password)
    text, doc, users = _load(config_path)
    user = next((u for u in users if str(u.get("name")) == name), None)
    if user is None:
        raise InputError(f"{config_path}: no user {name!r}")
    user["password_hash"] = hash_password(password)
    return commit_edit(config_path, text, tomlkit.dumps(doc))


def remove_user(config_path: Path, name: str) -> Path:
    text, doc, users = _load(config_path)
    keep = [u for u in users if str(u.get("name")) != name]
    if len(keep) == len(users):
        raise InputError(f"{config_path}: no user {name!r}")
    if any(str(u.get("role")) == "admin" for u in users) and not any(str(u.get("role")) == "admin" for u in keep):
        raise InputError(f"{name!r} is the last user with the admin role; add another admin first")
    new_users = tomlkit.aot()
    for u in keep:
        new_users.append(u)
    doc["admin"]["users"] = new_users
    return commit_edit(config_path, text, tomlkit.dumps(doc))
