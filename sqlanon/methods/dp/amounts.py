"""Exact privacy amounts, the neighbouring relations a budget is kept under, what a spend costs, and
the state of a dataset's budget.

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
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, InvalidOperation, localcontext
from fractions import Fraction
from typing import Any

from sqlanon.errors import SqlanonError

ADD_REMOVE = "add/remove"
"""Neighbouring tables differ by one added or removed row (DP aggregate queries)."""
SUBSTITUTION = "substitution"
"""Neighbouring tables differ by one substituted record (releases of whole tables)."""
NEIGHBOURS = (ADD_REMOVE, SUBSTITUTION)
ROW = "row"
"""The privacy unit of a spend or budget without a person column: neighbours differ by rows."""
_QUANTUM = Decimal("1e-18")
AMOUNT_TYPE = "decimal(38, 18)"
_LIMIT = Decimal(10) ** 20
"""The first amount DECIMAL(38, 18) cannot hold (38 digits, 18 of them fractional)."""


class PrivacyBudgetError(SqlanonError, ValueError):
    """The privacy budget is missing, invalid, or would be exceeded. Nothing was spent."""

    kind = "budget"


class ReleaseAlreadyCharged(PrivacyBudgetError):
    """A spend named a release key that the ledger already holds a charge for: the release was paid
    for once (by an earlier run with that key), so this spend is refused and nothing is charged.
    The caller gives back what the earlier run released, or picks a new key for a new release."""

    def __init__(self, dataset: str, release_key: str, spend_id: str) -> None:
        super().__init__(
            f"the release key {release_key!r} of dataset {dataset!r} was already charged (ledger "
            f"entry {spend_id}): a release is charged once per key; give back what that run released, "
            "or use a new release key for a new release")
        self.dataset, self.release_key, self.spend_id = dataset, release_key, spend_id


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
    privacy_unit: str = ROW
    """What the budget protects: :data:`ROW`, or the column identifying a person."""
    charged: Budget | None = None
    """After a spend: what that spend was charged under the budget's relation."""
    spend_id: str | None = None
    """After a spend: the id of its ledger row (what :meth:`PrivacyLedger.refund` takes back)."""

    @property
    def remaining(self) -> Budget:
        return self.total - self.spent

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dataset": self.dataset, "neighbours": self.neighbours,
                               "privacy_unit": self.privacy_unit,
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
        raise PrivacyBudgetError(f"{what} must be below 1e20 (the ledger keeps {AMOUNT_TYPE}), got "
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
        f"refused: epsilon={format_amount(cost.epsilon)}, delta={format_amount(cost.delta)} under add/remove "
        f"neighbours is (2·epsilon, (1 + e^epsilon)·delta) under substitution, and that delta is "
        f">= 1: no budget can hold it. Nothing was spent.")


def format_amount(value: Decimal) -> str:
    """A decimal without trailing zeros or exponent: ``0.300000000000000000`` -> ``0.3``."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def no_budget(dataset: str) -> PrivacyBudgetError:
    return PrivacyBudgetError(
        f"no privacy budget is set for dataset {dataset!r}; set it once with budget_epsilon= "
        f"(CLI: --budget-epsilon; spec: transformation.budget_epsilon) before the first query or "
        f"release")


def other_unit(dataset: str, kept: str, unit: str) -> PrivacyBudgetError:
    """A spend at a privacy unit the dataset's budget is not kept for."""
    def name(u: str) -> str:
        return "rows (no privacy unit)" if u == ROW else f"persons ({u!r})"
    return PrivacyBudgetError(
        f"the budget of dataset {dataset!r} is kept for {name(kept)}, and this spend is at "
        f"{name(unit)}: a budget protects one unit, and spends at another do not compose with it; "
        f"spend at {name(kept)}, or keep a budget for {name(unit)} under another dataset name")


def exceeded(dataset: str, cost: Budget, relation: str, charged: Budget,
             state: LedgerState) -> PrivacyBudgetError:
    converted = "" if charged == cost else (
        f" (under {relation} neighbours, charged as epsilon={format_amount(charged.epsilon)}, "
        f"delta={format_amount(charged.delta)} under the budget's {state.neighbours} neighbours)")
    return PrivacyBudgetError(
        f"refused: spending epsilon={format_amount(cost.epsilon)}, "
        f"delta={format_amount(cost.delta)}{converted} "
        f"would exceed the budget of dataset {dataset!r} (total epsilon="
        f"{format_amount(state.total.epsilon)}, delta={format_amount(state.total.delta)}; remaining "
        f"epsilon={format_amount(state.remaining.epsilon)}, "
        f"delta={format_amount(state.remaining.delta)}). "
        f"Nothing was spent.")


def check_dataset(dataset: object) -> None:
    if not isinstance(dataset, str) or not dataset:
        raise PrivacyBudgetError(f"the dataset name must be a non-empty string, got {dataset!r}")
