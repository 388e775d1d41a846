"""``method: local_suppression`` end to end on DuckDB: the written rows are k-anonymous under the
wildcard semantics (brute force over the output), only quasi-identifier cells change and only to
NULL (or the marker), the report counts them, and every output mode gives the same rows."""

from __future__ import annotations

import numpy as np
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.errors import SpecError
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import col, table

QIS = ["a", "b", "age"]


def load(duck, n: int = 60, seed: int = 0) -> list[tuple]:
    rng = np.random.default_rng(seed)
    rows = [(i, f"a{rng.integers(3)}", int(rng.integers(3)), int(rng.integers(18, 70)),
             None if i % 17 == 5 else f"b{rng.integers(2)}", f"name{i}", float(rng.integers(1000)))
            for i in range(n)]
    duck.con.execute("CREATE TABLE t (id INTEGER, a VARCHAR, b INTEGER, age INTEGER, extra VARCHAR, "
                     "name VARCHAR, income DOUBLE)")
    duck.con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    return rows


def spec(mode: str = "table", name: str | None = "out", qis=QIS, **transformation):
    attributes = {"id": "insensitive", "name": "identifier", "income": "sensitive", "extra": "insensitive",
                  **{q: {"role": "quasi_identifier"} for q in qis}}
    if "levels" in transformation:
        attributes["age"] = {"role": "quasi_identifier",
                             "hierarchy": {"intervals": {"widths": [10, 20]}}}
    return spec_from_dict({"source": {"table": "t"}, "attributes": attributes,
                           "transformation": {"method": "local_suppression", **transformation},
                           "output": {"mode": mode, **({"name": name} if name else {})}})


def fetch(engine, relation: str) -> list[tuple]:
    return [tuple(r) for r in engine.fetch(exp.select("*").from_(table(relation)).order_by(col("id")))[1]]


def wildcard_k(rows: list[tuple]) -> int:
    """The smallest number of rows any row matches, NULL matching anything (brute force)."""
    def match(x, y):
        return all(u is None or v is None or u == v for u, v in zip(x, y))
    return min(sum(match(x, y) for y in rows) for x in rows)


def check_release(source: list[tuple], out: list[tuple], k: int, report, positions=(1, 2, 3)) -> None:
    assert len(out) == len(source)
    released = [tuple(r[p] for p in positions) for r in out]
    assert wildcard_k(released) >= k
    suppressed = 0
    for s, o in zip(source, out):
        assert o[0] == s[0] and o[-1] == s[-1]  # id and income unchanged
        for p in positions:
            if o[p] is None:
                suppressed += s[p] is not None
    assert suppressed == sum(report.cells.values())
    assert report.achieved_k >= k and report.anonymous


@pytest.mark.parametrize("solver", [{"solver": "exact"}, {"heuristic": "cover"}, {"heuristic": "pattern"},
                                    {"heuristic": "sdcmicro"}])
def test_table_output_is_k_anonymous(duck, solver):
    source = load(duck)
    report = api.apply(spec(k=3, **solver), engine=duck)
    out = fetch(duck, "out")
    assert [c for c, _ in duck.columns("out")] == ["id", "a", "b", "age", "extra", "income"]
    check_release([(r[0], r[1], r[2], r[3], r[6]) for r in source], out, 3, report)
    assert report.rows_touched == sum(any(o[p] is None and s[p] is not None for p in (1, 2, 3))
                                      for s, o in zip(source, out))


def test_view_and_printed_sql_give_the_table(duck):
    load(duck)
    api.apply(spec(k=3, solver="exact"), engine=duck)
    api.apply(spec("view", "v", k=3, solver="exact"), engine=duck)
    assert sorted(fetch(duck, "v")) == sorted(fetch(duck, "out"))
    sql = api.compile_sql(spec("view", "v2", k=3, solver="exact"), engine=duck)
    duck.con.execute(sql)
    assert sorted(fetch(duck, "v2")) == sorted(fetch(duck, "out"))


def test_exact_splits_a_combination_between_patterns(duck):
    """With 3 attributes and k = 4 the optimum fully suppresses a few rows of large combinations:
    rows of one combination get different cells, numbered within the combination."""
    load(duck, n=40, seed=1)
    report = api.apply(spec(qis=["a", "b"], k=4, solver="exact"), engine=duck)
    out = fetch(duck, "out")
    assert wildcard_k([(r[1], r[2]) for r in out]) >= 4
    assert report.optimal


