"""ARX-style local recoding (``transformation.recoding: local``): each step is the optimum of the
records still suppressed, checked against a brute-force oracle written from ARX's definitions
(peer-semantics §2–3), and the written rows are what the report says."""

from __future__ import annotations

import csv
import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.spec import spec_from_dict

QIS = ["age", "zip", "sex"]


def _write_hierarchies(folder: Path) -> dict[str, dict[str, list[str]]]:
    ages = {str(a): [str(a), f"{a // 5 * 5}-{a // 5 * 5 + 4}", f"{a // 20 * 20}-{a // 20 * 20 + 19}", "*"]
            for a in range(20, 60)}
    zips = {z: [z, z[:4] + "*", z[:3] + "**", "*"] for z in (f"{13000 + i}" for i in range(0, 40, 3))}
    sexes = {s: [s, "*"] for s in ("F", "M")}
    out = {"age": ages, "zip": zips, "sex": sexes}
    for a, rows in out.items():
        (folder / f"{a}.csv").write_text("".join(";".join(r) + "\n" for r in rows.values()), encoding="utf-8")
    return out


def _table(seed: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    zips = [f"{13000 + i}" for i in range(0, 40, 3)]
    return pa.table({
        "id": np.arange(n),
        "age": [str(a) for a in np.clip(rng.normal(38, 9, n).round().astype(int), 20, 59)],
        "zip": [zips[i] for i in rng.zipf(1.6, n) % len(zips)],
        "sex": rng.choice(["F", "M"], n).tolist(),
        "income": rng.integers(0, 100, n),
    })


@pytest.fixture()
def local_case(duck, tmp_path):
    hierarchies = _write_hierarchies(tmp_path)
    data = _table(7, 400)
    duck.create_table_from_arrow("people", data)
    return duck, tmp_path, hierarchies, data


def _spec(folder: Path, *, k: int = 5, limit: float = 1.0, local: dict | None = None, mode: str = "table",
          recoding: str = "local", metric_options: dict | None = None, **output) -> dict:
    d = {
        "source": {"table": "people"},
        "attributes": {"id": {"role": "identifier", "action": "drop"},
                       **{a: {"role": "quasi_identifier", "hierarchy": {"csv": str(folder / f"{a}.csv")}}
                          for a in QIS},
                       "income": "insensitive"},
        "privacy": [{"k_anonymity": {"k": k}}],
        "transformation": {"suppression_limit": limit, "recoding": recoding,
                           **({"local_recoding": local} if local is not None else {})},
        "output": {"mode": mode, "name": "released", "replace": True, **output},
    }
    if metric_options:
        d["metrics"] = {"options": metric_options}
    return d


# -- the oracle: ARX's check and Loss, written from peer-semantics, over plain Python rows ------------
def _loss(records: Counter, hierarchies: dict, node: tuple[int, ...], k: int, limit: float, gs: float,
          qis: list[str] = QIS) -> tuple[bool, float, set]:
    """(anonymous, ARX Loss with gs-factor, QI combinations in outlier classes) of ``node``."""
    n = sum(records.values())
    classes: Counter = Counter()
    for combo, c in records.items():
        classes[tuple(hierarchies[a][v][lv] for a, v, lv in zip(qis, combo, node))] += c
    outliers = {g for g, size in classes.items() if size < k}
    s = sum(classes[g] for g in outliers)
    anonymous = s <= math.floor(limit * n)
    g_factor = 1.0 if gs <= 0.5 else 1.0 - 2.0 * (gs - 0.5)
    losses = []
    for i, a in enumerate(qis):
        d = len(hierarchies[a])
        under = Counter(row[node[i]] for row in hierarchies[a].values())
        kept = sum(size * under[g[i]] for g, size in classes.items() if g not in outliers)
        total = kept / d * g_factor if g_factor != 1.0 else kept / d
        total += s
        low = g_factor * n / d if g_factor != 1.0 else n / d
        losses.append(math.floor(max(0.0, (total - low) / (n - low)) * 1e10) / 1e10)
    value = 1.0
    for loss in losses:
        value *= pow(loss + 1.0, 1.0 / len(qis))
    outlier_combos = {combo for combo in records
                      if tuple(hierarchies[a][v][lv] for a, v, lv in zip(qis, combo, node)) in outliers}
    return anonymous, value - 1.0, outlier_combos


def _replay(data: pa.Table, hierarchies: dict, steps: list[dict], k: int, limit: float, variant: str,
            qis: list[str] = QIS):
    """Check every reported step against the oracle; returns the rows left suppressed."""
    records = Counter(zip(*(data.column(a).to_pylist() for a in qis)))
    n = sum(records.values())
    heights = [len(next(iter(hierarchies[a].values()))) - 1 for a in qis]
    lattice = list(itertools.product(*(range(h + 1) for h in heights)))
    for number, step in enumerate(steps):
        assert step["records"] == sum(records.values())
        step_limit = step["suppression_limit"]
        if number and variant == "fast":
            assert step_limit == 1.0 - min(max(0.01 * n / sum(records.values()), 0.0), 1.0)
        elif number == 0 or variant == "iterative":
            assert step_limit == limit
        gs = step.get("gs_factor", 0.5)
        node = tuple(step["levels"][a] for a in qis)
        checked = [_loss(records, hierarchies, nd, k, step_limit, gs, qis) for nd in lattice]
        best = min(value for anonymous, value, _ in checked if anonymous)
        anonymous, value, outliers = _loss(records, hierarchies, node, k, step_limit, gs, qis)
        assert anonymous and value <= best + 1e-12, (number, node, value, best)
        released = sum(c for combo, c in records.items() if combo not in outliers)
        assert step["released_rows"] == released
        records = Counter({combo: c for combo, c in records.items() if combo in outliers})
    return sum(records.values())


def _classes(engine, relation: str = "released") -> list[tuple]:
    cols = ", ".join(f'"{a}"' for a in QIS)
    return engine.fetch_script(f'SELECT {cols}, COUNT(*) FROM "{relation}" GROUP BY {cols}')[1]


@pytest.mark.parametrize("variant", ["fast", "iterative"])
def test_every_step_is_the_optimum_of_the_records_still_suppressed(local_case, variant):
    engine, folder, hierarchies, data = local_case
    global_spec = spec_from_dict(_spec(folder, recoding="global", mode="none"))
    global_report = api.anonymize(global_spec, engine=engine)
    r = api.anonymize(spec_from_dict(_spec(folder, local={"variant": variant})), engine=engine)
    lr = r.local_recoding
    assert lr["steps"][0]["levels"] == global_report.node.levels  # step 0 is the global optimum
    left = _replay(data, hierarchies, lr["steps"], 5, 1.0, variant)
    out = lr["output"]
    assert out["suppressed_rows"] == left
    assert out["suppressed_rows"] < global_report.node.suppressed_rows
    classes = _classes(engine)
    assert min(c[-1] for c in classes) >= 5
    assert (out["classes"], out["min_class_size"]) == (len(classes), min(c[-1] for c in classes))
    assert out["metrics"]["discernibility"] == sum(c[-1] ** 2 for c in classes) + 400 * left
    assert engine.row_count("released") == 400 - left
    assert "id" not in [c for c, _ in engine.columns("released")]


def test_rows_carry_their_steps_levels_and_suppressed_rows_can_be_masked(local_case):
    engine, folder, hierarchies, data = local_case
    r = api.anonymize(spec_from_dict(_spec(folder, k=8, local={"variant": "fast"})), engine=engine)
    steps = r.local_recoding["steps"]
    assert len(steps) >= 2
    labels = {tuple(hierarchies[a][v][s["levels"][a]] for a, v in zip(QIS, combo))
              for s in steps for combo in zip(*(data.column(a).to_pylist() for a in QIS))}
    assert {tuple(c[:3]) for c in _classes(engine)} <= labels
    masked = api.anonymize(spec_from_dict(_spec(folder, k=8, local={"variant": "fast"}, mode="table")
                                          | {"transformation": {"suppression_limit": 1.0, "recoding": "local",
                                                                "suppressed": "mask"}}), engine=engine)
    assert engine.row_count("released") == 400
    stars = engine.fetch_script('SELECT COUNT(*) FROM "released" WHERE "age" = \'*\' AND "zip" = \'*\'')[1]
    assert stars[0][0] >= masked.local_recoding["output"]["suppressed_rows"]


def test_a_view_and_printed_sql_read_a_kept_steps_table(local_case):
    engine, folder, _, _ = local_case
    api.anonymize(spec_from_dict(_spec(folder, local={"variant": "fast"})), engine=engine)
    table_rows = sorted(engine.fetch_script('SELECT * FROM "released"')[1])
    r = api.anonymize(spec_from_dict(_spec(folder, local={"variant": "fast"}, mode="view", name="v")),
                      engine=engine)
    assert r.outputs["group_table"] == "v__groups"
    assert sorted(engine.fetch_script('SELECT * FROM "v"')[1]) == table_rows
    printed = api.anonymize(spec_from_dict(_spec(folder, local={"variant": "fast"}, mode="sql", name="s")),
                            engine=engine)
    assert '"s__groups"' in printed.outputs["sql"]
    assert sorted(engine.fetch_script(printed.outputs["sql"].rstrip().rstrip(";"))[1]) == table_rows


def test_gs_factor_weighs_generalization_against_suppression(local_case):
    engine, folder, hierarchies, data = local_case
    records = Counter(zip(*(data.column(a).to_pylist() for a in QIS)))
    for gs in (0.2, 0.8):
        r = api.anonymize(spec_from_dict(_spec(folder, recoding="global", mode="none",
                                               metric_options={"gs_factor": gs})), engine=engine)
        node = tuple(r.node.levels[a] for a in QIS)
        _, expected, _ = _loss(records, hierarchies, node, 5, 1.0, gs)
        if gs > 0.5:  # the oracle writes only the suppression factor 1 case
            assert r.search["value"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("local", "message"), [
    ({"variant": "fastest"}, "one of fast, iterative"),
    ({"records": 0}, "(0, 1]"),
    ({"variant": "fast", "gs_factor": 0.7}, "not read by variant 'fast'"),
    ({"variant": "iterative", "iterations": 0}, "whole number"),
    ({"speed": 1}, "unknown key 'speed'"),
])
def test_bad_settings_name_the_key(local_case, local, message):
    _, folder, _, _ = local_case
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        spec_from_dict(_spec(folder, local=local))


def test_local_recoding_needs_the_search_and_supported_models(local_case):
    engine, folder, _, _ = local_case
    with pytest.raises(SpecError, match="only with recoding: local"):
        spec_from_dict(_spec(folder, recoding="global", local={"variant": "fast"}))
    spec = spec_from_dict(_spec(folder) | {"transformation": {"recoding": "local", "levels": {"age": 1}}})
    with pytest.raises(UnsupportedError, match="runs with `anonymize`, not `apply`"):
        api.apply(spec, engine=engine)
    d = _spec(folder)
    d["attributes"]["income"] = {"role": "sensitive"}
    d["privacy"].append({"t_closeness": {"attribute": "income", "t": 0.5, "distance": "ordered"}})
    with pytest.raises(UnsupportedError, match="local recoding is not available with t_closeness"):
        api.anonymize(spec_from_dict(d), engine=engine)


ADULT_FIVE = ["age", "sex", "race", "native-country", "workclass"]


@pytest.mark.parametrize("variant", ["fast", "iterative"])
def test_adult_steps_against_the_oracle_with_an_adapted_gs_factor(adult_engine, adult_dir, variant):
    """Adult on five QIs (180 nodes, so the oracle can try them all), k = 20, 100 % suppression: the
    iterative variant meets a step that recovers nothing at gs-factor 0.5 and raises it to 0.55."""
    from tests.conftest import adult_spec_dict

    d = adult_spec_dict(adult_dir, qis=ADULT_FIVE, privacy=[{"k_anonymity": {"k": 20}}], limit=1.0)
    d["transformation"] |= {"recoding": "local", "local_recoding": {"variant": variant}}
    d["output"] = {"mode": "table", "name": "released"}
    r = api.anonymize(spec_from_dict(d), engine=adult_engine)
    hierarchies = {}
    for a in ADULT_FIVE:
        lines = (adult_dir / f"adult_hierarchy_{a}.csv").read_text(encoding="utf-8").splitlines()
        hierarchies[a] = {row[0]: row for row in (line.split(";") for line in lines if line)}
    data = adult_engine.fetch_arrow(exp.select("*").from_("adult"))
    steps = r.local_recoding["steps"]
    left = _replay(data, hierarchies, steps, 20, 1.0, variant, ADULT_FIVE)
    assert r.local_recoding["output"]["suppressed_rows"] == left
    if variant == "iterative":
        assert [s["gs_factor"] for s in steps[1:]][-2:] == [0.5, 0.55]
        assert steps[-2]["released_rows"] == 0
    cols = ", ".join(f'"{a}"' for a in ADULT_FIVE)
    grouped = adult_engine.fetch_script(f'SELECT COUNT(*) FROM "released" GROUP BY {cols}')[1]
    sizes = [row[0] for row in grouped]
    assert min(sizes) >= 20 and len(sizes) == r.local_recoding["output"]["classes"]



def test_hostile_names_and_values_reach_sql_quoted(duck, tmp_path):
    """Column names and values with quotes, semicolons and non-ASCII text, in every step and in the
    kept steps table of a view."""
    names = ['a"ge', "zi'p; DROP TABLE x", "séx"]
    rng = np.random.default_rng(3)
    ages = np.concatenate([rng.integers(20, 40, 275), rng.integers(50, 60, 25)])
    values = {names[0]: [f"{v}'" for v in ages],
              names[1]: rng.choice(["1'; --", 'x"y', "ü"], 300).tolist(),
              names[2]: rng.choice(["F", "M"], 300).tolist()}
    duck.create_table_from_arrow("people", pa.table(values))
    for name, column in values.items():
        leaves = sorted(set(column))
        path = tmp_path / f"{names.index(name)}.csv"
        with path.open("w", encoding="utf-8", newline="") as f:
            csv.writer(f, delimiter=";", lineterminator="\n").writerows([v, v[:1], "*"] for v in leaves)
        values[name] = str(path)
    d = {"source": {"table": "people"},
         "attributes": {n: {"role": "quasi_identifier", "hierarchy": {"csv": values[n]}} for n in names},
         "privacy": [{"k_anonymity": {"k": 6}}],
         "transformation": {"suppression_limit": 1.0, "recoding": "local"},
         "output": {"mode": "view", "name": 'v"; x'}}
    r = api.anonymize(spec_from_dict(d), engine=duck)
    assert len(r.local_recoding["steps"]) >= 2
    quoted = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
    sizes = duck.fetch_script(f'SELECT COUNT(*) FROM "v""; x" GROUP BY {quoted}')[1]
    assert min(s[0] for s in sizes) >= 6
    assert sum(s[0] for s in sizes) == 300 - r.local_recoding["output"]["suppressed_rows"]


def test_in_place_replaces_the_source_by_the_recoded_rows(local_case):
    engine, folder, _, _ = local_case
    table_report = api.anonymize(spec_from_dict(_spec(folder, local={"variant": "fast"})), engine=engine)
    expected = sorted(engine.fetch_script('SELECT * FROM "released"')[1])
    d = _spec(folder, local={"variant": "fast"})
    d["output"] = {"mode": "in_place"}
    r = api.anonymize(spec_from_dict(d), engine=engine)
    assert r.local_recoding == table_report.local_recoding | {"steps": r.local_recoding["steps"]}
    assert sorted(engine.fetch_script('SELECT * FROM "people"')[1]) == expected


def _label_of(attribute: str, value, level: int, top: int):
    """The expected release of one value: the interval, CSV (``null: NA``) and mask hierarchies of
    :func:`test_nulls_in_quasi_identifiers_are_a_value_of_their_own`, NULL kept below the top."""
    if attribute == "zip":
        leaf = "NA" if value is None else value
        return [leaf, "NA" if value is None else leaf[:4] + "*",
                "NA" if value is None else leaf[:3] + "**", "*"][level]
    if level == top:
        return "*"
    if value is None or level == 0:
        return None if value is None else (str(value) if attribute == "age" else value)
    width = [5, 10, 20][level - 1]
    low = value // width * width
    return f"[{low}, {low + width})"


@pytest.mark.parametrize("variant", ["fast", "iterative"])
def test_nulls_in_quasi_identifiers_are_a_value_of_their_own(duck, tmp_path, variant):
    """NULL in an interval, a CSV (``null: NA``) and a mask quasi-identifier: every released row is
    its source row generalized at one step's levels (NULL staying NULL below the top), and the
    classes, NULL ones included, hold at least k rows."""
    rng = np.random.default_rng(3)
    n = 400
    zips = [f"{13000 + i}" for i in range(0, 40, 3)]
    (tmp_path / "zip.csv").write_text("".join(f"{z};{z[:4]}*;{z[:3]}**;*\n" for z in zips) + "NA;NA;NA;*\n",
                                      encoding="utf-8")
    source = {
        "id": list(range(n)),
        "age": [None if rng.random() < 0.05 else int(a)
                for a in np.clip(rng.normal(38, 9, n).round(), 20, 59)],
        "zip": [None if rng.random() < 0.05 else zips[i] for i in rng.zipf(1.6, n) % len(zips)],
        "sex": [None if rng.random() < 0.03 else s for s in rng.choice(["F", "M"], n).tolist()],
    }
    duck.create_table_from_arrow("people", pa.table({**source, "age": pa.array(source["age"], pa.int64())}))
    d = {"source": {"table": "people"},
         "attributes": {"id": "insensitive",
                        "age": {"role": "quasi_identifier",
                                "hierarchy": {"intervals": {"widths": [5, 10, 20]}}},
                        "zip": {"role": "quasi_identifier",
                                "hierarchy": {"csv": str(tmp_path / "zip.csv"), "null": "NA"}},
                        "sex": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 1}}}},
         "privacy": [{"k_anonymity": {"k": 5}}],
         "transformation": {"suppression_limit": 1.0, "recoding": "local",
                            "local_recoding": {"variant": variant}},
         "output": {"mode": "table", "name": "released", "replace": True}}
    r = api.anonymize(spec_from_dict(d), engine=duck)
    lr = r.local_recoding
    steps = [tuple(s["levels"][a] for a in QIS) for s in lr["steps"]]
    assert len(steps) >= 2
    tops = {"age": 4, "zip": 3, "sex": 1}
    rows = duck.fetch_script('SELECT "id", "age", "zip", "sex" FROM "released"')[1]
    assert len(rows) == n - lr["output"]["suppressed_rows"]
    assert any(row[1] is None for row in rows) and any(row[3] is None for row in rows)
    for i, *released in rows:
        candidates = [tuple(_label_of(a, source[a][i], level, tops[a]) for a, level in zip(QIS, node))
                      for node in steps]
        assert tuple(released) in candidates, (i, released)
    sizes = Counter((age, z, s) for _, age, z, s in rows)
    assert min(sizes.values()) >= 5
    assert (lr["output"]["classes"], lr["output"]["min_class_size"]) == (len(sizes), min(sizes.values()))
