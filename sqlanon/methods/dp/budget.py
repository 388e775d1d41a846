"""A privacy-budget ledger stored in the database it protects.

Two tables, created on first use in the connection's current schema:

- ``sqlanon_privacy_budget``: one row per dataset with its total budget (ε, δ), the neighbouring
  relation and privacy unit it is kept under, set once, and the running totals spent so far;
- ``sqlanon_privacy_ledger``: one row per spend (dataset, ε, δ and the relation and unit they hold
  under, the amounts charged, a description of the query or release, when). A spend at another
  privacy unit than the budget's is refused.

What a spend costs under each neighbouring relation, and how spends compose:
:mod:`sqlanon.methods.dp.amounts`.

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

Tables of earlier versions are migrated on first use: the missing columns are added (``ALTER TABLE
... ADD COLUMN IF NOT EXISTS``); old budgets and spends count as add/remove at row level, charged
what they spent.
"""

from __future__ import annotations

import functools
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from decimal import ROUND_FLOOR, Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from sqlglot import exp

from sqlanon.errors import EngineError, SqlanonError
from sqlanon.methods.dp.amounts import (
    ADD_REMOVE,
    ROW,
    Budget,
    LedgerState,
    PrivacyBudgetError,
    ReleaseAlreadyCharged,
    amount,
    charge,
    check_dataset,
    check_neighbours,
    exceeded,
    format_amount,
    no_budget,
    other_unit,
)
from sqlanon.methods.dp.ledger_tables import (
    BUDGET_TABLE,
    LEDGER_TABLE,
    added_columns,
    amount_literal,
    create_tables,
    migration,
    now_literal,
    release_id,
    spend_update,
)
from sqlanon.sql.nodes import as_expression, as_text, col, lit, table

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine

