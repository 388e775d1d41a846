"""The evaluator's parts: temporary relations and their lifetimes, and what statistics receive."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models.base import (
    CheckContext,
    ClassSize,
    Monotonicity,
    PrivacyModel,
    Statistic,
    StatisticInputs,
)
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.temporaries import Temporaries
from sqlanon.sql.nodes import alias, col, lit, table


def temporary_tables(engine) -> set[str]:
    return {r[0] for r in engine.con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}


def test_node_relations_go_at_the_next_node_and_lasting_ones_at_close(duck):
    temps = Temporaries(duck)
    kept = temps.lasting("kept", exp.select(alias(lit(1), "x")))
    rows = temps.rows("codes", [("leaf", "varchar"), ("code", "int")], [("a", 0), ("b", 1)])
    node = temps.node("gen", exp.select(alias(lit(2), "y")))
    assert {kept.name, rows.name, node.name} <= temporary_tables(duck)
    assert duck.con.execute(f'SELECT count(*) FROM "{rows.name}"').fetchone() == (2,)
    temps.drop_node()
    assert node.name not in temporary_tables(duck)
    assert {kept.name, rows.name} <= temporary_tables(duck)
    assert [name for name, _ in temps.plan.steps] == [kept.name]  # the node's step is forgotten
    temps.close()
    assert not {kept.name, rows.name} & temporary_tables(duck)


@dataclass(frozen=True)
class SeenInputs(Statistic):
    """A statistic that records what it was prepared with and builds a relation of its own."""

    def prepare(self, inputs: StatisticInputs) -> None:
        SEEN.append((dict(inputs.column_types), dict(inputs.attribute_types), list(inputs.qis)))
        inputs.add_relation("seen", exp.select(col("q")).distinct().from_(inputs.source.copy()))
        SEEN.append(inputs.relation_name("seen"))

    def class_query(self, ctx: CheckContext) -> exp.Select:
        return exp.select(*[col(q) for q in ctx.qis], alias(lit(1), self.column)).from_(ctx.gen.copy()) \
            .group_by(*[col(q) for q in ctx.qis])


SEEN: list[object] = []


@dataclass(frozen=True)
class Recording(PrivacyModel):
    name = "recording"
    monotonicity = Monotonicity(generalization=True, suppression=True)

    def statistics(self) -> tuple[Statistic, ...]:
        return (ClassSize(), SeenInputs())

    def satisfied(self, s):  # type: ignore[no-untyped-def]
        return exp.true()


def test_statistics_are_prepared_with_the_problems_typed_inputs(duck):
    SEEN.clear()
    duck.con.execute("CREATE TABLE r (q VARCHAR)")
    duck.con.execute("INSERT INTO r VALUES ('a'), ('b')")
    problem = Problem(duck, table("r"), ["q"], {"q": TableHierarchy([["a", "*"], ["b", "*"]])}, [],
                      [Recording()], column_types={"q": "VARCHAR"}, attribute_types={"q": "string"})
    with Evaluator(problem) as ev:
        assert SEEN[0] == ({"q": "VARCHAR"}, {"q": "string"}, ["q"])
        relation = SEEN[1]
        assert relation in temporary_tables(duck)
        assert ev.check({"q": 0}).classes == 2
    assert relation not in temporary_tables(duck)


def test_rule_based_hierarchies_over_the_source_are_read_with_one_query(duck, caplog):
    """The search builds every rule-based hierarchy (age's intervals, zip's mask) over the source's
    distinct values with one query, not one scan of the source each."""
    import logging

    from sqlanon import api
    from sqlanon.spec.load import spec_from_dict
    from tests.report import people

    people.create(duck, rows=300)
    spec = spec_from_dict(people.generalization(search="optimal", suppression_limit=0.05))
    with caplog.at_level(logging.DEBUG, logger="sqlanon"):
        report = api.anonymize(spec, engine=duck, dry_run=True)
    reads = [r.getMessage() for r in caplog.records
             if r.getMessage().startswith("duckdb: SELECT DISTINCT") and 'FROM "people"' in r.getMessage()]
    assert report.search["evaluated_in"] == "memory"
    assert len(reads) == 1 and '"age"' in reads[0] and '"zip"' in reads[0]
