"""The ``sqlanon`` command: arguments -> spec -> API -> printed report. No business logic here.

:func:`main` never lets an exception escape (except ``SystemExit`` from ``--help``/``--version``):
sqlanon's own errors (:class:`~sqlanon.errors.SqlanonError`) are one line and exit code 2; any other
exception is a bug in sqlanon, reported as one line by :func:`report_bug` with :data:`EXIT_BUG`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn, TextIO

from sqlanon.errors import EngineError, InternalError, SpecError, SqlanonError

EXIT_OK = 0
EXIT_NOT_ANONYMOUS = 1
EXIT_ERROR = 2
EXIT_BUG = 70
"""An unexpected exception: a bug in sqlanon (``EX_SOFTWARE`` of BSD's sysexits.h)."""
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
"""Standard output was closed by its reader (``sqlanon ... | head``): the shell's code for SIGPIPE."""

EXIT_CODES = f"""\
exit codes:
  {EXIT_OK}    done (check: the table is anonymous under the spec)
  {EXIT_NOT_ANONYMOUS}    check: the table is not anonymous under the spec
  {EXIT_ERROR}    an error in the input, the spec, the data or the database (one line on stderr;
       with --json, a JSON object on stdout)
  {EXIT_BUG}   a bug in sqlanon (an unexpected exception): please report it; --debug shows the
       traceback
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)
  {EXIT_BROKEN_PIPE}  standard output was closed by its reader (e.g. `| head`); nothing more is printed
"""


class UsageError(SqlanonError):
    """The command line itself is wrong (an unknown option, a missing argument)."""

    kind = "usage"


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors as one line (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def _version() -> str:
    from sqlanon import __version__

    return f"sqlanon {__version__}"


def _add_common(p: argparse.ArgumentParser, *, top: bool = False) -> None:
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
    _add_common(p)


def _add_output_overrides(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", metavar="NAME", help="the output table or view; overrides output.name")
    p.add_argument("--replace", action="store_true",
                   help="overwrite an existing output; sets output.replace")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sqlanon", description="Anonymize tables inside the database.",
                     epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    _add_common(parser, top=True)
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    from sqlanon.cli import report as report_cli

    def verb(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text, epilog=EXIT_CODES,
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    p = verb("check", "what a table achieves under a spec's transformation")
    _add_source_options(p)
    p.add_argument("--against", metavar="PREVIOUS_RELEASE", help="a previous release (table or view): "
                   "fail if intersecting it with this release shrinks classes or pins values down")
    report_cli.add_html(p)
    p = verb("apply", "check the transformation and write the spec's output")
    _add_source_options(p)
    _add_output_overrides(p)
    report_cli.add_html(p)
    p.add_argument("--dry-run", action="store_true", help="check only; write nothing")
    p = verb("anonymize", "search for the best transformation and write the output")
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
    p = verb("compile", "print the transformation as SQL for a dialect")
    _add_source_options(p)
    _add_output_overrides(p)
    p.add_argument("--dialect", help="duckdb, postgres, spark, snowflake, bigquery or trino "
                   "(default: output.dialect)")
    p.add_argument("--sql-file", "-o", metavar="FILE",
                   help="write the SQL to this file instead of standard output")
    p.add_argument("--offline", action="store_true", help="build the SQL from the spec alone, without "
                   "connecting (the default when the spec names no database); needs fixed levels")

    p = verb("risk", "the re-identification risk of a table, before and after the spec's levels")
    _add_source_options(p)
    from sqlanon.cli import risk as risk_cli

    risk_cli.add_arguments(p)

    p = verb("report", "an HTML report of what the spec's transformation achieves (writes no output)")
    report_cli.add_arguments(p)
    _add_source_options(p)

    p = verb("query", "one differentially private aggregate, charged to a budget")
    from sqlanon.cli import dp as dp_cli

    dp_cli.add_arguments(p)
    _add_common(p)

    p = verb("budget", "the privacy budgets kept in a database and their spends")
    dp_cli.add_budget_arguments(p)
    _add_common(p)

    p = verb("hierarchy", "build, validate or export hierarchies")
    from sqlanon.cli import hierarchy as hierarchy_cli

    hierarchy_cli.add_arguments(p)
    _add_common(p)

    p = verb("dbt", "an anonymized dbt model with its privacy gates, and sqlanon's dbt package")
    from sqlanon.cli import dbt as dbt_cli

    dbt_cli.add_arguments(p)
    _add_common(p)

    p = verb("demo", "generate a table of people in a DuckDB file and anonymize it")
    from sqlanon.cli import demo

    demo.add_arguments(p)
    _add_common(p)
    return parser


# -- reporting ------------------------------------------------------------------------------------
def _print_json(body: dict[str, Any]) -> None:
    """A JSON object on standard output, on its own lines (reports and --json errors alike)."""
    json.dump(body, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def _print_report(report: dict[str, Any], as_json: bool, out: TextIO | None = None) -> None:
    out = out or sys.stdout  # read when printing, not when imported: main() may run in-process
    if as_json:
        json.dump(report, out, indent=2, default=str)
        out.write("\n")
        return
    from sqlanon.report.text import format_report

    out.write(format_report(report))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def report_error(error: BaseException, *, as_json: bool = False, debug: bool = False) -> int:
    """Print one of sqlanon's own errors (or an OS error on a user's file) as one line; exit code 2.

    With ``as_json`` the error is a JSON object on stdout: ``error`` (the line), ``kind``, ``path``
    (the key path or option), ``file`` (the spec or data file), ``exit_code``, and for database errors
    ``purpose``. With ``debug`` the failing statement (salts redacted) and the traceback follow.
    """
    if isinstance(error, OSError):
        target = error.filename if error.filename is not None else ""
        message = f"cannot use {str(target)!r}: {error.strerror or type(error).__name__}"
        kind, path, file = "file", None, target or None
    else:
        message = str(error)
        kind = getattr(error, "kind", "error")
        path = getattr(error, "path", None) or None
        file = getattr(error, "source", None) or None
    if as_json:
        body: dict[str, Any] = {"error": _one_line(message), "kind": kind, "path": path, "file": file,
                                "exit_code": EXIT_ERROR}
        if isinstance(error, EngineError):
            body["purpose"] = error.purpose
            if debug:
                body["sql"] = error.sql
        _print_json(body)
    else:
        print(f"sqlanon: error: {_one_line(message)}", file=sys.stderr)
    if debug:
        _print_debug(error)
    return EXIT_ERROR


def report_bug(error: BaseException, *, as_json: bool = False, debug: bool = False) -> int:
    """An exception sqlanon did not raise on purpose: one line naming it as a bug; :data:`EXIT_BUG`.

    Tests tell bugs from errors by this exit code (or by calling this function's caller,
    :func:`run`, which lets every exception through).
    """
    name = type(error).__name__
    message = (f"internal error ({name}): this is a bug in sqlanon; please report it with the "
               "output of the same command run with --debug (which shows the traceback)")
    if isinstance(error, InternalError):
        message = f"internal error: {_one_line(str(error))} (--debug shows the traceback)"
    if as_json:
        _print_json({"error": message, "kind": "bug", "exception": name, "path": None, "file": None,
                     "exit_code": EXIT_BUG})
    else:
        print(f"sqlanon: {message}", file=sys.stderr)
    if debug:
        _print_debug(error)
    return EXIT_BUG


def _print_debug(error: BaseException) -> None:
    import traceback

    sql = getattr(error, "sql", None)
    if sql:
        print("the failing statement (salts redacted):\n" + sql, file=sys.stderr)
    traceback.print_exception(error, file=sys.stderr)


# -- running --------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see :data:`EXIT_CODES`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # known before parsing, so that a usage error is reported in the form asked for
    as_json, debug = "--json" in argv, "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        as_json, debug = bool(getattr(args, "json", False)), bool(args.debug)
        if args.verbose:
            import logging

            logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
        with _warnings_as_lines():
            return run(args)
    except BrokenPipeError:
        # the reader has gone: say nothing more, and keep the interpreter's last flush from failing
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        if as_json:
            _print_json({"error": "interrupted", "kind": "interrupted", "path": None, "file": None,
                         "exit_code": EXIT_INTERRUPTED})
        else:
            print("sqlanon: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except InternalError as e:
        return report_bug(e, as_json=as_json, debug=debug)
    except (SqlanonError, OSError) as e:
        return report_error(e, as_json=as_json, debug=debug)
    except Exception as e:  # anything else is a bug in sqlanon, never a traceback for a user
        return report_bug(e, as_json=as_json, debug=debug)


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """Python warnings as ``sqlanon: warning: <message>``: one line, without the source line."""
    import warnings

    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        print(f"sqlanon: warning: {_one_line(str(message))}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def _shown(path: str) -> str:
    """``path`` relative to the working directory when it is inside it."""
    import os

    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _spec_with_overrides(args: argparse.Namespace) -> Any:
    """The spec file with ``--output`` and ``--replace`` applied (each validated like the spec)."""
    from sqlanon.spec.load import load_spec

    spec = load_spec(args.spec)
    changes: dict[str, Any] = {}
    if getattr(args, "output", None) is not None:
        if args.verb == "compile" and args.output.lower().endswith(".sql"):
            raise UsageError(f"--output names the output table, not a file: write the SQL to "
                             f"{args.output!r} with --sql-file (or -o)")
        changes["name"] = args.output
    if getattr(args, "replace", False):
        changes["replace"] = True
    if not changes:
        return spec
    try:
        output = dataclasses.replace(spec.output, **changes)
    except SpecError as e:
        raise SpecError(e.rule, path=e.path, source=spec.path) from None
    return dataclasses.replace(spec, output=output)


DELEGATED = {"risk": ("risk", "run"), "query": ("dp", "run"), "budget": ("dp", "run_budget"),
             "hierarchy": ("hierarchy", "run"), "dbt": ("dbt", "run")}
"""Verb -> (module of :mod:`sqlanon.cli`, its function that runs the parsed arguments)."""


def run(args: argparse.Namespace) -> int:
    """Run a parsed command; every exception propagates (:func:`main` reports them)."""
    from sqlanon import api

    if args.verb == "check":
        report = api.check(args.spec, database=args.database, against=args.against, html=args.html)
        _print_report(report.as_dict(), args.json)
        return EXIT_OK if report.anonymous else EXIT_NOT_ANONYMOUS
    if args.verb == "apply":
        report = api.apply(_spec_with_overrides(args), database=args.database, dry_run=args.dry_run,
                           progress=True, html=args.html)
        _print_report(report.as_dict(), args.json)
        return EXIT_OK
    if args.verb == "anonymize":
        report = api.anonymize(_spec_with_overrides(args), database=args.database,
                               strategy=args.strategy, metric=args.metric, dry_run=args.dry_run,
                               time_limit=args.time_limit, progress=True, write_spec=args.write_spec,
                               html=args.html)
        if not isinstance(report, api.Report):  # a Result comes back only for a table in memory
            raise InternalError(f"anonymize returned a {type(report).__name__}, not a Report")
        _print_report(report.as_dict(), args.json)
        return EXIT_OK
    if args.verb == "compile":
        compiled = api.compile_spec(_spec_with_overrides(args), database=args.database,
                                    dialect=args.dialect, offline=True if args.offline else None)
        sql = compiled.sql
        if compiled.unverified:
            print("sqlanon: warning: compiled without a connection; not verified (see the SQL's header): "
                  + "; ".join(compiled.unverified), file=sys.stderr)
        if args.sql_file:
            with open(args.sql_file, "w", encoding="utf-8") as f:
                f.write(sql)
        else:
            sys.stdout.write(sql)
        return EXIT_OK
    if args.verb in DELEGATED:  # verbs whose module parses and runs them whole
        import importlib

        module, function = DELEGATED[args.verb]
        return int(getattr(importlib.import_module(f"sqlanon.cli.{module}"), function)(args))
    if args.verb == "report":
        from sqlanon.cli import report as report_cli

        return report_cli.run(args, _print_report)
    if args.verb == "demo":
        from sqlanon.cli.demo import run_demo

        report = run_demo(args.database, rows=args.rows, seed=args.seed)
        _print_report(report, args.json)
        if not args.json:
            print(f"spec written to {_shown(report['outputs']['spec'])} beside the database "
                  f"{_shown(report['outputs']['database'])}: edit it, then `sqlanon apply` it")
        return EXIT_OK
    raise InternalError(f"unknown verb {args.verb!r}")


if __name__ == "__main__":
    sys.exit(main())
