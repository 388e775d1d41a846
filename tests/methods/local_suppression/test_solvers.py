"""The solvers on random frequency tables (seeded numpy, up to 200 rows × 4 attributes): every
result is k-anonymous under the wildcard semantics, checked row by row by brute force; the exact
solver is never worse than enumeration or a heuristic; the row cover (the default heuristic) stays
within 1.2× of the optimum on average."""

from __future__ import annotations

import numpy as np
import pytest

from sqlanon.methods.local_suppression import cover, exact, greedy, sdcmicro
from sqlanon.methods.local_suppression.combos import (
    MISSING,
    Combos,
    Suppression,
    brute_force_frequencies,
    wildcard_frequencies,
)


def random_table(rng: np.random.Generator, n: int, d: int, card: int, nulls: float = 0.0) -> Combos:
    data = rng.integers(0, card, size=(n, d))
    data[rng.random((n, d)) < nulls] = -1
    u, c = np.unique(data, axis=0, return_counts=True)
    return Combos.of([tuple(None if x < 0 else int(x) for x in r) for r in u], c.tolist())


def released_rows(combos: Combos, s: Suppression) -> np.ndarray:
    return np.repeat(s.released(combos), s.rows, axis=0)


def cases(count: int, seed: int) -> list[tuple[Combos, int]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n, d, card = int(rng.integers(10, 201)), int(rng.integers(2, 5)), int(rng.integers(2, 6))
        out.append((random_table(rng, n, d, card, nulls=0.05 if rng.random() < 0.3 else 0.0),
                    int(rng.integers(2, 6))))
    return out


def test_wildcard_frequencies_equal_brute_force():
    rng = np.random.default_rng(7)
    for _ in range(20):
        codes = rng.integers(-1, 3, size=(int(rng.integers(1, 40)), 3))
        rows = np.ones(len(codes), dtype=np.int64)
        assert (wildcard_frequencies(codes, rows) == brute_force_frequencies(codes)).all()


@pytest.fixture(scope="module")
def solved() -> list[tuple[Combos, int, Suppression]]:
    """20 random tables of up to 200 rows × 4 attributes, with their exact optimum."""
    out = []
    for combos, k in cases(20, 3):
        opt = exact.solve(combos, k, np.ones(combos.width), time_limit=30)
        assert opt.optimal
        out.append((combos, k, opt))
    return out


def test_every_solver_is_k_anonymous_and_the_exact_one_is_least(solved):
    for combos, k, opt in solved:
        weights = np.ones(combos.width)
        assert (opt.rows >= 0).all() and np.bincount(opt.combo, weights=opt.rows).tolist() == \
            combos.counts.astype(float).tolist()
        for s in (opt, sdcmicro.sdcmicro(combos, k, sdcmicro.default_order(combos)),
                  greedy.best_of_donors(combos, k, weights), greedy.cheapest_patterns(combos, k, weights),
                  cover.row_cover(combos, k, weights)):
            assert brute_force_frequencies(released_rows(combos, s)).min() >= k
            # a cell missing in the source stays missing; no other cell changes
            source = np.repeat(combos.codes[s.combo], s.rows, axis=0)
            out = released_rows(combos, s)
            assert ((out == source) | (out == MISSING)).all()
            assert s.cost(combos, weights) >= opt.cost(combos, weights) - 1e-9


def test_row_cover_within_1_2_of_the_optimum_on_average(solved):
    ratios = []
    for combos, k, opt in solved:
        weights = np.ones(combos.width)
        best = opt.cost(combos, weights)
        got = cover.row_cover(combos, k, weights).cost(combos, weights)
        ratios.append(got / best if best else 1.0 + got)
    assert np.mean(ratios) <= 1.2, ratios


def test_exact_equals_enumeration_on_tiny_tables():
    """Rows all distinct, so a decision per combination is a decision per row: the same optimum."""
    rng = np.random.default_rng(11)
    for _ in range(8):
        u = np.unique(rng.integers(0, 3, size=(int(rng.integers(3, 7)), 2)), axis=0)
        combos = Combos.of([tuple(int(x) for x in r) for r in u], [1] * len(u))
        weights = rng.integers(1, 4, size=2).astype(float)
        k = int(rng.integers(2, 4))
        if k > len(u):
            continue
        assert exact.solve(combos, k, weights).cost(combos, weights) == \
            pytest.approx(exact.brute_force_optimum(combos, k, weights))


def test_importance_moves_suppression_to_cheap_attributes():
    rng = np.random.default_rng(5)
    combos = random_table(rng, 120, 3, 4)
    weights = np.array([10.0, 1.0, 10.0])
    for s in (exact.solve(combos, 3, weights), greedy.best_of_donors(combos, 3, weights),
              cover.row_cover(combos, 3, weights)):
        cells = s.cells_per_attribute(combos)
        assert cells[1] >= cells[0] and cells[1] >= cells[2]
        assert brute_force_frequencies(released_rows(combos, s)).min() >= 3


def test_sdcmicro_suppresses_the_attribute_with_most_values_first():
    # one unsafe row whose nearest rows differ from it in both attributes: sdcMicro takes the
    # attribute with more distinct values
    combos = Combos.of([(0, 0), (0, 1), (1, 0), (1, 1), (2, 1), (3, 1)], [1, 3, 3, 3, 3, 3])
    s = sdcmicro.sdcmicro(combos, 2, sdcmicro.default_order(combos))
    assert s.new_cells(combos)[0].tolist() == [True, False]


def test_alpha_zero_rows_with_missing_cells_count_for_no_other_row():
    """With alpha = 0 (sdcMicro's option) wildcard rows cannot make others safe: the exact optimum
    and every heuristic through the method's solver choice are k-anonymous under that count."""
    from sqlanon.methods.local_suppression.settings import LocalSuppressionSettings
    from sqlanon.methods.local_suppression.solve import suppress

    solved = 0
    for combos, k in cases(8, 4):
        names = [f"q{j}" for j in range(combos.width)]
        try:
            opt = exact.solve(combos, k, np.ones(combos.width), time_limit=30, alpha=0.0)
        except ValueError:
            continue  # no suppression can do it (e.g. fewer than k complete rows agree anywhere)
        solved += 1
        assert brute_force_frequencies(released_rows(combos, opt), 0.0).min() >= k
        for heuristic in ("cover", "pattern", "sdcmicro"):
            s = suppress(combos, names, LocalSuppressionSettings(k, heuristic=heuristic, alpha=0.0))
            assert brute_force_frequencies(released_rows(combos, s), 0.0).min() >= k, heuristic
            assert s.cost(combos, np.ones(combos.width)) >= opt.cost(combos, np.ones(combos.width)) - 1e-9
    assert solved >= 4
