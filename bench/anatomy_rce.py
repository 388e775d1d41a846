"""Count queries answered from Anatomy and from l-diverse generalization on Adult (Xiao and Tao 2006,
Section 6): the average relative error of each at the same l.

The paper's setting as far as it is stated: the seven quasi-identifiers age, sex, education,
marital-status, race, workclass and native-country, occupation as the sensitive attribute (its
OCC-7), and queries ``SELECT COUNT(*) WHERE A1 IN b1 AND ... AND Aqd IN bqd AND occupation IN bs``
over ``qd`` quasi-identifiers drawn at random. Each ``b`` holds ``ceil(|A| * s^(1/(qd+1)))`` values
of the attribute's domain (the values present in the data): consecutive ages for age, a random set
for the others, so a query selects about a share ``s`` of the rows. Our choices where the paper
leaves them open: ``qd = 3``, ``s = 0.05``, 1,000 queries with a non-zero answer (queries whose
answer is 0 are drawn again), a fixed seed.

Estimates, with the uniformity assumption each publication implies:

* Anatomy: per group, the quasi-identifier rows matching (exact: the QIT is unchanged) times the
  share of the group's sensitive values in ``bs`` (from the ST), summed over the groups.
* Generalization (sqlanon's optimal full-domain search under distinct l-diversity on occupation,
  the ARX Adult hierarchies, no suppression unless ``--limit``): per row, the product over the
  query's attributes of the share of its generalized value's leaves that lie in ``b``, for rows
  whose occupation (unchanged) is in ``bs``.

The relative error is ``|estimate - actual| / actual``; the script prints its mean for each l.
"""

from __future__ import annotations

import argparse
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

QIS = ["age", "sex", "education", "marital-status", "race", "workclass", "native-country"]
SENSITIVE = "occupation"


@dataclass
class Columns:
    """One table's columns as value arrays (object dtype), row-aligned."""

    values: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(next(iter(self.values.values())))


def _read(engine: Any, relation: str) -> Columns:
    names, rows = engine.fetch_script(f'SELECT * FROM "{relation}"')
    columns = list(zip(*rows)) if rows else [() for _ in names]
    return Columns({n: np.asarray(c, dtype=np.int64 if n in ("group_id", "count") else str)
                    for n, c in zip(names, columns)})


def workload(data: Columns, qis: list[str], qd: int, s: float, count: int, seed: int
             ) -> list[dict[str, set[str]]]:
    """``count`` queries with a non-zero answer: attribute -> the set of values it selects."""
    rng = np.random.default_rng(seed)
    domains = {a: sorted(set(data.values[a]), key=lambda v: (len(v), v) if a == "age" else v)
               for a in [*qis, SENSITIVE]}
    out: list[dict[str, set[str]]] = []
    while len(out) < count:
        query: dict[str, set[str]] = {}
        for a in [*rng.choice(qis, size=qd, replace=False), SENSITIVE]:
            domain = domains[str(a)]
            size = min(len(domain), math.ceil(len(domain) * s ** (1 / (qd + 1))))
            if a == "age":
                start = int(rng.integers(len(domain) - size + 1))
                query[str(a)] = set(domain[start:start + size])
            else:
                query[str(a)] = {domain[i] for i in rng.choice(len(domain), size=size, replace=False)}
        if actual(data, query) > 0:
            out.append(query)
    return out


def _matches(values: np.ndarray, chosen: set[str]) -> np.ndarray:
    return np.isin(values, np.asarray(sorted(chosen), dtype=str))


def actual(data: Columns, query: dict[str, set[str]]) -> int:
    mask = np.ones(len(data), bool)
    for a, chosen in query.items():
        mask &= _matches(data.values[a], chosen)
    return int(mask.sum())


def anatomy_estimate(qit: Columns, st: Columns, query: dict[str, set[str]]) -> float:
    groups = qit.values["group_id"]
    matching = np.ones(len(qit), float)
    for a, chosen in query.items():
        if a != SENSITIVE:
            matching *= _matches(qit.values[a], chosen)
    per_group = np.bincount(groups, weights=matching)
    st_groups = st.values["group_id"]
    counts = st.values["count"].astype(float)
    size = np.bincount(st_groups, weights=counts, minlength=len(per_group))
    selected = np.bincount(st_groups, weights=counts * _matches(st.values[SENSITIVE], query[SENSITIVE]),
                           minlength=len(per_group))
    share = np.divide(selected, size, out=np.zeros_like(size), where=size > 0)
    return float((per_group * share[:len(per_group)]).sum())


