"""PostgresEngine against a real server: the Engine interface and PostgreSQL's own rules."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sqlanon.engines import connect
from sqlanon.engines.postgres import PostgresEngine
from sqlanon.errors import EngineError
from sqlanon.sql.nodes import col, table
from tests.outputs.people import load_people

pytestmark = pytest.mark.postgres


def test_numbers_come_back_as_int_and_float(pg):
    load_people(pg)
    # SUM of integers is NUMERIC on PostgreSQL (a Decimal in psycopg); 1+...+10 = 55, mean age 38.4
    names, rows = pg.fetch_script("SELECT SUM(id) AS s, AVG(age) AS a, COUNT(*) AS n, "
                                  "SUM(age) / 10.0 AS m FROM people")
    row = dict(zip(names, rows[0]))
    assert row == {"s": 55, "a": 38.4, "n": 10, "m": 38.4}
    assert type(row["s"]) is int and type(row["a"]) is float and type(row["m"]) is float


def test_transactions_commit_or_roll_back(pg):
    with pytest.raises(ZeroDivisionError), pg.transaction():
        pg.execute_script("CREATE TABLE t1 (x int)")
        raise ZeroDivisionError
    assert not pg.relation_exists("t1")
    with pg.transaction():
        pg.execute_script("CREATE TABLE t2 (x int)")
        pg.execute_script("INSERT INTO t2 VALUES (1), (2)")
    assert pg.row_count("t2") == 2


def test_catalog_reads_names_as_parameters(pg):
    name = 'we"ird; DROP TABLE people; --'
    load_people(pg, name)
    load_people(pg)
    assert pg.relation_exists(name) and pg.relation_exists("people")
    assert not pg.relation_exists("Nope'); DROP TABLE people; --")
    assert pg.columns(name) == [("id", "integer"), ("name", "character varying"), ("age", "integer"),
                                ("zip", "character varying"), ("sex", "character varying"),
                                ("disease", "character varying")]
    with pytest.raises(EngineError, match="no table or view named 'missing'"):
        pg.columns("missing")
    assert pg.row_count("people") == 10


def test_temporary_tables_replace_and_rename(pg):
    load_people(pg)
    older = exp.GT(this=col("age"), expression=exp.Literal.number(40))  # Dee, Eve, Fay, Hal, Ida
    q = exp.select(col("id")).from_(table("people")).where(older)
    pg.create_table_as("tmp_old", q, temporary=True)
    pg.create_table_as("tmp_old", q, temporary=True, replace=True)  # no CREATE OR REPLACE TABLE here
    assert pg.relation_exists("tmp_old") and pg.row_count("tmp_old") == 5
    pg.create_table_as("kept", q)
    pg.rename_table("kept", "renamed")
    assert not pg.relation_exists("kept") and pg.row_count("renamed") == 5
    other = PostgresEngine(pg.dsn)  # temporary tables belong to their session
    try:
        assert not other.relation_exists("tmp_old") and other.relation_exists("renamed")
    finally:
        other.close()


def test_errors_name_the_step_and_carry_the_sql_for_debugging(pg):
    """The message is one line without the statement; the statement is kept for --debug."""
    with pytest.raises(EngineError, match=r'^postgres: a query failed: relation "nope" does not exist') \
            as info:
        pg.fetch(exp.select("*").from_(table("nope")))
    assert "\n" not in str(info.value) and 'FROM "nope"' in (info.value.sql or "")


def test_data_values_are_not_in_messages(pg):
    """PostgreSQL quotes the value it could not convert: invalid input syntax for type integer: "Alice"."""
    pg.execute_script("CREATE TEMPORARY TABLE who (name text)")
    pg.execute_script("INSERT INTO who VALUES ('Alice')")
    with pytest.raises(EngineError, match="invalid input syntax for type integer") as info:
        pg.fetch(exp.select(exp.cast(exp.column("name"), "int")).from_(table("who")))
    assert "Alice" not in str(info.value)


def test_copy_csv_keeps_text_as_is(pg, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('id;who;note\n1;"O\'Brien; --";00123\n2;Zoë;\n', encoding="utf-8")
    assert pg.copy_csv('t"x', path, delimiter=";") == 2
    assert pg.fetch_script('SELECT * FROM "t""x" ORDER BY id')[1] == [("1", "O'Brien; --", "00123"),
                                                                ("2", "Zoë", None)]


def test_connect_by_url(pg_server):
    engine = connect(f"postgresql://postgres@127.0.0.1:{pg_server.port}/postgres")
    try:
        assert isinstance(engine, PostgresEngine)
        names, rows = engine.fetch_script("SELECT current_database() AS d")
        assert [dict(zip(names, r)) for r in rows] == [{"d": "postgres"}]
    finally:
        engine.close()


def test_missing_server_binaries_say_how_to_install_them(monkeypatch, tmp_path):
    from tests import pg_server

    monkeypatch.setattr(pg_server, "DEFAULT_BIN", tmp_path / "nowhere")
    monkeypatch.setenv("SQLANON_PG_BIN", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pg_server.PostgresUnavailable,
                       match=r"not found in .*nowhere.*apt-get install -y postgresql-15"):
        pg_server.find_bindir()
