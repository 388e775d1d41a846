"""Specs for compiling without a connection, shared by the DuckDB and the PostgreSQL tests.

Each case is a people spec (tests/outputs/people.py) whose offline SQL must give exactly the rows that
``apply`` writes for it on an engine.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from sqlanon import api
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import ident, table
from tests.outputs.people import canon, people_spec

SALT = "offline-test-salt"
DISEASE_ORDER = ["cold", "flu", "hiv", "cancer"]
DISEASE_GROUPS = {"flu": ["respiratory", "*"], "cold": ["respiratory", "*"], "hiv": ["chronic", "*"],
                  "cancer": ["chronic", "*"]}


def _with(spec: dict[str, Any], **attributes: dict[str, Any]) -> dict[str, Any]:
    for name, value in attributes.items():
        spec["attributes"][name] = value
    return spec


CASES: dict[str, dict[str, Any]] = {
    # 3 of 10 rows suppressed, exactly the limit floor(0.3 · 10)
    "k_anonymity_suppression": _with(people_spec(output={"mode": "sql"}),
                                     name={"role": "identifier", "action": "hash", "salt": SALT}),
    "masked_outliers": _with(people_spec(output={"mode": "sql"}, transformation={"suppressed": "mask"}),
                             name={"role": "identifier", "action": "mask"}),
    "l_diversity_equal_t_closeness": people_spec(
        output={"mode": "sql"}, transformation={"levels": {"age": 1, "zip": 1, "sex": 0},
                                                "suppression_limit": 0.8},
        privacy=[{"k_anonymity": {"k": 2}}, {"l_diversity": {"attribute": "disease", "l": 2}},
                 {"t_closeness": {"attribute": "disease", "t": 0.5}}]),
    "entropy_l_diversity_ordered_t_closeness": _with(people_spec(
        output={"mode": "sql"}, transformation={"suppression_limit": 1.0},
        privacy=[{"l_diversity": {"attribute": "disease", "l": 1.5, "variant": "entropy"}},
                 {"t_closeness": {"attribute": "disease", "t": 0.4, "distance": "ordered"}}]),
        disease={"role": "sensitive", "order": DISEASE_ORDER}),
    "hierarchical_t_closeness": _with(people_spec(
        output={"mode": "sql"}, transformation={"suppression_limit": 1.0},
        privacy=[{"t_closeness": {"attribute": "disease", "t": 0.3, "distance": "hierarchical"}}]),
        disease={"role": "sensitive", "hierarchy": {"map": DISEASE_GROUPS}}),
    # a numeric sensitive attribute known from its declared type: ordered distance and value range
    "typed_numeric_sensitive": _with(people_spec(
        output={"mode": "sql"}, transformation={"suppression_limit": 1.0},
        privacy=[{"k_e_anonymity": {"attribute": "id", "k": 2, "e": 3}},
                 {"t_closeness": {"attribute": "id", "t": 0.35, "distance": "ordered"}}]),
        id={"role": "sensitive", "type": "integer"}),
}


def released_columns(spec: dict[str, Any]) -> list[str]:
    attrs = spec["attributes"]
    return [a for a, v in attrs.items() if not (v.get("role") == "identifier"
                                                and v.get("action", "drop") == "drop")]


def applied_rows(engine, spec: dict[str, Any], name: str = "applied") -> list[tuple]:
    """The rows ``apply`` writes for ``spec`` (as a table ``name``), in the released columns' order."""
    as_table = {**spec, "output": {"mode": "table", "name": name, "replace": True}}
    api.apply(spec_from_dict(as_table), engine=engine)
    columns = released_columns(spec)
    return canon(engine.fetch(exp.select(*[exp.Column(this=ident(c)) for c in columns])
                              .from_(table(name)))[1])


def offline_sql(spec: dict[str, Any], dialect: str) -> str:
    return api.compile_sql(spec_from_dict(spec), dialect=dialect)


def rows_of(engine, sql: str) -> list[tuple]:
    return canon(engine.fetch_script(sql)[1])
