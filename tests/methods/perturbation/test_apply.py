"""`transformation: {method: noise}` on real DuckDB tables: outputs, alignment, transactions, errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import EngineError, SpecError
from sqlanon.methods.dp import mechanisms as mech
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec.load import spec_from_dict

TABLE = "pe'ople; -- ñ"
INCOME = "inc\"ome; x"
N = 4000


@pytest.fixture()
def engine():
    e = DuckDBEngine()
    e.con.execute(f"""
        CREATE TABLE "{TABLE.replace('"', '""')}" AS
        SELECT i AS id, 'person ' || i AS name, (18 + i % 60)::INTEGER AS age,
               1000.0 + (hash(i) % 5000) AS "{INCOME.replace('"', '""')}",
               (hash(i + 7) % 3000) / 3.0 + (hash(i) % 5000) * 0.5 AS spend,
               CASE i % 4 WHEN 0 THEN 'a' WHEN 1 THEN 'b' WHEN 2 THEN 'c' ELSE 'O''Brien;' END AS cat
        FROM range({N}) r(i)""")
    yield e
    e.close()


def spec(transformation: dict, output: dict | None = None):
    return spec_from_dict({
        "source": {"table": TABLE},
        "attributes": {"name": {"role": "identifier"}, "age": {"role": "insensitive"},
                       INCOME: {"role": "sensitive"}, "spend": {"role": "sensitive"},
                       "cat": {"role": "sensitive"}},
        "transformation": {"method": "noise", **transformation},
        "output": output or {"mode": "table", "name": "out"}})


def run(engine, transformation, output=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        return api.apply(spec(transformation, output), engine=engine)


def table(engine, name):
    return engine.con.execute(f'SELECT * FROM "{name.replace(chr(34), chr(34) * 2)}" ORDER BY id').df()


def test_correlated_noise_table_keeps_other_columns_and_reports_metrics(engine):
    report = run(engine, {"mechanism": "correlated", "attributes": [INCOME, "spend"], "alpha": 0.5,
                          "seed": 1})
    src, out = table(engine, TABLE), table(engine, "out")
    assert "name" not in out.columns  # identifiers dropped as in every output
    assert (out["id"] == src["id"]).all() and (out["age"] == src["age"]).all()
    assert (out["cat"] == src["cat"]).all()
    cols = [INCOME, "spend"]
    r_src = np.corrcoef(src[cols].astype(float).to_numpy(), rowvar=False)[0, 1]
    r_out = np.corrcoef(out[cols].to_numpy(), rowvar=False)[0, 1]
    assert r_out == pytest.approx(r_src, abs=0.05)
    d = report.as_dict()
    assert d["transformation"]["mechanism"] == "correlated" and d["rows"] == N
    m = d["metrics"]
    diff = out[cols].to_numpy() - src[cols].astype(float).to_numpy()
    assert m["sse"] == pytest.approx((diff ** 2).sum(), rel=1e-9)
    assert m["record_linkage_rows"] == N
    # brute force: the share of released rows whose nearest original (standardized) is their own
    o = src[cols].astype(float).to_numpy()
    mean, sd = o.mean(axis=0), o.std(axis=0)
    zo, zr = (o - mean) / sd, (out[cols].to_numpy() - mean) / sd
    dist = ((zr[:, None, :] - zo[None, :, :]) ** 2).sum(axis=2)
    assert m["record_linkage"] == pytest.approx(np.mean(dist.argmin(axis=1) == np.arange(N)), abs=1e-3)
    assert set(m) >= {"il1s", "mean_change", "variance_change", "correlation_change"}


def test_seed_reproduces_and_no_seed_differs(engine):
    t = {"mechanism": "uncorrelated", "attributes": ["spend"], "alpha": 0.2, "seed": 9}
    run(engine, t, {"mode": "table", "name": "one"})
    run(engine, t, {"mode": "table", "name": "two"})
    assert (table(engine, "one")["spend"] == table(engine, "two")["spend"]).all()
    t.pop("seed")
    run(engine, t, {"mode": "table", "name": "three"})
    run(engine, t, {"mode": "table", "name": "four"})
    assert (table(engine, "three")["spend"] != table(engine, "four")["spend"]).mean() > 0.99


def test_seeded_spec_warns(engine):
    with pytest.warns(ReproducibleNoiseWarning):
        api.apply(spec({"mechanism": "uncorrelated", "attributes": ["spend"], "seed": 3}), engine=engine)


def test_laplace_snapping_in_sql_lies_on_the_grid_within_bounds(engine):
    report = run(engine, {"mechanism": "laplace", "attributes": [INCOME], "epsilon": 0.5,
                          "sensitivity": 4, "bounds": {INCOME: [0, 8000]}})
    out = table(engine, "out")[INCOME].to_numpy()
    assert out.min() >= 0 and out.max() <= 8000
    grid = report.guarantee["grid"][INCOME]
    _, unit_grid = mech.snapping_parameters(1.0, 0.5, 4000 / 4)
    assert grid == unit_grid * 4
    on_grid = np.isclose(((out - 4000) / grid + 0.5) % 1, 0.5) | np.isin(out, [0.0, 8000.0])
    assert on_grid.all()


def test_discrete_laplace_keeps_integers(engine):
    run(engine, {"mechanism": "discrete_laplace", "attributes": ["age"], "epsilon": 1.0,
                 "sensitivity": 1})
    src, out = table(engine, TABLE), table(engine, "out")
    assert str(out["age"].dtype).startswith("int")
    assert 0 < (out["age"] != src["age"]).mean() < 1


def test_rank_swap_keeps_each_column_multiset_and_rows_aligned(engine):
    run(engine, {"mechanism": "rank_swap", "attributes": ["age", "spend"], "p": 5})
    src, out = table(engine, TABLE), table(engine, "out")
    for c in ("age", "spend"):
        assert sorted(out[c]) == sorted(src[c])
    assert (out["id"] == src["id"]).all()
    assert str(out["age"].dtype).startswith("int")
    ranks = src["spend"].rank(method="first").to_numpy()
    value_rank = dict(zip(src["spend"], ranks))  # spend values are almost all distinct
    moved = np.abs(np.array([value_rank[v] for v in out["spend"]]) - ranks)
    assert np.percentile(moved, 99) <= 0.05 * N + 1


def test_tiny_window_and_identity_pram_return_the_table_unchanged(engine):
    # both depend on pulled rows going back to their own rows (positional alignment)
    run(engine, {"mechanism": "rank_swap", "attributes": ["spend"], "p": 0.01},
        {"mode": "table", "name": "same1"})
    run(engine, {"mechanism": "pram", "attributes": ["cat"], "matrix": {"cat": {
        "a": {"a": 1}, "b": {"b": 1}, "c": {"c": 1}, "O'Brien;": {"O'Brien;": 1}}}},
        {"mode": "table", "name": "same2"})
    src = table(engine, TABLE).drop(columns=["name"])
    for name in ("same1", "same2"):
        assert table(engine, name).equals(src)


def test_pram_report_estimates_the_original_frequencies(engine):
    report = run(engine, {"mechanism": "pram", "attributes": ["cat"], "matrix": {"cat": {
        "a": {"a": 0.8, "b": 0.2}, "b": {"b": 0.9, "c": 0.1}, "c": {"c": 1.0},
        "O'Brien;": {"O'Brien;": 0.7, "a": 0.3}}}})
    m = report.metrics["cat"]
    assert m["frequencies_original"] == {"a": 1000, "b": 1000, "c": 1000, "O'Brien;": 1000}
    assert sum(m["frequencies_released"].values()) == N
    out = table(engine, "out")
    counts = out["cat"].value_counts().to_dict()
    assert counts == {k: v for k, v in m["frequencies_released"].items() if v}
    for est in m["frequencies_estimated"].values():
        assert est == pytest.approx(1000, abs=150)
    assert 0.05 < m["changed_share"] < 0.3


def test_pram_in_sql_equals_pram_codes_for_the_same_uniforms(engine):
    """Each value meets its matrix row's cumulative sums in SQL as pram_codes does in numpy; the
    uniforms are drawn by row position, the first of chunk 0 of the run's row key."""
    from sqlanon.methods.perturbation.pram import category_codes, pram_codes
    from sqlanon.methods.rng import CHUNK_ROWS, RowKey, make_rng

    engine.con.execute(f'UPDATE "{TABLE.replace(chr(34), chr(34) * 2)}" SET cat = NULL WHERE id % 7 = 0')
    cats = ["a", "b", "c", "O'Brien;"]
    rows = [[0.5, 0.25, 0.25, 0.0], [0.0, 0.9, 0.1, 0.0], [0.2, 0.2, 0.2, 0.4], [0.0, 0.0, 0.3, 0.7]]
    run(engine, {"mechanism": "pram", "attributes": ["cat"], "seed": 9, "matrix": {"cat": {
        c: {d: p for d, p in zip(cats, row) if p} for c, row in zip(cats, rows)}}})
    original = table(engine, TABLE)["cat"].tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        u = RowKey.of(make_rng(9)).chunk(0).random(CHUNK_ROWS)[:N]

    class Uniforms:  # pram_codes draws its uniforms from a generator: hand it these
        def random(self, n):
            assert n == N
            return u

    codes = pram_codes(category_codes([None if v is None or v != v else v for v in original], cats),
                       np.array(rows), Uniforms())
    expected = [cats[c] if c >= 0 else None for c in codes.tolist()]
    released = [None if v is None or v != v else v for v in table(engine, "out")["cat"].tolist()]
    assert released == expected and expected.count(None) == -(-N // 7)


def test_a_matrix_too_large_for_sql_is_applied_in_numpy(engine):
    """100 categories: 10,000 non-zero transition probabilities, more than the CASE branches applied
    in SQL; the values are read, drawn in numpy and joined back to their rows."""
    from sqlanon.methods.perturbation.categorical import MAX_BRANCHES

    assert 100 * 100 > MAX_BRANCHES
    report = run(engine, {"mechanism": "randomized_response", "attributes": ["age"], "seed": 3,
                          "keep_probability": 0.6, "categories": {"age": list(range(100))}})
    src, out = table(engine, TABLE), table(engine, "out")
    assert (out["id"] == src["id"]).all() and set(out["age"]) <= set(range(100))
    changed = float((out["age"] != src["age"]).mean())
    m = report.metrics["age"]
    assert m["changed_share"] == pytest.approx(changed) and 0.3 < changed < 0.5
    assert sum(m["frequencies_released"].values()) == N
    assert m["frequencies_released"]["18"] == int((out["age"] == 18).sum())


def test_invariant_pram_and_randomized_response(engine):
    report = run(engine, {"mechanism": "invariant_pram", "attributes": ["cat"], "seed": 4})
    assert report.metrics["cat"]["invariant"]
    report = run(engine, {"mechanism": "randomized_response", "attributes": ["cat"], "epsilon": 2.0,
                          "categories": {"cat": ["a", "b", "c", "O'Brien;", "unused"]}},
                 {"mode": "table", "name": "rr"})
    assert report.guarantee["cat"]["epsilon"] == pytest.approx(2.0)
    assert set(table(engine, "rr")["cat"]) <= {"a", "b", "c", "O'Brien;", "unused"}


def test_condensation_and_sampling(engine):
    report = run(engine, {"mechanism": "condensation", "attributes": [INCOME, "spend"], "k": 5})
    out = table(engine, "out")
    assert out[INCOME].mean() == pytest.approx(table(engine, TABLE)[INCOME].astype(float).mean(),
                                               rel=0.01)
    assert report.metrics["record_linkage"] < 1
    run(engine, {"mechanism": "sampling", "fraction": 0.1}, {"mode": "table", "name": "sample"})
    sample = table(engine, "sample")
    assert len(sample) == N // 10
    src = table(engine, TABLE).drop(columns=["name"]).set_index("id")
    assert src.loc[sample["id"]].reset_index().equals(sample)


def test_in_place_replaces_the_source(engine):
    before = table(engine, TABLE)
    report = run(engine, {"mechanism": "uncorrelated", "attributes": ["spend"], "alpha": 0.1},
                 {"mode": "in_place"})
    after = table(engine, TABLE)
    assert report.outputs["relation"] == TABLE and len(after) == N
    assert (after["spend"] != before["spend"]).mean() > 0.99
    assert (after["id"] == before["id"]).all()


def test_failed_in_place_write_leaves_the_source_untouched(engine):
    before = table(engine, TABLE)
    with pytest.raises(EngineError, match="(?i)conver|cast"):
        # released categories are cast back to the column's INTEGER type inside the transaction:
        # 10^12 does not fit
        run(engine, {"mechanism": "randomized_response", "attributes": ["age"], "keep_probability": 0.0,
                     "categories": {"age": list(range(18, 78)) + [10 ** 12]}}, {"mode": "in_place"})
    assert table(engine, TABLE).equals(before)
    assert not [r for r in engine.con.execute("SHOW TABLES").fetchall() if r[0].startswith("__sa_")]


@pytest.mark.parametrize(("transformation", "output", "message"), [
    ({"mechanism": "corelated", "attributes": ["spend"]}, None, "Did you mean 'correlated'"),
    ({"mechanism": "laplace", "attributes": ["spend"], "epsilon": 1, "sensitivity": 1}, None,
     "transformation.bounds: is required"),
    ({"mechanism": "laplace", "attributes": ["spend"], "epsilon": 0, "sensitivity": 1,
      "bounds": {"spend": [0, 1]}}, None, "transformation.epsilon"),
    ({"mechanism": "gaussian", "attributes": ["spend"], "epsilon": 1, "delta": 2, "sensitivity": 1},
     None, "transformation.delta"),
    ({"mechanism": "rank_swap", "attributes": ["spend"], "alpha": 0.5}, None,
     "transformation.alpha: does not apply to mechanism rank_swap"),
    ({"mechanism": "pram", "attributes": ["cat"], "matrix": {"cat": {"a": {"a": 0.5}, "b": {"b": 1}}}},
     None, "matrix.cat.a: probabilities sum to 0.5"),
])
def test_bad_settings_are_refused_at_load(transformation, output, message):
    with pytest.raises(SpecError, match=message):
        spec(transformation, output)


@pytest.mark.parametrize(("transformation", "message"), [
    ({"mechanism": "correlated", "attributes": ["nope"]}, "'nope' is not a column"),
    ({"mechanism": "correlated", "attributes": ["cat"]}, "needs a numeric column; 'cat'"),
    ({"mechanism": "correlated", "attributes": ["name"]}, "'name' is an identifier"),
    ({"mechanism": "discrete_laplace", "attributes": ["spend"], "epsilon": 1, "sensitivity": 1},
     "needs an integer column"),
])
def test_bad_columns_are_refused_and_nothing_is_written(engine, transformation, message):
    with pytest.raises(SpecError, match=message):
        run(engine, transformation)
    assert not engine.relation_exists("out")


@pytest.mark.parametrize("mode", ["view", "sql"])
def test_outputs_that_cannot_hold_drawn_noise_are_refused(engine, mode):
    with pytest.raises(SpecError, match="output.mode: noise is drawn by sqlanon and must be stored"):
        run(engine, {"mechanism": "uncorrelated", "attributes": ["spend"]}, {"mode": mode})


def test_existing_output_is_not_overwritten_without_replace(engine):
    run(engine, {"mechanism": "uncorrelated", "attributes": ["spend"]})
    with pytest.raises(SpecError, match="already exists"):
        run(engine, {"mechanism": "uncorrelated", "attributes": ["spend"]})
    run(engine, {"mechanism": "uncorrelated", "attributes": ["spend"]},
        {"mode": "table", "name": "out", "replace": True})


def test_command_line_apply(tmp_path):
    db = tmp_path / "t.duckdb"
    e = DuckDBEngine(str(db))
    e.con.execute("CREATE TABLE t AS SELECT i AS id, i * 1.5 AS x, (i % 7) * 2.0 AS y FROM range(500) r(i)")
    e.close()
    (tmp_path / "s.yml").write_text(
        "source: {table: t}\nattributes: {x: {role: sensitive}, y: {role: sensitive}}\n"
        "transformation: {method: noise, mechanism: correlated, attributes: [x, y], alpha: 0.25}\n"
        "output: {mode: table, name: t_noisy}\n", encoding="utf-8")

    def sqlanon(*args):
        return subprocess.run([sys.executable, "-m", "sqlanon", "apply", "s.yml", "--database",
                               str(db), *args], cwd=tmp_path, capture_output=True, text=True)

    first = sqlanon("--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["outputs"]["rows"] == 500 and "sse" in report["metrics"]
    again = sqlanon()
    assert again.returncode != 0 and "already exists" in again.stderr


def test_nulls_stay_null_and_are_left_out_of_the_metrics(engine):
    engine.con.execute(f'UPDATE "{TABLE.replace(chr(34), chr(34) * 2)}" SET spend = NULL WHERE id % 10 = 0')
    for mechanism, extra in (("correlated", {}), ("rank_swap", {"p": 5}),
                             ("laplace", {"epsilon": 1, "sensitivity": 1,
                                          "bounds": {INCOME: [0, 7000], "spend": [0, 7000]}})):
        report = run(engine, {"mechanism": mechanism, "attributes": [INCOME, "spend"], **extra},
                     {"mode": "table", "name": "out", "replace": True})
        out = table(engine, "out")
        assert (out["spend"].isna() == (out["id"] % 10 == 0)).all(), mechanism
        assert report.metrics["record_linkage_rows"] == N - N // 10


def test_an_empty_table(engine):
    engine.con.execute("CREATE TABLE nothing AS SELECT 1.5 AS x FROM range(0)")
    s = spec_from_dict({"source": {"table": "nothing"}, "attributes": {"x": {"role": "sensitive"}},
                        "transformation": {"method": "noise", "mechanism": "laplace", "attributes": ["x"],
                                           "epsilon": 1, "sensitivity": 1, "bounds": {"x": [0, 2]}},
                        "output": {"mode": "table", "name": "still_nothing"}})
    report = api.apply(s, engine=engine)
    assert report.rows == 0 and report.outputs["rows"] == 0 and report.metrics == {}


@pytest.mark.parametrize("mechanism", ["uncorrelated", "correlated"])
@pytest.mark.parametrize("rows", [0, 50])
def test_gaussian_noise_on_a_column_without_values_is_not_a_type_error(engine, mechanism, rows):
    """Gaussian noise on an empty table, or on a column holding only NULL, crashed with
    `TypeError: float() argument must be ... not 'NoneType'` (the moments shifted by a missing mean)."""
    engine.con.execute(f"CREATE TABLE sparse AS SELECT i AS id, NULL::DOUBLE AS x, i * 1.5 AS y "
                       f"FROM range({rows}) r(i)")
    s = spec_from_dict({"source": {"table": "sparse"},
                        "attributes": {"id": {"role": "insensitive"}, "x": {"role": "sensitive"},
                                       "y": {"role": "sensitive"}},
                        "transformation": {"method": "noise", "mechanism": mechanism,
                                           "attributes": ["x", "y"], "alpha": 0.5, "seed": 3},
                        "output": {"mode": "table", "name": "noisy"}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        report = api.apply(s, engine=engine)
    out = engine.con.execute("SELECT x FROM noisy").fetchall()
    assert report.rows == rows and len(out) == rows and all(x is None for (x,) in out)


def test_text_report_of_one_attribute_has_no_empty_metric_lines(engine):
    """Noise on one attribute printed `covariance_change: ` and `correlation_change: ` with nothing
    after them (no pair of attributes to compare)."""
    from sqlanon.report.noise import format_text

    report = run(engine, {"mechanism": "uncorrelated", "attributes": [INCOME], "alpha": 0.5, "seed": 2})
    text = format_text(report.as_dict())
    assert "mean_change:" in text
    assert [line for line in text.splitlines() if line.rstrip().endswith(":") and
            line.startswith("  ")] == []


def test_categorical_nulls_stay_null(engine):
    engine.con.execute(f'UPDATE "{TABLE.replace(chr(34), chr(34) * 2)}" SET cat = NULL WHERE id % 5 = 0')
    report = run(engine, {"mechanism": "randomized_response", "attributes": ["cat"], "epsilon": 1.0,
                          "categories": {"cat": ["a", "b", "c", "O'Brien;"]}})
    out = table(engine, "out")
    assert (out["cat"].isna() == (out["id"] % 5 == 0)).all()
    assert sum(report.metrics["cat"]["frequencies_original"].values()) == N - N // 5


def test_snapping_in_sql_equals_the_numpy_mechanism_for_the_same_draws(engine):
    run(engine, {"mechanism": "laplace", "attributes": ["spend"], "epsilon": 0.7, "sensitivity": 3,
                 "bounds": {"spend": [100, 3000]}, "seed": 21})
    sql = table(engine, "out")["spend"].to_numpy()
    values = table(engine, TABLE)["spend"].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        from sqlanon.methods.rng import CHUNK_ROWS, RowKey, make_rng

        # fewer rows than a chunk: they take the first values of the draw of chunk 0, the keystream
        # from counter 0 under the run's row key (row_stream.py)
        padded = np.resize(values, CHUNK_ROWS)
        drawn = mech.laplace(padded, 3, 0.7, RowKey.of(make_rng(21)).chunk(0), bound=(100, 3000))
    python = drawn[:len(values)]
    # ROUND (SQL, half away from zero) and rint (half to even) differ only on exact ties, which
    # continuous noise does not produce
    np.testing.assert_array_equal(sql, python)


def test_guarantee_per_record_composes_the_attributes(engine):
    report = run(engine, {"mechanism": "gaussian", "attributes": [INCOME, "spend"], "epsilon": 0.5,
                          "delta": 1e-6, "sensitivity": 2})
    g = report.guarantee
    assert g["epsilon_per_record"] == pytest.approx(1.0) and g["delta_per_record"] == pytest.approx(2e-6)
    # released on the grid Δ/1024 = 2^-9: σ is calibrated to Δ + γ
    assert g["grid"][INCOME] == 2.0 ** -9
    assert g["sigma"][INCOME] == pytest.approx(mech.gaussian_sigma(2 + 2.0 ** -9, 0.5, 1e-6))
    report = run(engine, {"mechanism": "randomized_response", "attributes": ["cat"],
                          "keep_probability": 0.7, "categories": {"cat": ["a", "b", "c", "O'Brien;"]}},
                 {"mode": "table", "name": "rr"})
    assert report.guarantee["epsilon_per_record"] == pytest.approx(math.log(0.7 / (0.3 / 3)))
    report = run(engine, {"mechanism": "rank_swap", "attributes": ["spend"]}, {"mode": "table", "name": "rs"})
    assert report.guarantee == {}  # no formal guarantee claimed


def test_check_refuses_and_dry_run_writes_nothing(engine):
    s = spec({"mechanism": "uncorrelated", "attributes": ["spend"]})
    with pytest.raises(SpecError, match="transformation.method: check has nothing to measure"):
        api.check(s, engine=engine)
    report = api.apply(s, engine=engine, dry_run=True)
    assert report.rows == N and report.outputs == {} and not engine.relation_exists("out")


def test_categories_of_mixed_types_are_refused(engine):
    with pytest.raises(SpecError, match="categories of 'age' mix types"):
        run(engine, {"mechanism": "randomized_response", "attributes": ["age"], "keep_probability": 0.0,
                     "categories": {"age": list(range(18, 78)) + ["x"]}})


def test_values_outside_a_pram_matrix_name_the_attribute(engine):
    with pytest.raises(SpecError, match=r"transformation.matrix.cat: 1000 value\(s\) are not among"):
        run(engine, {"mechanism": "pram", "attributes": ["cat"],
                     "matrix": {"cat": {"a": {"a": 1}, "b": {"b": 1}, "c": {"c": 1}}}})
    assert not engine.relation_exists("out")


def test_file_source_into_a_database_file(tmp_path):
    csv = tmp_path / "in.csv"
    csv.write_text("id;x\n" + "".join(f"{i};{i * 0.5}\n" for i in range(300)), encoding="utf-8")
    db = tmp_path / "out.duckdb"
    s = spec_from_dict({"source": {"file": str(csv), "delimiter": ";"},
                        "attributes": {"x": {"role": "sensitive"}},
                        "transformation": {"method": "noise", "mechanism": "rank_swap", "attributes": ["x"],
                                           "p": 10},
                        "output": {"mode": "table", "name": "swapped", "database": str(db)}})
    report = api.apply(s)
    assert report.outputs["rows"] == 300
    e = DuckDBEngine(str(db))
    try:
        out = e.con.execute("SELECT id, x FROM swapped ORDER BY id").fetchall()
    finally:
        e.close()
    assert [r[0] for r in out] == list(range(300))
    assert sorted(r[1] for r in out) == [i * 0.5 for i in range(300)]
    assert csv.read_text(encoding="utf-8").startswith("id;x\n0;0.0\n")  # the input is only read


def test_noise_statistics_match_numpy(engine):
    from sqlanon.methods.dataset import open_dataset
    from sqlanon.methods.perturbation.moments import statistics_of as _statistics
    from sqlanon.methods.perturbation.options import parse

    engine.con.execute(f'UPDATE "{TABLE.replace(chr(34), chr(34) * 2)}" SET spend = NULL WHERE id % 9 = 0')
    s = spec({"mechanism": "correlated", "attributes": [INCOME, "spend"]})
    ds = open_dataset(s, engine)
    src = table(engine, TABLE)[[INCOME, "spend"]].astype(float)
    cov = _statistics(ds, parse({"mechanism": "correlated", "attributes": [INCOME, "spend"]}))["covariance"]
    np.testing.assert_allclose(cov, np.cov(src.dropna().to_numpy(), rowvar=False), rtol=1e-12)
    var = _statistics(ds, parse({"mechanism": "uncorrelated", "attributes": [INCOME, "spend"]}))["variances"]
    np.testing.assert_allclose(var, [src[INCOME].var(), src["spend"].dropna().var()], rtol=1e-12)


def test_refuses_a_session_that_does_not_preserve_row_order(engine):
    from sqlanon.errors import UnsupportedError

    engine.con.execute("SET preserve_insertion_order = false")
    with pytest.raises(UnsupportedError, match="preserve_insertion_order"):
        run(engine, {"mechanism": "rank_swap", "attributes": ["spend"]})
    assert not engine.relation_exists("out")


def test_one_scan_moments_stay_accurate_far_from_zero_and_sorted():
    """Values near 1e9 with a spread of 1, sorted (the shift comes from the first, extreme rows),
    and a column NULL in its first 2,000 rows (its shift falls back to the mean)."""
    from sqlanon.methods.dataset import Dataset
    from sqlanon.methods.perturbation.moments import statistics_of as _statistics
    from sqlanon.methods.perturbation.options import parse
    from sqlanon.sql.nodes import table as sql_table

    e = DuckDBEngine()
    try:
        e.con.execute("""CREATE TABLE t AS SELECT 1e9 + sqrt(i) / 100 AS a,
                         CASE WHEN i < 2000 THEN NULL ELSE -5e8 + (i % 97) * 0.25 END AS b
                         FROM range(50000) r(i) ORDER BY i""")
        ds = Dataset(e, sql_table("t"), "t", e.columns("t"))
        data = e.con.execute("SELECT a, b FROM t").fetchnumpy()
        a = np.asarray(data["a"], dtype=float)
        b = np.asarray(np.ma.filled(data["b"].astype(float), np.nan))
        var = _statistics(ds, parse({"mechanism": "uncorrelated", "attributes": ["a", "b"]}))["variances"]
        np.testing.assert_allclose(var, [a.var(ddof=1), np.nanvar(b, ddof=1)], rtol=1e-9)
        cov = _statistics(ds, parse({"mechanism": "correlated", "attributes": ["a", "b"]}))["covariance"]
        keep = ~np.isnan(b)
        np.testing.assert_allclose(cov, np.cov(np.stack([a[keep], b[keep]]), ddof=1), rtol=1e-9)
    finally:
        e.close()
