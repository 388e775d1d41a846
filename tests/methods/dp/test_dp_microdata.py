"""DP microdata: Lemma 10.1, insensitivity of the order (Def. 9.1), privacy-loss ratios, refusals."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.domain.hierarchy import IntervalHierarchy, MapHierarchy
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import HierarchyError, SpecError
from sqlanon.methods.dp import mechanisms
from sqlanon.methods.dp.bounds import Bounds
from sqlanon.methods.dp.microdata import dp_microaggregate
from sqlanon.methods.dp.order import group_column, grouped_rows, label_column, value_column
from sqlanon.methods.dp.taxonomy import NominalDomain
from tests.postgres.conftest import pg, pg_dsn  # noqa: F401  (fixtures; pg_server is the suite's)

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")

DISEASES = MapHierarchy({"flu": ["respiratory", "*"], "cold": ["respiratory", "*"],
                         "ulcer": ["stomach", "*"], "gastritis": ["stomach", "*"],
                         "it's; x": ["other", "*"]})


def _engine_with(rows: list[tuple], columns: str) -> DuckDBEngine:
    engine = DuckDBEngine()
    engine.con.execute(f"CREATE TABLE t ({columns})")
    if rows:
        marks = ", ".join("?" for _ in rows[0])
        engine.con.executemany(f"INSERT INTO t VALUES ({marks})", [list(r) for r in rows])
    return engine


def _groups(engine, numeric, nominal, k, method, keep=("id",)):
    """{id: group start} per group column, from the SQL the release uses."""
    q = grouped_rows("t", numeric, nominal, k, method=method, keep=keep)
    names, rows = engine.fetch(q)
    return [dict(zip(names, r)) for r in rows]


def _centroids(values: list[float], k: int) -> list[float]:
    engine = _engine_with([(i, v) for i, v in enumerate(values)], "id INTEGER, x DOUBLE")
    rows = _groups(engine, {"x": Bounds(-1e9, 1e9)}, {}, k, "individual_ranking")
    g = group_column(value_column(0))
    out: dict[int, list[float]] = {}
    for r in rows:
        out.setdefault(r[g], []).append(r[value_column(0)])
    engine.close()
    return [float(np.mean(out[s])) for s in sorted(out)]


# -- Lemma 10.1 ------------------------------------------------------------------------------------

def test_lemma_10_1_worked_example():
    # Digest §4.7: 1..10, k = 3 -> centroids 2, 5, 8.5; x = 1 -> 11 gives 3, 6, 9.5; sum 3 <= 10/3.
    before = _centroids(list(range(1, 11)), 3)
    after = _centroids([11, *range(2, 11)], 3)
    assert before == [2.0, 5.0, 8.5] and after == [3.0, 6.0, 9.5]
    assert sum(abs(a - b) for a, b in zip(after, before)) == pytest.approx(3.0)
    assert 3.0 <= 10 / 3


@settings(max_examples=25)
@given(st.lists(st.integers(0, 1000), min_size=4, max_size=30), st.integers(2, 4), st.data())
def test_lemma_10_1_bound_holds(values, k, data):
    if len(values) < k:
        return
    i = data.draw(st.integers(0, len(values) - 1))
    new = data.draw(st.integers(0, 1000))
    changed = list(values)
    changed[i] = new
    moved = sum(abs(a - b) for a, b in zip(_centroids(changed, k), _centroids(values, k)))
    assert moved <= abs(new - values[i]) / k + 1e-9


# -- insensitivity of the order (Def. 9.1) ---------------------------------------------------------

def _clusters(rows, column):
    out: dict[int, set[int]] = {}
    for r in rows:
        out.setdefault(r[column], set()).add(r["id"])
    return [out[s] for s in sorted(out)]


points = st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=6, max_size=25,
                  unique=True)


@settings(max_examples=25)
@given(points, st.integers(2, 3), st.data())
def test_insensitive_groups_change_by_at_most_one_record(pts, k, data):
    i = data.draw(st.integers(0, len(pts) - 1))
    replacement = data.draw(st.tuples(st.integers(-5, 25), st.integers(-5, 25)))  # clamped to 0..20
    bounds = {"a": Bounds(0, 20), "b": Bounds(0, 20)}
    rows = [(j, a, b) for j, (a, b) in enumerate(pts)]
    changed = list(rows)
    changed[i] = (i, *replacement)
    shuffled = list(rows)
    data.draw(st.randoms()).shuffle(shuffled)
    cols = "id INTEGER, a DOUBLE, b DOUBLE"
    before = _clusters(_groups(_engine_with(rows, cols), bounds, {}, k, "insensitive"), group_column())
    after = _clusters(_groups(_engine_with(changed, cols), bounds, {}, k, "insensitive"), group_column())
    again = _clusters(_groups(_engine_with(shuffled, cols), bounds, {}, k, "insensitive"),
                      group_column())
    assert again == before  # the row order of the table does not matter
    assert len(before) == len(after) == len(pts) // k
    for c, c2 in zip(before, after):
        # same ids except that one record may leave and another enter (Def. 9.1)
        assert len(c - c2) <= 1 and len(c2 - c) <= 1


@settings(max_examples=30)
@given(points, st.data())
def test_replacing_one_record_moves_others_by_at_most_one_position(pts, data):
    # With groups of one, the group of a row is its position in the insensitive order.
    i = data.draw(st.integers(0, len(pts) - 1))
    replacement = data.draw(st.tuples(st.integers(0, 20), st.integers(0, 20)))
    bounds = {"a": Bounds(0, 20), "b": Bounds(0, 20)}
    rows = [(j, a, b) for j, (a, b) in enumerate(pts)]
    changed = list(rows)
    changed[i] = (i, *replacement)
    position = []
    for table_rows in (rows, changed):
        engine = _engine_with(table_rows, "id INTEGER, a DOUBLE, b DOUBLE")
        position.append({r["id"]: r[group_column()]
                         for r in _groups(engine, bounds, {}, 1, "insensitive")})
        engine.close()
    assert sorted(position[0].values()) == list(range(len(pts)))  # a strict total order
    for j in range(len(pts)):
        if j != i:
            assert abs(position[0][j] - position[1][j]) <= 1


def test_insensitive_order_is_distance_to_the_lower_corner_then_lexicographic():
    rows = [(0, 3.0, 0.0), (1, 0.0, 3.0), (2, 1.0, 1.0), (3, 0.0, 0.0), (4, 2.0, 2.0), (5, 9.0, 9.0)]
    engine = _engine_with(rows, "id INTEGER, a DOUBLE, b DOUBLE")
    out = _groups(engine, {"a": Bounds(0, 10), "b": Bounds(0, 10)}, {}, 2, "insensitive")
    cluster = {r["id"]: r[group_column()] for r in out}
    # distances² 0, 2, 8, 9 (tie: (0,3) before (3,0)), 162: groups {3,2}, {4,1}, {0,5}
    assert cluster == {3: 0, 2: 0, 4: 2, 1: 2, 0: 4, 5: 4}


@settings(max_examples=30)
@given(points, st.integers(-30, 0), st.integers(21, 60), st.integers(-30, 0), st.integers(21, 60))
def test_insensitive_order_matches_a_python_reference(pts, lo_a, hi_a, lo_b, hi_b):
    # Squared eq. 9.7 distance to the corner (lo_a, lo_b), then the values, as plain Python.
    rows = [(j, a, b) for j, (a, b) in enumerate(pts)]
    engine = _engine_with(rows, "id INTEGER, a DOUBLE, b DOUBLE")
    got = {r["id"]: r[group_column()] for r in _groups(
        engine, {"a": Bounds(lo_a, hi_a), "b": Bounds(lo_b, hi_b)}, {}, 1, "insensitive")}
    engine.close()

    def key(r):
        _, a, b = r
        za, zb = (a - lo_a) / (hi_a - lo_a), (b - lo_b) / (hi_b - lo_b)
        return (za * za + zb * zb, a, b)

    assert [r[0] for r in sorted(rows, key=key)] == sorted(got, key=got.get)


def test_nominal_order_and_taxonomy_geometry():
    d = NominalDomain.from_hierarchy("c", DISEASES)
    a_b, a_t, width = d.boundaries
    assert d.taxonomy.label[a_b] == "it's; x"  # the only leaf alone under its parent: most marginal
    assert width == pytest.approx(math.log2(1 + 4 / 5))
    assert d.diameter == pytest.approx(width)
    assert set(d.order_key()) == {"flu", "cold", "ulcer", "gastritis", "it's; x"}
    assert d.order_key()["it's; x"] == 0
    assert {d.taxonomy.label[c] for c in d.concepts} == {
        "*", "respiratory", "stomach", "other", "flu", "cold", "ulcer", "gastritis", "it's; x"}


# -- privacy-loss ratios on neighbouring tiny tables ------------------------------------------------

def _max_log_ratio(a: np.ndarray, b: np.ndarray, min_count: int) -> tuple[float, float]:
    ca, cb = Counter(map(tuple, a)), Counter(map(tuple, b))
    worst, allowance = 0.0, 0.0
    for o in set(ca) & set(cb):
        x, y = ca[o], cb[o]
        if x >= min_count and y >= min_count:
            r = abs(math.log(x / y))
            if r > worst:
                worst, allowance = r, 4 * math.sqrt(1 / x + 1 / y)
    return worst, allowance


def _release_numeric(values, k, eps, draws, seed, method="individual_ranking"):
    """The groups and means come from the SQL of the release; the Laplace step is the release's,
    repeated ``draws`` times at the reported sensitivity (one draw per group)."""
    engine = _engine_with([(i, v) for i, v in enumerate(values)], "id INTEGER, x DOUBLE")
    report = dp_microaggregate(engine, "t", "out", k=k, epsilon=eps, bounds={"x": (0, 8)},
                               method=method, seed=seed, trust_bounds=True)
    rows = _groups(engine, {"x": Bounds(0, 8)}, {}, k, method)
    g = group_column(value_column(0)) if method == "individual_ranking" else group_column()
    groups: dict[int, list[float]] = {}
    for r in rows:
        groups.setdefault(r[g], []).append(r[value_column(0)])
    means = np.array([np.mean(groups[s]) for s in sorted(groups)])
    released = engine.fetch_script("SELECT x FROM out")[1]
    engine.close()
    assert len({v for (v,) in released}) <= len(means)  # one draw per group, shared by its records
    sensitivity = report.attributes[0].sensitivity
    rng = np.random.default_rng(seed)
    noisy = mechanisms.laplace(np.tile(means, draws), sensitivity, eps, rng, bound=(0, 8))
    return noisy.reshape(draws, len(means))


def test_individual_ranking_privacy_loss_within_e_epsilon():
    # Worst case of Lemma 10.1: 0,0,8,8 -> 0,8,8,8 moves the means (0, 8) to (4, 8): l1 = Δ/k.
    eps = 1.0
    a = _release_numeric([0, 0, 8, 8], 2, eps, 200_000, seed=1)
    b = _release_numeric([0, 8, 8, 8], 2, eps, 200_000, seed=2)
    worst, allowance = _max_log_ratio(a, b, min_count=2000)
    assert worst <= eps + allowance
    assert worst >= 0.5 * eps  # the neighbours are told apart as much as allowed: the test can fail


def test_insensitive_microaggregation_privacy_loss_within_e_epsilon():
    # Two attributes, k = 2: replacing (8, 8) by (0, 0) changes the second group's means from (8, 8)
    # to (4, 4). Each attribute gets ε/2 at the E11 sensitivity G·Δ/k; the joint output of the two
    # groups' four noisy means has a probability ratio within e^ε.
    eps, draws = 2.0, 200_000
    out = {}
    for name, pts in (("a", [(0, 0), (0, 0), (8, 8), (8, 8)]), ("b", [(0, 0), (0, 0), (0, 0), (8, 8)])):
        engine = _engine_with([(i, *p) for i, p in enumerate(pts)], "id INTEGER, x DOUBLE, y DOUBLE")
        bounds = {"x": (0, 8), "y": (0, 8)}
        report = dp_microaggregate(engine, "t", "out", k=2, epsilon=eps, bounds=bounds,
                                   method="insensitive", seed=1, trust_bounds=True)
        assert [a.sensitivity for a in report.attributes] == [8.0, 8.0]  # G = 2 groups x 8 / 2
        rows = _groups(engine, {a: Bounds(*b) for a, b in bounds.items()}, {}, 2, "insensitive")
        starts = sorted({r[group_column()] for r in rows})
        rng = np.random.default_rng(11)
        columns = []
        for i in range(2):
            means = np.array([np.mean([r[value_column(i)] for r in rows if r[group_column()] == s])
                              for s in starts])
            columns.append(mechanisms.laplace(np.tile(means, draws), 8.0, eps / 2, rng,
                                              bound=(0, 8)).reshape(draws, 2))
        out[name] = np.hstack(columns)
        engine.close()
    worst, allowance = _max_log_ratio(out["a"], out["b"], min_count=1000)
    assert worst <= eps + allowance


def test_independent_draws_per_record_would_break_the_bound():
    # The note under Algorithm 10: noise drawn per record (k draws of each mean) is k times as
    # informative. The same ratio test detects it, so it has the power to fail.
    eps, draws = 1.0, 200_000
    rng = np.random.default_rng(3)
    per_record = {}
    for name, means in (("a", [0.0, 0.0, 8.0, 8.0]), ("b", [4.0, 4.0, 8.0, 8.0])):
        per_record[name] = mechanisms.laplace(np.tile(means, draws), 4.0, eps, rng,
                                              bound=(0, 8)).reshape(draws, 4)[:, :2]
    worst, allowance = _max_log_ratio(per_record["a"], per_record["b"], min_count=500)
    assert worst > eps + allowance


def test_nominal_exponential_mechanism_privacy_loss_within_e_epsilon():
    # One nominal attribute, k = 2, four rows; one value changes. Individual ranking divides the
    # attribute's ε over min(G, |Dom| - 1) = 2 draws.
    eps, draws = 1.2, 100_000
    out = {}
    for name, values in (("a", ["flu", "flu", "ulcer", "ulcer"]),
                         ("b", ["flu", "gastritis", "ulcer", "ulcer"])):
        engine = _engine_with([(i, v) for i, v in enumerate(values)], "id INTEGER, c VARCHAR")
        report = dp_microaggregate(engine, "t", "out", k=2, epsilon=eps, categorical={"c": DISEASES},
                                   seed=5)
        per_draw = report.attributes[0].draw_epsilon
        assert per_draw == pytest.approx(eps / 2)
        d = NominalDomain.from_hierarchy("c", DISEASES)
        rows = _groups(engine, {}, {"c": d}, 2, "individual_ranking")
        g = group_column(label_column(0))
        counts = np.zeros((2, len(d.leaves)))
        starts = sorted({r[g] for r in rows})
        for r in rows:
            counts[starts.index(r[g]), d.leaves.index(r[label_column(0)])] += 1
        chosen = d.dp_centroids(np.tile(counts, (draws, 1)), per_draw, np.random.default_rng(7))
        out[name] = np.array(chosen, dtype=object).reshape(draws, 2)
        engine.close()
    worst, allowance = _max_log_ratio(out["a"], out["b"], min_count=1000)
    assert worst <= eps + allowance


# -- the release ---------------------------------------------------------------------------------------

def _people(n: int = 60, seed: int = 4) -> list[tuple]:
    r = np.random.default_rng(seed)
    leaves = ["flu", "cold", "ulcer", "gastritis", "it's; x"]
    return [(i, float(r.integers(18, 90)), float(r.normal(3000, 800)), leaves[int(r.integers(0, 5))])
            for i in range(n)]


COLS = 'id INTEGER, age DOUBLE, "in""come" DOUBLE, illness VARCHAR'
BOUNDS = {"age": (0, 120), 'in"come': (0, 10_000)}


@pytest.mark.parametrize("method", ["individual_ranking", "insensitive"])
def test_release_writes_only_the_released_attributes(method):
    engine = _engine_with(_people(), COLS)
    report = dp_microaggregate(engine, "t", "t_dp", k=5, epsilon=1e6, bounds=BOUNDS,
                               categorical={"illness": DISEASES}, method=method, seed=3)
    assert [c for c, _ in engine.columns("t_dp")] == ["age", 'in"come', "illness"]
    assert report.rows == 60 and report.groups == 12
    assert [a.epsilon for a in report.attributes] == pytest.approx([1e6 / 3] * 3)
    out = engine.fetch_script('SELECT age, "in""come", illness FROM t_dp')[1]
    assert len(out) == 60
    ages = np.array([r[0] for r in out])
    assert 0 <= ages.min() and ages.max() <= 120
    # with a huge ε the noise is negligible: means are preserved
    truth = np.mean([p[1] for p in _people()])
    assert abs(ages.mean() - truth) < 1.0
    if method == "insensitive":
        assert report.attributes[0].sensitivity == pytest.approx(12 * 120 / 5)  # E11: G·Δ/k
    else:
        assert report.attributes[0].sensitivity == pytest.approx(120 / 5)  # Lemma 10.1: Δ/k
        counts = sorted(Counter(ages.tolist()).values())
        assert counts == [5] * 12  # one value per group of 5 (distinct at this ε)
    assert {r[2] for r in out} <= {"flu", "cold", "ulcer", "gastritis", "it's; x", "respiratory",
                                   "stomach", "other", "*"}
    assert not engine.relation_exists("__sa_ranked")


def test_bounds_are_required_and_never_taken_from_the_data():
    people = _people()
    engine = _engine_with(people, COLS)
    for bad in (None, {}, {"age": None}, {"age": "data"}, {"age": (0, None)}, {"age": (5, 5)}):
        with pytest.raises(SpecError):
            dp_microaggregate(engine, "t", "out", k=5, epsilon=1, bounds=bad)
    with pytest.raises(SpecError, match=r"public bounds \(lower, upper\) are required for 'age'"):
        dp_microaggregate(engine, "t", "out", k=5, epsilon=1, bounds={"age": "auto"})
    lo, hi = min(p[1] for p in people), max(p[1] for p in people)
    with pytest.raises(SpecError, match="exactly the data's minimum and maximum"):
        dp_microaggregate(engine, "t", "out", k=5, epsilon=1, bounds={"age": (lo, hi)})
    assert not engine.relation_exists("out")  # nothing written
    dp_microaggregate(engine, "t", "out", k=5, epsilon=1, bounds={"age": (lo, hi)},
                      trust_bounds=True)
    assert engine.row_count("out") == 60


def test_bad_input_is_refused_with_the_key_named():
    engine = _engine_with(_people(), COLS)
    with pytest.raises(SpecError, match="'agee' is not a column"):
        dp_microaggregate(engine, "t", "out", k=5, epsilon=1, bounds={"agee": (0, 1)})
    with pytest.raises(SpecError, match="k must be an integer >= 2"):
        dp_microaggregate(engine, "t", "out", k=1, epsilon=1, bounds=BOUNDS)
    with pytest.raises(SpecError, match="fewer than k = 100"):
        dp_microaggregate(engine, "t", "out", k=100, epsilon=1, bounds=BOUNDS)
    with pytest.raises(SpecError, match="unknown method 'insensitve'.*Did you mean 'insensitive'"):
        dp_microaggregate(engine, "t", "out", k=5, epsilon=1, bounds=BOUNDS, method="insensitve")
    with pytest.raises(HierarchyError, match="needs a taxonomy listing the whole domain"):
        dp_microaggregate(engine, "t", "out", k=5, epsilon=1,
                          categorical={"illness": IntervalHierarchy(widths=[10])})
    engine.con.execute("INSERT INTO t VALUES (99, NULL, 1, 'flu'), (100, 3, 1, 'measles')")
    with pytest.raises(SpecError, match="1 row.s. have NULL in 'age'"):
        dp_microaggregate(engine, "t", "out", k=5, epsilon=1, bounds={"age": (0, 120)})
    with pytest.raises(SpecError, match="1 row.s. of 'illness' hold values that are not leaves"):
        dp_microaggregate(engine, "t", "out", k=5, epsilon=1, categorical={"illness": DISEASES})
    engine.execute_script("CREATE TABLE out AS SELECT 1 AS x")
    with pytest.raises(SpecError, match="exists; pass replace=True"):
        dp_microaggregate(engine, "t", "out", k=5, epsilon=1, bounds={'in"come': (0, 10_000)})


@pytest.mark.postgres
def test_groups_are_the_same_on_postgres(pg):  # noqa: F811
    people = _people()
    duck = _engine_with(people, COLS)
    pg.execute_script('CREATE TABLE t (id INTEGER, age DOUBLE PRECISION, "in""come" DOUBLE PRECISION, '
               "illness TEXT)")
    pg.insert_rows("t", people)
    numeric = {a: Bounds(*b) for a, b in BOUNDS.items()}
    nominal = {"illness": NominalDomain.from_hierarchy("illness", DISEASES)}
    for method in ("insensitive", "individual_ranking"):
        q = grouped_rows("t", numeric, nominal, 5, method=method, keep=("id",))
        mine = sorted(duck.fetch(q)[1])
        theirs = sorted(pg.fetch(q)[1])
        assert mine == theirs
    for method in ("insensitive", "individual_ranking"):
        report = dp_microaggregate(pg, "t", "t_dp", k=5, epsilon=2, bounds=BOUNDS,
                                   categorical={"illness": DISEASES}, method=method, seed=1,
                                   replace=True)
        assert pg.row_count("t_dp") == 60 and report.groups == 12


# -- through a spec: `transformation: {method: noise, mechanism: dp_microaggregation}` ------------

def _dp_spec(output=None, **settings):
    from sqlanon.spec.load import spec_from_dict

    transformation = {"method": "noise", "mechanism": "dp_microaggregation",
                      "attributes": ["age", 'in"come', "illness"], "k": 5, "epsilon": 2.0,
                      "bounds": {"age": [0, 120], 'in"come': [0, 10_000]}, "seed": 11, **settings}
    return spec_from_dict({
        "source": {"table": "t"},
        "attributes": {"id": {"role": "identifier"}, "age": {"role": "sensitive"},
                       'in"come': {"role": "sensitive"},
                       "illness": {"role": "sensitive", "hierarchy": {"map": {
                           "flu": ["respiratory", "*"], "cold": ["respiratory", "*"],
                           "ulcer": ["stomach", "*"], "gastritis": ["stomach", "*"],
                           "it's; x": ["other", "*"]}}}},
        "transformation": transformation,
        "output": output or {"mode": "table", "name": "t_dp"}})


@pytest.mark.parametrize("order", ["individual_ranking", "insensitive"])
def test_spec_release_equals_the_function_with_the_same_seed(order):
    from sqlanon import api

    engine = _engine_with(_people(), COLS)
    report = api.apply(_dp_spec(order=order), engine=engine).as_dict()
    dp_microaggregate(engine, "t", "direct", k=5, epsilon=2.0, bounds=BOUNDS,
                      categorical={"illness": DISEASES}, method=order, seed=11)
    q = 'SELECT age, "in""come", illness FROM {} ORDER BY ALL'
    assert engine.fetch_script(q.format("t_dp"))[1] == engine.fetch_script(q.format("direct"))[1]
    assert [c for c, _ in engine.columns("t_dp")] == ["age", 'in"come', "illness"]
    g = report["guarantee"]
    assert g["method"] == order and g["k"] == 5 and g["epsilon"] == 2.0
    assert g["neighbours"] == "substitution of one record"
    assert [a["attribute"] for a in g["attributes"]] == ["age", 'in"come', "illness"]
    assert report["outputs"] == {"mode": "table", "relation": "t_dp", "rows": 60}


def test_spec_release_refusals():
    from sqlanon import api

    engine = _engine_with(_people(), COLS)
    with pytest.raises(SpecError, match="use mode table") as e:
        api.apply(_dp_spec({"mode": "in_place"}), engine=engine)
    assert e.value.path == "output.mode"
    with pytest.raises(SpecError, match="nominal attribute needs a taxonomy") as e:
        api.apply(_dp_spec(bounds={"age": [0, 120]}), engine=engine)
    assert e.value.path == 'attributes.in"come.hierarchy'
    with pytest.raises(SpecError, match="must be one of individual_ranking, insensitive") as e:
        api.apply(_dp_spec(order="insensitve"), engine=engine)
    assert "Did you mean 'insensitive'" in str(e.value)
    with pytest.raises(SpecError, match="integer >= 2"):
        api.apply(_dp_spec(k=1), engine=engine)
    with pytest.raises(SpecError, match="not in transformation.attributes"):
        api.apply(_dp_spec(bounds={"age": [0, 120], "weight": [0, 300]}), engine=engine)
    with pytest.raises(SpecError, match="does not apply to mechanism dp_microaggregation"):
        api.apply(_dp_spec(alpha=0.5), engine=engine)
    assert not engine.relation_exists("t_dp")


def test_spec_release_from_the_command_line(tmp_path):
    import subprocess
    import sys

    db = tmp_path / "people.duckdb"
    engine = DuckDBEngine(str(db))
    engine.con.execute(f"CREATE TABLE t ({COLS})")
    engine.con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [list(r) for r in _people()])
    engine.close()
    (tmp_path / "spec.yaml").write_text(f"""