T = TypeVar("T")


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
        for statement in create_tables():
            self._retry(functools.partial(self.engine.execute, statement))
        missing = {name: [c for c in columns if c.name not in have]
                   for name, columns in added_columns().items()
                   for have in [{n.lower() for n, _ in self.engine.columns(name)}]}
        if any(missing.values()):
            self._retry(lambda: self._migrate(missing))
        self._ready = True

    def _migrate(self, missing: dict[str, list[exp.ColumnDef]]) -> None:
        """Add the missing columns in one transaction; a concurrent migration is harmless (``IF NOT
        EXISTS``, and the update only fills what is still empty)."""
        with self.engine.transaction():
            for statement in migration(missing):
                self.engine.execute(statement)

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
                        col("neighbours"), col("privacy_unit"))
             .from_(table(BUDGET_TABLE)).order_by(col("dataset")))
        if dataset is not None:
            q = q.where(exp.EQ(this=col("dataset"), expression=lit(dataset)))
        return {r["dataset"]: LedgerState(
                    r["dataset"], Budget(Decimal(r["epsilon_total"]), Decimal(r["delta_total"])),
                    Budget(Decimal(r["epsilon_spent"]), Decimal(r["delta_spent"])),
                    r["neighbours"] or ADD_REMOVE, r["privacy_unit"] or ROW)
                for r in self.engine.fetch_dicts(q)}

    def entries(self, dataset: str) -> list[dict[str, Any]]:
        """The spends of a dataset, oldest first: id, epsilon, delta (Decimal; as spent, under
        ``neighbours``), neighbours, epsilon_charged, delta_charged (Decimal; what the budget was
        charged), description, spent_at, release_key (or None)."""
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
                       col("description"), col("spent_at"), col("release_key"), col("privacy_unit"))
            .from_(table(LEDGER_TABLE)).where(exp.EQ(this=col("dataset"), expression=lit(dataset)))
            .order_by(col("spent_at"), col("id")))
        for r in rows:
            for key in ("epsilon", "delta", "epsilon_charged", "delta_charged"):
                r[key] = Decimal(r[key])
            r["neighbours"] = r["neighbours"] or ADD_REMOVE
            r["privacy_unit"] = r["privacy_unit"] or ROW
        return rows

    # -- setting the budget -------------------------------------------------------------------------
    def set_budget(self, dataset: str, epsilon: object, delta: object = 0, *,
                   neighbours: str = ADD_REMOVE, privacy_unit: str = ROW) -> LedgerState:
        """Set a dataset's total budget, the neighbouring relation and privacy unit it is kept
        under (:data:`ROW`, or the column identifying a person), once.

        Setting the same budget again is a no-op; a different one (or relation) is refused, because
        raising a budget after answers were released would void the guarantee it stood for.

        Raises:
            PrivacyBudgetError: ε is not > 0, δ is not in [0, 1), an unknown relation, or a
                different budget is set.
        """
        check_dataset(dataset)
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
            zero = amount_literal(Decimal(0))
            self.engine.execute(exp.insert(
                exp.values([(lit(dataset), amount_literal(total.epsilon), amount_literal(total.delta),
                             zero, zero.copy(), now_literal(), lit(relation), lit(privacy_unit))]),
                table(BUDGET_TABLE),
                columns=["dataset", "epsilon_total", "delta_total", "epsilon_spent", "delta_spent",
                         "created_at", "neighbours", "privacy_unit"]))

        self._retry(insert)
        state = self.state(dataset)
        assert state is not None
        if state.privacy_unit != privacy_unit:
            raise other_unit(dataset, state.privacy_unit, privacy_unit)
        if state.total != total or state.neighbours != relation:
            raise PrivacyBudgetError(
                f"dataset {dataset!r} already has the budget epsilon={format_amount(state.total.epsilon)}, "
                f"delta={format_amount(state.total.delta)} under {state.neighbours} neighbours; a budget is "
                f"set once and cannot be changed (asked for epsilon={format_amount(total.epsilon)}, "
                f"delta={format_amount(total.delta)} under {relation} neighbours)")
        return state

    # -- spending ---------------------------------------------------------------------------------
    def check(self, dataset: str, epsilon: object, delta: object = 0, *,
              neighbours: str = ADD_REMOVE, privacy_unit: str = ROW) -> Budget:
        """What :meth:`spend` would charge now, without spending: refuses as it would.

        A check promises nothing: the budget may be spent by someone else before the spend, which
        decides. It lets a caller refuse before doing expensive work.

        Raises:
            PrivacyBudgetError: as :meth:`spend`.
        """
        cost, relation, state, charged = self._prepare(dataset, epsilon, delta, neighbours,
                                                       privacy_unit)
        if not charged.fits_in(state.remaining):
            raise exceeded(dataset, cost, relation, charged, state)
        return charged

    def spend(self, dataset: str, epsilon: object, delta: object = 0, *,
              neighbours: str = ADD_REMOVE, description: str = "",
              then: Callable[[], T] | None = None, once: bool = False,
              release_key: str | None = None, privacy_unit: str = ROW
              ) -> tuple[T | None, LedgerState]:
        """Record a spend of (ε, δ) on ``dataset`` and run ``then`` in the same transaction.

        ``neighbours`` is the relation under which the spend is (ε, δ)-DP; the budget is charged
        under its own relation (:func:`charge`). The spend and ``then``'s work commit together; if
        ``then`` raises, nothing is spent. ``then`` must not open a transaction of its own. A
        transaction that lost a concurrency conflict is retried from the start, so ``then`` may run
        more than once (its statements were rolled back); with ``once`` a conflict after ``then``
        started is raised instead (for work that consumes its input). ``release_key`` charges the
        spend at most once per key and dataset: the ledger row's id follows from the key, and a
        key charged before (by any process) is refused with :class:`ReleaseAlreadyCharged`. A spend
        at another ``privacy_unit`` than the budget's is refused.

        Returns:
            ``then()``'s result (None without ``then``) and the ledger state after the spend, with
            the amount charged.

        Raises:
            PrivacyBudgetError: no budget is set for the dataset, a substitution spend on an
                add/remove budget, or the spend would exceed the budget; the message gives the
                amounts. Nothing is spent.
            ReleaseAlreadyCharged: ``release_key`` was charged before; nothing is spent.
        """
        self.refuse_charged_key(dataset, release_key)
        cost, relation, state, charged = self._prepare(dataset, epsilon, delta, neighbours,
                                                       privacy_unit)
        if not charged.fits_in(state.total):  # never fits; also keeps the SQL amounts in range
            raise exceeded(dataset, cost, relation, charged, state)
        started = False
        spend_id = uuid.uuid4().hex if release_key is None else release_id(dataset, release_key)

        def attempt() -> tuple[T | None, LedgerState]:
            nonlocal started
            with self.engine.transaction():
                self.refuse_charged_key(dataset, release_key)
                row = self._raise_spent(dataset, charged)
                if row is None:
                    raise _Refused
                self._record(spend_id, dataset, cost, relation, charged, description, release_key,
                             privacy_unit)
                started = True
                result = then() if then is not None else None
            return result, replace(row, neighbours=state.neighbours, charged=charged,
                                   spend_id=spend_id, privacy_unit=state.privacy_unit)

        try:
            return self._retry(attempt, again=lambda: not (once and started))
        except _Refused:
            now = self.state(dataset)
            if now is None:
                raise no_budget(dataset) from None
            raise exceeded(dataset, cost, relation, charged, now) from None

    def _prepare(self, dataset: str, epsilon: object, delta: object, neighbours: str,
                 unit: str = ROW) -> tuple[Budget, str, LedgerState, Budget]:
        """The spend's amounts and relation, the budget's state, and the charge; refuses a spend
        without a budget, at another privacy unit, or under a relation the budget cannot take."""
        check_dataset(dataset)
        relation = check_neighbours(neighbours)
        cost = Budget(amount(epsilon, "epsilon"), amount(delta, "delta"))
        if cost.epsilon <= 0:
            raise PrivacyBudgetError(f"epsilon must be > 0, got {epsilon!r}")
        self.ensure_tables()
        state = self.state(dataset)
        if state is None:
            raise no_budget(dataset)
        if state.privacy_unit != unit:
            raise other_unit(dataset, state.privacy_unit, unit)
        return cost, relation, state, charge(cost, relation, state.neighbours, dataset)

    def _raise_spent(self, dataset: str, cost: Budget) -> LedgerState | None:
        """The conditional update of the budget row; None when it would exceed the budget."""
        update = spend_update(dataset, cost.epsilon, cost.delta)
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
        check_dataset(dataset)
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
        self.engine.execute(spend_update(dataset, -epsilon, -delta, checked=False))
        return True

    def refuse_charged_key(self, dataset: str, release_key: str | None) -> None:
        """Raise :class:`ReleaseAlreadyCharged` if ``release_key`` was charged on ``dataset``.

        Raises:
            PrivacyBudgetError: the key is not non-empty text.
        """
        if release_key is None:
            return
        if not isinstance(release_key, str) or not release_key:
            raise PrivacyBudgetError(f"a release key must be non-empty text, got {release_key!r}")
        self.ensure_tables()
        spend_id = release_id(dataset, release_key)
        if self.engine.fetch(exp.select(col("id")).from_(table(LEDGER_TABLE)).where(
                exp.EQ(this=col("id"), expression=lit(spend_id))))[1]:
            raise ReleaseAlreadyCharged(dataset, release_key, spend_id)

    def _record(self, spend_id: str, dataset: str, cost: Budget, relation: str, charged: Budget,
                description: str, release_key: str | None = None, unit: str = ROW) -> None:
        self.engine.execute(exp.insert(
            exp.values([(lit(spend_id), lit(dataset), amount_literal(cost.epsilon),
                         amount_literal(cost.delta), lit(description), now_literal(), lit(relation),
                         amount_literal(charged.epsilon), amount_literal(charged.delta),
                         exp.null() if release_key is None else lit(release_key), lit(unit))]),
            table(LEDGER_TABLE),
            columns=["id", "dataset", "epsilon", "delta", "description", "spent_at", "neighbours",
                     "epsilon_charged", "delta_charged", "release_key", "privacy_unit"]))

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


class _Refused(Exception):
    """The conditional update matched no row: no budget, or not enough of it."""
