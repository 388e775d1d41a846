"""δ-presence against a research subset of the table.

The research subset's rows are matched to the table's once, per raw quasi-identifier tuple (a
relation of the evaluator); in SQL each node generalizes and sums them per class, and in memory the
search reads them once beside the frequency table and sums them per class in numpy
(:mod:`sqlanon.methods.generalization.search.fast_presence`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol, cast

from sqlglot import exp

from sqlanon.domain.models.arithmetic import div
from sqlanon.domain.models.base import (
    CheckContext,
    ClassSize,
    ClassTable,
    Monotonicity,
    PrivacyModel,
    Statistic,
    StatisticInputs,
    register,
)
from sqlanon.domain.models.t_closeness import TOLERANCE, require_number
from sqlanon.errors import EngineError, SpecError, did_you_mean
from sqlanon.sql.nodes import (
    alias,
    as_double,
    as_expression,
    col,
    count_star,
    internal,
    lit,
    nullsafe_join,
    table,
)

if TYPE_CHECKING:
    import numpy as np

FILE_SUFFIXES = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}
M = internal("m")
NP = internal("np")
NS = internal("ns")


def is_file(subset: str) -> bool:
    """A subset naming a file (a known suffix or a path separator) rather than a table."""
    return Path(subset).suffix.lower() in FILE_SUFFIXES or "/" in subset or "\\" in subset


def research_subset(models: Iterable[object]) -> SubsetCount | None:
    """The subset statistic of the first δ-presence model: the rows ARX releases and measures."""
    for m in models:
        if isinstance(m, DeltaPresence):
            return SubsetCount(m.subset)
    return None


def require_lasting_subset(models: Iterable[object], *, portable: bool) -> None:
    """Refuse, before anything is read, a research subset file for an output that outlives the
    session (a view, printed or compiled SQL): the file is loaded into a temporary table."""
    if not portable:
        return
    for m in models:
        if isinstance(m, DeltaPresence) and is_file(m.subset):
            raise SpecError(TEMPORARY_SUBSET.format(subset=m.subset), path="delta_presence.subset")


TEMPORARY_SUBSET = (
    "the research subset {subset!r} is a file, loaded into a temporary table of this session only: "
    "a view or printed SQL could not read it. Load the subset as a table of the database and give "
    "its name, or write output mode table or in_place")


class SubsetClassTable(ClassTable, Protocol):
    """A node's classes that also know the research subset's rows matched to each (the in-memory
    search's, for the statistics that ask for ``subset``)."""

    def matched(self, step: str) -> np.ndarray:
        """Per class, the subset rows matched to its rows (int64), read from the plan step ``step``
        (:attr:`SubsetCount.step`)."""


@dataclass(frozen=True)
class SubsetCount(Statistic):
    """How many rows of the class are in the research subset.

    Subset rows are matched to table rows by value on every column of the table, as multisets: a row
    that occurs a times in the table and b times in the subset contributes min(a, b) matches (ARX
    matches research-subset rows to table rows by value too). A subset row without a match is an
    error. Columns are compared after casting the subset's values to the table's column types, so a
    CSV subset (read as text) matches a typed table.
    """

    subset: str

    @property
    def column(self) -> str:
        return internal("subset_" + self._key)

    @property
    def _key(self) -> str:
        return hashlib.sha1(self.subset.encode("utf-8")).hexdigest()[:10]

    matched: ClassVar[str] = M
    """The column of :attr:`step` holding the matched subset rows of a raw QI tuple."""
    memory_inputs: ClassVar[frozenset[str]] = frozenset({"subset"})

    @property
    def step(self) -> str:
        """The plan step holding the matched subset counts per raw QI tuple."""
        return "presence_" + self._key

    def _file_relation(self, inputs: StatisticInputs) -> str:
        """The temporary table a subset file is loaded into (one per evaluator)."""
        return inputs.relation_name("subset_" + self._key)

    def _load_file(self, inputs: StatisticInputs) -> str:
        engine = inputs.engine
        path = Path(self.subset).expanduser()
        if not path.exists():
            raise SpecError(f"research subset file not found: {self.subset}", path="delta_presence.subset")
        if not engine.capabilities.file_registration:
            raise SpecError(f"a subset file loads into the embedded DuckDB; on {engine.name} load it as "
                            "a table of the database and give its name", path="delta_presence.subset")
        name = self._file_relation(inputs)
        kind = FILE_SUFFIXES.get(path.suffix.lower(), "csv")
        options = {"header": True, "all_varchar": True} if kind == "csv" else {}
        engine.register_file(name, str(path), kind=kind, options=options)
        inputs.own_table(name)
        return name

    @staticmethod
    def _types(inputs: StatisticInputs) -> dict[str, object]:
        types: dict[str, object] = dict(inputs.column_types)
        source = inputs.source
        if not types and isinstance(source, exp.Table):
            types = dict(inputs.engine.columns(source.name))
        if not types:
            raise SpecError("δ-presence needs the table's columns to match the research subset",
                            path="delta_presence.subset")
        return dict(types)

    def matched_query(self, inputs: StatisticInputs, relation: str) -> exp.Select:
        """Per raw QI tuple of the table, how many subset rows (read from ``relation``) it matches."""
        types = self._types(inputs)
        cols = list(types)
        dialect = inputs.engine.dialect.sqlglot
        pop = exp.select(*[col(c) for c in cols], alias(count_star(), NP)) \
            .from_(inputs.source.copy()).group_by(*[col(c) for c in cols])
        cast = [alias(exp.cast(col(c), exp.DataType.build(str(types[c]), dialect=dialect)), c)
                for c in cols]
        subq = exp.select(*cast).from_(table(relation))
        sub = exp.select(*[col(c) for c in cols], alias(count_star(), NS)).from_(
            exp.alias_(exp.Subquery(this=subq), internal("s0"), quoted=True)).group_by(
            *[col(c) for c in cols])
        return exp.select(
            *[col(q, "p") for q in inputs.qis],
            alias(exp.Sum(this=exp.Least(this=col(NP, "p"), expressions=[col(NS, "s")])), M),
        ).from_(exp.alias_(exp.Subquery(this=pop), "p", quoted=True)).join(
            exp.alias_(exp.Subquery(this=sub), "s", quoted=True), on=nullsafe_join("p", "s", cols)
        ).group_by(*[col(q, "p") for q in inputs.qis])

    def prepare(self, inputs: StatisticInputs) -> None:
        """Load the subset, match it to the table and keep the matched counts per raw QI tuple."""
        engine = inputs.engine
        types = self._types(inputs)
        name = self._load_file(inputs) if is_file(self.subset) else self.subset
        try:
            sub_cols = [c for c, _ in engine.columns(name)]
        except EngineError:
            raise SpecError(f"no table or view named {self.subset!r} in the database (give a table name "
                            "or the path of a CSV or Parquet file)", path="delta_presence.subset") from None
        missing = [c for c in types if c not in sub_cols]
        if missing:
            hint = did_you_mean(missing[0], sub_cols)
            raise SpecError(f"the research subset {self.subset!r} lacks column(s) "
                            f"{', '.join(map(repr, missing))} of the table; subset rows are matched on "
                            f"every column." + hint, path="delta_presence.subset")
        ref = inputs.add_relation(self.step, self.matched_query(inputs, name))
        total = exp.select(alias(count_star(), "n")).from_(table(name))
        n_subset = int(engine.fetch_one(total)["n"])
        n_matched = int(engine.fetch_one(exp.select(alias(exp.Coalesce(
            this=exp.Sum(this=col(M)), expressions=[lit(0)]), "n")).from_(ref))["n"])
        if n_matched != n_subset:
            raise SpecError(f"{n_subset - n_matched} of the {n_subset} rows of the research subset "
                            f"{self.subset!r} match no row of the table (rows are matched by value on "
                            "every column, each table row at most once)", path="delta_presence.subset")

    def class_query(self, ctx: CheckContext) -> exp.Select:
        """Matched subset rows per class. The matched counts are a step of the statement's own plan:
        the evaluator's materialized relation when checking, a CTE of the output statement (which
        then reads the source and the subset table itself) when writing the release."""
        inputs = ctx.inputs
        if inputs is None:
            raise EngineError("the research subset's matched rows are built in the database: a "
                              "statement checking δ-presence needs a connection")
        if not ctx.plan.has(self.step):
            if is_file(self.subset) and ctx.portable:
                raise SpecError(TEMPORARY_SUBSET.format(subset=self.subset), path="delta_presence.subset")
            relation = self._file_relation(inputs) if is_file(self.subset) else self.subset
            ctx.plan.add(self.step, self.matched_query(inputs, relation))
        generalizer = ctx.generalizer or inputs.generalizer
        generalized = generalizer.select(ctx.plan.ref(self.step), ctx.levels, keep=[M])
        return exp.select(*[col(q) for q in ctx.qis], alias(exp.Sum(this=col(M)), self.column)).from_(
            exp.alias_(exp.Subquery(this=generalized), internal("p0"), quoted=True)).group_by(
            *[col(q) for q in ctx.qis])

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        """Per class, the matched subset rows as doubles; NaN (the SQL form's NULL) for none."""
        import numpy as np

        matched = cast("SubsetClassTable", classes).matched(self.step).astype(np.float64)
        matched[matched == 0] = np.nan
        return matched


@register
@dataclass(frozen=True)
class DeltaPresence(PrivacyModel):
    """For every class of the table, the share of its rows in the research subset is in [δmin, δmax].

    Nergiz ME, Atzori M, Clifton C. Hiding the presence of individuals from shared databases.
    SIGMOD 2007.

    The table is the population; ``subset`` names the research subset (a table of the same database,
    or a CSV/Parquet file loaded into the embedded DuckDB; a value with a file suffix or a path
    separator is a file, a relative path is read from the working directory; CSV values are read as
    text and cast to the table's column types). Every class of the population is checked,
    including classes without subset rows (share 0), as the definition asks for every individual of
    the population. (ARX releases the subset only and checks the classes that hold subset rows.)

    Monotone under generalization: [δmin, δmax] is an interval, and a merged class's share is the
    size-weighted mean of its parts' shares. Not under suppression: a failing class merged into a kept
    one can move its share out of the interval.

    >>> str(DeltaPresence("subset.csv", 0.0, 0.5))
    '(0,0.5)-presence of subset.csv'
    """

    subset: str
    delta_min: float
    delta_max: float
    name: ClassVar[str] = "delta_presence"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=False)

    def __post_init__(self) -> None:
        if not isinstance(self.subset, str) or not self.subset:
            raise SpecError(f"subset must be a table name or a file path, got {self.subset!r}",
                            path="subset")
        require_number(self.delta_min, "delta_min", 0.0, 1.0)
        require_number(self.delta_max, "delta_max", 0.0, 1.0)
        if self.delta_min > self.delta_max:
            raise SpecError(f"delta_min ({self.delta_min}) must not exceed delta_max ({self.delta_max})",
                            path="delta_min")

    def __str__(self) -> str:
        return f"({self.delta_min:g},{self.delta_max:g})-presence of {self.subset}"

    def statistics(self) -> tuple[Statistic, ...]:
        return (ClassSize(), SubsetCount(self.subset))

    def share(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        count = exp.Coalesce(this=s[SubsetCount(self.subset)], expressions=[lit(0)])
        return div(as_double(count), s[ClassSize()])

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        share = self.share(s)
        return as_expression(exp.and_(exp.GTE(this=share, expression=lit(float(self.delta_min) - TOLERANCE)),
                        exp.LTE(this=share.copy(), expression=lit(float(self.delta_max) + TOLERANCE))))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        """:meth:`satisfied` in numpy: the same share (a double divided by the size) and tolerance."""
        import numpy as np

        share = np.nan_to_num(s[SubsetCount(self.subset)], nan=0.0) / s[ClassSize()]
        return (share >= float(self.delta_min) - TOLERANCE) & (share <= float(self.delta_max) + TOLERANCE)
