"""Privacy-aware cuts: a cut is allowed only if both sides satisfy every privacy model of the spec
(LeFevre et al.'s allowable cuts; t-closeness-aware Mondrian as in Li, Li and Venkatasubramanian).

Each wave of candidate cuts is judged with one query per sensitive attribute: the sensitive
histogram of every side of every candidate, ``GROUP BY`` partition, side and value. The models judge
the sides with their own in-memory forms (:mod:`sqlanon.domain.models`), each side a class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.domain.models.base import PrivacyModel
from sqlanon.engines.base import Engine, internal_name
from sqlanon.errors import SpecError
from sqlanon.methods.mondrian import rounds
from sqlanon.methods.mondrian.cuts import Cut
from sqlanon.sql.nodes import alias, col, count_star, internal, table


def sensitive_column(j: int) -> str:
    return internal(f"sens{j}")


class Sides:
    """The sides of candidate cuts as classes (the models' :class:`ClassTable`)."""

    def __init__(self, sizes: np.ndarray, n: int, histograms: dict[str, np.ndarray],
                 global_counts: dict[str, np.ndarray]) -> None:
        self.sizes = sizes
        self.n = n
        self._histograms = histograms
        self._global = global_counts

    def histogram(self, attribute: str) -> np.ndarray:
        return self._histograms[attribute]

    def global_counts(self, attribute: str) -> np.ndarray:
        return self._global[attribute]

    def tree(self, attribute: str) -> list[np.ndarray]:
        raise NotImplementedError("hierarchical distances are not checked on cuts")


def _ordered(values: Sequence[Any], order: Sequence[Any] | None) -> list[Any]:
    if order:
        rank = {str(v): i for i, v in enumerate(order)}
        return sorted(values, key=lambda v: rank.get(str(v), len(rank)))
    return sorted(values, key=lambda v: (str(type(v)), v))


class CutJudge:
    """Judges a round's candidate cuts against the spec's models (beyond k)."""

    def __init__(self, engine: Engine, models: Sequence[PrivacyModel], attributes: Sequence[str],
                 orders: dict[str, Sequence[Any] | None], n_attributes: int) -> None:
        self.engine = engine
        self.models = list(models)
        self.attributes = list(attributes)
        self.orders = orders
        self.n_attributes = n_attributes
        self.codes: dict[str, dict[Any, int]] = {}
        self.global_counts: dict[str, np.ndarray] = {}
        self.rows = 0
        self.queries = 0

    def prepare(self, work: str) -> None:
        """The sensitive values' order and global counts; refuses a table that fails a model as a whole
        (no partitioning can then satisfy it)."""
        for j, a in enumerate(self.attributes):
            c = sensitive_column(j)
            query = exp.select(col(c), alias(count_star(), "n")).from_(table(work)).group_by(col(c))
            got = self.engine.fetch(query)[1]
            self.queries += 1
            values = _ordered([v for v, _ in got], self.orders.get(a))
            self.codes[a] = {v: i for i, v in enumerate(values)}
            counts = np.zeros(len(values), dtype=np.int64)
            for v, n in got:
                counts[self.codes[a][v]] = int(n)
            self.global_counts[a] = counts
            self.rows = int(counts.sum())
        whole = Sides(np.array([self.rows], dtype=np.int64), self.rows,
                      {a: self.global_counts[a][None, :].astype(np.float64) for a in self.attributes},
                      self.global_counts)
        for model in self.models:
            if not bool(self._satisfied(model, whole)[0]):
                raise SpecError(f"the whole table does not satisfy {model}, so no partition of it can",
                                path="privacy")

    def _satisfied(self, model: PrivacyModel, sides: Sides) -> np.ndarray:
        stats = {s: s.in_memory(sides) for s in model.statistics()}
        return np.asarray(model.satisfied_in_memory(stats), dtype=bool)

    def __call__(self, work: str, candidates: dict[int, Cut]) -> set[int]:
        """The partitions whose candidate cut leaves a side that fails a model."""
        if not candidates:
            return set()
        pids = sorted(candidates)
        index = {pid: i for i, pid in enumerate(pids)}
        for cut in candidates.values():
            if cut.child_of_value is not None:
                raise SpecError("privacy models beyond k are checked on numeric and coded cuts only",
                                path="privacy")
        name = internal_name("mondrian_candidates")
        self.engine.create_table_from_arrow(name, pa.table({
            rounds.PID: pa.array(pids, pa.int64()),
            rounds.ATTRIBUTE: pa.array([candidates[p].attribute for p in pids], pa.int64()),
            rounds.S: pa.array([candidates[p].s for p in pids], pa.float64())}), temporary=True)
        self.queries += 1
        sizes = np.zeros(2 * len(pids), dtype=np.int64)
        for i, pid in enumerate(pids):
            sizes[2 * i] = candidates[pid].children[0].rows
            sizes[2 * i + 1] = candidates[pid].children[1].rows
        histograms: dict[str, np.ndarray] = {}
        try:
            left = exp.LTE(this=rounds.value_of_cut(self.n_attributes), expression=col(rounds.S, "c"))
            side = exp.Case(ifs=[exp.If(this=left, true=exp.Literal.number(0))],
                            default=exp.Literal.number(1))
            for j, a in enumerate(self.attributes):
                v = col(sensitive_column(j), "w")
                q = exp.select(col(rounds.PID, "c"), alias(side.copy(), "side"), alias(v, "v"),
                               alias(count_star(), "n")) \
                    .from_(exp.alias_(table(work), "w", quoted=True)) \
                    .join(exp.alias_(table(name), "c", quoted=True), join_type="inner",
                          on=exp.EQ(this=col(rounds.PID, "w"), expression=col(rounds.PID, "c"))) \
                    .group_by(col(rounds.PID, "c"), side.copy(), v.copy())
                rows = self.engine.fetch(q)[1]
                self.queries += 1
                h = np.zeros((2 * len(pids), len(self.codes[a])), dtype=np.float64)
                for pid, s, value, n in rows:
                    h[2 * index[int(pid)] + int(s), self.codes[a][value]] += int(n)
                histograms[a] = h
        finally:
            self.engine.drop(name)
        sides = Sides(sizes, self.rows, histograms, self.global_counts)
        ok = np.ones(len(sizes), dtype=bool)
        for model in self.models:
            ok &= self._satisfied(model, sides)
        both = ok[0::2] & ok[1::2]
        return {pid for pid, good in zip(pids, both.tolist()) if not good}
