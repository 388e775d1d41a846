"""Check a transformation (a node: one level per quasi-identifier) on an engine.

The source is read once into a frequency table; every node is then checked on that table. The
:class:`Evaluator` ties together the parts that do the work: :class:`Temporaries` (the relations it
creates and drops), :class:`HierarchyTables` (look-ups, leaf codes, coverage), :class:`SourceScans`
(the frequency table or one node's scan) and :func:`check_node` (one node's verdict in SQL). It is
also what the privacy models' statistics build their own relations from
(:class:`~sqlanon.domain.models.base.StatisticInputs`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from sqlanon.compile import checks
from sqlanon.compile.generalize import Generalizer
from sqlanon.compile.persons import Persons, grouped, persons_query
from sqlanon.compile.plan import Plan
from sqlanon.domain.hierarchy.base import Hierarchy, HierarchyTable
from sqlanon.domain.models.base import ClassSize, PrivacyModel
from sqlanon.engines.base import Engine
from sqlanon.errors import InternalError
from sqlanon.methods.generalization.hierarchy_tables import HierarchyTables
from sqlanon.methods.generalization.node_check import NodeCheck, check_node, suppression_budget
from sqlanon.methods.generalization.scans import ROW_KEYS, SOURCE, SourceScans
from sqlanon.methods.generalization.temporaries import Temporaries
from sqlanon.sql.nodes import col

__all__ = ["Evaluator", "NodeCheck", "Problem", "suppression_budget"]


@dataclass
class Problem:
    """Everything a check needs, resolved against the data: QIs in data column order."""

    engine: Engine
    source: exp.Expression
    qis: list[str]
    hierarchies: dict[str, Hierarchy]
    sensitive: list[str]
    models: list[PrivacyModel]
    value_order: dict[str, list[Any]] = field(default_factory=dict)
    sensitive_hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    column_types: dict[str, str] = field(default_factory=dict)
    """SQL types of the source's columns (empty when unknown)."""
    attribute_types: dict[str, str] = field(default_factory=dict)
    """Types declared in the spec (``type:``), by attribute."""
    persons: Persons | None = None
    """The privacy unit: ``source`` is then the table of rows, and the checks read its person-level
    records (:mod:`sqlanon.compile.persons`), one scan that the evaluator materializes."""
    check_persons: Callable[[exp.Expression | None], None] | None = None
    """Refuses NULL persons and ``constant`` QIs that vary, given the materialized records when they
    hold the checks' flags (:func:`~sqlanon.compile.persons.grouped`), else None (it reads the rows)."""

    def __post_init__(self) -> None:
        if self.persons is not None:
            self.persons = one_class_persons(self.persons, self.qis, self.hierarchies)

    @property
    def fit_columns(self) -> list[str]:
        """The person-level records' ``one_class`` fit levels (:meth:`Persons.fit_level`)."""
        return [] if self.persons is None else [self.persons.fit_column(a) for a in self.persons.one_class]

    def fits(self, levels: Mapping[str, int]) -> exp.Expression | None:
        """Whether a record's person fits the node (None: every person does)."""
        return None if self.persons is None else self.persons.fits(levels)

    @property
    def weighted(self) -> bool:
        """The person-level records carry a weight (a person may have several sensitive values)."""
        return self.persons is not None and bool(self.check_sensitive)

    @property
    def check_sensitive(self) -> list[str]:
        """The sensitive columns the checks read: the spec's and the models'; with a privacy unit the
        models' alone (a person's values are counted only where a model reads them, so that a table
        without them keeps one record a person and the in-memory search)."""
        cols = list(self.sensitive) if self.persons is None else []
        for m in self.models:
            cols += [a for a in m.sensitive_attributes() if a not in cols and a not in self.qis]
        return cols

    def persons_source(self) -> exp.Select:
        """The person-level records the checks count (with a privacy unit)."""
        if self.persons is None:
            raise InternalError("persons_source needs a privacy unit")
        return persons_query(self.source, self.qis, self.check_sensitive, self.persons)


def one_class_persons(persons: Persons, qis: Sequence[str], hierarchies: Mapping[str, Hierarchy]) -> Persons:
    """``persons`` with the hierarchies of its ``one_class`` quasi-identifiers, which must generalize
    row by row (an expression, not a lookup table, window or aggregate).

    Raises:
        SpecError: naming the attribute whose hierarchy cannot.
    """
    from dataclasses import replace

    from sqlanon.domain.hierarchy.table import TableHierarchy
    from sqlanon.errors import SpecError

    ruled = [a for a in qis if persons.rules.get(a) == "one_class"]
    for a in ruled:
        h = hierarchies[a]
        built = [h.expression(col(a), level) for level in range(1, h.height + 1)] \
            if not (isinstance(h, TableHierarchy) and h.needs_lookup()) else None
        if built is None or any(e.find(exp.Window, exp.AggFunc) is not None for e in built):
            raise SpecError(f"rule one_class compares a person's generalized values of {a!r} in one "
                            "GROUP BY; its hierarchy is not computed row by row (a large table or a "
                            "data-dependent builder): use rule min, max or first",
                            path=f"privacy_unit.attributes.{a}")
    return replace(persons, hierarchies={a: hierarchies[a] for a in ruled}) if ruled else persons


