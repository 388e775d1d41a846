"""A privacy-budget ledger stored in the database it protects.

Two tables, created on first use in the connection's current schema:

- ``sqlanon_privacy_budget``: one row per dataset with its total budget (ε, δ) and the neighbouring
  relation it is kept under, set once, and the running totals spent so far;
- ``sqlanon_privacy_ledger``: one row per spend (dataset, ε, δ and the relation they hold under,
  the amounts charged to the budget, a description of the query or release, when).

Neighbouring relations. DP aggregate queries are private under **add/remove** of one row (the row
count is private too); releases of whole tables (DP microdata, per-value DP noise) only under
**substitution** of one record, since they reveal the row count. A budget is kept under one of
them. An add/remove spend on a substitution budget is charged (2ε, (1 + e^ε)·δ): a substitution
is a removal followed by an addition, and group privacy for two steps gives that bound. A
substitution spend cannot be charged to an add/remove budget and is refused.

Composition is the basic sequential theorem: the ε of all spends add up, and so do the δ
(Domingo-Ferrer, Sánchez, Soria-Comas, *Database Anonymization*, 2016, §8.1, with the correction
δ1 + δ2 for the book's δ1·δ2). Amounts are exact decimals with 18 fractional digits
(``DECIMAL(38, 18)`` on both engines): a spend is rounded up to that precision and a budget down,
so rounding can never let the sum exceed the budget.

A spend is atomic. In one transaction a conditional ``UPDATE ... SET spent = spent + x WHERE
spent + x <= total RETURNING ...`` on the dataset's budget row raises the totals only if they stay
within the budget, the ledger row is inserted, and the caller's work (the exact aggregate, or the
write of a released table) runs; then everything commits together. PostgreSQL serializes
concurrent updates of the row with its row lock and re-checks the condition against the committed
totals (READ COMMITTED re-evaluation), so two processes can never both pass the check on a stale
total. DuckDB detects the write-write conflict on the row and aborts one transaction; the ledger
retries it. A DuckDB *file* admits one writing process at a time: another process fails to open it
until the first closes it, so :func:`sqlanon.methods.dp.queries.open_database` retries the open (see
docs/dp.md). A refused spend rolls back and leaves no trace.

Tables made before the relation existed are migrated on first use: the missing columns are added
(``ALTER TABLE ... ADD COLUMN IF NOT EXISTS``), old budgets and spends count as add/remove, and old
spends as charged what they spent.
"""

from __future__ import annotations

import functools
import random
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

from sqlglot import exp

from sqlanon.sql.nodes import as_expression, as_text, col, ident, lit, table
from sqlanon.errors import EngineError, SqlanonError

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine

BUDGET_TABLE = "sqlanon_privacy_budget"
LEDGER_TABLE = "sqlanon_privacy_ledger"
ADD_REMOVE = "add/remove"
"""Neighbouring tables differ by one added or removed row (DP aggregate queries)."""
SUBSTITUTION = "substitution"
"""Neighbouring tables differ by one substituted record (releases of whole tables)."""
NEIGHBOURS = (ADD_REMOVE, SUBSTITUTION)
_QUANTUM = Decimal("1e-18")
_AMOUNT = "decimal(38, 18)"
_LIMIT = Decimal(10) ** 20
"""The first amount DECIMAL(38, 18) cannot hold (38 digits, 18 of them fractional)."""
T = TypeVar("T")


class PrivacyBudgetError(SqlanonError, ValueError):
    """The privacy budget is missing, invalid, or would be exceeded. Nothing was spent."""

    kind = "budget"


@dataclass(frozen=True)
class Budget:
    """An (ε, δ) pair of exact decimal amounts."""

    epsilon: Decimal
    delta: Decimal

    def __add__(self, other: Budget) -> Budget:
        return Budget(self.epsilon + other.epsilon, self.delta + other.delta)

    def __sub__(self, other: Budget) -> Budget:
        return Budget(self.epsilon - other.epsilon, self.delta - other.delta)

    def fits_in(self, other: Budget) -> bool:
        return self.epsilon <= other.epsilon and self.delta <= other.delta

    def as_dict(self) -> dict[str, float]:
        return {"epsilon": float(self.epsilon), "delta": float(self.delta)}


