"""Compiling without a connection: the SQL decides the classes and the suppression limit itself.

A warehouse user (Spark, Snowflake, BigQuery, Trino) compiles a fixed transformation from the spec
alone and runs the SQL there; here the same SQL runs on DuckDB (and on PostgreSQL in
tests/postgres/test_pg_offline_compile.py) and must give exactly the rows ``apply`` writes.
"""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from sqlanon import api
from sqlanon.errors import EngineError, SpecError, UnsupportedError
from sqlanon.spec import spec_from_dict
from tests.conftest import ADULT_QIS, adult_spec_dict
from tests.outputs.offline_cases import CASES, applied_rows, offline_sql, rows_of
from tests.outputs.people import people_spec

DIALECTS = ("duckdb", "postgres", "spark", "snowflake", "bigquery", "trino")
NOT_ANONYMOUS = "sqlanon: not anonymous"


@pytest.mark.parametrize("case", sorted(CASES))
def test_offline_sql_gives_the_rows_of_apply_on_duckdb(people, case):
    spec = CASES[case]
    assert rows_of(people, offline_sql(spec, "duckdb")) == applied_rows(people, spec)


def test_offline_sql_gives_the_rows_of_apply_on_adult(adult_engine, adult_dir):
    """ARX's Adult node [0,3,0,2,2,1,1,2,0] with k = 5 and a 2 % limit: 506 rows suppressed."""
    levels = dict(zip(ADULT_QIS, [0, 3, 0, 2, 2, 1, 1, 2, 0]))
    spec = adult_spec_dict(adult_dir, levels=levels, limit=0.02)
    spec["output"] = {"mode": "sql"}
    offline = rows_of(adult_engine, offline_sql(spec, "duckdb"))
    assert len(offline) == 30162 - 506
    assert offline == applied_rows(adult_engine, spec)


def test_offline_sql_fails_when_failing_rows_exceed_the_limit(people):
    """floor(0.2 · 10) = 2 rows may go, 3 fail 2-anonymity: the statement fails, nothing is returned."""
    sql = offline_sql(people_spec(output={"mode": "sql"}, transformation={"suppression_limit": 0.2}),
                      "duckdb")
    with pytest.raises(EngineError, match=f"{NOT_ANONYMOUS}: 3 rows .* 0.2 allows of 10 rows"):
        people.fetch_script(sql)


def test_printed_sql_fails_on_data_that_no_longer_meets_the_limit(people):
    """The SQL printed after a successful check used to suppress any number of rows when run later on
    changed data; it now enforces the suppression limit itself."""
    spec = spec_from_dict(people_spec(output={"mode": "sql"}))
    sql = api.compile_sql(spec, engine=people, dialect="duckdb")  # checked: 3 outliers, limit 3
    people.execute_script("INSERT INTO people VALUES (11, 'Kim', 33, '47905', 'M', 'flu')")
    with pytest.raises(EngineError, match=f"{NOT_ANONYMOUS}: 4 rows"):
        people.fetch_script(sql)


def test_printed_in_place_script_fails_without_touching_the_source(people):
    """An in-place script printed while the data was anonymous, run after an insert that pushes the
    outliers past the limit: its first statement fails inside the transaction, the source stays whole
    (before, it replaced the table with 4 rows suppressed where 3 were allowed)."""
    spec = spec_from_dict(people_spec(output={"mode": "in_place"}))
    script = api.compile_sql(spec, engine=people, dialect="duckdb")
    assert script.startswith("BEGIN")
    people.execute_script("INSERT INTO people VALUES (11, 'Kim', 33, '47905', 'M', 'flu')")
    with pytest.raises(duckdb.ConversionException, match=NOT_ANONYMOUS):
        people.con.execute(script)  # as a user runs it: the whole script at once
    people.con.execute("ROLLBACK")
    assert len(people.fetch_script("SELECT * FROM people")[1]) == 11


def test_in_place_is_refused_offline_where_undeclared_columns_would_be_lost():
    spec = people_spec(output={"mode": "in_place"})
    del spec["attributes"]["id"]  # a column the spec does not declare: offline, nobody knows it is there
    with pytest.raises(SpecError, match=r"output\.mode: in_place needs a connection: the columns the spec "
                                        r"does not declare"):
        api.compile_sql(spec_from_dict(spec), dialect="snowflake")


@pytest.mark.parametrize(("dialect", "key", "name"), [
    ("spark", "output.name", "x" * 129), ("trino", "output.name", "x" * 129),
    ("postgres", "output.name", "p" * 63 + "_release"), ("snowflake", "output.name", "x" * 256),
    ("postgres", "source.table", "p" * 64), ("spark", "source.schema", "s" * 129)])
