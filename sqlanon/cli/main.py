"""The ``sqlanon`` command: arguments -> spec -> API -> printed report. No business logic here."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from sqlanon.errors import SqlanonError


def _add_source_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="the spec file (YAML)")
    p.add_argument("--database", help="a DuckDB file, or a postgresql:// URL; overrides source.database")
    p.add_argument("--json", action="store_true", help="print a machine-readable JSON report")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sqlanon", description="Anonymize tables inside the database.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log the SQL that runs")
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    p = sub.add_parser("check", help="what a table achieves under a spec's transformation")
    _add_source_options(p)
    p = sub.add_parser("apply", help="check the transformation and write the spec's output")
    _add_source_options(p)
    p.add_argument("--dry-run", action="store_true", help="check only; write nothing")
    p = sub.add_parser("anonymize", help="search for the best transformation and write the output")
    _add_source_options(p)
    p.add_argument("--strategy", help="optimal, binary, incognito, exhaustive or heuristic "
                   "(default: transformation.search, else optimal)")
    p.add_argument("--metric", help="the metric to minimise (default: transformation.metric, else loss)")
    p.add_argument("--dry-run", action="store_true", help="search and check only; write nothing")
    p.add_argument("--time-limit", type=float, help="stop the search after this many seconds and use "
                   "the best transformation found so far (reported as not proven optimal)")
    p = sub.add_parser("compile", help="print the transformation as SQL for a dialect")
    _add_source_options(p)
    p.add_argument("--dialect", help="duckdb, postgres, spark, snowflake, bigquery or trino "
                   "(default: output.dialect)")
    p.add_argument("--output", "-o", help="write the SQL to this file instead of standard output")

    p = sub.add_parser("query", help="one differentially private aggregate, charged to a budget")
    from sqlanon.noise import dp_cli

    dp_cli.add_arguments(p)

    p = sub.add_parser("budget", help="the privacy budgets kept in a database and their spends")
    dp_cli.add_budget_arguments(p)

    p = sub.add_parser("hierarchy", help="build, validate or export hierarchies")
    from sqlanon import hierarchy_cli

    hierarchy_cli.add_arguments(p)

    p = sub.add_parser("demo", help="generate a table of people in a DuckDB file and anonymize it")
    p.add_argument("--database", default="sqlanon_demo.duckdb",
                   help="the DuckDB file to create (default: ./sqlanon_demo.duckdb)")
    p.add_argument("--rows", type=int, default=100_000, help="rows to generate (default 100000)")
    p.add_argument("--seed", type=int, default=7, help="generator seed (default 7)")
    p.add_argument("--json", action="store_true", help="print the JSON report")
    return parser


def _print_report(report: dict[str, Any], as_json: bool, out=None) -> None:
    out = out or sys.stdout  # read when printing, not when imported: main() may run in-process
    if as_json:
        json.dump(report, out, indent=2, default=str)
        out.write("\n")
        return
    from sqlanon.report.text import format_report

    out.write(format_report(report))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbose:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
    try:
        return _run(args)
    except SqlanonError as e:
        print(f"sqlanon: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sqlanon: interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    from sqlanon import api

    if args.verb == "check":
        report = api.check(args.spec, database=args.database)
        _print_report(report.as_dict(), args.json)
        return 0 if report.anonymous else 1
    if args.verb == "apply":
        report = api.apply(args.spec, database=args.database, dry_run=args.dry_run, progress=True)
        _print_report(report.as_dict(), args.json)
        return 0
    if args.verb == "anonymize":
        report = api.anonymize(args.spec, database=args.database, strategy=args.strategy,
                               metric=args.metric, dry_run=args.dry_run,
                               time_limit=args.time_limit, progress=True)
        _print_report(report.as_dict(), args.json)
        return 0
    if args.verb == "compile":
        sql = api.compile_sql(args.spec, database=args.database, dialect=args.dialect)
        if args.output:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(sql)
        else:
            sys.stdout.write(sql)
        return 0
    if args.verb == "query":
        from sqlanon.noise import dp_cli

        return dp_cli.run(args)
    if args.verb == "budget":
        from sqlanon.noise import dp_cli

        return dp_cli.run_budget(args)
    if args.verb == "hierarchy":
        from sqlanon import hierarchy_cli

        return hierarchy_cli.run(args)
    if args.verb == "demo":
        from sqlanon.demo import run_demo

        report = run_demo(args.database, rows=args.rows, seed=args.seed)
        _print_report(report, args.json)
        return 0
    raise AssertionError(args.verb)


if __name__ == "__main__":
    sys.exit(main())