@dataclass(frozen=True)
class LedgerState:
    """A dataset's budget and what has been spent of it."""

    dataset: str
    total: Budget
    spent: Budget
    neighbours: str = ADD_REMOVE
    """The neighbouring relation the budget is kept under (:data:`ADD_REMOVE`, :data:`SUBSTITUTION`)."""
    charged: Budget | None = None
    """After a spend: what that spend was charged under the budget's relation."""
    spend_id: str | None = None
    """After a spend: the id of its ledger row (what :meth:`PrivacyLedger.refund` takes back)."""

    @property
    def remaining(self) -> Budget:
        return self.total - self.spent

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dataset": self.dataset, "neighbours": self.neighbours,
                               "total": self.total.as_dict(), "spent": self.spent.as_dict(),
                               "remaining": self.remaining.as_dict()}
        if self.charged is not None:
            out["charged"] = self.charged.as_dict()
        return out


def amount(value: object, what: str, *, rounding: str = ROUND_CEILING) -> Decimal:
    """``value`` (int, float, str, Decimal or Fraction) as a decimal with 18 fractional digits.

    Floats are taken by their shortest decimal form (``0.1`` is 0.1, not 0.1000000000000000055...).

    >>> amount(0.1, "epsilon"), amount(Fraction(1, 3), "epsilon")
    (Decimal('0.100000000000000000'), Decimal('0.333333333333333334'))

    Raises:
        PrivacyBudgetError: not a finite number >= 0 (the message names ``what``).
    """
    try:
        if isinstance(value, bool):
            raise TypeError
        if isinstance(value, Fraction):
            d = Decimal(value.numerator) / Decimal(value.denominator)
        elif isinstance(value, float):
            d = Decimal(repr(value))
        elif isinstance(value, (int, str, Decimal)):
            d = Decimal(value)
        else:
            raise TypeError
    except (TypeError, ValueError, InvalidOperation):
        raise PrivacyBudgetError(f"{what} must be a number, got {value!r}") from None
    if not d.is_finite() or d < 0:
        raise PrivacyBudgetError(f"{what} must be a finite number >= 0, got {value!r}")
    if d >= _LIMIT:
        raise PrivacyBudgetError(f"{what} must be below 1e20 (the ledger keeps {_AMOUNT}), got "
                                 f"{value!r}")
    with localcontext() as ctx:
        ctx.prec = 60  # room for the 18 fractional digits of large amounts
        return d.quantize(_QUANTUM, rounding=rounding)


def check_neighbours(value: object, what: str = "neighbours") -> str:
    """``value`` if it names a neighbouring relation (``"add/remove"`` or ``"substitution"``).

    Raises:
        PrivacyBudgetError: any other value (the message names ``what``).
    """
    if value not in NEIGHBOURS:
        raise PrivacyBudgetError(f"{what} must be {ADD_REMOVE!r} or {SUBSTITUTION!r}, got {value!r}")
    return str(value)


def charge(cost: Budget, spend: str, budget: str, dataset: str = "") -> Budget:
    """What a spend of ``cost``, private under the relation ``spend``, costs a budget kept under
    ``budget``.

    - the same relation: ``cost`` itself;
    - add/remove on a substitution budget: a substitution is one removal and one addition, so by
      group privacy for two steps the spend is (2ε, (1 + e^ε)·δ)-DP under substitution. e^ε is
      computed to 60 significant digits and bounded above by the next 60-digit number (the
      computation is correctly rounded to nearest), the product rounded up, then the amount
      rounded up to the ledger's 18 fractional digits;
    - substitution on an add/remove budget: refused. A release that is private only under
      substitution reveals the row count, which add/remove neighbours keep private.

    >>> c = charge(Budget(amount(0.5, "ε"), amount(1e-6, "δ")), ADD_REMOVE, SUBSTITUTION)
    >>> c.epsilon, c.delta
    (Decimal('1.000000000000000000'), Decimal('0.000002648721270701'))

    Raises:
        PrivacyBudgetError: a substitution spend on an add/remove budget, or a converted δ >= 1
            (no budget can hold it).
    """
    if spend == budget:
        return cost
    if spend == SUBSTITUTION:
        raise PrivacyBudgetError(
            f"refused: this release is differentially private only under substitution of one "
            f"record (it reveals the row count: the output has as many rows as the source), not "
            f"under the addition or removal of one, so it cannot be charged to dataset {dataset!r}, "
            f"whose budget is kept under add/remove neighbours. Charge it to a dataset whose budget "
            f"is kept under substitution (a budget set by a release is; dp_query: "
            f"budget_neighbours='substitution', CLI: --budget-neighbours substitution); DP "
            f"aggregate queries are charged there too, at (2ε, (1 + e^ε)·δ). Nothing was spent.")
    if cost.delta > 0 and cost.epsilon > 1000:  # (1 + e^1000)·1e-18 > 1 already
        raise _delta_too_large(cost)
    with localcontext() as ctx:
        ctx.prec = 60
        ctx.rounding = ROUND_CEILING
        delta = Decimal(0)
        if cost.delta > 0:
            bound = cost.epsilon.exp().next_plus()
            delta = (1 + bound) * cost.delta
            if delta >= 1:
                raise _delta_too_large(cost)
        return Budget((2 * cost.epsilon).quantize(_QUANTUM), delta.quantize(_QUANTUM))


