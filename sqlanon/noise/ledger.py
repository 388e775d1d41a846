"""A privacy-budget ledger stored in the database it protects.

Two tables, created on first use in the connection's current schema:

- ``sqlanon_privacy_budget``: one row per dataset with its total budget (ε, δ), set once, and the
  running totals spent so far;
- ``sqlanon_privacy_ledger``: one row per spend (dataset, ε, δ, a description of the query, when).

Composition is the basic sequential theorem: the ε of all spends add up, and so do the δ
(Domingo-Ferrer, Sánchez, Soria-Comas, *Database Anonymization*, 2016, §8.1, with the correction
δ1 + δ2 for the book's δ1·δ2). Amounts are exact decimals with 18 fractional digits
(``DECIMAL(38, 18)`` on both engines): a spend is rounded up to that precision and a budget down,
so rounding can never let the sum exceed the budget.

A spend is atomic. In one transaction a conditional ``UPDATE ... SET spent = spent + x WHERE
spent + x <= total RETURNING ...`` on the dataset's budget row raises the totals only if they stay
within the budget, the ledger row is inserted, and the caller's work (the exact aggregate) runs;
then everything commits together. PostgreSQL serializes concurrent updates of the row with its row
lock and re-checks the condition against the committed totals (READ COMMITTED re-evaluation), so
two processes can never both pass the check on a stale total. DuckDB detects the write-write
conflict on the row and aborts one transaction; the ledger retries it. A DuckDB *file* admits one
writing process at a time: another process fails to open it until the first closes it, so
:func:`sqlanon.noise.dp_queries.open_database` retries the open (see docs/dp.md). A refused spend
rolls back and leaves no trace.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

from sqlglot import exp

from sqlanon.compile.sql import as_text, col, ident, lit, table
from sqlanon.errors import EngineError, SqlanonError

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine

BUDGET_TABLE = "sqlanon_privacy_budget"
LEDGER_TABLE = "sqlanon_privacy_ledger"
_QUANTUM = Decimal("1e-18")
_AMOUNT = "decimal(38, 18)"
T = TypeVar("T")


class PrivacyBudgetError(SqlanonError, ValueError):
    """The privacy budget is missing, invalid, or would be exceeded. Nothing was spent."""


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

    @property
    def remaining(self) -> Budget:
        return self.total - self.spent

    def as_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "total": self.total.as_dict(),
                "spent": self.spent.as_dict(), "remaining": self.remaining.as_dict()}


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
    return d.quantize(_QUANTUM, rounding=rounding)


def _decimal_type() -> exp.DataType:
    return exp.DataType.build(_AMOUNT)


def _dec(value: Decimal) -> exp.Expression:
    return exp.cast(lit(str(value)), _decimal_type())


def _column(name: str, kind: str, *, primary_key: bool = False, not_null: bool = True
            ) -> exp.ColumnDef:
    constraints = []
    if primary_key:
        constraints.append(exp.ColumnConstraint(kind=exp.PrimaryKeyColumnConstraint()))
    elif not_null:
        constraints.append(exp.ColumnConstraint(kind=exp.NotNullColumnConstraint()))
    return exp.ColumnDef(this=ident(name), kind=exp.DataType.build(kind), constraints=constraints)


def _retryable(error: BaseException) -> bool:
    """A concurrency failure that a fresh attempt can get past (conflict, deadlock, DDL race)."""
    for e in (error, error.__cause__):
        if e is None:
            continue
        name = type(e).__name__
        # DuplicateObject/DuplicateTable: PostgreSQL's CREATE TABLE IF NOT EXISTS racing another
        # process on the table's row type; the next attempt sees the table
        if name in ("TransactionException", "SerializationFailure", "DeadlockDetected",
                    "UniqueViolation", "LockNotAvailable", "DuplicateObject", "DuplicateTable"):
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
        """Create the two ledger tables if they do not exist yet."""
        if self._ready:
            return
        budget = [_column("dataset", "varchar", primary_key=True),
                  _column("epsilon_total", _AMOUNT), _column("delta_total", _AMOUNT),
                  _column("epsilon_spent", _AMOUNT), _column("delta_spent", _AMOUNT),
                  _column("created_at", "timestamp")]
        ledger = [_column("id", "varchar", primary_key=True), _column("dataset", "varchar"),
                  _column("epsilon", _AMOUNT), _column("delta", _AMOUNT),
                  _column("description", "varchar"), _column("spent_at", "timestamp")]
        for name, columns in ((BUDGET_TABLE, budget), (LEDGER_TABLE, ledger)):
            statement = exp.Create(this=exp.Schema(this=table(name), expressions=columns),
                                   kind="TABLE", exists=True)
            self._retry(lambda s=statement: self.engine.execute(s))
        self._ready = True

    # -- reading ----------------------------------------------------------------------------------
    def state(self, dataset: str) -> LedgerState | None:
        """The dataset's budget and spending, or None if no budget was set."""
        self.ensure_tables()
        rows = self.engine.fetch_dicts(
            exp.select(*[exp.alias_(as_text(col(c)), c, quoted=True)
                         for c in ("epsilon_total", "delta_total", "epsilon_spent", "delta_spent")])
            .from_(table(BUDGET_TABLE)).where(exp.EQ(this=col("dataset"), expression=lit(dataset))))
        if not rows:
            return None
        r = rows[0]
        return LedgerState(dataset, Budget(Decimal(r["epsilon_total"]), Decimal(r["delta_total"])),
                           Budget(Decimal(r["epsilon_spent"]), Decimal(r["delta_spent"])))

    def entries(self, dataset: str) -> list[dict[str, Any]]:
        """The spends of a dataset, oldest first: id, epsilon, delta (Decimal), description, spent_at."""
        self.ensure_tables()
        rows = self.engine.fetch_dicts(
            exp.select(col("id"), exp.alias_(as_text(col("epsilon")), "epsilon", quoted=True),
                       exp.alias_(as_text(col("delta")), "delta", quoted=True), col("description"),
                       col("spent_at"))
            .from_(table(LEDGER_TABLE)).where(exp.EQ(this=col("dataset"), expression=lit(dataset)))
            .order_by(col("spent_at"), col("id")))
        for r in rows:
            r["epsilon"], r["delta"] = Decimal(r["epsilon"]), Decimal(r["delta"])
        return rows

    # -- setting the budget -------------------------------------------------------------------------
    def set_budget(self, dataset: str, epsilon: object, delta: object = 0) -> LedgerState:
        """Set a dataset's total budget, once.

        Setting the same budget again is a no-op; a different one is refused, because raising a
        budget after answers were released would void the guarantee it stood for.

        Raises:
            PrivacyBudgetError: ε is not > 0, δ is not in [0, 1), or a different budget is set.
        """
        _check_dataset(dataset)
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
            now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(sep=" ")
            zero = _dec(Decimal(0))
            self.engine.execute(exp.insert(
                exp.values([(lit(dataset), _dec(total.epsilon), _dec(total.delta), zero, zero.copy(),
                             exp.cast(lit(now), exp.DataType.build("timestamp")))]),
                table(BUDGET_TABLE)))

        self._retry(insert)
        state = self.state(dataset)
        assert state is not None
        if state.total != total:
            raise PrivacyBudgetError(
                f"dataset {dataset!r} already has the budget epsilon={_fmt(state.total.epsilon)}, "
                f"delta={_fmt(state.total.delta)}; a budget is set once and cannot be changed "
                f"(asked for epsilon={_fmt(total.epsilon)}, delta={_fmt(total.delta)})")
        return state

    # -- spending ---------------------------------------------------------------------------------
    def spend(self, dataset: str, epsilon: object, delta: object = 0, *, description: str = "",
              then: Callable[[], T] | None = None) -> tuple[T | None, LedgerState]:
        """Record a spend of (ε, δ) on ``dataset`` and run ``then`` in the same transaction.

        The spend and ``then``'s work commit together; if ``then`` raises, nothing is spent. A
        transaction that lost a concurrency conflict is retried from the start (so ``then`` may run
        more than once; it must only read).

        Returns:
            ``then()``'s result (None without ``then``) and the ledger state after the spend.

        Raises:
            PrivacyBudgetError: no budget is set for the dataset, or the spend would exceed it; the
                message gives the amounts. Nothing is spent.
        """
        _check_dataset(dataset)
        cost = Budget(amount(epsilon, "epsilon"), amount(delta, "delta"))
        if cost.epsilon <= 0:
            raise PrivacyBudgetError(f"epsilon must be > 0, got {epsilon!r}")
        self.ensure_tables()

        def attempt() -> tuple[T | None, LedgerState]:
            with self.engine.transaction():
                row = self._raise_spent(dataset, cost)
                if row is None:
                    raise _Refused
                self._record(dataset, cost, description)
                result = then() if then is not None else None
            return result, row

        try:
            return self._retry(attempt)
        except _Refused:
            state = self.state(dataset)
            if state is None:
                raise PrivacyBudgetError(
                    f"no privacy budget is set for dataset {dataset!r}; set it once with "
                    f"budget_epsilon= (CLI: --budget-epsilon) before the first query") from None
            raise PrivacyBudgetError(
                f"refused: spending epsilon={_fmt(cost.epsilon)}, delta={_fmt(cost.delta)} "
                f"would exceed the budget of dataset {dataset!r} (total epsilon="
                f"{_fmt(state.total.epsilon)}, delta={_fmt(state.total.delta)}; remaining "
                f"epsilon={_fmt(state.remaining.epsilon)}, "
                f"delta={_fmt(state.remaining.delta)}). Nothing was spent.") from None

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

    def _record(self, dataset: str, cost: Budget, description: str) -> None:
        now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(sep=" ")
        self.engine.execute(exp.insert(
            exp.values([(lit(uuid.uuid4().hex), lit(dataset), _dec(cost.epsilon), _dec(cost.delta),
                         lit(description), exp.cast(lit(now), exp.DataType.build("timestamp")))]),
            table(LEDGER_TABLE)))

    def _retry(self, fn: Callable[[], T]) -> T:
        for attempt in range(self.retries + 1):
            try:
                return fn()
            except Exception as e:  # driver errors arrive raw from COMMIT
                if isinstance(e, (_Refused, SqlanonError)) and not isinstance(e, EngineError):
                    raise
                if attempt == self.retries or not _retryable(e):
                    raise
                time.sleep(random.uniform(0.005, 0.05) * (1 + attempt))
        raise AssertionError("unreachable")


class _Refused(Exception):
    """The conditional update matched no row: no budget, or not enough of it."""


def _fmt(value: Decimal) -> str:
    """A decimal without trailing zeros or exponent: ``0.300000000000000000`` -> ``0.3``."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _check_dataset(dataset: object) -> None:
    if not isinstance(dataset, str) or not dataset:
        raise PrivacyBudgetError(f"the dataset name must be a non-empty string, got {dataset!r}")
