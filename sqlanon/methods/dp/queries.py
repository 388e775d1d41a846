"""``dp_query``: one differentially private aggregate, paid for from the dataset's budget.

The order of events:

1. the table, the columns, the bounds and the mechanism are checked (nothing is spent on bad input);
2. in one transaction, the ledger raises the dataset's spending if it stays within the budget
   (:class:`~sqlanon.methods.dp.budget.PrivacyLedger`), records the spend, and the engine computes the
   exact aggregate; they commit together, or neither happens;
3. only then is noise drawn (in Python, from :func:`~sqlanon.methods.rng.make_rng`) and the noisy
   answer returned. The exact value never leaves this module.

The ledger needs transactions. It lives in the queried database, or in a ledger database of its own
(``ledger=``: a DuckDB file or a PostgreSQL URL) for a database without transactions (Spark): the
aggregate then runs in the queried database inside the ledger's transaction, which commits after it
returns, so a failed aggregate spends nothing and an answer is never returned before its spend
committed. A database without transactions and no ledger of its own is refused before anything runs.

An answer is (ε, δ)-DP under add/remove neighbours. A dataset whose budget is kept under
substitution (shared with releases of whole tables) is charged (2ε, (1 + e^ε)·δ) for it
(:func:`~sqlanon.methods.dp.amounts.charge`).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.errors import EngineError, SpecError, UnsupportedError
from sqlanon.methods.dp.aggregate_noise import Noise, check_mechanism
from sqlanon.methods.dp.aggregates import Aggregate, Grouped, Histogram
from sqlanon.methods.dp.amounts import ADD_REMOVE, LedgerState, amount, check_neighbours
from sqlanon.methods.dp.bounds import check_not_data_range, require_columns
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.contribution import BOUNDED, ROW, Contribution, bounded, with_bounded
from sqlanon.methods.rng import make_rng

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine


@dataclass(frozen=True)
class DPResult:
    """A noisy answer and what it cost."""

    aggregate: str
    """``count``, ``sum``, ``mean`` or ``histogram``."""
    description: str
    value: Any
    """The noisy answer: a number, or for a histogram a list of ``{key, count}``."""
    epsilon: float
    delta: float
    mechanism: str
    ledger: LedgerState
    noise: list[dict[str, Any]]
    """Per noisy part: mechanism, sensitivity, ε (and δ) and the scale (or σ) of the noise."""
    contribution: dict[str, Any] | None = None
    """At a privacy unit: the person column and the contribution bounds (None at row level)."""

    def as_dict(self) -> dict[str, Any]:
        """``spent`` is the answer's (ε, δ) under add/remove neighbours; ``budget.charged`` what
        the budget was charged under its own relation (the same, or the substitution conversion)."""
        out = {"aggregate": self.aggregate, "query": self.description, "value": self.value,
               "mechanism": self.mechanism, "noise": self.noise,
               "spent": {"epsilon": self.epsilon, "delta": self.delta},
               "budget": self.ledger.as_dict()}
        if self.contribution is not None:
            out["contribution"] = self.contribution
        return out


CREATION_WAIT = 2.0
"""Seconds a DuckDB file without a valid header is retried: another process may be writing it."""


def open_database(target: str, *, timeout: float = 30.0, create: bool = True) -> Engine:
    """Connect to ``target``; a DuckDB file held by another process is retried until ``timeout``.

    ``create=False`` for a database that must hold data already (a table to query, budgets to
    read): a DuckDB file that does not exist is then an error naming it, not a new empty file.

    DuckDB lets one process at a time open a database file for writing; the others fail with
    "Could not set lock on file". Waiting for the holder to close it serializes ledger spends of
    several processes on one file.
    """
    from sqlanon.engines.connect import connect

    start = time.monotonic()
    deadline = start + timeout
    pause = 0.01
    while True:
        try:
            return connect(target, create=create)
        except Exception as e:
            # a file another process is creating has no valid header for a moment: wait briefly
            being_created = "not a valid duckdb database file" in str(e).lower() \
                and time.monotonic() - start < CREATION_WAIT
            if "lock" not in str(e).lower() and not being_created:
                raise
            if time.monotonic() > deadline:
                raise EngineError(f"the database {target!r} stayed locked by another process for "
                                  f"{timeout:g} s; retry when it is closed, or raise lock_timeout "
                                  f"({e})") from e
            time.sleep(pause)
            pause = min(pause * 1.5, 0.25)


def dp_query(database: Engine | str, table: str, aggregate: Aggregate, *, epsilon: float,
             delta: float = 0.0, dataset: str | None = None, budget_epsilon: float | None = None,
             budget_delta: float = 0.0, budget_neighbours: str = ADD_REMOVE,
             mechanism: str = "laplace", seed: int | None = None, trust_bounds: bool = False,
             lock_timeout: float = 30.0, ledger: Engine | str | None = None,
             release_key: str | None = None, privacy_unit: str | None = None,
             max_rows_per_person: int | None = None, max_groups_per_person: int | None = None
             ) -> DPResult:
    """Answer one aggregate of ``table`` with (ε, δ)-differential privacy, charged to ``dataset``.

    Args:
        database: an open engine, or a DuckDB file path / ``postgresql://`` URL to open (and close).
        table: the table to query (one identifier).
        aggregate: :class:`~sqlanon.methods.dp.aggregates.Count`, ``Sum``, ``Mean`` or ``Histogram``.
        epsilon: the ε this answer spends (> 0).
        delta: the δ it spends (only with ``mechanism="gaussian"``).
        dataset: the name the budget is kept under (default: the table's name). Tables holding
            the same people must share one dataset name, or their budgets do not compose.
        budget_epsilon, budget_delta: the dataset's total budget, set on first use; giving a
            different one later is refused.
        budget_neighbours: the relation the budget is kept under when it is set here:
            ``"add/remove"`` (the answers' own) or ``"substitution"`` (to share the budget with
            releases of whole tables; each answer is then charged (2ε, (1 + e^ε)·δ)). Set once,
            with the budget.
        mechanism: ``"laplace"`` (discrete Laplace for counts, snapped Laplace for sums) or
            ``"gaussian"``.
        seed: makes the noise reproducible (with a warning); default cryptographically seeded.
        trust_bounds: accept bounds equal to the data's minimum and maximum
            (:func:`~sqlanon.methods.dp.bounds.check_not_data_range`).
        lock_timeout: seconds to wait for a DuckDB file another process holds.
        ledger: where the budget ledger is kept, when not in ``database``: an open engine, or a
            DuckDB file path (created on first use) / ``postgresql://`` URL to open (and close).
            Required when ``database`` has no transactions (Spark).
        release_key: charge this answer once per key: a key the dataset was charged for before
            is refused with :class:`~sqlanon.methods.dp.amounts.ReleaseAlreadyCharged` (the caller
            keeps the answer it was given then; docs/dp.md, release keys).
        privacy_unit: the column identifying a person: neighbours then differ by all the rows of
            one person, each person's contribution is bounded in SQL and the sensitivities scaled
            (:mod:`~sqlanon.methods.dp.contribution`); the spend is recorded at that unit.
        max_rows_per_person: with ``privacy_unit`` (required there): rows kept per person (per
            person and key for a histogram or an aggregate per key), chosen at random.
        max_groups_per_person: with ``privacy_unit``, for a histogram or an aggregate per key
            (required there): keys kept per person, chosen at random among the listed ones.

    Raises:
        SpecError: unknown table or column, bad bounds, mechanism or parameters.
        UnsupportedError: ``database`` has no transactions and no ``ledger`` is given, or the
            ledger's database has none.
        PrivacyBudgetError: no budget, a different budget or relation, or the answer would
            exceed the budget; nothing is spent.
    """
    check_mechanism(mechanism, float(delta))
    check_neighbours(budget_neighbours, "budget_neighbours")
    bound = _contribution(aggregate, privacy_unit, max_rows_per_person, max_groups_per_person)
    with contextlib.ExitStack() as opened:
        engine = _opened(opened, database, lock_timeout, create=False)
        if ledger is None:
            _check_ledger(engine, None)
            books = engine
        else:
            books = _opened(opened, ledger, lock_timeout, create=True)
            _check_ledger(books, ledger)
        return _run(engine, books, table, aggregate, epsilon, delta, dataset, budget_epsilon,
                    budget_delta, budget_neighbours, mechanism, seed, trust_bounds, release_key,
                    bound)
    raise AssertionError("unreachable")  # pragma: no cover - mypy cannot see the with returns


def _contribution(aggregate: Aggregate, unit: str | None, max_rows: int | None,
                  max_groups: int | None) -> Contribution | None:
    """The contribution bounds at a privacy unit; None at row level (where bounds are refused)."""
    if unit is None:
        if max_rows is not None or max_groups is not None:
            raise SpecError("max_rows_per_person and max_groups_per_person bound a person's rows: "
                            "they need privacy_unit (the column identifying a person)",
                            path="privacy_unit")
        return None
    if max_rows is None:
        raise SpecError("a query at a privacy unit needs max_rows_per_person: the public number "
                        "of rows kept per person (CLI --max-rows-per-person)",
                        path="max_rows_per_person")
    bound = Contribution(unit, max_rows, max_groups)
    bound.check_grouping(isinstance(aggregate, (Histogram, Grouped)))
    return bound


def _opened(stack: contextlib.ExitStack, target: Engine | str, timeout: float, *, create: bool
            ) -> Engine:
    """``target`` itself, or the database it names, opened and closed with ``stack``."""
    if not isinstance(target, str):
        return target
    engine = open_database(target, timeout=timeout, create=create)
    stack.callback(engine.close)
    return engine


def _check_ledger(books: Engine, ledger: Engine | str | None) -> None:
    """Refuse a ledger database without transactions, saying where to keep the ledger instead."""
    if books.capabilities.transactional_ddl:
        return
    if ledger is None:
        raise UnsupportedError(
            f"the privacy-budget ledger needs transactions, which {books.name} does not have (a "
            "spend and the answer it pays for must commit together, or neither): keep the ledger in "
            "a database of its own with --ledger FILE.duckdb or --ledger postgresql://... (Python: "
            "ledger=); the aggregate still runs here")
    raise UnsupportedError(f"the ledger cannot be kept on {books.name}: it needs transactions; "
                           "name a DuckDB file or a postgresql:// URL")


def _run(engine: Engine, books: Engine, table: str, aggregate: Aggregate, epsilon: float,
         delta: float, dataset: str | None, budget_epsilon: float | None, budget_delta: float,
         budget_neighbours: str, mechanism: str, seed: int | None, trust_bounds: bool,
         release_key: str | None, bound: Contribution | None = None) -> DPResult:
    if not isinstance(aggregate, Aggregate):
        raise SpecError(f"aggregate must be Count, Sum, Mean, Histogram or Grouped, got {aggregate!r}",
                        path="aggregate")
    eps = float(amount(epsilon, "epsilon"))
    if eps <= 0:
        raise SpecError(f"epsilon must be > 0, got {epsilon!r}", path="epsilon")
    require_columns(engine, table, aggregate.columns(), relation_path="table", column_path="column")
    if bound is not None:
        require_columns(engine, table, (bound.column,), relation_path="table",
                        column_path="privacy_unit")
    check_not_data_range(engine, table, aggregate.bounds(), trust_bounds=trust_bounds)
    rng = make_rng(seed)
    ledger = PrivacyLedger(books)
    name = dataset if dataset is not None else table
    unit = ROW if bound is None else bound.column
    if budget_epsilon is not None:
        ledger.set_budget(name, budget_epsilon, budget_delta, neighbours=budget_neighbours,
                          privacy_unit=unit)
    description = f"{aggregate.describe()} on table {table!r} ({mechanism})"
    if bound is not None:
        description += f" per person ({unit!r}, {_bounds_text(bound)})"
    query = exact_query(engine, table, aggregate, bound, rng.bytes(16).hex() if bound else "")
    rows, state = ledger.spend(name, epsilon, delta, neighbours=ADD_REMOVE, description=description,
                               then=lambda: engine.fetch(query)[1], release_key=release_key,
                               privacy_unit=unit)
    assert rows is not None  # spend ran ``then``
    noise = Noise(mechanism, eps, float(delta), rng, (1.0, 1.0) if bound is None else bound.factors())
    value = aggregate.release(rows, noise)
    return DPResult(aggregate.kind, description, value, eps, float(delta), mechanism, state,
                    aggregate.noise_parameters(noise), None if bound is None else bound.describe())


def exact_query(engine: Engine, table: str, aggregate: Aggregate, bound: Contribution | None,
                key: str) -> exp.Select:
    """The exact aggregate's query: over ``table``, or at a privacy unit over its rows after
    bounding each person's contribution, chosen by the secret ``key``
    (:func:`~sqlanon.methods.dp.contribution.bounded`)."""
    if bound is None:
        return aggregate.query(table)
    keys = (aggregate.group_by, aggregate.keys) if isinstance(aggregate, (Histogram, Grouped)) else None
    rows = bounded(table, bound, aggregate.columns(), key, engine.dialect, keys)
    return with_bounded(aggregate.query(BOUNDED), rows)


def _bounds_text(bound: Contribution) -> str:
    groups = "" if bound.max_groups is None else f", at most {bound.max_groups} keys"
    return f"at most {bound.max_rows} rows{groups}"
