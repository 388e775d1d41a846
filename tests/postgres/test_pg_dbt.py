"""The dbt project of tests/dbt on PostgreSQL: dbt-postgres builds the generated model and its gates
against the test server; the model's rows are those `sqlanon apply` writes there."""

from __future__ import annotations

import duckdb
import psycopg
import pytest
from psycopg import sql

from sqlanon import api
from sqlanon.outputs.dbt.files import header_values
from tests.conftest import ADULT
from tests.dbt.dbt_run import (
    ROWS,
    applied_spec_text,
    check_build,
    gate_message,
    install_and_build,
    new_project,
    require_dbt,
    spec_text,
)

pytestmark = [pytest.mark.postgres, pytest.mark.dbt]

SCHEMA = "dbt_adult"
PROFILE = """sqlanon_adult:
  target: dev
  outputs:
    dev: {{type: postgres, host: 127.0.0.1, port: PORT, user: postgres, password: "", dbname: postgres,
           schema: SCHEMA, threads: 1}}
"""
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
           "occupation", "salary-class"]


def test_dbt_postgres_builds_the_model_and_its_gates(pg_server, tmp_path):
    if not ADULT.exists():
        pytest.skip(f"real data not available at {ADULT}")
    require_dbt("postgres")
    pg_server.create_schema(SCHEMA)
    rows = duckdb.sql(f"SELECT * FROM read_csv('{ADULT / 'adult.csv'}', delim=';', header=true, "
                      f"all_varchar=true) LIMIT {ROWS}").fetchall()
    adult = sql.Identifier(SCHEMA, "adult")
    with psycopg.connect(pg_server.dsn, autocommit=True) as con:
        con.execute(sql.SQL("CREATE TABLE {} ({})").format(adult, sql.SQL(", ").join(
            sql.SQL("{} text").format(sql.Identifier(c)) for c in COLUMNS)))
        with con.cursor() as cur, cur.copy(sql.SQL("COPY {} FROM STDIN").format(adult)) as copy:
            for row in rows:
                copy.write_row(row)
    profile = PROFILE.replace("PORT", str(pg_server.port)).replace("SCHEMA", SCHEMA)
    project = new_project(tmp_path, profile)
    url = f"postgresql://postgres@127.0.0.1:{pg_server.port}/postgres"
    source = f"{{table: adult, schema: {SCHEMA}, database: '{url}'}}"
    (project / "spec.yml").write_text(spec_text(ADULT, source))
    build = install_and_build(project)

    check_build(project, build)
    assert "has 1 rows" in gate_message(build.stdout, "adult_raw", "k_anonymity")
    assert "source rows are suppressed" in gate_message(build.stdout, "adult_broken", "the suppression")
    model = (project / "models" / "adult_anon.sql").read_text()
    assert "for postgres" in model.splitlines()[0]
    (project / "applied.yml").write_text(applied_spec_text(spec_text(ADULT, source), header_values(model)[1]))
    api.apply(str(project / "applied.yml"))
    with psycopg.connect(pg_server.dsn) as con:
        built = con.execute(sql.SQL("SELECT * FROM {} ORDER BY 1, 2, 3, 4, 5").format(
            sql.Identifier(SCHEMA, "adult_anon"))).fetchall()
        applied = con.execute(sql.SQL('SELECT sex, age, race, education, "salary-class" FROM {} '
                                      "ORDER BY 1, 2, 3, 4, 5").format(
            sql.Identifier(SCHEMA, "adult_applied"))).fetchall()
    assert len(built) == ROWS and built == applied
