"""Check a microaggregated table with sqlanon's own privacy models, in SQL on a real DuckDB.

The masked table holds the quasi-identifiers replaced by their group means and the confidential
attribute unchanged; the equivalence classes are the distinct mean vectors, as a recipient sees them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from sqlanon.domain.hierarchy import Hierarchy, IntervalHierarchy
from sqlanon.domain.models.base import PrivacyModel
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck, Problem
from sqlanon.sql.nodes import table

MASKED = "masked 'table\"; --"


def group_means(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Every row replaced by the mean of its group (plain numpy)."""
    sums = np.zeros((labels.max() + 1, x.shape[1]))
    np.add.at(sums, labels, x)
    return (sums / np.bincount(labels)[:, None])[labels]


def check_masked(duck, x: np.ndarray, labels: np.ndarray, names: Sequence[str], attribute: str,
                 values: Sequence[object], models: list[PrivacyModel],
                 order: Sequence[object] | None = None) -> NodeCheck:
    """Load the masked table into ``duck`` and check ``models`` on it at level 0."""
    frame = pd.DataFrame(group_means(x, labels), columns=list(names))
    frame[attribute] = list(values)
    duck.con.register("masked_frame", frame)
    duck.con.execute(f'CREATE OR REPLACE TABLE "{MASKED.replace(chr(34), chr(34) * 2)}" AS '
                     "SELECT * FROM masked_frame")
    duck.con.unregister("masked_frame")
    hierarchies = {q: IntervalHierarchy((1,)) for q in names}
    p = Problem(duck, table(MASKED), list(names), hierarchies, [attribute], models,
                value_order={attribute: list(order)} if order is not None else {})
    with Evaluator(p) as ev:
        return ev.check({q: 0 for q in names})


def check_groups(duck, labels: np.ndarray, attribute: str, values: Sequence[object],
                 models: list[PrivacyModel], order: Sequence[object] | None = None,
                 hierarchy: Hierarchy | None = None) -> NodeCheck:
    """Check ``models`` on the partition itself: the group number is the only quasi-identifier."""
    frame = pd.DataFrame({"group": labels, attribute: list(values)})
    duck.con.register("groups_frame", frame)
    duck.con.execute("CREATE OR REPLACE TABLE partition AS SELECT * FROM groups_frame")
    duck.con.unregister("groups_frame")
    p = Problem(duck, table("partition"), ["group"], {"group": IntervalHierarchy((1,))}, [attribute],
                models, value_order={attribute: list(order)} if order is not None else {},
                sensitive_hierarchies={attribute: hierarchy} if hierarchy is not None else {})
    with Evaluator(p) as ev:
        return ev.check({"group": 0})
