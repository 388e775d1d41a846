"""From the frequency table to the decisions: the chosen solver, and the decisions as rows of the
released rows' decision relation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.local_suppression import cover, exact, greedy, rounds, sdcmicro
from sqlanon.methods.local_suppression.combos import Combos, Suppression
from sqlanon.methods.local_suppression.queries import Decision
from sqlanon.methods.local_suppression.settings import LocalSuppressionSettings


def suppress(combos: Combos, qis: Sequence[str], s: LocalSuppressionSettings) -> Suppression:
    """Run the settings' solver. With ``alpha = 1`` every solver's result is k-anonymous under the
    wildcard semantics (when the table has at least k rows); with ``alpha < 1`` a heuristic may stop
    short (the report gives the achieved k) and the exact solver refuses a table it cannot make
    k-anonymous."""
    weights = np.array([s.weight(a) for a in qis], dtype=float)
    if s.solver == "exact":
        size = exact.exact_size(combos)
        if combos.width > exact.MAX_EXACT_WIDTH or size > exact.MAX_EXACT_VARIABLES:
            raise SpecError(f"the exact solver takes up to {exact.MAX_EXACT_VARIABLES:,} combinations × "
                            f"2^attributes (and {exact.MAX_EXACT_WIDTH} attributes); this table has "
                            f"{len(combos.counts):,} combinations of {combos.width} attributes "
                            f"({size:,}): use solver heuristic", path="transformation.solver")
        try:
            return exact.solve(combos, s.k, weights, s.time_limit, s.alpha)
        except ValueError as e:
            raise SpecError(f"{e}: raise alpha or lower k", path="transformation.alpha") from None
        except TimeoutError as e:
            raise SpecError(f"{e}: raise time_limit or use solver heuristic",
                            path="transformation.time_limit") from None
    if s.heuristic == "sdcmicro":
        return sdcmicro.sdcmicro(combos, s.k, sdcmicro.weighted_order(combos, weights), s.alpha)
    if s.heuristic == "rounds":
        return rounds.rounds(combos, s.k, sdcmicro.weighted_order(combos, weights), s.alpha)
    covered = None
    # with alpha 0 a partial wildcard helps no other row: the cover has nothing over the pattern heuristic
    affordable = cover.affordable(len(combos.counts), combos.width)
    if s.heuristic == "cover" and s.alpha > 0 and affordable:
        covered = cover.row_cover(combos, s.k, weights, s.alpha)
        if covered.achieved_k(combos, s.alpha) >= s.k - 1e-9:
            return covered
    result = greedy.best_of_donors(combos, s.k, weights, s.alpha)
    if covered is not None:  # the row cover got stuck (alpha < 1): the better of the two
        return min((covered, result), key=lambda r: (-min(r.achieved_k(combos, s.alpha), s.k),
                                                     r.cost(combos, weights)))
    if s.heuristic == "cover" and s.alpha > 0:
        result.status = (f"{len(combos.counts):,} combinations of {combos.width} attributes are more than "
                         f"the row cover takes (up to {cover.largest(combos.width):,}): the cheapest-pattern "
                         "heuristic ran instead")
    return result


def decisions(combos: Combos, values: Sequence[tuple[str | None, ...]], result: Suppression
              ) -> tuple[list[Decision], bool]:
    """The decisions of the rows that lose a cell, and whether a combination's rows are split."""
    new = result.new_cells(combos)
    order = np.lexsort((np.arange(len(result.combo)), result.combo))
    out: list[Decision] = []
    split = len(np.unique(result.combo)) < len(result.combo)
    position: dict[int, int] = {}
    for u in order:
        c = int(result.combo[u])
        first = position.get(c, 0) + 1
        last = first + int(result.rows[u]) - 1
        position[c] = last
        if new[u].any():
            out.append(Decision(tuple(values[c]), tuple(bool(x) for x in new[u]), first, last))
    return out, split
