"""The count-query comparison of bench/anatomy_rce.py: its estimators on a hand-worked table, its
workload on Adult, and on Adult's first 3,000 rows at l = 3 Anatomy answering the workload with a
smaller error than l-diverse generalization."""

from __future__ import annotations

import numpy as np

from bench import anatomy_rce as rce
from sqlanon.engines.duckdb import DuckDBEngine


def test_workload_and_errors_on_adult(adult_dir):
    with DuckDBEngine() as engine:
        engine.con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                           "all_varchar=true) LIMIT 500", [str(adult_dir / "adult.csv")])
        data = rce._read(engine, "adult")
    everything = {a: set(data.values[a]) for a in [*rce.QIS, rce.SENSITIVE]}
    assert rce.actual(data, everything) == 500
    query = rce.workload(data, rce.QIS, 3, 0.05, 1, seed=1)[0]
    assert rce.actual(data, query) > 0 and len(query) == 4

    (result,) = rce.run(adult_dir, [3], queries=100, rows=3000)
    assert 0 < result["anatomy"] < result["generalization"]


def test_estimators_on_a_hand_worked_table():
    """Over every sensitive value Anatomy counts the QIT rows, which are the source's; over some, each
    matching row counts its group's share; generalization counts each row's share of its leaves."""
    with DuckDBEngine() as engine:
        engine.con.execute("CREATE TABLE q AS SELECT * FROM (VALUES ('1', 'a', 'x', 1), ('2', 'b', 'y', 1), "
                           "('1', 'a', 'y', 2), ('3', 'b', 'x', 2)) t(age, sex, occupation, group_id)")
        rows = rce._read(engine, "q")
        engine.con.execute("CREATE TABLE s AS SELECT group_id, occupation, count(*) AS count FROM q "
                           "GROUP BY ALL")
        st = rce._read(engine, "s")
    qit = rce.Columns({k: v for k, v in rows.values.items() if k != rce.SENSITIVE})
    assert rce.anatomy_estimate(qit, st, {"age": {"1"}, rce.SENSITIVE: {"x", "y"}}) == 2
    # group 1 holds x and y, group 2 y and x: each matching row counts half for {x}
    assert rce.anatomy_estimate(qit, st, {"age": {"1"}, rce.SENSITIVE: {"x"}}) == 1
    leaves = {"age": {"1-2": {"1", "2"}, "3": {"3"}}, "sex": {"*": {"a", "b"}}}
    released = rce.Columns({"age": np.array(["1-2", "1-2", "1-2", "3"]), "sex": np.array(["*"] * 4),
                            rce.SENSITIVE: rows.values[rce.SENSITIVE]})
    assert rce.generalization_estimate(released, leaves, {"age": {"1"}, rce.SENSITIVE: {"x", "y"}}) == 1.5
    assert rce.generalization_estimate(released, leaves, {"sex": {"a"}, rce.SENSITIVE: {"x"}}) == 1.0
