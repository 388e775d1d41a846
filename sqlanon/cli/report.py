"""``sqlanon report SPEC -o FILE``: the HTML report of a spec, without writing its output.

A spec with fixed levels (or another method's settings) is checked as ``check`` does; a spec that
asks for a search is searched as ``anonymize --dry-run`` does. The text (or ``--json``) report is
printed as well, and the exit code is ``check``'s.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

EXIT_OK, EXIT_NOT_ANONYMOUS = 0, 1


def add_html(p: argparse.ArgumentParser) -> None:
    """``--html FILE`` of check, apply and anonymize."""
    p.add_argument("--html", metavar="FILE", help="also write an HTML report with charts to FILE "
                   "(docs/report.md)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", metavar="FILE", required=True, dest="html",
                   help="the HTML file to write")
    p.add_argument("--strategy", help="for a spec that asks for a search: the search strategy")


def run(args: argparse.Namespace, print_report: Callable[[dict[str, Any], bool], None]) -> int:
    from sqlanon import api
    from sqlanon.errors import InternalError
    from sqlanon.spec.load import load_spec

    spec = load_spec(args.spec)
    searches = spec.method.name == "generalization" and "search" in spec.transformation.options \
        and not spec.transformation.levels
    if searches:
        found = api.anonymize(spec, database=args.database, dry_run=True, strategy=args.strategy,
                              html=args.html)
        if not isinstance(found, api.Report):  # a Result comes back only for a table in memory
            raise InternalError(f"anonymize returned a {type(found).__name__}, not a Report")
        report: Any = found
    else:
        report = api.check(spec, database=args.database, html=args.html)
    print_report(report.as_dict(), args.json)
    return EXIT_OK if getattr(report, "anonymous", True) else EXIT_NOT_ANONYMOUS
