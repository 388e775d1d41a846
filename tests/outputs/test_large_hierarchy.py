"""Large table hierarchies in outputs: joined as the engine's lookup table when the statement runs
here, written once as directly rendered VALUES when it is printed, and the same rows either way."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from sqlanon import api
from sqlanon.api import levels_of
from sqlanon.compile.plan import Plan
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.dataset import open_dataset
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.problem import problem_for
from sqlanon.outputs import checked_output_query, writer
from sqlanon.outputs.scripts import split_statements
from sqlanon.spec import spec_from_dict
from sqlanon.sql.dialects import profile
from sqlanon.sql.nodes import DIRECT_VALUES_MIN_ROWS, values_table
from sqlanon.sql.render import render
from tests.outputs.large_hierarchy import label, large_spec, large_zip_map
from tests.outputs.people import canon, load_people, people_spec, sorted_rows

DIALECTS = ("duckdb", "postgres", "spark", "snowflake", "bigquery", "trino")
HOSTILE = ["it's", 'a "quoted" one', "semi; colon; -- comment", "back\\slash \\' \\\\", "ẞüö 🙂 日本",
           "'; DROP TABLE people; --", "", "tab\there", "NULL"]


def hostile_rows(n: int) -> list[tuple[str, ...]]:
    return [(f"{i}{HOSTILE[i % len(HOSTILE)]}", HOSTILE[(i + 3) % len(HOSTILE)], "*") for i in range(n)]


@pytest.mark.parametrize("pretty", [False, True])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_large_values_render_directly_as_the_generator_would(dialect, pretty):
    """A large VALUES relation is not one sqlglot node per cell, and its SQL is the generator's own:
    quotes, semicolons, comments, backslashes and non-ASCII text quoted by the dialect."""
    rows = hostile_rows(DIRECT_VALUES_MIN_ROWS + 7)
    columns = ["leaf", "l1", "l2"]
    direct = values_table(rows, columns, "v", profile(dialect).sqlglot)
    nodes = values_table(rows, columns, "v")
    got = render(exp.select(exp.Star()).from_(direct), dialect, pretty=pretty)
    expected = render(exp.select(exp.Star()).from_(nodes), dialect, pretty=pretty)
    if pretty:  # the same statement; the generator lays out one row per line, the direct text one line
        got, expected = (sqlglot.parse_one(s, read=profile(dialect).sqlglot).sql(profile(dialect).sqlglot)
                         for s in (got, expected))
    assert got == expected
    if dialect != "bigquery":  # BigQuery rewrites VALUES; its cells stay nodes
        assert direct.find(exp.Literal) is None


def test_small_values_stay_nodes():
    """Below the threshold the relation is built as before (the golden SQL depends on it)."""
    rows = hostile_rows(DIRECT_VALUES_MIN_ROWS - 1)
    assert values_table(rows, ["a", "b", "c"], "v", "duckdb") == values_table(rows, ["a", "b", "c"], "v")


def test_line_breaks_keep_the_generators_rendering():
    """Pretty printing indents lines of pre-rendered text: a label with a line break keeps nodes."""
    rows = hostile_rows(DIRECT_VALUES_MIN_ROWS) + [("x\ny", "multi\r\nline", "*")]
    direct = values_table(rows, ["a", "b", "c"], "v", "duckdb")
    assert direct.find(exp.Literal) is not None
    with DuckDBEngine() as engine:
        got = engine.fetch(exp.select(exp.Star()).from_(direct))[1]
    assert [tuple(r) for r in got] == rows


def test_directly_rendered_values_read_back_exactly():
    rows = hostile_rows(DIRECT_VALUES_MIN_ROWS + 3)
    with DuckDBEngine() as engine:
        got = engine.fetch(exp.select(exp.Star()).from_(values_table(rows, ["a", "b", "c"], "v", "duckdb")))
    assert [tuple(r) for r in got[1]] == rows


def test_plan_builds_the_same_with_clause_as_chained_ctes():
    plan = Plan(prefix="p_")
    first = plan.add("a", exp.select("1 AS x"))
    plan.add("b", exp.select("x").from_(first))
    final = exp.select("x").from_(plan.ref("b"))
    chained = final.copy()
    for name, step in plan.steps:
        chained = chained.with_(exp.to_identifier(name, quoted=True), as_=step.copy())
    for dialect in DIALECTS:
        assert render(plan.as_query(final), dialect, pretty=True) == render(chained, dialect, pretty=True)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("mode", ["table", "view", "in_place", "sql"])
def test_statements_split_without_rereading_the_select(people, mode, dialect):
    """The statements a skeleton records as it renders are those of its printed script."""
    spec = spec_from_dict(large_spec(output={"mode": mode, "replace": True}))
    ds = open_dataset(spec, people)
    with Evaluator(problem_for(spec, ds)) as ev:
        node = ev.check(levels_of(spec, ev.p.qis), spec.transformation.suppression_limit)
        oq = checked_output_query(spec, ds, ev, node, profile(dialect))
    target = writer.Target("people_anon", None, profile(dialect))
    args = {"replace": mode != "table", "transaction": profile(dialect).transactional_ddl}
    script = writer.script(mode, writer.select_sql(oq, target.dialect), target, **args)
    assert list(script.statements) == split_statements(script.text, profile(dialect))


def test_table_written_here_joins_the_loaded_lookup(people):
    """A table written on the engine reads the evaluator's lookup table, not the hierarchy inlined
    again as VALUES (which cost seconds per 100,000 rows to build, render and parse)."""
    spec = spec_from_dict(large_spec())
    ds = open_dataset(spec, people)
    with Evaluator(problem_for(spec, ds)) as ev:
        node = ev.check(levels_of(spec, ev.p.qis), spec.transformation.suppression_limit)
        here = checked_output_query(spec, ds, ev, node, people.dialect, portable=False)
        printed = checked_output_query(spec, ds, ev, node, people.dialect)
        lookup = ev.generalizer.lookups["zip"]
    assert here.query.find(exp.Values) is None
    assert any(t.name == lookup.name for t in here.query.find_all(exp.Table))
    assert printed.query.find(exp.Values) is not None


@pytest.mark.parametrize("mode", ["table", "view", "in_place"])
def test_large_hierarchy_outputs_equal_the_printed_sql(people, mode):
    """Each mode on the engine and the printed SQL run elsewhere give the same rows, hostile labels
    intact."""
    api.apply(spec_from_dict(large_spec(output={"mode": mode, "replace": True})), engine=people)
    written = sorted_rows(people, "people" if mode == "in_place" else "people_anon")
    with DuckDBEngine() as other:
        load_people(other)
        sql = api.compile_sql(spec_from_dict(large_spec(output={"mode": "sql"})), engine=other)
        printed = canon(other.fetch_script(sql.strip().rstrip(";"))[1])
    assert written == printed
    zips = {r[2] for r in written}
    assert zips == {label("476", 2), label("479", 2)}
    assert len(written) == 7


def test_small_hierarchy_output_unchanged(people):
    """The people spec's small hierarchies are still CASE maps and inline nodes."""
    api.apply(spec_from_dict(people_spec(output={"mode": "table"})), engine=people)
    assert len(sorted_rows(people, "people_anon")) == 7


