"""Helpers for the privacy-model tests: seed fixtures and per-class results of a checked node."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlglot import exp

from sqlanon.methods.generalization.evaluator import NodeCheck

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


def class_rows(engine, node: NodeCheck, qis: list[str]) -> dict[tuple, dict]:
    """The node's per-class verdict rows, keyed by the generalized QI tuple."""
    rows = engine.fetch_dicts(exp.select(exp.Star()).from_(node.verdict.copy()))
    return {tuple(r[q] for q in qis): r for r in rows}


@pytest.fixture()
def engine(duck):
    """The test's DuckDB (the suite's ``duck``) under the name the model tests use."""
    return duck


@pytest.fixture()
def load_csv(duck):
    """Load a fixtures/ CSV into table ``name`` of the test's DuckDB."""

    def load(file: str, name: str) -> None:
        duck.con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM read_csv(?, header=true)',
                         [str(FIXTURES / file)])

    return load
