"""Opening Spark sessions: a local session (``spark://local[N]``) or a Spark Connect client
(``sc://HOST:PORT``), with the one-line errors of a missing pyspark, Java or server."""

from __future__ import annotations

import importlib
import os
import re
import socket
import sys
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from sqlanon.engines.messages import driver_message
from sqlanon.errors import EngineError, UnsupportedError

EXTRA = "pip install 'sqlanon[spark]'"
LOCAL_DEFAULTS = {"spark.ui.showConsoleProgress": "false"}
"""Settings of a session sqlanon starts itself, unless the connection string sets them."""
PYSPARK_PYTHON = "PYSPARK_PYTHON"
CONNECT_CLIENT = ("pandas", "pyarrow", "grpc", "grpc_status", "google.rpc.status_pb2", "zstandard")
"""The modules pyspark's Spark Connect client imports."""

_LOCAL = re.compile(r"local(\[(\*|[1-9][0-9]*)(, ?[1-9][0-9]*)?\])?")


def pyspark_sql() -> Any:
    try:
        import pyspark.sql
    except ImportError as e:
        raise UnsupportedError(f"Spark needs pyspark and a Java 17 runtime: {EXTRA}") from e
    return pyspark.sql


def remote_session(url: str) -> Any:
    """A new session of the Spark Connect server at ``url`` (``sc://HOST:PORT``, with Connect's own
    ``/;key=value`` parameters if any), after checking that something listens there: the client
    would otherwise retry for minutes before failing."""
    sql = pyspark_sql()
    # pyspark's own check (run when pyspark.sql.connect is first imported) exits the process quietly
    # under `python -c`, taking it for a doctest run: import the client's packages here first
    try:
        for module in CONNECT_CLIENT:
            importlib.import_module(module)
    except ImportError as e:
        raise UnsupportedError(f"Spark Connect needs its client packages (grpcio and others): {EXTRA}") from e
    try:
        address = urlsplit(url)
        host, port = address.hostname, address.port or 15002
    except ValueError as e:
        raise EngineError(f"spark: cannot read the Spark Connect address {url!r}: {e}") from e
    if not host:
        raise EngineError(f"spark: {url!r} names no host: write sc://HOST:PORT")
    try:
        socket.create_connection((host, port), timeout=10).close()
    except OSError as e:
        raise EngineError(f"spark: no Spark Connect server answers at {url!r}: {e}") from e
    try:
        return sql.SparkSession.builder.remote(url).create()
    except Exception as e:
        raise EngineError(f"spark: cannot open a Spark Connect session at {url!r}: "
                          f"{driver_message(e)}") from e


def parse_target(target: str) -> tuple[str, dict[str, str]]:
    """The master and the settings of ``spark://local[N]?key=value&...``.

    >>> parse_target("spark://local[2]?spark.sql.shuffle.partitions=8")
    ('local[2]', {'spark.sql.shuffle.partitions': '8'})
    """
    rest = target.removeprefix("spark://")
    master, _, query = rest.partition("?")
    if not _LOCAL.fullmatch(master):
        raise EngineError(f"spark: {target!r} names no local session: write spark://local[N] (N cores, "
                          "or * for all), optionally followed by ?setting=value&..., or sc://HOST:PORT "
                          "for a Spark Connect server")
    try:
        conf = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    except ValueError as e:
        raise EngineError(f"spark: cannot read the settings of {target!r}: {e}") from e
    return master, conf


def local_session(master: str, conf: dict[str, str] | None = None) -> tuple[Any, bool]:
    """A session with ``master`` (``local[2]``), and whether sqlanon started it (a session already
    running in this process is used as it is, and left running)."""
    sql = pyspark_sql()
    running = sql.SparkSession.getActiveSession()
    if running is not None:
        return running, False
    builder = sql.SparkSession.builder.master(master).appName("sqlanon")
    for key, value in {**LOCAL_DEFAULTS, **(conf or {})}.items():
        builder = builder.config(key, value)
    # pyspark starts the executors' Python workers with $PYSPARK_PYTHON, else whatever `python3`
    # is on the PATH: a function run on the executors (grouped_arrow_map) needs sqlanon's own
    python = os.environ.get(PYSPARK_PYTHON)
    os.environ.setdefault(PYSPARK_PYTHON, sys.executable)
    try:
        session = builder.getOrCreate()
    except Exception as e:  # the JVM did not start: no Java, or a bad setting
        raise EngineError(f"spark: cannot start a session on {master!r}: {driver_message(e)} "
                          "(Spark needs a Java 17 runtime on the PATH or in JAVA_HOME)") from e
    finally:
        if python is None:  # read once, when the session started
            os.environ.pop(PYSPARK_PYTHON, None)
    session.sparkContext.setLogLevel("ERROR")
    return session, True
