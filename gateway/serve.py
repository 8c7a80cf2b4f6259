"""``sanigate serve``: the listener, the sanitizer pool, the store, the metrics, reloads."""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing as mp
import os
import signal
import ssl
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from gateway import heap, sdnotify, streams
from gateway.config import Config, load_config
from gateway.directory import Directory
from gateway.errors import ConfigError
from gateway.metrics import Metrics
from gateway.relay import make_upstream
from gateway.smtp import GatewaySMTP, SanitizingHandler
from gateway.store import open_store
from gateway.worker import check_policies, init_worker

OUTCOME_FLUSH_SECONDS = 30.0
MEMORY_EXPIRY_SECONDS = 3600.0  # how often disclosures past their policy's window are deleted

log = logging.getLogger("sanigate")


class JSONFormatter(logging.Formatter):
    """One JSON object a line; message content never goes into logs, only ids and counts."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(out, ensure_ascii=False)


def _ping() -> bool:
    return True


class Gateway:
    def __init__(self, config_path: Path | None = None, *, config: Config | None = None,
                 engine_in_process: Any = None) -> None:  # fmt: skip
        self.config_path = config_path
        self.config = config or load_config(config_path)
        self.metrics = Metrics()
        self.store = open_store(self.config.store)
        self._engine = engine_in_process
        self._pool: ProcessPoolExecutor | None = None
        self._upstream = make_upstream(self.config)
        self.directory = Directory(self.config.directory) if self.config.directory else None
        self.handler = SanitizingHandler(
            config=lambda: self.config, upstream=lambda: self._upstream, store=self.store, pool=self._get_pool,
            metrics=self.metrics, engine_in_process=engine_in_process, directory=lambda: self.directory,
        )  # fmt: skip
        self._server: asyncio.base_events.Server | None = None
        self._metrics_server: Any = None
        self.port = 0
        self.listen_host = ""
        self.metrics_port = 0
        self._flusher: asyncio.Task[None] | None = None

    def _get_pool(self) -> Executor:
        if self._pool is None or getattr(self._pool, "_broken", False):
            if self._pool is not None:
                log.error("sanitizer pool broken; starting a new one")
                self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = ProcessPoolExecutor(
                max_workers=self.config.server.workers, mp_context=mp.get_context("spawn"),
                initializer=init_worker, initargs=(self.config.engine,),
            )  # fmt: skip
        return self._pool

    def _tls_context(self) -> ssl.SSLContext | None:
        s = self.config.server
        if s.tls_cert is None or s.tls_key is None:
            return None
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(s.tls_cert, s.tls_key)
        return ctx

    async def start(self) -> None:
        s = self.config.server
        loop = asyncio.get_running_loop()
        if self._engine is None:
            started = time.monotonic()
            pool = self._get_pool()
            await asyncio.gather(*(loop.run_in_executor(pool, _ping) for _ in range(s.workers)))
            log.info("%d sanitizer processes ready in %.1f s", s.workers, time.monotonic() - started)
        await self._validate(self.config)
        await self._listen()
        if s.metrics_enabled:
            self._metrics_server = self.metrics.serve(s.metrics_host, s.metrics_port)
            self.metrics_port = self._metrics_server.server_address[1]
        self._flusher = asyncio.create_task(self._flush_outcomes_every(OUTCOME_FLUSH_SECONDS))

    async def _listen(self) -> None:
        """The front end: SMTP here; ``sanigate milter`` speaks the milter protocol instead."""
        s = self.config.server
        tls = self._tls_context()

        def factory() -> GatewaySMTP:
            return GatewaySMTP(
                self.handler, hostname=s.hostname, data_size_limit=s.max_message_size, enable_SMTPUTF8=True,
                decode_data=False, tls_context=tls, require_starttls=False, ident="sanigate ESMTP",
            )  # fmt: skip

        self._server = await asyncio.get_running_loop().create_server(factory, host=s.host, port=s.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self.listen_host = s.host
        log.info("listening on %s:%d, relaying to %s", s.host, self.port,
                 f"{self.config.upstream.host}:{self.config.upstream.port}" if self.config.upstream.host
                 else f"Maildir {self.config.upstream.maildir}")  # fmt: skip

    async def _validate(self, config: Config) -> None:
        """Every entity of every policy must be one K knows; found now, not at the first message."""
        loop = asyncio.get_running_loop()
        policies = list(config.policies.values())
        if self._engine is not None:
            problems = await loop.run_in_executor(None, check_policies, policies, self._engine)
        else:
            problems = await loop.run_in_executor(self._get_pool(), check_policies, policies)
        if problems:
            raise ConfigError(f"{config.source}: " + "; ".join(problems))

    async def reload(self) -> bool:
        """Re-read the configuration; an invalid one is logged and the old one kept."""
        if self.config_path is None:
            log.info("reload: running on embedded defaults, nothing to reload")
            return False
        try:
            new = load_config(self.config_path)
            if new.engine != self.config.engine and self._pool is not None:
                raise ConfigError(f"{self.config_path}: [engine] changed; restart sanigate to load a new K")
            await self._validate(new)
        except ConfigError as exc:
            log.error("reload refused, keeping the running configuration: %s", exc.message)
            return False
        if new.directory != self.config.directory:
            self.directory = Directory(new.directory) if new.directory else None
        self.config = new
        self._upstream = make_upstream(new)
        log.info("configuration reloaded from %s (%d policies, %d sender rules)",
                 self.config_path, len(new.policies), len(new.senders))  # fmt: skip
        return True

    async def _flush_outcomes_every(self, seconds: float) -> None:
        expired = 0.0
        while True:
            if time.monotonic() - expired >= MEMORY_EXPIRY_SECONDS:
                expired = time.monotonic()
                await self.expire_memory()
            await asyncio.sleep(seconds)
            await self.flush_outcomes()

    async def expire_memory(self) -> int:
        """Forget what streams disclosed longer ago than their policy's ``stream_memory_days``."""
        cutoffs = streams.cutoffs(list(self.config.policies.values()))
        try:
            n: int = await asyncio.get_running_loop().run_in_executor(None, self.store.expire_memory, cutoffs)
        except Exception as exc:
            log.warning("the disclosure memory could not be expired: %s", exc)
            return 0
        if n:
            log.info("disclosure memory: %d expired disclosure(s) forgotten", n)
        return n

    async def flush_outcomes(self) -> None:
        """Write the message counts by outcome to the store (one write a period, not one a message)."""
        counts = self.handler.take_outcomes()
        if not counts:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(None, self.store.record_outcomes, counts)
        except Exception as exc:
            log.warning("outcome counts for the dashboard not stored: %s", exc)

    async def stop(self) -> None:
        if self._flusher is not None:
            self._flusher.cancel()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        await self.flush_outcomes()
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
            self._metrics_server.server_close()
        self.handler.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self.store.close()


