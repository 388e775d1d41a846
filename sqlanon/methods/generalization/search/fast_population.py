"""A population table's records per class of a node, in memory (k-map's population form).

The population's frequency table at the search's quasi-identifiers is read once (one GROUP BY of the
hierarchy keys) and coded with the table's hierarchies, as the search codes the table's rows. Each
node then groups the table's and the population's rows together, so that a table class and the
population's records in it get the same class number, and sums the population's records per class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlglot import exp

from sqlanon.domain.factorize import factorize_text
from sqlanon.domain.models.base import Statistic
from sqlanon.errors import UnsupportedError
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.search.fast_load import objects
from sqlanon.methods.generalization.search.grouping import Grouping
from sqlanon.sql.nodes import alias, col, count_star, table


class PopulationClasses:
    """One population table grouped alongside the table's frequency rows.

    Args:
        ev: the problem's evaluator (its hierarchies code the population's values).
        relation: the population table.
        codes: per QI and level, the label code of each of the table's frequency rows.
        radix: per QI and level, the number of labels.
        rows: the table's frequency rows.

    Raises:
        UnsupportedError: a population value is not a leaf of its hierarchy (the SQL check then
            generalizes the population in the database).
    """

    def __init__(self, ev: Evaluator, relation: str, codes: list[list[np.ndarray]],
                 radix: list[list[int]], rows: int) -> None:
        p = ev.p
        names = [f"q{i}" for i in range(len(p.qis))]
        keys = [alias(p.hierarchies[a].key(col(a)), name) for a, name in zip(p.qis, names)]
        query = exp.select(*keys, alias(count_star(), "n")).from_(table(relation))
        if keys:
            query = query.group_by(*[k.this.copy() for k in keys])
        with ev.engine.purpose(f"k-map: the population {relation} per quasi-identifier tuple"):
            data = ev.engine.fetch_numpy(query)
        self.records = np.asarray(data["n"], dtype=np.float64)
        combined = []
        for i, a in enumerate(p.qis):
            leaf, uniques = factorize_text(objects(data[names[i]]))
            table_ = ev.hierarchy_table(a)
            known = table_.leaves
            missing = [u for u in uniques if u not in known]
            if missing:
                raise UnsupportedError(f"the population {relation!r} has values of {a!r} its "
                                       f"hierarchy lacks ({', '.join(map(repr, missing[:3]))}); k-map "
                                       "is checked in SQL")
            defining = table_.leaf_rows(list(uniques))
            levels = []
            for level, own in enumerate(codes[i]):
                per_leaf = table_.level_codes(level)[0][defining].astype(np.int32)
                levels.append(np.concatenate([own, per_leaf[leaf]]))
            combined.append(levels)
        self.rows = rows
        self.grouping = Grouping(combined, radix, rows + len(self.records))

    def counts(self, node: Sequence[int], rep: np.ndarray) -> np.ndarray:
        """The population's records in each class of ``node``, the classes given by one of the
        table's frequency rows each (``rep``)."""
        inv, k = self.grouping.group(node)
        per_class = np.bincount(inv[self.rows:], weights=self.records, minlength=k)
        return per_class[inv[rep]].astype(np.int64)


def population_classes(ev: Evaluator, statistics: Sequence[Statistic], codes: list[list[np.ndarray]],
                       radix: list[list[int]], rows: int) -> dict[str, PopulationClasses]:
    """The populations the statistics read in memory, each loaded once, by table name."""
    wanted = {s.population for s in statistics  # type: ignore[attr-defined]
              if "population" in s.memory_inputs}
    return {name: PopulationClasses(ev, name, codes, radix, rows) for name in sorted(wanted)}
