"""The SQL of the package's generic tests (``sqlanon.k_anonymity: {quasi_identifiers: [...], k: 5}``
and the other privacy models, ``sqlanon.suppression_limit``, ``sqlanon.no_rare_values``), compiled
for the arguments a project gives them.

dbt cannot call sqlanon's compiler while it compiles a test, so ``sqlanon dbt gates`` reads the
tests' arguments from the project's YAML files and writes the SQL for each distinct set of them into
one macros file. A test finds its SQL by a key both sides compute the same way: the MD5 of the JSON
of ``{"test": name, "arguments": arguments}`` (sorted keys, arguments without ``None`` values and
without ``source_model``), as dbt's ``local_md5(tojson(..., sort_keys=True))`` does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.models import build_model
from sqlanon.domain.models.base import MODELS
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.generalization.evaluator import Problem
from sqlanon.outputs.dbt.files import jinja_sql
from sqlanon.outputs.dbt.sql import (
    RARE,
    RELATION,
    SOURCE,
    model_gate_sql,
    placeholder_text,
    rare_values_gate_sql,
    suppression_gate_sql,
)
from sqlanon.sql.dialects import profile
from sqlanon.sql.nodes import table

PACKAGE = "sqlanon"
SUPPRESSION = "suppression_limit"
NOT_GENERIC = {"delta_presence": "it matches a research subset to the rows in the database"}
"""Models a generic test cannot check, and why."""


@dataclass(frozen=True)
class Use:
    """One use of a generic test in a project: its name, arguments and where it is written."""

    test: str
    arguments: dict[str, Any]
    where: str

    @property
    def key(self) -> str:
        text = json.dumps({"test": self.test, "arguments": self.arguments}, sort_keys=True)
        return hashlib.md5(text.encode("utf-8")).hexdigest()  # dbt's local_md5: a name, not security


def _entries(node: Any) -> Iterator[Any]:
    """Every entry of a ``data_tests:`` or ``tests:`` list anywhere in a properties file."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("data_tests", "tests") and isinstance(value, list):
                yield from value
            else:
                yield from _entries(value)
    elif isinstance(node, list):
        for item in node:
            yield from _entries(item)


def uses(folders: list[Path]) -> list[Use]:
    """The package's generic tests used in the YAML files under ``folders``, in file order."""
    found: dict[str, Use] = {}
    for folder in folders:
        for path in sorted([*folder.rglob("*.yml"), *folder.rglob("*.yaml")]):
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8"))
            except yaml.YAMLError:
                continue  # dbt reports it
            for entry in _entries(data):
                if not isinstance(entry, dict) or len(entry) != 1:
                    continue
                ((name, given),) = entry.items()
                if not (isinstance(name, str) and name.startswith(PACKAGE + ".")):
                    continue
                test = name.removeprefix(PACKAGE + ".")
                if test not in (SUPPRESSION, RARE) and test not in MODELS.names():
                    continue
                given = given if isinstance(given, dict) else {}
                arguments = given.get("arguments", {k: v for k, v in given.items() if k != "config"})
                if not isinstance(arguments, dict):
                    raise SpecError("the arguments must be a mapping", path=f"{name}.arguments",
                                    source=str(path))
                arguments = {k: v for k, v in arguments.items() if v is not None and k != "source_model"}
                use = Use(test, arguments, str(path))
                found.setdefault(use.key, use)
    return list(found.values())


def _problem(use: Use, params: dict[str, Any]) -> Problem:
    qis = use.arguments.get("quasi_identifiers")
    path = f"{PACKAGE}.{use.test}.quasi_identifiers"
    if not isinstance(qis, list) or not qis or not all(isinstance(q, str) and q for q in qis):
        raise SpecError("must be a list of column names", path=path, source=use.where)
    order = params.pop("order", None)
    model = build_model(use.test, params, path=f"{PACKAGE}.{use.test}", source=use.where) \
        if use.test not in (SUPPRESSION, RARE) else None
    models = [model] if model is not None else []
    sensitive = [a for m in models for a in m.sensitive_attributes()]
    if order is not None and not (isinstance(order, list) and len(sensitive) == 1):
        raise SpecError("order lists the sensitive attribute's values, lowest first",
                        path=f"{PACKAGE}.{use.test}.order", source=use.where)
    if use.test in NOT_GENERIC:
        raise UnsupportedError(f"{use.test} cannot be a generic test: {NOT_GENERIC[use.test]}")
    if getattr(model, "distance", None) == "hierarchical":
        raise UnsupportedError(f"{use.where}: the hierarchical distance needs the attribute's "
                               "hierarchy, which a test's arguments do not give: generate the gate from a "
                               "spec (`sqlanon dbt model SPEC --gates-only`)")
    return Problem(engine=None,  # type: ignore[arg-type]  # nothing here runs a query
                   source=table(RELATION), qis=list(qis),
                   # level 0 of every attribute: the values are read as they are
                   hierarchies=cast(dict[str, Hierarchy], dict.fromkeys(qis)),
                   sensitive=sensitive, models=models,
                   value_order={sensitive[0]: order} if order is not None else {})