def _delta_too_large(cost: Budget) -> PrivacyBudgetError:
    return PrivacyBudgetError(
        f"refused: epsilon={_fmt(cost.epsilon)}, delta={_fmt(cost.delta)} under add/remove "
        f"neighbours is (2·epsilon, (1 + e^epsilon)·delta) under substitution, and that delta is "
        f">= 1: no budget can hold it. Nothing was spent.")


def _decimal_type() -> exp.DataType:
    return exp.DataType.build(_AMOUNT)


def _dec(value: Decimal) -> exp.Expression:
    return exp.cast(lit(format(value, "f")), _decimal_type())


def _now() -> exp.Expression:
    now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(sep=" ")
    return exp.cast(lit(now), exp.DataType.build("timestamp"))


def _column(name: str, kind: str, *, primary_key: bool = False, not_null: bool = True,
            default: str | None = None) -> exp.ColumnDef:
    constraints = []
    if primary_key:
        constraints.append(exp.ColumnConstraint(kind=exp.PrimaryKeyColumnConstraint()))
    elif not_null:
        constraints.append(exp.ColumnConstraint(kind=exp.NotNullColumnConstraint()))
    if default is not None:
        constraints.append(exp.ColumnConstraint(kind=exp.DefaultColumnConstraint(this=lit(default))))
    return exp.ColumnDef(this=ident(name), kind=exp.DataType.build(kind), constraints=constraints)


def _added_columns() -> dict[str, list[exp.ColumnDef]]:
    """The columns added since the first version of the tables, per table (nullable, so that
    ``ALTER TABLE ... ADD COLUMN`` can add them to tables holding rows; old rows get the default)."""
    return {
        BUDGET_TABLE: [_column("neighbours", "varchar", not_null=False, default=ADD_REMOVE)],
        LEDGER_TABLE: [_column("neighbours", "varchar", not_null=False, default=ADD_REMOVE),
                       _column("epsilon_charged", _AMOUNT, not_null=False),
                       _column("delta_charged", _AMOUNT, not_null=False)]}


def _retryable(error: BaseException) -> bool:
    """A concurrency failure that a fresh attempt can get past (conflict, deadlock, DDL race)."""
    for e in (error, error.__cause__):
        if e is None:
            continue
        name = type(e).__name__
        # DuplicateObject/DuplicateTable: PostgreSQL's CREATE TABLE IF NOT EXISTS racing another
        # process on the table's row type; the next attempt sees the table
        if name in ("TransactionException", "SerializationFailure", "DeadlockDetected",
                    "UniqueViolation", "LockNotAvailable", "DuplicateObject", "DuplicateTable",
                    "DuplicateColumn"):
            return True
        if "Conflict on" in str(e) or "could not serialize" in str(e):
            return True
    return False