class CountingEngine(DuckDBEngine):
    """DuckDB, counting the rows sent from Python into tables."""

    sent = 0

    def insert_rows(self, name, rows, *, schema=None):  # type: ignore[no-untyped-def]
        self.sent += len(rows)
        super().insert_rows(name, rows, schema=schema)


def test_a_large_hierarchy_is_loaded_once_per_apply():
    """Checking the node and writing the table both read one loaded lookup table: the hierarchy's
    rows cross from Python once (they were sent again as a table of integer codes for the scan)."""
    with CountingEngine() as engine:
        load_people(engine)
        api.apply(spec_from_dict(large_spec(output={"mode": "table"})), engine=engine)
        leaves = len(large_zip_map())
        assert leaves <= engine.sent < 2 * leaves
        assert len(sorted_rows(engine, "people_anon")) == 7


@pytest.mark.parametrize("plain", [True, False], ids=["plain_text", "hostile_text"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_values_assembled_in_arrow_equal_the_generators(dialect, plain):
    """A hierarchy held as Arrow columns is written row for row as the generator writes it: plain
    text quoted in Arrow at once, hostile text (quotes, backslashes, non-ASCII) quoted per value,
    NULL as the dialect's NULL; a line break or a dialect that rewrites VALUES falls back to nodes."""
    import pyarrow as pa

    from sqlanon.compile.values_text import arrow_rows_text
    from sqlanon.sql.nodes import direct_values

    n = DIRECT_VALUES_MIN_ROWS + 7
    rows = ([(f"{i:06d}", f"{i // 10:05d}*", None if i % 7 == 0 else "*") for i in range(n)] if plain
            else hostile_rows(n))
    columns = ["leaf", "l1", "l2"]
    data = pa.Table.from_pydict({c: list(v) for c, v in zip(columns, zip(*rows))})
    text = arrow_rows_text(data, profile(dialect).sqlglot)
    broken = pa.Table.from_pydict({"leaf": ["a\nb"] * 3})
    assert arrow_rows_text(broken, profile(dialect).sqlglot) is None
    if dialect == "bigquery":
        assert text is None
        return
    got = render(exp.select(exp.Star()).from_(direct_values(text, columns, "v")), dialect)
    expected = render(exp.select(exp.Star()).from_(values_table(rows, columns, "v")), dialect)
    assert got == expected
