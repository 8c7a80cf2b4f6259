"""Who may use the admin interface: password hashes, sessions, and the failed-login brake.

Passwords are hashed with scrypt (RFC 7914, in the standard library) and
compared in constant time. Sessions live in the store: the cookie holds only
a random token, so logging out ends a session for good, and every admin
process sharing the store knows every session.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.store.base import AdminToken, Store

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


@dataclass(frozen=True, slots=True)
class Session:
    token: str
    user: str
    role: str
    csrf: str
    expires: float


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Sessions:
    """Sessions and known devices kept in the store, so any admin process can serve any reviewer.

    The store keeps only a token's SHA-256: whoever reads the database cannot take over a session.
    Calls block on the store; the app runs them in a thread.
    """

    def __init__(self, store: Store, *, lifetime: float, device_lifetime: float = 90 * 86400.0,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self._store = store
        self._lifetime = lifetime
        self._device_lifetime = device_lifetime
        self._clock = clock

    def create(self, user: str, role: str) -> Session:
        session = Session(secrets.token_urlsafe(32), user, role, secrets.token_urlsafe(32),
                          self._clock() + self._lifetime)  # fmt: skip
        self._store.create_token(AdminToken(token_hash=_digest(session.token), kind="session", user=user, role=role,
                                            csrf=session.csrf, expires=session.expires))  # fmt: skip
        return session

    def get(self, token: str | None) -> Session | None:
        if not token:
            return None
        row = self._store.get_token(_digest(token), kind="session", now=self._clock())
        return None if row is None else Session(token, row.user, row.role, row.csrf, row.expires)

    def drop(self, token: str | None) -> None:
        if token:
            self._store.drop_token(_digest(token))

    def remember_device(self, user: str) -> str:
        """A token for the browser a user just logged in with (OWASP's device cookie)."""
        token = secrets.token_urlsafe(32)
        self._store.create_token(AdminToken(token_hash=_digest(token), kind="device", user=user, role="",
                                            csrf="", expires=self._clock() + self._device_lifetime))  # fmt: skip
        return token

    def device_user(self, token: str | None) -> str | None:
        if not token:
            return None
        row = self._store.get_token(_digest(token), kind="device", now=self._clock())
        return None if row is None else row.user


# A per-address or per-user count has to be this many times the per-pair limit before it brakes.
WIDE_FACTOR = 4


class LoginThrottle:
    """Failed logins, counted in the store, and what they brake.

    A guess counts against the pair (user, client address), the address, and the user. The pair is locked
    after ``limit`` failures: someone guessing at alice from elsewhere cannot lock alice out of her own
    address. An address is locked after ``WIDE_FACTOR * limit`` failures over all names (one host guessing
    at many users). A user is locked after as many failures from anywhere (guesses spread over many
    addresses), but only for browsers she has not logged in from before: a browser with her device cookie
    is counted on its own and never locked by others' failures. Behind a reverse proxy, set
    ``trusted_proxies`` so the address is the client's, not the proxy's.
    """

    def __init__(self, store: Store, *, limit: int, window: float, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self.limit = limit
        self.window = window
        self._clock = clock

    @staticmethod
    def keys(user: str, address: str, device: str | None) -> dict[str, str]:
        name = user.lower()
        if device is not None:
            return {"device": f"device:{_digest(device)}:{name}"}
        return {"pair": f"pair:{name}|{address}", "addr": f"addr:{address}", "user": f"user:{name}"}

    def blocked(self, keys: dict[str, str]) -> bool:
        counts = self._store.login_failures(list(keys.values()), since=self._clock() - self.window)
        for kind, key in keys.items():
            limit = self.limit if kind in ("pair", "device") else WIDE_FACTOR * self.limit
            if counts.get(key, 0) >= limit:
                return True
        return False

    def failed(self, keys: dict[str, str]) -> None:
        self._store.login_failed(list(keys.values()), at=self._clock())

    def succeeded(self, keys: dict[str, str]) -> None:
        """Forget the pair's (or the device's) failures; those against the address and the user stay."""
        own = [k for kind, k in keys.items() if kind in ("pair", "device")]
        self._store.login_succeeded(own, forget_before=self._clock() - self.window)
