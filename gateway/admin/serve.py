"""``sanigate admin``: the web interface on its own port, beside (not inside) the gateway."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn

from gateway import sdnotify
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
            self.reload(stamp)
        return self._config

    def reload(self, stamp: float | None = None) -> bool:
        """Read the file now (SIGHUP, or it changed); an invalid file is logged and the previous one kept."""
        with self._lock:
            self._stamp = self._mtime() if stamp is None else stamp
            try:
                self._config = load_config(self.path)
            except ConfigError as exc:
                log.error("configuration not reloaded, keeping the previous one: %s", exc.message)
                return False
        log.info("configuration reloaded from %s", self.path or "<embedded defaults>")
        return True


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
    return _Server(uv)


class _Server(uvicorn.Server):
    async def shutdown(self, sockets: Any = None) -> None:
        sdnotify.notify("STOPPING=1")  # uvicorn then re-raises SIGTERM itself: tell systemd before that
        await super().shutdown(sockets)


def run(config_path: Path | None) -> None:
    source = ConfigSource(config_path)
    config = source()
    store = open_store(config.store)
    try:
        server = make_server(source, config_path, store)
        asyncio.run(_serve(server, source))
    finally:
        store.close()


async def _serve(server: uvicorn.Server, source: ConfigSource) -> None:
    """Serve; under systemd, READY=1 once listening, and SIGHUP re-reads the configuration."""
    loop = asyncio.get_running_loop()

    def on_hup() -> None:
        sdnotify.reloading()
        loop.run_in_executor(None, source.reload).add_done_callback(lambda _f: sdnotify.notify("READY=1"))

    loop.add_signal_handler(signal.SIGHUP, on_hup)
    serving = asyncio.create_task(server.serve())
    while not server.started and not serving.done():  # noqa: ASYNC110 (uvicorn offers a flag, not an event)
        await asyncio.sleep(0.05)
    if server.started:
        host, port = server.servers[0].sockets[0].getsockname()[:2]
        status = f"sanigate admin: listening on http://{host}:{port}/"
        log.info("%s", status)
        print(status, flush=True)
        sdnotify.notify("READY=1", f"STATUS={status}", f"MAINPID={os.getpid()}")
    await serving
