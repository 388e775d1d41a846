"""The dbt project on Spark: dbt-spark's `session` method runs dbt's SQL on a SparkSession in dbt's own
process. dbt runs here in this process (dbt's programmatic `dbtRunner`), so dbt-spark's
`SparkSession.builder.getOrCreate()` finds the test run's shared local session: one JVM.

The anonymized table model and its gates are built on Spark from the rows DuckDB holds, with
`adult_rare_view` (the anonymized rows and one raw row); the model's rows are compared with
`sqlanon apply` on DuckDB, and the view's failing gates must name the class and the value DuckDB
finds on the same rows."""

from __future__ import annotations

import duckdb
import pytest

from sqlanon import api
from sqlanon.cli.main import main
from sqlanon.outputs.dbt.files import header_values
from tests.conftest import ADULT
from tests.dbt.dbt_run import (
    QIS,
    ROWS,
    K,
    applied_spec_text,
    gate_message,
    gate_status,
    generate,
    new_project,
    rare_values_ending,
    require_dbt,
    spec_text,
)

pytestmark = [pytest.mark.dbt, pytest.mark.spark]

SOURCE = "{table: adult, database: adult.duckdb}"
PROFILE = """sqlanon_adult:
  target: dev
  outputs:
    dev: {{type: spark, method: session, host: NA, schema: "{schema}", threads: 2}}
"""


def dbt_here(project, *args: str):
    """dbt in this process, offline, logging into the project's logs/dbt.log."""
    from dbt.cli.main import dbtRunner

    return dbtRunner().invoke([*args, "--project-dir", str(project), "--profiles-dir", str(project),
                               "--no-version-check", "--no-send-anonymous-usage-stats", "--no-use-colors"])


@pytest.fixture()
def spark_database(spark_session):
    from tests.spark_session import drop_database, fresh_database

    name = fresh_database(spark_session)
    yield name
    drop_database(spark_session, name)


def test_dbt_spark_session_builds_the_model_and_its_gates(spark_session, spark_database, tmp_path,
                                                           monkeypatch):
    if not ADULT.exists():
        pytest.skip(f"real data not available at {ADULT}")
    require_dbt("spark")
    monkeypatch.setenv("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    project = new_project(tmp_path, PROFILE.replace("{schema}", spark_database))
    with duckdb.connect(str(project / "adult.duckdb")) as con:
        con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                    f"all_varchar=true) LIMIT {ROWS}", [str(ADULT / "adult.csv")])
        rows = con.execute("SELECT * FROM adult").df()
    # the same rows on Spark, as the source raw.adult (schema: the profile's)
    spark_session.createDataFrame(rows).write.saveAsTable(f"{spark_database}.adult")
    (project / "spec.yml").write_text(spec_text(ADULT, SOURCE))
    assert main(["dbt", "install", "--project", str(project)]) == 0
    assert generate(project) == 0
    assert generate(project, "--name", "adult_anon_view", "--materialized", "view") == 0
    assert "for spark: do not edit" in (project / "models" / "adult_anon.sql").read_text()
    assert main(["dbt", "gates", "--project", str(project), "--profiles-dir", str(project)]) == 0
    assert dbt_here(project, "deps").success
    # not the generated view: each of its gates runs the whole anonymization again (seconds on Spark)
    build = dbt_here(project, "build", "--select", "adult_anon", "adult_rare_view")
    assert not build.success  # the gates on the view with a raw row fail
    status = {r.node.name: r.status for r in build.result}
    assert status["adult_anon"] == status["adult_rare_view"] == "success"
    for gate in ("k_anonymity", "l_diversity", "t_closeness", "suppression_limit"):
        assert gate_status(status, gate, "adult_anon") == "pass"
    for gate in ("view_k_anonymity", "view_no_rare_values"):
        assert gate_status(status, gate, "adult_rare_view") == "fail"

    # the same rows as sqlanon apply on DuckDB, at the levels the model records
    levels = header_values((project / "models" / "adult_anon.sql").read_text())[1]
    (project / "applied.yml").write_text(applied_spec_text(spec_text(ADULT, SOURCE), levels))
    api.apply(str(project / "applied.yml"))
    with duckdb.connect(str(project / "adult.duckdb")) as con:
        applied = con.execute('SELECT sex, age, race, education, "salary-class" FROM adult_applied'
                              ).fetchall()
    built = [tuple(r) for r in spark_session.table(f"{spark_database}.adult_anon").collect()]
    assert sorted(built) == sorted(applied) and len(built) == ROWS
    log = (project / "logs" / "dbt.log").read_text()
    with duckdb.connect(str(project / "adult.duckdb")) as con:  # adult_rare_view's rows in DuckDB
        con.execute('CREATE VIEW adult_rare_view AS SELECT sex, age, race, education, "salary-class" '
                    'FROM adult_applied UNION ALL (SELECT sex, age, race, education, "salary-class" '
                    'FROM adult ORDER BY CAST(age AS INTEGER), sex, race, education, "salary-class" LIMIT 1)')
        ending = rare_values_ending(con, "adult_rare_view")
        (small,) = con.execute(f"SELECT {', '.join(QIS)}, count(*) FROM adult_rare_view WHERE sex <> '*' "
                               f"GROUP BY ALL HAVING count(*) < {K}").fetchall()
    assert gate_message(log, "adult_rare_view", f"no_rare_values (k={K})").endswith(ending)
    worst = ", ".join(f"{q}={v}" for q, v in zip(QIS, small))
    assert gate_message(log, "adult_rare_view", f"k_anonymity (k={K})").endswith(
        f": 1 classes fail; the worst, ({worst}), has {small[-1]} rows")