def test_generalization_first_then_cells(duck):
    source = load(duck)
    plain = api.check(spec(k=4, heuristic="sdcmicro"), engine=duck)
    report = api.apply(spec(k=4, heuristic="sdcmicro", levels={"age": 1}), engine=duck)
    out = fetch(duck, "out")
    assert {r[3] for r in out} - {None} <= {f"[{x}, {x + 10})" for x in range(10, 80, 10)}
    assert wildcard_k([(r[1], r[2], r[3]) for r in out]) >= 4
    assert report.transformation["levels"] == {"age": 1}
    assert sum(report.cells.values()) < sum(plain.cells.values())
    assert len(out) == len(source)


def test_marker_in_suppressed_cells(duck):
    load(duck)
    report = api.apply(spec(k=3, solver="exact", suppressed_value="*"), engine=duck)
    out = fetch(duck, "out")
    stars = sum(v == "*" for r in out for v in r[1:4])
    assert stars == sum(report.cells.values()) > 0
    assert all(isinstance(v, str) or v is None for r in out for v in r[1:4])


@pytest.mark.parametrize("transformation, path, words", [
    ({"k": 3, "importance": {"income": 2}}, "transformation.importance.income", "not a quasi_identifier"),
    ({"k": 3, "importance": {"a": 0}}, "transformation.importance.a", "> 0"),
    ({"k": 1}, "transformation.k", ">= 2"),
    ({"k": 3, "solver": "exact", "heuristic": "cover"}, "transformation.heuristic", "solver heuristic"),
    ({"k": 3, "heuristic": "best"}, "transformation.heuristic", "cover, pattern, sdcmicro"),
    ({"k": 3, "time_limit": 5}, "transformation.time_limit", "solver exact"),
    ({"k": 3, "solver": "fast"}, "transformation.solver", "heuristic, exact"),
    ({"k": 3, "suppression_limit": 0.1}, "transformation.suppression_limit", "never rows"),
    ({"k": 3, "algorithm": "mdav"}, "transformation.algorithm", "does not apply"),
    ({"k": 3, "levels": {"a": 1}}, "transformation.levels.a", "no hierarchy"),
])
def test_bad_settings_are_refused_naming_the_key(transformation, path, words):
    attributes = {"a": "quasi_identifier", "b": "quasi_identifier", "income": "sensitive"}
    with pytest.raises(SpecError) as e:
        spec_from_dict({"source": {"table": "t"}, "attributes": attributes,
                        "transformation": {"method": "local_suppression", **transformation}})
    assert e.value.path == path and words in str(e.value)


def test_exact_refused_above_its_size(duck):
    load(duck, n=400, seed=3)
    with pytest.raises(SpecError, match="use solver heuristic"):
        api.check(spec(qis=["a", "b", "age", "extra", "income", "id", "name"], k=3, solver="exact"),
                  engine=duck)


def test_anonymize_is_refused(duck):
    load(duck)
    with pytest.raises(SpecError, match="run apply"):
        api.anonymize(spec(k=3), engine=duck)


def test_alpha_zero_gives_no_wildcard_donors(duck):
    """With alpha = 0 a suppressed row counts for no other row: each released row has k rows without
    a suppressed cell that it matches."""
    load(duck, n=40)
    report = api.apply(spec(qis=["a", "b"], k=3, alpha=0), engine=duck)
    out = [(r[1], r[2]) for r in fetch(duck, "out")]
    complete = [r for r in out if None not in r]
    assert min(sum(all(u is None or u == v for u, v in zip(x, y)) for y in complete) for x in out) >= 3
    assert report.transformation["alpha"] == 0 and report.anonymous and sum(report.cells.values()) > 0


def test_in_place_replaces_the_source(duck):
    load(duck)
    expected = api.apply(spec(k=3), engine=duck)
    rows = fetch(duck, "out")
    report = api.apply(spec("in_place", None, k=3), engine=duck)
    assert fetch(duck, "t") == rows and report.cells == expected.cells


def test_printing_generalized_decisions_for_another_dialect_is_refused(duck):
    load(duck)
    assert "VALUES" in api.compile_sql(spec("sql", k=3, levels={"age": 1}), engine=duck)
    with pytest.raises(SpecError, match="compile for duckdb") as e:
        api.compile_sql(spec("sql", k=3, levels={"age": 1}), engine=duck, dialect="postgres")
    assert e.value.path == "transformation.levels"
