"""Anatomy on DuckDB: every output mode, compile, refusals, and random tables checked by brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec import spec_from_dict
from sqlanon.sql.dialects import PROFILES
from tests.methods.anatomy.checks import check_release

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")


def spec(l=3, mode="table", name="released", **transformation):  # noqa: E741
    return {"source": {"table": "t"},
            "attributes": {"id": "insensitive", "age": "quasi_identifier", "zip": "quasi_identifier",
                           "disease": "sensitive"},
            "transformation": {"method": "anatomy", "l": l, **transformation},
            "output": {"mode": mode, **({"name": name} if mode != "in_place" else {})}}


def load(engine: DuckDBEngine, rows: list[tuple]) -> None:
    engine.con.execute("CREATE OR REPLACE TABLE t (id INTEGER, age INTEGER, zip VARCHAR, disease VARCHAR)")
    if rows:
        engine.con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)


def rows_of(engine: DuckDBEngine, relation: str) -> list[tuple]:
    return [tuple(r) for r in engine.con.execute(f'SELECT * FROM "{relation}" ORDER BY ALL').fetchall()]


DISEASES = ["flu", "gastritis", "dyspepsia", "bronchitis", "pneumonia", None]


def table_rows(n: int) -> list[tuple]:
    return [(i, 20 + i % 37, f"1{i % 5:04d}", DISEASES[(i * 7) % 6]) for i in range(n)]


@pytest.fixture()
def engine():
    with DuckDBEngine() as e:
        load(e, table_rows(60))
        yield e


@settings(max_examples=25)
@given(st.lists(st.sampled_from(DISEASES), min_size=1, max_size=40), st.integers(2, 4),
       st.integers(0, 1000))
def test_random_tables_are_l_diverse_or_refused(values, l, seed):  # noqa: E741
    rows = [(i, i % 7, f"z{i % 3}", v) for i, v in enumerate(values)]
    with DuckDBEngine() as e:
        load(e, rows)
        largest = max(values.count(v) for v in set(values))
        if largest * l > len(values):
            with pytest.raises(SpecError, match=r"transformation\.l.* is held by \d+ of"):
                api.apply(spec_from_dict(spec(l, seed=seed)), engine=e)
            return
        report = api.apply(spec_from_dict(spec(l, seed=seed)), engine=e)
        groups = check_release(rows, rows_of(e, "released"), rows_of(e, "released__sensitive"), l)
        assert report.groups == len(groups)


def test_eligibility_error_names_the_value_and_its_count():
    with DuckDBEngine() as e:
        load(e, [(i, i, "z", "flu" if i < 5 else f"d{i}") for i in range(9)])
        with pytest.raises(SpecError) as err:
            api.apply(spec_from_dict(spec(2)), engine=e)
        assert "value 'flu' of 'disease' is held by 5 of 9 rows, more than n/l = 4.5" in str(err.value)
        assert "lower l to at most 1" in str(err.value)
        assert e.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'released%'"
                             ).fetchone() == (0,)


@pytest.mark.parametrize("mode", ["table", "view"])
def test_table_and_view_release_both_relations(engine, mode):
    report = api.apply(spec_from_dict(spec(3, mode, seed=5)), engine=engine).as_dict()
    assert report["outputs"]["relation"] == "released"
    assert report["outputs"]["sensitive_table"] == {"mode": mode, "relation": "released__sensitive",
                                                    "rows": report["rows"]}
    check_release(table_rows(60), rows_of(engine, "released"), rows_of(engine, "released__sensitive"), 3)
    columns = [c[0] for c in engine.con.execute('DESCRIBE "released"').fetchall()]
    assert columns == ["id", "age", "zip", "group_id"]
    assert [c[0] for c in engine.con.execute('DESCRIBE "released__sensitive"').fetchall()] == \
        ["group_id", "disease", "count"]


def test_a_view_reads_the_same_groups_every_time_and_as_the_seeded_table(engine):
    api.apply(spec_from_dict(spec(3, "view", name="v", seed=11)), engine=engine)
    api.apply(spec_from_dict(spec(3, "table", name="t2", seed=11)), engine=engine)
    first = rows_of(engine, "v")
    assert first == rows_of(engine, "v") == rows_of(engine, "t2")
    assert rows_of(engine, "v__sensitive") == rows_of(engine, "t2__sensitive")


def test_without_a_seed_the_order_is_drawn_anew(engine):
    api.apply(spec_from_dict(spec(3, name="a")), engine=engine)
    api.apply(spec_from_dict(spec(3, name="b")), engine=engine)
    check_release(table_rows(60), rows_of(engine, "a"), rows_of(engine, "a__sensitive"), 3)
    assert rows_of(engine, "a") != rows_of(engine, "b")  # 60 rows: equal draws have odds ~1e-30


def test_in_place_replaces_the_source_by_the_quasi_identifier_table(engine):
    source = rows_of(engine, "t")
    report = api.apply(spec_from_dict(spec(3, "in_place", seed=2)), engine=engine).as_dict()
    assert report["outputs"]["relation"] == "t"
    assert report["outputs"]["sensitive_table"]["relation"] == "t__sensitive"
    check_release(source, rows_of(engine, "t"), rows_of(engine, "t__sensitive"), 3)


def test_sql_mode_prints_both_selects_and_compile_both_statements(engine, tmp_path):
    path = tmp_path / "qit.sql"
    out = api.apply(spec_from_dict(spec(3, "sql", seed=4) | {"output": {"mode": "sql", "path": str(path)}}),
                    engine=engine).as_dict()["outputs"]
    beside = tmp_path / "t_anon__sensitive.sql"
    assert out["path"] == str(path) and out["sensitive_table"]["path"] == str(beside)
    qit = engine.con.execute(path.read_text().rstrip().rstrip(";")).fetchall()
    st = engine.con.execute(beside.read_text().rstrip().rstrip(";")).fetchall()
    check_release(table_rows(60), sorted(qit), st, 3)
    for dialect in PROFILES:
        sql = api.compile_sql(spec_from_dict(spec(3, seed=4)), engine=engine, dialect=dialect)
        assert sql.count("CREATE TABLE") == 2
        assert sql.lower().index("released__sensitive") < sql.rindex("CREATE TABLE")
    engine.con.execute(api.compile_sql(spec_from_dict(spec(3, seed=4)), engine=engine))
    check_release(table_rows(60), rows_of(engine, "released"), rows_of(engine, "released__sensitive"), 3)


@pytest.mark.parametrize("change, message", [
    ({"transformation": {"method": "anatomy", "l": 2, "sensitive_table": "released"}},
     "would be the output 'released' itself"),
    ({"transformation": {"method": "anatomy", "l": 2, "group_column": "id"}}, "attribute of the spec"),
    ({"transformation": {"method": "anatomy", "l": 1}}, "integer >= 2"),
    ({"transformation": {"method": "anatomy", "l": 2, "k": 3}}, "has no setting 'k'"),
    ({"attributes": {"id": "sensitive", "age": "quasi_identifier", "zip": "quasi_identifier",
                     "disease": "sensitive"}}, "exactly one attribute with role sensitive"),
    ({"privacy": [{"k_anonymity": {"k": 2}}]}, "remove the privacy section"),
])
def test_refusals_name_the_key(engine, change, message):
    with pytest.raises(SpecError, match=message):
        api.apply(spec_from_dict(spec(2) | change), engine=engine)


def test_an_existing_sensitive_table_is_refused_before_anything_is_written(engine):
    engine.con.execute("CREATE TABLE released__sensitive AS SELECT 1 AS x")
    with pytest.raises(SpecError, match=r"transformation\.sensitive_table.*already exists"):
        api.apply(spec_from_dict(spec(2)), engine=engine)
    assert not engine.relation_exists("released")
    api.apply(spec_from_dict(spec(2) | {"output": {"name": "released", "replace": True}}), engine=engine)
    assert rows_of(engine, "released__sensitive") != [(1,)]


def test_a_seed_is_warned_about(engine):
    with pytest.warns(ReproducibleNoiseWarning, match="groups are drawn from a fixed seed"):
        api.check(spec_from_dict(spec(3, seed=1)), engine=engine)


def test_check_reports_the_groups_and_anonymize_is_refused(engine):
    report = api.check(spec_from_dict(spec(3, seed=1)), engine=engine)
    assert (report.rows, report.l, report.min_group_size) == (60, 3, 3)
    assert not engine.relation_exists("released")
    with pytest.raises(UnsupportedError, match="run `apply`"):
        api.anonymize(spec_from_dict(spec(3)), engine=engine)


def test_the_command_line_checks_and_writes_both_relations(tmp_path, capsys):
    import duckdb
    import yaml

    from sqlanon.cli.main import main

    database = tmp_path / "db.duckdb"
    with duckdb.connect(str(database)) as con:
        con.execute("CREATE TABLE t (id INTEGER, age INTEGER, zip VARCHAR, disease VARCHAR)")
        con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", table_rows(60))
    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(spec(3, seed=1) | {"source": {"table": "t", "database": str(database)}}))
    assert main(["check", str(path)]) == 0
    assert "every group holds 3 or more distinct sensitive values, each once: yes" in capsys.readouterr().out
    assert main(["apply", str(path)]) == 0
    assert "sensitive table: mode=table, relation=released__sensitive, rows=60" in capsys.readouterr().out
    with duckdb.connect(str(database)) as con:
        check_release(table_rows(60), con.execute("SELECT * FROM released").fetchall(),
                      con.execute("SELECT * FROM released__sensitive").fetchall(), 3)


def test_in_memory_data_returns_both_relations():
    import pyarrow as pa

    rows = table_rows(60)
    data = pa.table({name: [r[i] for r in rows] for i, name in enumerate(["id", "age", "zip", "disease"])})
    result = api.apply(spec(3) | {"source": {}, "output": {}}, data=data)
    (name, st), = result.beside.items()
    assert name == "data_anon__sensitive" and st.column_names == ["group_id", "disease", "count"]
    assert result.data.column_names == ["id", "age", "zip", "group_id"]
    check_release(rows, [tuple(r.values()) for r in result.data.to_pylist()],
                  [tuple(r.values()) for r in st.to_pylist()], 3)
