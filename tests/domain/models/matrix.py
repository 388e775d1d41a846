"""Every privacy model through every verb (check, apply, anonymize, compile) and output mode (table,
view, in_place, sql), on any engine: a 48-row table, small hierarchies (an 18-node lattice).

Each combination either works (and the written rows are the rows the check kept) or is refused by
design with a one-line :class:`~sqlanon.errors.SpecError` naming the key path.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.errors import SpecError
from sqlanon.outputs.scripts import split_statements
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.outputs.people import load_people

COLUMNS = [("id", "int"), ("name", "varchar"), ("age", "int"), ("zip", "varchar"), ("sex", "varchar"),
           ("disease", "varchar"), ("salary", "int")]
ZIPS = ["47601", "47602", "47677", "47678", "47905", "47906"]
DISEASES = ["flu", "cold", "hiv", "cancer", "flu", "cold", "asthma", "flu"]
ROWS = [(i, f"person{i}", 20 + (i * 7) % 40, ZIPS[i % 6], "F" if (i // 3) % 2 else "M",
         DISEASES[(i * 5) % 8], 20000 + ((i * 37) % 23) * 1000) for i in range(48)]
SUBSET_ROWS = [r for r in ROWS if r[0] % 3 == 0]
LEVELS = {"age": 1, "zip": 1, "sex": 1}
COARSE = {"age": 2, "zip": 1, "sex": 1}
"""For δ-disclosure, whose classes must hold every value of the table."""
LIMIT = 0.25
SPEC: dict[str, Any] = {
    "source": {"table": "people"},
    "attributes": {
        "id": {"role": "insensitive"},
        "name": {"role": "identifier"},
        "age": {"role": "quasi_identifier", "hierarchy": {"map": {
            str(a): [f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(20, 60)}}},
        "zip": {"role": "quasi_identifier", "hierarchy": {"map": {z: [z[:3] + "**", "*"] for z in ZIPS}}},
        "sex": {"role": "quasi_identifier", "hierarchy": {"map": {"F": ["*"], "M": ["*"]}}},
        "disease": {"role": "sensitive", "hierarchy": {"map": {
            "flu": ["respiratory", "*"], "cold": ["respiratory", "*"], "asthma": ["respiratory", "*"],
            "hiv": ["serious", "*"], "cancer": ["serious", "*"]}}},
        "salary": {"role": "sensitive"},
    },
    "transformation": {"levels": LEVELS, "suppression_limit": LIMIT},
}
MODELS: dict[str, list[dict[str, Any]]] = {
    "k_anonymity": [{"k_anonymity": {"k": 3}}],
    "l_distinct": [{"l_diversity": {"attribute": "disease", "l": 2}}],
    "l_entropy": [{"l_diversity": {"attribute": "disease", "l": 1.5, "variant": "entropy"}}],
    "l_recursive": [{"l_diversity": {"attribute": "disease", "l": 2, "variant": "recursive", "c": 3}}],
    "t_equal": [{"t_closeness": {"attribute": "disease", "t": 0.5}}],
    "t_ordered": [{"t_closeness": {"attribute": "salary", "t": 0.5, "distance": "ordered"}}],
    "t_hierarchical": [{"t_closeness": {"attribute": "disease", "t": 0.5, "distance": "hierarchical"}}],
    "p_sensitive": [{"p_sensitive_k_anonymity": {"attribute": "disease", "k": 2, "p": 2}}],
    "alpha_k": [{"alpha_k_anonymity": {"attribute": "disease", "alpha": 0.8, "k": 2}}],
    "delta_disclosure": [{"delta_disclosure": {"attribute": "disease", "delta": 2}}],  # at COARSE
    "beta_basic": [{"beta_likeness": {"attribute": "disease", "beta": 3}}],
    "beta_enhanced": [{"beta_likeness": {"attribute": "disease", "beta": 3, "variant": "enhanced"}}],
    "delta_presence_table": [{"k_anonymity": {"k": 2}},
                             {"delta_presence": {"subset": "research", "delta_min": 0.0, "delta_max": 0.8}}],
    "delta_presence_file": [{"k_anonymity": {"k": 2}},
                            {"delta_presence": {"subset": "@file", "delta_min": 0.0, "delta_max": 0.8}}],
    "k_e": [{"k_e_anonymity": {"attribute": "salary", "k": 2, "e": 1000}}],
    "kpqr": [{"kpqr_anonymity": {"attribute": "salary", "k": 2, "p": 2, "q": 0.01, "r": 0.01}}],
    "risk_based": [{"average_risk": {"threshold": 0.5, "highest_risk": 0.5, "records_at_risk": 0.1}},
                   {"sample_uniqueness": {"threshold": 0.05}},
                   {"k_map": {"k": 4, "estimator": "poisson", "population_size": 480}}],
    "k_map_table": [{"k_map": {"k": 4, "population": "population"}}],
}
VARIANTS = {"l_entropy", "l_recursive", "t_ordered", "t_hierarchical", "beta_enhanced", "risk_based"}
"""Further variants of a model already in the matrix: only a statement that must stand alone (mode
sql) and one that runs here (in_place), to keep the suite fast."""
VERBS = ["check", "apply", "anonymize", "compile"]
MODES = ["table", "view", "in_place", "sql"]


def cases() -> list[tuple[str, str, str]]:
    """(model, verb, mode) combinations; ``check`` writes nothing, so it runs with one mode."""
    out = []
    for model in MODELS:
        out.append((model, "check", "table"))
        modes = ["sql", "in_place"] if model in VARIANTS else MODES
        out += [(model, verb, mode) for verb in VERBS[1:] for mode in modes]
    return out


def load(engine, tmp_path: Path) -> Path:
    """The table ``people``, its research subset as table ``research`` and as a CSV file, and a
    population holding ``people`` (table ``population``)."""
    load_people(engine, "people", ROWS, COLUMNS)
    load_people(engine, "research", SUBSET_ROWS, COLUMNS)
    load_people(engine, "population", ROWS + SUBSET_ROWS, COLUMNS)
    path = tmp_path / "research.csv"
    path.write_text("\n".join([",".join(c for c, _ in COLUMNS)] +
                              [",".join(map(str, r)) for r in SUBSET_ROWS]) + "\n", encoding="utf-8")
    return path


def spec_for(model: str, mode: str, subset_file: Path, dialect: str = "duckdb") -> Any:
    d = copy.deepcopy(SPEC)
    privacy = copy.deepcopy(MODELS[model])
    for entry in privacy:
        p = entry.get("delta_presence")
        if p is not None and p["subset"] == "@file":
            p["subset"] = str(subset_file)
    d["privacy"] = privacy
    if model == "delta_disclosure":
        d["transformation"]["levels"] = COARSE
    d["output"] = {"mode": mode, "name": "released"} if mode in ("table", "view") else {"mode": mode}
    if mode == "sql":
        d["output"]["dialect"] = dialect  # the printed SQL is run on the engine itself
    # the search only has to reach the writer: Samarati's binary search checks the fewest nodes
    d["transformation"]["search"] = "binary"
    return spec_from_dict(d)


def refusal(model: str, verb: str, mode: str, engine_name: str) -> str | None:
    """The key path of the refusal by design, or None when the combination must work.

    A research subset file is loaded into a temporary table of the session: on PostgreSQL it cannot
    be loaded at all; a view or SQL text (printed, or compiled for any mode) would outlive it.
    """
    if model != "delta_presence_file" or verb == "check" and engine_name == "duckdb":
        return None
    if engine_name != "duckdb":
        return "delta_presence.subset"
    if verb == "compile" or mode in ("view", "sql"):
        return "delta_presence.subset"
    return None


def count(engine, relation: str) -> int:
    return int(engine.fetch_one(exp.select(exp.alias_(exp.Count(this=exp.Star()), "n"))
                                .from_(table(relation)))["n"])


def count_query(engine, sql: str) -> int:
    inner = sql.strip().rstrip(";")
    return int(engine.fetch_script(f"SELECT COUNT(*) AS n FROM ({inner}) AS released")[1][0][0])


_KEPT: dict[tuple[str, str], int] = {}


def expected_rows(engine, model: str, subset_file: Path) -> int:
    """The rows ``check`` keeps at the spec's levels (once per engine and model)."""
    key = (engine.name, model)
    if key not in _KEPT:
        report = api.check(spec_for(model, "table", subset_file), engine=engine, metrics=())
        assert report.anonymous and report.node.rows == len(ROWS)
        _KEPT[key] = kept(report)
    return _KEPT[key]


