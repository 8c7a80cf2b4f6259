"""The quarantine and audit store: the interface (``base``), SQL shared by backends, SQLite and PostgreSQL."""

from __future__ import annotations

from gateway.config import StoreConfig
from gateway.store.base import Store
from gateway.store.sql import SQLStore, StoreError


def open_store(config: StoreConfig, *, check_schema: bool = True) -> SQLStore:
    """The store the configuration names: PostgreSQL when ``url`` is set, else the SQLite file at ``path``."""
    if config.url:
        from gateway.store.postgres import PostgresStore

        return PostgresStore(config.url, key_env=config.key_env, check_schema=check_schema)
    from gateway.store.sqlite import SQLiteStore

    return SQLiteStore(config.path, key_env=config.key_env)


__all__ = ["SQLStore", "Store", "StoreError", "open_store"]
