"""Table marks on Spark (:class:`~sqlanon.engines.swap.TableMarks`): table properties
(``TBLPROPERTIES``), each read or written by one statement of the catalog."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.sql.nodes import lit, table


class SparkTableMarks:
    """The marks methods of :class:`~sqlanon.engines.spark.SparkEngine` (a mixin of it, after
    :class:`~sqlanon.engines.base.Engine`, whose methods below it uses)."""

    session: Any

    if TYPE_CHECKING:
        def sql(self, statement: exp.Expression) -> str: ...

        def execute(self, statement: exp.Expression, *, purpose: str | None = None) -> None: ...

        def execute_script(self, sql: str, *, purpose: str | None = None) -> None: ...

        def fetch_script(self, sql: str, *, purpose: str | None = None
                         ) -> tuple[list[str], list[tuple[Any, ...]]]: ...

    @staticmethod
    def _properties(marks: dict[str, str]) -> exp.Properties:
        return exp.Properties(expressions=[exp.Property(this=lit(k), value=lit(v))
                                           for k, v in marks.items()])

    def create_marked(self, name: str, query: exp.Expression, marks: dict[str, str], *,
                      schema: str | None = None) -> None:
        self.execute(exp.Create(this=table(name, schema), kind="TABLE", expression=query,
                                properties=self._properties(marks)))

    def marks(self, name: str, *, schema: str | None = None) -> dict[str, str]:
        # sqlglot builds no SHOW: the statement is the keyword and the name as sqlglot quotes it
        _, rows = self.fetch_script(f"SHOW TBLPROPERTIES {self.sql(table(name, schema))}",
                                    purpose=f"read the properties of {name}")
        return {str(k): str(v) for k, v in rows if str(k).startswith("sqlanon.")}

    def mark(self, name: str, marks: dict[str, str], *, schema: str | None = None) -> None:
        self.execute(exp.Alter(this=table(name, schema), kind="TABLE",
                               actions=[exp.AlterSet(expressions=[self._properties(marks)])]))

    def unmark(self, name: str, keys: list[str], *, schema: str | None = None) -> None:
        # sqlglot builds no UNSET: the keys are literals and the name an identifier sqlglot renders
        listed = ", ".join(self.sql(lit(k)) for k in keys)
        self.execute_script(f"ALTER TABLE {self.sql(table(name, schema))} UNSET TBLPROPERTIES IF EXISTS "
                            f"({listed})", purpose=f"remove the properties of {name}")

    def tables_named(self, prefix: str, *, schema: str | None = None) -> list[str]:
        found = self.session.catalog.listTables(schema, f"{prefix}*")
        return sorted(t.name for t in found if not t.isTemporary and t.name.startswith(prefix))
