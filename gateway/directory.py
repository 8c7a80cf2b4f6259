"""Sender groups from an LDAP directory (OpenLDAP, Active Directory), for rules that match ``group:NAME``.

Looked up with ldap3 (pure Python): bind as a service account, find the sender's entry by its address,
and read its groups, either from an attribute of the entry (``memberOf``, as Active Directory and
OpenLDAP's memberof overlay keep it) or by searching for groups that list the entry as a member.
Answers are cached for ``cache_seconds``, misses included. A directory that cannot be asked is an
error, never "no groups": a message whose policies depend on a group is then refused with a 4xx and
retried, rather than sanitized under the wrong policy.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from gateway.config import DirectoryConfig
from gateway.errors import SanigateError


class DirectoryUnavailableError(SanigateError):
    """The directory did not answer (down, slow, refused our bind)."""

    smtp_code = 451
    smtp_status = "4.4.3"


class Directory:
    def __init__(self, config: DirectoryConfig, *, clock: Callable[[], float] = time.monotonic,
                 max_entries: int = 10_000) -> None:  # fmt: skip
        self.config = config
        self._clock = clock
        self._max = max_entries
        self._cache: OrderedDict[str, tuple[float, frozenset[str]]] = OrderedDict()
        self._lock = threading.Lock()
        self.lookups = 0  # directory round trips made (the cache's misses)

    def groups_of(self, address: str) -> frozenset[str]:
        """The sender's groups, lower-cased, each by its name (``records``) and its DN. Blocks: call from a thread."""
        key = address.strip().lower()
        now = self._clock()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] > now:
                self._cache.move_to_end(key)
                return hit[1]
        groups = self._ask(key)
        with self._lock:
            self._cache[key] = (now + self.config.cache_seconds, groups)
            self._cache.move_to_end(key)
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return groups

    def _ask(self, address: str) -> frozenset[str]:
        import ldap3
        from ldap3.utils.conv import escape_filter_chars

        c = self.config
        password = os.environ.get(c.bind_password_env, "") if c.bind_password_env else ""
        self.lookups += 1
        seconds = max(1, math.ceil(c.timeout))  # ldap3 packs socket timeouts as whole seconds
        server = ldap3.Server(c.url, connect_timeout=seconds, get_info=ldap3.NONE)
        conn = ldap3.Connection(server, user=c.bind_dn or None, password=password or None, read_only=True,
                                receive_timeout=seconds, raise_exceptions=True)  # fmt: skip
        try:
            conn.open()
            conn.bind()
            conn.search(c.base_dn, c.user_filter.replace("{address}", escape_filter_chars(address)),
                        attributes=[c.group_attribute] if c.group_attribute else ["1.1"], size_limit=2,
                        time_limit=seconds)  # fmt: skip
            users = [e for e in conn.response or [] if e.get("type") == "searchResEntry"]
            if not users:
                return frozenset()
            dns: list[str] = []
            if c.group_attribute:
                dns.extend(str(v) for v in users[0].get("attributes", {}).get(c.group_attribute, []) or [])
            if c.group_filter:
                conn.search(c.group_base_dn or c.base_dn, c.group_filter.replace("{dn}", escape_filter_chars(
                    str(users[0]["dn"]))), attributes=["1.1"], time_limit=seconds)  # fmt: skip
                dns.extend(str(e["dn"]) for e in conn.response or [] if e.get("type") == "searchResEntry")
        except Exception as exc:  # ldap3 raises its own errors, socket errors and struct errors: all mean "no answer"
            raise DirectoryUnavailableError(f"directory {c.url}: {type(exc).__name__}: {exc}") from exc
        finally:
            with contextlib.suppress(Exception):  # already closed, or never opened
                conn.unbind()
            sock = getattr(conn, "socket", None)  # ldap3 leaves a socket that failed to connect open
            if sock is not None:
                sock.close()
        return frozenset(name for group_dn in dns for name in _names(group_dn))


def _names(dn: str) -> tuple[str, ...]:
    """A group's DN and the value of its first RDN (``cn=Records,ou=groups,…`` → ``records``), lower-cased."""
    from ldap3.core.exceptions import LDAPException
    from ldap3.utils.dn import parse_dn

    try:
        first = parse_dn(dn)[0][1]
    except (IndexError, LDAPException):  # a malformed DN still matches by the whole DN
        return (dn.lower(),)
    return (dn.lower(), first.lower())
