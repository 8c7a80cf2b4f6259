"""The gateway's configuration: one TOML file, validated whole at start and on reload.

Every error names the file, the key and what is wrong, so that a reload that
fails can be logged and the old configuration kept.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extractors.mail import ContentPolicy
from gateway.errors import ConfigError
from gateway.knowledge.webconfig import WebCountConfig
from gateway.model.records import SanitizePolicy

_HANDLING = ("pass", "strip", "quarantine")
_ON_FAILURE = ("quarantine", "reject", "tempfail")


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyConfig:
    name: str
    sanitize: SanitizePolicy
    content: ContentPolicy
    on_failure: str = "quarantine"  # what to do with a message sanigate cannot sanitize
    stream_memory_days: float = 30.0  # how long a stream remembers what it disclosed; 0: no memory


@dataclass(frozen=True, slots=True, kw_only=True)
class SenderRule:
    match: str
    policies: tuple[str, ...]

    @property
    def kind(self) -> int:
        """Precedence: exact address 0, directory group 1, domain 2, wildcard 3, default 4."""
        if self.match == "default":
            return 4
        if self.group is not None:
            return 1
        if any(ch in self.match for ch in "*?["):
            return 3
        if "@" not in self.match or self.match.startswith("@"):
            return 2
        return 0

    @property
    def group(self) -> str | None:
        """For ``group:NAME``, the group's name or DN, lower-cased."""
        return self.match[6:].strip().lower() if self.match.lower().startswith("group:") else None

    def matches(self, sender: str, groups: frozenset[str] = frozenset()) -> bool:
        s = sender.lower()
        m = self.match.lower()
        kind = self.kind
        if kind == 0:
            return s == m
        if kind == 1:
            return self.group in groups
        if kind == 2:
            domain = m.lstrip("@")
            return s.rpartition("@")[2] == domain
        if kind == 3:
            return fnmatch.fnmatchcase(s, m)
        return True


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 10025
    hostname: str = "sanigate"
    max_message_size: int = 25 * 1024 * 1024
    max_in_flight: int = 32  # messages accepted for processing at once; beyond: 421/451
    workers: int = 2
    process_timeout: float = 120.0
    tls_cert: Path | None = None
    tls_key: Path | None = None
    metrics_host: str = "127.0.0.1"
    metrics_port: int = 9125  # 0: any free port
    metrics_enabled: bool = True  # metrics_listen = "" turns them off


@dataclass(frozen=True, slots=True, kw_only=True)
class UpstreamConfig:
    host: str | None = None  # None: deliver into ``maildir``
    port: int = 10026
    timeout: float = 30.0
    maildir: Path = Path("var/maildir")
    xforward: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreConfig:
    path: Path = Path("var/sanigate.db")
    url: str | None = None  # postgresql://…: a server database shared by several instances, instead of path
    key_env: str = "SANIGATE_STORE_KEY"


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineFiles:
    """Where K and the taxonomy come from (what each sanitizer process loads)."""

    index: Path | None = None
    taxonomy: Path | None = None
    knowledge: str = "local"  # "local" (the index file), "web" (hit counts), "postgresql" (a shared index)
    web: WebCountConfig | None = None
    knowledge_url: str | None = None  # postgresql://… for knowledge = "postgresql"


@dataclass(frozen=True, slots=True, kw_only=True)
class MilterConfig:
    """``sanigate milter``: where Postfix's smtpd_milters reaches it, and where a held message stays."""

    host: str = "127.0.0.1"
    port: int = 8894
    hold: str = "store"  # "store": kept in sanigate's quarantine, dropped from Postfix; "postfix": its hold queue


DEFAULT_USER_FILTER = "(|(mail={address})(proxyAddresses=smtp:{address}))"  # OpenLDAP's mail; AD's aliases too


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectoryConfig:
    """The LDAP directory that says which groups a sender is in (for ``match = "group:…"``)."""

    url: str  # ldap://host:389 or ldaps://host:636
    base_dn: str
    bind_dn: str = ""  # empty: an anonymous bind
    bind_password_env: str = "SANIGATE_LDAP_PASSWORD"  # the password is read from this variable, never the file
    user_filter: str = DEFAULT_USER_FILTER
    group_attribute: str = "memberOf"  # an attribute of the user's entry that lists its groups' DNs; "" for none
    group_filter: str = ""  # or search for groups: "(&(objectClass=groupOfNames)(member={dn}))"
    group_base_dn: str = ""  # where to search for groups (default: base_dn)
    cache_seconds: float = 300.0
    timeout: float = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class AdminUser:
    name: str
    role: str  # "reviewer" or "admin"
    password_hash: str  # from ``sanigate hash-password``; never the password


