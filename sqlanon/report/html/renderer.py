"""Drawing the charts in a process of their own, started when a run asks for an HTML report.

vl-convert spends a third of a second of CPU (more in wall time) starting its JavaScript runtime on
the first chart, and holds the interpreter lock while it draws, so a thread cannot hide that start.
A child process can: started with the run's observer, it starts the runtime while the run reads the
data, and the page's charts are then drawn by a warm runtime. It is one per process, reused by
later reports, and it ends when this process does (it reads until its input closes).

Anything wrong with the child (it could not start, it died, it refused a chart) falls back to
drawing in this process, which gives the same SVG or raises vl-convert's own error.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

WORKER = Path(__file__).with_name("render_worker.py")

_lock = threading.Lock()
_child: subprocess.Popen[str] | None = None
_owner = 0
"""The process that started the child: a process forked from it does not share its pipes."""


def start() -> None:
    """Start the child (once per process); does nothing if it runs already or cannot start."""
    global _child, _owner
    with _lock:
        if _child is not None and _owner == os.getpid() and _child.poll() is None:
            return
        found = importlib.util.find_spec("vl_convert")
        if found is None or found.origin is None:
            return
        # -S: no site initialization (its .pth files and imports); vl_convert's folder is on the path
        command = [sys.executable, "-S", str(WORKER), str(Path(found.origin).parent.parent)]
        try:
            _owner = os.getpid()
            _child = subprocess.Popen(command, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                      encoding="utf-8", bufsize=1)
        except OSError:
            _child = None
            return
        atexit.register(stop)


def draw(spec: Mapping[str, Any]) -> str | None:
    """The chart's SVG document from the child, or None (not started, failed: draw it here)."""
    global _child
    with _lock:
        child = _child
        if child is None or _owner != os.getpid():
            return None
        stdin, stdout = child.stdin, child.stdout
        try:
            assert stdin is not None and stdout is not None
            stdin.write(json.dumps(spec) + "\n")
            stdin.flush()
            line = stdout.readline()
            answer = json.loads(line) if line else None
        except (OSError, ValueError):
            answer = None
        if answer is None:  # the child is gone: later charts are drawn here
            _child = None
            _close(child)
            return None
        svg = answer.get("svg")
        return svg if isinstance(svg, str) else None


def stop() -> None:
    """End the child (its input closes; it exits after the chart it may be drawing)."""
    global _child
    with _lock:
        child, _child = _child, None
    if child is not None and _owner == os.getpid():  # a forked process leaves its parent's child be
        _close(child)


def _close(child: subprocess.Popen[str]) -> None:
    streams: list[IO[str] | None] = [child.stdin, child.stdout]
    for stream in streams:
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