class PrivacyLedger:
    """The budget ledger of one database connection.

    Args:
        engine: an open :class:`~sqlanon.engines.base.Engine` (DuckDB or PostgreSQL).
        retries: how many times a spend that lost a concurrency conflict is tried again.
    """

    def __init__(self, engine: Engine, *, retries: int = 50) -> None:
        self.engine = engine
        self.retries = retries
        self._ready = False

    # -- schema -----------------------------------------------------------------------------------
    def ensure_tables(self) -> None:
        """Create the two ledger tables if they do not exist yet, and add the columns that tables
        made by earlier versions lack (old rows count as add/remove, charged what they spent)."""
        if self._ready:
            return
        added = _added_columns()
        budget = [_column("dataset", "varchar", primary_key=True),
                  _column("epsilon_total", _AMOUNT), _column("delta_total", _AMOUNT),
                  _column("epsilon_spent", _AMOUNT), _column("delta_spent", _AMOUNT),
                  _column("created_at", "timestamp"), *added[BUDGET_TABLE]]
        ledger = [_column("id", "varchar", primary_key=True), _column("dataset", "varchar"),
                  _column("epsilon", _AMOUNT), _column("delta", _AMOUNT),
                  _column("description", "varchar"), _column("spent_at", "timestamp"),
                  *added[LEDGER_TABLE]]
        for name, columns in ((BUDGET_TABLE, budget), (LEDGER_TABLE, ledger)):
            statement = exp.Create(this=exp.Schema(this=table(name), expressions=columns),
                                   kind="TABLE", exists=True)
            self._retry(functools.partial(self.engine.execute, statement))
        missing = {name: [c for c in columns if c.name not in self._column_names(name)]
                   for name, columns in added.items()}
        if any(missing.values()):
            self._retry(lambda: self._migrate(missing))
        self._ready = True

    def _column_names(self, name: str) -> set[str]:
        return {c.lower() for c, _ in self.engine.columns(name)}

    def _migrate(self, missing: dict[str, list[exp.ColumnDef]]) -> None:
        """Add the missing columns in one transaction; a concurrent migration is harmless (``IF NOT
        EXISTS``, and the update only fills what is still empty)."""
        with self.engine.transaction():
            for name, columns in missing.items():
                for c in columns:
                    self.engine.execute(exp.Alter(this=table(name), kind="TABLE",
                                                  actions=[_if_not_exists(c)]))
            self.engine.execute(exp.Update(
                this=table(LEDGER_TABLE),
                expressions=[exp.EQ(this=col("epsilon_charged"), expression=col("epsilon")),
                             exp.EQ(this=col("delta_charged"), expression=col("delta"))],
                where=exp.Where(this=exp.Is(this=col("epsilon_charged"), expression=exp.Null()))))

    # -- reading ----------------------------------------------------------------------------------
    def exists(self) -> bool:
        """Whether this database holds a ledger (reading it creates nothing otherwise)."""
        return self.engine.relation_exists(BUDGET_TABLE)

    def states(self) -> dict[str, LedgerState]:
        """Every dataset's budget and spending, by dataset name in order, from one query."""
        return self._states(None)

    def state(self, dataset: str) -> LedgerState | None:
        """The dataset's budget and spending, or None if no budget was set."""
        return self._states(dataset).get(dataset)

    def _states(self, dataset: str | None) -> dict[str, LedgerState]:
        self.ensure_tables()
        q = (exp.select(col("dataset"),
                        *[exp.alias_(as_text(col(c)), c, quoted=True)
                          for c in ("epsilon_total", "delta_total", "epsilon_spent", "delta_spent")],
                        col("neighbours"))
             .from_(table(BUDGET_TABLE)).order_by(col("dataset")))
        if dataset is not None:
            q = q.where(exp.EQ(this=col("dataset"), expression=lit(dataset)))
        return {r["dataset"]: LedgerState(
                    r["dataset"], Budget(Decimal(r["epsilon_total"]), Decimal(r["delta_total"])),
                    Budget(Decimal(r["epsilon_spent"]), Decimal(r["delta_spent"])),
                    r["neighbours"] or ADD_REMOVE)
                for r in self.engine.fetch_dicts(q)}

    def entries(self, dataset: str) -> list[dict[str, Any]]:
        """The spends of a dataset, oldest first: id, epsilon, delta (Decimal; as spent, under
        ``neighbours``), neighbours, epsilon_charged, delta_charged (Decimal; what the budget was
        charged), description, spent_at."""
        self.ensure_tables()

        def text(c: str | exp.Expression, name: str) -> exp.Expression:
            return as_expression(exp.alias_(as_text(col(c) if isinstance(c, str) else c), name, quoted=True))

        rows = self.engine.fetch_dicts(
            exp.select(col("id"), text("epsilon", "epsilon"), text("delta", "delta"),
                       col("neighbours"),
                       text(exp.Coalesce(this=col("epsilon_charged"), expressions=[col("epsilon")]),
                            "epsilon_charged"),
                       text(exp.Coalesce(this=col("delta_charged"), expressions=[col("delta")]),
                            "delta_charged"),
                       col("description"), col("spent_at"))
            .from_(table(LEDGER_TABLE)).where(exp.EQ(this=col("dataset"), expression=lit(dataset)))
            .order_by(col("spent_at"), col("id")))
        for r in rows:
            for key in ("epsilon", "delta", "epsilon_charged", "delta_charged"):
                r[key] = Decimal(r[key])
            r["neighbours"] = r["neighbours"] or ADD_REMOVE
        return rows

    # -- setting the budget -------------------------------------------------------------------------
    def set_budget(self, dataset: str, epsilon: object, delta: object = 0, *,
                   neighbours: str = ADD_REMOVE) -> LedgerState:
        """Set a dataset's total budget and the neighbouring relation it is kept under, once.

        Setting the same budget again is a no-op; a different one (or relation) is refused, because
        raising a budget after answers were released would void the guarantee it stood for.

        Raises:
            PrivacyBudgetError: ε is not > 0, δ is not in [0, 1), an unknown relation, or a
                different budget is set.
        """
        _check_dataset(dataset)
        relation = check_neighbours(neighbours, "the budget's neighbours")
        total = Budget(amount(epsilon, "the budget's epsilon", rounding=ROUND_FLOOR),
                       amount(delta, "the budget's delta", rounding=ROUND_FLOOR))
        if total.epsilon <= 0:
            raise PrivacyBudgetError(f"the budget's epsilon must be > 0, got {epsilon!r}")
        if total.delta >= 1:
            raise PrivacyBudgetError(f"the budget's delta must be < 1, got {delta!r}")
        self.ensure_tables()

        def insert() -> None:
            if self.state(dataset) is not None:
                return
            zero = _dec(Decimal(0))
            self.engine.execute(exp.insert(
                exp.values([(lit(dataset), _dec(total.epsilon), _dec(total.delta), zero, zero.copy(),
                             _now(), lit(relation))]),
                table(BUDGET_TABLE),
                columns=["dataset", "epsilon_total", "delta_total", "epsilon_spent", "delta_spent",
                         "created_at", "neighbours"]))

        self._retry(insert)
        state = self.state(dataset)
        assert state is not None
        if state.total != total or state.neighbours != relation:
            raise PrivacyBudgetError(
                f"dataset {dataset!r} already has the budget epsilon={_fmt(state.total.epsilon)}, "
                f"delta={_fmt(state.total.delta)} under {state.neighbours} neighbours; a budget is "
                f"set once and cannot be changed (asked for epsilon={_fmt(total.epsilon)}, "
                f"delta={_fmt(total.delta)} under {relation} neighbours)")
        return state

    # -- spending ---------------------------------------------------------------------------------
    def check(self, dataset: str, epsilon: object, delta: object = 0, *,
              neighbours: str = ADD_REMOVE) -> Budget:
        """What :meth:`spend` would charge now, without spending: refuses as it would.

        A check promises nothing: the budget may be spent by someone else before the spend, which
        decides. It lets a caller refuse before doing expensive work.

        Raises:
            PrivacyBudgetError: as :meth:`spend`.
        """
        cost, relation, state, charged = self._prepare(dataset, epsilon, delta, neighbours)
        if not charged.fits_in(state.remaining):
            raise _exceeded(dataset, cost, relation, charged, state)
        return charged

    def spend(self, dataset: str, epsilon: object, delta: object = 0, *,
              neighbours: str = ADD_REMOVE, description: str = "",
              then: Callable[[], T] | None = None, once: bool = False
              ) -> tuple[T | None, LedgerState]:
        """Record a spend of (ε, δ) on ``dataset`` and run ``then`` in the same transaction.

        ``neighbours`` is the relation under which the spend is (ε, δ)-DP; the budget is charged
        under its own relation (:func:`charge`). The spend and ``then``'s work commit together; if
        ``then`` raises, nothing is spent. ``then`` must not open a transaction of its own. A
        transaction that lost a concurrency conflict is retried from the start, so ``then`` may run
        more than once (its statements were rolled back); with ``once`` a conflict after ``then``
        started is raised instead (for work that consumes its input).

        Returns:
            ``then()``'s result (None without ``then``) and the ledger state after the spend, with
            the amount charged.

        Raises:
            PrivacyBudgetError: no budget is set for the dataset, a substitution spend on an
                add/remove budget, or the spend would exceed the budget; the message gives the
                amounts. Nothing is spent.
        """
        cost, relation, state, charged = self._prepare(dataset, epsilon, delta, neighbours)
        if not charged.fits_in(state.total):  # never fits; also keeps the SQL amounts in range
            raise _exceeded(dataset, cost, relation, charged, state)
        started = False
        spend_id = uuid.uuid4().hex

        def attempt() -> tuple[T | None, LedgerState]:
            nonlocal started
            with self.engine.transaction():
                row = self._raise_spent(dataset, charged)
                if row is None:
                    raise _Refused
                self._record(spend_id, dataset, cost, relation, charged, description)
                started = True
                result = then() if then is not None else None
            return result, replace(row, neighbours=state.neighbours, charged=charged,
                                   spend_id=spend_id)

        try:
            return self._retry(attempt, again=lambda: not (once and started))
        except _Refused:
            now = self.state(dataset)
            if now is None:
                raise _no_budget(dataset) from None
            raise _exceeded(dataset, cost, relation, charged, now) from None

    def _prepare(self, dataset: str, epsilon: object, delta: object, neighbours: str
                 ) -> tuple[Budget, str, LedgerState, Budget]:
        """The spend's amounts and relation, the budget's state, and the charge; refuses a spend
        without a budget or under a relation the budget cannot take."""
        _check_dataset(dataset)
        relation = check_neighbours(neighbours)
        cost = Budget(amount(epsilon, "epsilon"), amount(delta, "delta"))
        if cost.epsilon <= 0:
            raise PrivacyBudgetError(f"epsilon must be > 0, got {epsilon!r}")
        self.ensure_tables()
        state = self.state(dataset)
        if state is None:
            raise _no_budget(dataset)
        return cost, relation, state, charge(cost, relation, state.neighbours, dataset)

    def _raise_spent(self, dataset: str, cost: Budget) -> LedgerState | None:
        """The conditional update of the budget row; None when it would exceed the budget."""
        new_eps = exp.Add(this=col("epsilon_spent"), expression=_dec(cost.epsilon))
        new_delta = exp.Add(this=col("delta_spent"), expression=_dec(cost.delta))
        condition = exp.and_(
            exp.EQ(this=col("dataset"), expression=lit(dataset)),
            exp.LTE(this=new_eps.copy(), expression=col("epsilon_total")),
            exp.LTE(this=new_delta.copy(), expression=col("delta_total")))
        update = exp.Update(
            this=table(BUDGET_TABLE),
            expressions=[exp.EQ(this=col("epsilon_spent"), expression=new_eps),
                         exp.EQ(this=col("delta_spent"), expression=new_delta)],
            where=exp.Where(this=condition),
            returning=exp.Returning(expressions=[
                as_text(col(c)) for c in ("epsilon_total", "delta_total", "epsilon_spent",
                                          "delta_spent")]))
        _, rows = self.engine.fetch(update)
        if not rows:
            return None
        e_total, d_total, e_spent, d_spent = (Decimal(v) for v in rows[0])
        return LedgerState(dataset, Budget(e_total, d_total), Budget(e_spent, d_spent))

    def refund(self, dataset: str, spend_id: str) -> bool:
        """Take back the spend ``spend_id``: delete its ledger row and lower the totals by what it
        was charged. Only for a release that never became readable: run it in the transaction that
        drops what the release wrote (:meth:`ReleaseBudget.charged_ahead`).

        Returns:
            False if there is no such spend (already refunded), True otherwise.
        """
        _check_dataset(dataset)
        _, rows = self.engine.fetch(exp.Delete(
            this=table(LEDGER_TABLE),
            where=exp.Where(this=exp.and_(exp.EQ(this=col("id"), expression=lit(spend_id)),
                                          exp.EQ(this=col("dataset"), expression=lit(dataset)))),
            returning=exp.Returning(expressions=[
                as_text(exp.Coalesce(this=col(f"{c}_charged"), expressions=[col(c)]))
                for c in ("epsilon", "delta")])))
        if not rows:
            return False
        epsilon, delta = (Decimal(v) for v in rows[0])
        self.engine.execute(exp.Update(
            this=table(BUDGET_TABLE),
            expressions=[
                exp.EQ(this=col("epsilon_spent"),
                       expression=exp.Sub(this=col("epsilon_spent"), expression=_dec(epsilon))),
                exp.EQ(this=col("delta_spent"),
                       expression=exp.Sub(this=col("delta_spent"), expression=_dec(delta)))],
            where=exp.Where(this=exp.EQ(this=col("dataset"), expression=lit(dataset)))))
        return True

    def _record(self, spend_id: str, dataset: str, cost: Budget, relation: str, charged: Budget,
                description: str) -> None:
        self.engine.execute(exp.insert(
            exp.values([(lit(spend_id), lit(dataset), _dec(cost.epsilon), _dec(cost.delta),
                         lit(description), _now(), lit(relation), _dec(charged.epsilon),
                         _dec(charged.delta))]),
            table(LEDGER_TABLE),
            columns=["id", "dataset", "epsilon", "delta", "description", "spent_at", "neighbours",
                     "epsilon_charged", "delta_charged"]))

    def _retry(self, fn: Callable[[], T], again: Callable[[], bool] = lambda: True) -> T:
        for attempt in range(self.retries + 1):
            try:
                return fn()
            except Exception as e:  # driver errors arrive raw from COMMIT
                if isinstance(e, (_Refused, SqlanonError)) and not isinstance(e, EngineError):
                    raise
                if attempt == self.retries or not _retryable(e) or not again():
                    raise
                time.sleep(random.uniform(0.005, 0.05) * (1 + attempt))
        raise AssertionError("unreachable")


