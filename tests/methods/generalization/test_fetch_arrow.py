"""Keys coded by Arrow's dictionary encoding are the codes and distinct values Python's gives."""

from __future__ import annotations

from sqlglot import exp

from sqlanon.domain.factorize import factorize_text
from sqlanon.methods.generalization.search.fast_load import objects as _objects
from sqlanon.methods.generalization.search.fetch_arrow import fetch_factorized
from sqlanon.sql.nodes import alias, col


def test_arrow_codes_are_the_codes_of_the_python_objects(duck):
    duck.con.execute("""
        CREATE TABLE t AS SELECT
          CASE WHEN i % 7 = 3 THEN NULL ELSE 'k' || ((i * 7919) % 613)::VARCHAR END AS a,
          ['é', 'e', 'E', '', ' e'][1 + i % 5] AS b,
          i % 4 AS n
        FROM range(5000) r(i)""")
    query = exp.select(alias(col("a"), "q0"), alias(col("b"), "q1"),
                       alias(exp.cast(col("n"), exp.DataType.build("bigint")), "n")).from_("t")
    counts, factorized = fetch_factorized(duck, query, ["q0", "q1"], "n")
    data = duck.fetch_numpy(query)
    assert counts.tolist() == data["n"].tolist()
    for name, (codes, distinct) in zip(["q0", "q1"], factorized):
        expected_codes, expected_distinct = factorize_text(_objects(data[name]))
        assert codes.tolist() == expected_codes.tolist()
        assert distinct.tolist() == expected_distinct.tolist()
    assert None in factorized[0][1].tolist() and factorized[0][1].dtype == object
