"""The microaggregation pipeline end to end on DuckDB: every algorithm, every output mode, the report,
blocking, hostile names and bad input. Oracles: the numpy algorithms run on the same rows in key
order, plain numpy re-implementations of the group rules, and sdcMicro's published figures."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.microaggregation.algorithms.blocking import projection_blocks, projection_scores
from sqlanon.methods.microaggregation.algorithms.mdav import microaggregate
from sqlanon.methods.microaggregation.algorithms.univariate import optimal_univariate
from sqlanon.methods.microaggregation.algorithms.vmdav import vmicroaggregate
from sqlanon.spec import spec_from_dict
from tests.conftest import DATA, require_data

ATTRS = ["a", "b", "c"]
MODES = ["table", "view", "in_place", "sql"]
ALGORITHMS = ["mdav", "vmdav", "optimal_univariate", "individual_ranking", "projection"]


def frame(n: int = 120, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1] + [0.0, 50.0, 3.0], columns=ATTRS)
    df.insert(0, "id", rng.permutation(n) + 1000)  # key order differs from insertion order
    df["name"] = [f"person {i}" for i in range(n)]
    df["income"] = rng.integers(1000, 5000, n)
    return df


@pytest.fixture()
def engine():
    e = DuckDBEngine()
    yield e
    e.close()


def load(engine: DuckDBEngine, df: pd.DataFrame, name: str = "t") -> None:
    engine.con.register("__frame", df)
    engine.create_table_as(name, exp.select("*").from_("__frame"), replace=True)
    engine.con.unregister("__frame")


def spec_for(algorithm: str, *, mode: str = "table", table: str = "t", name: str | None = None,
             **transformation) -> object:
    return spec_from_dict({
        "source": {"table": table},
        "attributes": {"id": "insensitive", "name": "identifier", "income": "sensitive",
                       **{a: "quasi_identifier" for a in ATTRS}},
        "transformation": {"method": "microaggregation", "algorithm": algorithm, "k": 3, "key": "id",
                           **transformation},
        "output": {"mode": mode, **({"name": name} if name else {})},
    })


def read(engine: DuckDBEngine, relation: str) -> pd.DataFrame:
    return engine.con.execute(f'SELECT * FROM "{relation}" ORDER BY id').df()


# -- oracles ----------------------------------------------------------------------------------------

def means_of(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for g in np.unique(labels):
        out[labels == g] = x[labels == g].mean(axis=0)
    return out


def ranked_labels(score: np.ndarray, ties: np.ndarray, k: int) -> np.ndarray:
    """Runs of k in (score, tie) order, the n mod k left over joining the last run."""
    order = np.lexsort((ties, score))
    n = len(score)
    runs = np.minimum(np.arange(n) // k, n // k - 1)
    labels = np.empty(n, dtype=np.int64)
    labels[order] = runs
    return labels


def expected(algorithm: str, df: pd.DataFrame, k: int = 3) -> np.ndarray:
    """The released attributes, rows in key order."""
    d = df.sort_values("id")
    x = d[ATTRS].to_numpy()
    if algorithm == "mdav":
        return microaggregate(x, k).masked
    if algorithm == "vmdav":
        return vmicroaggregate(x, k).masked
    if algorithm in ("optimal_univariate", "individual_ranking"):
        out = np.empty_like(x)
        for j in range(x.shape[1]):
            labels = optimal_univariate(x[:, j], k) if algorithm == "optimal_univariate" \
                else ranked_labels(x[:, j], d["id"].to_numpy(), k)
            out[:, j] = means_of(x[:, [j]], labels)[:, 0]
        return out
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    values, vectors = np.linalg.eigh(np.corrcoef(x, rowvar=False))
    v = vectors[:, np.argmax(values)]
    v = v if v.sum() > 0 else -v
    return means_of(x, ranked_labels(z @ v, d["id"].to_numpy(), k))


# -- every algorithm and output mode ------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_and_mode_releases_the_group_statistics(engine, algorithm, mode):
    df = frame()
    load(engine, df)
    report = api.apply(spec_for(algorithm, mode=mode, name="out"), engine=engine)
    if mode == "sql":
        engine.execute_script(f'CREATE TABLE "out" AS {report.outputs["sql"].strip().rstrip(";")}')
    relation = "t" if mode == "in_place" else "out"
    got = read(engine, relation)
    assert list(got.columns) == ["id", "a", "b", "c", "income"]  # identifier dropped, order kept
    np.testing.assert_allclose(got[ATTRS].to_numpy(), expected(algorithm, df), rtol=1e-12, atol=1e-12)
    assert got["income"].tolist() == df.sort_values("id")["income"].tolist()  # confidential untouched
    assert report.outputs["mode"] == mode
    assert report.min_group_size >= 3 and report.anonymous
    if algorithm in ("mdav", "vmdav", "optimal_univariate") and mode in ("view", "sql"):
        assert report.outputs["group_table"] == "out__groups"
        assert engine.relation_exists("out__groups")
    leftovers = engine.con.execute("SELECT table_name FROM information_schema.tables "
                                   "WHERE table_name LIKE '__sa_%'").fetchall()
    assert leftovers == []


@pytest.mark.parametrize("algorithm", ["mdav", "vmdav", "projection", "individual_ranking",
                                       "optimal_univariate"])
def test_report_metrics_equal_numpy_on_the_same_rows(engine, algorithm):
    df = frame(150, seed=11)
    load(engine, df)
    r = api.apply(spec_for(algorithm, mode="none"), engine=engine).as_dict()
    x = df.sort_values("id")[ATTRS].to_numpy()
    masked = expected(algorithm, df)
    sse = float(((x - masked) ** 2).sum())
    sst = float(((x - x.mean(axis=0)) ** 2).sum())
    il1s = float((np.abs(x - masked) / (math.sqrt(2) * x.std(axis=0, ddof=1))).sum() / x.size)
    m = r["metrics"]
    assert m["sse"] == pytest.approx(sse, rel=1e-9)
    assert m["sst"] == pytest.approx(sst, rel=1e-9)
    assert m["sse_sst_percent"] == pytest.approx(100 * sse / sst, rel=1e-9)
    assert m["il1s"] == pytest.approx(il1s, rel=1e-9)
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    zm = (masked - x.mean(axis=0)) / x.std(axis=0)
    d = ((zm[:, None, :] - z[None, :, :]) ** 2).sum(axis=2)  # brute force: released x original
    own = np.diag(d)
    linked = [(1.0 / np.sum(np.isclose(d[i], own[i], rtol=1e-9, atol=1e-12)))
              if d[i].min() >= own[i] * (1 - 1e-9) else 0.0 for i in range(len(x))]
    assert m["record_linkage"] == pytest.approx(sum(linked) / len(x), abs=1e-12)
    sizes = {"mdav": None, "vmdav": None}
    if algorithm in sizes:
        labels = np.unique(masked, axis=0, return_counts=True)[1]
        assert r["groups"] == len(labels)
        assert (r["min_group_size"], r["max_group_size"]) == (labels.min(), labels.max())
    assert r["achieved_k"] == r["min_group_size"] >= 3


def test_sse_equals_microaggregate_on_sdcmicro_rows(engine):
    """sdcMicro 5.8.1's MDAV on the first 10,000 rows: SSE 1633.609816 (k = 3), 2754.846873 (k = 5)."""
    path = require_data(DATA / "mdav" / "synthetic_normal_100k_x5_seed42.csv")
    df = pd.read_csv(path, nrows=10_000)
    df.insert(0, "row", np.arange(len(df)))
    load(engine, df, "syn")
    x = df[["x1", "x2", "x3", "x4", "x5"]].to_numpy()
    for k, sdcmicro in ((3, 1633.609816), (5, 2754.846873)):
        spec = spec_from_dict({"source": {"table": "syn"},
                               "attributes": {**{c: "quasi_identifier" for c in df.columns[1:]},
                                              "row": "insensitive"},
                               "transformation": {"method": "microaggregation", "k": k, "key": "row"},
                               "output": {"mode": "none"}})
        r = api.apply(spec, engine=engine)
        assert r.metrics["sse"] == pytest.approx(microaggregate(x, k).sse(x), rel=1e-9)
        assert r.metrics["sse"] == pytest.approx(sdcmicro, rel=1e-6)


