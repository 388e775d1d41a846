"""A self-updating line on a terminal while a long microaggregation runs (standard error only)."""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType


class ProgressLine:
    """Shows ``<label>: <stage>, <seconds> s`` once the run has taken ``after`` seconds, refreshed
    every ``every`` seconds from a background thread; nothing when standard error is not a terminal."""

    def __init__(self, label: str, *, enabled: bool = True, after: float = 1.0, every: float = 0.5
                 ) -> None:
        self.label = label
        self.stage = "starting"
        self.enabled = enabled and sys.stderr.isatty()
        self.after, self.every = after, every
        self.start = time.perf_counter()
        self.shown = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, stage: str) -> None:
        self.stage = stage

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            elapsed = time.perf_counter() - self.start
            if elapsed >= self.after:
                sys.stderr.write(f"\r{self.label}: {self.stage}, {elapsed:.1f} s   ")
                sys.stderr.flush()
                self.shown = True

    def __enter__(self) -> ProgressLine:
        if self.enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
