"""``check --against PREVIOUS``: the release the spec would publish now, intersected with a previous
release (:mod:`.intersection`), nothing written.

The spec's method runs as for ``apply``, but its release goes to :class:`AgainstSink` instead of the
writer: the sink materializes the released rows in a temporary table, with the person key
(``publishing.key``), and compares them with the previous release. A method whose published rows
leave the key out (m-invariance, whose counterfeits must look like persons) gives the sink its
rows with the key through :class:`Linked`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from sqlglot import exp

from sqlanon.engines.staging import new_token, staging_name
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.base import Plan, Release, Sink, TableWriter
from sqlanon.methods.republication.intersection import (
    LinkedRelease,
    flagged_query,
    pairs_query,
    summary_query,
)
from sqlanon.methods.republication.result import IntersectionReport
from sqlanon.sql.nodes import table

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine
    from sqlanon.methods.dataset import Dataset
    from sqlanon.spec.schema import Spec
    from sqlanon.sql.dialects import DialectProfile

SHOWN = 20
"""The flagged class pairs named in the report (all are counted)."""


@runtime_checkable
class Linked(Protocol):
    """A release that can give its rows with the person key, for the check only."""

    def linked(self, target: DialectProfile) -> tuple[exp.Select, tuple[str, ...]]:
        """The released rows with the key column, and the columns naming a row's class."""


def key_of(spec: Spec) -> str:
    """``publishing.key``, else the privacy unit's column."""
    if spec.publishing is not None and spec.publishing.key is not None:
        return spec.publishing.key
    if spec.privacy_unit is not None:
        return spec.privacy_unit.column
    raise SpecError("check --against links the persons of two releases by a key: set "
                    "`publishing: {key: COLUMN}` (or `privacy_unit`) to the column naming a person",
                    path="publishing.key", source=spec.path)


def thresholds(spec: Spec) -> tuple[int | None, int, str]:
    """``k`` (the spec's k-anonymity, if any), ``l`` and the sensitive attribute checked."""
    from sqlanon.domain.models.k_anonymity import KAnonymity
    from sqlanon.domain.models.l_diversity import LDiversity

    k = max((int(m.k) for m in spec.privacy if isinstance(m, KAnonymity)), default=None)
    diverse = [m for m in spec.privacy if isinstance(m, LDiversity)]
    l = max([2, *(int(m.l) for m in diverse)])  # noqa: E741 -- the paper's l
    if spec.publishing is not None and spec.publishing.m is not None:
        l = max(l, spec.publishing.m)  # noqa: E741
    sensitive = diverse[0].attribute if diverse else (spec.sensitive[0] if spec.sensitive else None)
    if sensitive is None:
        raise SpecError("check --against compares the sensitive values two releases give a person: "
                        "declare a sensitive attribute", path="attributes", source=spec.path)
    return k, l, sensitive


def class_columns(spec: Spec, columns: list[str]) -> tuple[str, ...]:
    """The columns of a release that name its classes: the released quasi-identifiers, and the
    group column when there is one."""
    group = spec.publishing.group_column if spec.publishing is not None else "group_id"
    return tuple(c for c in columns if c in spec.quasi_identifiers or c == group)


