"""Grow Adult to N rows deterministically, keeping each attribute's distribution.

Row ``r`` (0 ≤ r < N) takes its attributes in blocks, each block from one source row of Adult
(n = 30,162 rows, in file order, numbered 0..n−1), with p = 2^31 − 1. Two schemes:

``pairs`` (the default; ``bench/check_bench.py``):

* ``sex, age, race, marital-status, education``        from row ``r mod n``;
* ``native-country, workclass, occupation, salary-class`` from row ``((48271 · r + 11) mod p) mod n``.

  10M rows have 797,941 distinct combinations of the 9 attributes, but the scheme saturates: it can
  only pair the 6,072 distinct first blocks with the 1,015 distinct second blocks, and while
  48271 · r < p the partner of ``r + n`` equals the partner of ``r`` (the step is linear mod n), so
  100M rows reach far fewer than one distinct combination per 20 rows.

``quads`` (``bench/search_big.py``; at least one distinct combination per 20 rows up to 100M rows):

* ``sex, age, race``                        from row ``r mod n``;
* ``marital-status, education``             from row ``((742938285 · r + 1) mod p) mod n``;
* ``workclass, occupation, salary-class``   from row ``((950706376 · r + 2) mod p) mod n``;
* ``native-country``                        from row ``((1226874159 · r + 3) mod p) mod n``.

  The multipliers are primitive roots modulo p with good spectral-test figures (Fishman GS, Moore LR.
  An exhaustive analysis of multiplicative congruential random number generators with modulus
  2^31 − 1. SIAM J Sci Stat Comput 1986;7(1):24-45), so each block's source row is a permutation of
  r mod p that jumps from one step to the next; 528 · 101 · 154 · 41 ≈ 337M combinations are possible.

Each block is a slice of one Adult row, so every marginal distribution (and the correlations inside a
block) is Adult's, while pairing rows makes the number of distinct quasi-identifier combinations grow
with N. No randomness: the same N and scheme give the same table on every machine (rows are stored in
order of r).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

PRIME = 2_147_483_647  # 2^31 − 1
SCHEMES = {
    "pairs": (
        (("sex", "age", "race", "marital-status", "education"), 1, 0),
        (("native-country", "workclass", "occupation", "salary-class"), 48271, 11),
    ),
    "quads": (
        (("sex", "age", "race"), 1, 0),
        (("marital-status", "education"), 742_938_285, 1),
        (("workclass", "occupation", "salary-class"), 950_706_376, 2),
        (("native-country",), 1_226_874_159, 3),
    ),
}
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "occupation", "salary-class"]
"""The generated table's columns, in Adult's order."""


def load_source(con: duckdb.DuckDBPyConnection, adult_csv: str) -> int:
    """Temporary table ``adult_src`` (Adult's rows numbered ``rid`` in file order); its row count."""
    con.execute("CREATE OR REPLACE TEMP TABLE adult_src AS SELECT row_number() OVER () - 1 AS rid, * "
                "FROM read_csv(?, delim=';', header=true, all_varchar=true)", [adult_csv])
    return con.execute("SELECT count(*) FROM adult_src").fetchall()[0][0]


def grown_rows(n: int, start: int, stop: int, scheme: str = "pairs", row: str | None = None) -> str:
    """The query of rows ``start`` ≤ r < ``stop`` of the grown table (from ``adult_src`` of ``n``
    rows), in order of r; ``row``: also r itself, as that column."""
    source = {}
    joins = []
    for i, (cols, mult, off) in enumerate(SCHEMES[scheme]):
        source.update({c: f'b{i}."{c}"' for c in cols})
        joins.append(f"JOIN adult_src b{i} ON b{i}.rid = ((r.range * {mult} + {off}) % {PRIME}) % {n}")
    selects = [source[c] for c in QIS] if scheme != "pairs" else list(source.values())
    if row is not None:
        selects.insert(0, f'r.range AS "{row}"')
    return (f"SELECT {', '.join(selects)} FROM range({int(start)}, {int(stop)}) r {' '.join(joins)} "
            f"ORDER BY r.range")


def grow(con: duckdb.DuckDBPyConnection, adult_csv: str, rows: int, name: str = "adult_big",
         scheme: str = "pairs") -> None:
    """Create table ``name`` with ``rows`` rows grown from ``adult_csv`` by ``scheme``."""
    n = load_source(con, adult_csv)
    con.execute(f'CREATE OR REPLACE TABLE "{name}" AS {grown_rows(n, 0, rows, scheme)}')


def ensure_grown(con: duckdb.DuckDBPyConnection, adult_csv: str, rows: int, name: str = "adult_big",
                 scheme: str = "pairs") -> bool:
    """Grow table ``name`` (:func:`grow`) unless it already holds ``rows`` rows; True when grown."""
    have = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]
                       ).fetchone()[0]
    if have and con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] == rows:
        return False
    grow(con, adult_csv, rows, name, scheme)
    return True


def distinct_combinations(con: duckdb.DuckDBPyConnection, name: str = "adult_big") -> tuple[int, int]:
    """Rows and distinct combinations of the 9 attributes in table ``name``."""
    cols = ", ".join(f'"{c}"' for c in QIS)
    return con.execute(f'SELECT (SELECT count(*) FROM "{name}"), count(*) FROM '
                       f'(SELECT DISTINCT {cols} FROM "{name}")').fetchone()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--scheme", choices=sorted(SCHEMES), default="pairs")
    p.add_argument("--database", default="bench/adult_big.duckdb")
    p.add_argument("--adult",
                   default=str(Path(__file__).resolve().parents[2] / "shared/data/adult/adult.csv"))
    a = p.parse_args()
    con = duckdb.connect(a.database)
    grow(con, a.adult, a.rows, scheme=a.scheme)
    rows, distinct = distinct_combinations(con)
    print(f"{rows:,} rows, {distinct:,} distinct combinations (one per {rows / distinct:.1f} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
