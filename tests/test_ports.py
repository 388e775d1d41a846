"""The test servers' ports: each xdist worker draws from a band of its own, below the ephemeral range."""

from __future__ import annotations

import socket

import pytest

from tests import ports


def bands(monkeypatch: pytest.MonkeyPatch, workers: int) -> list[range]:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(workers))
    found = []
    for i in range(workers):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{i}")
        found.append(ports.band())
    return found


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_the_workers_bands_are_disjoint_and_below_the_ephemeral_range(monkeypatch, workers):
    found = bands(monkeypatch, workers)
    assert all(len(b) >= 1000 for b in found)
    assert found[0].start == ports.LOWEST
    assert all(a.stop <= b.start for a, b in zip(found, found[1:]))
    assert found[-1].stop <= max(ports.ephemeral_low(), ports.LOWEST + 1000 * workers)


def test_without_xdist_the_process_has_the_whole_range(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    assert ports.band() == range(ports.LOWEST, max(ports.ephemeral_low(), ports.LOWEST + 1000))


def test_a_port_is_handed_out_once_and_a_listening_one_never(monkeypatch):
    first = ports.free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", first))
        taken.listen()
        monkeypatch.setattr(ports, "_given", set())
        monkeypatch.setattr(ports, "band", lambda: range(first, first + 3))
        drawn = {ports.free_port() for _ in range(2)}
        assert drawn == {first + 1, first + 2}
        with pytest.raises(RuntimeError, match="no free port"):
            ports.free_port()
