"""Compiling a spec's output without a connection to the database (docs/outputs.md, "Without a
connection").

The output statement decides each class's verdict and the suppression limit itself
(:func:`~sqlanon.methods.generalization.output_query.output_query`), so for a fixed transformation it
needs nothing from the data: the source's name, the declared attributes and their ``type:`` are enough.
What a connection would have verified (the columns, their types, hierarchy coverage, numbers that are
numbers) is listed in the script's header comment and returned as notes, so whoever runs the script
knows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlanon.compile.checks import statistics_of
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.domain.models.distance_statistics import OrderedDistance
from sqlanon.domain.models.numeric_sensitive import ValueRange, VarianceRatio
from sqlanon.domain.models.ordering import NUMERIC_TYPES
from sqlanon.domain.models.presence import SubsetCount
from sqlanon.errors import HierarchyError, SpecError, UnsupportedError
from sqlanon.methods.dataset import check_source_names
from sqlanon.methods.generalization.evaluator import Problem
from sqlanon.methods.generalization.output_query import output_query
from sqlanon.methods.generalization.problem import qi_hierarchies
from sqlanon.methods.persons import declared_persons
from sqlanon.outputs import writer
from sqlanon.outputs.preflight import check_name, check_output_relation, output_name
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import profile
from sqlanon.sql.nodes import table


@dataclass
class CompiledSQL:
    """The SQL of a spec's output for a dialect, and what could not be verified while compiling."""

    sql: str
    unverified: list[str] = field(default_factory=list)
    """Empty when compiled against the database; else what the database will decide at run time."""


def compile_offline(spec: Spec, dialect: str) -> CompiledSQL:
    """The spec's output script for ``dialect``, built from the spec alone.

    Raises:
        SpecError: the transformation is a search (no fixed levels), a name is longer than ``dialect``
            keeps, ``output.name`` is empty, internal or the source itself, the mode is ``in_place``, a level
            is above its hierarchy's height, or an attribute lacks the ``type:`` or ``order:`` the
            SQL needs.
        UnsupportedError: the method is not generalization, or a privacy model needs the database
            (δ-presence matches its research subset to the table's rows).
    """
    target = profile(dialect)
    check_source_names(spec, target)
    if spec.output.mode in ("table", "view") and spec.source.table:
        check_output_relation(spec, output_name(spec, spec.source.table), spec.source.table, target,
                              spec.output.mode)
    elif spec.output.name is not None:
        check_name(spec, spec.output.name, target)
    if spec.output.mode == "in_place":
        raise SpecError("in_place needs a connection: the columns the spec does not declare are unknown "
                        "without one and would be lost from the replaced table; compile mode table or "
                        "sql (a new relation), or compile with a connection (--database)",
                        path="output.mode", source=spec.path)
    problem, levels = offline_problem(spec)
    oq = output_query(spec, list(spec.attributes), problem, levels, spec.transformation.suppression_limit,
                      target, enforce_limit=spec.output.mode != "view")
    script = writer.compile_script(spec, oq, target, source_name=spec.source.relation_name)
    notes = unverified(spec, problem, levels)
    return CompiledSQL(header(spec, target.name, notes) + script, notes)


def offline_problem(spec: Spec) -> tuple[Problem, dict[str, int]]:
    """The check problem from the spec alone (QIs in spec order), and the levels to compile."""
    t = spec.transformation
    if not spec.method.compiles_offline:
        raise UnsupportedError(f"transformation.method {t.method!r} reads the data to compute its rows; "
                               "compile it with a connection (--database)")
    qis = spec.quasi_identifiers
    hierarchies = {a: spec.attributes[a].hierarchy for a in qis}
    levels = {a: int(t.levels.get(a, 0)) for a in qis}
    for a, level in levels.items():
        h = hierarchies[a]
        if level and h is None:
            raise SpecError(f"level {level} needs a hierarchy", path=f"attributes.{a}.hierarchy",
                            source=spec.path)
        if h is not None and level > h.height:
            raise HierarchyError(f"level {level} is above the hierarchy's height {h.height}",
                                 path=f"transformation.levels.{a}", source=spec.path)
    sensitive = spec.sensitive
    declared = {a: x.type for a, x in spec.attributes.items() if x.type}
    problem = Problem(
        engine=None,  # type: ignore[arg-type]  # nothing here runs a query
        source=table(spec.source.relation_name, spec.source.schema), qis=list(qis),
        hierarchies=qi_hierarchies(spec, list(qis)), sensitive=list(sensitive), models=list(spec.privacy),
        value_order={a: list(x.order) for a in sensitive if (x := spec.attributes[a]).order},
        sensitive_hierarchies={a: x.hierarchy for a in sensitive if (x := spec.attributes[a]).hierarchy},
        # the column's SQL type is unknown: every value is cast as its declared type says (as for
        # a text column), which is right whatever the column really is
        column_types={a: "VARCHAR" for a in declared}, attribute_types=declared,
        persons=declared_persons(spec, list(qis)))
    refuse_database_statistics(spec, problem)
    return problem, levels


