"""The Method interface: a method is one registered class, reached by the spec through the registry,
run by the one runner and written by the one writer in every mode it allows."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.compile.released import OutputQuery
from sqlanon.engines.capabilities import Capabilities
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.base import Method, Plan, Release, Sink
from sqlanon.methods.dataset import Dataset
from sqlanon.outputs.writer import TableWriter
from sqlanon.report import Report, format_report
from sqlanon.spec import spec_from_dict
from sqlanon.spec.methods import METHODS
from sqlanon.sql.nodes import col, lit, table
from tests.outputs.people import ROWS, canon, load_people, people_spec, sorted_rows


@dataclass
class TopResult:
    """The result of the test method: how many rows it released."""

    rows: int
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"transformation": {"method": "top"}, "rows": self.rows, "outputs": self.outputs,
                "warnings": self.warnings}


class TopRelease(Release):
    """Every quasi-identifier at the top of its hierarchy (``*``); other columns as released."""

    suppression = False

    def __init__(self, spec: Any, ds: Dataset) -> None:
        self.spec, self.ds = spec, ds

    def query(self, target: Any) -> OutputQuery:
        oq = OutputQuery(exp.select())
        columns = []
        for c in self.ds.column_names:
            if c in self.spec.quasi_identifiers:
                columns.append(exp.alias_(lit("*"), c, quoted=True))
            elif (value := oq.released(self.spec, c, col(c), target)) is not None:
                columns.append(value)
        oq.query = exp.select(*columns).from_(self.ds.relation.copy())
        return oq


class Top(Method):
    name = "top"
    needs_hierarchies = False
    output_modes = ("table", "view", "sql", "none")
    refused_modes = "top never replaces its source, not {mode}"

    def transformation_keys(self) -> tuple[str, ...]:
        return ("symbol",)

    def settings(self, spec: Any) -> Any:
        return spec.transformation.options.get("symbol", "*")

    def run(self, plan: Plan, ds: Dataset, sink: Sink) -> Any:
        release = TopRelease(plan.spec, ds)
        if plan.verb == "compile":
            return sink.compile(ds, release)
        result = TopResult(ds.engine.row_count(ds.name))
        if plan.writes:
            result.outputs = sink.write(ds, release)
        return result

    def refuse(self, plan: Plan) -> None:
        if plan.writes:
            self.check_output_mode(plan.spec)


@contextlib.contextmanager
def registered(method: Method) -> Iterator[None]:
    METHODS.add(method.name, method)
    try:
        yield
    finally:  # the registry is process-wide: other tests must not see the test method
        del METHODS._entries[method.name], METHODS._traits[method.name]


@pytest.fixture()
def people(duck):
    load_people(duck)
    return duck


@pytest.fixture()
def top():
    with registered(Top()):
        yield


def top_spec(**output: Any) -> Any:
    spec = people_spec(transformation={"method": "top", "levels": {}, "suppression_limit": 0.0},
                       output=output)
    for a in ("age", "zip", "sex"):
        del spec["attributes"][a]["hierarchy"]  # this method needs none
    return spec_from_dict(spec)


def test_the_built_in_methods_and_their_traits():
    assert METHODS.names() == ["anatomy", "generalization", "local_suppression", "m_invariance",
                               "microaggregation", "mondrian", "noise"]
    traits = {name: dict(METHODS.traits(name)) for name in METHODS.names()}
    assert {n: t["needs_hierarchies"] for n, t in traits.items()} == \
        {"anatomy": False, "generalization": True, "local_suppression": False, "m_invariance": False,
         "microaggregation": False, "mondrian": False, "noise": False}
    assert {n: t["perturbs_any_attribute"] for n, t in traits.items()} == \
        {"anatomy": False, "generalization": False, "local_suppression": False, "m_invariance": False,
         "microaggregation": False, "mondrian": False, "noise": True}
    assert traits["m_invariance"]["output_modes"] == ("table", "none")
    assert traits["noise"]["output_modes"] == ("table", "in_place")
    assert "redraw" not in traits["noise"]["refused_modes"]
    assert "neither cryptographically seeded nor seedable" in traits["noise"]["refused_modes"]
    assert traits["generalization"]["compiles_offline"] and not traits["noise"]["compiles_offline"]


def test_the_spec_reads_a_new_method_through_the_registry(top):
    assert top_spec().method.name == "top"  # quasi-identifiers without hierarchies: top needs none
    with pytest.raises(SpecError, match=r"unknown method 'tpo'; use one of anatomy, generalization, "
                                        r"local_suppression, m_invariance, microaggregation, mondrian, "
                                        r"noise, top\. "
                                        r"Did you mean 'top'\?"):
        spec_from_dict(people_spec(transformation={"method": "tpo"}))


def test_a_new_methods_own_keys_are_read_from_the_spec(top):
    spec = people_spec(transformation={"method": "top", "levels": {}, "symbol": "#"})
    for a in ("age", "zip", "sex"):
        del spec["attributes"][a]["hierarchy"]
    assert spec_from_dict(spec).settings == "#"
    spec["transformation"]["symbl"] = "#"
    with pytest.raises(SpecError, match=r"transformation\.symbl: unknown key 'symbl'; allowed: method, "
                                        r"levels, .*, budget_delta, ledger, release_key, (.*, )?symbol\. "
                                        r"Did you mean 'symbol'\?"):
        spec_from_dict(spec)


def test_a_generalization_spec_still_needs_its_hierarchies():
    spec = people_spec()
    del spec["attributes"]["age"]["hierarchy"]
    with pytest.raises(SpecError, match=r"attributes\.age\.hierarchy: a quasi-identifier needs a hierarchy"):
        spec_from_dict(spec)


@pytest.mark.parametrize("mode", ["table", "view"])
def test_the_one_writer_writes_a_new_methods_rows(people, top, mode):
    result = api.apply(top_spec(mode=mode), engine=people)
    assert isinstance(result, Report)
    assert result.outputs == {"mode": mode, "relation": "people_anon", "rows": len(ROWS),
                              "dropped_columns": ["name"]}
    assert sorted_rows(people, "people_anon") == canon((r[0], "*", "*", "*", r[5]) for r in ROWS)


def test_printed_sql_of_a_new_method_runs_elsewhere(people, top):
    sql = api.apply(top_spec(mode="sql"), engine=people).outputs["sql"]
    with DuckDBEngine() as other:
        load_people(other)
        assert len(other.fetch_script(sql.strip().rstrip(";"))[1]) == len(ROWS)
    compiled = api.compile_sql(top_spec(mode="table"), engine=people)
    assert compiled.startswith('CREATE TABLE "people_anon" AS\nSELECT')


def test_a_mode_the_method_does_not_have_is_refused_with_its_reason(people, top):
    with pytest.raises(SpecError, match=r"output\.mode: top never replaces its source, not in_place"):
        api.apply(top_spec(mode="in_place"), engine=people)
    assert sorted_rows(people, "people", ["name"]) == sorted((r[1],) for r in ROWS)


def test_the_runner_refuses_an_empty_source_for_a_method_that_needs_rows(people, top):
    people.execute_script("DELETE FROM people")
    with pytest.raises(SpecError, match=r"source\.table: 'people' has no rows"):
        api.apply(top_spec(), engine=people)


def test_a_report_is_rendered_by_its_methods_section(people, top):
    from sqlanon.report.base import SECTIONS

    with pytest.raises(SpecError, match=r"unknown report section 'top'"):
        format_report(TopResult(3).as_dict())
    SECTIONS.add("top", lambda r: f"top: {r['rows']} rows\n")
    try:
        assert format_report(TopResult(3).as_dict()) == "top: 3 rows\n"
    finally:
        del SECTIONS._entries["top"], SECTIONS._traits["top"]


def test_tables_move_into_place_in_the_callers_transaction(people):
    tables = TableWriter(people, None)
    tables.create("staged", exp.select(exp.alias_(lit(1), "x", quoted=True)))
    with pytest.raises(RuntimeError), people.transaction():
        tables.move_into_place("staged", "people", replace=True)
        raise RuntimeError("after the rename")
    assert len(sorted_rows(people, "people")) == len(ROWS)  # rolled back: the source is intact
    with people.transaction():
        tables.move_into_place("staged", "people", replace=True)
    assert people.fetch(exp.select(exp.Star()).from_(table("people")))[1] == [(1,)]
    assert not people.relation_exists("staged")


def test_every_output_mode_of_the_spec_has_a_writer():
    from sqlanon.outputs.writer import MODES
    from sqlanon.spec.output import OUTPUT_MODES

    assert sorted(OUTPUT_MODES) == MODES.names()
    assert [m for m in OUTPUT_MODES if MODES.get(m).here] == ["table", "view", "in_place"]


class _KeylessDuckDB(DuckDBEngine):
    """A DuckDB that declares neither a positional join nor a stable row key."""

    capabilities = Capabilities(transactional_ddl=True, atomic_rename=True)


def test_the_runner_refuses_an_engine_without_a_capability_the_method_needs(top):
    with _KeylessDuckDB() as keyless:
        load_people(keyless)
        before = sorted_rows(keyless, "people")
        spec = people_spec(transformation={"method": "noise", "mechanism": "laplace", "epsilon": 1.0,
                                           "attributes": ["age"], "sensitivity": 1, "seed": 7,
                                           "bounds": {"age": [0, 120]}})
        with pytest.raises(UnsupportedError, match=r"method noise needs an engine that declares "
                                                   r"positional_join or stable_row_key or row_stream_map; "
                                                   r"duckdb declares transactional_ddl, atomic_rename"):
            api.apply(spec_from_dict(spec), engine=keyless)
        assert sorted_rows(keyless, "people") == before and not keyless.relation_exists("people_anon")
        # a method that needs neither runs on the same engine
        assert api.apply(top_spec(mode="table"), engine=keyless).rows == len(ROWS)
