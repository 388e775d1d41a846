"""``sqlanon query``: one differentially private aggregate from the command line, printed as JSON;
``sqlanon budget``: the privacy budgets kept in a database and what has been spent of them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sqlanon.errors import SpecError
from sqlanon.methods.dp.amounts import PrivacyBudgetError


def _amount(text: str) -> float:
    """An ε or δ option: a finite number >= 0 the ledger can hold, else argparse's one-line error."""
    from sqlanon.methods.dp.amounts import amount

    try:
        amount(text, "the value")
    except PrivacyBudgetError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return float(text)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--database", required=True,
                   help="a DuckDB file, a postgresql:// URL, spark://local[N] or sc://HOST:PORT (the "
                        "ledger lives there too, unless --ledger names another database)")
    p.add_argument("--ledger", metavar="DATABASE",
                   help="keep the budget ledger in this DuckDB file (created on first use) or "
                        "postgresql:// URL instead of --database; required for Spark, which has "
                        "no transactions")
    p.add_argument("--table", required=True, help="the table to query")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--count", action="store_true", help="the number of rows")
    what.add_argument("--sum", metavar="COLUMN", help="the sum of COLUMN clamped to --bounds")
    what.add_argument("--mean", metavar="COLUMN", help="the mean of COLUMN clamped to --bounds")
    what.add_argument("--histogram", metavar="COLUMN", nargs="+",
                      help="row counts per key of these columns, for the public --keys")
    p.add_argument("--bounds", nargs=2, type=float, metavar=("LOWER", "UPPER"),
                   help="public bounds of the --sum/--mean column (required there; never taken "
                        "from the data)")
    p.add_argument("--group-by", nargs="+", metavar="COLUMN",
                   help="a --sum or --mean per key of these columns, for the public --keys")
    p.add_argument("--keys", nargs="+", metavar="KEY",
                   help="the public keys of a --histogram or --group-by (several columns: values "
                        "joined by ',')")
    p.add_argument("--epsilon", type=_amount, required=True, help="the epsilon this answer spends")
    p.add_argument("--delta", type=_amount, default=0.0,
                   help="the delta this answer spends (with --mechanism gaussian)")
    p.add_argument("--mechanism", choices=("laplace", "gaussian"), default="laplace")
    p.add_argument("--dataset", help="the name the budget is kept under (default: the table)")
    p.add_argument("--budget-epsilon", type=_amount,
                   help="the dataset's total epsilon, set once on first use")
    p.add_argument("--budget-delta", type=_amount, default=0.0,
                   help="the dataset's total delta, set once with --budget-epsilon")
    p.add_argument("--budget-neighbours", choices=("add/remove", "substitution"),
                   default="add/remove",
                   help="the neighbouring relation the budget is kept under, set once with "
                        "--budget-epsilon: add/remove (default), or substitution to share it with "
                        "DP table releases (each answer is then charged (2ε, (1 + e^ε)·δ))")
    p.add_argument("--seed", type=int,
                   help="reproducible noise (NOT private against whoever knows the seed)")
    p.add_argument("--trust-bounds", action="store_true",
                   help="accept --bounds equal to the data's minimum and maximum (they are public)")
    p.add_argument("--privacy-unit", metavar="COLUMN",
                   help="the column identifying a person: neighbours differ by a whole person, "
                        "whose rows are bounded by --max-rows-per-person")
    p.add_argument("--max-rows-per-person", type=int, metavar="N",
                   help="rows kept per person (per person and key with keys), chosen at random")
    p.add_argument("--max-groups-per-person", type=int, metavar="N",
                   help="keys a person contributes to, for --histogram and --group-by")


def _aggregate(args: argparse.Namespace) -> Any:
    from sqlanon.methods.dp.aggregates import Count, Grouped, Histogram, Mean, Sum

    if args.group_by and not (args.sum or args.mean):
        raise SpecError("--group-by goes with --sum or --mean (counts per key are --histogram)",
                        path="--group-by")
    if args.count:
        return Count()
    if args.sum or args.mean:
        if args.bounds is None:
            raise SpecError("--sum and --mean need --bounds LOWER UPPER: the public range of the "
                            "column (sqlanon never takes it from the data)", path="--bounds")
        cls = Sum if args.sum else Mean
        inner = cls(args.sum or args.mean, args.bounds[0], args.bounds[1])
        if not args.group_by:
            return inner
        return Grouped(inner, args.group_by, _keys(args, args.group_by, "--group-by"))
    return Histogram(args.histogram, _keys(args, args.histogram, "--histogram"))


def _keys(args: argparse.Namespace, columns: list[str], option: str) -> list[Any]:
    if not args.keys:
        raise SpecError(f"{option} needs --keys: the public list of keys (which keys occur in the "
                        "data is itself private)", path="--keys")
    return args.keys if len(columns) == 1 else [k.split(",") for k in args.keys]


def run(args: argparse.Namespace) -> int:
    from sqlanon.methods.dp.queries import dp_query

    result = dp_query(args.database, args.table, _aggregate(args), epsilon=args.epsilon,
                      delta=args.delta, dataset=args.dataset, budget_epsilon=args.budget_epsilon,
                      budget_delta=args.budget_delta, budget_neighbours=args.budget_neighbours,
                      mechanism=args.mechanism, seed=args.seed, trust_bounds=args.trust_bounds,
                      ledger=args.ledger, privacy_unit=args.privacy_unit,
                      max_rows_per_person=args.max_rows_per_person,
                      max_groups_per_person=args.max_groups_per_person)
    json.dump(result.as_dict(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def add_budget_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--database", required=True,
                   help="a DuckDB file, or a postgresql:// URL holding the ledger")
    p.add_argument("--dataset", nargs="+", metavar="NAME",
                   help="only these datasets (default: every dataset with a budget)")
    p.add_argument("--entries", action="store_true",
                   help="also list each spend: what was spent, under which relation, what the "
                        "budget was charged, the description and the time")


def run_budget(args: argparse.Namespace) -> int:
    """Print the budgets as JSON: per dataset its relation, total, spent and remaining."""
    from sqlanon.methods.dp.budget import PrivacyBudgetError, PrivacyLedger
    from sqlanon.methods.dp.queries import open_database

    engine = open_database(args.database, create=False)
    try:
        ledger = PrivacyLedger(engine)
        states = ledger.states() if ledger.exists() else {}
        names = args.dataset or list(states)
        missing = [n for n in names if n not in states]
        if missing:
            raise PrivacyBudgetError(
                f"no privacy budget is set for dataset {missing[0]!r} in {args.database!r}; "
                f"datasets with a budget: {', '.join(map(repr, states)) or 'none'}")
        out = []
        for name in names:
            entry = states[name].as_dict()
            if args.entries:
                entry["entries"] = [_entry(r) for r in ledger.entries(name)]
            out.append(entry)
    finally:
        engine.close()
    json.dump({"database": args.database, "datasets": out}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "spent": {"epsilon": float(row["epsilon"]), "delta": float(row["delta"])},
            "neighbours": row["neighbours"], "privacy_unit": row["privacy_unit"],
            "charged": {"epsilon": float(row["epsilon_charged"]),
                        "delta": float(row["delta_charged"])},
            "description": row["description"], "spent_at": str(row["spent_at"]),
            "release_key": row["release_key"]}