async def serve(config_path: Path | None, *, front: type[Gateway] = Gateway, name: str = "sanigate") -> None:
    """Run a gateway until SIGTERM; SIGHUP reloads. Under systemd, readiness is sent once the workers answer."""
    gateway = front(config_path)
    try:
        await gateway.start()
    except BaseException:
        await gateway.stop()
        raise
    heap.tune_collector()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    reloads: set[asyncio.Task[bool]] = set()

    async def reload() -> bool:
        sdnotify.reloading()
        try:
            return await gateway.reload()
        finally:
            sdnotify.notify("READY=1", f"STATUS={_status(gateway, name)}")

    def on_hup() -> None:
        task = loop.create_task(reload())
        reloads.add(task)
        task.add_done_callback(reloads.discard)

    loop.add_signal_handler(signal.SIGHUP, on_hup)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"{_status(gateway, name)}", flush=True)
    sdnotify.notify("READY=1", f"STATUS={_status(gateway, name)}", f"MAINPID={os.getpid()}")
    await stop.wait()
    log.info("stopping")
    sdnotify.notify("STOPPING=1")
    await gateway.stop()


def _status(gateway: Gateway, name: str) -> str:
    s = gateway.config.server
    metrics = f", metrics on {s.metrics_host}:{gateway.metrics_port}" if gateway.metrics_port else ""
    return f"{name}: listening on {gateway.listen_host}:{gateway.port}{metrics}"