def test_without_a_key_rows_are_ordered_by_every_column(engine):
    df = frame(60)
    load(engine, df)
    spec = spec_from_dict({"source": {"table": "t"},
                           "attributes": {"id": "insensitive", "name": "insensitive", "income": "sensitive",
                                          **{a: "quasi_identifier" for a in ATTRS}},
                           "transformation": {"method": "microaggregation", "k": 4}})
    report = api.apply(spec, engine=engine)
    d = df.sort_values(list(df.columns))  # the pull order: every column, in column order
    x = d[ATTRS].to_numpy()
    got = engine.con.execute('SELECT * FROM t_anon').df().set_index("id").loc[d["id"]]
    np.testing.assert_allclose(got[ATTRS].to_numpy(), microaggregate(x, 4).masked, rtol=1e-12)
    assert report.outputs["rows"] == 60


def test_median_statistic(engine):
    df = frame(40)
    load(engine, df)
    api.apply(spec_for("mdav", statistic="median"), engine=engine)
    d = df.sort_values("id")
    x = d[ATTRS].to_numpy()
    labels = microaggregate(x, 3).labels
    want = np.empty_like(x)
    for g in np.unique(labels):
        want[labels == g] = np.median(x[labels == g], axis=0)
    np.testing.assert_allclose(read(engine, "t_anon")[ATTRS].to_numpy(), want, rtol=1e-12)