class ReleaseBudget:
    """Charges the release of a table, DP under substitution of one record, to a ledger dataset.

    Without a dataset the release is written in a plain transaction and charged to nothing.

    1. :meth:`check` (before the work): sets the dataset's budget under substitution if
       ``budget_epsilon`` is given, and refuses a release that cannot be charged (no budget, an
       add/remove budget, not enough left);
    2. :meth:`write`: runs the work that writes the output in the transaction of the spend, so the
       output appears if and only if the budget is charged; or :meth:`charged_ahead`, for work
       that commits as it goes: the spend is committed before the first noisy row is written and
       refunded only if the work fails and what it wrote is dropped in the refund's transaction.

    Args:
        engine: the connection the output is written on; the ledger lives in its database.
        dataset: the ledger dataset to charge, or None.
        epsilon, delta: the release's guarantee under substitution.
        budget_epsilon, budget_delta: the dataset's total budget, set on first use.
        description: what the ledger row says was released.
    """

    def __init__(self, engine: Engine, dataset: str | None, epsilon: object, delta: object = 0, *,
                 budget_epsilon: object | None = None, budget_delta: object = 0,
                 description: str = "") -> None:
        if dataset is None and budget_epsilon is not None:
            raise PrivacyBudgetError("a budget needs the dataset it is kept under")
        self.engine = engine
        self.dataset = dataset
        self.epsilon, self.delta = epsilon, delta
        self.budget_epsilon, self.budget_delta = budget_epsilon, budget_delta
        self.description = description
        self.state: LedgerState | None = None
        """The ledger state after the release's spend (None before, or without a dataset)."""

    def check(self) -> None:
        """Set the budget if given, and refuse now what :meth:`write` would refuse.

        Raises:
            PrivacyBudgetError: nothing is spent and nothing written.
        """
        if self.dataset is None:
            return
        ledger = PrivacyLedger(self.engine)
        if self.budget_epsilon is not None:
            ledger.set_budget(self.dataset, self.budget_epsilon, self.budget_delta,
                              neighbours=SUBSTITUTION)
        ledger.check(self.dataset, self.epsilon, self.delta, neighbours=SUBSTITUTION)

    def write(self, work: Callable[[], T], *, once: bool = False) -> T:
        """``work()`` in one transaction, with the spend when a dataset is given.

        ``work`` must not open a transaction; ``once``: see :meth:`PrivacyLedger.spend`.

        Raises:
            PrivacyBudgetError: the budget would be exceeded; the transaction rolled back, so
                nothing was written and nothing spent.
        """
        if self.dataset is None:
            with self.engine.transaction():
                return work()
        result, self.state = PrivacyLedger(self.engine).spend(
            self.dataset, self.epsilon, self.delta, neighbours=SUBSTITUTION,
            description=self.description, then=work, once=once)
        return result  # type: ignore[return-value]

    def charged_ahead(self, work: Callable[[], T], *, discard: Callable[[], None]) -> T:
        """Commit the spend first, then run ``work``, which writes the output in transactions of
        its own (parts of it become readable before it ends).

        A process killed at any moment leaves either no noisy row or a committed spend. If
        ``work`` raises, ``discard()`` (which drops whatever ``work`` wrote) and the refund of the
        spend run in one transaction, then the error is raised; if that transaction fails, the
        spend stays charged.

        Raises:
            PrivacyBudgetError: the budget would be exceeded; nothing was spent, ``work`` not run.
        """
        ledger = PrivacyLedger(self.engine)
        if self.dataset is not None:
            _, self.state = ledger.spend(self.dataset, self.epsilon, self.delta,
                                         neighbours=SUBSTITUTION, description=self.description)
        try:
            return work()
        except BaseException as error:
            try:
                with self.engine.transaction():
                    discard()
                    if self.state is not None and self.dataset is not None:
                        assert self.state.spend_id is not None
                        ledger.refund(self.dataset, self.state.spend_id)
                self.state = None
            except Exception as failed:  # noqa: BLE001 - the spend stays charged; report why
                if sys.version_info >= (3, 11):  # exception notes are new in Python 3.11
                    error.add_note(f"the spend was not refunded: {type(failed).__name__}: {failed}")
            raise

    def as_dict(self) -> dict[str, Any]:
        """For a release's guarantee: the ledger state after the spend, or that nothing was
        charged."""
        if self.dataset is None:
            return {"dataset": None, "charged": None,
                    "note": "not charged to any privacy budget (no ledger dataset given)"}
        if self.state is None:
            return {"dataset": self.dataset, "charged": None, "note": "not written yet"}
        return self.state.as_dict()


