"""Policies by directory group, against a real OpenLDAP (Debian's slapd) the tests start on a free port."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from gatewaykit import MEDICAL, CaptureHandler, config_for, send, start_capture
from ldapkit import ADMIN_DN, ADMIN_PASSWORD, SUFFIX, Slapd

from gateway.config import DirectoryConfig
from gateway.directory import Directory, DirectoryUnavailableError
from gateway.errors import ConfigError
from gateway.model.engine import Engine
from gateway.serve import Gateway


@pytest.fixture
def slapd() -> Iterator[Slapd]:
    server = Slapd()
    yield server
    server.close()


def _config(slapd: Slapd, **kw: object) -> DirectoryConfig:
    base = {"url": slapd.url, "base_dn": SUFFIX, "bind_dn": ADMIN_DN, "bind_password_env": "SANIGATE_TEST_LDAP_PW"}
    return DirectoryConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_groups_from_member_of_and_from_a_group_search(slapd: Slapd, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANIGATE_TEST_LDAP_PW", ADMIN_PASSWORD)
    by_attribute = Directory(_config(slapd))
    rita = by_attribute.groups_of("Rita@Clinic.Example")
    assert {"records", "staff", f"cn=records,ou=groups,{SUFFIX}"} <= rita
    assert by_attribute.groups_of("oscar@clinic.example") & {"records", "staff"} == {"staff"}
    assert by_attribute.groups_of("stranger@clinic.example") == frozenset()  # no entry: no group
    by_search = Directory(_config(slapd, group_attribute="", group_filter="(&(objectClass=groupOfNames)(member={dn}))"))
    assert by_search.groups_of("rita@clinic.example") & {"records", "staff"} == {"records", "staff"}
    # A hostile address cannot widen the filter.
    assert by_attribute.groups_of("*)(mail=*") == frozenset()


def test_answers_are_cached_for_the_ttl(slapd: Slapd, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANIGATE_TEST_LDAP_PW", ADMIN_PASSWORD)
    now = [0.0]
    d = Directory(_config(slapd, cache_seconds=60), clock=lambda: now[0])
    first = d.groups_of("rita@clinic.example")
    d.groups_of("rita@clinic.example")
    d.groups_of("stranger@clinic.example")
    d.groups_of("stranger@clinic.example")  # misses are cached too
    assert d.lookups == 2
    slapd.stop()
    assert d.groups_of("rita@clinic.example") == first  # within the TTL the directory is not asked
    now[0] = 61
    with pytest.raises(DirectoryUnavailableError) as info:
        d.groups_of("rita@clinic.example")  # past it, a directory that is down is an error, not "no groups"
    assert info.value.smtp_code == 451


def test_a_wrong_bind_password_is_unavailable_not_empty(slapd: Slapd, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANIGATE_TEST_LDAP_PW", "wrong")
    with pytest.raises(DirectoryUnavailableError):
        Directory(_config(slapd)).groups_of("rita@clinic.example")


def test_group_rules_need_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"senders\[0\].match: a group: rule needs"):
        config_for(tmp_path, upstream_port=None, policies='[policies.p]\nentities = ["HIV"]\n'
                   '[[senders]]\nmatch = "group:Records"\npolicies = ["p"]\n')  # fmt: skip


def test_gateway_applies_group_policies_and_tempfails_when_the_directory_is_down(
    slapd: Slapd, tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SANIGATE_LDAP_PASSWORD", ADMIN_PASSWORD)
    policies = f"""
[directory]
url = "{slapd.url}"
base_dn = "{SUFFIX}"
bind_dn = "{ADMIN_DN}"
cache_seconds = 300

[policies.medical]
entities = ["HIV"]
alpha = 1.5

[policies.places]
entities = ["Los Angeles"]
alpha = 1.5

[[senders]]
match = "group:Records"
policies = ["medical", "places"]

[[senders]]
match = "clinic.example"
policies = ["medical"]
"""

    async def main() -> None:
        capture = CaptureHandler()
        server, port = await start_capture(capture)
        gw = Gateway(config=config_for(tmp_path, upstream_port=port, policies=policies), engine_in_process=engine)
        await gw.start()
        try:
            await send(gw.port, "rita@clinic.example", ["a@example.com"], MEDICAL)  # in Records
            await send(gw.port, "oscar@clinic.example", ["a@example.com"], MEDICAL)  # not in Records
            rita, oscar = capture.messages
            assert b"Los Angeles" not in rita.data and b"policies=medical,places" in rita.data
            assert b"Los Angeles" in oscar.data and b"policies=medical;" in oscar.data
            assert b"HIV" not in rita.data and b"HIV" not in oscar.data
            slapd.stop()
            with pytest.raises(Exception) as info:  # a sender the cache does not know: the directory must answer
                await send(gw.port, "newcomer@clinic.example", ["a@example.com"], MEDICAL)
            assert getattr(info.value, "code", None) == 451 and "directory" in str(info.value)
            assert len(capture.messages) == 2  # nothing forwarded under a guessed policy
            await send(gw.port, "rita@clinic.example", ["a@example.com"], MEDICAL)  # cached: still served
            assert len(capture.messages) == 3 and b"Los Angeles" not in capture.messages[2].data
        finally:
            await gw.stop()
            server.close()
            await server.wait_closed()

    asyncio.run(main())