def test_vmdav_gamma_reaches_the_algorithm(engine):
    df = frame(60)
    load(engine, df)
    api.apply(spec_for("vmdav", gamma=1.5), engine=engine)
    want = vmicroaggregate(df.sort_values("id")[ATTRS].to_numpy(), 3, gamma=1.5).masked
    np.testing.assert_allclose(read(engine, "t_anon")[ATTRS].to_numpy(), want, rtol=1e-12)


# -- blocking -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("labels", [("north", "south", "tiny"), (1.0, 2.0, 7.0)])
def test_block_by_runs_mdav_within_each_stratum(engine, labels):
    df = frame(90)
    north, south, tiny = labels
    df["region"] = pd.Series(np.where(df["id"] % 3 == 0, north, np.where(df["id"] % 3 == 1, south, None)),
                             dtype=object if isinstance(north, str) else "Float64")
    df.loc[df.index[df["id"] % 3 == 0][:2], "region"] = tiny  # below k: pooled, then joins the
    # smallest stratum (north: 30 - 2 rows)
    load(engine, df)
    r = api.apply(spec_for("mdav", block_by=["region"]), engine=engine)
    d = df.sort_values("id").reset_index(drop=True)
    x = d[ATTRS].to_numpy()
    want = np.empty_like(x)
    strata = d["region"].astype(object).where(d["region"].notna(), "<null>").astype(str)
    big = [s for s in strata.unique() if (strata == s).sum() >= 3]
    for s in big:
        rows = np.flatnonzero(strata == s)
        if s == min(big, key=lambda b: (strata == b).sum()):
            rows = np.sort(np.concatenate([rows, np.flatnonzero(strata == str(tiny))]))
        want[rows] = microaggregate(x[rows], 3).masked
    np.testing.assert_allclose(read(engine, "t_anon")[ATTRS].to_numpy(), want, rtol=1e-12)
    assert r.transformation["block_by"] == ["region"]


def test_block_size_runs_mdav_within_blocks_of_the_projection_order(engine):
    df = frame(100)
    load(engine, df)
    api.apply(spec_for("mdav", block_size=30, projection="zscore"), engine=engine)
    x = df.sort_values("id")[ATTRS].to_numpy()
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    order = np.argsort(z.sum(axis=1), kind="stable")
    blocks = [order[0:30], order[30:60], order[60:90], order[90:]]  # the 10 left over >= k: a block
    want = np.empty_like(x)
    for rows in blocks:
        want[rows] = microaggregate(x[rows], 3).masked
    np.testing.assert_allclose(read(engine, "t_anon")[ATTRS].to_numpy(), want, rtol=1e-12)
    assert [len(b) for b in projection_blocks(projection_scores(x, "zscore"), 30, 3)] == [30, 30, 30, 10]
    assert [len(b) for b in projection_blocks(projection_scores(x, "zscore"), 49, 3)] == [49, 51]


