"""SIGKILL soak: kill sqlanon at random moments of DP releases and in-place writes, then check what
the database holds. Outside the unit suite (a few minutes).

For each engine (DuckDB file, PostgreSQL: a throwaway server started as tests/pg_server.py does) and
each kind, cases are run in turn in a child process, each on a fresh table ``kill_rows(rid, val,
cat)`` (``val = rid * 10``, ``cat`` = ``'a'``/``'b'`` by parity). The child says when it is about to
call ``sqlanon.api.apply``; the parent waits a random time between 0 and 1.3 times the case's
measured duration (one unkilled run first, which must pass the same checks) and SIGKILLs it. On
PostgreSQL the parent then waits until the server has ended the killed client's backend.

Kinds and what must hold after every kill:

``dp``
    laplace in place and into a table (DuckDB: the parallel block writer), gaussian in place,
    randomized_response into a table (the joined writer), dp_microaggregation into a table, each
    charged to the ledger dataset ``people``. Either the ledger shows the spend, or no relation of
    the database (every schema, every table and view) holds a noisy row: a ``val`` other than
    ``rid * 10``, a ``cat`` other than the original, or any row of a relation with ``val``/``cat``
    but no ``rid``. The source of an in-place release is the original or complete.
``in_place``
    generalization, microaggregation (MDAV, a temporary group table) and noise (gaussian, no ledger)
    in place. The table is either the original, intact and complete, or the new one, complete; no
    relation other than the table, the ledger and staging relations exists.

After the checks, leftover staging relations are removed as the next run would
(:func:`sqlanon.engines.staging.remove_leftovers`), and none may remain. Prints the counts; exits 1 on any
violation.

    python -m bench.kill_soak --kills 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LEDGER = ("sqlanon_privacy_budget", "sqlanon_privacy_ledger")

CHILD = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from sqlanon import api
from sqlanon.spec.load import spec_from_dict
engine_kind, target, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if engine_kind == "duckdb":
    from sqlanon.engines.duckdb import DuckDBEngine
    engine = DuckDBEngine(target)
    if sys.argv[4] == "closes":  # as a run that opened the file: each commit checkpoints
        engine.closes_after_run()
    pid = 0
else:
    from sqlanon.engines.postgres import PostgresEngine
    engine = PostgresEngine(target)
    pid = engine.fetch_script("SELECT pg_backend_pid()")[1][0][0]
print(f"go {pid}", flush=True)
api.apply(spec_from_dict(spec), engine=engine)
print("done", flush=True)
"""

BOUNDS = {"val": [0, 1e9]}
DP_CASES: dict[str, tuple[dict[str, Any], dict[str, Any], float]] = {
    # name: (transformation, output, epsilon charged under substitution)
    "laplace_in_place": ({"mechanism": "laplace", "attributes": ["val"], "epsilon": 0.5,
                          "sensitivity": 1, "bounds": BOUNDS}, {"mode": "in_place"}, 0.5),
    "laplace_table": ({"mechanism": "laplace", "attributes": ["val"], "epsilon": 0.5,
                       "sensitivity": 1, "bounds": BOUNDS},
                      {"mode": "table", "name": "released"}, 0.5),
    "gaussian_in_place": ({"mechanism": "gaussian", "attributes": ["val"], "epsilon": 0.5,
                           "delta": 1e-6, "sensitivity": 1}, {"mode": "in_place"}, 0.5),
    "randomized_response_table": ({"mechanism": "randomized_response", "attributes": ["cat"],
                                   "epsilon": 0.5, "categories": {"cat": ["a", "b"]}},
                                  {"mode": "table", "name": "released"}, 0.5),
    "dp_microaggregation_table": ({"mechanism": "dp_microaggregation", "attributes": ["val"],
                                   "k": 5, "epsilon": 0.5, "bounds": BOUNDS},
                                  {"mode": "table", "name": "released"}, 0.5),
}
IN_PLACE_CASES = ("generalization", "microaggregation", "noise")


@dataclass
class Tally:
    kills: int = 0
    finished_first: int = 0
    violations: list[str] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)
    staging_removed: int = 0