def run(engine, model: str, verb: str, mode: str, subset_file: Path) -> None:
    """Run one combination and check what it wrote against the check of the same node."""
    spec = spec_for(model, mode, subset_file, engine.name)
    expected = refusal(model, verb, mode, engine.name)
    if expected is not None:
        with pytest.raises(SpecError) as e:
            _run(engine, spec, verb, mode, lambda: None)
        assert e.value.path.endswith(expected) and "\n" not in str(e.value), str(e.value)
        assert not engine.relation_exists("released")
        assert count(engine, "people") == len(ROWS)
        return
    _run(engine, spec, verb, mode, lambda: expected_rows(engine, model, subset_file))


def _run(engine, spec: Any, verb: str, mode: str, expected: Any) -> None:
    if verb == "check":
        report = api.check(spec, engine=engine)
        assert report.anonymous and report.node.rows == len(ROWS)
        assert report.metrics and all(v == v for v in report.metrics.values())
        return
    if verb == "compile":
        want = expected()
        sql = api.compile_sql(spec, engine=engine, dialect=engine.name)
        for statement in split_statements(sql, engine.dialect):
            if mode == "sql":
                assert count_query(engine, statement) == want
            else:
                engine.execute_script(statement)
        if mode != "sql":
            assert count(engine, "people" if mode == "in_place" else "released") == want
        return
    want = expected() if verb == "apply" else None  # read from the source before in_place replaces it
    report = (api.apply if verb == "apply" else api.anonymize)(spec, engine=engine, metrics=())
    assert report.anonymous
    rows = kept(report)
    if verb == "apply":
        assert rows == want
    if mode == "sql":
        assert count_query(engine, report.outputs["sql"]) == rows
        return
    relation = "people" if mode == "in_place" else "released"
    assert report.outputs["rows"] == rows == count(engine, relation)
    columns = [c for c, _ in engine.columns(relation)]
    assert "name" not in columns and "age" in columns


def kept(report: Any) -> int:
    return report.node.rows - report.node.suppressed_rows
