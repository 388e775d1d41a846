"""Outputs on DuckDB: the source's schema is used for every lookup and write, output names are
refused when they cannot be told from the source or sqlanon's own tables, views over a table
replaced in place are not broken, and every output problem is found before the data is read."""

from __future__ import annotations

import copy

import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.spec import spec_from_dict
from tests.outputs.people import people_spec, sorted_rows

ROWS = [(i, 20 + i % 7 * 5, 1000 + i * 37 % 500, f"ssn-{i:03d}") for i in range(40)]
"""t(id, q, s, ssn): q a quasi-identifier (age), s a number, ssn undeclared (copied unchanged)."""

AGE_MAP = {str(a): [f"{a // 10 * 10}s", "*"] for a in range(20, 60)}

METHODS = {
    "generalization": {
        "attributes": {"id": "insensitive", "q": {"role": "quasi_identifier", "hierarchy": {"map": AGE_MAP}},
                       "s": "sensitive"},
        "privacy": [{"k_anonymity": {"k": 2}}],
        "transformation": {"levels": {"q": 1}},
    },
    "microaggregation": {
        "attributes": {"id": "insensitive", "q": "quasi_identifier", "s": "sensitive"},
        "privacy": [{"k_anonymity": {"k": 3}}],
        "transformation": {"method": "microaggregation", "algorithm": "mdav", "k": 3, "key": "id",
                           "attributes": ["q"]},
    },
    "microaggregation_in_sql": {
        "attributes": {"id": "insensitive", "q": "quasi_identifier", "s": "sensitive"},
        "privacy": [{"k_anonymity": {"k": 3}}],
        "transformation": {"method": "microaggregation", "algorithm": "individual_ranking", "k": 3,
                           "attributes": ["q"]},
    },
    "noise": {
        "attributes": {"id": "insensitive", "q": "insensitive", "s": "sensitive"},
        "transformation": {"method": "noise", "mechanism": "uncorrelated", "attributes": ["s"],
                           "alpha": 0.5},
    },
}
MODES = {"generalization": ("table", "view", "in_place", "sql"),
         "microaggregation": ("table", "view", "in_place", "sql"),
         "microaggregation_in_sql": ("table", "view", "in_place", "sql"),
         "noise": ("table", "in_place")}
CASES = [(m, mode) for m, modes in MODES.items() for mode in modes]


def make_table(engine, relation: str, columns: str = "id, q, s, ssn") -> None:
    engine.con.execute(f"CREATE TABLE {relation} AS SELECT {columns} FROM (VALUES "
                       + ", ".join(f"({i}, {q}, {s}, '{n}')" for i, q, s, n in ROWS)
                       + ") AS v(id, q, s, ssn)")


def spec(method: str, source: dict | None = None, **output) -> object:
    d = copy.deepcopy(METHODS[method])
    d["source"] = source or {"table": "t", "schema": "staging"}
    d["output"] = output
    return spec_from_dict(d)


@pytest.fixture()
def two_schemas(duck):
    """main.t(id, q, s) and staging.t(id, q, s, ssn): same name, different columns."""
    duck.con.execute("CREATE SCHEMA staging")
    make_table(duck, "main.t", "id, q, s")
    make_table(duck, "staging.t")
    return duck


def count(engine, relation: str) -> int:
    return engine.con.execute(f"SELECT count(*) FROM {relation}").fetchone()[0]


def columns(engine, relation: str) -> list[str]:
    return [d[0] for d in engine.con.execute(f"SELECT * FROM {relation} LIMIT 0").description]


