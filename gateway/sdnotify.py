"""systemd's readiness protocol (sd_notify): a datagram to $NOTIFY_SOCKET, and nothing when it is unset.

Ten lines of the documented wire format rather than a dependency: libsystemd's Python binding needs a C
build, and the pure-Python packages for it have not been released since 2017.
"""

from __future__ import annotations

import os
import socket
import time


def notify(*fields: str) -> bool:
    """Send ``READY=1``, ``RELOADING=1``, ``STATUS=…``; False when not run by systemd (or it is gone)."""
    address = os.environ.get("NOTIFY_SOCKET", "")
    if not address:
        return False
    if address.startswith("@"):  # an abstract socket
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall("\n".join(fields).encode("utf-8"))
    except OSError:
        return False
    return True


def reloading() -> bool:
    """Tell systemd a reload began (Type=notify-reload wants the monotonic time with it)."""
    return notify("RELOADING=1", f"MONOTONIC_USEC={time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000}")
