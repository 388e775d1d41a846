"""Privacy-aware cuts: a cut is allowed only if both sides satisfy every privacy model of the spec
(LeFevre et al.'s allowable cuts; t-closeness-aware Mondrian as in Li, Li and Venkatasubramanian).

Each wave of candidate cuts is judged with one query per sensitive attribute: the sensitive
histogram of every part every candidate would make (the rows assigned as the cut statement would
assign them, strict, relaxed or by a hierarchy's children), ``GROUP BY`` part and value. The models judge
the sides with their own in-memory forms (:mod:`sqlanon.domain.models`), each side a class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlglot import exp

from sqlanon.domain.models.base import PrivacyModel
from sqlanon.engines.base import Engine
from sqlanon.errors import SpecError
from sqlanon.methods.mondrian import rounds
from sqlanon.methods.mondrian.cuts import Cut
from sqlanon.sql.nodes import alias, col, count_star, internal, lit, table


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

    def numbers(self, attribute: str) -> np.ndarray:
        raise NotImplementedError("numeric sensitive values are not checked on cuts")


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

    def __call__(self, assigned: exp.Select, candidates: dict[int, Cut]) -> set[int]:
        """The partitions whose candidate cut leaves a part that fails a model."""
        if not candidates:
            return set()
        parts = [(pid, child) for pid in sorted(candidates) for child in candidates[pid].children]
        index = {child.pid: i for i, (_, child) in enumerate(parts)}
        first = min(index)
        sizes = np.array([child.rows for _, child in parts], dtype=np.int64)
        histograms: dict[str, np.ndarray] = {}
        rows = internal("rows")
        for j, a in enumerate(self.attributes):
            v = col(sensitive_column(j))
            q = exp.select(col(rounds.PID), alias(v, "v"), alias(count_star(), "n")) \
                .from_(exp.alias_(exp.Subquery(this=assigned.copy()), rows, quoted=True)) \
                .where(exp.GTE(this=col(rounds.PID), expression=lit(first))) \
                .group_by(col(rounds.PID), v.copy())
            got = self.engine.fetch(q)[1]
            self.queries += 1
            h = np.zeros((len(parts), len(self.codes[a])), dtype=np.float64)
            for pid, value, n in got:
                h[index[int(pid)], self.codes[a][value]] += int(n)
            histograms[a] = h
        ok = np.ones(len(parts), dtype=bool)
        sides = Sides(sizes, self.rows, histograms, self.global_counts)
        for model in self.models:
            ok &= self._satisfied(model, sides)
        return {pid for (pid, _), good in zip(parts, ok.tolist()) if not good}