class AgainstSink:
    """A :class:`~sqlanon.methods.base.Sink` that checks the release against a previous one."""

    def __init__(self, spec: Spec, previous: str, inner: Sink,
                 previous_rows: Any = None) -> None:
        self.spec = spec
        self.previous = previous
        self.inner = inner
        self.previous_rows = previous_rows
        """``f(ds) -> LinkedRelease | None``: the previous release from a method's state, when the
        relation itself does not hold the key."""
        self.report: IntersectionReport | None = None

    def check(self, ds: Dataset) -> Any:
        if not ds.engine.relation_exists(self.previous, ds.schema):
            raise SpecError(f"the previous release {self.previous!r} is not a table or view of the "
                            "source's database", path="--against", source=self.spec.path)

    def destination(self) -> tuple[str, bool]:
        return self.inner.destination()

    def tables(self, ds: Dataset) -> TableWriter:
        return self.inner.tables(ds)

    def before_write(self, result: Any) -> None:
        return None

    def beside(self, name: str) -> Sink:
        raise UnsupportedError("check --against compares one released relation; this method releases "
                               "two")

    def compile(self, ds: Dataset, release: Release) -> str:
        raise UnsupportedError("check --against compares releases; it compiles nothing")

    def write(self, ds: Dataset, release: Release) -> dict[str, Any]:
        key = key_of(self.spec)
        k, l, sensitive = thresholds(self.spec)  # noqa: E741
        engine = ds.engine
        release.prepare(ds)
        staged = staging_name(new_token(), "against")
        try:
            if isinstance(release, Linked):
                query, classes = release.linked(engine.dialect)
            else:
                query = release.query(engine.dialect).query
                classes = class_columns(self.spec, list(query.named_selects))
            if key not in query.named_selects:
                raise SpecError(f"the release leaves out the key {key!r}: check --against links persons "
                                "by it; declare it insensitive or pseudonymize it (same salt in every "
                                "release)", path="publishing.key", source=self.spec.path)
            with engine.purpose("materialize the release checked against the previous one"):
                engine.create_table_as(staged, query, temporary=True)
            current = LinkedRelease(table(staged), key, classes, sensitive)
            self.report = self._compare(ds, self._previous(ds, key, sensitive), current, k, l)
        finally:
            engine.drop(staged)
            release.close(ds)
        return {"mode": "none", "against": self.previous}

    def _previous(self, ds: Dataset, key: str, sensitive: str) -> LinkedRelease:
        columns = [c for c, _ in ds.engine.columns(self.previous, ds.schema)]
        if key not in columns and self.previous_rows is not None:
            linked: LinkedRelease | None = self.previous_rows(ds)
            if linked is not None:
                self._same_rows(ds, linked)
                return linked
        for needed, what in ((key, "the key publishing.key"), (sensitive, "the sensitive attribute")):
            if needed not in columns:
                raise SpecError(f"the previous release {self.previous!r} has no column {needed!r} "
                                f"({what}); it has {', '.join(columns)}", path="--against",
                                source=self.spec.path)
        classes = class_columns(self.spec, columns)
        return LinkedRelease(table(self.previous, ds.schema), key, classes, sensitive)

    def _same_rows(self, ds: Dataset, linked: LinkedRelease) -> None:
        """The state's last release is the previous release named (not the one just written): both
        show the same sensitive values in the same groups."""
        from sqlanon.methods.republication.release import NULL_TEXT
        from sqlanon.sql.nodes import as_text, col, lit

        def shown(relation: exp.Expression) -> exp.Select:
            value = exp.Coalesce(this=as_text(col(linked.sensitive)), expressions=[lit(NULL_TEXT)])
            return exp.select(*(as_text(col(c)) for c in linked.classes), value).from_(relation)

        recorded, named = shown(linked.relation.copy()), shown(table(self.previous, ds.schema))
        differ = exp.union(exp.except_(recorded.copy(), named.copy()), exp.except_(named, recorded),
                           distinct=False)
        count = exp.select(exp.alias_(exp.Count(this=exp.Star()), "n")) \
            .from_(exp.alias_(exp.Subquery(this=differ), "d"))
        if int(ds.engine.fetch_one(count)["n"]):
            raise SpecError(f"the previous release {self.previous!r} is not the state's last release: "
                            "name the release published last (and check a new release before it is "
                            "applied)", path="--against", source=self.spec.path)

    def _compare(self, ds: Dataset, previous: LinkedRelease, current: LinkedRelease, k: int | None,
                 l: int) -> IntersectionReport:  # noqa: E741
        engine = ds.engine
        pairs = pairs_query(previous, current)
        with engine.purpose("intersect the two releases' classes"):
            summary = engine.fetch_one(summary_query(pairs.copy(), k, l))
            _, rows = engine.fetch(flagged_query(pairs, k, l).limit(SHOWN))
        # rows: previous class, current class, persons, fewest candidate values, pinned down
        flagged = [{"previous_class": r[0], "current_class": r[1], "persons": int(r[2]),
                    "fewest_candidate_values": int(r[3]), "pinned_down": int(r[4] or 0)} for r in rows]
        return IntersectionReport(
            previous=self.previous, k=k, l=l, sensitive=current.sensitive,
            class_pairs=int(summary["pairs"] or 0), persons_in_both=int(summary["persons"] or 0),
            shrunk_pairs=int(summary["shrunk"] or 0), reduced_pairs=int(summary["reduced"] or 0),
            pinned_persons=int(summary["pinned"] or 0), flagged=flagged)


def previous_from_state(spec: Spec) -> Any:
    """With a state: the previous release's persons from the state's last release, when the
    published table (which leaves the key out) is what ``--against`` names."""
    p = spec.publishing
    if p is None or p.state is None:
        return None
    state_prefix = p.state

    def rows(ds: Dataset) -> LinkedRelease | None:
        from sqlanon.methods.republication.state import State

        state = State(state_prefix, ds.schema)
        last = state.last_release(ds.engine)
        if not last:
            return None
        return state.linked(last, thresholds(spec)[2])
    return rows


def refuse_data(data: Any) -> None:
    if data is not None:
        raise UnsupportedError("check --against compares releases kept in a database; a table in memory "
                               "has none: load it into the database that holds the previous release")


def check_against(plan: Plan, previous: str, inner: Sink, *, engine: Engine | None = None,
                  database: str | None = None) -> IntersectionReport:
    """Run the plan's method with its release checked against ``previous`` instead of written."""
    from sqlanon.methods.runner import run_plan

    sink = AgainstSink(plan.spec, previous, inner, previous_from_state(plan.spec))
    result = run_plan(plan, sink, engine=engine, database=database)
    if sink.report is None:
        raise UnsupportedError(f"method {plan.method.name} released no rows to check against "
                               f"{previous!r}")
    sink.report.warnings += list(getattr(result, "warnings", []) or [])
    return sink.report