# -- source.schema ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "mode"), CASES)
def test_source_schema_is_read_and_written_not_the_same_name_elsewhere(two_schemas, method, mode, tmp_path):
    """source.schema was ignored: in_place rewrote staging.t from main.t's columns (ssn lost), and
    mode table wrote staging.o, then failed counting "o" in the current schema."""
    out = {"mode": mode, "name": "o"} if mode != "sql" else {"mode": "sql", "path": str(tmp_path / "o.sql")}
    report = api.apply(spec(method, **out), engine=two_schemas)
    assert columns(two_schemas, "main.t") == ["id", "q", "s"]  # the table of the same name is untouched
    assert two_schemas.con.execute("SELECT count(*) FROM main.t").fetchone()[0] == len(ROWS)
    if mode == "sql":
        text = (tmp_path / "o.sql").read_text()
        assert '"staging"."t"' in text
        return
    written = "staging.t" if mode == "in_place" else "staging.o"
    assert "ssn" in columns(two_schemas, written)  # the undeclared column is copied, not lost
    assert report.outputs["rows"] == two_schemas.con.execute(f"SELECT count(*) FROM {written}").fetchone()[0]
    assert not two_schemas.relation_exists("o")  # nothing was written in the current schema
    if method == "microaggregation" and mode == "view":  # its group table goes beside the view
        assert two_schemas.relation_exists("o__groups", "staging")
        assert not two_schemas.relation_exists("o__groups")


@pytest.mark.parametrize("method", list(METHODS))
def test_a_table_only_in_source_schema_is_found(duck, method):
    """With only staging.t, the table was "not found"."""
    duck.con.execute("CREATE SCHEMA staging")
    make_table(duck, "staging.t")
    api.apply(spec(method, mode="table", name="o"), engine=duck)
    assert "ssn" in columns(duck, "staging.o")


@pytest.mark.parametrize("mode", ["table", "in_place"])
def test_anonymize_searches_and_writes_the_source_schema(two_schemas, mode):
    d = copy.deepcopy(METHODS["generalization"])
    d.update(source={"table": "t", "schema": "staging"}, transformation={"search": "optimal"},
             output={"mode": mode, "name": "o"})
    report = api.anonymize(spec_from_dict(d), engine=two_schemas)
    written = "staging.t" if mode == "in_place" else "staging.o"
    assert "ssn" in columns(two_schemas, written) and report.node.rows == len(ROWS)
    assert columns(two_schemas, "main.t") == ["id", "q", "s"]


def test_an_unknown_source_schema_is_one_line_naming_it(duck):
    make_table(duck, "t")
    with pytest.raises(SpecError, match=r"^source\.schema: no schema named 'nowhere' in the database$"):
        api.check(spec("generalization", {"table": "t", "schema": "nowhere"}), engine=duck)


def test_a_table_missing_from_source_schema_is_named_with_the_schema(duck):
    duck.con.execute("CREATE SCHEMA staging")
    make_table(duck, "t")
    with pytest.raises(SpecError, match=r"^source\.table: no table or view named 't' in schema 'staging'$"):
        api.check(spec("generalization"), engine=duck)


def test_compiled_sql_reads_and_writes_the_source_schema(two_schemas):
    sql = api.compile_sql(spec("generalization", mode="table", name="o"), engine=two_schemas,
                          dialect="postgres")
    assert 'CREATE TABLE "staging"."o"' in sql and 'FROM "staging"."t"' in sql


# -- output names -------------------------------------------------------------------------------------
def test_an_output_named_like_its_source_is_refused_even_with_replace(people):
    """DuckDB ignores case in quoted names: "PEOPLE" with replace: true would drop the source."""
    before = sorted_rows(people, "people")
    for name in ("people", "PEOPLE", "People"):
        for mode in ("table", "view"):
            with pytest.raises(SpecError, match=rf"^output\.name: '{name}' is the source table itself"):
                api.apply(spec_from_dict(people_spec(output={"mode": mode, "name": name, "replace": True})),
                          engine=people)
    assert sorted_rows(people, "people") == before


def test_an_output_in_another_schema_may_share_the_source_name(two_schemas):
    api.apply(spec("generalization", {"table": "t"}, mode="table", name="o"), engine=two_schemas)
    assert columns(two_schemas, "main.o") == ["id", "q", "s"]


@pytest.mark.parametrize("name", ["__sa_stage_1", "__sa_x", "__SA_X"])
def test_an_internal_name_is_refused_as_output(people, name):
    with pytest.raises(SpecError, match=r"^output\.name: .__(sa|SA)_\w+. starts with __sa_, which sqlanon "
                                        r"reserves"):
        api.apply(spec_from_dict(people_spec(output={"name": name})), engine=people)
    assert not people.relation_exists(name)


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_output_name_is_an_error_not_the_default(name):
    with pytest.raises(SpecError, match=r"^output\.name: must not be empty"):
        spec_from_dict(people_spec(output={"name": name}))


