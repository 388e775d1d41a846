"""``generalize_first: {search: optimal}``: the pruned search finds the node that evaluating every
node of the lattice finds (random evaluations whose cell-free nodes are closed upwards, as
generalizing never lowers a frequency; and real runs on DuckDB), and an apply with it writes a
k-anonymous table at the levels it reports."""

from __future__ import annotations

import dataclasses
import random

import pytest

from sqlanon import api
from sqlanon.errors import SpecError
from sqlanon.methods.dataset import open_dataset
from sqlanon.methods.local_suppression import level_search
from sqlanon.methods.local_suppression.method import suppressed
from sqlanon.methods.local_suppression.settings import LocalSuppressionSettings
from sqlanon.spec import spec_from_dict
from tests.methods.local_suppression.test_method import fetch, load, wildcard_k


def random_evaluation(rng: random.Random, heights: dict[str, int]):
    scale = {a: rng.randint(1, 40) for a in heights}
    need = rng.randint(0, 120)
    table: dict[tuple, dict[str, int]] = {}

    def evaluate(levels: dict[str, int]) -> tuple[dict[str, int], int]:
        key = tuple(sorted(levels.items()))
        if key not in table:
            left = need - sum(scale[a] * levels[a] for a in levels)
            table[key] = {a: rng.randint(0, 30) if left > 0 else 0 for a in heights}
        return table[key], 40
    return evaluate


@pytest.mark.parametrize("cell_weight", [0.2, 1.0, 4.0])
def test_pruned_search_finds_the_exhaustive_optimum(cell_weight):
    rng = random.Random(11)
    generalized = evaluated = 0
    for _ in range(60):
        heights = {a: rng.randint(1, 3) for a in "abc"[:rng.randint(1, 3)]}
        qis = [*heights, "plain"]
        evaluate = random_evaluation(rng, heights)
        every = level_search.exhaustive(heights, qis, evaluate, cell_weight)
        pruned = level_search.search(heights, qis, evaluate, cell_weight)
        assert pruned.best.levels == every.best.levels
        assert pruned.best.objective == pytest.approx(every.best.objective)
        assert len(pruned.evaluated) <= len(every.evaluated)
        generalized += any(pruned.best.levels.values())
        evaluated += len(pruned.evaluated) - len(every.evaluated)
    assert evaluated < 0 and (generalized >= 10 or cell_weight < 1)  # nodes pruned; optima above the bottom


def spec(**transformation):
    return spec_from_dict({
        "source": {"table": "t"},
        "attributes": {"id": "insensitive", "name": "identifier", "income": "sensitive",
                       "extra": "insensitive", "a": "quasi_identifier", "b": {"role": "quasi_identifier"},
                       "age": {"role": "quasi_identifier",
                               "hierarchy": {"intervals": {"widths": [5, 10, 20]}}}},
        "transformation": {"method": "local_suppression", **transformation},
        "output": {"mode": "table", "name": "out"}})


@pytest.mark.parametrize("cell_weight", [0.5, 2.0])
def test_search_on_duckdb_equals_every_level_evaluated(duck, cell_weight):
    load(duck)
    s = spec(k=3, heuristic="rounds")
    settings: LocalSuppressionSettings = s.settings

    ds = open_dataset(s, duck)

    def evaluate(levels):
        report = suppressed(s, ds, dataclasses.replace(settings, levels=levels)).report
        return report.cells, report.rows

    heights = {"age": s.attributes["age"].hierarchy.height}
    qis = ["a", "b", "age"]
    every = level_search.exhaustive(heights, qis, evaluate, cell_weight)
    pruned = level_search.search(heights, qis, evaluate, cell_weight)
    assert pruned.best.levels == every.best.levels
    searched = {"search": "optimal", "cell_weight": cell_weight}
    report = api.apply(spec(k=3, heuristic="rounds", generalize_first=searched), engine=duck)
    assert report.transformation["levels"] == every.best.levels
    assert report.transformation["generalize_first"]["objective"] == pytest.approx(every.best.objective)
    assert wildcard_k([(r[1], r[2], r[3]) for r in fetch(duck, "out")]) >= 3


@pytest.mark.parametrize(("transformation", "path"), [
    ({"generalize_first": {"search": "greedy"}}, "transformation.generalize_first.search"),
    ({"generalize_first": {"search": "optimal", "weight": 1}}, "transformation.generalize_first.weight"),
    ({"generalize_first": {"search": "optimal", "cell_weight": 0}},
     "transformation.generalize_first.cell_weight"),
    ({"generalize_first": {"search": "optimal"}, "levels": {"age": 1}}, "transformation.generalize_first")])
def test_bad_search_settings_name_the_key(transformation, path):
    with pytest.raises(SpecError) as e:
        _ = spec(k=3, **transformation).settings
    assert path in str(e.value)