class Evaluator:
    """Checks nodes of one problem on one engine, reading the source once."""

    def __init__(self, problem: Problem, *, scan_levels: Mapping[str, int] | None = None,
                 persons: exp.Expression | None = None, scan_labels: bool = True,
                 rows: int | None = None, covered: bool = False, row_keys: bool = False) -> None:
        """Read the source once.

        Without ``scan_levels`` the scan is the frequency table of the raw quasi-identifiers and
        sensitive attributes, from which any node can be checked in SQL; it is built when first
        needed (:attr:`freq`), so a search that checks nodes in memory, which reads the source once
        on its own, never builds it. With ``scan_levels`` the scan generalizes while it reads
        (hierarchy look-ups return integer codes, decoded on the small result), which is cheaper
        when one node is checked; the raw frequency table is again built only if something asks.
        ``persons``: the person-level records another open evaluator of the problem built and checked.
        ``scan_labels``: False when only the node's counts are read (its verdict's figures, not its
        classes' labels), and every statistic is the class size: the scan then groups by class keys
        (:meth:`SourceScans.scan_node`); with no sensitive attribute either, it writes only the
        classes' counts (``class_keys`` False), not their keys.
        ``rows`` and ``covered``: what a search that read the source already knows, so the scan does
        not ask again: its row count, and that every value of the quasi-identifiers is a leaf of its
        hierarchy.
        ``row_keys``: an output will be written here from the checked classes. The scan on class keys
        then also lists each class's row keys, when the source is a table whose rows the engine
        names by key (:meth:`~sqlanon.engines.base.Engine.has_row_keys`) and the checks read one row
        a class (no sensitive attribute), and the output picks the rows of kept classes by key
        (:attr:`row_keyed`); else the scan groups by labels, which the output joins on.
        """
        self.p = problem
        self.engine = problem.engine
        self.temporaries = Temporaries(problem.engine)
        self.counted: exp.Expression = problem.source
        """What the checks count: the source, or its person-level records (materialized once)."""
        if persons is not None:
            self.counted = persons
        elif problem.persons is not None:
            self.counted = self.temporaries.lasting("persons", problem.persons_source())
            if problem.check_persons is not None:
                try:
                    problem.check_persons(self.counted if grouped(problem.check_sensitive, problem.persons)
                                          else None)
                except BaseException:
                    self.close()
                    raise
        self.hierarchies = HierarchyTables(problem.qis, problem.hierarchies, self.temporaries,
                                           lambda: self.freq, source=problem.source,
                                           raw_built=lambda: self.scans.raw is not None)
        self.scans = SourceScans(self.counted, problem.qis, self._sensitive_columns(), self.hierarchies,
                                 self.temporaries, weighted=problem.weighted, extra=problem.fit_columns,
                                 covered=covered)
        self._rows: int | None = rows
        self._checked_scan = False
        self.scan_levels: dict[str, int] | None = None
        if scan_levels is not None and not problem.fit_columns:  # persons that do not fit: from freq
            levels = self.hierarchies.checked_levels(scan_levels)
            self.scan_levels = levels if self.hierarchies.row_wise(levels) else None
        try:
            if self.scan_levels is not None:
                labels = scan_labels or not all(isinstance(s, ClassSize)
                                                for s in checks.statistics_of(problem.models))
                keyed = row_keys and not labels and not self.scans.sensitive and problem.persons is None \
                    and isinstance(problem.source, exp.Table) and bool(problem.column_types) \
                    and self.engine.has_row_keys(problem.source, list(problem.column_types))
                labels = labels or (row_keys and not keyed)  # the output joins the classes on labels
                # nothing reads a class but its size (and rows): the scan need not write its keys
                counts_only = not labels and not self.scans.sensitive and not problem.weighted
                self.scans.scan_node(self.scan_levels, labels=labels,
                                     row_key=self.engine.row_key(SOURCE) if keyed else None,
                                     class_keys=not counts_only)
            for s in checks.statistics_of(problem.models):
                s.prepare(self)
        except BaseException:
            self.close()
            raise

    @property
    def row_keyed(self) -> bool:
        """The checked node's classes list their rows' keys (:data:`ROW_KEYS`) while it is checked."""
        return self.scans.row_keyed and self._checked_scan

    def _sensitive_columns(self) -> list[str]:
        return self.p.check_sensitive

    # -- the source, read once --------------------------------------------------------------------
    @property
    def plan(self) -> Plan:
        return self.temporaries.plan

    @property
    def freq(self) -> exp.Table:
        """The frequency table of the raw QIs and sensitive attributes (built on first use)."""
        return self.scans.freq

    @property
    def rows(self) -> int:
        """The number of rows of the source."""
        if self._rows is None:
            rows_of = self.scans.node_scan if self.scans.node_scan is not None else self.freq
            self._rows = int(self.engine.fetch_one(exp.select(exp.alias_(
                exp.Sum(this=col(checks.N)), "n", quoted=True)).from_(rows_of.copy()))["n"] or 0)
        return self._rows

    # -- hierarchies ------------------------------------------------------------------------------
    @property
    def generalizer(self) -> Generalizer:
        return self.hierarchies.generalizer

    def single_labels(self, levels: Mapping[str, int]) -> dict[str, str]:
        """:meth:`HierarchyTables.single_labels` when every value is known to be a leaf (a search
        read them all), else none."""
        return self.hierarchies.single_labels(levels) if self.scans.covered else {}

    def leaf_codes(self, attribute: str) -> tuple[exp.Expression, list[str]]:
        """See :meth:`HierarchyTables.leaf_codes`."""
        return self.hierarchies.leaf_codes(attribute)

    def hierarchy_table(self, attribute: str) -> HierarchyTable:
        """The hierarchy as rows: the file for table hierarchies, else built over the data's values."""
        return self.hierarchies.table(attribute)

    def validate_coverage(self, relation: exp.Expression, attributes: Sequence[str]) -> None:
        """Every value of ``attributes`` in ``relation`` must be a leaf of its table hierarchy."""
        self.hierarchies.validate_coverage(relation, attributes)

    # -- what statistics build their relations from (StatisticInputs) --------------------------------
    @property
    def source(self) -> exp.Expression:
        return self.p.source

    @property
    def qis(self) -> list[str]:
        return self.p.qis

    @property
    def value_order(self) -> Mapping[str, list[Any]]:
        return self.p.value_order

    @property
    def sensitive_hierarchies(self) -> Mapping[str, Hierarchy]:
        return self.p.sensitive_hierarchies

    @property
    def column_types(self) -> Mapping[str, str]:
        return self.p.column_types

    @property
    def attribute_types(self) -> Mapping[str, str]:
        return self.p.attribute_types

    @property
    def sensitive_source(self) -> exp.Table:
        """A relation holding the raw sensitive attributes with the row count ``__sa_n``."""
        return self.scans.node_scan if self.scans.node_scan is not None else self.freq

    def relation_name(self, name: str) -> str:
        return self.temporaries.name(name)

    def add_relation(self, name: str, query: exp.Select) -> exp.Table:
        """Materialize a relation that lives as long as the evaluator (a statistic's own input)."""
        return self.temporaries.lasting(name, query)

    def own_table(self, name: str) -> None:
        """Drop a table created outside the plan (a loaded file) when the evaluator closes."""
        self.temporaries.own(name)

    # -- checking ---------------------------------------------------------------------------------
    def check(self, levels: Mapping[str, int], suppression_limit: float = 0.0) -> NodeCheck:
        """Check a node; the per-class verdict stays available until the next check."""
        self.temporaries.drop_node()
        levels = self.hierarchies.checked_levels(levels)
        grouped = False
        scan = self.scans.node_scan
        self._checked_scan = scan is not None and levels == self.scan_levels
        if scan is not None and self._checked_scan:
            gen = scan  # the scan already generalized to these levels
            grouped = not self.scans.sensitive  # grouped on the generalized QIs alone: one row a class
        else:
            gen = self.temporaries.node("gen", checks.generalized_query(
                self.freq, self.generalizer, levels, self.scans.sensitive, weighted=self.p.weighted,
                where=self.p.fits(levels)))
        fits = self.p.fits(levels)
        unfit = 0 if fits is None else \
            int(self.engine.fetch_one(checks.unfit_query(self.freq, fits))[checks.UNFIT] or 0)
        # the node's scan holds every row: its classes count the table, which need not be asked
        rows = self._rows if self._checked_scan and fits is None else self.rows
        node = check_node(self, self.temporaries, self.p.models, gen, levels, rows, suppression_limit,
                          grouped=grouped, weighted=self.p.weighted, unfit=unfit,
                          carry=[ROW_KEYS] if self.row_keyed else [],
                          class_keys=not self._checked_scan or self.scans.class_keys)
        if self._rows is None:
            self._rows = node.rows
        return node

    def drop_node_temps(self) -> None:
        self.temporaries.drop_node()

    def close(self) -> None:
        self.temporaries.close()

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