def spec_for(kind: str, case: str, rows: int) -> dict[str, Any]:
    attributes: dict[str, Any] = {"rid": {"role": "insensitive"}, "val": {"role": "sensitive"},
                                  "cat": {"role": "sensitive"}}
    if kind == "dp":
        transformation, output, _ = DP_CASES[case]
        return {"source": {"table": "kill_rows"}, "attributes": attributes,
                "transformation": {"method": "noise", **transformation, "dataset": "people",
                                   "budget_epsilon": 1000, "budget_delta": 0.001},
                "output": output}
    if case == "generalization":
        attributes["val"] = {"role": "quasi_identifier",
                             "hierarchy": {"intervals": {"widths": [1000, 100_000]}}}
        return {"source": {"table": "kill_rows"}, "attributes": attributes,
                "privacy": [{"k_anonymity": {"k": 2}}], "transformation": {"levels": {"val": 1}},
                "output": {"mode": "in_place"}}
    if case == "microaggregation":
        attributes["val"] = {"role": "quasi_identifier"}
        return {"source": {"table": "kill_rows"}, "attributes": attributes,
                "transformation": {"method": "microaggregation", "algorithm": "mdav", "k": 5,
                                   "key": "rid"},
                "output": {"mode": "in_place"}}
    return {"source": {"table": "kill_rows"}, "attributes": attributes,
            "transformation": {"method": "noise", "mechanism": "gaussian", "attributes": ["val"],
                               "epsilon": 1, "delta": 1e-6, "sensitivity": 1},
            "output": {"mode": "in_place"}}


# -- engines -----------------------------------------------------------------------------------------

class Duck:
    name = "duckdb"

    def __init__(self, folder: Path) -> None:
        self.path = folder / "soak.duckdb"

    def target(self) -> str:
        return str(self.path)

    def reset(self, rows: int) -> None:
        for p in (self.path, Path(str(self.path) + ".wal")):
            p.unlink(missing_ok=True)
        with self.connect() as e:
            e.execute_script(f"CREATE TABLE kill_rows AS SELECT i AS rid, (i * 10)::DOUBLE AS val, "
                      f"CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS cat FROM range({int(rows)}) r(i)")

    def connect(self):  # noqa: ANN201
        from sqlanon.engines.duckdb import DuckDBEngine

        deadline = time.monotonic() + 30
        while True:  # the killed process's file lock goes with it; retry briefly
            try:
                return DuckDBEngine(str(self.path))
            except Exception:  # noqa: BLE001
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def relations(self, e) -> list[tuple[str, str, dict[str, str]]]:  # noqa: ANN001
        rows = e.fetch_script("SELECT table_schema, table_name, column_name, data_type FROM "
                       "information_schema.columns WHERE table_catalog = current_database() "
                       "ORDER BY 1, 2, ordinal_position")[1]
        return _grouped(rows)

    def wait_gone(self, e, pid: int) -> None:  # noqa: ANN001
        pass

    def close(self) -> None:
        pass


class Postgres:
    name = "postgres"

    def __init__(self, folder: Path) -> None:
        sys.path.insert(0, str(ROOT))
        from tests.pg_server import PostgresServer

        self.server = PostgresServer().start()
        self.dsn = f"{self.server.dsn} options='-c search_path=soak'"

    def target(self) -> str:
        return self.dsn

    def reset(self, rows: int) -> None:
        import psycopg

        with psycopg.connect(self.server.dsn, autocommit=True) as con:
            schemas = [r[0] for r in con.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
                "AND nspname NOT IN ('information_schema', 'public')").fetchall()]
            for s in schemas:
                con.execute(f'DROP SCHEMA "{s}" CASCADE')
            for (t,) in con.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                                    ).fetchall():
                con.execute(f'DROP TABLE public."{t}" CASCADE')
            con.execute("CREATE SCHEMA soak")
            con.execute("CREATE TABLE soak.kill_rows AS SELECT i::bigint AS rid, "
                        "(i * 10)::double precision AS val, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' "
                        f"END::text AS cat FROM generate_series(0, {int(rows) - 1}) i")

    def connect(self):  # noqa: ANN201
        from sqlanon.engines.postgres import PostgresEngine

        return PostgresEngine(self.dsn)

    def relations(self, e) -> list[tuple[str, str, dict[str, str]]]:  # noqa: ANN001
        rows = e.fetch_script("SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, NULL) "
                       "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                       "JOIN pg_attribute a ON a.attrelid = c.oid WHERE c.relkind IN "
                       "('r', 'v', 'm', 'p', 'f') AND a.attnum > 0 AND NOT a.attisdropped AND "
                       "n.nspname NOT IN ('pg_catalog', 'information_schema') AND "
                       "n.nspname NOT LIKE 'pg\\_toast%' ORDER BY 1, 2, a.attnum")[1]
        return _grouped(rows)

    def wait_gone(self, e, pid: int) -> None:  # noqa: ANN001
        deadline = time.monotonic() + 300
        while e.fetch_script(f"SELECT count(*) FROM pg_stat_activity WHERE pid = {int(pid)}")[1][0][0]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the killed client's backend {pid} is still running")
            time.sleep(0.05)

    def close(self) -> None:
        self.server.stop()


