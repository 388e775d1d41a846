"""The state m-invariance keeps between releases, in three tables of the source's database named by
``publishing.state``:

* ``<state>__signatures`` (``key``, ``value``, ``release``): one row per value of each person's
  signature, from the release that first published the person;
* ``<state>__releases`` (``release``, ``key``, ``group_id``, ``value``): every release's persons,
  their groups and values (private: it links the published groups to persons);
* ``<state>__counterfeits`` (``release``, ``group_id``, ``value``): every counterfeit published.

Keys and values are kept as text. A release is recorded before its output is written (in one
transaction where the engine has them) and its record removed if the output cannot be written: a
release published without its record would let the next one regroup its persons freely.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.methods.republication.algorithm import COUNTERFEIT, Partition, Signature
from sqlanon.methods.republication.intersection import LinkedRelease
from sqlanon.sql.nodes import alias, as_expression, col, lit, table

SIGNATURES, RELEASES, COUNTERFEITS = "__signatures", "__releases", "__counterfeits"
KEY, VALUE, RELEASE, GROUP = "key", "value", "release", "group_id"


@dataclass(frozen=True)
class State:
    prefix: str
    schema: str | None = None

    def name(self, part: str) -> str:
        return self.prefix + part

    def exists(self, engine: Engine) -> bool:
        return engine.relation_exists(self.name(RELEASES), self.schema)

    def signatures(self, engine: Engine) -> dict[Hashable, Signature]:
        """Every person's signature from the earlier releases (none before the first)."""
        if not engine.relation_exists(self.name(SIGNATURES), self.schema):
            return {}
        with engine.purpose("read the signatures of earlier releases"):
            _, rows = engine.fetch(exp.select(col(KEY), col(VALUE))
                                   .from_(table(self.name(SIGNATURES), self.schema)))
        values: dict[Hashable, list[str]] = defaultdict(list)
        for key, value in rows:
            values[key].append(value)
        return {key: tuple(sorted(v)) for key, v in values.items()}

    def last_release(self, engine: Engine) -> int:
        if not self.exists(engine):
            return 0
        q = exp.select(alias(exp.Max(this=col(RELEASE)), "n")).from_(table(self.name(RELEASES), self.schema))
        return int(engine.fetch_one(q)["n"] or 0)

    def linked(self, release: int, sensitive: str) -> LinkedRelease:
        """Release ``release`` as the intersection check reads it: its persons and counterfeits."""
        def where(name: str) -> exp.Select:
            return exp.select(*(col(c) for c in (KEY, GROUP, VALUE))) \
                .from_(table(self.name(name), self.schema)) \
                .where(exp.EQ(this=col(RELEASE), expression=lit(release)))

        fakes = exp.select(alias(exp.cast(exp.Null(), "varchar"), KEY), col(GROUP), col(VALUE)) \
            .from_(table(self.name(COUNTERFEITS), self.schema)) \
            .where(exp.EQ(this=col(RELEASE), expression=lit(release)))
        union = exp.union(where(RELEASES), fakes, distinct=False)
        renamed = exp.select(col(KEY), col(GROUP), alias(col(VALUE), sensitive)) \
            .from_(exp.alias_(exp.Subquery(this=union), "u", quoted=True))
        return LinkedRelease(as_expression(exp.alias_(exp.Subquery(this=renamed), "linked", quoted=True)),
                             KEY, (GROUP,), sensitive)

    def append(self, engine: Engine, release: int, keys: list[str], values: list[str],
               partition: Partition, earlier: dict[Hashable, Signature], *, signatures: bool = True
               ) -> None:
        """Record release ``release``: new persons' signatures (unless ``signatures`` is false: each
        release on its own), every person's group, the counterfeits."""
        new_signatures = [(k, v) for k, s in partition.signatures.items() if k not in earlier for v in s] \
            if signatures else []
        members: list[tuple[str, int, str]] = []
        fakes: list[tuple[int, str]] = []
        for number, group in enumerate(partition.groups, start=1):
            for value, row in zip(group.signature, group.members):
                if row == COUNTERFEIT:
                    fakes.append((number, value))
                else:
                    members.append((keys[row], number, values[row]))
        tables = {
            SIGNATURES: pa.table({KEY: pa.array([k for k, _ in new_signatures], pa.string()),
                                  VALUE: pa.array([v for _, v in new_signatures], pa.string()),
                                  RELEASE: pa.array([release] * len(new_signatures), pa.int64())}),
            RELEASES: pa.table({RELEASE: pa.array([release] * len(members), pa.int64()),
                                KEY: pa.array([m[0] for m in members], pa.string()),
                                GROUP: pa.array([m[1] for m in members], pa.int64()),
                                VALUE: pa.array([m[2] for m in members], pa.string())}),
            COUNTERFEITS: pa.table({RELEASE: pa.array([release] * len(fakes), pa.int64()),
                                    GROUP: pa.array([f[0] for f in fakes], pa.int64()),
                                    VALUE: pa.array([f[1] for f in fakes], pa.string())}),
        }
        staged = {part: staging_name(new_token(), "state") for part in tables}
        try:
            for part, data in tables.items():
                engine.create_table_from_arrow(staged[part], data, temporary=True)
            with engine.purpose("record the release in the m-invariance state"):
                if engine.capabilities.transactional_ddl:
                    with engine.transaction():
                        self._insert(engine, staged)
                else:
                    self._insert(engine, staged)
        finally:
            for name in staged.values():
                engine.drop(name)

    def remove(self, engine: Engine, release: int) -> None:
        """Undo :meth:`append` of ``release`` (its output could not be written). An engine without
        transactions may not delete rows of a table (Spark's file tables): there each state table is
        rewritten without the release's rows."""
        other = exp.NEQ(this=col(RELEASE), expression=lit(release))
        with engine.purpose("undo the release's record in the m-invariance state"):
            for part in (SIGNATURES, RELEASES, COUNTERFEITS):
                name = self.name(part)
                if not engine.relation_exists(name, self.schema):
                    continue
                if engine.capabilities.transactional_ddl:
                    engine.execute(exp.delete(table(name, self.schema), where=exp.EQ(
                        this=col(RELEASE), expression=lit(release))))
                    continue
                kept = staging_name(new_token(), "state")
                engine.create_table_as(kept, exp.select(exp.Star()).from_(table(name, self.schema))
                                       .where(other.copy()), schema=self.schema)
                engine.drop(name, schema=self.schema)
                engine.rename_table(kept, name, schema=self.schema)

    def _insert(self, engine: Engine, staged: dict[str, str]) -> None:
        for part, name in staged.items():
            rows = exp.select(exp.Star()).from_(table(name))
            if engine.relation_exists(self.name(part), self.schema):
                engine.execute(exp.insert(rows, table(self.name(part), self.schema)))
            else:
                engine.create_table_as(self.name(part), rows, schema=self.schema)