# -- ordinal attributes, nominal attributes ----------------------------------------------------------

def test_ordinal_attribute_takes_its_groups_median_rank(engine):
    df = frame(30)
    levels = ["low", "mid", "high", "top"]
    df["grade"] = [levels[i % 4] for i in range(30)]
    load(engine, df)
    spec = spec_from_dict({
        "source": {"table": "t"},
        "attributes": {"id": "insensitive", "name": "insensitive", "income": "insensitive",
                       "a": "quasi_identifier", "b": "quasi_identifier", "c": "quasi_identifier",
                       "grade": {"role": "quasi_identifier", "type": "ordinal", "order": levels}},
        "transformation": {"method": "microaggregation", "k": 3, "key": "id"}})
    api.apply(spec, engine=engine)
    d = df.sort_values("id")
    ranks = d["grade"].map({v: i + 1 for i, v in enumerate(levels)}).to_numpy(dtype=float)
    x = np.column_stack([d[ATTRS].to_numpy(), ranks])
    labels = microaggregate(x, 3).labels
    got = read(engine, "t_anon")
    for g in np.unique(labels):
        members = np.sort(ranks[labels == g])
        assert set(got["grade"][labels == g]) == {levels[int(members[(len(members) - 1) // 2]) - 1]}
    np.testing.assert_allclose(got[ATTRS].to_numpy(), microaggregate(x, 3).masked[:, :3], rtol=1e-12)


def test_nominal_attribute_refused_by_mdav_and_without_hierarchy(engine):
    df = frame(30)
    df["city"] = ["x", "y", "z"] * 10
    load(engine, df)
    base = {"source": {"table": "t"}, "attributes": {"a": "quasi_identifier", "city": "quasi_identifier"},
            "transformation": {"method": "microaggregation", "k": 3}}
    with pytest.raises(SpecError, match=r"attributes\.city: 'city' is not numeric .* needs a hierarchy"):
        api.apply(spec_from_dict(base), engine=engine)
    base["attributes"]["city"] = {"role": "quasi_identifier", "hierarchy": {"map": {
        "x": ["*"], "y": ["*"], "z": ["*"]}}}
    with pytest.raises(SpecError, match=r"'city' is nominal; algorithm mdav groups numeric"):
        api.apply(spec_from_dict(base), engine=engine)
    assert not engine.relation_exists("t_anon")


# -- hostile names ------------------------------------------------------------------------------------

HOSTILE_TABLE = 'pe"ople; DROP TABLE t; --'
HOSTILE = {"a": 'we"ird', "b": "x'; DROP TABLE t; --", "c": "größe ✓", "id": "semi;colon"}


@pytest.mark.parametrize("algorithm", ["mdav", "individual_ranking", "projection", "optimal_univariate"])
@pytest.mark.parametrize("mode", ["view", "table", "sql"])
def test_hostile_table_and_column_names(engine, algorithm, mode):
    df = frame(30).rename(columns=HOSTILE)
    load(engine, df, HOSTILE_TABLE)
    load(engine, frame(3), "t")  # the table the names try to drop
    spec = spec_from_dict({
        "source": {"table": HOSTILE_TABLE},
        "attributes": {HOSTILE["id"]: "insensitive", "name": "identifier", "income": "sensitive",
                       **{HOSTILE[a]: "quasi_identifier" for a in ATTRS}},
        "transformation": {"method": "microaggregation", "algorithm": algorithm, "k": 3,
                           "key": HOSTILE["id"]},
        "output": {"mode": mode, "name": HOSTILE_TABLE + " out"}})
    report = api.apply(spec, engine=engine)
    assert engine.relation_exists("t")
    if mode == "sql":
        return
    got = engine.con.execute('SELECT * FROM "pe""ople; DROP TABLE t; -- out"').df() \
        .sort_values(HOSTILE["id"])
    renamed = frame(30)
    np.testing.assert_allclose(got[[HOSTILE[a] for a in ATTRS]].to_numpy(), expected(algorithm, renamed),
                               rtol=1e-12)
    assert report.outputs["rows"] == 30


# -- bad input ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("changes", "message"), [
    ({"attributes": ["a", "nope"]}, r"transformation\.attributes\[1\]: unknown attribute 'nope'"),
    ({"attributes": ["a", "income"]}, r"transformation\.attributes\[1\]: 'income' has role sensitive"),
    ({"k": 1}, r"transformation\.k: must be an integer >= 2, got 1"),
    ({"algorithm": "mdv"}, r"transformation\.algorithm: unknown microaggregation algorithm 'mdv'.*"
                           r"Did you mean 'mdav'"),
    ({"statistic": "mode"}, r"transformation\.statistic: unknown statistic 'mode'"),
    ({"gamma": 0.2}, r"transformation\.gamma: 'gamma' does not apply to algorithm mdav"),
    ({"algorithm": "individual_ranking", "block_size": 10}, r"transformation\.block_size: blocking"),
    ({"block_size": 10, "block_by": ["id"]}, r"not both"),
    ({"projection": "pca"}, r"transformation\.projection: projection applies to algorithm projection"),
    ({"levels": {"a": 1}}, r"transformation\.levels"),
    ({"search": "optimal"}, r"transformation\.search: 'search' applies to the generalization search"),
    ({"suppression_limit": 0.1}, r"transformation\.suppression_limit: microaggregation suppresses no rows"),
])
def test_bad_settings_are_refused_when_the_spec_is_built(changes, message):
    with pytest.raises(SpecError, match=message):
        spec_for(**{"algorithm": "mdav", **changes})


@pytest.mark.parametrize(("algorithm", "changes", "message"), [
    ("mdav", {"k": 200}, r"transformation\.k: k = 200 is larger than the number of rows \(120\)"),
    ("mdav", {"key": "nope"}, r"transformation\.key\[0\]: 'nope' is not a column of the source"),
    ("mdav", {"key": "income"}, r"transformation\.key: the key \(income\) is not unique"),
    ("mdav", {"block_by": ["regio"]}, r"transformation\.block_by\[0\]: 'regio' is not a column"),
])
def test_bad_input_found_in_the_data_writes_nothing(engine, algorithm, changes, message):
    df = frame()
    df.loc[df.index[:5], "income"] = 7
    load(engine, df)
    with pytest.raises(SpecError, match=message):
        api.apply(spec_for(algorithm, **changes), engine=engine)
    assert not engine.relation_exists("t_anon")


@pytest.mark.parametrize("algorithm", ["mdav", "projection", "optimal_univariate"])
def test_nulls_are_refused_with_the_column_and_count(engine, algorithm):
    df = frame()
    df.loc[df.index[:4], "b"] = None
    load(engine, df)
    with pytest.raises(SpecError, match=r"attributes\.b: column 'b' has 4 NULL values; "
                                        rf"{algorithm} needs a value in every row"):
        api.apply(spec_for(algorithm, mode="in_place"), engine=engine)
    assert engine.con.execute("SELECT count(*) FROM t WHERE b IS NULL").fetchone()[0] == 4


def test_individual_ranking_keeps_nulls_and_says_so(engine):
    df = frame(30)
    df.loc[df.index[:4], "b"] = None
    load(engine, df)
    r = api.apply(spec_for("individual_ranking"), engine=engine)
    assert r.warnings == ["'b': 4 NULL values stay NULL"]
    assert r.groups == {"a": 10, "b": 8, "c": 10}
    assert engine.con.execute("SELECT count(*) FROM t_anon WHERE b IS NULL").fetchone()[0] == 4


def test_a_null_key_is_refused(engine):
    df = frame()
    df["id"] = df["id"].astype(object)
    df.loc[df.index[3], "id"] = None
    load(engine, df)
    with pytest.raises(SpecError, match=r"transformation\.key: column 'id' has 1 NULL value"):
        api.apply(spec_for("mdav"), engine=engine)


def test_text_attribute_is_refused_by_sql_methods(engine):
    df = frame(30)
    df["a"] = df["a"].astype(str)
    load(engine, df)
    with pytest.raises(SpecError, match=r"attributes\.a: 'a' is not numeric \(type VARCHAR\); "
                                        r"individual_ranking orders and averages numbers in SQL"):
        api.apply(spec_for("individual_ranking"), engine=engine)


def test_numbers_stored_as_text_declared_decimal_are_microaggregated_by_mdav(engine):
    df = frame(30)
    load(engine, df.assign(a=df["a"].map(repr)))
    d = _spec_dict("mdav", "table", "out")
    d["attributes"]["a"] = {"role": "quasi_identifier", "type": "decimal"}
    api.apply(spec_from_dict(d), engine=engine)
    np.testing.assert_allclose(read(engine, "out")[ATTRS].to_numpy(), expected("mdav", df), rtol=1e-12)


def test_existing_output_and_group_table_are_not_overwritten(engine):
    load(engine, frame(30))
    api.apply(spec_for("mdav", mode="view", name="v"), engine=engine)
    with pytest.raises(SpecError, match=r"output\.name: 'v' already exists"):
        api.apply(spec_for("mdav", mode="view", name="v"), engine=engine)
    engine.execute_script('DROP VIEW "v"')
    with pytest.raises(SpecError, match=r"'v__groups' already exists"):
        api.apply(spec_for("mdav", mode="view", name="v"), engine=engine)
    replaced = spec_from_dict({**_spec_dict("mdav", mode="view", name="v"),
                               "output": {"mode": "view", "name": "v", "replace": True}})
    api.apply(replaced, engine=engine)
    assert engine.row_count("v") == 30


def _spec_dict(algorithm: str, mode: str, name: str) -> dict:
    return {"source": {"table": "t"},
            "attributes": {"id": "insensitive", "name": "identifier", "income": "sensitive",
                           **{a: "quasi_identifier" for a in ATTRS}},
            "transformation": {"method": "microaggregation", "algorithm": algorithm, "k": 3, "key": "id"},
            "output": {"mode": mode, "name": name}}


# -- verbs: check, compile, anonymize, the command line ------------------------------------------------

def test_check_reports_and_writes_nothing(engine):
    load(engine, frame(50))
    r = api.check(spec_for("mdav"), engine=engine)
    assert r.as_dict()["achieved_k"] == 3 and r.anonymous and r.outputs == {}
    assert not engine.relation_exists("t_anon")
    assert engine.con.execute("SELECT count(*) FROM information_schema.tables").fetchone()[0] == 1


def test_compile_gives_sql_methods_and_refuses_pulled_ones(engine):
    load(engine, frame(30))
    sql = api.compile_sql(spec_for("individual_ranking", mode="sql"), engine=engine, dialect="trino")
    assert "ROW_NUMBER() OVER" in sql
    with pytest.raises(UnsupportedError, match="creates it as <output>__groups"):
        api.compile_sql(spec_for("mdav", mode="sql"), engine=engine)
    with pytest.raises(UnsupportedError, match="run `apply`"):
        api.anonymize(spec_for("mdav"), engine=engine)


def sqlanon(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sqlanon", *args], capture_output=True, text=True,
                          timeout=300)


def test_command_line_apply_and_check(tmp_path):
    db = tmp_path / "data.duckdb"
    e = DuckDBEngine(str(db))
    load(e, frame(40))
    e.close()
    spec = tmp_path / "spec.yml"
    spec.write_text(json.dumps(_spec_dict("mdav", "table", "released")), encoding="utf-8")
    done = sqlanon("apply", str(spec), "--database", str(db), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["k"] == 3 and out["achieved_k"] == 3 and out["groups"] == 13
    assert out["transformation"]["algorithm"] == "mdav"
    assert set(out["metrics"]) == {"sse", "sst", "sse_sst_percent", "il1s", "record_linkage",
                                   "per_attribute"}
    assert out["outputs"]["relation"] == "released"
    done = sqlanon("check", str(spec), "--database", str(db))
    assert done.returncode == 0, done.stderr
    assert "microaggregation by mdav, k = 3" in done.stdout
    assert "k-anonymous on the microaggregated attributes: yes" in done.stdout
    spec.write_text(json.dumps({**_spec_dict("mdav", "table", "x"),
                                "transformation": {"method": "microaggregation", "k": 41}}))
    done = sqlanon("check", str(spec), "--database", str(db))
    assert done.returncode == 2
    assert "transformation.k: k = 41 is larger than the number of rows (40)" in done.stderr


# -- hooks: nominal attributes through a registered partitioner, the centroid, the progress line -----

def test_nominal_attributes_take_the_centroid_of_their_group(engine):
    """A partitioner registered for nominal data: runs of k in (code, first numeric) order. The
    pipeline writes each group's mode (ties to the value sorted first) and the numeric means."""
    from sqlanon.methods.microaggregation.algorithms.registry import ALGORITHMS

    @ALGORITHMS.register("runs_by_code", nominal=True, sensitive=True)
    def runs_by_code(records, k):
        assert records.names == ("a",) and list(records.sensitive) == ["income"]
        assert records.sensitive["income"].tolist() == df.sort_values("id")["income"].tolist()
        codes = records.nominal["city"].codes
        return ranked_labels(codes.astype(float) + 0.0, records.x[:, 0], k)

    try:
        df = frame(31)
        df["city"] = [["Graz", "Linz", "Wien"][i % 3] if i % 5 else "Linz" for i in range(31)]
        load(engine, df)
        spec = spec_from_dict({
            "source": {"table": "t"},
            "attributes": {"id": "insensitive", "name": "insensitive", "income": "sensitive",
                           "a": "quasi_identifier", "b": "insensitive", "c": "insensitive",
                           "city": {"role": "quasi_identifier",
                                    "hierarchy": {"map": {"Graz": ["*"], "Linz": ["*"], "Wien": ["*"]}}}},
            "transformation": {"method": "microaggregation", "algorithm": "runs_by_code", "k": 4,
                               "key": "id"}})
        api.apply(spec, engine=engine)
        d = df.sort_values("id")
        codes = d["city"].map({"Graz": 0, "Linz": 1, "Wien": 2}).to_numpy()
        labels = ranked_labels(codes.astype(float), d["a"].to_numpy(), 4)
        got = read(engine, "t_anon")
        for g in np.unique(labels):
            members = d["city"].to_numpy()[labels == g]
            values, counts = np.unique(members, return_counts=True)
            assert set(got["city"][labels == g]) == {values[np.argmax(counts)]}
            assert np.allclose(got["a"][labels == g], d["a"][labels == g].mean(), rtol=1e-12)
    finally:
        ALGORITHMS.remove("runs_by_code")


def test_mode_centroid_breaks_ties_to_the_first_value():
    from sqlanon.methods.microaggregation.distance.centroids import mode_centroid
    from sqlanon.methods.microaggregation.records import NominalColumn

    column = NominalColumn(np.array([2, 1, 1, 2, 0, 0, 2]), ("a", "b", "c"))
    labels = np.array([0, 0, 0, 0, 1, 1, 1])
    assert mode_centroid(column, labels, 2).tolist() == [1, 0]


def test_progress_line_on_a_terminal(monkeypatch):
    import io
    import time

    from sqlanon.methods.microaggregation.progress import ProgressLine

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    with ProgressLine("mdav on 5 rows", after=0.0, every=0.01) as line:
        line.update("block 2 of 3")
        time.sleep(0.1)
    assert "\rmdav on 5 rows: block 2 of 3, " in screen.getvalue()
    assert screen.getvalue().endswith("\n")
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    with ProgressLine("mdav", after=0.0, every=0.01):
        time.sleep(0.05)
    assert quiet.getvalue() == ""


def test_k_from_the_k_anonymity_model_and_other_models_are_named_unchecked(engine):
    load(engine, frame(40))
    d = _spec_dict("mdav", "none", "x")
    del d["transformation"]["k"]
    d["privacy"] = [{"k_anonymity": {"k": 4}}, {"l_diversity": {"attribute": "income", "l": 2}}]
    r = api.apply(spec_from_dict(d), engine=engine)
    assert r.k == 4 and r.min_group_size == 4
    assert r.warnings == ["privacy model distinct-2-diversity of income is not checked by "
                          "microaggregation; the report gives the achieved k only"]


def test_a_partitioners_required_option_is_asked_for_by_name():
    from sqlanon.methods.microaggregation.algorithms.registry import ALGORITHMS

    @ALGORITHMS.register("needs_t")
    def needs_t(records, k, *, t: float):
        return np.zeros(records.n, dtype=np.int64)

    try:
        with pytest.raises(SpecError, match=r"transformation\.t: algorithm needs_t needs 't'"):
            spec_for("needs_t")
        with pytest.raises(SpecError, match=r"transformation\.gamma: 'gamma' does not apply to algorithm "
                                            r"needs_t \(its options: t\)"):
            spec_for("needs_t", t=0.5, gamma=0.3)
        assert spec_for("needs_t", t=0.5).microaggregation.options == {"t": 0.5}
    finally:
        ALGORITHMS.remove("needs_t")


def test_file_source_sql_of_a_pulled_algorithm_needs_a_database_file(tmp_path):
    csv = tmp_path / "people.csv"
    frame(20).to_csv(csv, index=False)
    d = _spec_dict("mdav", "sql", "out")
    d["source"] = {"file": str(csv)}
    with pytest.raises(SpecError, match=r"output\.database: the SQL of algorithm mdav reads its group "
                                        r"table 'out__groups', which would be created in an in-memory"):
        api.apply(spec_from_dict(d), database=None)
    d["output"] = {"mode": "sql", "name": "out", "database": str(tmp_path / "out.duckdb")}
    report = api.apply(spec_from_dict(d))
    assert report.outputs["group_table"] == "out__groups" and report.anonymous
    with DuckDBEngine(str(tmp_path / "out.duckdb")) as e:
        assert e.row_count("out__groups") == 20
    d["output"] = {"mode": "none"}
    assert api.check(spec_from_dict(d)).as_dict()["achieved_k"] == 3


@pytest.mark.parametrize(("n", "k", "sizes"),
                         [(5, 3, (5, 5)), (6, 3, (3, 3)), (8, 3, (3, 5)), (7, 2, (2, 3))])
@pytest.mark.parametrize("algorithm", ["individual_ranking", "projection"])
def test_sql_methods_report_the_sizes_of_their_runs(engine, algorithm, n, k, sizes):
    load(engine, frame(n))
    r = api.check(spec_for(algorithm, k=k), engine=engine)
    assert (r.min_group_size, r.max_group_size) == sizes
    api.apply(spec_for(algorithm, k=k), engine=engine)
    counts = engine.con.execute("SELECT count(*) FROM t_anon GROUP BY a").fetchall()
    assert (min(counts)[0], max(counts)[0]) == sizes  # the released values form those groups


def test_record_linkage_left_out_above_its_row_limit(engine, monkeypatch):
    from sqlanon.methods.microaggregation import pipeline

    load(engine, frame(30))
    monkeypatch.setattr(pipeline, "RECORD_LINKAGE_MAX_ROWS", 29)
    r = api.check(spec_for("mdav"), engine=engine)
    assert "record_linkage" not in r.metrics and "sse" in r.metrics
    assert r.warnings == ["record_linkage is left out above 29 rows (it pulls every row into memory)"]


def test_partitioner_contract_is_enforced(engine):
    from sqlanon.errors import InternalError
    from sqlanon.methods.microaggregation.algorithms.registry import ALGORITHMS

    @ALGORITHMS.register("halves")
    def halves(records, k):  # any numbers will do; the pipeline renumbers them
        return np.where(np.arange(records.n) < records.n // 2, 100, 7)

    @ALGORITHMS.register("too_small")
    def too_small(records, k):
        return np.arange(records.n) % (records.n // 2)

    try:
        load(engine, frame(12))
        levels = ["lo", "hi"]
        engine.execute_script('ALTER TABLE t ADD COLUMN grade VARCHAR')
        engine.execute_script("UPDATE t SET grade = CASE WHEN id % 2 = 0 THEN 'lo' ELSE 'hi' END")
        d = _spec_dict("halves", "table", "out")
        d["attributes"]["grade"] = {"role": "quasi_identifier", "type": "ordinal", "order": levels}
        r = api.apply(spec_from_dict(d), engine=engine)
        assert r.groups == 2 and (r.min_group_size, r.max_group_size) == (6, 6)
        got = read(engine, "out")
        assert got["a"].nunique() == 2 and got["grade"].nunique() <= 2
        with pytest.raises(InternalError, match="too_small formed a group of fewer than k = 3 rows"):
            api.apply(spec_for("too_small"), engine=engine)
    finally:
        for name in ("halves", "too_small"):
            ALGORITHMS.remove(name)