def _grouped(rows: list[tuple[Any, ...]]) -> list[tuple[str, str, dict[str, str]]]:
    out: dict[tuple[str, str], dict[str, str]] = {}
    for schema, name, column, kind in rows:
        out.setdefault((str(schema), str(name)), {})[str(column)] = str(kind).lower()
    return [(s, n, c) for (s, n), c in out.items()]


# -- checks ------------------------------------------------------------------------------------------

def _q(schema: str, name: str) -> str:
    from sqlanon.sql.nodes import table

    return table(name, schema).sql("postgres")  # quoted by sqlglot; both engines read this form


def noisy_rows(db, e) -> int:  # noqa: ANN001
    """Rows, anywhere in the database, that are not the original's (see the module's docstring)."""
    total = 0
    for schema, name, columns in db.relations(e):
        if name in LEDGER:
            continue
        checks = []
        if "val" in columns:
            numeric = not any(t in columns["val"] for t in ("char", "text"))
            checks.append("val IS DISTINCT FROM rid * 10" if "rid" in columns and numeric else "true")
        if "cat" in columns:
            checks.append("cat IS DISTINCT FROM CASE WHEN rid % 2 = 0 THEN 'a' ELSE 'b' END"
                          if "rid" in columns else "true")
        if checks:
            total += e.fetch_script(f"SELECT count(*) FROM {_q(schema, name)} WHERE "
                             + " OR ".join(f"({c})" for c in checks))[1][0][0]
    return total


def source_state(db, e, rows: int) -> str:  # noqa: ANN001
    """``original`` (every row as it was), ``new`` (every row there, some changed), or what is
    wrong with the table."""
    found = [c for s, n, c in db.relations(e) if n == "kill_rows" and s in ("main", "soak")]
    if len(found) != 1:
        return "missing"
    columns = found[0]
    if set(columns) != {"rid", "val", "cat"}:
        return f"columns {sorted(columns)}"
    count = e.fetch_script("SELECT count(*), count(DISTINCT rid), min(rid), max(rid) FROM kill_rows")[1][0]
    if tuple(count) != (rows, rows, 0, rows - 1):
        return f"partial {tuple(count)}"
    numeric = not any(t in columns["val"] for t in ("char", "text"))
    if not numeric:
        nulls = e.fetch_script("SELECT count(*) FROM kill_rows WHERE val IS NULL")[1][0][0]
        return "new" if nulls == 0 else f"partial labels ({nulls} NULL)"
    same = e.fetch_script("SELECT count(*) FROM kill_rows WHERE val = rid * 10 AND "
                   "cat = CASE WHEN rid % 2 = 0 THEN 'a' ELSE 'b' END")[1][0][0]
    return "original" if same == rows else "new"


def spent(e) -> float:  # noqa: ANN001
    from sqlanon.methods.dp.budget import PrivacyLedger

    if not e.relation_exists(LEDGER[0]):
        return 0.0
    state = PrivacyLedger(e).state("people")
    return 0.0 if state is None else float(state.spent.epsilon)


def check(db, kind: str, case: str, rows: int, killed: bool, tally: Tally) -> None:  # noqa: ANN001
    from sqlanon.engines.staging import is_staging, remove_leftovers

    e = db.connect()
    try:
        where = f"{db.name} {kind} {case} ({'killed' if killed else 'finished'})"
        others = [(s, n) for s, n, _ in db.relations(e)
                  if n not in LEDGER and n not in ("kill_rows", "released") and not is_staging(n)]
        if others:
            tally.violations.append(f"{where}: stray relations {others}")
        state = source_state(db, e, rows)
        if kind == "dp":
            charge = DP_CASES[case][2]
            paid, noisy = spent(e), noisy_rows(db, e)
            if paid < charge and noisy:
                tally.violations.append(f"{where}: {noisy} noisy rows, spent {paid}")
            if killed:
                tally.outcomes["killed: charged" if paid >= charge else "killed: not charged"] += 1
                tally.outcomes["killed: noisy rows present" if noisy else "killed: no noisy row"] += 1
            if state not in ("original", "new") or (state == "new" and
                                                    DP_CASES[case][1]["mode"] != "in_place"):
                tally.violations.append(f"{where}: source {state}")
            if not killed and not (paid >= charge and noisy):
                tally.violations.append(f"{where}: a finished release must be charged and written")
        else:
            if state not in ("original", "new"):
                tally.violations.append(f"{where}: table {state}")
            if not killed and state != "new":
                tally.violations.append(f"{where}: a finished run must leave the new table")
        if killed:
            tally.outcomes[f"killed: table {state}"] += 1
        removed = remove_leftovers(e)
        tally.staging_removed += len(removed)
        if killed and removed:
            tally.outcomes["killed: staging left, removed by the next run"] += 1
        left = [n for _, n, _ in db.relations(e) if is_staging(n)]
        if left:
            tally.violations.append(f"{where}: staging left after the next run's removal: {left}")
        if kind == "dp" and spent(e) < DP_CASES[case][2] and noisy_rows(db, e):
            tally.violations.append(f"{where}: uncharged noisy rows after the removal")
    finally:
        e.close()