def test_names_longer_than_the_target_keeps_are_refused_offline(dialect, key, name):
    """`compile --offline` printed SQL for names longer than the dialect keeps (a Spark output name of
    130 characters, a PostgreSQL one of 71 bytes that the server cuts to another table's name): the
    check ran only with a connection."""
    section, field = key.split(".")
    spec = people_spec(**{section: {field: name}})
    with pytest.raises(SpecError, match=rf"{key}: .*{name}.* is \d+ (bytes|characters)"):
        api.compile_sql(spec_from_dict(spec), dialect=dialect, offline=True)


@pytest.mark.parametrize(("dialect", "name"), [("duckdb", "people"), ("duckdb", "People"),
                                             ("snowflake", "PEOPLE"), ("postgres", "people")])
@pytest.mark.parametrize("mode", ["table", "view"])
def test_an_output_over_the_source_is_refused_offline(dialect, name, mode):
    """`compile --offline --output people --replace` printed a script that replaced the source table
    `people` with its anonymized copy (dropping the columns the spec does not declare); with a
    connection the same spec is refused."""
    spec = people_spec(output={"mode": mode, "name": name, "replace": True})
    with pytest.raises(SpecError, match=r"output\.name: .* is the source table itself"):
        api.compile_sql(spec_from_dict(spec), dialect=dialect, offline=True)


def test_a_search_spec_is_refused_offline_with_the_way_forward():
    spec = people_spec(transformation={"levels": {}, "search": "optimal"})
    with pytest.raises(SpecError) as e:
        api.compile_sql(spec_from_dict(spec), dialect="snowflake")
    message = str(e.value)
    assert "\n" not in message
    assert "transformation.search" in message and "anonymize SPEC --write-spec" in message


def test_delta_presence_is_refused_offline_with_the_reason():
    spec = people_spec(privacy=[{"delta_presence": {"subset": "research", "delta_min": 0, "delta_max": 0.8}}])
    with pytest.raises(UnsupportedError, match="delta_presence matches the research subset .* connection"):
        api.compile_sql(spec_from_dict(spec), dialect="trino")


def test_the_ordered_distance_offline_needs_a_declared_type_or_order():
    spec = people_spec(privacy=[{"t_closeness": {"attribute": "disease", "t": 0.4,
                                                 "distance": "ordered"}}])
    with pytest.raises(SpecError, match=r"attributes\.disease\.type: .*declare `type: integer`"):
        api.compile_sql(spec_from_dict(spec), dialect="bigquery")


def test_other_methods_are_refused_offline():
    spec = people_spec(transformation={"method": "microaggregation", "algorithm": "mdav", "k": 2,
                                       "attributes": ["age"], "levels": None})
    spec["transformation"].pop("levels")
    spec["transformation"].pop("suppression_limit")
    with pytest.raises(UnsupportedError, match="reads the data"):
        api.compile_sql(spec_from_dict(spec), dialect="duckdb", offline=True)


def test_a_level_above_the_hierarchy_is_refused_offline():
    spec = people_spec(transformation={"levels": {"age": 4, "zip": 2, "sex": 0}})
    with pytest.raises(SpecError, match=r"transformation\.levels\.age: level 4 is above"):
        api.compile_sql(spec_from_dict(spec), dialect="duckdb")


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_offline_sql_parses_and_round_trips_per_dialect(case, dialect):
    compiled = api.compile_spec(spec_from_dict(CASES[case]), dialect=dialect)
    assert compiled.sql.startswith(f"-- sqlanon: compiled for {dialect} without a connection")
    assert compiled.unverified and all(f"--   * {n}" in compiled.sql for n in compiled.unverified)
    statements = [s for s in sqlglot.parse(compiled.sql, read=dialect) if s is not None]
    assert len(statements) == 1 and isinstance(statements[0], exp.Select)
    again = sqlglot.parse_one(statements[0].sql(dialect), read=dialect)
    assert again == statements[0]