def test_a_name_too_long_for_the_compile_target_is_refused(people):
    """PostgreSQL keeps 63 bytes of a name: a longer output name is cut, possibly to the source's."""
    name = "é" * 32  # 64 bytes in 32 characters
    spec_ = spec_from_dict(people_spec(output={"name": name}))
    assert name in api.compile_sql(spec_, engine=people, dialect="duckdb")
    with pytest.raises(SpecError, match=r"^output\.name: the output name 'é+' is 64 bytes, but postgres "
                                        r"keeps at most 63 bytes"):
        api.compile_sql(spec_, engine=people, dialect="postgres")
    spark = spec_from_dict(people_spec(output={"name": "x" * 129}))
    with pytest.raises(SpecError, match=r"129 characters, but spark allows at most 128"):
        api.compile_sql(spark, engine=people, dialect="spark")


def test_the_output_name_is_refused_on_compile_when_it_is_the_source(people):
    with pytest.raises(SpecError, match=r"is the source table itself"):
        api.compile_sql(spec_from_dict(people_spec(output={"name": "PEOPLE", "replace": True})),
                        engine=people, dialect="trino")
    # on Snowflake the source `people` is stored as PEOPLE (docs/outputs.md, "Names"): the same table
    with pytest.raises(SpecError, match=r"on snowflake both are 'PEOPLE'"):
        api.compile_sql(spec_from_dict(people_spec(output={"name": "PEOPLE", "replace": True})),
                        engine=people, dialect="snowflake")
    # Snowflake and PostgreSQL keep the case of a mixed-case quoted name: another table
    for dialect in ("snowflake", "postgres"):
        sql = api.compile_sql(spec_from_dict(people_spec(output={"name": "People"})), engine=people,
                              dialect=dialect)
        assert 'CREATE TABLE "People"' in sql


# -- dependent views and in_place ---------------------------------------------------------------------
DEPENDENT = [
    "CREATE VIEW staging.v AS SELECT q, s FROM t",                         # unqualified, same schema
    "CREATE VIEW main.v AS SELECT q FROM staging.t WHERE s > 0",           # qualified
    "CREATE VIEW main.v AS SELECT 1 AS x WHERE EXISTS (SELECT 1 FROM memory.staging.T)",  # catalog, case
    "CREATE VIEW main.v AS WITH c AS (SELECT * FROM staging.t) SELECT * FROM c",
    "CREATE VIEW staging.v AS SELECT a.q FROM main.t a JOIN t b ON a.id = b.id",
]
INDEPENDENT = [
    "CREATE VIEW main.v AS SELECT q FROM t",                               # main.t, not staging.t
    "CREATE VIEW staging.v AS WITH t AS (SELECT 1 AS q) SELECT q FROM t",  # a CTE named t
    "CREATE VIEW staging.v AS SELECT 1 AS t",
]


@pytest.mark.parametrize(("method", "view"), [(m, v) for m in METHODS for v in DEPENDENT])
def test_in_place_refuses_a_table_that_views_read(two_schemas, method, view):
    """DuckDB let in_place drop the table under a view, which then read NULL for every generalized
    column; it is refused as PostgreSQL refuses, before anything runs, and the table stays."""
    two_schemas.con.execute(view)
    before = two_schemas.con.execute("SELECT * FROM staging.t ORDER BY id").fetchall()
    with pytest.raises(SpecError, match=r"^output\.mode: in_place would replace table 'staging\.t', which "
                                        r"view '\w+\.v' reads: replacing it would break them"):
        api.apply(spec(method, mode="in_place"), engine=two_schemas)
    assert two_schemas.con.execute("SELECT * FROM staging.t ORDER BY id").fetchall() == before


@pytest.mark.parametrize("view", INDEPENDENT)
def test_in_place_goes_ahead_when_views_read_other_tables(two_schemas, view):
    two_schemas.con.execute(view)
    api.apply(spec("generalization", mode="in_place"), engine=two_schemas)
    assert two_schemas.con.execute("SELECT DISTINCT q FROM staging.t ORDER BY q").fetchall()[0][0] == "20s"
    two_schemas.con.execute(f"SELECT * FROM {view.split()[2]}").fetchall()  # still works


