"""Run a Python script in a child process and SIGKILL it once it says it has reached a point."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def kill_when_marked(script: Path, args: list[str], marker: Path, *, timeout: float = 60) -> None:
    """Start ``python script args...``; once ``marker`` holds text, SIGKILL the child.

    Fails the test if the child ends, or never writes the marker, before being killed.
    """
    kill_command_when_marked([str(script), *args], marker, timeout=timeout)


def kill_command_when_marked(args: list[str], marker: Path, *, env: dict[str, str] | None = None,
                             timeout: float = 60) -> None:
    """:func:`kill_when_marked` for ``python args...`` (``-m sqlanon ...``), with ``env`` added to
    the environment."""
    child = subprocess.Popen([sys.executable, *args],
                             env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        while not (marker.exists() and marker.stat().st_size):  # written, not just created
            if child.poll() is not None:
                pytest.fail(f"the child ended before the marker: {child.stderr.read().decode()}")
            assert time.monotonic() < deadline, "the child never reached the marker"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()
        child.stderr.close()
