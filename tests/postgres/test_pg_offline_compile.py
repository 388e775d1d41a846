"""Compiling without a connection, run on PostgreSQL: the same rows as ``apply`` on PostgreSQL, and
a statement that fails when the failing rows exceed the suppression limit."""

from __future__ import annotations

import pytest

from sqlanon.errors import EngineError
from tests.outputs.offline_cases import CASES, applied_rows, offline_sql, rows_of
from tests.outputs.people import load_people, people_spec

pytestmark = pytest.mark.postgres


@pytest.fixture()
def people(pg):
    load_people(pg)
    return pg


@pytest.mark.parametrize("case", sorted(CASES))
def test_offline_sql_gives_the_rows_of_apply_on_postgres(people, case):
    spec = CASES[case]
    assert rows_of(people, offline_sql(spec, "postgres")) == applied_rows(people, spec)


def test_offline_sql_fails_on_postgres_when_failing_rows_exceed_the_limit(people):
    sql = offline_sql(people_spec(output={"mode": "sql"}, transformation={"suppression_limit": 0.2}),
                      "postgres")
    with pytest.raises(EngineError, match="sqlanon: not anonymous: 3 rows"):
        people.fetch_script(sql)
    # 2 outliers of 9 rows: floor(1.8) = 1 still fails
    people.execute_script("DELETE FROM people WHERE id = 9")
    with pytest.raises(EngineError, match="sqlanon: not anonymous: 2 rows .* allows of 9 rows"):
        people.fetch_script(sql)
    people.execute_script("DELETE FROM people WHERE id = 8")  # 1 outlier of 8 rows: floor(1.6) = 1 passes
    assert len(rows_of(people, sql)) == 7
