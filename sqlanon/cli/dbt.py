"""The ``sqlanon dbt`` verb: an anonymized model and its privacy gates in a dbt project (docs/dbt.md).

``model`` resolves the spec's search first (the chosen levels are written into the model, so it is
deterministic) and writes the model, its properties and the gates' macros; with ``--check`` it writes
nothing and fails naming the files that differ from what it would write. ``install`` adds sqlanon's
dbt package to the project's ``packages.yml``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlanon.errors import SpecError

if TYPE_CHECKING:
    from sqlanon.spec.schema import Spec

EXIT_STALE = 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="dbt_verb", required=True, metavar="ACTION")
    m = sub.add_parser("model", help="write (or --check) an anonymized model and its privacy gates",
                       description="write (or --check) an anonymized model and its privacy gates")
    m.add_argument("spec", help="the spec file (YAML)")
    m.add_argument("--project", required=True, help="the dbt project's folder (holding dbt_project.yml)")
    m.add_argument("--name", help="the model's name (default: output.name, else <source table>_anonymized)")
    m.add_argument("--materialized", choices=("table", "view"), default="table",
                   help="table (default; fails when the suppression limit is exceeded) or view "
                        "(its gates add no_rare_values)")
    reads = m.add_mutually_exclusive_group()
    reads.add_argument("--ref", metavar="MODEL", help="read the rows from {{ ref(MODEL) }} "
                       "(default: the spec's source table)")
    reads.add_argument("--source", metavar="SOURCE.TABLE",
                       help="read the rows from {{ source(SOURCE, TABLE) }}")
    m.add_argument("--dialect", help="the SQL dialect (default: the adapter type of the project's profile)")
    m.add_argument("--profiles-dir", help="where profiles.yml is (default: as dbt looks for it)")
    m.add_argument("--target", help="the profile's target (default: the profile's own)")
    m.add_argument("--database", help="where a spec with a search runs it (default: source.database)")
    m.add_argument("--gates-only", action="store_true",
                   help="write only the gates' macros (tests sqlanon_NAME_<gate>), for a model of your own")
    form = m.add_mutually_exclusive_group()
    form.add_argument("--one-gate", action="store_true",
                      help="(the default) one test, sqlanon_NAME_privacy, for every privacy model and the "
                           "suppression limit: one statement, one scan of the model")
    form.add_argument("--separate-gates", action="store_true",
                      help="one test per privacy model and one for the suppression limit, each reading "
                           "the model again (severity, warn_if or store_failures can then differ per gate)")
    m.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming the generated files that are stale")
    g = sub.add_parser("gates", help="compile the SQL of the project's sqlanon.* generic tests",
                       description="compile the SQL of the sqlanon.* generic tests the project's YAML "
                                   "files use (sqlanon.k_anonymity: {quasi_identifiers: [...], k: 5}, ...) "
                                   "into macros/sqlanon_generic_gates.sql")
    g.add_argument("--project", required=True, help="the dbt project's folder")
    g.add_argument("--dialect", help="the SQL dialect (default: the adapter type of the project's profile)")
    g.add_argument("--profiles-dir", help="where profiles.yml is (default: as dbt looks for it)")
    g.add_argument("--target", help="the profile's target (default: the profile's own)")
    g.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 when the macros file is stale")
    i = sub.add_parser("install", help="add sqlanon's dbt package to the project's packages.yml",
                       description="add sqlanon's dbt package to the project's packages.yml "
                                   "(then run `dbt deps`)")
    i.add_argument("--project", required=True, help="the dbt project's folder")


def _command(args: argparse.Namespace, spec_shown: str) -> str:
    words = ["sqlanon", "dbt", "model", spec_shown, "--project", "."]
    if args.gates_only:
        words.append("--gates-only")
    if args.one_gate:
        words.append("--one-gate")
    for flag in ("name", "materialized", "ref", "source", "dialect", "target"):
        value = getattr(args, flag)
        if value is not None and not (flag == "materialized" and value == "table"):
            words += [f"--{flag}", value]
    if args.separate_gates:
        words.append("--separate-gates")
    return shlex.join(words)


def _fixed_levels(args: argparse.Namespace, spec: Spec, recorded: dict[str, int] | None) -> Spec:
    """The spec with its search resolved: the levels recorded in an up-to-date model (``--check``),
    else the search's choice on the spec's database."""
    from sqlanon.methods.generalization.method import SEARCH_KEYS

    t = spec.transformation
    if not any(k in t.options for k in SEARCH_KEYS):
        return spec
    if recorded is None:
        from sqlanon import api

        report = api.anonymize(spec, database=args.database, dry_run=True)
        if not isinstance(report, api.Report):  # a Result comes back only for a table in memory
            raise SpecError("the search of a dbt model runs on the spec's database, not on a table in memory")
        recorded = dict(report.node.levels)
    options = {k: v for k, v in t.options.items() if k not in SEARCH_KEYS}
    return dataclasses.replace(spec, transformation=dataclasses.replace(t, levels=dict(recorded),
                                                                        options=options))


def run_model(args: argparse.Namespace) -> int:
    from sqlanon.outputs.dbt import files, project
    from sqlanon.spec.load import load_spec

    folder = Path(args.project)
    spec_path = Path(args.spec)
    spec = load_spec(spec_path)
    dialect = args.dialect or project.adapter_dialect(folder, profiles_dir=args.profiles_dir,
                                                      target=args.target)
    if args.source is not None:
        source_name, _, table_name = args.source.partition(".")
        if not table_name:
            raise SpecError(f"--source takes SOURCE.TABLE, got {args.source!r}", path="--source")
        reads = files.Input(table_name, source_name)
    else:
        reads = files.Input(args.ref or spec.source.table or spec_path.stem)
    name = args.name or spec.output.name or f"{reads.name}_anonymized"
    if not files.NAME.match(name):
        raise SpecError(f"{name!r} is not a dbt model name this command writes (letters, digits, _)",
                        path="--name")
    paths = project.model_paths(folder, name)
    hash_ = files.spec_hash(spec_path)
    recorded = None
    if args.gates_only:
        paths = {"macros": paths["macros"]}
    if args.check and "model" in paths and paths["model"].is_file():
        old_hash, old_levels = files.header_values(paths["model"].read_text(encoding="utf-8"))
        if old_hash != hash_:
            print(f"sqlanon: stale: {paths['model']} was generated from another version of "
                  f"{spec_path} (or of its hierarchies); regenerate it", file=sys.stderr)
            return EXIT_STALE
        recorded = old_levels
    shown = os.path.relpath(spec_path.resolve(), folder.resolve())
    command = _command(args, shown)
    if not spec.method.compiles_offline and not args.gates_only:
        return _python_model(args, spec, paths["model"].with_suffix(".py"), dialect, reads, shown,
                             command, hash_)
    if not args.gates_only:  # the gates read the released rows as they are, whatever the levels
        spec = _fixed_levels(args, spec, recorded)
    texts = {paths["macros"]: files.macros_text(spec, name=name, dialect=dialect, shown_spec=shown,
                                                command=command, materialized=args.materialized,
                                                one=not args.separate_gates)}
    if not args.gates_only:
        texts[paths["model"]] = files.model_text(spec, name=name, dialect=dialect, source=reads,
                                                 materialized=args.materialized, shown_spec=shown,
                                                 command=command, hash_=hash_)
        texts[paths["properties"]] = files.properties_text(spec, name=name, source=reads,
                                                           shown_spec=shown, command=command,
                                                           materialized=args.materialized,
                                                           one=not args.separate_gates)
    if args.check:
        return _stale(texts, command)
    project.write_files(texts)
    for path in texts:
        print(f"wrote {path}")
    return 0


def _python_model(args: argparse.Namespace, spec: Spec, path: Path, dialect: str, reads: Any,
                  shown: str, command: str, hash_: str) -> int:
    """A spec whose method SQL cannot express: a dbt Python model running it with sqlanon.dbt."""
    from sqlanon.outputs.dbt import project, python

    python.refuse(spec, dialect=dialect, materialized=args.materialized)
    texts = {path: python.model_text(spec, source=reads, shown_spec=shown, command=command,
                                     hash_=hash_)}
    if args.check:
        return _stale(texts, command)
    project.write_files(texts)
    print(f"wrote {path}")
    return 0


def _stale(texts: dict[Path, str], command: str) -> int:
    """``--check``: name each file that differs from what ``command`` writes now."""
    from sqlanon.outputs.dbt import project

    stale = project.stale_files(texts)
    for path in stale:
        print(f"sqlanon: stale: {path} differs from what `{command}` writes now; regenerate it",
              file=sys.stderr)
    return EXIT_STALE if stale else 0


def run(args: argparse.Namespace) -> int:
    if args.dbt_verb == "install":
        from sqlanon.outputs.dbt.project import install_package

        path = install_package(Path(args.project))
        print(f"added sqlanon's dbt package to {path}; run `dbt deps` to install it")
        return 0
    if args.dbt_verb == "gates":
        return run_gates(args)
    return run_model(args)


def run_gates(args: argparse.Namespace) -> int:
    from sqlanon.outputs.dbt import generic, project

    folder = Path(args.project)
    dialect = args.dialect or project.adapter_dialect(folder, profiles_dir=args.profiles_dir,
                                                      target=args.target)
    found = generic.uses(project.model_folders(folder))
    words = ["sqlanon", "dbt", "gates", "--project", "."]
    for flag in ("dialect", "target"):
        if getattr(args, flag) is not None:
            words += [f"--{flag}", getattr(args, flag)]
    path = project.generic_macros_path(folder)
    texts = {path: generic.macros_text(found, dialect, shlex.join(words))}
    if args.check:
        return _stale(texts, shlex.join(words))
    project.write_files(texts)
    print(f"wrote {path} ({len(found)} sqlanon test{'s' if len(found) != 1 else ''})")
    return 0
