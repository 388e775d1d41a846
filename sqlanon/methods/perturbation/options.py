"""The ``transformation: {method: noise, ...}`` settings, checked once into a :class:`NoiseOptions`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.methods.dp.mechanisms import check_delta, check_epsilon, rr_epsilon

ADDITIVE = ("uncorrelated", "correlated", "laplace", "discrete_laplace", "gaussian", "staircase")
"""Mechanisms whose noise does not depend on the values: drawn in numpy, added in SQL."""
PER_ROW = ("rank_swap", "pram", "invariant_pram", "randomized_response", "condensation")
"""Mechanisms that read the values: columns pulled, transformed in numpy, written back."""
DP_MICRODATA = "dp_microaggregation"
"""ε-DP microdata through microaggregation (:func:`sqlanon.methods.dp.microdata.dp_microaggregate`)."""
MECHANISMS = ADDITIVE + PER_ROW + ("sampling", DP_MICRODATA)
DP_ORDERS = ("individual_ranking", "insensitive")
CATEGORICAL = ("pram", "invariant_pram", "randomized_response")

_KEYS = {
    "uncorrelated": ("alpha",),
    "correlated": ("alpha",),
    "laplace": ("epsilon", "sensitivity", "bounds"),
    "discrete_laplace": ("epsilon", "sensitivity"),
    "gaussian": ("epsilon", "delta", "sensitivity"),
    "staircase": ("epsilon", "sensitivity", "gamma"),
    "rank_swap": ("p",),
    "pram": ("matrix",),
    "invariant_pram": ("pd", "alpha", "theta"),
    "randomized_response": ("epsilon", "keep_probability", "categories"),
    "condensation": ("k",),
    "sampling": ("fraction",),
    DP_MICRODATA: ("k", "epsilon", "bounds", "order", "trust_bounds"),
}
_COMMON = ("mechanism", "attributes", "seed", "linkage")
CHARGEABLE = ("laplace", "discrete_laplace", "gaussian", "staircase", "randomized_response",
              DP_MICRODATA)
"""Mechanisms whose release is DP under substitution of one record and can be charged to a
privacy-budget ledger dataset (docs/dp.md)."""
LEDGER_KEYS = ("dataset", "budget_epsilon", "budget_delta", "ledger", "release_key")
NOISE_KEYS = tuple(dict.fromkeys((*_COMMON, *(k for keys in _KEYS.values() for k in keys), *LEDGER_KEYS)))
"""Every ``transformation`` key some mechanism reads."""


@dataclass(frozen=True)
class LedgerOptions:
    """The ledger dataset a DP release is charged to, and its budget if the spec sets it."""

    dataset: str
    budget_epsilon: float | None = None
    budget_delta: float = 0.0
    ledger: str | None = None
    """The database the ledger lives in (a DuckDB file or a ``postgresql://`` URL), when not the
    output's."""
    release_key: str | None = None
    """Charges the release once per key (docs/dp.md, release keys)."""


@dataclass(frozen=True)
class NoiseOptions:
    """One noise step: the mechanism, the attributes it perturbs and its parameters."""

    mechanism: str
    attributes: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    linkage: bool = True
    ledger: LedgerOptions | None = None
    """Where the release is charged (``dataset``, ``budget_epsilon``, ``budget_delta``), if anywhere."""

    def sensitivity(self, attribute: str) -> float:
        s = self.params["sensitivity"]
        return s[attribute] if isinstance(s, dict) else s


def _where(key: str) -> str:
    return f"transformation.{key}"


def _number(value: Any, key: str, *, low: float | None = None, high: float | None = None,
            low_open: bool = False, integer: bool = False) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if ok and integer:
        ok = float(value).is_integer()
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        kind = "an integer" if integer else "a number"
        lo = "" if low is None else f" {'>' if low_open else '>='} {low:g}"
        hi = "" if high is None else f" and <= {high:g}"
        raise SpecError(f"must be {kind}{lo}{hi}, got {value!r}", path=_where(key))
    return int(value) if integer else float(value)


def _per_attribute(value: Any, key: str, attributes: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise SpecError("must map each attribute to its setting", path=_where(key))
    missing = [a for a in attributes if a not in value]
    extra = [str(a) for a in value if a not in attributes]
    if missing:
        raise SpecError(f"has no entry for attribute {missing[0]!r}", path=_where(key))
    if extra:
        raise SpecError(f"names {extra[0]!r}, which is not in transformation.attributes",
                        path=_where(key))
    return dict(value)


def _sensitivity(value: Any, attributes: tuple[str, ...], *, integer: bool) -> Any:
    if value is None:
        raise SpecError("is required: the largest change of a value when one record changes "
                        "(a number, or one per attribute)", path=_where("sensitivity"))
    if isinstance(value, Mapping):
        return {a: _number(v, f"sensitivity.{a}", low=0, low_open=True, integer=integer)
                for a, v in _per_attribute(value, "sensitivity", attributes).items()}
    return _number(value, "sensitivity", low=0, low_open=True, integer=integer)


def _bounds(value: Any, attributes: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    if value is None:
        raise SpecError("is required for laplace: a public [low, high] per attribute, fixed "
                        "without looking at the data", path=_where("bounds"))
    out = {}
    for a, pair in _per_attribute(value, "bounds", attributes).items():
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise SpecError(f"must be [low, high], got {pair!r}", path=_where(f"bounds.{a}"))
        low = _number(pair[0], f"bounds.{a}")
        high = _number(pair[1], f"bounds.{a}")
        if not low < high:
            raise SpecError(f"low must be below high, got {pair!r}", path=_where(f"bounds.{a}"))
        out[a] = (low, high)
    return out


def _matrix(value: Any, attributes: tuple[str, ...]) -> dict[str, tuple[list[Any], list[list[float]]]]:
    """``{attribute: {from: {to: probability}}}`` -> categories and a row-stochastic matrix."""
    if value is None:
        raise SpecError("is required for pram: per attribute, {from: {to: probability}}",
                        path=_where("matrix"))
    out = {}
    for a, rows in _per_attribute(value, "matrix", attributes).items():
        where = f"matrix.{a}"
        if not isinstance(rows, Mapping) or len(rows) < 2:
            raise SpecError("must map each of at least 2 categories to its row "
                            "{category: probability}", path=_where(where))
        cats = list(rows)
        matrix = []
        for c in cats:
            row = rows[c]
            if not isinstance(row, Mapping):
                raise SpecError(f"must be a mapping {{category: probability}}, got {row!r}",
                                path=_where(f"{where}.{c}"))
            unknown = [t for t in row if t not in rows]
            if unknown:
                raise SpecError(f"names {unknown[0]!r}, which has no row of its own",
                                path=_where(f"{where}.{c}"))
            matrix.append([_number(row.get(t, 0.0), f"{where}.{c}.{t}", low=0, high=1)
                           for t in cats])
            total = sum(matrix[-1])
            if abs(total - 1.0) > 1e-9:
                raise SpecError(f"probabilities sum to {total:.12g}, not 1",
                                path=_where(f"{where}.{c}"))
        out[a] = (cats, matrix)
    return out


def parse(options: Mapping[str, Any]) -> NoiseOptions:
    """Check the noise settings of a spec's transformation.

    Raises:
        SpecError: an unknown mechanism, a missing or misplaced parameter, or a value out of range;
            the message names the key.
    """
    mechanism = options.get("mechanism")
    if mechanism not in MECHANISMS:
        raise SpecError(f"must be one of {', '.join(MECHANISMS)}, got {mechanism!r}."
                        + did_you_mean(str(mechanism), MECHANISMS), path=_where("mechanism"))
    if mechanism not in CHARGEABLE:
        for key in LEDGER_KEYS:
            if key in options:
                raise SpecError(f"{mechanism} releases no differential-privacy guarantee, so there "
                                "is nothing to charge to a privacy budget; a ledger dataset applies "
                                f"to {', '.join(CHARGEABLE)}", path=_where(key))
    allowed = set(_COMMON) | set(_KEYS[mechanism]) | set(LEDGER_KEYS)
    for key in options:
        if key not in allowed:
            raise SpecError(f"does not apply to mechanism {mechanism}; it takes "
                            f"{', '.join(sorted(allowed - {'mechanism'}))}", path=_where(key))
    raw_attrs = options.get("attributes")
    if mechanism == "sampling":
        attributes: tuple[str, ...] = ()
        if raw_attrs is not None:
            raise SpecError("sampling keeps whole rows; it takes no attributes",
                            path=_where("attributes"))
    else:
        if isinstance(raw_attrs, str):
            raw_attrs = [raw_attrs]
        if not isinstance(raw_attrs, (list, tuple)) or not raw_attrs \
                or not all(isinstance(a, str) for a in raw_attrs):
            raise SpecError("must list the attributes to perturb", path=_where("attributes"))
        if len(set(raw_attrs)) != len(raw_attrs):
            raise SpecError("lists an attribute twice", path=_where("attributes"))
        attributes = tuple(raw_attrs)

    p: dict[str, Any] = {}
    if mechanism in ("uncorrelated", "correlated"):
        p["alpha"] = _number(options.get("alpha", 0.5), "alpha", low=0, low_open=True)
    if mechanism in ("laplace", "gaussian", "staircase", "discrete_laplace"):
        p["epsilon"] = _checked(check_epsilon, options.get("epsilon"), "epsilon")
        p["sensitivity"] = _sensitivity(options.get("sensitivity"), attributes,
                                        integer=mechanism == "discrete_laplace")
    if mechanism == "laplace":
        p["bounds"] = _bounds(options.get("bounds"), attributes)
    if mechanism == "gaussian":
        p["delta"] = _checked(check_delta, options.get("delta"), "delta")
    if mechanism == "staircase" and options.get("gamma") is not None:
        p["gamma"] = _number(options["gamma"], "gamma", low=0, high=1)
    if mechanism == "rank_swap":
        p["p"] = _number(options.get("p", 5), "p", low=0, low_open=True, high=100)
    if mechanism == "pram":
        p["matrix"] = _matrix(options.get("matrix"), attributes)
    if mechanism == "invariant_pram":
        if "theta" in options:
            if "pd" in options or "alpha" in options:
                raise SpecError("give theta (seed construction) or pd/alpha (sdcMicro's), not both",
                                path=_where("theta"))
            p["theta"] = _number(options["theta"], "theta", low=0, low_open=True, high=1)
        else:
            p["pd"] = _number(options.get("pd", 0.8), "pd", low=0, high=1)
            p["alpha"] = _number(options.get("alpha", 0.5), "alpha", low=0, high=1)
    if mechanism == "randomized_response":
        has_eps, has_keep = "epsilon" in options, "keep_probability" in options
        if has_eps == has_keep:
            raise SpecError("give exactly one of epsilon and keep_probability",
                            path=_where("epsilon"))
        if has_eps:
            p["epsilon"] = _checked(check_epsilon, options["epsilon"], "epsilon")
        else:
            p["keep_probability"] = _number(options["keep_probability"], "keep_probability",
                                            low=0, high=1)
        cats = _per_attribute(options.get("categories"), "categories", attributes)
        for a, values in cats.items():
            if not isinstance(values, (list, tuple)) or len(values) < 2 \
                    or len(set(map(repr, values))) != len(values):
                raise SpecError("must list at least 2 distinct public categories",
                                path=_where(f"categories.{a}"))
        p["categories"] = {a: list(v) for a, v in cats.items()}
    if mechanism == "condensation":
        p["k"] = _number(options.get("k"), "k", low=1, integer=True)
    if mechanism == "sampling":
        p["fraction"] = _number(options.get("fraction"), "fraction", low=0, low_open=True, high=1)
    if mechanism == DP_MICRODATA:
        p.update(_dp_microdata(options, attributes))

    seed = options.get("seed")
    if seed is not None:
        seed = int(_number(seed, "seed", low=0, integer=True))
    linkage = options.get("linkage", True)
    if not isinstance(linkage, bool):
        raise SpecError(f"must be true or false, got {linkage!r}", path=_where("linkage"))
    return NoiseOptions(mechanism, attributes, p, seed, linkage, _ledger(options))


def _ledger(options: Mapping[str, Any]) -> LedgerOptions | None:
    dataset = options.get("dataset")
    if dataset is None:
        for key in ("budget_epsilon", "budget_delta", "ledger", "release_key"):
            if key in options:
                raise SpecError("needs transformation.dataset: the ledger dataset it applies to",
                                path=_where(key))
        return None
    if not isinstance(dataset, str) or not dataset.strip():
        raise SpecError(f"must be the name of a privacy-budget ledger dataset (non-empty text), got "
                        f"{dataset!r}", path=_where("dataset"))
    budget_epsilon = None
    if options.get("budget_epsilon") is not None:
        budget_epsilon = _number(options["budget_epsilon"], "budget_epsilon", low=0, low_open=True)
    elif "budget_delta" in options:
        raise SpecError("needs transformation.budget_epsilon: a budget is set as a whole",
                        path=_where("budget_delta"))
    budget_delta = _number(options.get("budget_delta", 0.0), "budget_delta", low=0)
    if budget_delta >= 1:
        raise SpecError(f"must be a number >= 0 and < 1, got {options['budget_delta']!r}",
                        path=_where("budget_delta"))
    ledger, release_key = (_text(options, k) for k in ("ledger", "release_key"))
    if ledger is not None and not (ledger.endswith(".duckdb")
                                   or ledger.startswith(("postgresql://", "postgres://"))):
        raise SpecError(f"must name the database the ledger lives in: a DuckDB file (*.duckdb) or a "
                        f"postgresql:// URL, got {ledger!r}", path=_where("ledger"))
    return LedgerOptions(dataset, budget_epsilon, budget_delta, ledger, release_key)


def _text(options: Mapping[str, Any], key: str) -> str | None:
    value = options.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise SpecError(f"must be non-empty text, got {value!r}", path=_where(key))
    return value


def dp_cost(opts: NoiseOptions) -> tuple[Decimal, Decimal] | None:
    """What the release costs a substitution budget, as exact decimals rounded up (ε, δ); None for
    mechanisms without a DP guarantee.

    Per-value mechanisms perturb the m values of a record, each (ε, δ)-DP; a substituted record
    changes all m, so the release is (m·ε, m·δ)-DP (sequential composition, seed 000 Thm 8.2 with
    erratum E7; the records compose in parallel). Randomized response: the sum of the attributes'
    ε. DP microaggregation: the spec's ε (already split over the attributes).

    Raises:
        SpecError: randomized response with keep_probability 0 or 1 (no finite ε).
    """
    from sqlanon.methods.dp.amounts import amount

    p = opts.params
    m = len(opts.attributes)
    if opts.mechanism == DP_MICRODATA:
        return amount(p["epsilon"], "epsilon"), Decimal(0)
    if opts.mechanism == "randomized_response":
        if "epsilon" in p:
            return m * amount(p["epsilon"], "epsilon"), Decimal(0)
        total = Decimal(0)
        for a, cats in p["categories"].items():
            eps = rr_epsilon(p["keep_probability"], len(cats))
            if not math.isfinite(eps):
                raise SpecError(f"keep_probability {p['keep_probability']:g} gives no finite ε for "
                                f"{a!r}, so the release cannot be charged to a privacy budget",
                                path=_where("keep_probability"))
            total += amount(eps, "epsilon")
        return total, Decimal(0)
    if opts.mechanism in CHARGEABLE:
        return m * amount(p["epsilon"], "epsilon"), m * amount(p.get("delta", 0), "delta")
    return None


def _dp_microdata(options: Mapping[str, Any], attributes: tuple[str, ...]) -> dict[str, Any]:
    """k, ε, the order, and public bounds for the numeric attributes (the others are nominal)."""
    out: dict[str, Any] = {
        "k": _number(options.get("k"), "k", low=2, integer=True),
        "epsilon": _checked(check_epsilon, options.get("epsilon"), "epsilon")}
    order = options.get("order", "individual_ranking")
    if order not in DP_ORDERS:
        raise SpecError(f"must be one of {', '.join(DP_ORDERS)}, got {order!r}."
                        + did_you_mean(str(order), DP_ORDERS), path=_where("order"))
    out["order"] = order
    bounds = options.get("bounds") or {}
    if not isinstance(bounds, Mapping):
        raise SpecError("must map each numeric attribute to its public [low, high]",
                        path=_where("bounds"))
    numeric = tuple(a for a in attributes if a in bounds)
    extra = [str(a) for a in bounds if a not in attributes]
    if extra:
        raise SpecError(f"names {extra[0]!r}, which is not in transformation.attributes",
                        path=_where("bounds"))
    out["bounds"] = _bounds(dict(bounds), numeric) if numeric else {}
    trust = options.get("trust_bounds", False)
    if not isinstance(trust, bool):
        raise SpecError(f"must be true or false, got {trust!r}", path=_where("trust_bounds"))
    out["trust_bounds"] = trust
    return out


def _checked(check: Any, value: Any, key: str) -> float:
    if value is None:
        raise SpecError("is required", path=_where(key))
    return check(value, _where(key))
