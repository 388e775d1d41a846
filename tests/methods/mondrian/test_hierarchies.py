"""A categorical quasi-identifier with a hierarchy is cut by its node's children (every non-empty child
needs k rows; one non-empty child is a specialization), released as the node's label, its width the
node's share of the leaves."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.spec import spec_from_dict

HIERARCHY = {"a": ["AB", "*"], "b": ["AB", "*"], "c": ["CD", "*"], "d": ["CD", "*"], "e": ["E", "*"]}


@pytest.fixture()
def engine():
    e = DuckDBEngine()
    e.con.execute("CREATE TABLE t (age INTEGER, city VARCHAR)")
    rows = [(30, "a")] * 4 + [(30, "b")] * 4 + [(30, "c")] * 2 + [(30, "d")]
    e.con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    yield e
    e.close()


def spec(output: dict, k: int = 2):
    return spec_from_dict({
        "source": {"table": "t"},
        "attributes": {"age": {"role": "quasi_identifier"},
                       "city": {"role": "quasi_identifier", "hierarchy": {"map": HIERARCHY}}},
        "privacy": [{"k_anonymity": {"k": k}}], "transformation": {"method": "mondrian"}, "output": output})


def test_cut_by_children(engine):
    report = api.apply(spec({"mode": "table", "name": "out"}), engine=engine)
    got = sorted(engine.con.execute("SELECT city, count(*) FROM out GROUP BY city").fetchall())
    assert got == [("CD", 3), ("a", 4), ("b", 4)]
    # age is constant (width 1 by rule 3); city: a and b are leaves (0), CD holds 2 of 5 leaves
    assert report.metrics["ncp"] == pytest.approx(11 * 1 + 3 * 2 / 5)
    api.apply(spec({"mode": "view", "name": "v"}), engine=engine)
    assert sorted(engine.con.execute("SELECT * FROM v").fetchall()) == \
        sorted(engine.con.execute("SELECT * FROM out").fetchall())


def test_one_child_is_a_specialization(engine):
    engine.con.execute("DELETE FROM t WHERE city IN ('c', 'd')")
    report = api.check(spec({"mode": "none"}, k=4), engine=engine)
    assert report.partitions == 2  # * -> AB (all rows) -> a | b


def test_values_outside_the_hierarchy(engine):
    engine.con.execute("INSERT INTO t VALUES (30, 'z')")
    with pytest.raises(SpecError, match="not leaves of its hierarchy"):
        api.check(spec({"mode": "none"}), engine=engine)
