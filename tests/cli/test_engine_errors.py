"""Engine errors name what the statement was for and the engine's first line: never the statement,
its literals (salts, hierarchy labels) or data values. The statement, salts redacted, only with --debug."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from sqlglot import exp

import sqlanon
from sqlanon.compile.identifiers import salted_hash
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import EngineError
from sqlanon.sql.dialects import profile
from sqlanon.sql.nodes import col, table
from tests.cli.conftest import SALT, SPEC, one_line_error

# Mode view over a name that is a table: CREATE OR REPLACE VIEW (holding the salt) fails in DuckDB.
VIEW_OVER_TABLE = SPEC.replace("{mode: table, name: medical_anon}",
                               "{mode: view, name: taken, replace: true}")


def test_failing_output_statement_shows_purpose_not_salt_or_sql(workdir: Path, cli):
    """An engine error printed the whole failing statement, salt included ('S3cretSalt!' || CAST(...))."""
    con = duckdb.connect(str(workdir / "med.duckdb"))
    con.execute("CREATE TABLE taken AS SELECT 1 AS x")
    con.close()
    (workdir / "view.yml").write_text(VIEW_OVER_TABLE)
    line = one_line_error(cli("apply", "view.yml"))
    assert SALT not in line
    assert "SELECT" not in line.upper().replace("SELECTION", "")
    assert "write the output" in line and "duckdb" in line
    assert "is of type Table" in line  # the engine's own words stay


def test_debug_shows_the_statement_with_the_salt_redacted(workdir: Path, cli):
    con = duckdb.connect(str(workdir / "med.duckdb"))
    con.execute("CREATE TABLE taken AS SELECT 1 AS x")
    con.close()
    (workdir / "view.yml").write_text(VIEW_OVER_TABLE)
    r = cli("--debug", "apply", "view.yml")
    assert r.code == 2
    assert SALT not in r.err and SALT not in r.out
    assert "CREATE OR REPLACE VIEW" in r.err and "<redacted salt>" in r.err


def test_salt_is_redacted_from_a_statement_built_as_a_tree(duck: DuckDBEngine):
    query = exp.select(exp.alias_(salted_hash(col("v"), SALT, profile("duckdb")), "h")).from_(
        table("missing_table"))
    with pytest.raises(EngineError) as info:
        duck.fetch(query)
    assert SALT not in str(info.value) and "missing_table" in str(info.value)
    assert info.value.sql is not None
    assert SALT not in info.value.sql and "<redacted salt>" in info.value.sql


def test_salt_is_redacted_from_a_statement_run_as_text(workdir: Path):
    """Output scripts run as SQL text: the salt is found by parsing the text, not by a regex."""
    spec = sqlanon.load_spec("spec.yml")
    text = sqlanon.compile_sql(spec)
    assert SALT in text  # the compiled script does hold the salt
    with DuckDBEngine() as engine, pytest.raises(EngineError) as info:
        engine.execute_script(text.split(";")[0])  # no table medical in an empty database
    assert SALT not in str(info.value)
    assert info.value.sql is not None and SALT not in info.value.sql


def test_data_values_in_engine_messages_are_not_shown(duck: DuckDBEngine):
    """DuckDB's "Could not convert string 'Alice' to INT32" (and its LINE context) echo data values."""
    duck.execute_script("CREATE TABLE p (name VARCHAR)")
    duck.execute_script("INSERT INTO p VALUES ('Alice')")
    with pytest.raises(EngineError) as info:
        duck.fetch(exp.select(exp.cast(col("name"), "int")).from_(table("p")))
    message = str(info.value)
    assert "Alice" not in message and "\n" not in message and "LINE" not in message
    assert "Conversion Error" in message


def test_purpose_names_the_step(duck: DuckDBEngine):
    with pytest.raises(EngineError) as info, duck.purpose("class statistics"):
        duck.fetch(exp.select("*").from_(table("nowhere")))
    assert str(info.value).startswith("duckdb: class statistics failed: ")


def test_verbose_log_redacts_salts(duck: DuckDBEngine, caplog: pytest.LogCaptureFixture):
    """``-v`` logs every statement: never with its salt."""
    import logging

    duck.execute_script("CREATE TABLE p (v VARCHAR)")
    with caplog.at_level(logging.DEBUG, logger="sqlanon"):
        duck.fetch(exp.select(exp.alias_(salted_hash(col("v"), SALT, profile("duckdb")), "h"))
                   .from_(table("p")))
    assert "sha256" in caplog.text.lower() and SALT not in caplog.text
