"""The HTML report of Adult, end to end: ``sqlanon report`` in a new process (interpreter start,
imports, the check or the search, the figures, the charts, the file), and in-process the same verb
with and without the report, alternated, so that the report's own cost shows; for the spec with the
optimum's levels fixed (``check``) and for the spec that searches (``anonymize --dry-run``).

Adult (30,162 rows) in a DuckDB file; 8 quasi-identifiers with ARX's hierarchies, salary-class
sensitive; k-anonymity (k = 5) and t-closeness (t = 0.2, equal distance) of salary-class, 2 %
suppression, optimal search by Loss. ``--against DIR`` runs an older tree's ``sqlanon report``
alternately with this tree's and prints the ratios.

Measured (``--runs 5 --against`` the tree before the changes below, alternated, 2 cores shared with
other work at load 7-9; medians):

                                    fixed levels (check)     search (anonymize)
new process, CPU time (+ children)  1.72 / 1.94 s (0.89)     2.52 / 2.72 s (0.93)
new process, wall time              2.26 / 3.41 s (0.66)     4.52 / 4.39 s (1.03)
the report's own cost in process    0.47 / 0.76 s            0.63 / 1.13 s

(this tree / older tree; the in-process costs of the older tree from its own run just before).

What changed: the released node's figures are read from the run's own evaluator while it is open
(the second generalizing scan is gone); the charts are drawn by a renderer process started with the
run, so vl-convert's runtime (0.4 s of CPU, holding the interpreter lock) starts while the run reads
the data; scipy (0.3 s) and jinja2 are no longer imported by a run that does not use them. The wall
times at this load vary by ±1 s from run to run (the search's most); the CPU times are steady.
"""

from __future__ import annotations

import argparse
import functools
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


def spec_dict(adult: Path, database: Path) -> dict[str, Any]:
    attributes: dict[str, Any] = {q: {"role": "quasi_identifier",
                                      "hierarchy": {"csv": str(adult / f"adult_hierarchy_{q}.csv")}}
                                  for q in QIS}
    attributes["salary-class"] = {"role": "sensitive"}
    return {"source": {"table": "adult", "database": str(database)}, "attributes": attributes,
            "privacy": [{"k_anonymity": {"k": 5}},
                        {"t_closeness": {"attribute": "salary-class", "t": 0.2, "distance": "equal"}}],
            "transformation": {"search": "optimal", "suppression_limit": 0.02},
            "output": {"mode": "table", "name": "adult_anon"}}


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    p.add_argument("--against", metavar="DIR",
                   help="an older tree (`git archive <commit> | tar -x -C DIR`): its `sqlanon report` runs "
                        "in a new process alternately with this tree's, and the ratios are printed")
    a = p.parse_args()
    adult = Path(a.adult_dir)
    from sqlanon import api
    from sqlanon.engines.duckdb import DuckDBEngine
    from sqlanon.spec.load import spec_from_dict

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        database = work / "adult.duckdb"
        with DuckDBEngine(str(database)) as e:
            e.con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                          "all_varchar=true)", [str(adult / "adult.csv")])
        searched = spec_dict(adult, database)
        fixed = spec_dict(adult, database)
        found = api.anonymize(spec_from_dict(searched), dry_run=True)
        fixed["transformation"] = {"levels": dict(found.node.levels), "suppression_limit": 0.02}
        print(f"levels {dict(found.node.levels)}")
        page = work / "report.html"
        runs: dict[str, list[float]] = {}

        def timed(name: str, work: Any) -> None:
            t = time.perf_counter()
            work()
            runs.setdefault(name, []).append(time.perf_counter() - t)

        def child_cpu() -> float:
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            return usage.ru_utime + usage.ru_stime

        def in_new_process(command: list[str], cwd: str | None = None) -> None:
            before = child_cpu()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=cwd)
            cpu.setdefault((cwd or "",) + tuple(command), []).append(child_cpu() - before)

        cpu: dict[tuple[str, ...], list[float]] = {}

        for kind, d in (("fixed levels", fixed), ("search", searched)):
            spec_file = work / f"{kind.replace(' ', '_')}.yml"
            spec_file.write_text(yaml.safe_dump(d))
            spec = spec_from_dict(d)
            command = [sys.executable, "-m", "sqlanon", "report", str(spec_file), "-o", str(page)]
            verb = api.check if kind == "fixed levels" else functools.partial(api.anonymize, dry_run=True)
            for _ in range(a.runs + 1):  # the first round warms up
                timed(f"{kind}: sqlanon report (new process)", functools.partial(in_new_process, command))
                if a.against:  # `-m` puts the working directory first on the path: the older tree
                    timed(f"{kind}: sqlanon report (new process, older tree)",
                          functools.partial(in_new_process, command, a.against))
                timed(f"{kind}: verb without the report", functools.partial(verb, spec))
                timed(f"{kind}: verb with the report", functools.partial(verb, spec, html=page))
            for tree in ("", a.against) if a.against else ("",):
                x = cpu[(tree,) + tuple(command)][1:]
                print(f"{kind}: sqlanon report{' (older tree)' if tree else ''}, CPU time of the new "
                      f"process (user + system): " + " ".join(f"{v:.2f}" for v in x)
                      + f"   median {statistics.median(x):.2f} s")
            if a.against:
                new, old = (cpu[(t,) + tuple(command)][1:] for t in ("", a.against))
                print(f"{kind}: CPU time, this tree / older tree: "
                      f"{statistics.median(new) / statistics.median(old):.2f}")
        for name, times in runs.items():
            print(f"{name:<56} " + " ".join(f"{x:.2f}" for x in times[1:])
                  + f"   median {statistics.median(times[1:]):.2f} s")
        if a.against:
            for kind in ("fixed levels", "search"):
                new, old = (statistics.median(runs[f"{kind}: sqlanon report (new process{t})"][1:])
                            for t in ("", ", older tree"))
                print(f"{kind}: wall time of the new process, this tree / older tree: {new / old:.2f}")
        for kind in ("fixed levels", "search"):
            cost = (statistics.median(runs[f"{kind}: verb with the report"][1:])
                    - statistics.median(runs[f"{kind}: verb without the report"][1:]))
            print(f"{kind}: the report's own cost (difference of medians) {cost:.2f} s")
        print(f"page: {page.stat().st_size / 1024:.0f} KiB")

if __name__ == "__main__":
    main()
