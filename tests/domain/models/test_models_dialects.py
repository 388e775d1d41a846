"""The new models' SQL renders for every target, and the one-statement form gives the same verdict."""

from __future__ import annotations

from collections import Counter

import pytest
import sqlglot
from sqlglot import exp

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models.disclosure import BetaLikeness, DeltaDisclosure
from sqlanon.domain.models.numeric_sensitive import KEAnonymity, KPQRAnonymity
from sqlanon.domain.models.presence import DeltaPresence
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.sql.dialects import PROFILES
from sqlanon.sql.nodes import table
from sqlanon.sql.render import render

ROWS = [("a", 1, "x", 1), ("b", 2, "y", 2), ("a", 2, "x", None), ("b", 1, None, 5), ("a", 1, "z", 1)] * 2
MODELS = [TCloseness("s", 0.3), TCloseness("s", 0.3, "ordered"), TCloseness("x", 0.3, "ordered"),
          TCloseness("s", 0.3, "hierarchical"), DeltaDisclosure("x", 1.0), BetaLikeness("s", 1.0),
          BetaLikeness("s", 1.0, "enhanced"), KEAnonymity("x", 2, 1), KPQRAnonymity("x", 2, 1, 0.3, 0.5),
          DeltaPresence("sub", 0.1, 0.9)]


@pytest.fixture()
def checked(duck):
    duck.con.execute("CREATE TABLE t (q1 VARCHAR, q2 INTEGER, s VARCHAR, x INTEGER)")
    duck.con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", ROWS)
    duck.con.execute("CREATE TABLE sub AS SELECT * FROM t LIMIT 4")

    def h(values):
        return TableHierarchy([[v, "G", "*"] for v in values] + [["?", "G", "*"]], null_leaf="?")

    p = Problem(duck, table("t"), ["q1", "q2"], {"q1": h(["a", "b"]), "q2": h(["1", "2"])}, ["s", "x"],
                MODELS, value_order={"s": ["z", "y", "x"]}, sensitive_hierarchies={"s": h(["x", "y", "z"])},
                column_types={"q1": "VARCHAR", "q2": "INTEGER", "s": "VARCHAR", "x": "INTEGER"})
    with Evaluator(p) as ev:
        node = ev.check({"q1": 0, "q2": 1})
        query = ev.plan.as_query(exp.select(exp.Star()).from_(node.verdict))
        yield duck, node, query


@pytest.mark.parametrize("dialect", sorted(PROFILES))
def test_renders_and_parses(checked, dialect):
    _, _, query = checked
    sql = render(query, dialect)
    assert sqlglot.parse_one(sql, read=PROFILES.get(dialect).sqlglot) is not None


def test_one_statement_gives_the_materialized_verdict(checked):
    duck, node, query = checked
    materialized = Counter(duck.fetch(exp.select(exp.Star()).from_(node.verdict))[1])
    assert Counter(duck.fetch(query)[1]) == materialized
    assert len(materialized) == 2  # q1 in {a, b}; q2 generalized to one group
