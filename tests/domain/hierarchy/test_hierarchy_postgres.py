"""The builders' SQL rendered for PostgreSQL, run on a real server, equals the plain-Python reference."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlglot import exp

from sqlanon.domain.hierarchy import (
    DateHierarchy,
    IntervalHierarchy,
    MaskHierarchy,
    OrderedHierarchy,
)
from sqlanon.sql.nodes import alias, col, table
from sqlanon.sql.render import render
from tests.domain.hierarchy import hierarchy_oracle as oracle

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def pg():
    psycopg = pytest.importorskip("psycopg")
    from tests.pg_server import PostgresServer, PostgresUnavailable

    try:
        server = PostgresServer().start()
    except PostgresUnavailable as e:
        pytest.skip(str(e))
    try:
        # no server-side prepared statements: the test table's column type changes between tests
        with psycopg.connect(server.dsn, autocommit=True, prepare_threshold=None) as con:
            yield con
    finally:
        server.stop()


def run(pg, h, values, sql_type: str) -> list[tuple]:
    pg.execute("DROP TABLE IF EXISTS vals")
    pg.execute(f"CREATE TABLE vals (i int, v {sql_type})")  # fixed test DDL, no user text
    with pg.cursor() as cur:
        cur.executemany("INSERT INTO vals VALUES (%s, %s)", list(enumerate(values)))
    query = exp.select(*[alias(h.expression(col("v"), lv), f"l{lv}") for lv in range(1, h.height + 1)]
                       ).from_(table("vals")).order_by(col("i"))
    return [tuple(r) for r in pg.execute(render(query, "postgres")).fetchall()]


def expected(fn, values, height):
    return [tuple(fn(v, lv) for lv in range(1, height + 1)) for v in values]


NUMBERS = [None, -7.5, -0.05, 0.0, 0.3, 0.29, 4.0, 17.0, 18.0, 24.99, 25.0, 64.0, 65.0, 99.5, 1234.0,
           2.9999999999999996]


@pytest.mark.parametrize("widths, origin, bottom, top", [
    ((5, 10, 50), 0, 18, 65), ((0.1, 0.5), -0.2, None, None), ((0.25, 1.5), 0.5, -1.25, 100.0),
    ((5,), -2, None, None)])
def test_intervals_on_postgres(pg, widths, origin, bottom, top):
    h = IntervalHierarchy(widths, origin=origin, bottom=bottom, top=top)
    assert run(pg, h, NUMBERS, "double precision") == expected(
        lambda v, lv: oracle.interval(v, lv, list(widths), origin, bottom, top), NUMBERS, h.height)


def test_intervals_on_postgres_text_column(pg):
    h = IntervalHierarchy((5, 10))
    assert run(pg, h, ["39", "4", None], "text") == [("[35, 40)", "[30, 40)", "*"),
                                                     ("[0, 5)", "[0, 10)", "*"),
                                                     (None, None, "*")]


UNITS = ("month", "quarter", "year", "decade", "century")
DAYS = [None, dt.date(2021, 3, 14), dt.date(1999, 12, 31), dt.date(1, 1, 1), dt.date(2000, 10, 1)]


@pytest.mark.parametrize("sql_type, values", [
    ("date", DAYS),
    ("timestamp", [None if d is None else dt.datetime.combine(d, dt.time(23, 59)) for d in DAYS]),
    ("text", [None if d is None else d.isoformat() + "T10:00:00" for d in DAYS]),
])
def test_dates_on_postgres(pg, sql_type, values):
    h = DateHierarchy(UNITS)
    assert run(pg, h, values, sql_type) == expected(lambda v, lv: oracle.date(v, lv, list(UNITS)),
                                                    values, h.height)


TEXTS = [None, "47677", "12", "", "é漢字x", "a b"]


@pytest.mark.parametrize("from_right", [True, False])
def test_masks_on_postgres(pg, from_right):
    h = MaskHierarchy(4, from_right=from_right)
    assert run(pg, h, TEXTS, "text") == expected(lambda v, lv: oracle.mask(v, lv, 4, from_right), TEXTS,
                                                 h.height)
    assert run(pg, MaskHierarchy(2), [47677, None], "integer") == [("4767*", "476**"), (None, "**")]


def test_ordered_groups_on_postgres(pg):
    values = ["a", "b", "c", "d", "e"]
    h = OrderedHierarchy(values, [2, 4])
    assert run(pg, h, values, "text") == expected(
        lambda v, lv: oracle.ordered(v, lv, values, [2, 4]), values, h.height)
