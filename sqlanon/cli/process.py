"""The ``sqlanon`` process: :func:`~sqlanon.cli.main.main`, then an exit that skips Python's teardown.

A process that has loaded numpy, pyarrow, sqlglot's dialects and DuckDB spends 0.05 to 0.1 s after
its last output in the interpreter's finalization (freeing every object of every module, and full
garbage collections over them), longer than some of the work it did (bench/README.md, "The whole
``anonymize`` process"). Nothing of it is needed once the command is done: the database is closed,
files are closed. So the process flushes its streams, runs the exit handlers (``atexit``: logging's
flush, coverage data, temporary directories) and ends with ``os._exit``. Calling
:func:`~sqlanon.cli.main.main` in-process (tests, embedding) is unchanged.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import NoReturn

from sqlanon.cli.main import EXIT_BROKEN_PIPE, main


def entry() -> NoReturn:
    """Run the command line as the whole process (the ``sqlanon`` script, ``python -m sqlanon``)."""
    # the modules imported so far live until the end: full collections need not walk them again
    gc.freeze()
    leave(main())


def leave(code: int) -> NoReturn:
    """End the process with ``code`` once the command is done, without the interpreter's teardown.

    Falls back to a normal exit while another thread runs (the interpreter would wait for it) and
    under a profiler or tracer (``python -m cProfile``, a debugger), which reports after the command.
    """
    code = _flushed(code)
    if threading.active_count() > 1 or sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)
    atexit._run_exitfuncs()
    code = _flushed(code)
    os._exit(code)


def _flushed(code: int) -> int:
    """Flush standard output and error; a reader that has gone turns ``code`` into 141, as
    :func:`~sqlanon.cli.main.main` reports it."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_BROKEN_PIPE
    try:
        sys.stderr.flush()
    except OSError:
        pass
    return code
