"""The ``heuristic`` strategy (Lightning from a Datafly seed) against exhaustive search and ARX.

* Random small lattices: the node returned is anonymous, its metric is never below the exhaustive
  optimum, and when the heuristic ran to its end it is the optimum.
* Adult (9 QIs, k = 5): the heuristic proves ARX's optimum (peer-semantics §6.1, §6.2).
* Creditcard (23 QIs, a lattice of about 2.5·10¹³ nodes): within a time limit the node returned is
  5-anonymous by the SQL check and by a plain pandas grouping, and its reported Loss is the SQL one.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from types import SimpleNamespace

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon import api
from sqlanon.domain.hierarchy import TableHierarchy, read_arx_csv
from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search import heuristic as heuristic_module
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.methods.generalization.search.heuristic import heuristic
from sqlanon.methods.generalization.search.limits import search_within
from sqlanon.methods.generalization.search.result import tied
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS, DATA, adult_spec_dict, require_data
from tests.methods.generalization.test_search_oracle import problem_spec

CREDITCARD = DATA / "creditcard"
TARGET = "default-payment-next-month"


@pytest.fixture(scope="module")
def engine():
    e = DuckDBEngine()
    yield e
    e.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(spec=problem_spec())
def test_heuristic_against_exhaustive(engine, spec):
    hs, rows, models, limit, metric = spec
    qis = [f"q{i}" for i in range(len(hs))]
    engine.con.execute("DROP TABLE IF EXISTS r")
    engine.con.execute(f"CREATE TABLE r ({', '.join(f'{q} VARCHAR' for q in qis)}, s VARCHAR)")
    engine.con.executemany(f"INSERT INTO r VALUES ({', '.join('?' * (len(qis) + 1))})", rows)
    problem = Problem(engine, table("r"), qis, {q: TableHierarchy(h) for q, h in zip(qis, hs)},
                      ["s"], models)
    lattice = lattice_of(problem)
    with Evaluator(problem) as ev:
        truth = SqlNodeEvaluator(ev, limit, metric)
        search(lattice, truth, "exhaustive")
        values = {n: truth.known(n) for n in lattice}
        memory = FastNodeEvaluator(ev, limit, metric)
        # checked in SQL (answers remembered from the exhaustive run; no distinct_values, so the
        # seed takes the fallback step) and in memory (Datafly's step, bounds known beforehand)
        runs = [search(lattice, truth, "heuristic"), search(lattice, memory, "heuristic")]
        stopped = [search_within(lattice, memory, "heuristic", max_checks=stop) for stop in (1, 3)]
    ok = [n for n, r in values.items() if r.anonymous]
    best = min((values[n].metric for n in ok), default=None)
    for r in runs:  # small lattices: the search runs to its end and proves its answer
        assert r.complete and r.strategy == "heuristic"
        if not ok:
            assert r.node is None and r.metric is None
            continue
        assert values[r.node].anonymous
        assert tied(r.metric, values[r.node].metric)
        assert tied(r.metric, best)
    for r in stopped:
        if r.node is not None:
            assert values[r.node].anonymous
            assert tied(r.metric, values[r.node].metric)
            assert r.metric >= best or tied(r.metric, best)
        if r.complete:  # the queue ran empty within the checks allowed
            assert (r.node is None and not ok) or tied(r.metric, best)
        else:
            assert r.checked <= 3


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(spec=problem_spec(), metric=st.just("kl_divergence"))
def test_metrics_without_bounds_are_searched_to_the_end(engine, spec, metric):
    """Without a lower bound (and not monotone under suppression) nothing may be pruned: the
    heuristic then checks its way through the lattice and still ends at the exhaustive optimum."""
    hs, rows, models, limit, _ = spec
    qis = [f"q{i}" for i in range(len(hs))]
    engine.con.execute("DROP TABLE IF EXISTS r")
    engine.con.execute(f"CREATE TABLE r ({', '.join(f'{q} VARCHAR' for q in qis)}, s VARCHAR)")
    engine.con.executemany(f"INSERT INTO r VALUES ({', '.join('?' * (len(qis) + 1))})", rows)
    problem = Problem(engine, table("r"), qis, {q: TableHierarchy(h) for q, h in zip(qis, hs)},
                      ["s"], models)
    lattice = lattice_of(problem)
    with Evaluator(problem) as ev:
        truth = SqlNodeEvaluator(ev, limit, metric)
        search(lattice, truth, "exhaustive")
        result = search(lattice, truth, "heuristic")
    ok = [truth.known(n).metric for n in lattice if truth.known(n).anonymous]
    assert result.complete
    assert (result.node is None) if not ok else tied(result.metric, min(ok))


def test_heuristic_needs_a_metric(engine):
    engine.con.execute("CREATE OR REPLACE TABLE m (q VARCHAR)")
    engine.con.execute("INSERT INTO m VALUES ('a'), ('b')")
    problem = Problem(engine, table("m"), ["q"], {"q": TableHierarchy([["a", "*"], ["b", "*"]])}, [],
                      [KAnonymity(2)])
    with Evaluator(problem) as ev, pytest.raises(SpecError, match="metric: the heuristic search "
                                                                  "needs a metric to minimize"):
        search(lattice_of(problem), SqlNodeEvaluator(ev, 0.0, None), "heuristic")


@pytest.mark.parametrize("limit, node, loss", [
    (0.0, (0, 4, 1, 1, 3, 2, 2, 1, 0), 0.5731509655590044),   # ARX 3.9.2 (peer-semantics §6.1)
    (0.02, (0, 3, 0, 2, 2, 1, 1, 2, 0), 0.3137130352819242),  # ARX 3.9.2 (§6.2)
])
def test_adult_heuristic_proves_arx_s_optimum(adult_engine, adult_hierarchies, limit, node, loss):
    problem = Problem(adult_engine, table("adult"), ADULT_QIS, adult_hierarchies, [], [KAnonymity(5)])
    with Evaluator(problem) as ev:
        result = search(lattice_of(problem), FastNodeEvaluator(ev, limit, "loss"), "heuristic")
    assert result.complete, "the default time limit stopped the search on Adult"
    assert result.node == node
    assert result.metric == loss
    assert result.checked < 12_960


def test_anonymize_with_the_heuristic(adult_engine, adult_dir):
    d = adult_spec_dict(adult_dir)
    d["transformation"]["search"] = "heuristic"
    found = api.anonymize(spec_from_dict(d), engine=adult_engine, dry_run=True).as_dict()["search"]
    assert found["strategy"] == "heuristic"
    assert found["complete"] is True and found["optimal"] is True
    assert found["value"] == 0.5731509655590044  # ARX 3.9.2, Adult k = 5, 0 %


@pytest.fixture(scope="module")
def creditcard():
    """Table ``cc`` (creditcard, as text) with its 24 QIs and their hierarchies: one evaluator for
    k = 5 (its hierarchy look-up tables are built once) and the file as read by pandas."""
    path = require_data(CREDITCARD / "creditcard_int.csv")
    e = DuckDBEngine()
    e.con.execute("CREATE TABLE cc AS SELECT * FROM read_csv(?, delim=';', header=true, "
                  "all_varchar=true)", [str(path)])
    qis = [c for (c, *_) in e.con.execute("DESCRIBE cc").fetchall()]  # every column has a hierarchy
    hierarchies = {q: read_arx_csv(CREDITCARD / f"creditcard_int_hierarchy_{q}.csv") for q in qis}
    problem = Problem(e, table("cc"), qis, hierarchies, [], [KAnonymity(5)])
    with Evaluator(problem) as ev:
        yield ev, pd.read_csv(path, sep=";", dtype=str)
    e.close()


def classes_by_pandas(frame: pd.DataFrame, qis, hierarchies, node) -> pd.Series:
    """The class sizes of the generalized table, straight from the hierarchy rows."""
    cols = {q: frame[q].map({row[0]: row[level] for row in hierarchies[q].lookup_rows()})
            for q, level in zip(qis, node)}
    return pd.DataFrame(cols).value_counts(dropna=False)


@pytest.mark.parametrize("limit", [0.0, 0.02])
def test_creditcard_heuristic_within_a_time_limit(creditcard, limit):
    ev, frame = creditcard
    qis, hierarchies = ev.p.qis, ev.p.hierarchies
    lattice = lattice_of(ev.p)
    assert len(qis) == 24 and TARGET in qis and not lattice.enumerable
    nodes = FastNodeEvaluator(ev, limit, "loss")
    start = time.perf_counter()
    if limit:  # the heuristic's own limit
        result = heuristic(lattice, nodes, time_limit=10)
    else:  # a limit set around the evaluator
        result = search_within(lattice, nodes, "heuristic", time_limit=10)
    assert time.perf_counter() - start < 60
    assert result.node is not None and result.complete is False
    check = ev.check(dict(zip(qis, result.node)), limit)
    assert check.anonymous and check.min_class_size >= 5
    assert result.metric == pytest.approx(get_metric("loss").compute(MetricContext(ev, check)),
                                          rel=1e-12, abs=1e-12)
    assert result.metric < 1.0  # the top node's Loss is 1 (every attribute fully generalized)
    sizes = classes_by_pandas(frame, qis, hierarchies, result.node)
    suppressed = int(sizes[sizes < 5].sum())
    assert suppressed <= math.floor(limit * len(frame))
    assert check.suppressed_rows == suppressed


def test_heuristic_stops_by_default(creditcard, monkeypatch):
    """Without a limit the search stops at DEFAULT_TIME_LIMIT with the best node found so far. The
    heuristic's clock stands still until a check finds an anonymous node and then passes the limit,
    so the outcome does not depend on how many nodes a busy machine checks in a second: the search
    must return that node and check no other after it."""
    ev, _ = creditcard
    nodes = FastNodeEvaluator(ev, 0.0, "loss")
    monkeypatch.setattr(heuristic_module, "DEFAULT_TIME_LIMIT", 1.0)
    checked, found = [], []
    evaluate = nodes.evaluate

    def noting_anonymous(node):
        r = evaluate(node)
        checked.append(node)
        if r.anonymous:
            found.append(node)
        return r

    monkeypatch.setattr(nodes, "evaluate", noting_anonymous)
    monkeypatch.setattr(heuristic_module, "time", SimpleNamespace(perf_counter=lambda: 2.0 if found else 0.0))
    result = search(lattice_of(ev.p), nodes, "heuristic")
    assert result.complete is False and result.node is not None
    assert found == [result.node] == checked[-1:] and result.checked == len(checked)
    assert result.seconds == 2.0


def test_command_line_strategy_heuristic(tmp_path, adult_dir):
    d = adult_spec_dict(adult_dir)
    d["source"] = {"file": str(adult_dir / "adult.csv"), "delimiter": ";", "all_text": True}
    (tmp_path / "spec.json").write_text(json.dumps(d))  # JSON is YAML
    proc = subprocess.run([sys.executable, "-m", "sqlanon", "anonymize", str(tmp_path / "spec.json"),
                           "--strategy", "heuristic", "--dry-run", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["search"]["strategy"] == "heuristic" and report["search"]["optimal"] is True
    assert list(report["transformation"]["levels"].values()) == [0, 4, 1, 1, 3, 2, 2, 1, 0]  # ARX
