"""``sanigate admin``: the web interface on its own port, beside (not inside) the gateway."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import uvicorn

from gateway.admin.app import AdminDeps, create_app
from gateway.config import Config, load_config
from gateway.errors import ConfigError
from gateway.store import open_store
from gateway.store.base import Store

log = logging.getLogger("sanigate.admin")


class ConfigSource:
    """The configuration as it is now: re-read when the file changes (a policy edit, an operator's edit)."""

    def __init__(self, path: Path | None, *, initial: Config | None = None) -> None:
        self.path = path
        self._config = initial or load_config(path)
        self._stamp = self._mtime()
        self._lock = threading.Lock()

    def _mtime(self) -> float:
        return self.path.stat().st_mtime if self.path is not None and self.path.exists() else 0.0

    def __call__(self) -> Config:
        stamp = self._mtime()
        if stamp != self._stamp:
            with self._lock:
                try:
                    self._config = load_config(self.path)
                except ConfigError as exc:
                    log.error("configuration not reloaded, keeping the previous one: %s", exc.message)
                self._stamp = stamp
        return self._config


def make_server(config: Callable[[], Config], config_path: Path | None, store: Store, *, port: int | None = None,
                host: str | None = None) -> uvicorn.Server:  # fmt: skip
    current = config()
    if not current.admin.users:
        raise ConfigError(
            f"{current.source}: no [[admin.users]]: add at least one (name, role, password_hash from "
            "'sanigate hash-password') to use the admin interface"
        )
    app = create_app(AdminDeps(config=config, config_path=config_path, store=store))
    uv = uvicorn.Config(app, host=host or current.admin.host, port=current.admin.port if port is None else port,
                        access_log=False, log_level="warning", server_header=False, lifespan="off")  # fmt: skip
    return uvicorn.Server(uv)


def run(config_path: Path | None) -> None:
    source = ConfigSource(config_path)
    config = source()
    store = open_store(config.store)
    try:
        server = make_server(source, config_path, store)
        log.info("admin interface on http://%s:%d/", config.admin.host, config.admin.port)
        server.run()
    finally:
        store.close()
