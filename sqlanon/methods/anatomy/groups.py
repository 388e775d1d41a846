"""One Anatomy run on an opened source: the bucket sizes (one GROUP BY), the groups' structure
(:mod:`.anatomize`), the key of the rows' order, and the two relations' SELECTs for any target."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.compile.hash_text import parse_types
from sqlanon.compile.released import OutputQuery
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.errors import SpecError
from sqlanon.methods.anatomy import assign
from sqlanon.methods.anatomy.anatomize import NotEligible, Structure, anatomize
from sqlanon.methods.anatomy.settings import COUNT_COLUMN, SENSITIVE_SUFFIX, AnatomySettings
from sqlanon.methods.base import Plan, Sink
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.rng import ReproducibleNoiseWarning, make_rng
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import col, table


@dataclass(frozen=True)
class Grouping:
    settings: AnatomySettings
    structure: Structure
    buckets: tuple[str, ...]
    """Each bucket's name (:func:`~.assign.bucket_key`), in the order the structure numbers them."""
    key: str
    relation: exp.Expression
    columns: tuple[str, ...]
    types: dict[str, exp.DataType]
    kept: str | None = None
    """A temporary table of the assigned rows, read by both relations instead of assigning twice."""

    def assigned(self, target: DialectProfile) -> exp.Select:
        s = self.settings
        if self.kept is not None:
            return exp.select(*[col(c) for c in self.columns], col(assign.GROUP)).from_(table(self.kept))
        return assign.assigned_query(self.relation, self.columns, s.sensitive, self.types, self.key,
                                     self.structure.runs(), self.buckets, target)

    def quasi_identifier_table(self, spec: Spec, target: DialectProfile) -> OutputQuery:
        out = OutputQuery(exp.select(), types=self.types)
        released = [out.released(spec, c, col(c), target) for c in self.columns
                    if c != self.settings.sensitive]
        out.query = assign.qit_query(self.assigned(target), [e for e in released if e is not None],
                                     self.settings.group_column)
        return out

    def sensitive_table(self, target: DialectProfile) -> OutputQuery:
        s = self.settings
        return OutputQuery(assign.st_query(self.assigned(target), s.sensitive, s.group_column, COUNT_COLUMN),
                           types=self.types)


@contextmanager
def assigned_once(grouping: Grouping, ds: Dataset) -> Iterator[Grouping]:
    """The grouping reading its rows' groups from a temporary table computed once (for outputs
    written now; a view or printed SQL assigns the rows itself)."""
    name = staging_name(new_token(), "anatomy")
    with ds.engine.purpose("assign the rows to their groups"):
        ds.engine.create_table_as(name, grouping.assigned(ds.engine.dialect), temporary=True)
    try:
        yield dataclasses.replace(grouping, kept=name)
    finally:
        ds.engine.drop(name)


def _shown(bucket: str) -> str:
    return "NULL" if bucket == "n" else repr(bucket[1:])


def group_rows(spec: Spec, ds: Dataset) -> Grouping:
    """Count the buckets and compute the groups.

    Raises:
        SpecError: a sensitive value is held by more than n/l rows (naming it and its count), or the
            group column's name is a column of the source.
    """
    s: AnatomySettings = spec.settings
    columns = tuple(ds.column_names)
    if s.group_column in columns:
        raise SpecError(f"the source has a column {s.group_column!r}; choose another name for the group "
                        "column", path="transformation.group_column", source=spec.path)
    types = parse_types(ds.columns, ds.engine.dialect.sqlglot)
    with ds.engine.purpose("count the sensitive values"):
        _, rows = ds.engine.fetch(assign.buckets_query(ds.relation, s.sensitive, types.get(s.sensitive),
                                                       ds.engine.dialect))
    counted = sorted((str(name), int(n)) for name, n in rows)
    names = tuple(name for name, _ in counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        rng = make_rng(s.seed)
    if s.seed is not None:
        warnings.warn("the groups are drawn from a fixed seed: whoever knows it can tell which row "
                      "went to which group; omit transformation.seed for a cryptographically seeded "
                      "order", ReproducibleNoiseWarning, stacklevel=2)
    key = rng.bytes(16).hex()
    try:
        structure = anatomize([n for _, n in counted], s.l, rng)
    except NotEligible as e:
        raise SpecError(f"value {_shown(names[e.bucket])} of {s.sensitive!r} is held by {e.size} of "
                        f"{e.rows} rows, more than n/l = {e.rows / s.l:.6g}: no grouping of these rows "
                        f"has {s.l} distinct values in every group (lower l to at most {e.rows // e.size},"
                        " or remove rows of that value)", path="transformation.l", source=spec.path) \
            from None
    return Grouping(s, structure, names, key, ds.relation, columns, types)


def sensitive_sink(plan: Plan, ds: Dataset, sink: Sink) -> Sink:
    """The sink of the sensitive table, checked before anything is scanned: its name
    (``transformation.sensitive_table``, default ``<output name>__sensitive``) differs from the
    output's."""
    spec = plan.spec
    s: AnatomySettings = spec.settings
    out = spec.output
    output = ds.name if out.mode == "in_place" else (out.name or f"{ds.name}_anon")
    name = s.sensitive_table or output + SENSITIVE_SUFFIX
    dialect = ds.engine.dialect
    if dialect.fold(name) == dialect.fold(output):
        raise SpecError(f"the sensitive table {name!r} would be the output {output!r} itself; choose "
                        "another transformation.sensitive_table", path="transformation.sensitive_table",
                        source=spec.path)
    beside = sink.beside(name)
    try:
        beside.check(ds)
    except SpecError as e:
        key = "transformation.sensitive_table" if e.path == "output.name" else e.path
        raise SpecError(f"the sensitive table: {e.rule}", path=key, source=spec.path) from None
    return beside
