from __future__ import annotations

from pathlib import Path

import pytest

from gateway.config import load_config, parse_config
from gateway.errors import ConfigError
from gateway.model.engine import Engine
from gateway.worker import check_policies

ROOT = Path(__file__).resolve().parents[1]
BASE = """
[policies.p1]
entities = ["HIV"]
[policies.p2]
entities = ["Los Angeles"]
"""


def parse(text: str) -> object:
    return parse_config(text, source="site.toml", base=Path("/srv"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[server]\nlisten = 25\n", "site.toml: server.listen: must be a str"),
        ('[server]\nlisten = "localhost"\n', "site.toml: server.listen: must be HOST:PORT"),
        ("[server]\nworkers = 0\n", "site.toml: server.workers: must be at least 1"),
        ("[server]\nbogus = 1\n", "site.toml: server.bogus: unknown key"),
        ("[policies.x]\nalpha = 2\n", "site.toml: policies.x.entities: must be a non-empty list"),
        ('[policies.x]\nentities = ["HIV"]\nalpha = 0.5\n', "site.toml: policies.x: alpha must be a number >= 1"),
        ('[policies.x]\nentities = ["HIV"]\non_failure = "drop"\n', "site.toml: policies.x.on_failure: must be one of"),
        ('[policies.x]\nentities = ["HIV"]\nimages = "keep"\n', "site.toml: policies.x.images: must be one of"),
        (
            '[[senders]]\nmatch = "default"\npolicies = ["nope"]\n',
            "site.toml: senders[0].policies: names policy 'nope'",
        ),
        ("[[senders]]\npolicies = []\n", "site.toml: senders[0].match: is required"),
        ("not toml = = 1\n", "site.toml: invalid TOML"),
    ],
)
def test_errors_name_the_file_and_the_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(text)
    assert message in info.value.message


def test_sender_rules_most_specific_first() -> None:
    config = parse_config(
        BASE
        + """
[[senders]]
match = "default"
policies = ["p1"]
[[senders]]
match = "*@*.example.org"
policies = ["p2"]
[[senders]]
match = "example.org"
policies = ["p2", "p1"]
[[senders]]
match = "boss@example.org"
policies = []
""",
        source="site.toml",
        base=Path("/srv"),
    )
    names = lambda s: [p.name for p in config.policies_for(s)]  # noqa: E731
    assert names("boss@example.org") == []
    assert names("x@example.org") == ["p2", "p1"]  # ordered
    assert names("x@mail.example.org") == ["p2"]
    assert names("x@elsewhere.net") == ["p1"]
    assert names("X@EXAMPLE.ORG") == ["p2", "p1"]


def test_embedded_defaults_and_shipped_config_are_valid(engine: Engine) -> None:
    defaults = load_config(None, base=Path("/srv"))
    assert defaults.upstream.host is None and defaults.upstream.maildir == Path("/srv/var/maildir")
    assert [p.name for p in defaults.policies_for("anyone@anywhere")] == ["us-medical"]
    shipped = load_config(ROOT / "config" / "sanigate.toml", base=ROOT)
    assert {"us-medical", "hipaa-geography", "eu-special-categories"} <= set(shipped.policies)
    assert check_policies(list(shipped.policies.values()) + list(defaults.policies.values()), engine) == []


def test_an_entity_k_does_not_know_is_a_warning_not_a_problem(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    config = parse('[policies.x]\nentities = ["Qwxzyv Plorbnik"]\n')
    with caplog.at_level("WARNING", logger="sanigate"):
        assert check_policies(list(config.policies.values()), engine) == []  # type: ignore[attr-defined]
    assert "policies.x.entities" in caplog.text and "knowledge source" in caplog.text


def test_defaults_match_the_docs() -> None:
    """The embedded policy, the shipped file and the README's policy table name the same entities."""
    defaults = load_config(None, base=Path("/srv"))
    shipped = load_config(ROOT / "config" / "sanigate.toml", base=ROOT)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `us-medical` |"))
    documented = [e.strip() for e in row.split("|")[2].split(",")]
    assert list(defaults.policies["us-medical"].sanitize.entities) == documented
    assert list(shipped.policies["us-medical"].sanitize.entities) == documented
    # Metrics are on unless turned off.
    assert defaults.server.metrics_enabled and (defaults.server.metrics_host, defaults.server.metrics_port) == (
        "127.0.0.1",
        9125,
    )
    assert parse("[server]\n").server.metrics_enabled
    assert not parse('[server]\nmetrics_listen = ""\n').server.metrics_enabled
