"""`sqlanon.dbt` on a DuckDB cursor as dbt-duckdb hands it to a Python model, without dbt: what it
refuses, in one line naming the key or argument, and what it leaves in the database."""

from __future__ import annotations

import duckdb
import pytest

from sqlanon.dbt import apply, dp_query, release_key
from sqlanon.errors import SpecError
from sqlanon.methods.dp import Count
from sqlanon.methods.dp.amounts import PrivacyBudgetError

MICRO = {"attributes": {"age": "quasi_identifier"},
         "transformation": {"method": "microaggregation", "algorithm": "mdav", "k": 3}}


@pytest.fixture()
def session():
    con = duckdb.connect()
    con.execute("CREATE TABLE people AS SELECT i AS id, 18 + i % 70 AS age FROM range(60) t(i)")
    yield con.cursor()
    con.close()


def tables(session) -> set[str]:
    """The lasting tables (the temporary ones go with the session)."""
    return {r[0] for r in session.execute("SELECT table_name FROM information_schema.tables "
                                          "WHERE table_catalog <> 'temp'").fetchall()}


def test_the_released_rows_come_back_as_a_relation_and_nothing_is_left(session):
    released = apply(session, MICRO, session.query("SELECT * FROM people"))
    rows = released.fetchall()
    assert len(rows) == 60 and min(n for (n,) in session.execute(
        f"SELECT count(*) FROM {released.alias} GROUP BY age").fetchall()) >= 3
    assert tables(session) == {"people"}
    assert apply(session, MICRO, "people").fetchall() == rows  # a table name reads the same rows


@pytest.mark.parametrize(("spec", "source", "options", "path", "message"), [
    ({**MICRO, "transformation": "mdav"}, "people", {}, "transformation", "must be a mapping"),
    (MICRO, "people", {"release_key": "r1"}, "transformation.dataset",
     "a release key charges a DP release to a ledger dataset"),
    (MICRO, 42, {}, "source", "must be a relation of the session"),
])
def test_bad_input_is_refused_naming_it(session, spec, source, options, path, message):
    with pytest.raises(SpecError) as error:
        apply(session, spec, source, **options)
    assert error.value.path == path and message in str(error.value)
    assert tables(session) == {"people"}


def test_a_charged_key_whose_stored_answer_is_gone_is_refused(session):
    first = dp_query(session, "people", Count(), epsilon=0.5, dataset="people", budget_epsilon=2,
                     release_key="r1").fetchall()
    assert dp_query(session, "people", Count(), epsilon=0.5, dataset="people",
                    release_key="r1").fetchall() == first
    stored = next(t for t in tables(session) if t.startswith("sqlanon_release_"))
    session.execute(f'DROP TABLE "{stored}"')
    with pytest.raises(PrivacyBudgetError, match="'r1' was charged, but its stored release"):
        dp_query(session, "people", Count(), epsilon=0.5, dataset="people", release_key="r1")


def test_a_release_key_names_the_model_and_the_run():
    assert release_key('"w"."main"."m"', "2026-11-26") == '"w"."main"."m"@2026-11-26'
    assert release_key("m", None).startswith("m@20")
    with pytest.raises(SpecError, match="non-empty"):
        release_key("m", " ")
