"""Grow Adult to N rows deterministically, keeping each attribute's distribution.

Row ``r`` (0 ≤ r < N) takes its attributes from two source rows of Adult (n = 30,162 rows, in file
order, numbered 0..n−1), with p = 2^31 − 1:

* ``sex, age, race, marital-status, education``        from row ``r mod n``;
* ``native-country, workclass, occupation, salary-class`` from row ``((48271 · r + 11) mod p) mod n``
  (the Park–Miller generator's step: a permutation of 0..p−1, so the pairing does not repeat with period n).

Each block is a slice of one Adult row, so every marginal distribution (and the correlations inside a
block) is Adult's, while pairing rows makes the number of distinct quasi-identifier combinations grow
with N. No randomness: the same N gives the same table on every machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

PRIME = 2_147_483_647  # 2^31 − 1
BLOCKS = (
    (("sex", "age", "race", "marital-status", "education"), 1, 0),
    (("native-country", "workclass", "occupation", "salary-class"), 48271, 11),
)


def grow(con: duckdb.DuckDBPyConnection, adult_csv: str, rows: int, name: str = "adult_big") -> None:
    con.execute("CREATE OR REPLACE TEMP TABLE adult_src AS SELECT row_number() OVER () - 1 AS rid, * "
                "FROM read_csv(?, delim=';', header=true, all_varchar=true)", [adult_csv])
    n = con.execute("SELECT count(*) FROM adult_src").fetchone()[0]
    selects, joins = [], []
    for i, (cols, mult, off) in enumerate(BLOCKS):
        selects += [f'b{i}."{c}"' for c in cols]
        joins.append(f"JOIN adult_src b{i} ON b{i}.rid = ((r.range * {mult} + {off}) % {PRIME}) % {n}")
    con.execute(f'CREATE OR REPLACE TABLE "{name}" AS SELECT {", ".join(selects)} '
                f"FROM range({int(rows)}) r {' '.join(joins)} ORDER BY r.range")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--database", default="bench/adult_big.duckdb")
    p.add_argument("--adult", default=str(Path(__file__).resolve().parents[2] / "shared/data/adult/adult.csv"))
    a = p.parse_args()
    con = duckdb.connect(a.database)
    grow(con, a.adult, a.rows)
    print(con.execute('SELECT count(*), count(DISTINCT (sex, age, race, "marital-status", education, '
                      '"native-country", workclass, occupation, "salary-class")) FROM adult_big').fetchone())
    return 0


if __name__ == "__main__":
    sys.exit(main())