# -- runs --------------------------------------------------------------------------------------------

CLOSES_AFTER_RUN = False
"""``--closes-after-run``: the child's DuckDB engine checkpoints at each commit, as the engine of a
run that opened the file itself does (:meth:`~sqlanon.engines.base.Engine.closes_after_run`)."""

def run_child(db, spec: dict[str, Any], delay: float | None) -> tuple[bool, float, int]:  # noqa: ANN001
    """Run the spec in a child; SIGKILL it ``delay`` seconds after it starts applying (None: let
    it finish). Returns (killed, seconds applying, the child's PostgreSQL backend pid)."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, db.name, db.target(), json.dumps(spec),
                              "closes" if CLOSES_AFTER_RUN else "keeps"],
                             cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        if not line.startswith("go"):
            raise RuntimeError(f"the child failed to start: {line}{child.stderr.read()}")
        pid, started = int(line.split()[1]), time.monotonic()
        if delay is None:
            out, err = child.communicate(timeout=900)
            if child.returncode != 0:
                raise RuntimeError(f"the unkilled run failed: {err[-2000:]}")
            return False, time.monotonic() - started, pid
        try:
            child.wait(delay)
            return False, time.monotonic() - started, pid  # finished before the kill
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
            child.wait(30)
            return True, time.monotonic() - started, pid
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stderr.close()


def soak(db, kind: str, cases: list[str], rows: dict[str, int], kills: int, rng: random.Random
         ) -> Tally:  # noqa: ANN001
    tally = Tally()
    durations = {}
    for case in cases:  # one unkilled run each: the duration, and the checks of a finished run
        n = rows[case]
        db.reset(n)
        _, durations[case], _ = run_child(db, spec_for(kind, case, n), None)
        check(db, kind, case, n, False, tally)
    i = 0
    while tally.kills < kills:
        case = cases[i % len(cases)]
        i += 1
        n = rows[case]
        db.reset(n)
        killed, _, pid = run_child(db, spec_for(kind, case, n),
                                   rng.uniform(0, 1.3 * durations[case]))
        if killed:
            tally.kills += 1
            e = db.connect()
            try:
                db.wait_gone(e, pid)
            finally:
                e.close()
        else:
            tally.finished_first += 1
        check(db, kind, case, n, killed, tally)
    tally.outcomes.update({f"duration {c}": round(d, 2) for c, d in durations.items()})
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs per engine and kind")
    parser.add_argument("--engines", default="duckdb,postgres")
    parser.add_argument("--kinds", default="dp,in_place")
    parser.add_argument("--rows", type=int, default=1_000_000,
                        help="rows of the DuckDB table (PostgreSQL: a tenth)")
    parser.add_argument("--mdav-rows", type=int, default=10_000,
                        help="rows of the table MDAV microaggregates (numpy, quadratic)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--closes-after-run", action="store_true",
                        help="DuckDB: the child's engine checkpoints at each commit, as a run that "
                             "opened the file does")
    args = parser.parse_args()
    global CLOSES_AFTER_RUN
    CLOSES_AFTER_RUN = args.closes_after_run
    rng = random.Random(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="sqlanon-soak-"))
    failed = False
    started = time.monotonic()
    try:
        for engine in args.engines.split(","):
            db = Duck(folder) if engine == "duckdb" else Postgres(folder)
            big = args.rows if engine == "duckdb" else max(args.rows // 10, 1000)
            try:
                for kind in args.kinds.split(","):
                    cases = list(DP_CASES) if kind == "dp" else list(IN_PLACE_CASES)
                    rows = {c: args.mdav_rows if c in ("microaggregation", "dp_microaggregation_table")
                            else big for c in cases}
                    tally = soak(db, kind, cases, rows, args.kills, rng)
                    failed |= bool(tally.violations)
                    print(f"{engine} {kind}: {tally.kills} kills, {tally.finished_first} runs "
                          f"finished before their kill, {len(tally.violations)} violations, "
                          f"{tally.staging_removed} leftover staging tables removed by the next run",
                          flush=True)
                    for key, value in sorted(tally.outcomes.items()):
                        print(f"    {key}: {value}", flush=True)
                    for v in tally.violations:
                        print(f"    VIOLATION {v}", flush=True)
            finally:
                db.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"total {time.monotonic() - started:.0f} s", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
