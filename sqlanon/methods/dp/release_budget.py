"""Charging the release of a whole table (DP under substitution of one record) to a ledger dataset."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from sqlanon.errors import UnsupportedError
from sqlanon.methods.dp.amounts import ROW, SUBSTITUTION, LedgerState, PrivacyBudgetError
from sqlanon.methods.dp.budget import PrivacyLedger

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine

T = TypeVar("T")


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

    With the ledger in a database of its own (``ledger``), no transaction holds both the spend and
    the output: :meth:`write` charges ahead too. The spend commits in the ledger's database first;
    if the work fails, what it wrote is rolled back (or dropped) first and the spend refunded after,
    so a process killed in between leaves the budget charged for an output that never appeared
    (never the reverse).

    Args:
        engine: the connection the output is written on; the ledger lives in its database.
        dataset: the ledger dataset to charge, or None.
        epsilon, delta: the release's guarantee under substitution.
        budget_epsilon, budget_delta: the dataset's total budget, set on first use.
        description: what the ledger row says was released.
        ledger: the connection of the database the ledger lives in, when not ``engine``'s (which
            then needs no transactions).
        release_key: charge the release once per key: a key charged before (an earlier run of the
            same release, say) is refused by :meth:`check` and :meth:`write` with
            :class:`~sqlanon.methods.dp.amounts.ReleaseAlreadyCharged` before anything is written.
    """

    def __init__(self, engine: Engine, dataset: str | None, epsilon: object, delta: object = 0, *,
                 budget_epsilon: object | None = None, budget_delta: object = 0,
                 description: str = "", ledger: Engine | None = None,
                 release_key: str | None = None, privacy_unit: str = ROW) -> None:
        if dataset is None and (budget_epsilon is not None or release_key is not None):
            raise PrivacyBudgetError("a budget or a release key needs the dataset it is kept under")
        self.engine = engine
        self.books = engine if ledger is None else ledger
        """Where the ledger lives."""
        self.dataset = dataset
        self.epsilon, self.delta = epsilon, delta
        self.budget_epsilon, self.budget_delta = budget_epsilon, budget_delta
        self.description = description
        self.release_key = release_key
        self.unit = privacy_unit
        """What the release protects (:data:`~sqlanon.methods.dp.amounts.ROW`, or a person column)."""
        self.state: LedgerState | None = None
        """The ledger state after the release's spend (None before, or without a dataset)."""

    def check(self) -> None:
        """Set the budget if given, and refuse now what :meth:`write` would refuse.

        Raises:
            PrivacyBudgetError: nothing is spent and nothing written.
        """
        if self.dataset is None:
            return
        if not self.books.capabilities.transactional_ddl:
            raise UnsupportedError(
                f"the privacy-budget ledger needs transactions, which {self.books.name} does not "
                "have: keep it in a database of its own (a DuckDB file or a postgresql:// URL)")
        ledger = PrivacyLedger(self.books)
        ledger.refuse_charged_key(self.dataset, self.release_key)  # paid for: no budget needed
        if self.budget_epsilon is not None:
            ledger.set_budget(self.dataset, self.budget_epsilon, self.budget_delta,
                              neighbours=SUBSTITUTION, privacy_unit=self.unit)
        ledger.check(self.dataset, self.epsilon, self.delta, neighbours=SUBSTITUTION,
                     privacy_unit=self.unit)

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
        if self.books is not self.engine:  # a failed work rolls back: nothing to discard

            def in_transaction() -> T:
                with self._output_transaction():
                    return work()

            return self.charged_ahead(in_transaction, discard=lambda: None)
        result, self.state = PrivacyLedger(self.engine).spend(
            self.dataset, self.epsilon, self.delta, neighbours=SUBSTITUTION,
            description=self.description, then=work, once=once, release_key=self.release_key,
            privacy_unit=self.unit)
        return result  # type: ignore[return-value]

    def charged_ahead(self, work: Callable[[], T], *, discard: Callable[[], None]) -> T:
        """Commit the spend first, then run ``work``, which writes the output in transactions of
        its own (parts of it become readable before it ends).

        A process killed at any moment leaves either no noisy row or a committed spend. If
        ``work`` raises, ``discard()`` (which drops whatever ``work`` wrote) and the refund of the
        spend run in one transaction (with the ledger apart: the discard first, then the refund),
        then the error is raised; if that fails, the spend stays charged.

        Raises:
            PrivacyBudgetError: the budget would be exceeded; nothing was spent, ``work`` not run.
        """
        ledger = PrivacyLedger(self.books)
        if self.dataset is not None:
            _, self.state = ledger.spend(self.dataset, self.epsilon, self.delta,
                                         neighbours=SUBSTITUTION, description=self.description,
                                         release_key=self.release_key, privacy_unit=self.unit)
        apart = self.books is not self.engine
        try:
            return work()
        except BaseException as error:
            try:
                if apart:  # the output's database first: a kill in between leaves the charge
                    with self._output_transaction():
                        discard()
                with self.books.transaction():
                    if not apart:
                        discard()
                    if self.state is not None and self.dataset is not None:
                        assert self.state.spend_id is not None
                        ledger.refund(self.dataset, self.state.spend_id)
                self.state = None
            except Exception as failed:  # noqa: BLE001 - the spend stays charged; report why
                if sys.version_info >= (3, 11):  # exception notes are new in Python 3.11
                    error.add_note(f"the spend was not refunded: {type(failed).__name__}: {failed}")
            raise

    @contextlib.contextmanager
    def _output_transaction(self) -> Iterator[None]:
        """A transaction of the output's database, if it has them."""
        if self.engine.capabilities.transactional_ddl:
            with self.engine.transaction():
                yield
        else:
            yield

    def as_dict(self) -> dict[str, Any]:
        """For a release's guarantee: the ledger state after the spend, or that nothing was
        charged."""
        if self.dataset is None:
            return {"dataset": None, "charged": None,
                    "note": "not charged to any privacy budget (no ledger dataset given)"}
        if self.state is None:
            return {"dataset": self.dataset, "charged": None, "note": "not written yet"}
        return self.state.as_dict()


@contextlib.contextmanager
def open_ledger(target: str | None) -> Iterator[Engine | None]:
    """The database a spec's ``transformation.ledger`` names, opened for the release and closed
    after it (a DuckDB file is created on first use); None without one (the ledger lives in the
    output's database)."""
    if target is None:
        yield None
        return
    from sqlanon.methods.dp.queries import open_database

    engine = open_database(target, create=True)
    try:
        if not engine.capabilities.transactional_ddl:
            raise UnsupportedError(f"transformation.ledger: the ledger cannot be kept on {engine.name}: "
                                   "it needs transactions; name a DuckDB file or a postgresql:// URL")
        yield engine
    finally:
        engine.close()
