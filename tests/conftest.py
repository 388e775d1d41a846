"""Shared fixtures: real data from ../shared/data (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SQLANON_DATA", ROOT.parent / "shared" / "data"))
ADULT = DATA / "adult"
ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
             "occupation", "salary-class"]


def require_data(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data not available at {path}")
    return path


@pytest.fixture(scope="session")
def adult_dir() -> Path:
    return require_data(ADULT)


@pytest.fixture(scope="session")
def adult_hierarchies(adult_dir: Path) -> dict:
    from sqlanon.domain.hierarchy import read_arx_csv

    return {q: read_arx_csv(adult_dir / f"adult_hierarchy_{q}.csv") for q in ADULT_QIS}


@pytest.fixture()
def duck():
    from sqlanon.engines.duckdb import DuckDBEngine

    e = DuckDBEngine()
    yield e
    e.close()


@pytest.fixture()
def adult_engine(adult_dir: Path, duck):
    """An in-memory DuckDB holding table ``adult`` (all columns as text, as ARX reads them)."""
    duck.con.execute(
        "CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, all_varchar=true)",
        [str(adult_dir / "adult.csv")])
    return duck


def adult_spec_dict(adult_dir: Path, qis=ADULT_QIS, sensitive=(), privacy=None, levels=None,
                    limit=0.0) -> dict:
    attributes = {q: {"role": "quasi_identifier",
                      "hierarchy": {"csv": str(adult_dir / f"adult_hierarchy_{q}.csv")}} for q in qis}
    for s in sensitive:
        attributes[s] = {"role": "sensitive"}
    return {
        "source": {"table": "adult"},
        "attributes": attributes,
        "privacy": privacy or [{"k_anonymity": {"k": 5}}],
        "transformation": {"levels": levels or {}, "suppression_limit": limit},
    }


def _hypothesis_profiles() -> None:
    from hypothesis import HealthCheck, settings

    # Machines are shared: no per-example deadline. CI replays the same examples on every run
    # (derandomize), so a red build always points at a change, never at a newly drawn example.
    settings.register_profile("default", deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True,
                              print_blob=True)
    settings.load_profile("ci" if os.environ.get("CI") else "default")


_hypothesis_profiles()


SPARK_GROUP = "spark"


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The groups pytest-xdist's workers take whole (``-n 2 --dist loadgroup``): the tests of the
    shared Spark session and the cluster test form one, so one JVM starts and warms up for all of
    them and the cluster's four JVMs never start beside it; every other module is a group of its
    own, so its module-scoped fixtures are built once, by one worker."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        spark = "spark_session" in getattr(item, "fixturenames", ()) or item.get_closest_marker("cluster")
        item.add_marker(pytest.mark.xdist_group(SPARK_GROUP if spark else item.nodeid.split("::")[0]))


@pytest.fixture(scope="session")
def pg_server():
    """One real PostgreSQL 15 server (tests/pg_server.py) for the run; without the server binaries
    every test using it fails with the command that installs them."""
    from tests.pg_server import PostgresServer, PostgresUnavailable

    try:
        server = PostgresServer().start()
    except PostgresUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark_session(tmp_path_factory):
    """One local Spark session (one JVM) shared by every Spark test of the process."""
    from tests.spark_session import SparkUnavailable, start

    try:
        session = start(tmp_path_factory.mktemp("spark-warehouse"))
    except SparkUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    yield session
    session.stop()


@pytest.fixture()
def spark(spark_session):
    """A Spark engine whose current database is a new, empty one (dropped after the test)."""
    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    name = fresh_database(spark_session)
    engine = SparkEngine(session=spark_session)
    yield engine
    engine.close()
    drop_database(spark_session, name)
