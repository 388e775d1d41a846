"""The verbs of the ``sqlanon`` command and the arguments each takes.

Each verb's arguments are added by a function of :data:`VERBS`, which the command line calls only for
the verb it runs (or whose help it prints): the modules of the other verbs are not imported.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from sqlanon.cli import report as report_cli


def add_common(p: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--debug`` and ``-v``, accepted before or after the verb."""
    default = False if top else argparse.SUPPRESS
    p.add_argument("--debug", action="store_true", default=default,
                   help="on an error, also print the failing SQL (salts redacted) and the traceback")
    p.add_argument("-v", "--verbose", action="store_true", default=default,
                   help="log the SQL that runs (salts redacted)")


def _add_source_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="the spec file (YAML)")
    p.add_argument("--database", help="a DuckDB file, a postgresql:// URL, spark://local[N] or "
                   "sc://HOST:PORT (Spark Connect); overrides source.database")
    p.add_argument("--json", action="store_true",
                   help="print a machine-readable JSON report (and errors as JSON, on stdout)")
    add_common(p)


def _add_output_overrides(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", metavar="NAME", help="the output table or view; overrides output.name")
    p.add_argument("--replace", action="store_true",
                   help="overwrite an existing output; sets output.replace")


def _check_arguments(p: argparse.ArgumentParser) -> None:
    _add_source_options(p)
    p.add_argument("--against", metavar="PREVIOUS_RELEASE", help="a previous release (table or view): "
                   "fail if intersecting it with this release shrinks classes or pins values down")
    report_cli.add_html(p)


def _apply_arguments(p: argparse.ArgumentParser) -> None:
    _add_source_options(p)
    _add_output_overrides(p)
    report_cli.add_html(p)
    p.add_argument("--dry-run", action="store_true", help="check only; write nothing")


def _anonymize_arguments(p: argparse.ArgumentParser) -> None:
    _add_source_options(p)
    _add_output_overrides(p)
    report_cli.add_html(p)
    p.add_argument("--strategy", help="optimal, binary, incognito, exhaustive or heuristic "
                   "(default: transformation.search, else optimal)")
    p.add_argument("--metric", help="the metric to minimise (default: transformation.metric, else loss)")
    p.add_argument("--dry-run", action="store_true", help="search and check only; write nothing")
    p.add_argument("--time-limit", type=float, help="stop the search after this many seconds and use "
                   "the best transformation found so far (reported as not proven optimal)")
    p.add_argument("--write-spec", metavar="FILE", help="write the spec with the chosen levels (and the "
                   "search's report as a comment) to FILE, for apply and compile")


def _compile_arguments(p: argparse.ArgumentParser) -> None:
    _add_source_options(p)
    _add_output_overrides(p)
    p.add_argument("--dialect", help="duckdb, postgres, spark, snowflake, bigquery or trino "
                   "(default: output.dialect)")
    p.add_argument("--sql-file", "-o", metavar="FILE",
                   help="write the SQL to this file instead of standard output")
    p.add_argument("--offline", action="store_true", help="build the SQL from the spec alone, without "
                   "connecting (the default when the spec names no database); needs fixed levels")


def _risk_arguments(p: argparse.ArgumentParser) -> None:
    from sqlanon.cli import risk as risk_cli

    _add_source_options(p)
    risk_cli.add_arguments(p)


def _report_arguments(p: argparse.ArgumentParser) -> None:
    report_cli.add_arguments(p)
    _add_source_options(p)


def _module_arguments(module: str, function: str = "add_arguments"
                      ) -> Callable[[argparse.ArgumentParser], None]:
    """The arguments a module of :mod:`sqlanon.cli` adds, then ``--debug`` and ``-v``."""
    def add(p: argparse.ArgumentParser) -> None:
        import importlib

        getattr(importlib.import_module(f"sqlanon.cli.{module}"), function)(p)
        add_common(p)
    return add


VERBS: tuple[tuple[str, str, Callable[[argparse.ArgumentParser], None]], ...] = (
    ("check", "what a table achieves under a spec's transformation", _check_arguments),
    ("apply", "check the transformation and write the spec's output", _apply_arguments),
    ("anonymize", "search for the best transformation and write the output", _anonymize_arguments),
    ("compile", "print the transformation as SQL for a dialect", _compile_arguments),
    ("risk", "the re-identification risk of a table, before and after the spec's levels",
     _risk_arguments),
    ("report", "an HTML report of what the spec's transformation achieves (writes no output)",
     _report_arguments),
    ("query", "one differentially private aggregate, charged to a budget", _module_arguments("dp")),
    ("budget", "the privacy budgets kept in a database and their spends",
     _module_arguments("dp", "add_budget_arguments")),
    ("hierarchy", "build, validate or export hierarchies", _module_arguments("hierarchy")),
    ("dbt", "an anonymized dbt model with its privacy gates, and sqlanon's dbt package",
     _module_arguments("dbt")),
    ("demo", "generate a table of people in a DuckDB file and anonymize it", _module_arguments("demo")),
)
"""Verb, its help line, and the function adding its arguments (called when the verb is used)."""
