"""One local Spark session per test process (one JVM), and a fresh database per test.

Spark runs in local mode on two cores with one shuffle partition (the tests' tables are small; tests
that need several partitions split their input themselves), its warehouse in a temporary folder.
Without pyspark or a Java runtime every Spark test fails with what to install. Under pytest-xdist
the Spark tests are one group, run by one worker (tests/conftest.py), so one session serves them all.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

INSTALL_HINT = ("Spark tests need pyspark and a Java 17 runtime: ./scripts/setup-tests.sh installs both "
                "(pip install -e '.[spark]', apt-get install openjdk-17-jre-headless)")

_names = itertools.count(1)


class SparkUnavailable(RuntimeError):
    """pyspark is missing or the JVM did not start."""


def start(warehouse: Path) -> Any:
    """A local[2] session writing its tables under ``warehouse``."""
    try:
        from sqlanon.engines.spark_sessions import local_session
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise SparkUnavailable(INSTALL_HINT) from e
    try:
        session, _ = local_session("local[2]", {
            "spark.sql.warehouse.dir": str(warehouse),
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "1",
            "spark.default.parallelism": "2",
            # small tables: re-planning each stage costs more than it saves
            "spark.sql.adaptive.enabled": "false",
            # tiny tables: compiling each stage to Java costs more than it saves
            "spark.sql.codegen.wholeStage": "false",
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={warehouse}",
        })
    except Exception as e:
        raise SparkUnavailable(f"{INSTALL_HINT}: {e}") from e
    return session


def fresh_database(session: Any) -> str:
    """A new, empty database made the session's current one."""
    name = f"test_{next(_names)}"
    session.sql(f"CREATE DATABASE {name}")
    session.catalog.setCurrentDatabase(name)
    return name


def drop_database(session: Any, name: str) -> None:
    session.catalog.setCurrentDatabase("default")
    session.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")
