"""``sqlanon risk SPEC [--population N | --sampling-fraction F] [--threshold R] [--search]
[--sdcmicro] [--weight COLUMN] [--suda2] [--suda2-max-size K] [--json]``."""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--population", metavar="N", type=_population,
                       help="the population size (a whole number, or usa); overrides "
                            "metrics.options.population_size")
    group.add_argument("--sampling-fraction", metavar="F", type=float,
                       help="the table's share of the population, n/N; overrides "
                            "metrics.options.sampling_fraction")
    p.add_argument("--search", action="store_true",
                   help="analyse the release of the levels `anonymize` would choose (nothing is written)")
    p.add_argument("--threshold", metavar="R", type=float,
                   help="count the records whose risk is above R (default "
                        "metrics.options.risk_threshold, else 0.2)")
    p.add_argument("--sdcmicro", action="store_true",
                   help="also measure sdcMicro's individual and global risk")
    p.add_argument("--weight", metavar="COLUMN",
                   help="the sampling-weight column of sdcMicro's individual risk (default "
                        "metrics.options.sampling_weight; none: the table is the population)")
    p.add_argument("--suda2", action="store_true", help="also find SUDA2's special uniques")
    p.add_argument("--suda2-max-size", metavar="K", type=int,
                   help="SUDA2's largest minimal sample unique, in quasi-identifiers (default all)")


def _population(text: str) -> int | str:
    return text if text.lower() == "usa" else int(text)


def run(args: argparse.Namespace) -> int:
    from sqlanon import api

    report = api.risk(args.spec, database=args.database, population=args.population,
                      sampling_fraction=args.sampling_fraction, threshold=args.threshold,
                      search=args.search, sdcmicro=args.sdcmicro, weight=args.weight,
                      suda2=args.suda2 or args.suda2_max_size is not None, suda2_max_size=args.suda2_max_size)
    if args.json:
        json.dump(report.as_dict(), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report.text())
    return 0