def refuse_database_statistics(spec: Spec, problem: Problem) -> None:
    """Statistics that cannot be decided from the spec and the SQL alone are refused with the reason."""
    for s in statistics_of(problem.models):
        if isinstance(s, SubsetCount):
            raise UnsupportedError("delta_presence matches the research subset to the table's rows in "
                                   "the database before the classes are checked; compile it with a "
                                   "connection (--database)")
        if isinstance(s, OrderedDistance) and s.attribute not in problem.value_order \
                and spec.attributes[s.attribute].type not in (*NUMERIC_TYPES, "date"):
            raise SpecError("the ordered distance needs the order of the values, and without a connection "
                            "the column's type is unknown: declare `type: integer`, `decimal` or `date`, "
                            "or list the values in `order:`", path=f"attributes.{s.attribute}.type",
                            source=spec.path)


def unverified(spec: Spec, problem: Problem, levels: dict[str, int]) -> list[str]:
    """What a connection would have checked before writing, one sentence each."""
    notes = ["the table and the declared columns exist (the database reports a missing one); only the "
             "declared attributes are written, in the spec's order: columns the spec does not declare "
             "are left out"]
    typed = ", ".join(f"{a}: {x.type}" for a, x in spec.attributes.items() if x.type)
    notes.append(f"column types: values are read as their declared `type:` ({typed})" if typed else
                 "column types: none declared; values are compared, and generalized by the hierarchies' "
                 "own casts, as the database stores them")
    tables = [a for a in problem.qis
              if levels[a] and isinstance(problem.hierarchies[a], TableHierarchy)]
    tables += [a for a, h in problem.sensitive_hierarchies.items() if isinstance(h, TableHierarchy)]
    if tables:
        notes.append("hierarchy coverage of " + ", ".join(dict.fromkeys(tables)) + ": a value its "
                     "hierarchy does not list is generalized to NULL (a class of its own) instead of "
                     "being refused")
    numbers = [s.attribute for s in statistics_of(problem.models)
               if isinstance(s, (ValueRange, VarianceRatio))
               or (isinstance(s, OrderedDistance) and s.attribute not in problem.value_order
                   and spec.attributes[s.attribute].type in NUMERIC_TYPES)]
    if numbers:
        notes.append("that " + ", ".join(dict.fromkeys(numbers)) + " holds only numbers: another value "
                     "makes the statement fail at run time")
    return notes


def header(spec: Spec, dialect: str, notes: list[str]) -> str:
    """The comment that opens an offline script: what it decides itself and what it could not verify."""
    limit = spec.transformation.suppression_limit
    lines = [f"-- sqlanon: compiled for {dialect} without a connection to the database."]
    if spec.output.mode == "view":
        lines.append("-- The view decides each class's verdict per query; the suppression limit is not "
                     "enforced (docs/outputs.md).")
    else:
        lines.append("-- The statement decides each class's verdict itself and fails with 'sqlanon: not "
                     f"anonymous' when the rows of failing classes exceed the suppression limit {limit:g}.")
    lines.append("-- Not verified without a connection:")
    lines += [f"--   * {_comment(n)}" for n in notes]
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """``text`` on one comment line (attribute names are user text: no line breaks)."""
    return " ".join(text.split())