@pytest.mark.parametrize("method", list(METHODS))
def test_replacing_an_output_table_that_views_read_is_refused(two_schemas, method):
    """The same breakage as in place: replace: true dropped an output table under its views."""
    make_table(two_schemas, "staging.o")
    two_schemas.con.execute("CREATE VIEW staging.w AS SELECT ssn FROM o")
    with pytest.raises(SpecError, match=r"^output\.name: output\.replace would replace table 'staging\.o', "
                                        r"which view 'staging\.w' reads: replacing it would break them"):
        api.apply(spec(method, mode="table", name="o", replace=True), engine=two_schemas)
    assert len(two_schemas.con.execute("SELECT * FROM staging.w").fetchall()) == len(ROWS)


# -- every output problem before the data is read -------------------------------------------------
class Recording(DuckDBEngine):
    """A real DuckDB that records the statements sqlanon runs (catalog look-ups bypass it)."""

    def __init__(self) -> None:
        super().__init__()
        self.statements: list[str] = []

    def _execute(self, sql: str) -> None:
        self.statements.append(sql)
        super()._execute(sql)

    def _fetch_rows(self, sql: str):
        self.statements.append(sql)
        return super()._fetch_rows(sql)


def problems(tmp_path) -> dict[str, dict]:
    return {
        "exists": {"mode": "table", "name": "taken"},
        "unwritable path": {"mode": "sql", "path": str(tmp_path / "nonexistent" / "x.sql")},
        "path is a directory": {"mode": "sql", "path": str(tmp_path)},
        "internal name": {"mode": "table", "name": "__sa_x"},
        "source itself": {"mode": "table", "name": "T", "replace": True},
        "view is the source": {"mode": "view", "name": "t", "replace": True},
    }


PROBLEMS = ["exists", "unwritable path", "path is a directory", "internal name", "source itself",
            "view is the source"]
EARLY = [("anonymize", "generalization", p) for p in PROBLEMS] + [
    ("apply", m, p) for m in METHODS for p in PROBLEMS
    if not (m == "noise" and "path" in p)]  # noise writes tables only


@pytest.mark.parametrize(("verb", "method", "problem"), EARLY)
def test_output_problems_are_found_before_the_source_is_read(tmp_path, verb, problem, method):
    """anonymize searched the whole lattice and apply checked the table before saying that the
    output exists or its path cannot be written."""
    engine = Recording()
    make_table(engine, "t")
    engine.con.execute("CREATE TABLE taken AS SELECT 1 AS x")
    d = copy.deepcopy(METHODS[method])
    d["source"] = {"table": "t"}
    d["output"] = problems(tmp_path)[problem]
    if verb == "anonymize":
        d["transformation"] = {"search": "optimal"}
    with pytest.raises(SpecError, match=r"^output\.(name|path|mode): "):
        getattr(api, verb)(spec_from_dict(d), engine=engine)
    assert engine.statements == []
    assert not (tmp_path / "nonexistent").exists()
    engine.close()


def test_a_file_source_without_an_output_database_is_refused_before_it_is_loaded(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("id,q,s\n" + "".join(f"{i},{q},{s}\n" for i, q, s, _ in ROWS))
    for method in METHODS:
        d = copy.deepcopy(METHODS[method])
        d["source"] = {"file": str(csv)}
        d["output"] = {"mode": "table"}
        with pytest.raises(SpecError, match=r"^output\.database: the source is a file"):
            api.apply(spec_from_dict(d))


def test_dp_microaggregation_reads_and_writes_the_source_schema(two_schemas):
    """dp_microaggregation read its source by bare name: with source.schema it read main.t."""
    two_schemas.con.execute("DELETE FROM staging.t WHERE id >= 30")  # tells the two tables apart
    d = {"source": {"table": "t", "schema": "staging"}, "attributes": {"s": "sensitive"},
         "transformation": {"method": "noise", "mechanism": "dp_microaggregation", "attributes": ["s"],
                            "k": 5, "epsilon": 1.0, "bounds": {"s": [0, 2000]}},
         "output": {"mode": "table", "name": "o"}}
    report = api.apply(spec_from_dict(d), engine=two_schemas)
    assert report.rows == report.outputs["rows"] == 30 == count(two_schemas, "staging.o")
    assert not two_schemas.relation_exists("o")
