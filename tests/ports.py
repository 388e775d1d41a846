"""Free TCP ports on 127.0.0.1 for the servers the tests start (PostgreSQL, Spark Connect, a cluster).

A port is chosen here and bound later by a starting server, seconds later for a JVM. Ports are drawn
below the kernel's ephemeral range, where a socket bound to port 0 (a JVM's driver and block manager,
pyspark's result servers, any outgoing connection) is never given one, so nothing of this machine's
other work takes a chosen port meanwhile; under pytest-xdist each worker draws from a band of its
own, so two workers never choose the same one.
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

LOWEST = 10000
"""Ports below this are left to services of the machine."""
_given: set[int] = set()
_draw = random.SystemRandom()  # not the global generator, which a test may seed


def ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (32768 when it cannot be read)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def band() -> range:
    """The ports this process draws from: its xdist worker's share of [LOWEST, ephemeral range)."""
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0) % workers
    top = max(ephemeral_low(), LOWEST + 1000 * workers)
    size = (top - LOWEST) // workers
    return range(LOWEST + worker * size, LOWEST + (worker + 1) * size)


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port of this process's band that nothing listens on and that it has not handed out before."""
    ports = band()
    for _ in range(200):
        port = _draw.randrange(ports.start, ports.stop)
        if port not in _given and _bindable(port):
            _given.add(port)
            return port
    raise RuntimeError(f"no free port in {ports.start}..{ports.stop - 1} after 200 draws")
