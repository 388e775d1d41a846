"""The in-memory path and the database path make the same partitions: on random tables (numeric,
coded text and hierarchical quasi-identifiers, ties, strict and relaxed, exact and inherited widths,
boxes as text or as two columns) both give the same figures and release the same box, in the same
column types, for every row; ``path: auto`` follows the documented threshold."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.spec import spec_from_dict

CITIES = {"a": ["ab", "*"], "b": ["ab", "*"], "c": ["cd", "*"], "d": ["cd", "*"], "e": ["e", "*"]}


@pytest.fixture(scope="module")
def engine():
    e = DuckDBEngine()
    yield e
    e.close()


@st.composite
def tables(draw):
    n = draw(st.integers(4, 36))
    return [(i, draw(st.integers(18, 24)), draw(st.sampled_from([-1.5, 0.0, 2.25, 7.0])),
             draw(st.sampled_from("abcde")), draw(st.sampled_from("xyz"))) for i in range(n)]


def _spec(mode: str, width: str, path: str, k: int, hierarchy: bool, name: str,
          intervals: str = "text") -> object:
    city = {"role": "quasi_identifier", **({"hierarchy": {"map": CITIES}} if hierarchy else {})}
    return spec_from_dict({
        "source": {"table": "t"},
        "attributes": {"id": {"role": "insensitive"}, "age": {"role": "quasi_identifier"},
                       "score": {"role": "quasi_identifier"}, "city": city,
                       "tag": {"role": "quasi_identifier"}},
        "privacy": [{"k_anonymity": {"k": k}}],
        "transformation": {"method": "mondrian", "mode": mode, "width": width, "path": path,
                           "intervals": intervals},
        "output": {"mode": "table", "name": name, "replace": True}})


def _figures(report) -> dict:
    d = report.as_dict()
    return {k: d[k] for k in ("rows", "partitions", "classes", "smallest_partition", "rounds", "metrics")}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=tables(), k=st.integers(2, 5), mode=st.sampled_from(["strict", "relaxed"]),
       width=st.sampled_from(["exact", "inherited"]), hierarchy=st.booleans(),
       intervals=st.sampled_from(["text", "columns"]))
def test_both_paths_make_the_same_partitions(engine, rows, k, mode, width, hierarchy, intervals):
    engine.con.execute("CREATE OR REPLACE TABLE t (id INTEGER, age INTEGER, score DOUBLE, city VARCHAR, "
                       "tag VARCHAR)")
    engine.con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    got = {}
    for path in ("memory", "database"):
        report = api.apply(_spec(mode, width, path, k, hierarchy, f"out_{path}", intervals), engine=engine)
        released = sorted(engine.con.execute(f"SELECT * FROM out_{path}").fetchall())
        types = engine.con.execute(f"SELECT column_name, data_type FROM information_schema.columns "
                                   f"WHERE table_name = 'out_{path}' ORDER BY ordinal_position").fetchall()
        got[path] = (_figures(report), released, types)
    assert got["memory"] == got["database"]
    assert len(got["memory"][1]) == len(rows)


def test_auto_takes_memory_up_to_the_threshold(engine, monkeypatch):
    from sqlanon.methods.mondrian import paths

    # 120 rows, 84 distinct tuples (i mod 84 fixes age, score, city and tag)
    engine.con.execute("CREATE OR REPLACE TABLE t AS SELECT i AS id, 18 + i % 7 AS age, "
                       "(i % 3) * 1.5 AS score, chr(CAST(97 + i % 4 AS INTEGER)) AS city, "
                       "chr(CAST(120 + i % 3 AS INTEGER)) AS tag "
                       "FROM range(120) r(i)")
    for mode, reads in (("strict", 84), ("relaxed", 120)):  # the frequency set, or the rows
        memory = api.check(_spec(mode, "exact", "memory", 3, False, "unused"), engine=engine)
        database = api.check(_spec(mode, "exact", "database", 3, False, "unused"), engine=engine)
        assert _figures(memory) == _figures(database)
        assert memory.queries < database.queries
        auto = api.check(_spec(mode, "exact", "auto", 3, False, "unused"), engine=engine)
        assert (_figures(auto), auto.queries) == (_figures(memory), memory.queries + 1)  # the rows counted
        monkeypatch.setattr(paths, "MEMORY_LIMIT", reads)
        # strict: more rows than the limit, so the tuples are counted too
        assert api.check(_spec(mode, "exact", "auto", 3, False, "unused"), engine=engine).queries == \
            memory.queries + (2 if mode == "strict" else 1)
        monkeypatch.setattr(paths, "MEMORY_LIMIT", reads - 1)
        below = api.check(_spec(mode, "exact", "auto", 3, False, "unused"), engine=engine)
        assert below.queries == database.queries + (2 if mode == "strict" else 1)
        monkeypatch.undo()


def test_memory_path_refuses_other_privacy_models():
    with pytest.raises(SpecError, match="judges cuts by k alone") as e:
        spec_from_dict({
            "source": {"table": "t"},
            "attributes": {"age": {"role": "quasi_identifier"}, "tag": {"role": "sensitive"}},
            "privacy": [{"k_anonymity": {"k": 2}}, {"l_diversity": {"attribute": "tag", "l": 2}}],
            "transformation": {"method": "mondrian", "path": "memory"}, "output": {"mode": "none"}})
    assert "transformation.path" in str(e.value)
