"""Several tables printed (``output.mode: sql``): one SELECT per output, each a statement of its own.

Every statement carries the person-level release as two relations of its own (``WITH``): the joined
persons and their released rows; the person table's statement comes first, then each event table's in
the order of ``tables``. Run on the target they give what mode ``table`` writes; the names of the two
relations derive from the person output's, so the printed text is stable.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlglot import exp

from sqlanon.outputs.preflight import sql_path
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile, adapt
from sqlanon.sql.nodes import ident
from sqlanon.sql.render import render


def stable_token(name: str) -> str:
    """The staging token of a printed release of the person output ``name``."""
    return hashlib.sha256(name.encode()).hexdigest()[:12]


def _with(relations: list[tuple[str, str]], select: str, target: DialectProfile) -> str:
    """``select`` preceded by ``relations`` (name, rendered SELECT) as its ``WITH`` list."""
    parts = [f"{render(ident(name), target)} AS (\n{body.strip().rstrip(';').strip()}\n)"
             for name, body in relations]
    return f"WITH {', '.join(parts)}\n{select}"


def printed(spec: Spec, target: DialectProfile, outputs: list[tuple[str, str, exp.Select, dict[str, Any]]],
            relations: list[tuple[str, str]]) -> dict[str, Any]:
    """The report's ``outputs`` of a printed release; the text goes to ``output.path`` when set."""
    statements = [_with(relations, render(adapt(query, target), target, pretty=True), target) + ";\n"
                  for _, _, query, _ in outputs]
    out: dict[str, Any] = {"mode": "sql", "dialect": target.name,
                           "suppressed": spec.transformation.suppressed,
                           "relations": [{"relation": name, **notes} for _, name, _, notes in outputs]}
    path = sql_path(spec)
    if path is not None:
        path.write_text("\n".join(statements), encoding="utf-8")
        out["path"] = str(path)
    else:
        out["sql"] = statements
    return out
