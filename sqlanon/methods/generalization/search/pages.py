"""Run the in-memory node checks on regular memory pages.

numpy asks the kernel for transparent huge pages on every array of 4 MiB or more (``madvise``).
On Linux with ``defrag=madvise`` (Debian's default), once those regions have been freed and reused,
later allocations of the engine's fetch and of numpy pay for it in kernel time: loading Adult grown
to 10M rows took 0.45 s or 1.1 s at random, the difference all system time, and with regular pages
it takes 0.55–0.6 s every time while the checks slow by about 5 % (bench/README.md). The setting is
process-wide, so it is changed only while the search's own code runs and put back afterwards.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import numpy as np

_T = TypeVar("_T")


def _switch() -> Callable[[bool], bool] | None:
    for module in ("_core", "core"):  # numpy 2, numpy 1
        multiarray = getattr(getattr(np, module, None), "multiarray", None)
        setter = getattr(multiarray, "_set_madvise_hugepage", None)
        if setter is not None:
            return setter
    return None


_SET_HUGEPAGE = _switch()


@contextmanager
def regular_pages() -> Iterator[None]:
    """numpy arrays allocated inside the block do not ask for huge pages; nesting is harmless."""
    if _SET_HUGEPAGE is None:
        yield
        return
    before = _SET_HUGEPAGE(False)
    try:
        yield
    finally:
        _SET_HUGEPAGE(before)


def on_regular_pages(fn: Callable[..., _T]) -> Callable[..., _T]:
    """Decorator form of :func:`regular_pages`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs) -> _T:
        with regular_pages():
            return fn(*args, **kwargs)

    return wrapper