def generalization_estimate(released: Columns, leaves: dict[str, dict[str, set[str]]],
                            query: dict[str, set[str]]) -> float:
    weight = np.ones(len(released), float)
    for a, chosen in query.items():
        if a == SENSITIVE:
            weight *= _matches(released.values[a], chosen)
            continue
        labels = sorted(leaves[a])
        share = np.array([len(leaves[a][x] & chosen) / len(leaves[a][x]) for x in labels])
        values = released.values[a]
        at = np.searchsorted(np.asarray(labels, dtype=str), values)
        weight *= share[np.minimum(at, len(labels) - 1)]
    return float(weight.sum())


def level_leaves(path: Path, level: int) -> dict[str, set[str]]:
    """A hierarchy CSV's labels at ``level`` -> the original values under each."""
    out: dict[str, set[str]] = {}
    for line in path.read_text().splitlines():
        cells = line.split(";")
        if cells and cells[0]:
            out.setdefault(cells[level], set()).add(cells[0])
    return out


def run(adult_dir: Path, ls: list[int], *, qd: int = 3, s: float = 0.05, queries: int = 1000,
        seed: int = 2006, limit: float = 0.0, rows: int | None = None) -> list[dict[str, float]]:
    """Mean relative errors per l: ``{"l", "anatomy", "generalization", "levels"}``."""
    from sqlanon import api
    from sqlanon.engines.duckdb import DuckDBEngine
    from sqlanon.methods.rng import ReproducibleNoiseWarning
    from sqlanon.spec import spec_from_dict

    engine = DuckDBEngine()
    head = f"LIMIT {int(rows)}" if rows else ""
    columns = ", ".join(f'"{c}"' for c in [*QIS, SENSITIVE])
    engine.con.execute(f"CREATE TABLE adult AS SELECT {columns} "
                       f"FROM read_csv(?, delim=';', header=true, all_varchar=true) {head}",
                       [str(adult_dir / "adult.csv")])
    data = _read(engine, "adult")
    work = workload(data, QIS, qd, s, queries, seed)
    truth = np.array([actual(data, q) for q in work], float)
    results = []
    for l in ls:  # noqa: E741 -- the paper's l
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReproducibleNoiseWarning)
            api.apply(spec_from_dict({
                "source": {"table": "adult"},
                "attributes": {**{q: "quasi_identifier" for q in QIS}, SENSITIVE: "sensitive"},
                "transformation": {"method": "anatomy", "l": l, "seed": seed},
                "output": {"name": f"qit_{l}", "replace": True}}), engine=engine)
        qit, st = _read(engine, f"qit_{l}"), _read(engine, f"qit_{l}__sensitive")
        report: Any = api.anonymize(spec_from_dict({
            "source": {"table": "adult"},
            "attributes": {**{q: {"role": "quasi_identifier",
                                  "hierarchy": {"csv": str(adult_dir / f"adult_hierarchy_{q}.csv")}}
                              for q in QIS}, SENSITIVE: "sensitive"},
            "privacy": [{"l_diversity": {"attribute": SENSITIVE, "l": l}}],
            "transformation": {"suppression_limit": limit},
            "output": {"name": f"gen_{l}", "replace": True}}), engine=engine)
        levels = report.as_dict()["transformation"]["levels"]
        leaves = {q: level_leaves(adult_dir / f"adult_hierarchy_{q}.csv", levels.get(q, 0)) for q in QIS}
        released = _read(engine, f"gen_{l}")
        anatomy = np.array([anatomy_estimate(qit, st, q) for q in work])
        general = np.array([generalization_estimate(released, leaves, q) for q in work])
        results.append({"l": l, "anatomy": float(np.mean(np.abs(anatomy - truth) / truth)),
                        "generalization": float(np.mean(np.abs(general - truth) / truth)),
                        "levels": levels})
    engine.close()
    return results


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    p.add_argument("--l", type=int, nargs="+", default=[2, 3, 4, 5, 6, 7])
    p.add_argument("--qd", type=int, default=3)
    p.add_argument("--s", type=float, default=0.05)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--limit", type=float, default=0.0, help="generalization's suppression limit")
    a = p.parse_args()
    print(f"Adult, QIs {', '.join(QIS)}, sensitive {SENSITIVE}; {a.queries} queries, qd = {a.qd}, "
          f"s = {a.s}; average relative error of COUNT(*)")
    print(f"{'l':>3}  {'anatomy':>9}  {'generalization':>14}  generalization levels")
    for r in run(Path(a.adult_dir), a.l, qd=a.qd, s=a.s, queries=a.queries, limit=a.limit):
        print(f"{r['l']:>3}  {r['anatomy']:>9.1%}  {r['generalization']:>14.1%}  {r['levels']}")


if __name__ == "__main__":
    main()
