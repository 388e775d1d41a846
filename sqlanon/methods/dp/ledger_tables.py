"""The ledger's two tables in SQL: their names and columns, the statements that create them and
migrate tables of earlier versions, and the literals written into them."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from decimal import Decimal

from sqlglot import exp

from sqlanon.methods.dp.amounts import ADD_REMOVE, AMOUNT_TYPE, ROW
from sqlanon.sql.nodes import as_expression, col, ident, lit, table

BUDGET_TABLE = "sqlanon_privacy_budget"
LEDGER_TABLE = "sqlanon_privacy_ledger"


def amount_type() -> exp.DataType:
    return exp.DataType.build(AMOUNT_TYPE)


def amount_literal(value: Decimal) -> exp.Expression:
    return exp.cast(lit(format(value, "f")), amount_type())


def now_literal() -> exp.Expression:
    now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(sep=" ")
    return exp.cast(lit(now), exp.DataType.build("timestamp"))


def column_def(name: str, kind: str, *, primary_key: bool = False, not_null: bool = True,
            default: str | None = None) -> exp.ColumnDef:
    constraints = []
    if primary_key:
        constraints.append(exp.ColumnConstraint(kind=exp.PrimaryKeyColumnConstraint()))
    elif not_null:
        constraints.append(exp.ColumnConstraint(kind=exp.NotNullColumnConstraint()))
    if default is not None:
        constraints.append(exp.ColumnConstraint(kind=exp.DefaultColumnConstraint(this=lit(default))))
    return exp.ColumnDef(this=ident(name), kind=exp.DataType.build(kind), constraints=constraints)


def added_columns() -> dict[str, list[exp.ColumnDef]]:
    """The columns added since the first version of the tables, per table (nullable, so that
    ``ALTER TABLE ... ADD COLUMN`` can add them to tables holding rows; old rows get the default)."""
    return {
        BUDGET_TABLE: [column_def("neighbours", "varchar", not_null=False, default=ADD_REMOVE),
                       column_def("privacy_unit", "varchar", not_null=False, default=ROW)],
        LEDGER_TABLE: [column_def("neighbours", "varchar", not_null=False, default=ADD_REMOVE),
                       column_def("epsilon_charged", AMOUNT_TYPE, not_null=False),
                       column_def("delta_charged", AMOUNT_TYPE, not_null=False),
                       column_def("release_key", "varchar", not_null=False),
                       column_def("privacy_unit", "varchar", not_null=False, default=ROW)]}


def release_id(dataset: str, release_key: str) -> str:
    """The ledger row id of the charge for ``release_key`` on ``dataset``: the same for every run
    with that key, so the table's primary key admits one charge per key, also between concurrent
    runs."""
    digest = hashlib.sha256(f"{dataset}\0{release_key}".encode()).hexdigest()
    return f"release-{digest[:32]}"


def if_not_exists(column: exp.ColumnDef) -> exp.ColumnDef:
    """``column`` as ``ADD COLUMN IF NOT EXISTS`` in an ``ALTER TABLE``."""
    out = column.copy()
    out.set("exists", True)
    return out


def create_tables() -> list[exp.Create]:
    """``CREATE TABLE IF NOT EXISTS`` of the budget and the ledger table, in their latest version."""
    added = added_columns()
    budget = [column_def("dataset", "varchar", primary_key=True),
              column_def("epsilon_total", AMOUNT_TYPE), column_def("delta_total", AMOUNT_TYPE),
              column_def("epsilon_spent", AMOUNT_TYPE), column_def("delta_spent", AMOUNT_TYPE),
              column_def("created_at", "timestamp"), *added[BUDGET_TABLE]]
    ledger = [column_def("id", "varchar", primary_key=True), column_def("dataset", "varchar"),
              column_def("epsilon", AMOUNT_TYPE), column_def("delta", AMOUNT_TYPE),
              column_def("description", "varchar"), column_def("spent_at", "timestamp"),
              *added[LEDGER_TABLE]]
    return [exp.Create(this=exp.Schema(this=table(name), expressions=columns), kind="TABLE", exists=True)
            for name, columns in ((BUDGET_TABLE, budget), (LEDGER_TABLE, ledger))]


def migration(missing: dict[str, list[exp.ColumnDef]]) -> list[exp.Expression]:
    """Add the ``missing`` columns per table; old spends count as charged what they spent."""
    out: list[exp.Expression] = [exp.Alter(this=table(name), kind="TABLE", actions=[if_not_exists(c)])
                                 for name, columns in missing.items() for c in columns]
    out.append(exp.Update(
        this=table(LEDGER_TABLE),
        expressions=[exp.EQ(this=col("epsilon_charged"), expression=col("epsilon")),
                     exp.EQ(this=col("delta_charged"), expression=col("delta"))],
        where=exp.Where(this=exp.Is(this=col("epsilon_charged"), expression=exp.Null()))))
    return out


def spend_update(dataset: str, epsilon: Decimal, delta: Decimal, *, checked: bool = True
                 ) -> exp.Update:
    """``UPDATE`` of the dataset's budget row adding (ε, δ) to its spending (negative: a refund);
    ``checked``: only if the totals stay within the budget, returning them as text."""
    def added(c: str, x: Decimal) -> exp.Expression:
        if x < 0:
            return exp.Sub(this=col(c), expression=amount_literal(-x))
        return exp.Add(this=col(c), expression=amount_literal(x))

    new_eps, new_delta = added("epsilon_spent", epsilon), added("delta_spent", delta)
    condition: exp.Expression = exp.EQ(this=col("dataset"), expression=lit(dataset))
    if checked:
        condition = as_expression(exp.and_(
            condition, exp.LTE(this=new_eps.copy(), expression=col("epsilon_total")),
            exp.LTE(this=new_delta.copy(), expression=col("delta_total"))))
    return exp.Update(
        this=table(BUDGET_TABLE),
        expressions=[exp.EQ(this=col("epsilon_spent"), expression=new_eps),
                     exp.EQ(this=col("delta_spent"), expression=new_delta)],
        where=exp.Where(this=condition),
        returning=exp.Returning(expressions=[
            exp.cast(col(c), exp.DataType.build("varchar"))
            for c in ("epsilon_total", "delta_total", "epsilon_spent", "delta_spent")])
        if checked else None)
