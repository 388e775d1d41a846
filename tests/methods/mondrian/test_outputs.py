"""Mondrian's released rows in every output mode: the same rows as a table, a view, in place and as
printed SQL; numeric boxes as text or as two columns; coded attributes as value sets; relaxed
partitions refused where the SQL would have to stand alone."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.spec import spec_from_dict

ROWS = [(1, 25, "a", "flu"), (2, 30, "b", "cold"), (3, 35, "a", "flu"), (4, 40, "c", "hiv"),
        (5, 45, "b", "flu"), (6, 50, "c", "cold"), (7, 27, "a", "hiv"), (8, 33, "b", "cold"),
        (9, 25, "a", "cold"), (10, 48, "c", "flu")]


@pytest.fixture()
def engine():
    e = DuckDBEngine()
    e.con.execute("CREATE TABLE people (id INTEGER, age INTEGER, city VARCHAR, disease VARCHAR)")
    e.con.executemany("INSERT INTO people VALUES (?, ?, ?, ?)", ROWS)
    yield e
    e.close()


def spec(output: dict, **transformation) -> object:
    return spec_from_dict({
        "source": {"table": "people"},
        "attributes": {"id": {"role": "identifier"}, "age": {"role": "quasi_identifier"},
                       "city": {"role": "quasi_identifier"}, "disease": {"role": "sensitive"}},
        "privacy": [{"k_anonymity": {"k": 2}}],
        "transformation": {"method": "mondrian", **transformation}, "output": output})


def rows(engine, relation: str) -> list[tuple]:
    return sorted(engine.con.execute(f'SELECT * FROM "{relation}"').fetchall())


def test_every_mode_releases_the_same_rows(engine):
    report = api.apply(spec({"mode": "table", "name": "t_out"}), engine=engine)
    table = rows(engine, "t_out")
    assert len(table) == len(ROWS) and report.smallest >= 2
    assert {r[0] for r in table} >= {"[25-27]"}  # the youngest rows share a box
    assert all(not str(c).startswith("{") or c.count(",") >= 1 for r in table for c in r)
    api.apply(spec({"mode": "view", "name": "v_out"}), engine=engine)
    assert rows(engine, "v_out") == table
    printed = api.apply(spec({"mode": "sql"}), engine=engine).outputs["sql"]
    assert sorted(engine.con.execute(printed.rstrip().rstrip(";")).fetchall()) == table
    compiled = api.compile_sql(spec({"mode": "table", "name": "c_out"}), engine=engine)
    assert "CASE" in compiled
    engine.con.execute("DROP VIEW v_out")
    api.apply(spec({"mode": "in_place"}), engine=engine)
    assert rows(engine, "people") == table


def test_boxes_as_two_columns(engine):
    api.apply(spec({"mode": "table", "name": "t_cols"}, intervals="columns"), engine=engine)
    cur = engine.con.execute('SELECT age_lo, age_hi, city FROM t_cols')
    got = cur.fetchall()
    assert {d[0] for d in cur.description} == {"age_lo", "age_hi", "city"}
    assert all(lo <= hi for lo, hi, _ in got)
    assert sorted(lo for lo, _, _ in got)[:2] == [25, 25]


def relaxed_outputs(engine, path: str) -> tuple[list, list, list]:
    """A relaxed partitioning's rows as a table, a view and printed SQL run on the engine."""
    from tests.methods.mondrian.test_engines import released

    table = api.apply(spec({"mode": "table", "name": "r_out"}, mode="relaxed", path=path), engine=engine)
    view = api.apply(spec({"mode": "view", "name": "r_view"}, mode="relaxed", path=path), engine=engine)
    assert view.outputs["group_table"] == "r_view__groups"
    printed = api.apply(spec({"mode": "sql", "name": "r_sql"}, mode="relaxed", path=path), engine=engine)
    assert table.smallest >= 2 and table.partitions == view.partitions == printed.partitions
    executed = engine.fetch_script(printed.outputs["sql"].rstrip().rstrip(";"))[1]
    columns = ["age", "city", "disease"]
    return (released(engine, "r_out", columns=columns), released(engine, "r_view", columns=columns),
            sorted(tuple(str(v) for v in r) for r in executed))


@pytest.mark.parametrize("path", ["memory", "database"])
def test_relaxed_view_and_sql_release_the_table_rows(engine, path):
    """Rows of one value go to different partitions by their stored order: the view and the SQL
    find them by their positions, as the table does."""
    engine.con.executemany("INSERT INTO people VALUES (?, ?, ?, ?)",
                           [(11 + i, 33, "b", "flu") for i in range(5)])  # ties split by order
    table, view, executed = relaxed_outputs(engine, path)
    assert len(table) == len(ROWS) + 5
    assert table == view == executed
    runs = engine.con.execute("SELECT count(*) FROM r_view__groups WHERE __sa_q0 = 33 AND __sa_q1 = 'b'")
    assert runs.fetchone()[0] > 1  # the rows of one tuple are in more than one partition
    with pytest.raises(SpecError, match="relaxed partitioning"):
        api.compile_sql(spec({"mode": "table", "name": "c_out"}, mode="relaxed"), engine=engine)


@pytest.mark.parametrize(("options", "path", "message"), [
    ({"mode": "lax"}, "transformation.mode", "strict, relaxed"),
    ({"width": "wide"}, "transformation.width", "exact, inherited"),
    ({"k": 0}, "transformation.k", "integer >= 1"),
    ({"levels": {"age": 1}}, "transformation", "levels"),
    ({"gamma": 3}, "transformation.gamma", "unknown mondrian setting"),
])
def test_bad_settings_name_the_key(options, path, message):
    with pytest.raises(SpecError, match=message) as e:
        spec({"mode": "none"}, **options)
    assert path in str(e.value)


def test_nulls_are_refused_naming_the_column(engine):
    engine.con.execute("INSERT INTO people VALUES (11, NULL, 'a', 'flu')")
    with pytest.raises(SpecError, match="'age' has 1 NULL"):
        api.check(spec({"mode": "none"}), engine=engine)
