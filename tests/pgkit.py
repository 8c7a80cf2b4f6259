"""A real PostgreSQL for tests: $SANIGATE_TEST_POSTGRES if set (CI), else a private instance in a temp dir."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import uuid
from pathlib import Path


def _bin(name: str) -> str | None:
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    return str(found[-1]) if found else shutil.which(name)


class PrivatePostgres:
    """initdb + pg_ctl on a free loopback port, trust authentication; removed on close."""

    def __init__(self, root: Path) -> None:
        initdb, self.pg_ctl = _bin("initdb"), _bin("pg_ctl")
        if initdb is None or self.pg_ctl is None:
            raise RuntimeError("PostgreSQL server binaries not found (apt-get install postgresql)")
        self.root = root
        self.data = root / "data"
        root.mkdir(parents=True, exist_ok=True)
        self.user: list[str] = []
        if os.geteuid() == 0:  # the server refuses to run as root
            pwd.getpwnam("postgres")
            shutil.chown(root, "postgres")
            self.user = ["runuser", "-u", "postgres", "--"]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        subprocess.run([*self.user, initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8"],
                       check=True, capture_output=True)  # fmt: skip
        opts = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={root} -c fsync=on"
        subprocess.run([*self.user, self.pg_ctl, "-D", str(self.data), "-o", opts, "-l", str(root / "log"), "-w",
                        "start"], check=True, capture_output=True)  # fmt: skip
        self.admin_url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def close(self) -> None:
        subprocess.run([*self.user, self.pg_ctl or "pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop"],
                       capture_output=True)  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)


class Databases:
    """Fresh, empty databases on one server, one per test."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.created: list[str] = []

    def new(self) -> str:
        import psycopg

        name = f"sanigate_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.created.append(name)
        base, _, _ = self.admin_url.rpartition("/")
        return f"{base}/{name}"

    def close(self) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            for name in self.created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.created.clear()
