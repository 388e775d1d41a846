"""The ``rounds`` heuristic: its SQL form on DuckDB suppresses the same cells as its numpy form (random
tables drawn by hypothesis, Adult's first 2,000 rows), every output of the SQL form is k-anonymous
under the wildcard semantics, and a view and printed SQL give the table's rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.local_suppression import in_engine, rounds, rounds_sql, sdcmicro
from sqlanon.methods.local_suppression.combos import Combos, brute_force_frequencies
from sqlanon.sql.nodes import table
from tests.methods.local_suppression.cross import adult_rows, run
from tests.methods.local_suppression.test_method import check_release, fetch, load, spec


def sql_masks(duck: DuckDBEngine, values: list[tuple], counts: list[int], k: int, alpha: float,
              order: list[int]) -> dict[tuple, tuple[bool, ...]]:
    """The rounds as SQL over a frequency table loaded into DuckDB: each combination's suppressed cells."""
    d = len(values[0])
    names = [f"v{i}" for i in range(d)]
    duck.con.execute(f"CREATE OR REPLACE TABLE f ({', '.join(f'{n} VARCHAR' for n in names)}, n BIGINT)")
    duck.con.executemany(f"INSERT INTO f VALUES ({', '.join('?' * (d + 1))})",
                         [(*v, c) for v, c in zip(values, counts)])
    mapping = rounds_sql.start(duck, exp.select("*").from_(table("f")), names, "n")
    rounds_sql.run_rounds(mapping, k, alpha, order, rounds.bound(d, len(values)))
    got = duck.fetch(exp.select("*").from_(table(mapping.name)))[1]
    duck.drop(mapping.name)
    return {tuple(r[:d]): tuple(x is None for x in r[d:2 * d]) for r in got}


tables = st.integers(1, 4).flatmap(lambda d: st.tuples(
    st.lists(st.tuples(*[st.sampled_from(["x", "y", "z", None]) for _ in range(d)]), min_size=2, max_size=40),
    st.integers(2, 5), st.sampled_from([1.0, 0.0, 0.5])))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tables)
def test_sql_rounds_suppress_the_numpy_rounds_cells(duck, table_k_alpha):
    rows, k, alpha = table_k_alpha
    distinct = sorted(set(rows), key=lambda r: tuple((v is None, str(v)) for v in r))
    counts = [rows.count(r) for r in distinct]
    combos = Combos.of(distinct, counts)
    order = sdcmicro.default_order(combos)
    expected = rounds.rounds(combos, k, order, alpha)
    assert sql_masks(duck, distinct, counts, k, alpha, order) == {
        v: tuple(bool(x) for x in expected.mask[i]) for i, v in enumerate(distinct)}
    if alpha == 1 and len(rows) >= k:
        released = np.repeat(expected.released(combos), expected.rows, axis=0)
        assert brute_force_frequencies(released).min() >= k


@pytest.fixture
def on_engine(monkeypatch):
    """The SQL form whatever the frequency table's size."""
    monkeypatch.setattr(in_engine, "IN_MEMORY_MAX", 0)


@pytest.fixture(scope="module")
def adult():
    return adult_rows(2_000)


@pytest.mark.parametrize("settings", [{}, {"alpha": 0, "levels": {"age": 1},
                                           "importance": {"sex": 5, "race": 2}}])
def test_adult_both_forms_write_the_same_rows(monkeypatch, adult, settings):
    data = adult
    forms = []
    for largest in (in_engine.IN_MEMORY_MAX, 0):
        monkeypatch.setattr(in_engine, "IN_MEMORY_MAX", largest)
        with DuckDBEngine() as duck:
            duck.create_table_from_arrow("adult", data)
            forms.append(run(duck, {"heuristic": "rounds", **settings}))
    in_memory, sql = forms
    assert sql == in_memory
    assert sql[0]["anonymous"] and sql[0]["cells_suppressed"] > 0


def test_sql_form_output_is_k_anonymous_in_every_mode(duck, on_engine):
    source = load(duck)
    report = api.apply(spec(k=3, heuristic="rounds"), engine=duck)
    out = fetch(duck, "out")
    check_release([(r[0], r[1], r[2], r[3], r[6]) for r in source], out, 3, report)
    api.apply(spec("view", "v", k=3, heuristic="rounds"), engine=duck)
    assert fetch(duck, "v") == out
    duck.con.execute(api.compile_sql(spec("view", "v2", k=3, heuristic="rounds"), engine=duck))
    assert fetch(duck, "v2") == out
    left = [name for name, in duck.con.execute("SELECT table_name FROM information_schema.tables").fetchall()
            if name.startswith("__sa_cells")]
    assert left == []


def test_sql_form_lifts_the_limit_on_combinations(duck, monkeypatch):
    """The in-memory solvers refuse a frequency table above their limit; the SQL rounds take it."""
    from sqlanon.methods.local_suppression import method

    load(duck)
    monkeypatch.setattr(method, "MAX_COMBINATIONS", 10)
    monkeypatch.setattr(in_engine, "IN_MEMORY_MAX", 10)
    with pytest.raises(Exception, match="more than 10 distinct combinations"):
        api.check(spec(k=3, heuristic="sdcmicro"), engine=duck)
    assert api.check(spec(k=3, heuristic="rounds"), engine=duck).anonymous


def test_rounds_beside_sdcmicro_on_its_ordering_rule():
    """One combination far from the rest loses the cell of the attribute with most values first,
    then (still unsafe) the other."""
    combos = Combos.of([("a", "1"), ("a", "2"), ("b", "3")], [3, 3, 1])
    s = rounds.rounds(combos, 2, sdcmicro.default_order(combos))
    assert s.mask.tolist() == [[False, False], [False, False], [True, True]]
