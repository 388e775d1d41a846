"""DP aggregates: exact SQL against pandas, privacy-loss ratios, bounds, keys, budget, CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.methods.dp.aggregate_noise import Noise
from sqlanon.methods.dp.aggregates import Count, Grouped, Histogram, Mean, Sum
from sqlanon.methods.dp.amounts import PrivacyBudgetError
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.queries import dp_query
from sqlanon.methods.rng import ReproducibleNoiseWarning
from tests.postgres.conftest import pg, pg_dsn  # noqa: F401  (fixtures; pg_server is the suite's)

ROOT = Path(__file__).resolve().parents[3]
TABLE = 'pa"tients; --'
VALUE = "ïncome 'x'"
GROUP = 'ward"; DROP'

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")


def _frame(n: int = 200, seed: int = 3) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    values = r.normal(50, 30, n)
    values[r.random(n) < 0.1] = np.nan
    wards = r.choice(["a", "b'c", "ü", "d;e"], n)
    return pd.DataFrame({VALUE: values, GROUP: wards})


def _load(engine, df: pd.DataFrame) -> None:
    from sqlglot import exp

    from sqlanon.sql.nodes import ident, table

    engine.execute(exp.Create(this=exp.Schema(this=table(TABLE), expressions=[
        exp.ColumnDef(this=ident(VALUE), kind=exp.DataType.build("double")),
        exp.ColumnDef(this=ident(GROUP), kind=exp.DataType.build("varchar"))]), kind="TABLE"))
    engine.insert_rows(TABLE, [(None if math.isnan(v) else float(v), g)
                               for v, g in zip(df[VALUE], df[GROUP])])


@pytest.fixture()
def duck_table():
    engine = DuckDBEngine()
    df = _frame()
    _load(engine, df)
    yield engine, df
    engine.close()


def _exact(engine, aggregate):
    return engine.fetch(aggregate.query(TABLE))[1]


def _check_exact_values(engine, df):
    lo, hi = 0.0, 80.0
    clamped = df[VALUE].clip(lo, hi)
    assert _exact(engine, Count())[0][0] == len(df)
    assert _exact(engine, Sum(VALUE, lo, hi))[0][0] == pytest.approx(clamped.sum())
    s, n = _exact(engine, Mean(VALUE, lo, hi))[0]
    assert n == clamped.notna().sum()
    assert s == pytest.approx((clamped - 40.0).sum())
    keys = ["a", "b'c", "ü", "zzz"]
    rows = dict((r[0], r[1]) for r in _exact(engine, Histogram(GROUP, keys)))
    expected = df[GROUP].value_counts()
    assert rows == {k: int(expected[k]) for k in keys if k in expected}  # "d;e" is not a key
    by_ward = df.assign(c=clamped).groupby(GROUP)["c"]
    sums = {r[0]: r[1] for r in _exact(engine, Grouped(Sum(VALUE, lo, hi), GROUP, keys))}
    assert sums.keys() == {k for k in keys if k in expected}
    for k, v in sums.items():
        assert v == pytest.approx(by_ward.sum()[k])
    means = {r[0]: r[1:] for r in _exact(engine, Grouped(Mean(VALUE, lo, hi), GROUP, keys))}
    for k, (centred, n) in means.items():
        assert n == by_ward.count()[k] and centred == pytest.approx((by_ward.get_group(k) - 40.0).sum())


def test_exact_sql_matches_pandas_on_duckdb(duck_table):
    _check_exact_values(*duck_table)


@pytest.mark.postgres
def test_exact_sql_matches_pandas_on_postgres(pg):  # noqa: F811
    df = _frame()
    _load(pg, df)
    _check_exact_values(pg, df)


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40),
       st.floats(-1e3, 1e3), st.floats(0.1, 1e3))
def test_sum_clamps_each_value_to_the_bounds(values, lower, width):
    con = duckdb.connect()
    engine = DuckDBEngine(connection=con)
    con.execute('CREATE TABLE t ("x" DOUBLE)')
    con.executemany("INSERT INTO t VALUES (?)", [[v] for v in values])
    exact = engine.fetch(Sum("x", lower, lower + width).query("t"))[1][0][0]
    assert exact == pytest.approx(float(np.clip(values, lower, lower + width).sum()), abs=1e-6)
    con.close()


def test_histogram_with_several_columns_counts_tuples(duck_table):
    engine, df = duck_table
    engine.execute_script(f'CREATE TABLE two AS SELECT * , "{GROUP.replace(chr(34), chr(34) * 2)}" AS "g2" '
                   f'FROM "{TABLE.replace(chr(34), chr(34) * 2)}"')
    h = Histogram([GROUP, "g2"], [("a", "a"), ("a", "ü"), ("ü", "ü")])
    rows = {tuple(r[:2]): r[2] for r in engine.fetch(h.query("two"))[1]}
    counts = df[GROUP].value_counts()
    assert rows == {("a", "a"): counts["a"], ("ü", "ü"): counts["ü"]}


def test_grouped_sums_and_means_release_every_public_key(duck_table):
    engine, df = duck_table
    keys = ["a", "b'c", "ü", "zzz"]
    r = dp_query(engine, TABLE, Grouped(Sum(VALUE, 0, 80), GROUP, keys), epsilon=1.0,
                 budget_epsilon=3, seed=4)
    assert r.aggregate == "sum per key" and [v["key"] for v in r.value] == keys
    clamped = df.assign(c=df[VALUE].clip(0, 80)).groupby(GROUP)["c"].sum()
    for v in r.value:  # Laplace of scale 80: within 80·ln(10^6) of the exact sum
        assert abs(v["sum"] - clamped.get(v["key"], 0.0)) < 80 * math.log(1e6)
    assert r.noise == [dict(r.noise[0], part="sum per key", sensitivity=80.0, scale=80.0)]
    m = dp_query(engine, TABLE, Grouped(Mean(VALUE, 0, 80), GROUP, keys), epsilon=1.0, seed=5)
    assert all(0 <= v["mean"] <= 80 for v in m.value) and len(m.value) == 4
    assert [p["part"] for p in m.noise] == ["centred sum per key", "count per key"]
    assert [p["epsilon"] for p in m.noise] == [0.5, 0.5]
    assert PrivacyLedger(engine).state(TABLE).spent.epsilon == 2  # parallel over the keys
    with pytest.raises(SpecError, match="Sum or a Mean"):
        Grouped(Count(), GROUP, keys)
    with pytest.raises(SpecError, match="public list of keys"):
        Grouped(Sum(VALUE, 0, 1), GROUP, [])


def test_grouped_gaussian_reports_the_grid_and_sigma_it_used(duck_table):
    from sqlanon.methods.dp import mechanisms

    engine, _ = duck_table
    keys = ["a", "b'c", "ü", "zzz"]
    r = dp_query(engine, TABLE, Grouped(Sum(VALUE, 0, 80), GROUP, keys), epsilon=1.0, delta=1e-6,
                 mechanism="gaussian", budget_epsilon=3, budget_delta=1e-5, seed=6)
    (p,) = r.noise
    assert (p["grid"], p["sigma"]) == mechanisms.gaussian_parameters(80.0, 1.0, 1e-6, len(keys))
    assert p["grid"] == 2.0 ** -5                           # 80 / (1024·√4) = 0.039 → 2^-5
    steps = np.array([v["sum"] for v in r.value]) / p["grid"]
    np.testing.assert_array_equal(steps, np.rint(steps))


def test_grouped_sums_spend_the_whole_epsilon_on_each_key():
    """Parallel composition: one row moves one key's sum, so each key's noise is that of a single
    sum at ε (variance 2·(Δ/ε)² before snapping), not of ε split over the keys."""
    eps, keys = 1.0, [str(i) for i in range(8)]
    noise = Noise("laplace", eps, 0.0, np.random.default_rng(12))
    g = Grouped(Sum("x", 0, 10), "k", keys)
    released = np.array([[v["sum"] for v in g.release([], noise)] for _ in range(3000)])
    assert np.all(np.abs(released.mean(axis=0)) < 2.0)
    variances = released.var(axis=0)
    assert np.all((variances > 0.8 * 2 * 10 ** 2) & (variances < 1.25 * 2 * 16 ** 2))


def test_grouped_sum_privacy_loss_stays_within_e_epsilon():
    # neighbouring tables: key "a" sums 30 or 30 + 10 (one more row at the bound); key "b" the same
    eps, draws = 0.8, 200_000
    g = Grouped(Sum("x", 0, 10), "k", ["a", "b"])
    noise = Noise("laplace", eps, 0.0, np.random.default_rng(13))
    exact_a = np.tile([[30.0], [12.0]], (100, 1))   # keys a, b, a, b, ...: 100 releases a call
    exact_b = np.tile([[40.0], [12.0]], (100, 1))
    out_a = np.concatenate([g.inner.release_vector(exact_a, noise).reshape(100, 2)
                            for _ in range(draws // 100)])
    out_b = np.concatenate([g.inner.release_vector(exact_b, noise).reshape(100, 2)
                            for _ in range(draws // 100)])
    worst, allowance = _max_log_ratio(np.round(out_a[:, 0], 6), np.round(out_b[:, 0], 6), 400)
    assert worst <= eps + allowance
    worst_b, allowance_b = _max_log_ratio(np.round(out_a[:, 1], 6), np.round(out_b[:, 1], 6), 400)
    assert worst_b <= allowance_b          # the other key's output does not move


# -- privacy-loss ratios ---------------------------------------------------------------------------

def _max_log_ratio(a: np.ndarray, b: np.ndarray, min_count: int) -> tuple[float, float]:
    """The largest |log(p_a(o) / p_b(o))| over outputs o seen at least ``min_count`` times in both,
    and a 4-sigma allowance for its sampling error."""
    values, ca = np.unique(a, return_counts=True)
    count_a = dict(zip(values.tolist(), ca.tolist()))
    values, cb = np.unique(b, return_counts=True)
    count_b = dict(zip(values.tolist(), cb.tolist()))
    worst, allowance = 0.0, 0.0
    for o in set(count_a) & set(count_b):
        x, y = count_a[o], count_b[o]
        if x >= min_count and y >= min_count:
            r = abs(math.log(x / y))
            if r > worst:
                worst, allowance = r, 4 * math.sqrt(1 / x + 1 / y)
    return worst, allowance


def test_noisy_count_privacy_loss_stays_within_e_epsilon():
    # Neighbouring tables: 40 rows and 41 rows. Each output's probability ratio is at most e^ε,
    # and for the discrete Laplace it reaches e^ε on every output at or below 40.
    eps, draws = 0.7, 300_000
    rng = np.random.default_rng(11)
    noise = Noise("laplace", eps, 0.0, rng)
    a = np.array([Count().release([(40,)], noise) for _ in range(1)] +
                 list(noise.integer(np.full(draws - 1, 40), 1)))
    b = noise.integer(np.full(draws, 41), 1)
    worst, allowance = _max_log_ratio(a, b, min_count=3000)
    assert worst <= eps + allowance
    assert worst >= eps - allowance  # the bound is attained: the test could see a violation


def test_histogram_privacy_loss_stays_within_e_epsilon():
    # One row more in one bin: the released vector's density ratio is e^ε at most (parallel
    # composition over bins); checked on the joint outcome of the two bins.
    eps, draws = 0.5, 200_000
    rng = np.random.default_rng(5)
    h = Histogram("g", ["x", "y"])
    noise = Noise("laplace", eps, 0.0, rng)
    a = np.array([noise.integer(np.array([10, 3]), 1) for _ in range(draws)])
    b = np.array([noise.integer(np.array([11, 3]), 1) for _ in range(draws)])
    pair_a = a[:, 0] * 1000 + a[:, 1]
    pair_b = b[:, 0] * 1000 + b[:, 1]
    worst, allowance = _max_log_ratio(pair_a, pair_b, min_count=1500)
    assert worst <= eps + allowance
    assert h.release([("x", 10), ("y", 3)], Noise("laplace", eps, 0, rng))[1]["key"] == "y"


def test_noisy_sum_privacy_loss_stays_within_e_epsilon():
    # Neighbours: one more row holding the upper bound 10 (Δ = 10). Snapping puts the outputs on a
    # grid, so their probabilities can be compared point by point.
    eps, draws = 0.8, 300_000
    noise = Noise("laplace", eps, 0.0, np.random.default_rng(13))
    s = Sum("x", 0, 10)
    a = noise.real(np.full(draws, 50.0), s.sensitivity)
    b = noise.real(np.full(draws, 60.0), s.sensitivity)
    worst, allowance = _max_log_ratio(a, b, min_count=3000)
    assert worst <= eps + allowance
    assert worst >= 0.5 * eps


def test_noise_is_centred_on_the_exact_value():
    rng = np.random.default_rng(2)
    noise = Noise("laplace", 0.5, 0.0, rng)
    counts = noise.integer(np.full(50_000, 1000), 1)
    assert abs(counts.mean() - 1000) < 4 * math.sqrt(2 * math.exp(-0.5)) / (1 - math.exp(-0.5)) \
        / math.sqrt(50_000)
    sums = [Sum("x", 0, 10).release([(5000.0,)], noise) for _ in range(4000)]
    assert abs(np.mean(sums) - 5000) < 4 * math.sqrt(2) * 20 / math.sqrt(4000) + 40


def test_mean_is_clamped_and_close_to_the_truth_with_a_large_budget(duck_table):
    engine, df = duck_table
    r = dp_query(engine, TABLE, Mean(VALUE, -100, 200), epsilon=50, budget_epsilon=100, seed=1)
    truth = df[VALUE].clip(-100, 200).mean()
    assert -100 <= r.value <= 200 and abs(r.value - truth) < 5


# -- the query interface ------------------------------------------------------------------------------

def test_dp_query_spends_and_reports(duck_table):
    engine, df = duck_table
    r = dp_query(engine, TABLE, Histogram(GROUP, ["a", "b'c", "ü", "d;e", "none"]), epsilon=0.4,
                 budget_epsilon=1, seed=7)
    d = r.as_dict()
    assert d["spent"] == {"epsilon": 0.4, "delta": 0.0}
    assert d["budget"]["remaining"]["epsilon"] == pytest.approx(0.6)
    assert [x["key"] for x in d["value"]] == ["a", "b'c", "ü", "d;e", "none"]
    assert all(isinstance(x["count"], int) for x in d["value"])
    assert d["noise"] == [{"part": "count per key", "sensitivity": 1, "epsilon": 0.4,
                           "mechanism": "discrete laplace", "scale": 2.5}]
    mean = dp_query(engine, TABLE, Mean(VALUE, 0, 100), epsilon=0.4, seed=7).as_dict()["noise"]
    assert [(n["part"], n["sensitivity"], n["scale"]) for n in mean] == [
        ("centred sum", 50.0, 250.0), ("count", 1, 5.0)]
    entries = PrivacyLedger(engine).entries(TABLE)
    assert len(entries) == 2 and "histogram" in entries[0]["description"]
    assert entries[1]["description"].startswith("mean(")


def test_over_budget_query_is_refused_and_spends_nothing(duck_table):
    engine, _ = duck_table
    dp_query(engine, TABLE, Count(), epsilon=0.8, dataset="hospital", budget_epsilon=1, seed=1)
    with pytest.raises(PrivacyBudgetError, match=r"would exceed the budget of dataset 'hospital'.*"
                                                  r"remaining epsilon=0\.2"):
        dp_query(engine, TABLE, Sum(VALUE, 0, 100), epsilon=0.3, dataset="hospital")
    assert PrivacyLedger(engine).state("hospital").spent.epsilon == Decimal("0.8")
    assert len(PrivacyLedger(engine).entries("hospital")) == 1


def test_bad_input_is_refused_before_anything_is_spent(duck_table):
    engine, df = duck_table
    PrivacyLedger(engine).set_budget(TABLE, 5)
    with pytest.raises(SpecError, match="'incme' is not a column"):
        dp_query(engine, TABLE, Sum("incme", 0, 1), epsilon=0.1)
    with pytest.raises(SpecError, match="no table or view named 'nope'"):
        dp_query(engine, "nope", Count(), epsilon=0.1)
    with pytest.raises(SpecError, match="public bounds"):
        Sum(VALUE, None, 3)
    with pytest.raises(SpecError, match="lower bound must be below"):
        Mean(VALUE, 3, 3)
    with pytest.raises(SpecError, match="public list of keys"):
        Histogram(GROUP, [])
    with pytest.raises(SpecError, match="Gaussian mechanism needs 0 < delta"):
        dp_query(engine, TABLE, Count(), epsilon=0.1, mechanism="gaussian")
    with pytest.raises(SpecError, match="spends no delta"):
        dp_query(engine, TABLE, Count(), epsilon=0.1, delta=1e-6)
    with pytest.raises(PrivacyBudgetError, match="epsilon must be a number"):
        dp_query(engine, TABLE, Count(), epsilon="all")
    # bounds copied from the data are refused unless declared public
    lo, hi = float(df[VALUE].min()), float(df[VALUE].max())
    with pytest.raises(SpecError, match="exactly the data's minimum and maximum"):
        dp_query(engine, TABLE, Sum(VALUE, lo, hi), epsilon=0.1)
    assert PrivacyLedger(engine).state(TABLE).spent.epsilon == 0
    dp_query(engine, TABLE, Sum(VALUE, lo, hi), epsilon=0.1, trust_bounds=True)
    assert PrivacyLedger(engine).state(TABLE).spent.epsilon == Decimal("0.1")


def test_gaussian_spends_delta(duck_table):
    engine, _ = duck_table
    r = dp_query(engine, TABLE, Count(), epsilon=0.5, delta=1e-6, mechanism="gaussian",
                 budget_epsilon=1, budget_delta=1e-5, seed=3)
    assert isinstance(r.value, int)
    assert r.ledger.spent.delta * 10 == r.ledger.total.delta
    assert r.noise[0]["mechanism"] == "gaussian" and r.noise[0]["sigma"] > 1


def test_a_seed_warns_that_the_noise_is_reproducible(duck_table):
    engine, _ = duck_table
    with pytest.warns(ReproducibleNoiseWarning):
        dp_query(engine, TABLE, Count(), epsilon=0.1, budget_epsilon=1, seed=4)


@pytest.mark.postgres
def test_dp_query_on_postgres(pg):  # noqa: F811
    df = _frame()
    _load(pg, df)
    r = dp_query(pg, TABLE, Histogram(GROUP, ["a", "ü"]), epsilon=0.5, budget_epsilon=1, seed=1)
    assert [x["key"] for x in r.value] == ["a", "ü"]
    with pytest.raises(PrivacyBudgetError, match="would exceed"):
        dp_query(pg, TABLE, Count(), epsilon=0.6)
    assert len(PrivacyLedger(pg).entries(TABLE)) == 1


# -- command line ----------------------------------------------------------------------------------

def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sqlanon", "query", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_cli_end_to_end(tmp_path):
    db = tmp_path / "h.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE visits AS SELECT range AS age, CASE WHEN range % 2 = 0 THEN 'x' "
                "ELSE 'y' END AS ward FROM range(100)")
    con.close()
    first = _cli("--database", str(db), "--table", "visits", "--count", "--epsilon", "0.5",
                 "--budget-epsilon", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["aggregate"] == "count" and isinstance(out["value"], int)
    assert out["budget"]["remaining"] == {"epsilon": 0.5, "delta": 0.0}
    second = _cli("--database", str(db), "--table", "visits", "--histogram", "ward", "--keys", "x",
                  "y", "z", "--epsilon", "0.25", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert [v["key"] for v in json.loads(second.stdout)["value"]] == ["x", "y", "z"]
    no_bounds = _cli("--database", str(db), "--table", "visits", "--sum", "age", "--epsilon", "0.1",
                     cwd=tmp_path)
    assert no_bounds.returncode == 2 and "--bounds LOWER UPPER" in no_bounds.stderr
    refused = _cli("--database", str(db), "--table", "visits", "--mean", "age", "--bounds", "0",
                   "120", "--epsilon", "0.3", cwd=tmp_path)
    assert refused.returncode == 2 and "would exceed the budget" in refused.stderr
    assert refused.stdout == ""
    mean = _cli("--database", str(db), "--table", "visits", "--mean", "age", "--bounds", "0", "120",
                "--epsilon", "0.25", cwd=tmp_path)
    assert mean.returncode == 0, mean.stderr
    assert json.loads(mean.stdout)["budget"]["remaining"]["epsilon"] == 0
    with DuckDBEngine(str(db)) as engine:
        assert len(PrivacyLedger(engine).entries("visits")) == 3
    grouped = _cli("--database", str(db), "--table", "visits", "--mean", "age", "--bounds", "0",
                   "120", "--group-by", "ward", "--keys", "x", "y", "z", "--epsilon", "0.5",
                   "--dataset", "wards", "--budget-epsilon", "1", cwd=tmp_path)
    assert grouped.returncode == 0, grouped.stderr
    out = json.loads(grouped.stdout)
    assert out["aggregate"] == "mean per key" and [v["key"] for v in out["value"]] == ["x", "y", "z"]
    assert out["budget"]["remaining"]["epsilon"] == 0.5
    alone = _cli("--database", str(db), "--table", "visits", "--count", "--group-by", "ward",
                 "--epsilon", "0.1", "--dataset", "wards", cwd=tmp_path)
    assert alone.returncode == 2 and "--group-by goes with --sum or --mean" in alone.stderr
    no_keys = _cli("--database", str(db), "--table", "visits", "--sum", "age", "--bounds", "0", "1",
                   "--group-by", "ward", "--epsilon", "0.1", "--dataset", "wards", cwd=tmp_path)
    assert no_keys.returncode == 2 and "--group-by needs --keys" in no_keys.stderr


@pytest.mark.postgres
def test_cli_on_postgres(pg, pg_dsn, tmp_path):  # noqa: F811
    pg.execute_script("CREATE TABLE visits (age INTEGER)")
    pg.insert_rows("visits", [(a,) for a in range(50)])
    ok = _cli("--database", pg_dsn, "--table", "visits", "--sum", "age", "--bounds", "0", "100",
              "--epsilon", "0.6", "--budget-epsilon", "1", "--dataset", "clinic", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["budget"]["dataset"] == "clinic"
    refused = _cli("--database", pg_dsn, "--table", "visits", "--count", "--epsilon", "0.6",
                   "--dataset", "clinic", cwd=tmp_path)
    assert refused.returncode == 2 and "would exceed the budget of dataset 'clinic'" in refused.stderr
    assert PrivacyLedger(pg).state("clinic").spent.epsilon == Decimal("0.6")
