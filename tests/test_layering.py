"""Dependencies point one way: importing a module must not pull in the layers above it."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("module", "must_not_load"),
    [
        ("gateway.review", ["gateway.serve", "gateway.smtp", "aiosmtpd"]),  # the quarantine CLI
        ("gateway.admin.app", ["gateway.serve", "gateway.smtp", "aiosmtpd"]),  # the admin interface
        ("gateway.config", ["gateway.knowledge.web", "requests", "gateway.knowledge.local"]),  # data, no K backend
        ("gateway.knowledge.postgres", ["gateway.store", "gateway.store.postgres", "gateway.store.sql"]),  # K, no store
        ("gateway.store.postgres", ["gateway.knowledge.postgres", "gateway.knowledge.local", "gateway.knowledge.web"]),
    ],
)
def test_imports_point_one_way(module: str, must_not_load: list[str]) -> None:
    code = f"import sys, {module}; print(' '.join(sorted(m for m in {must_not_load!r} if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "", f"{module} loads {out.stdout.strip()}"