@pytest.mark.parametrize("mode", ["table", "view"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_offline_scripts_of_every_mode_parse(mode, dialect):
    compiled = api.compile_spec(spec_from_dict(people_spec(output={"mode": mode, "name": "release"})),
                                dialect=dialect)
    statements = [s for s in sqlglot.parse(compiled.sql, read=dialect) if s is not None]
    assert statements and not any(isinstance(s, exp.Command) for s in statements)
    if mode == "view":
        assert "not enforced" in compiled.sql and NOT_ANONYMOUS not in compiled.sql.split("\n", 3)[3]
    else:
        assert "CAST(" in compiled.sql and NOT_ANONYMOUS in compiled.sql


def test_offline_header_says_what_it_could_not_verify():
    spec = CASES["typed_numeric_sensitive"]
    notes = api.compile_spec(spec_from_dict(spec), dialect="snowflake").unverified
    text = " ".join(notes)
    assert "columns the spec does not declare are left out" in text
    assert "id: integer" in text
    assert "hierarchy coverage of age, zip" in text
    assert "that id holds only numbers" in text


def test_a_spec_naming_a_database_compiles_against_it_unless_offline(tmp_path, people):
    spec = people_spec(output={"mode": "sql"})
    spec["source"]["database"] = str(tmp_path / "absent.duckdb")
    with pytest.raises(EngineError, match="absent.duckdb' does not exist"):
        api.compile_sql(spec_from_dict(spec), dialect="duckdb")  # connects: the database is not there
    assert "without a connection" in api.compile_sql(spec_from_dict(spec), dialect="duckdb", offline=True)


def test_cli_compiles_offline_and_warns_on_stderr(tmp_path):
    import yaml

    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(CASES["k_anonymity_suppression"]), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "sqlanon", "compile", str(path), "--dialect", "snowflake"],
                         capture_output=True, text=True, env={**os.environ}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("-- sqlanon: compiled for snowflake without a connection")
    assert 'FROM "PEOPLE"' in out.stdout
    warning = [line for line in out.stderr.splitlines() if line.startswith("sqlanon: warning:")]
    assert len(warning) == 1 and "not verified" in warning[0]


def test_cli_refuses_a_search_spec_offline_in_one_line(tmp_path):
    import yaml

    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(people_spec(transformation={"levels": {}, "search": "optimal"})),
                    encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "sqlanon", "compile", str(path), "--dialect", "spark"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert "--write-spec" in out.stderr and "Traceback" not in out.stderr


def test_a_search_spec_is_refused_by_compile_with_a_connection_too(people):
    """Before, compile silently printed the bottom of the lattice (every level 0) for a search spec."""
    spec = people_spec(transformation={"levels": {}, "search": "optimal", "suppression_limit": 1.0})
    with pytest.raises(SpecError, match="anonymize SPEC --write-spec"):
        api.compile_sql(spec_from_dict(spec), engine=people, dialect="duckdb")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_names_in_the_header_comment_cannot_end_it(dialect):
    """Attribute names are user text: in the header they stay on their comment line."""
    hostile = "x\nDROP TABLE people; --\r\u2028y"
    spec = people_spec(output={"mode": "sql"})
    spec["attributes"][hostile] = {"role": "insensitive", "type": "integer"}
    sql = api.compile_sql(spec_from_dict(spec), dialect=dialect)
    header = sql[:sql.index("\nWITH")]
    assert all(line.startswith("--") for line in header.splitlines())
    statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    assert len(statements) == 1 and isinstance(statements[0], exp.Select)
    assert hostile in {c.alias for c in statements[0].expressions}


@pytest.mark.parametrize("dialect", ["snowflake", "trino", "bigquery"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_warehouse_renderings_read_back_and_run_on_duckdb_give_the_rows_of_apply(people, case, dialect):
    """Short of a warehouse: each rendering, parsed by sqlglot as that dialect and written for DuckDB,
    runs there and gives apply's rows (Snowflake's upper-case names resolve: DuckDB ignores case)."""
    if dialect == "bigquery" and case == "masked_outliers":
        pytest.skip("sqlglot reads BigQuery's INT64 cast inside LPAD back as BIGINT, which DuckDB's LPAD "
                    "rejects; a transpiler artifact, not part of the BigQuery SQL")
    spec = CASES[case]
    as_duckdb = sqlglot.transpile(offline_sql(spec, dialect), read=dialect, write="duckdb")[0]
    assert rows_of(people, as_duckdb) == applied_rows(people, spec)


@pytest.mark.parametrize("dialect", ["snowflake", "trino", "bigquery"])
def test_warehouse_renderings_read_back_fail_past_the_limit(people, dialect):
    sql = offline_sql(people_spec(output={"mode": "sql"}, transformation={"suppression_limit": 0.2}),
                      dialect)
    with pytest.raises(EngineError, match=f"{NOT_ANONYMOUS}: 3 rows"):
        people.fetch_script(sqlglot.transpile(sql, read=dialect, write="duckdb")[0])
