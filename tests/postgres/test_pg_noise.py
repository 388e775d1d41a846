"""Noise on PostgreSQL: rows matched on ctid, in place inside one transaction, hostile names."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sqlanon import api
from sqlanon.errors import EngineError
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec import spec_from_dict

pytestmark = pytest.mark.postgres

TABLE = "pe'ople; ñ"
N = 600


@pytest.fixture()
def people(pg):
    pg.execute_script(f'CREATE TABLE "{TABLE}" (id integer, "x;y" double precision, z double precision, '
               "cat text)")
    pg.insert_rows(TABLE, [(i, float(i % 97) * 1.5, float(i % 97) + (i % 5), ["a", "b", "O'c"][i % 3])
                           for i in range(N)])
    return pg


def spec(transformation: dict, output: dict):
    return spec_from_dict({
        "source": {"table": TABLE},
        "attributes": {"x;y": {"role": "sensitive"}, "z": {"role": "sensitive"},
                       "cat": {"role": "sensitive"}},
        "transformation": {"method": "noise", "seed": 5, **transformation}, "output": output})


def rows(pg, name):
    return pg.fetch_script(f'SELECT id, "x;y", z, cat FROM "{name}" ORDER BY id')[1]


def run(pg, transformation, output):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        return api.apply(spec(transformation, output), engine=pg)


def test_correlated_noise_in_place(people):
    before = rows(people, TABLE)
    report = run(people, {"mechanism": "correlated", "attributes": ["x;y", "z"], "alpha": 0.3},
                 {"mode": "in_place"})
    after = rows(people, TABLE)
    assert [r[0] for r in after] == [r[0] for r in before]
    assert [r[3] for r in after] == [r[3] for r in before]
    x0, x1 = np.array([r[1] for r in before]), np.array([r[1] for r in after])
    assert (x0 != x1).mean() > 0.99
    diff = np.array([[a[1] - b[1], a[2] - b[2]] for a, b in zip(after, before)])
    assert report.metrics["sse"] == pytest.approx((diff ** 2).sum(), rel=1e-9)
    z0 = np.array([r[2] for r in before])
    z1 = np.array([r[2] for r in after])
    assert np.corrcoef(x1, z1)[0, 1] == pytest.approx(np.corrcoef(x0, z0)[0, 1], abs=0.1)
    cols = [c for c, _ in people.columns(TABLE)]
    assert cols == ["id", "x;y", "z", "cat"]


def test_rank_swap_and_pram_to_a_new_table(people):
    run(people, {"mechanism": "rank_swap", "attributes": ["z"], "p": 10},
        {"mode": "table", "name": "swapped"})
    src, out = rows(people, TABLE), rows(people, "swapped")
    assert sorted(r[2] for r in out) == sorted(r[2] for r in src)
    assert [r[1] for r in out] == [r[1] for r in src]
    run(people, {"mechanism": "pram", "attributes": ["cat"],
                 "matrix": {"cat": {"a": {"a": 1}, "b": {"b": 1}, "O'c": {"O'c": 1}}}},
        {"mode": "table", "name": "same"})
    assert rows(people, "same") == src  # identity matrix: rows went back to their own keys


def test_failed_in_place_rolls_back(people):
    before = rows(people, TABLE)
    with pytest.raises(EngineError, match="(?i)out of range"):
        # every id is replaced (keep 0), each with probability about 1/2 by a category beyond the
        # INTEGER range: the cast back fails inside the in-place transaction
        run(people, {"mechanism": "randomized_response", "attributes": ["id"], "keep_probability": 0.0,
                     "categories": {"id": list(range(N)) + [10 ** 12 + i for i in range(N)]}},
            {"mode": "in_place"})
    assert rows(people, TABLE) == before


def test_laplace_and_sampling_to_new_tables(people):
    report = run(people, {"mechanism": "laplace", "attributes": ["x;y"], "epsilon": 1.0,
                          "sensitivity": 1.5, "bounds": {"x;y": [0, 150]}},
                 {"mode": "table", "name": "lap"})
    grid = report.guarantee["grid"]["x;y"]
    out = np.array([r[1] for r in rows(people, "lap")])
    assert out.min() >= 0 and out.max() <= 150
    assert np.all(np.isclose(((out - 75) / grid + 0.5) % 1, 0.5) | np.isin(out, [0.0, 150.0]))
    run(people, {"mechanism": "sampling", "fraction": 0.25}, {"mode": "table", "name": "part"})
    part = rows(people, "part")
    assert len(part) == N // 4 and set(part) <= set(rows(people, TABLE))



@pytest.mark.parametrize("mechanism", ["gaussian", "staircase"])
def test_gaussian_and_staircase_release_grid_points(people, mechanism):
    extra = {"delta": 1e-6} if mechanism == "gaussian" else {}
    report = run(people, {"mechanism": mechanism, "attributes": ["x;y", "id"], "epsilon": 1.0,
                          "sensitivity": 3, **extra}, {"mode": "table", "name": "grid"})
    grids = report.guarantee["grid"]
    assert grids == {"x;y": 2.0 ** -9, "id": 1.0}      # an integer column stays on the grid 1
    out = people.fetch_script('SELECT "x;y", id FROM "grid"')[1]
    real = np.array([r[0] for r in out]) / grids["x;y"]
    ids = np.array([r[1] for r in out], dtype=float)
    np.testing.assert_array_equal(real, np.rint(real))
    np.testing.assert_array_equal(ids, np.rint(ids))
    assert len(np.unique(ids)) > N // 2                 # moved, not just copied
