"""A ten-person table whose anonymized output is worked out by hand below.

Hierarchies (maps): age -> decade -> ``<40``/``>=40`` -> ``*``; zip -> ``4767*`` -> ``476**`` -> ``*``;
sex -> ``*``. At levels age 2, zip 2, sex 0 the classes are::

    (<40,  476**, F): 1 Ann, 10 O'Brien           size 2
    (<40,  476**, M): 2 Bob, 3 Cid, 7 Gus          size 3
    (>=40, 479**, F): 4 Dee, 5 Eve                 size 2
    (>=40, 479**, M): 6 Fay                        size 1  outlier for k=2
    (>=40, 476**, M): 8 Hal                        size 1  outlier for k=2
    (>=40, 476**, F): 9 Ida                        size 1  outlier for k=2

so 2-anonymity needs 3 suppressed rows: floor(0.3 * 10) = 3 allows it, floor(0.2 * 10) = 2 does not.
"""

from __future__ import annotations

import copy
from typing import Any

from sqlglot import exp

from sqlanon.sql.nodes import ident, lit, table

COLUMNS = [("id", "int"), ("name", "varchar"), ("age", "int"), ("zip", "varchar"), ("sex", "varchar"),
           ("disease", "varchar")]
ROWS = [
    (1, "Ann", 23, "47677", "F", "flu"),
    (2, "Bob", 27, "47602", "M", "flu"),
    (3, "Cid", 22, "47678", "M", "cold"),
    (4, "Dee", 43, "47905", "F", "hiv"),
    (5, "Eve", 47, "47909", "F", "flu"),
    (6, "Fay", 45, "47906", "M", "cold"),
    (7, "Gus", 35, "47605", "M", "flu"),
    (8, "Hal", 52, "47673", "M", "cancer"),
    (9, "Ida", 54, "47607", "F", "cold"),
    (10, "O'Brien; --", 36, "47677", "F", "cold"),
]
AGES = list(range(20, 60))
ZIPS = sorted({r[3] for r in ROWS} | {"47601", "47911"})

# Expected output at levels age 2, zip 2, sex 0 with 2-anonymity: (id, age, zip, sex, disease).
KEPT = [
    (1, "<40", "476**", "F", "flu"),
    (2, "<40", "476**", "M", "flu"),
    (3, "<40", "476**", "M", "cold"),
    (4, ">=40", "479**", "F", "hiv"),
    (5, ">=40", "479**", "F", "flu"),
    (7, "<40", "476**", "M", "flu"),
    (10, "<40", "476**", "F", "cold"),
]
MASKED = [(6, "*", "*", "*", "cold"), (8, "*", "*", "*", "cancer"), (9, "*", "*", "*", "cold")]


def age_map() -> dict[str, list[str]]:
    return {str(a): [f"{a // 10 * 10}-{a // 10 * 10 + 9}", "<40" if a < 40 else ">=40", "*"]
            for a in AGES}


def zip_map() -> dict[str, list[str]]:
    return {z: [z[:4] + "*", z[:3] + "**", "*"] for z in ZIPS}


BASE_SPEC: dict[str, Any] = {
    "source": {"table": "people"},
    "attributes": {
        "id": {"role": "insensitive"},
        "name": {"role": "identifier"},
        "age": {"role": "quasi_identifier", "hierarchy": {"map": age_map()}},
        "zip": {"role": "quasi_identifier", "hierarchy": {"map": zip_map()}},
        "sex": {"role": "quasi_identifier", "hierarchy": {"map": {"F": ["*"], "M": ["*"]}}},
        "disease": {"role": "sensitive"},
    },
    "privacy": [{"k_anonymity": {"k": 2}}],
    "transformation": {"levels": {"age": 2, "zip": 2, "sex": 0}, "suppression_limit": 0.3},
    "output": {"mode": "table"},
}


def people_spec(**changes: Any) -> dict[str, Any]:
    """A copy of the spec with top-level sections updated (``output={...}`` merges into output)."""
    spec = copy.deepcopy(BASE_SPEC)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(spec.get(key), dict):
            spec[key].update(value)
        else:
            spec[key] = value
    return spec