def gate_sql(use: Use, dialect: str) -> str:
    params = {k: v for k, v in use.arguments.items() if k != "quasi_identifiers"}
    if use.test == SUPPRESSION:
        limit = params.pop("share", None)
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 <= limit <= 1:
            raise SpecError(f"share must be a number in [0, 1], got {limit!r}",
                            path=f"{PACKAGE}.{use.test}.share", source=use.where)
        return suppression_gate_sql(_problem(use, params), float(limit), profile(dialect))
    if use.test == RARE:
        k = params.pop("k", None)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise SpecError(f"k must be a whole number >= 1, got {k!r}", path=f"{PACKAGE}.{use.test}.k",
                            source=use.where)
        if params:
            raise SpecError(f"unknown parameter {sorted(params)[0]!r} for {RARE} (it takes "
                            "quasi_identifiers and k)", path=f"{PACKAGE}.{use.test}", source=use.where)
        return rare_values_gate_sql(_problem(use, params), k, profile(dialect))
    problem = _problem(use, params)
    return model_gate_sql(problem, problem.models[0], profile(dialect))


def macros_text(found: list[Use], dialect: str, command: str) -> str:
    """One dispatched macro per use and dialect, ``sqlanon_gate_<key>``."""
    dialects = list(dict.fromkeys([dialect, "duckdb", "postgres"]))
    lines = ["{# Generated by sqlanon from the arguments of the sqlanon.* tests of this project: do not "
             "edit; regenerate with", f"   {command} #}}", ""]
    for use in found:
        described = f"{use.test} {json.dumps(use.arguments, sort_keys=True)} ({use.where})"
        lines.append("{# " + described.replace("#}", "# }") + " #}")
        name = f"sqlanon_gate_{use.key}"
        lines += [f"{{% macro {name}(model, source_model=none) %}}",
                  f"{{{{ return(adapter.dispatch('{name}')(model, source_model)) }}}}",
                  "{% endmacro %}", ""]
        for prefix, d in [("default", dialect), *[(d, d) for d in dialects]]:
            placeholders = {placeholder_text(RELATION, d): "{{ model }}",
                            placeholder_text(SOURCE, d): "{{ source_model }}"}
            lines += [f"{{% macro {prefix}__sqlanon_gate_{use.key}(model, source_model=none) %}}",
                      jinja_sql(gate_sql(use, d), placeholders), "{% endmacro %}", ""]
    return "\n".join(lines)


def package_tests_text() -> str:
    """The package's generic tests (``macros/generic_tests.sql``): one per privacy model that a test's
    arguments can describe, and the suppression limit; each passes its arguments to ``generic_gate``."""
    import dataclasses

    lines = ["{# Generated from sqlanon's privacy models (sqlanon.outputs.dbt.generic.package_tests_text); "
             "the tests' SQL is written into the project by `sqlanon dbt gates`. #}", ""]
    tests: list[tuple[str, list[tuple[str, bool]]]] = []
    for name in sorted(MODELS.names()):
        if name in NOT_GENERIC:
            continue
        cls: Any = MODELS.get(name)  # a dataclass (build_model checks it)
        fields = [(f.name, f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
                  for f in dataclasses.fields(cls) if f.init]
        if name == "t_closeness":  # the ordered distance's order of a text attribute
            fields.append(("order", False))
        tests.append((name, fields))
    # `share`, not `limit`: dbt reads a test's `limit` as its config
    tests.append((SUPPRESSION, [("share", True), ("source_model", True)]))
    tests.append((RARE, [("k", True)]))
    for name, fields in tests:
        params = ["quasi_identifiers"] + [f if required else f"{f}=none" for f, required in fields]
        passed = ", ".join(f"'{f}': {f}" for f in ["quasi_identifiers", *[f for f, _ in fields]]
                           if f != "source_model")
        source = "source_model" if name == SUPPRESSION else "none"
        lines += [f"{{% test {name}(model, {', '.join(params)}) %}}",
                  f"{{{{ sqlanon.generic_gate(model, '{name}', {{{passed}}}, {source}) }}}}",
                  "{% endtest %}", ""]
    return "\n".join(lines)
