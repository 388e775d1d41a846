"""Anatomy on PostgreSQL: the two views read the groups of the seeded tables every time, and an
in-place release replaces the source by the quasi-identifier table."""

from __future__ import annotations

import warnings

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.methods.anatomy.checks import check_release
from tests.methods.anatomy.test_anatomy_duckdb import spec, table_rows

pytestmark = pytest.mark.postgres


def rows(engine, name: str) -> list[tuple]:
    return sorted((tuple(r) for r in engine.fetch(exp.select("*").from_(table(name)))[1]),
                  key=lambda r: tuple((v is None, str(v)) for v in r))


@pytest.fixture()
def source(pg):
    pg.execute_script("CREATE TABLE t (id INTEGER, age INTEGER, zip TEXT, disease TEXT)")
    pg.insert_rows("t", table_rows(60))
    return pg


def test_views_and_in_place(source):
    original = sorted(table_rows(60), key=lambda r: r[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        api.apply(spec_from_dict(spec(3, "view", name="v", seed=9)), engine=source)
        api.apply(spec_from_dict(spec(3, "table", name="t2", seed=9)), engine=source)
        assert rows(source, "v") == rows(source, "t2") == rows(source, "v")
        assert rows(source, "v__sensitive") == rows(source, "t2__sensitive")
        check_release(original, rows(source, "v"), rows(source, "v__sensitive"), 3)
        source.execute_script("DROP VIEW v; DROP VIEW v__sensitive")
        api.apply(spec_from_dict(spec(3, "in_place", seed=9)), engine=source)
    assert rows(source, "t") == rows(source, "t2")
    check_release(original, rows(source, "t"), rows(source, "t__sensitive"), 3)
