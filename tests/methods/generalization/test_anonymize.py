"""``anonymize``: search then apply, through the API and the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest

from sqlanon import api
from sqlanon.errors import InfeasibleError
from sqlanon.spec import spec_from_dict
from tests.conftest import ADULT_QIS, adult_spec_dict


def _spec(adult_dir, limit, **transformation):
    d = adult_spec_dict(adult_dir, limit=limit)
    d["transformation"].update(transformation)
    return spec_from_dict(d)


@pytest.mark.parametrize("limit, node, loss", [
    (0.0, [0, 4, 1, 1, 3, 2, 2, 1, 0], 0.5731509655590044),   # ARX 3.9.2 (peer-semantics §5, §6.1)
    (0.02, [0, 3, 0, 2, 2, 1, 1, 2, 0], 0.3137130352819242),  # ARX 3.9.2 (§6.2)
])
def test_adult_optimum_is_arx_s(adult_engine, adult_dir, limit, node, loss):
    report = api.anonymize(_spec(adult_dir, limit, search="optimal", metric="loss"), engine=adult_engine,
                           dry_run=True, metrics=("loss",)).as_dict()
    assert report["transformation"]["levels"] == dict(zip(ADULT_QIS, node))
    assert report["metrics"]["loss"] == loss
    assert report["search"]["value"] == loss
    assert report["search"]["evaluated_in"] == "memory"
    assert report["search"]["nodes_checked"] < 12_960
    ranked = report["search"]["ranked"]
    assert ranked[0] == {"levels": dict(zip(ADULT_QIS, node)), "value": loss}
    assert [r["value"] for r in ranked] == sorted(r["value"] for r in ranked)
    for alternative in ranked[1:3]:  # each alternative is anonymous, with the value a check reports
        d = adult_spec_dict(adult_dir, limit=limit, levels=alternative["levels"])
        checked = api.check(spec_from_dict(d), engine=adult_engine, metrics=("loss",)).as_dict()
        assert checked["metrics"]["loss"] == alternative["value"]
        assert checked["privacy"]["k_anonymity"]["holds"]


def test_models_without_an_in_memory_check_are_searched_in_sql(duck):
    # Seed 000 Table 5.1 with hierarchical t-closeness on the condition over a hierarchy that is not a
    # table (checked in SQL only) and (0,1)-presence of a research subset, which never binds.
    duck.con.execute("CREATE TABLE t (age INTEGER, zip VARCHAR, condition VARCHAR)")
    duck.con.executemany("INSERT INTO t VALUES (?, ?, ?)", [
        (21, "23058", "Heart"), (24, "23059", "Heart"), (26, "23060", "Viral"), (27, "23061", "Viral"),
        (43, "23058", "Kidney"), (43, "23059", "Heart"), (47, "23060", "Viral"), (49, "23061", "Viral"),
        (32, "23058", "Kidney"), (34, "23059", "Kidney"), (35, "23060", "AIDS"), (38, "23061", "AIDS")])
    duck.con.execute("CREATE TABLE t_research AS SELECT * FROM t WHERE age < 40")
    spec = spec_from_dict({
        "source": {"table": "t"},
        "attributes": {
            "age": {"role": "quasi_identifier", "hierarchy": {"intervals": {"widths": [10, 50]}}},
            "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 5}}},
            "condition": {"role": "sensitive", "hierarchy": {"mask": {"levels": 1}}}},
        "privacy": [{"k_anonymity": {"k": 4}},
                    {"t_closeness": {"attribute": "condition", "t": 0.5, "distance": "hierarchical"}},
                    {"delta_presence": {"subset": "t_research", "delta_min": 0.0, "delta_max": 1.0}}],
        "transformation": {"search": "optimal", "metric": "height"},
    })
    exhaustive = api.anonymize(spec, engine=duck, strategy="exhaustive", dry_run=True).as_dict()
    optimal = api.anonymize(spec, engine=duck, dry_run=True).as_dict()
    assert optimal["search"]["evaluated_in"] == "sql"
    assert optimal["search"]["value"] == exhaustive["search"]["value"]
    # Table 5.2 (ages by decade, ZIP 230**) is 4-anonymous: height 1 + 3 = 4 is reachable
    assert optimal["search"]["value"] <= 4
    assert optimal["privacy"]["k_anonymity"]["holds"] is True


def test_infeasible_search_says_so(adult_engine, adult_dir):
    d = adult_spec_dict(adult_dir, privacy=[{"k_anonymity": {"k": 40_000}}])
    with pytest.raises(InfeasibleError, match="no transformation satisfies"):
        api.anonymize(spec_from_dict(d), engine=adult_engine, dry_run=True)


def test_command_line_writes_the_found_table(tmp_path, adult_dir):
    d = adult_spec_dict(adult_dir, limit=0.0)
    d["source"] = {"file": str(adult_dir / "adult.csv"), "delimiter": ";", "all_text": True}
    d["output"] = {"mode": "table", "name": "adult_anon", "database": str(tmp_path / "out.duckdb")}
    (tmp_path / "spec.json").write_text(json.dumps(d))  # JSON is YAML
    proc = subprocess.run([sys.executable, "-m", "sqlanon", "anonymize", str(tmp_path / "spec.json"),
                           "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert list(report["transformation"]["levels"].values()) == [0, 4, 1, 1, 3, 2, 2, 1, 0]
    search = report["search"]
    assert {"seconds", "nodes_checked", "nodes_tagged", "nodes_pruned"} <= set(search)
    assert 0 <= search["nodes_rolled_up"] <= search["nodes_checked"]
    assert search["nodes_checked"] + search["nodes_tagged"] + search["nodes_pruned"] \
        <= search["lattice_size"]
    con = duckdb.connect(str(tmp_path / "out.duckdb"))
    assert con.execute("SELECT count(*), count(DISTINCT age) FROM adult_anon").fetchone() == (30162, 1)