@dataclass(frozen=True, slots=True, kw_only=True)
class AdminConfig:
    host: str = "127.0.0.1"
    port: int = 8025
    users: tuple[AdminUser, ...] = ()
    secure_cookies: bool = True  # sent only over HTTPS; off by default only on a loopback address
    session_minutes: int = 480
    max_failed_logins: int = 5  # per (user, client address) pair, within lockout_minutes; see admin/auth.py
    lockout_minutes: int = 15
    trusted_proxies: tuple[str, ...] = ()  # reverse proxies whose X-Forwarded-For names the client


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    source: str = "<embedded defaults>"
    server: ServerConfig = field(default_factory=ServerConfig)
    upstream: UpstreamConfig = field(default_factory=UpstreamConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    engine: EngineFiles = field(default_factory=EngineFiles)
    policies: Mapping[str, PolicyConfig] = field(default_factory=dict)
    senders: tuple[SenderRule, ...] = ()
    admin: AdminConfig = field(default_factory=AdminConfig)
    directory: DirectoryConfig | None = None
    milter: MilterConfig = field(default_factory=MilterConfig)

    @property
    def uses_groups(self) -> bool:
        """Some rule matches a directory group: the sender's groups must be looked up first."""
        return any(rule.group is not None for rule in self.senders)

    def policies_for(self, sender: str, groups: frozenset[str] = frozenset()) -> list[PolicyConfig]:
        """The ordered policies of the most specific rule that matches ``sender`` (in ``groups``, lower-cased)."""
        for rule in sorted(self.senders, key=lambda r: r.kind):  # stable: file order within a kind
            if rule.matches(sender, groups):
                return [self.policies[name] for name in rule.policies]
        return []


class _Reader:
    def __init__(self, source: str, data: Mapping[str, Any]) -> None:
        self.source = source
        self.data = data

    def fail(self, key: str, what: str) -> ConfigError:
        return ConfigError(f"{self.source}: {key}: {what}")

    def table(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key, {})
        if not isinstance(value, Mapping):
            raise self.fail(key, "must be a table")
        return value

    def get(self, table: Mapping[str, Any], prefix: str, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        if key not in table:
            return default
        value = table[key]
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise self.fail(f"{prefix}.{key}", f"must be a number, not {value!r}")
        if not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.fail(f"{prefix}.{key}", f"must be a {names}, not {type(value).__name__} {value!r}")
        return value

    def unknown_keys(self, table: Mapping[str, Any], prefix: str, allowed: Sequence[str]) -> None:
        extra = sorted(set(table) - set(allowed))
        if extra:
            raise self.fail(f"{prefix}.{extra[0]}", f"unknown key (allowed: {', '.join(allowed)})")


def _address(r: _Reader, prefix: str, value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise r.fail(prefix, f"must be HOST:PORT, not {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def _path(value: str | None, base: Path) -> Path | None:
    if not value:
        return None
    p = Path(value)
    return p if p.is_absolute() else base / p


def parse_config(text: str, *, source: str, base: Path) -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from exc
    r = _Reader(source, data)
    r.unknown_keys(data, "", ["server", "upstream", "store", "engine", "policies", "senders", "admin", "directory",
                              "milter"])  # fmt: skip

    s = r.table("server")
    r.unknown_keys(s, "server", ["listen", "hostname", "max_message_size", "max_in_flight", "workers",
                                 "process_timeout", "tls_cert", "tls_key", "metrics_listen"])  # fmt: skip
    host, port = _address(r, "server.listen", r.get(s, "server", "listen", str, "127.0.0.1:10025"))
    metrics = r.get(s, "server", "metrics_listen", str, "127.0.0.1:9125")
    m_host, m_port = _address(r, "server.metrics_listen", metrics) if metrics else ("127.0.0.1", 0)
    server = ServerConfig(
        host=host,
        port=port,
        hostname=r.get(s, "server", "hostname", str, "sanigate"),
        max_message_size=r.get(s, "server", "max_message_size", int, 25 * 1024 * 1024),
        max_in_flight=r.get(s, "server", "max_in_flight", int, 32),
        workers=r.get(s, "server", "workers", int, 2),
        process_timeout=float(r.get(s, "server", "process_timeout", (int, float), 120.0)),
        tls_cert=_path(r.get(s, "server", "tls_cert", str, ""), base),
        tls_key=_path(r.get(s, "server", "tls_key", str, ""), base),
        metrics_host=m_host,
        metrics_port=m_port,
        metrics_enabled=bool(metrics),
    )
    for key in ("max_message_size", "max_in_flight", "workers"):
        if getattr(server, key) < 1:
            raise r.fail(f"server.{key}", "must be at least 1")
    if (server.tls_cert is None) != (server.tls_key is None):
        raise r.fail("server.tls_cert", "tls_cert and tls_key go together")

    u = r.table("upstream")
    r.unknown_keys(u, "upstream", ["relay", "timeout", "maildir", "xforward"])
    relay = r.get(u, "upstream", "relay", str, "")
    up_host, up_port = _address(r, "upstream.relay", relay) if relay else (None, 10026)
    upstream = UpstreamConfig(
        host=up_host,
        port=up_port,
        timeout=float(r.get(u, "upstream", "timeout", (int, float), 30.0)),
        maildir=_path(r.get(u, "upstream", "maildir", str, "var/maildir"), base) or base / "var/maildir",
        xforward=r.get(u, "upstream", "xforward", bool, True),
    )

    st = r.table("store")
    r.unknown_keys(st, "store", ["path", "url", "key_env"])
    url = r.get(st, "store", "url", str, "") or None
    if url is not None and not url.startswith(("postgresql://", "postgres://")):
        raise r.fail("store.url", f"must be a postgresql:// URL, not {url.split(':', 1)[0]!r}")
    if url is not None and "path" in st:
        raise r.fail("store.url", "give either path (SQLite) or url (PostgreSQL), not both")
    store = StoreConfig(
        path=_path(r.get(st, "store", "path", str, "var/sanigate.db"), base) or base / "var/sanigate.db",
        url=url,
        key_env=r.get(st, "store", "key_env", str, "SANIGATE_STORE_KEY"),
    )

    e = r.table("engine")
    r.unknown_keys(e, "engine", ["index", "taxonomy", "knowledge", "web", "knowledge_url"])
    knowledge = r.get(e, "engine", "knowledge", str, "local")
    if knowledge not in ("local", "web", "postgresql"):
        raise r.fail("engine.knowledge", f"must be local, web or postgresql, not {knowledge!r}")
    web = _web(r, e.get("web"), base) if knowledge == "web" else None
    knowledge_url = r.get(e, "engine", "knowledge_url", str, "") or None
    if knowledge == "postgresql" and not (knowledge_url or "").startswith(("postgresql://", "postgres://")):
        raise r.fail("engine.knowledge_url", "knowledge = postgresql needs a postgresql:// URL here")
    engine = EngineFiles(
        index=_path(r.get(e, "engine", "index", str, ""), base),
        taxonomy=_path(r.get(e, "engine", "taxonomy", str, ""), base),
        knowledge=knowledge,
        web=web,
        knowledge_url=knowledge_url,
    )

    policies: dict[str, PolicyConfig] = {}
    for name, p in r.table("policies").items():
        prefix = f"policies.{name}"
        if not isinstance(p, Mapping):
            raise r.fail(prefix, "must be a table")
        r.unknown_keys(p, prefix, ["entities", "alpha", "mode", "on_failure", "images", "unknown_attachments",
                                   "encrypted", "unreadable", "allow", "deny", "unknown_terms", "max_group",
                                   "aliases", "description", "stream_memory_days", "identifiers",
                                   "address_level", "evidence_budget", "evidence_floor",
                                   "coarsen_facts", "stream_evidence", "omit_modifiers",
                                   "named_budget", "second_order", "opening_floor", "memory_share"])  # fmt: skip
        identifiers = _identifiers(r, prefix, p)
        entities = r.get(p, prefix, "entities", list, None if not identifiers else [])
        if (not entities and not identifiers) or not all(isinstance(x, str) and x.strip() for x in entities):
            raise r.fail(f"{prefix}.entities", "must be a non-empty list of entity names (or give identifiers)")
        on_failure = r.get(p, prefix, "on_failure", str, "quarantine")
        if on_failure not in _ON_FAILURE:
            raise r.fail(f"{prefix}.on_failure", f"must be one of {', '.join(_ON_FAILURE)}, not {on_failure!r}")
        handling = {}
        for key in ("images", "unknown_attachments", "encrypted", "unreadable"):
            value = r.get(p, prefix, key, str, "pass" if key == "images" else "quarantine")
            if value not in _HANDLING:
                raise r.fail(f"{prefix}.{key}", f"must be one of {', '.join(_HANDLING)}, not {value!r}")
            handling[key] = value
        aliases = r.get(p, prefix, "aliases", Mapping, {})
        alias_pairs: list[tuple[str, str]] = []
        for ent, names in aliases.items():
            if ent not in entities or not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise r.fail(f"{prefix}.aliases.{ent}", "must name an entity of the policy and list strings")
            alias_pairs.extend((ent, n) for n in names)
        for key in ("allow", "deny"):
            values = r.get(p, prefix, key, list, [])
            if not all(isinstance(v, str) for v in values):
                raise r.fail(f"{prefix}.{key}", "must be a list of terms")
        try:
            sanitize = SanitizePolicy(
                entities=tuple(entities),
                alpha=float(r.get(p, prefix, "alpha", (int, float), 1.5)),
                mode=r.get(p, prefix, "mode", str, "generalize"),
                unknown=r.get(p, prefix, "unknown_terms", str, "context"),
                max_group=r.get(p, prefix, "max_group", int, 3),
                evidence_budget=float(r.get(p, prefix, "evidence_budget", (int, float), 2.0)),
                evidence_floor=float(r.get(p, prefix, "evidence_floor", (int, float), 0.2)),
                coarsen_facts=r.get(p, prefix, "coarsen_facts", bool, True),
                stream_evidence=r.get(p, prefix, "stream_evidence", bool, False),
                omit_modifiers=r.get(p, prefix, "omit_modifiers", bool, True),
                named_budget=float(r.get(p, prefix, "named_budget", (int, float), 1.0)),
                opening_floor=float(r.get(p, prefix, "opening_floor", (int, float), 0.15)),
                memory_share=float(r.get(p, prefix, "memory_share", (int, float), 0.375)),
                second_order=r.get(p, prefix, "second_order", bool, True),
                allow=frozenset(r.get(p, prefix, "allow", list, [])),
                deny=frozenset(r.get(p, prefix, "deny", list, [])),
                aliases=tuple(alias_pairs),
                identifiers=identifiers,
                address_level=r.get(p, prefix, "address_level", str, "none"),
            )
        except ConfigError as exc:
            raise r.fail(prefix, exc.message) from exc
        content = ContentPolicy(
            images=handling["images"],
            unknown=handling["unknown_attachments"],
            encrypted=handling["encrypted"],
            unreadable=handling["unreadable"],
        )
        memory_days = float(r.get(p, prefix, "stream_memory_days", (int, float), 30.0))
        if not 0 <= memory_days < 100_000:
            raise r.fail(f"{prefix}.stream_memory_days", f"must be a number of days >= 0 (0: off), not {memory_days!r}")
        policies[name] = PolicyConfig(name=name, sanitize=sanitize, content=content, on_failure=on_failure,
                                      stream_memory_days=memory_days)  # fmt: skip

    rules: list[SenderRule] = []
    senders = data.get("senders", [])
    if not isinstance(senders, list):
        raise r.fail("senders", "must be an array of tables ([[senders]])")
    for i, rule in enumerate(senders):
        prefix = f"senders[{i}]"
        if not isinstance(rule, Mapping):
            raise r.fail(prefix, "must be a table")
        r.unknown_keys(rule, prefix, ["match", "policies"])
        match = r.get(rule, prefix, "match", str, None)
        names = r.get(rule, prefix, "policies", list, None)
        if not match:
            raise r.fail(f"{prefix}.match", "is required (an address, a domain, a wildcard or 'default')")
        if names is None or not all(isinstance(n, str) for n in names):
            raise r.fail(f"{prefix}.policies", "must be a list of policy names")
        for n in names:
            if n not in policies:
                raise r.fail(f"{prefix}.policies", f"names policy {n!r}, which is not defined under [policies]")
        rules.append(SenderRule(match=match, policies=tuple(names)))
    directory = _directory(r)
    for i, rule in enumerate(rules):
        if rule.group is not None and (directory is None or not rule.group):
            raise r.fail(f"senders[{i}].match", "a group: rule needs a group name and a [directory] to ask")
    m = r.table("milter")
    r.unknown_keys(m, "milter", ["listen", "hold"])
    m_host, m_port = _address(r, "milter.listen", r.get(m, "milter", "listen", str, "127.0.0.1:8894"))
    hold = r.get(m, "milter", "hold", str, "store")
    if hold not in ("store", "postfix"):
        raise r.fail("milter.hold", f"must be store or postfix, not {hold!r}")
    return Config(source=source, server=server, upstream=upstream, store=store, engine=engine,
                  policies=policies, senders=tuple(rules), admin=_admin(r), directory=directory,
                  milter=MilterConfig(host=m_host, port=m_port, hold=hold))  # fmt: skip


def _directory(r: _Reader) -> DirectoryConfig | None:
    if "directory" not in r.data:
        return None
    d = r.table("directory")
    p = "directory"
    keys = ["url", "base_dn", "bind_dn", "bind_password_env", "user_filter", "group_attribute", "group_filter",
            "group_base_dn", "cache_seconds", "timeout"]  # fmt: skip
    r.unknown_keys(d, p, keys)
    url = r.get(d, p, "url", str, "")
    if not url.startswith(("ldap://", "ldaps://")):
        raise r.fail(f"{p}.url", f"must be an ldap:// or ldaps:// URL, not {url!r}")
    base = r.get(d, p, "base_dn", str, "")
    if not base:
        raise r.fail(f"{p}.base_dn", "is required (where the senders' entries are)")
    config = DirectoryConfig(
        url=url, base_dn=base, bind_dn=r.get(d, p, "bind_dn", str, ""),
        bind_password_env=r.get(d, p, "bind_password_env", str, "SANIGATE_LDAP_PASSWORD"),
        user_filter=r.get(d, p, "user_filter", str, DEFAULT_USER_FILTER),
        group_attribute=r.get(d, p, "group_attribute", str, "memberOf"),
        group_filter=r.get(d, p, "group_filter", str, ""), group_base_dn=r.get(d, p, "group_base_dn", str, ""),
        cache_seconds=float(r.get(d, p, "cache_seconds", (int, float), 300.0)),
        timeout=float(r.get(d, p, "timeout", (int, float), 5.0)),
    )  # fmt: skip
    if "{address}" not in config.user_filter:
        raise r.fail(f"{p}.user_filter", "must contain {address}")
    if config.group_filter and "{dn}" not in config.group_filter:
        raise r.fail(f"{p}.group_filter", "must contain {dn}")
    if not config.group_attribute and not config.group_filter:
        raise r.fail(f"{p}.group_attribute", "give group_attribute, group_filter, or both")
    if config.cache_seconds < 0 or config.timeout <= 0:
        raise r.fail(f"{p}.timeout", "cache_seconds must be >= 0 and timeout > 0")
    return config


def _identifiers(r: _Reader, prefix: str, p: Mapping[str, Any]) -> frozenset[str]:
    from gateway.model.identifiers.kinds import resolve_kinds

    names = r.get(p, prefix, "identifiers", list, [])
    if not all(isinstance(n, str) for n in names):
        raise r.fail(f"{prefix}.identifiers", 'must be a list of kinds ("all", "safe-harbor", "PERSON", "PHONE", ...)')
    try:
        return resolve_kinds(names)
    except ConfigError as exc:
        raise r.fail(f"{prefix}.identifiers", exc.message) from exc


def _web(r: _Reader, table: object, base: Path) -> WebCountConfig:
    if not isinstance(table, Mapping):
        raise r.fail("engine.web", "knowledge = web needs an [engine.web] table")
    p = "engine.web"
    keys = ["endpoint", "total_docs", "count_path", "method", "query_param", "params", "body", "headers", "term",
            "any_of", "all_of", "missing_is_zero", "timeout", "retries", "backoff", "rate", "cache", "cache_days",
            "min_support"]  # fmt: skip
    r.unknown_keys(table, p, keys)
    for key in ("endpoint", "count_path"):
        if not r.get(table, p, key, str, ""):
            raise r.fail(f"{p}.{key}", "is required")
    total = r.get(table, p, "total_docs", int, 0)
    if total < 1:
        raise r.fail(f"{p}.total_docs", "is required: the number of documents the service searches")
    method = r.get(table, p, "method", str, "GET").upper()
    body = r.get(table, p, "body", str, "")
    if method not in ("GET", "POST"):
        raise r.fail(f"{p}.method", f"must be GET or POST, not {method!r}")
    if method == "POST" and "{query}" not in body:
        raise r.fail(f"{p}.body", "a POST needs a JSON body template with {query} in it")
    for key in ("params", "headers"):
        value = r.get(table, p, key, Mapping, {})
        if not all(isinstance(v, str) for v in value.values()):
            raise r.fail(f"{p}.{key}", "must map names to strings")
    return WebCountConfig(
        endpoint=table["endpoint"], total_docs=total, count_path=table["count_path"], method=method,
        query_param=r.get(table, p, "query_param", str, "q"), params=dict(r.get(table, p, "params", Mapping, {})),
        body=body, headers=dict(r.get(table, p, "headers", Mapping, {})), term=r.get(table, p, "term", str, '"{term}"'),
        any_of=r.get(table, p, "any_of", str, " OR "), all_of=r.get(table, p, "all_of", str, " AND "),
        missing_is_zero=r.get(table, p, "missing_is_zero", bool, True),
        timeout=float(r.get(table, p, "timeout", (int, float), 10.0)), retries=r.get(table, p, "retries", int, 3),
        backoff=float(r.get(table, p, "backoff", (int, float), 0.5)),
        rate=float(r.get(table, p, "rate", (int, float), 5.0)),
        cache=_path(r.get(table, p, "cache", str, "var/webcounts.db"), base),
        cache_days=float(r.get(table, p, "cache_days", (int, float), 30.0)),
        min_support=r.get(table, p, "min_support", int, 3),
    )  # fmt: skip


_ROLES = ("reviewer", "admin")
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _admin(r: _Reader) -> AdminConfig:
    a = r.table("admin")
    r.unknown_keys(a, "admin", ["listen", "users", "secure_cookies", "session_minutes", "max_failed_logins",
                                "lockout_minutes", "trusted_proxies"])  # fmt: skip
    proxies = r.get(a, "admin", "trusted_proxies", list, [])
    if not all(isinstance(x, str) and x for x in proxies):
        raise r.fail("admin.trusted_proxies", "must be a list of IP addresses")
    host, port = _address(r, "admin.listen", r.get(a, "admin", "listen", str, "127.0.0.1:8025"))
    users: list[AdminUser] = []
    raw_users = r.get(a, "admin", "users", list, [])
    for i, u in enumerate(raw_users):
        prefix = f"admin.users[{i}]"
        if not isinstance(u, Mapping):
            raise r.fail(prefix, "must be a table ([[admin.users]])")
        r.unknown_keys(u, prefix, ["name", "role", "password_hash"])
        name = r.get(u, prefix, "name", str, "")
        role = r.get(u, prefix, "role", str, "reviewer")
        hashed = r.get(u, prefix, "password_hash", str, "")
        if not name.strip():
            raise r.fail(f"{prefix}.name", "is required")
        if role not in _ROLES:
            raise r.fail(f"{prefix}.role", f"must be one of {', '.join(_ROLES)}, not {role!r}")
        if not hashed.startswith("scrypt$"):
            raise r.fail(f"{prefix}.password_hash", "must be a hash made by 'sanigate hash-password'")
        if any(x.name == name for x in users):
            raise r.fail(f"{prefix}.name", f"user {name!r} is defined twice")
        users.append(AdminUser(name=name, role=role, password_hash=hashed))
    config = AdminConfig(
        host=host,
        port=port,
        users=tuple(users),
        secure_cookies=r.get(a, "admin", "secure_cookies", bool, host not in _LOOPBACK),
        session_minutes=r.get(a, "admin", "session_minutes", int, 480),
        max_failed_logins=r.get(a, "admin", "max_failed_logins", int, 5),
        lockout_minutes=r.get(a, "admin", "lockout_minutes", int, 15),
        trusted_proxies=tuple(proxies),
    )
    for key in ("session_minutes", "max_failed_logins", "lockout_minutes"):
        if getattr(config, key) < 1:
            raise r.fail(f"admin.{key}", "must be at least 1")
    return config


def load_config(path: Path | None, *, base: Path | None = None) -> Config:
    """The configuration in ``path``, or the embedded defaults.

    Relative paths in it are relative to ``base``, the working directory by default.
    """
    base = base or Path.cwd()
    if path is None:
        from importlib import resources

        text = (resources.files("gateway") / "defaults.toml").read_text(encoding="utf-8")
        return parse_config(text, source="<embedded defaults>", base=base)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration ({exc.strerror})") from exc
    return parse_config(text, source=str(path), base=base)
