"""Who may use the admin interface: password hashes, sessions, and the failed-login brake.

Passwords are hashed with scrypt (RFC 7914, in the standard library) and
compared in constant time. Sessions live on the server: the cookie holds
only a random token, so logging out or restarting ends a session for good.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

# N=2^15, r=8: 32 MiB and about 0.1 s a guess on this machine's cores.
_N, _R, _P = 1 << 15, 8, 1
_MAXMEM = 64 * 1024 * 1024


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=_N, r=_R, p=_P, maxmem=_MAXMEM, dklen=32)
    b64 = base64.b64encode
    return f"scrypt${_N}${_R}${_P}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, hashed: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = hashed.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                             maxmem=_MAXMEM, dklen=len(expected))  # fmt: skip
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, expected)


@functools.cache
def dummy_hash() -> str:
    """Checked when the user name is unknown, so that a wrong name costs as long as a wrong password."""
    return hash_password("not a password", salt=b"sanigate-dummy-s")


@dataclass(slots=True)
class Session:
    token: str
    user: str
    role: str
    csrf: str
    expires: float


class Sessions:
    def __init__(self, *, lifetime: float, clock: Callable[[], float] = time.time) -> None:
        self._lifetime = lifetime
        self._clock = clock
        self._by_token: dict[str, Session] = {}

    def create(self, user: str, role: str) -> Session:
        now = self._clock()
        self._by_token = {t: s for t, s in self._by_token.items() if s.expires > now}
        session = Session(secrets.token_urlsafe(32), user, role, secrets.token_urlsafe(32), now + self._lifetime)
        self._by_token[session.token] = session
        return session

    def get(self, token: str | None) -> Session | None:
        if not token:
            return None
        session = self._by_token.get(token)
        if session is None or session.expires <= self._clock():
            self._by_token.pop(token or "", None)
            return None
        return session

    def drop(self, token: str | None) -> None:
        self._by_token.pop(token or "", None)


@dataclass(slots=True)
class LoginThrottle:
    """At most ``limit`` failed logins per key (a user name, a client address) within ``window`` seconds."""

    limit: int
    window: float
    clock: Callable[[], float] = time.time
    _failures: dict[str, deque[float]] = field(default_factory=dict)

    def blocked(self, keys: Iterable[str]) -> bool:
        now = self.clock()
        for key in keys:
            times = self._failures.get(key)
            while times and times[0] <= now - self.window:
                times.popleft()
            if times is not None and len(times) >= self.limit:
                return True
        return False

    def failed(self, keys: Iterable[str]) -> None:
        now = self.clock()
        for key in keys:
            self._failures.setdefault(key, deque()).append(now)

    def succeeded(self, key: str) -> None:
        self._failures.pop(key, None)
