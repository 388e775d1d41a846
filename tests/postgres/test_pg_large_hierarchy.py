"""A table hierarchy too large to write one sqlglot node per cell, on PostgreSQL: a table written here
joins the loaded lookup table, the printed SQL carries it once as directly rendered VALUES, and both
give the same rows with quotes, semicolons, backslashes and non-ASCII labels intact."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.spec import spec_from_dict
from tests.outputs.large_hierarchy import label, large_spec
from tests.outputs.people import canon, load_people, sorted_rows

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("mode", ["table", "in_place"])
def test_large_hierarchy_on_postgres_equals_the_printed_sql(pg, mode):
    load_people(pg)
    api.apply(spec_from_dict(large_spec(output={"mode": mode, "replace": True})), engine=pg)
    written = sorted_rows(pg, "people" if mode == "in_place" else "people_anon")
    load_people(pg, "people_copy")
    spec = large_spec(output={"mode": "sql", "dialect": "postgres"})
    spec["source"]["table"] = "people_copy"
    sql = api.compile_sql(spec_from_dict(spec), engine=pg)
    assert sql.count("'90000'") == 1  # the lookup is written once
    printed = canon(pg.fetch_script(sql.strip().rstrip(";"))[1])
    assert written == printed
    assert {r[2] for r in written} == {label("476", 2), label("479", 2)}
