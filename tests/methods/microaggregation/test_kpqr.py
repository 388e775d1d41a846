"""(k,p,q,r)-anonymity by the microaggregation heuristic of Domingo-Ferrer, Sebé and Solanas (SDM 2008).

Outputs are verified by sqlanon's (k,p,q,r) checker in SQL on DuckDB and by a plain-Python checker
written from Definition 7 (the checker's reading: a group holding a value rarer than q in the table
needs p distinct values and Var(group)/Var(table) >= r; every group needs k rows).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.domain.models.numeric_sensitive import KPQRAnonymity
from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.kpqr import kpqr
from sqlanon.methods.microaggregation.algorithms.mdav import mdav
from sqlanon.methods.microaggregation.algorithms.registry import get_algorithm, traits
from sqlanon.methods.microaggregation.distance.qi_space import scaled
from sqlanon.methods.microaggregation.records import NominalColumn, Records
from tests.methods.microaggregation.checked import check_masked


def definition_7(values: np.ndarray, labels: np.ndarray, k: int, p: int, q: float, r: float) -> bool:
    """Definition 7 in plain Python, group by group."""
    n = len(values)
    frequency = {v: list(values).count(v) / n for v in set(values.tolist())}
    mean = sum(values) / n
    total = sum((v - mean) ** 2 for v in values) / n
    for g in set(labels.tolist()):
        group = [float(v) for v, lab in zip(values, labels) if lab == g]
        if len(group) < k:
            return False
        if not any(frequency[v] < q for v in group):
            continue
        if len(set(group)) < p:
            return False
        m = sum(group) / len(group)
        within = sum((v - m) ** 2 for v in group) / len(group)
        if total > 0 and within < r * total - 1e-9 * total:
            return False
    return True


def information_loss(x: np.ndarray, labels: np.ndarray) -> float:
    """100 · SSE / SST on the standardized quasi-identifiers (the paper's measure)."""
    z = scaled(x)
    sse = sum(float(((z[labels == g] - z[labels == g].mean(axis=0)) ** 2).sum())
              for g in range(labels.max() + 1))
    return 100 * sse / float(((z - z.mean(axis=0)) ** 2).sum())


def census_like(skewed: bool, seed: int = 0) -> Records:
    """The paper's set-up: 1080 records, 12 standardized numeric keys, L in 1..10.

    Unskewed: each value 108 times (all rare for q = 0.2). Skewed: 1..9 ten times each, 10 in 990.
    The keys are correlated (a few latent factors), as survey keys are.
    """
    rng = np.random.default_rng(seed)
    n = 1080
    x = rng.normal(size=(n, 3)) @ rng.normal(size=(3, 12)) + 0.3 * rng.normal(size=(n, 12))
    if skewed:
        values = np.r_[np.repeat(np.arange(1, 10), 10), np.full(990, 10)].astype(float)
    else:
        values = np.repeat(np.arange(1, 11), 108).astype(float)
    rng.shuffle(values)
    return Records(x=x, names=tuple(f"key {i}" for i in range(12)), sensitive={"L": values})


@pytest.mark.parametrize("skewed", [False, True])
@pytest.mark.parametrize("k, p, r", [(3, 2, 0.5), (4, 3, 0.5), (7, 5, 0.5), (5, 4, 0.1), (5, 4, 0.9)])
def test_census_like_passes_the_checker(duck, skewed, k, p, r):
    records = census_like(skewed)
    values = records.sensitive["L"]
    labels = kpqr(records, k, attribute="L", p=p, q=0.2, r=r, seed=7)
    assert definition_7(values, labels, k, p, 0.2, r)
    names = [f"key {i}" if i else "key \"0\"; ä" for i in range(12)]
    node = check_masked(duck, records.x, labels, names, "L", values,
                        [KPQRAnonymity("L", k, p, 0.2, r)])
    assert node.anonymous, node.models


def test_information_loss_grows_with_r_and_exceeds_plain_k_anonymity():
    """The paper's trends (Tables 1-3): IL rises with r; plain k-anonymity (MDAV) loses least."""
    records = census_like(False)
    loss = {r: information_loss(records.x, kpqr(records, 5, attribute="L", p=4, q=0.2, r=r, seed=3))
            for r in (0.1, 0.5, 0.9)}
    assert loss[0.1] <= loss[0.5] < loss[0.9]
    assert information_loss(records.x, mdav(records.x, 5)) < loss[0.1]


def test_frequent_values_need_no_protection():
    """Skewed data: the 990 records holding the frequent value are grouped by MDAV alone."""
    records = census_like(True)
    values = records.sensitive["L"]
    labels = kpqr(records, 4, attribute="L", p=3, q=0.2, r=0.5, seed=1)
    sensitive_groups = set(labels[values != 10].tolist())
    plain = np.isin(labels, list(sensitive_groups), invert=True)
    assert (values[plain] == 10).all()
    sizes = np.bincount(labels)
    assert sizes[list(set(labels[plain].tolist()))].max() < 8  # MDAV groups: k..2k-1


def test_seed_makes_runs_repeatable():
    records = census_like(False, seed=5)
    a = kpqr(records, 4, attribute="L", p=3, q=0.2, r=0.5, seed=11)
    b = kpqr(records, 4, attribute="L", p=3, q=0.2, r=0.5, seed=11)
    assert (a == b).all()
    unseeded = kpqr(records, 4, attribute="L", p=3, q=0.2, r=0.5)
    assert definition_7(records.sensitive["L"], unseeded, 4, 3, 0.2, 0.5)


def test_text_codes_read_as_numbers(duck):
    rng = np.random.default_rng(2)
    n = 120
    x = rng.normal(size=(n, 2))
    codes = rng.integers(0, 6, n)
    column = NominalColumn(codes, ("1", "2", "3", "10", "20", "40"))
    labels = kpqr(Records(x=x, names=("a", "b"), sensitive={"s": column}), 3, attribute="s", p=2,
                  q=0.3, r=0.4, seed=0)
    numbers = np.array([1, 2, 3, 10, 20, 40], dtype=float)[codes]
    assert definition_7(numbers, labels, 3, 2, 0.3, 0.4)


def test_registered():
    assert get_algorithm("kpqr") is kpqr and traits("kpqr").sensitive


@st.composite
def tables(draw):
    n = draw(st.integers(2, 40))
    x = np.array(draw(st.lists(st.lists(st.integers(-4, 4), min_size=2, max_size=2), min_size=n,
                               max_size=n)), dtype=float)
    values = np.array(draw(st.lists(st.integers(0, draw(st.integers(1, 8))), min_size=n, max_size=n)),
                      dtype=float)
    distinct = len(np.unique(values))
    k = draw(st.integers(1, n))
    p = draw(st.integers(1, max(1, min(k, distinct))))
    q = draw(st.sampled_from([0.05, 0.1, 0.2, 0.5, 1.0]))
    r = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
    return x, values, k, p, q, r


@settings(max_examples=150)
@given(tables(), st.integers(0, 2**32))
def test_property_output_satisfies_definition_7(table, seed):
    x, values, k, p, q, r = table
    labels = kpqr(Records(x=x, names=("a", "b"), sensitive={"s": values}), k, attribute="s", p=p, q=q,
                  r=r, seed=seed)
    assert labels.shape == (len(x),)
    assert set(labels.tolist()) == set(range(labels.max() + 1))
    assert definition_7(values, labels, k, p, q, r)


def _records(values=None):
    rng = np.random.default_rng(0)
    v = rng.integers(0, 5, 20).astype(float) if values is None else values
    return Records(x=rng.normal(size=(len(v), 2)), names=("a", "b"), sensitive={"s": v})


@pytest.mark.parametrize("options, message", [
    ({"p": 4, "k": 3}, r"transformation\.p: p must be an integer in 1\.\.k \(3\), got 4"),
    ({"p": 0}, r"p must be an integer in 1\.\.k"),
    ({"q": 0}, r"transformation\.q: q must be a number in \(0, 1\], got 0"),
    ({"q": 1.5}, r"q must be a number in \(0, 1\]"),
    ({"r": -0.1}, r"transformation\.r: r must be a number in \[0, 1\], got -0\.1"),
    ({"r": 2}, r"r must be a number in \[0, 1\]"),
    ({"r": "0.5"}, r"r must be a number"),
    ({"k": 21}, r"k = 21 is larger than the number of rows \(20\)"),
    ({"attribute": "salary"}, r"transformation\.attribute: confidential attribute 'salary'"),
    ({"seed": "x"}, r"transformation\.seed: seed must be an integer"),
])
def test_bad_parameters(options, message):
    kwargs = {"k": 3, "attribute": "s", "p": 2, "q": 0.2, "r": 0.5, **options}
    k = kwargs.pop("k")
    with pytest.raises(SpecError, match=message):
        kpqr(_records(), k, **kwargs)


def test_bad_confidential_values():
    values = np.arange(20, dtype=float)
    values[3] = np.nan
    with pytest.raises(SpecError, match=r"'s' has missing or infinite values \(1 rows\)"):
        kpqr(_records(values), 3, attribute="s", p=2, q=0.2, r=0.5)
    with pytest.raises(SpecError, match="holds 1 distinct value\\(s\\) of 's', fewer than p = 2"):
        kpqr(_records(np.ones(20)), 3, attribute="s", p=2, q=0.2, r=0.5)
    text = NominalColumn(np.zeros(20, dtype=np.int64), ("flu",))
    r = _records()
    with pytest.raises(SpecError, match="needs a numeric confidential attribute"):
        kpqr(Records(x=r.x, names=r.names, sensitive={"s": text}), 3, attribute="s", p=1, q=0.2, r=0.5)


def test_plain_mdav_fails_both_checkers(duck):
    """Control: k-anonymity alone is not (k,p,q,r)-anonymous here, and both checkers say so."""
    records = census_like(False)
    values = records.sensitive["L"]
    labels = mdav(records.x, 5)
    assert not definition_7(values, labels, 5, 4, 0.2, 0.5)
    node = check_masked(duck, records.x, labels, list(records.names), "L", values,
                        [KPQRAnonymity("L", 5, 4, 0.2, 0.5)])
    assert not node.anonymous


def test_spec_through_the_pipeline_passes_the_checker(duck):
    """``algorithm: kpqr`` in a spec writes a table that the SQL (k,p,q,r) checker accepts."""
    import sqlanon as sa
    from sqlanon.domain.hierarchy import IntervalHierarchy
    from sqlanon.methods.generalization.evaluator import Evaluator, Problem
    from sqlanon.sql.nodes import table

    records = census_like(True, seed=2)
    names = ["k1", "k2", "k3"]
    frame = pd.DataFrame(records.x[:, :3], columns=names)
    frame["id"] = range(len(frame))
    frame["L"] = records.sensitive["L"]
    duck.con.register("frame", frame)
    duck.con.execute("CREATE TABLE census AS SELECT * FROM frame")
    spec = sa.spec_from_dict({
        "source": {"table": "census"},
        "attributes": {**{c: {"role": "quasi_identifier"} for c in names},
                       "L": {"role": "sensitive"}, "id": {"role": "insensitive"}},
        "privacy": [{"k_anonymity": {"k": 4}}],
        "transformation": {"method": "microaggregation", "algorithm": "kpqr", "k": 4, "p": 3,
                           "q": 0.2, "r": 0.5, "seed": 5, "key": ["id"]},
        "output": {"mode": "table", "name": "census_anon"}})
    sa.apply(spec, engine=duck)
    p = Problem(duck, table("census_anon"), names, {c: IntervalHierarchy((1,)) for c in names}, ["L"],
                [KPQRAnonymity("L", 4, 3, 0.2, 0.5)])
    with Evaluator(p) as ev:
        node = ev.check({c: 0 for c in names})
    assert node.anonymous and node.rows == len(frame), node.models


@settings(max_examples=80)
@given(st.integers(4, 40), st.integers(2, 7), st.integers(2, 8), st.integers(2, 5),
       st.sampled_from([0.1, 0.2, 0.5, 1.0]), st.sampled_from([0.0, 0.2, 0.5, 0.9]),
       st.integers(0, 2**16))
def test_heuristic_equals_its_transcription(n, k, distinct, p, q, r, seed):
    from tests.methods.microaggregation import kpqr_reference as ref

    rng = np.random.default_rng(seed)
    k = min(k, n)
    x = rng.normal(size=(n, 2))
    levels = rng.normal(size=distinct) * 10
    values = levels[rng.integers(0, distinct, n)]
    p = min(p, k, len(np.unique(values)))
    labels = kpqr(Records(x=x, names=("a", "b"), sensitive={"s": values}), k, attribute="s", p=p,
                  q=q, r=r, seed=seed)
    expected = ref.heuristic(x, values, k, p, q, r, seed)
    assert sorted(sorted(np.flatnonzero(labels == g).tolist()) for g in range(labels.max() + 1)) \
        == sorted(sorted(g) for g in expected)