def load_people(engine, name: str = "people", rows=ROWS, columns=COLUMNS) -> None:
    """Create and fill the table on any engine (statements built with sqlglot, so names are quoted)."""
    engine.execute(exp.Create(this=exp.Schema(this=table(name), expressions=[
        exp.ColumnDef(this=ident(c), kind=exp.DataType.build(t)) for c, t in columns]), kind="TABLE"))
    engine.execute(exp.insert(exp.values([tuple(lit(v) for v in r) for r in rows]), table(name)))


def canon(rows) -> list[tuple]:
    """Rows in a canonical order (by text, NULLs first), to compare outputs regardless of row order."""
    return sorted((tuple(r) for r in rows), key=lambda r: tuple((v is not None, str(v)) for v in r))


def sorted_rows(engine, relation: str, columns: list[str] | None = None) -> list[tuple]:
    """All rows of a relation in canonical order, optionally only some columns."""
    select = [exp.column(c, quoted=True) for c in columns] if columns else [exp.Star()]
    return canon(engine.fetch(exp.select(*select).from_(table(relation)))[1])


# -- hostile names and values ---------------------------------------------------------------------
WEIRD_TABLE = 'we"ird; DROP TABLE x; --'
WEIRD_QI = 'we"ird; DROP TABLE x; --'
WEIRD_ID = 'näme "q"; --'
WEIRD_SALT = "s'alt\"; -- 4f9c2a7e"
LABEL_A = 'it\'s "*"; --'
LABEL_B = "ü; DROP TABLE x; --'"
WEIRD_COLUMNS = [("id", "int"), (WEIRD_ID, "varchar"), (WEIRD_QI, "varchar"), ("sex", "varchar"),
                 ("disease", "varchar")]
WEIRD_ROWS = [
    (1, "Ann", "O'Brien; --", "F", "flu"),
    (2, "Bob", "Zoë 🙂", "M", "flu'; DROP TABLE x; --"),
    (3, "Cid", 'a"b', "F", "cold"),
    (4, "Dee", "c;d", "M", "cold"),
    (5, "O'Neil", 'a"b', "M", "flu"),
]
# levels: weird 1, sex 1 -> classes LABEL_A {1, 2} (an outlier for k=3) and LABEL_B {3, 4, 5}
WEIRD_SPEC: dict[str, Any] = {
    "source": {"table": WEIRD_TABLE},
    "attributes": {
        "id": {"role": "insensitive"},
        WEIRD_ID: {"role": "identifier", "action": "hash", "salt": WEIRD_SALT},
        WEIRD_QI: {"role": "quasi_identifier", "hierarchy": {"map": {
            "O'Brien; --": [LABEL_A, "*"], "Zoë 🙂": [LABEL_A, "*"], 'a"b': [LABEL_B, "*"],
            "c;d": [LABEL_B, "*"]}}},
        "sex": {"role": "quasi_identifier", "hierarchy": {"map": {"F": ["*"], "M": ["*"]}}},
        "disease": {"role": "sensitive"},
    },
    "privacy": [{"k_anonymity": {"k": 3}}],
    "transformation": {"levels": {WEIRD_QI: 1, "sex": 1}, "suppression_limit": 0.5},
    "output": {"mode": "table", "name": 'out"put; --'},
}


def weird_hash(name: str) -> str:
    import hashlib

    return hashlib.sha256((WEIRD_SALT + name).encode("utf-8")).hexdigest()


WEIRD_KEPT = [(r[0], weird_hash(r[1]), LABEL_B, "*", r[4]) for r in WEIRD_ROWS[2:]]
WEIRD_MASKED = [(r[0], weird_hash(r[1]), "*", "*", r[4]) for r in WEIRD_ROWS[:2]]


def weird_spec(**changes: Any) -> dict[str, Any]:
    spec = copy.deepcopy(WEIRD_SPEC)
    for key, value in changes.items():
        spec[key].update(value)
    return spec


def load_weird(engine) -> None:
    """The hostile table, plus a bystander table ``x`` holding one row."""
    load_people(engine, WEIRD_TABLE, WEIRD_ROWS, WEIRD_COLUMNS)
    load_people(engine, "x", [(42,)], [("v", "int")])
