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
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, TextIO

from sqlanon.cli.verbs import VERBS, add_common
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


class _VerbParser(_Parser):
    """A verb's parser whose arguments are added when it is first used (parsed, or its help or usage
    formatted): a run pays for its own verb's arguments and modules, not for every verb's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_verb_arguments: Callable[[argparse.ArgumentParser], None] | None = None

    def _filled(self) -> None:
        add, self.add_verb_arguments = self.add_verb_arguments, None
        if add is not None:
            add(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        self._filled()
        return super().parse_known_args(*args, **kwargs)

    def format_help(self) -> str:
        self._filled()
        return super().format_help()

    def format_usage(self) -> str:
        self._filled()
        return super().format_usage()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sqlanon", description="Anonymize tables inside the database.",
                     epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    add_common(parser, top=True)
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB", parser_class=_VerbParser)
    for name, text, add_arguments in VERBS:
        p = sub.add_parser(name, help=text, description=text, epilog=EXIT_CODES,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_verb_arguments = add_arguments
    return parser


# -- reporting ------------------------------------------------------------------------------------
def _print_json(body: dict[str, Any], out: TextIO | None = None) -> None:
    """A JSON object on standard output, on its own lines (reports and --json errors alike).

    Written in one piece: ``json.dump`` writes every token apart, one system call each when the
    output is unbuffered (``PYTHONUNBUFFERED``, ``python -u``), thousands for a search's report."""
    (out or sys.stdout).write(json.dumps(body, indent=2, default=str) + "\n")


def _print_report(report: dict[str, Any], as_json: bool, out: TextIO | None = None) -> None:
    out = out or sys.stdout  # read when printing, not when imported: main() may run in-process
    if as_json:
        _print_json(report, out)
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
