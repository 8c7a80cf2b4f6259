from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pgkit import Databases, PrivatePostgres

from gateway.assemble import build_engine
from gateway.knowledge.build import BuildConfig, build_index
from gateway.knowledge.local import LocalIndex
from gateway.model.engine import Engine
from gateway.taxonomy.wordnet import WordNet

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

# A corpus small enough to count by hand: each string is one paragraph.
TINY_CORPUS = {
    "d1": "The patient with HIV started antiretroviral therapy at the clinic.",
    "d2": "HIV is treated with antiretroviral drugs; the clinic tracks viral load.",
    "d3": "Antiretroviral therapy changed HIV care in Los Angeles hospitals.",
    "d4": "The clinic in Los Angeles treats patients with influenza and asthma.",
    "d5": "Influenza patients rested at home while the clinic stayed open.",
    "d6": "A blood transfusion saved the patient after the accident.",
    "d7": "Blood transfusions require matching blood groups at the hospital.",
    "d8": "The football team from Los Angeles won the final in the stadium.",
}


@pytest.fixture(scope="session")
def wordnet() -> WordNet:
    return WordNet()


@pytest.fixture(scope="session")
def tiny_index_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiny-corpus")
    docs = root / "docs"
    docs.mkdir()
    for name, text in TINY_CORPUS.items():
        (docs / f"{name}.txt").write_text(text, encoding="utf-8")
    out = root / "tiny.sgidx"
    build_index([docs], out, config=BuildConfig(min_df=1, min_phrase_df=1, workers=1))
    return out


@pytest.fixture(scope="session")
def tiny_index(tiny_index_path: Path) -> LocalIndex:
    return LocalIndex(tiny_index_path)


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    """A real PostgreSQL server: $SANIGATE_TEST_POSTGRES (an admin URL; CI starts Debian's), else a private one."""
    url = os.environ.get("SANIGATE_TEST_POSTGRES")
    if url:
        shared = Databases(url)
        yield shared
        shared.close()
        return
    try:
        server = PrivatePostgres(Path(tempfile.mkdtemp(prefix="sanigate-pg-", dir="/var/tmp")))
    except (RuntimeError, OSError, KeyError, subprocess.CalledProcessError) as exc:
        if os.environ.get("SANIGATE_CI"):
            raise
        pytest.skip(f"no PostgreSQL server to test against ({exc}); CI provides one")
    try:
        yield Databases(server.admin_url)
    finally:
        server.close()  # the databases go with the server


@pytest.fixture(scope="session")
def engine() -> Engine:
    """The engine on the shipped index and WordNet: what users run."""
    return build_engine()
