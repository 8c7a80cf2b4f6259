"""Every sample file ends in a sanitized output or a typed error naming it; never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractors.pipeline import detect_kind, process
from gateway.errors import SanigateError
from gateway.model.engine import Engine
from gateway.model.records import SanitizePolicy

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
FILES = sorted(p for sub in ("email", "docx", "pdf") for p in (SAMPLES / sub).rglob("*") if p.is_file())
POLICIES = [SanitizePolicy(entities=("HIV", "Los Angeles", "Catholicism"), alpha=1.5)]
# Heavy rewriting: every term K has too little evidence on is redacted, so nearly
# every sample goes through the rebuild path of its extractor, and then through
# re-extraction.
HEAVY = [
    SanitizePolicy(entities=("Python", "Microsoft"), alpha=2.0, unknown="redact"),
    SanitizePolicy(entities=("email",), alpha=1.2),
]


def test_the_sample_set_is_there() -> None:
    assert len(FILES) > 200, f"expected the shared samples under {SAMPLES}"


@pytest.mark.parametrize("policies", [POLICIES, HEAVY], ids=["medical-places-religion", "heavy-rewrite"])
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(SAMPLES)) for p in FILES])
def test_sample_ends_sanitized_or_in_a_typed_error(engine: Engine, path: Path, policies: list[SanitizePolicy]) -> None:
    data = path.read_bytes()
    try:
        outcome = process(data, engine=engine, policies=policies, name=path.name)
    except SanigateError as exc:
        assert path.name in str(exc)
        assert "Traceback" not in str(exc)
        return
    assert outcome.kind == detect_kind(data, path.name)
    if not outcome.changed and not outcome.notes:
        assert outcome.data == data  # nothing risky: passed byte for byte
    else:
        assert outcome.data  # and process() re-extracted it: no flagged term is left
