"""Outputs on PostgreSQL: the source's schema is used for every lookup and write, names PostgreSQL
would cut at 63 bytes are refused (an output could otherwise overwrite its source), and views over a
table replaced in place are refused with the same message as on DuckDB, before anything runs."""

from __future__ import annotations

import copy

import pytest

from sqlanon import api
from sqlanon.errors import SpecError
from sqlanon.spec import spec_from_dict
from tests.outputs.test_schemas_and_names import CASES, METHODS, ROWS

pytestmark = pytest.mark.postgres


def make_table(engine, relation: str, columns: str = "id, q, s, ssn") -> None:
    engine.execute_script(f"CREATE TABLE {relation} AS SELECT {columns} FROM (VALUES "
                   + ", ".join(f"({i}, {q}, {s}, '{n}')" for i, q, s, n in ROWS)
                   + ") AS v(id, q, s, ssn)")


def columns(engine, relation: str) -> list[str]:
    return engine.fetch_script(f"SELECT * FROM {relation} LIMIT 0")[0]


def count(engine, relation: str) -> int:
    return engine.fetch_script(f"SELECT count(*) FROM {relation}")[1][0][0]


@pytest.fixture()
def two_schemas(pg):
    """<current>.t(id, q, s) and <current>_staging.t(id, q, s, ssn); returns (engine, staging)."""
    current = pg.fetch_script("SELECT current_schema()")[1][0][0]
    staging = f"{current}_staging"
    pg.execute_script(f'DROP SCHEMA IF EXISTS "{staging}" CASCADE')
    pg.execute_script(f'CREATE SCHEMA "{staging}"')
    make_table(pg, "t", "id, q, s")
    make_table(pg, f'"{staging}".t')
    yield pg, staging
    pg.execute_script(f'DROP SCHEMA "{staging}" CASCADE')


def spec(method: str, source: dict, **output):
    d = copy.deepcopy(METHODS[method])
    d["source"] = source
    d["output"] = output
    return spec_from_dict(d)


@pytest.mark.parametrize(("method", "mode"), CASES)
def test_source_schema_is_read_and_written_not_the_same_name_elsewhere(two_schemas, method, mode, tmp_path):
    """source.schema was ignored when the table and its columns were looked up."""
    pg, staging = two_schemas
    out = {"mode": mode, "name": "o"} if mode != "sql" else {"mode": "sql", "path": str(tmp_path / "o.sql")}
    report = api.apply(spec(method, {"table": "t", "schema": staging}, **out), engine=pg)
    assert columns(pg, "t") == ["id", "q", "s"]
    assert count(pg, "t") == len(ROWS)
    if mode == "sql":
        assert f'"{staging}"."t"' in (tmp_path / "o.sql").read_text()
        return
    written = f'"{staging}".t' if mode == "in_place" else f'"{staging}".o'
    assert "ssn" in columns(pg, written)
    assert report.outputs["rows"] == count(pg, written)
    assert not pg.relation_exists("o")
    if method == "microaggregation" and mode == "view":  # its group table goes beside the view
        assert pg.relation_exists("o__groups", staging) and not pg.relation_exists("o__groups")


def test_an_unknown_source_schema_is_one_line_naming_it(pg):
    make_table(pg, "t")
    with pytest.raises(SpecError, match=r"^source\.schema: no schema named 'nowhere' in the database$"):
        api.check(spec("generalization", {"table": "t", "schema": "nowhere"}), engine=pg)


@pytest.mark.parametrize("mode", ["table", "view"])
def test_an_output_name_cut_to_the_source_name_is_refused(pg, mode):
    """'p' * 63 and 'p' * 63 + '_release' are the same relation on PostgreSQL: with replace: true
    the source was overwritten by its own release."""
    source = "p" * 63
    make_table(pg, f'"{source}"')
    before = pg.fetch_script(f'SELECT * FROM "{source}" ORDER BY id')[1]
    with pytest.raises(SpecError, match=r"^output\.name: the output name 'p{63}_release' is 71 bytes, but "
                                        r"postgres keeps at most 63 bytes of a name"):
        api.apply(spec("generalization", {"table": source}, mode=mode, name=source + "_release",
                       replace=True), engine=pg)
    assert pg.fetch_script(f'SELECT * FROM "{source}" ORDER BY id')[1] == before


def test_a_default_output_name_cut_short_is_refused(pg):
    source = "p" * 60
    make_table(pg, f'"{source}"')
    with pytest.raises(SpecError, match=r"'p{60}_anon' is 65 bytes"):
        api.apply(spec("noise", {"table": source}, mode="table"), engine=pg)
    assert pg.fetch_script("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()")[1][0][0] == 1


def test_a_source_name_longer_than_postgres_keeps_is_refused(pg):
    make_table(pg, '"' + "p" * 63 + '"')
    with pytest.raises(SpecError, match=r"^source\.table: 'p{64}' is 64 bytes"):
        api.check(spec("generalization", {"table": "p" * 64}), engine=pg)


def test_an_output_named_like_its_source_is_refused(pg):
    make_table(pg, "t")
    with pytest.raises(SpecError, match=r"^output\.name: 't' is the source table itself"):
        api.apply(spec("generalization", {"table": "t"}, mode="table", name="t", replace=True), engine=pg)
    # quoted names keep their case on PostgreSQL: "T" is another table
    api.apply(spec("generalization", {"table": "t"}, mode="table", name="T"), engine=pg)
    assert columns(pg, "t") == ["id", "q", "s", "ssn"] and count(pg, '"T"') == len(ROWS)


@pytest.mark.parametrize("method", list(METHODS))
def test_in_place_refuses_a_table_that_views_read_with_the_duckdb_message(two_schemas, method):
    """The same one-line refusal as on DuckDB, before anything is read (PostgreSQL itself refused
    only at the DROP, after the whole check, with the statement in the message)."""
    pg, staging = two_schemas
    pg.execute_script(f'CREATE VIEW v AS SELECT q FROM "{staging}".t')
    with pytest.raises(SpecError, match=rf"^output\.mode: in_place would replace table '{staging}\.t', "
                                        rf"which view '\w+\.v' reads: replacing it would break them"):
        api.apply(spec(method, {"table": "t", "schema": staging}, mode="in_place"), engine=pg)
    assert "ssn" in columns(pg, f'"{staging}".t')


def test_in_place_goes_ahead_when_views_read_the_table_of_the_same_name_elsewhere(two_schemas):
    pg, staging = two_schemas
    pg.execute_script("CREATE VIEW v AS SELECT q FROM t")
    api.apply(spec("generalization", {"table": "t", "schema": staging}, mode="in_place"), engine=pg)
    assert pg.fetch_script(f'SELECT min(q) FROM "{staging}".t')[1][0][0] == "20s"
    assert count(pg, "v") == len(ROWS)