class _Refused(Exception):
    """The conditional update matched no row: no budget, or not enough of it."""


def _if_not_exists(column: exp.ColumnDef) -> exp.ColumnDef:
    """``column`` as ``ADD COLUMN IF NOT EXISTS`` in an ``ALTER TABLE``."""
    out = column.copy()
    out.set("exists", True)
    return out


def _no_budget(dataset: str) -> PrivacyBudgetError:
    return PrivacyBudgetError(
        f"no privacy budget is set for dataset {dataset!r}; set it once with budget_epsilon= "
        f"(CLI: --budget-epsilon; spec: transformation.budget_epsilon) before the first query or "
        f"release")


def _exceeded(dataset: str, cost: Budget, relation: str, charged: Budget,
              state: LedgerState) -> PrivacyBudgetError:
    converted = "" if charged == cost else (
        f" (under {relation} neighbours, charged as epsilon={_fmt(charged.epsilon)}, "
        f"delta={_fmt(charged.delta)} under the budget's {state.neighbours} neighbours)")
    return PrivacyBudgetError(
        f"refused: spending epsilon={_fmt(cost.epsilon)}, delta={_fmt(cost.delta)}{converted} "
        f"would exceed the budget of dataset {dataset!r} (total epsilon="
        f"{_fmt(state.total.epsilon)}, delta={_fmt(state.total.delta)}; remaining "
        f"epsilon={_fmt(state.remaining.epsilon)}, delta={_fmt(state.remaining.delta)}). "
        f"Nothing was spent.")


def _fmt(value: Decimal) -> str:
    """A decimal without trailing zeros or exponent: ``0.300000000000000000`` -> ``0.3``."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _check_dataset(dataset: object) -> None:
    if not isinstance(dataset, str) or not dataset:
        raise PrivacyBudgetError(f"the dataset name must be a non-empty string, got {dataset!r}")