source: {{table: t, database: {db}}}
attributes:
  id: {{role: identifier}}
  age: {{role: sensitive}}
  illness: {{role: sensitive, hierarchy: {{map: {{flu: [respiratory, '*'], cold: [respiratory, '*'],
            ulcer: [stomach, '*'], gastritis: [stomach, '*'], "it's; x": [other, '*']}}}}}}
transformation:
  method: noise
  mechanism: dp_microaggregation
  attributes: [age, illness]
  k: 4
  epsilon: 1.5
  bounds: {{age: [0, 120]}}
output: {{mode: table, name: t_dp}}
""", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "sqlanon", "apply", "spec.yaml", "--json"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    import json

    out = json.loads(run.stdout)
    assert out["guarantee"]["k"] == 4 and out["outputs"]["rows"] == 60
    engine = DuckDBEngine(str(db))
    try:
        assert [c for c, _ in engine.columns("t_dp")] == ["age", "illness"]
    finally:
        engine.close()


def test_release_reports_utility_against_the_original_values():
    from sqlanon import api

    engine = _engine_with(_people(), COLS)
    report = dp_microaggregate(engine, "t", "t_dp", k=5, epsilon=1e6, bounds=BOUNDS,
                               categorical={"illness": DISEASES}, seed=3)
    m = report.metrics
    original = np.array([[p[1], p[2]] for p in _people()], dtype=float)
    # with a huge ε the release is the group means: SSE is the within-group sum of squares of the
    # sorted values cut into groups of k (60 rows, k = 5: no remainder)
    within = sum(((g - g.mean()) ** 2).sum() for a in range(2)
                 for g in np.sort(original[:, a]).reshape(-1, 5))   # Algorithm 10's groups of 5
    assert m["sse"] == pytest.approx(within, rel=1e-3)
    assert m["sst"] == pytest.approx(((original - original.mean(axis=0)) ** 2).sum())
    assert abs(m["mean_change"]["age"]) < 0.01 and 0 <= m["record_linkage"] <= 1
    assert m["record_linkage_rows"] == 60
    spec = api.apply(_dp_spec(output={"mode": "table", "name": "t_dp2"}), engine=engine).as_dict()
    assert set(spec["metrics"]) >= {"sse", "il1s", "record_linkage"} and "metrics" not in spec["guarantee"]
    quiet = dp_microaggregate(engine, "t", "t_dp3", k=5, epsilon=1.0, bounds=BOUNDS, seed=3,
                              quality=False)
    assert quiet.metrics == {}


def test_spec_takes_trust_bounds():
    # bounds equal to the data's range are refused unless the spec says they are public
    from sqlanon import api

    people = _people()
    engine = _engine_with(people, COLS)
    bounds = {"age": [min(p[1] for p in people), max(p[1] for p in people)], 'in"come': [0, 10_000]}
    with pytest.raises(SpecError, match="exactly the data's minimum and maximum"):
        api.apply(_dp_spec(bounds=bounds), engine=engine)
    report = api.apply(_dp_spec(bounds=bounds, trust_bounds=True), engine=engine)
    assert report.outputs["rows"] == 60
