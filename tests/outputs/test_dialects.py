"""Dialect capabilities at compile time, the portable salted hash, and the SQL templates."""

from __future__ import annotations

import hashlib

import jinja2
import pytest
import sqlglot
from sqlglot import exp

from sqlanon import api
from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.errors import InternalError, UnsupportedError
from sqlanon.outputs.scripts import render_script, split_statements, template_name
from sqlanon.spec import Attribute, Source, Spec, Transformation
from sqlanon.sql.dialects import profile, sha256_hex
from sqlanon.sql.nodes import lit

DIALECTS = ("duckdb", "postgres", "spark", "snowflake", "bigquery", "trino")


class FunctionHierarchy(Hierarchy):
    """Level 1 is ``f(age)`` for a given sqlglot function node; level 2 is ``*``."""

    def __init__(self, make) -> None:
        self.make = make

    @property
    def height(self) -> int:
        return 2

    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        if level == 0:
            return column
        if level == 2:
            return lit("*")
        return exp.cast(self.make(column.copy()), exp.DataType.build("varchar"))


def spec_with(hierarchy: Hierarchy) -> Spec:
    return Spec(Source(table="people"),
                [Attribute("age", "quasi_identifier", hierarchy=hierarchy)],
                privacy=(KAnonymity(1),), transformation=Transformation(levels={"age": 1}))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_function_the_target_lacks_fails_at_compile_time(people, dialect):
    # DuckDB's hash() has no equivalent elsewhere; sqlglot would pass it through unchanged
    spec = spec_with(FunctionHierarchy(lambda c: exp.Anonymous(this="hash", expressions=[c])))
    if dialect == "duckdb":
        assert "HASH(" in api.compile_sql(spec, engine=people, dialect=dialect)
        return
    with pytest.raises(UnsupportedError, match=f"Function 'hash' is not known to be available on "
                                               f"{dialect}"):
        api.compile_sql(spec, engine=people, dialect=dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_median_is_allowed_only_where_it_exists(people, dialect):
    spec = spec_with(FunctionHierarchy(lambda c: exp.Window(this=exp.Median(this=c))))
    if dialect in ("duckdb", "snowflake"):
        assert "MEDIAN(" in api.compile_sql(spec, engine=people, dialect=dialect)
        return
    with pytest.raises(UnsupportedError, match=f"Median is not supported on {dialect}"):
        api.compile_sql(spec, engine=people, dialect=dialect)


def test_sha256_hex_matches_python_on_duckdb(duck):
    value = "Zoë O'Brien; -- 🙂"
    sql = exp.select(exp.alias_(sha256_hex(lit(value), profile("duckdb")), "h")).sql("duckdb")
    assert duck.fetch_script(sql)[1] == [(hashlib.sha256(value.encode("utf-8")).hexdigest(),)]


@pytest.mark.parametrize(("dialect", "expected"), [
    ("duckdb", "SHA256('v')"),
    ("postgres", "ENCODE(SHA256(CONVERT_TO('v', 'UTF8')), 'hex')"),
    ("spark", "SHA2('v', 256)"),
    ("snowflake", "SHA2('v', 256)"),
    ("bigquery", "TO_HEX(SHA256('v'))"),
    ("trino", "LOWER(TO_HEX(SHA256(TO_UTF8('v'))))"),
])
def test_sha256_hex_per_dialect(dialect, expected):
    # each returns lower-case hex of the UTF-8 bytes (vendor documentation of each function)
    assert sha256_hex(lit("v"), profile(dialect)).sql(profile(dialect).sqlglot) == expected


def test_templates_dispatch_to_the_dialect_variant_or_the_default():
    assert template_name("replace_table", profile("snowflake")) == "snowflake__replace_table.sql.j2"
    assert template_name("replace_table", profile("postgres")) == "default__replace_table.sql.j2"
    assert template_name("replace_view", profile("postgres")) == "postgres__replace_view.sql.j2"
    assert template_name("replace_view", profile("duckdb")) == "default__replace_view.sql.j2"
    with pytest.raises(InternalError, match="no SQL template default__nothing.sql.j2"):
        template_name("nothing", profile("duckdb"))


def test_templates_take_rendered_text_and_booleans_only():
    with pytest.raises(jinja2.UndefinedError, match="'staging_relation' is undefined"):
        render_script("replace_table", profile("duckdb"), relation='"t"', relation_name='"t"',
                      select="SELECT 1", transaction=True)
    with pytest.raises(InternalError, match="relation must be rendered SQL text or a boolean"):
        render_script("create_table", profile("duckdb"), relation=exp.to_table("t"), select="SELECT 1")


def test_statements_split_only_at_real_semicolons():
    script = ("BEGIN;\nCREATE TABLE \"a;b\" AS SELECT 'x;--' AS \"c;\" -- note; here\n;\n"
              "/* ; */ DROP TABLE \"a;b\";\n;COMMIT;\n")
    assert split_statements(script, profile("postgres")) == [
        "BEGIN",
        "CREATE TABLE \"a;b\" AS SELECT 'x;--' AS \"c;\" -- note; here",
        "/* ; */ DROP TABLE \"a;b\"",
        "COMMIT",
    ]


def test_repeat_is_refused_on_trino_where_it_builds_an_array():
    from sqlglot import exp as _exp

    from sqlanon.errors import UnsupportedError as _Unsupported
    from sqlanon.sql.render import render as _render

    tree = _exp.select(_exp.Repeat(this=_exp.Literal.string("*"), times=_exp.Literal.number(3)))
    assert _render(tree, "duckdb") == "SELECT REPEAT('*', 3)"
    with pytest.raises(_Unsupported, match="Repeat is not supported on trino"):
        _render(tree, "trino")


def test_identifier_mask_runs_the_same_on_duckdb_from_every_dialect():
    """The mask expression printed for each target, read back and run on DuckDB, gives one * per char."""
    import duckdb
    import sqlglot
    from sqlglot import exp as _exp

    from sqlanon.compile.identifiers import masked
    from sqlanon.sql.render import render as _render

    con = duckdb.connect()
    # BigQuery is left out: its INT64 reads back as DuckDB's BIGINT, which DuckDB's LPAD refuses
    for dialect in ("duckdb", "postgres", "spark", "snowflake", "trino"):
        sql = _render(_exp.select(_exp.alias_(masked(_exp.Literal.string("O'Brien é")), "m")), dialect)
        assert "REPEAT" not in sql.upper()
        back = sqlglot.transpile(sql, read=dialect, write="duckdb")[0]
        assert con.execute(back).fetchone()[0] == "*********", dialect


# -- names: the case each target stores ----------------------------------------------------------
CASE_RENDERING = {
    # Snowflake stores unquoted names in upper case and compares quoted names exactly: `"adult"`
    # would miss a table created as `CREATE TABLE adult`, so case-less names are written upper-case
    "snowflake": ('"SALES"."PEOPLE"', '"AGE"', '"__SA_KEEP"'),
    # PostgreSQL compares quoted names exactly and the catalog holds what the user wrote (folded
    # lower-case when created unquoted); the others resolve names regardless of case
    "postgres": ('"sales"."people"', '"age"', '"__sa_keep"'),
    "duckdb": ('"sales"."people"', '"age"', '"__sa_keep"'),
    "trino": ('"sales"."people"', '"age"', '"__sa_keep"'),
    "bigquery": ("`sales`.`people`", "`age`", "`__sa_keep`"),
    "spark": ("`sales`.`people`", "`age`", "`__sa_keep`"),
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_lower_case_names_are_written_as_each_target_stores_them(dialect):
    from sqlanon.spec import spec_from_dict
    from tests.outputs.people import people_spec

    spec = people_spec(output={"mode": "table", "name": "people_release"})
    spec["source"]["schema"] = "sales"
    sql = api.compile_sql(spec_from_dict(spec), dialect=dialect, offline=True)
    relation, column, internal_column = CASE_RENDERING[dialect]
    assert f"FROM {relation}" in sql and column in sql and internal_column in sql
    release = "PEOPLE_RELEASE" if dialect == "snowflake" else "people_release"
    assert release in sql
    if dialect == "snowflake":
        assert '"people"' not in sql and '"age"' not in sql


@pytest.mark.parametrize("dialect", DIALECTS)
def test_names_with_case_or_special_characters_stay_exact_and_quoted(dialect):
    """Mixed case, quotes, semicolons and non-ASCII letters are never folded, and still escaped."""
    from sqlanon.spec import spec_from_dict
    from tests.outputs.people import WEIRD_QI, WEIRD_SPEC, WEIRD_TABLE

    spec = {**WEIRD_SPEC, "source": {"table": WEIRD_TABLE, "schema": "Straße"},
            "output": {"mode": "sql"}}
    spec["attributes"] = {**WEIRD_SPEC["attributes"], "MixedCase": {"role": "insensitive"}}
    sql = api.compile_sql(spec_from_dict(spec), dialect=dialect, offline=True)
    parsed = sqlglot.parse_one(sql, read=dialect)
    assert not isinstance(parsed, exp.Command)
    source = [t for t in parsed.find_all(exp.Table) if t.db]
    assert {(t.db, t.name) for t in source} == {("Straße", WEIRD_TABLE)}
    names = {c.name for c in parsed.find_all(exp.Column)}
    assert {WEIRD_QI, "MixedCase"} <= names
    assert not {n for n in names if n.upper() == "MIXEDCASE" and n != "MixedCase"}
    for statement in sqlglot.parse(sql, read=dialect):
        assert isinstance(statement, exp.Select)  # no name broke out into a statement of its own
