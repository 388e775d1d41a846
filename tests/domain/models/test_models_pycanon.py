"""Agreement with pycanon 1.3 (an independent checker) on generalizations of Adult.

sqlanon generalizes the table (its own generalization SQL); the generalized rows go to pycanon as a
DataFrame, and pycanon's values are compared with what sqlanon's models achieve on the same node.

pycanon's semantics, read from its source (``pycanon.anonymity``):

* ``k_anonymity``: the smallest class; ``l_diversity``: the fewest distinct values in a class;
* ``entropy_l_diversity``: ``int(min_E exp(H(E)))`` with natural logs: the *floor* of sqlanon's
  achieved entropy l (exp of the smallest entropy);
* ``alpha_k_anonymity``: (largest share of one value in a class, k);
* ``t_closeness``: for a text attribute the largest total variation ½Σ|p − q| (equal distance), for a
  numeric one the ordered EMD over the table's distinct values in numeric order;
* ``basic_beta_likeness``: the largest (p − q)/q over classes and values;
* ``delta_disclosure``: the largest |ln(p/q)| over the values *present* in each class (absent values
  are skipped, so it is sqlanon's per-class log-ratio statistic, not its δ-disclosure verdict);
* ``recursive_c_l_diversity``: returns (c, l) with l the distinct l and c computed from the counts
  sorted *ascending* (``np.sort``), i.e. not the paper's r₁ < c·(r_l + … + r_m). Only its l is
  compared; sqlanon's recursive model is checked against the definition computed with pandas here.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from pycanon import anonymity
from sqlglot import exp

from sqlanon.domain.models.disclosure import MaxLogRatio
from sqlanon.methods.dataset import open_dataset
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.problem import problem_for
from sqlanon.spec import spec_from_dict
from tests.conftest import adult_spec_dict

QIS_A = ["sex", "age", "race", "marital-status", "education"]  # sensitive: occupation (text)
QIS_B = ["sex", "race", "marital-status", "education", "native-country"]  # sensitive: age (numeric)
# level vectors giving 7 to 32 classes on the rows used (pycanon's cost grows with classes × values)
NODES_A = [(0, 4, 0, 2, 3), (1, 4, 1, 1, 0), (0, 3, 1, 2, 2), (1, 1, 1, 2, 3), (0, 4, 0, 2, 2),
           (1, 4, 0, 1, 3), (1, 3, 1, 2, 2), (1, 4, 0, 1, 2), (1, 2, 1, 2, 2), (0, 4, 1, 1, 2),
           (1, 3, 1, 1, 2), (0, 4, 0, 1, 3), (0, 3, 1, 1, 3), (1, 1, 1, 1, 3)]
NODES_B = [(1, 1, 0, 3, 2), (1, 1, 1, 1, 2), (0, 1, 2, 3, 1), (1, 0, 1, 3, 2), (1, 0, 2, 3, 1),
           (0, 0, 1, 3, 2)]


def _models(sa: str, distance: str) -> list[dict]:
    """Models with parameters every table meets, so ``achieved`` covers every class."""
    return [
        {"k_anonymity": {"k": 1}},
        {"l_diversity": {"attribute": sa, "l": 1}},
        {"l_diversity": {"attribute": sa, "l": 1, "variant": "entropy"}},
        {"alpha_k_anonymity": {"attribute": sa, "alpha": 1.0, "k": 1}},
        {"t_closeness": {"attribute": sa, "t": 1.0, "distance": distance}},
        {"beta_likeness": {"attribute": sa, "beta": 1e9}},
        {"delta_disclosure": {"attribute": sa, "delta": 1e9}},
    ]


def _run(engine, adult_dir, qis, node, sa, distance):
    d = adult_spec_dict(adult_dir, qis=qis, sensitive=[sa], privacy=_models(sa, distance),
                        levels=dict(zip(qis, node)))
    if sa == "age":
        d["attributes"]["age"]["type"] = "integer"
    spec = spec_from_dict(d)
    with Evaluator(problem_for(spec, open_dataset(spec, engine))) as ev:
        levels = dict(zip(qis, node))
        checked = ev.check(levels)
        achieved = {m.model + ("#entropy" if i == 2 else ""): m.achieved
                    for i, m in enumerate(checked.models)}
        rows = engine.fetch_dicts(exp.select(exp.Star()).from_(checked.verdict.copy()))
        achieved["log_ratio"] = max(r[MaxLogRatio(sa).column] for r in rows)
        names, data = engine.fetch(ev.generalizer.select(ev.p.source, levels, keep=[sa]))
        generalized = pd.DataFrame(data, columns=names)
    if sa == "age":
        generalized["age"] = generalized["age"].astype(int)
    return achieved, generalized


def _recursive_c(df: pd.DataFrame, qis: list[str], sa: str, l: int) -> float:
    """The smallest c (as a bound) of recursive (c,l)-diversity: max over classes of r₁/(r_l+…+r_m)."""
    worst = 0.0
    for _, g in df.groupby(qis):
        r = sorted(g[sa].value_counts().tolist(), reverse=True)
        tail = sum(r[l - 1:])
        worst = max(worst, math.inf if tail == 0 else r[0] / tail)
    return worst


ROWS = 5000
"""pycanon loops over classes and values in pandas; the first 5,000 rows of Adult keep it quick."""


@pytest.fixture(scope="module")
def adult_head(adult_dir):
    from sqlanon.engines.duckdb import DuckDBEngine

    engine = DuckDBEngine()
    engine.con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                       "all_varchar=true) LIMIT ?", [str(adult_dir / "adult.csv"), ROWS])
    yield engine
    engine.close()


CASES = [("A", QIS_A, n, "occupation", "equal") for n in NODES_A] + \
        [("B", QIS_B, n, "age", "ordered") for n in NODES_B]


@pytest.mark.parametrize("case, qis, node, sa, distance", CASES,
                         ids=[f"{c[0]}-{''.join(map(str, c[2]))}" for c in CASES])
def test_agrees_with_pycanon(adult_head, adult_dir, case, qis, node, sa, distance):
    ach, df = _run(adult_head, adult_dir, qis, node, sa, distance)
    assert len(df) == ROWS
    assert anonymity.k_anonymity(df, qis) == ach["k_anonymity"]
    assert anonymity.l_diversity(df, qis, [sa]) == ach[f"l_diversity[{sa}]"]
    entropy_l = ach[f"l_diversity[{sa}]#entropy"]
    pyc_entropy = anonymity.entropy_l_diversity(df, qis, [sa])
    if abs(entropy_l - round(entropy_l)) < 1e-9:  # exp(H) an integer: floors may differ by rounding
        assert pyc_entropy in (round(entropy_l), round(entropy_l) - 1)
    else:
        assert pyc_entropy == math.floor(entropy_l)
    alpha, k = anonymity.alpha_k_anonymity(df, qis, [sa])
    assert k == ach["k_anonymity"]
    assert alpha == pytest.approx(ach[f"alpha_k_anonymity[{sa}]"], abs=1e-12)
    assert anonymity.t_closeness(df, qis, [sa]) == pytest.approx(ach[f"t_closeness[{sa}]"], abs=1e-12)
    assert anonymity.basic_beta_likeness(df, qis, [sa]) == pytest.approx(
        ach[f"beta_likeness[{sa}]"], rel=1e-12)
    assert anonymity.delta_disclosure(df, qis, [sa]) == pytest.approx(ach["log_ratio"], rel=1e-12)
    _, l = anonymity.recursive_c_l_diversity(df, qis, [sa])
    assert l == ach[f"l_diversity[{sa}]"]


@pytest.mark.parametrize("node", NODES_A[:3])
def test_recursive_diversity_against_pandas(adult_head, adult_dir, node):
    _, df = _run(adult_head, adult_dir, QIS_A, node, "occupation", "equal")
    l = anonymity.l_diversity(df, QIS_A, ["occupation"])
    c = _recursive_c(df, QIS_A, "occupation", l)
    for factor, holds in ((1.0, False), (1.000001, True)):
        d = adult_spec_dict(adult_dir, qis=QIS_A, sensitive=["occupation"], levels=dict(zip(QIS_A, node)),
                            privacy=[{"l_diversity": {"attribute": "occupation", "l": l,
                                                      "variant": "recursive", "c": c * factor}}])
        spec = spec_from_dict(d)
        with Evaluator(problem_for(spec, open_dataset(spec, adult_head))) as ev:
            assert ev.check(dict(zip(QIS_A, node))).anonymous is holds
