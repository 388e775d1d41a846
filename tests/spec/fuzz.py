"""A fuzzer of specs: valid specs mutated in structure, types, names and values, run through the CLI.

Shared by the bounded unit test (tests/spec/test_spec_fuzz.py) and the long run
(scripts/fuzz_specs.py). Each example writes a mutated spec beside a fresh copy of a small DuckDB
database and its hierarchy files, and runs one verb through ``sqlanon.cli.main.main`` in-process.
The contract: exit 0, 1 (not anonymous) or 2 with a one-line message; never a traceback, never an
exception other than sqlanon's own errors (and never an :class:`~sqlanon.errors.InternalError`).
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

VERBS = ("check", "apply", "anonymize", "compile")
SALT = "fuzz-salt-7Kq2xW9pZ3"

ROWS = [(i, 18 + (i * 7) % 60, f"476{(i * 3) % 10}{i % 4}", ("F", "M")[i % 2],
         ("flu", "cold", "asthma", "gout")[(i * 5) % 4], 1000.0 * (i % 9) + 250.5, f"person {i}",
         f"20{10 + i % 12}-0{1 + i % 9}-1{i % 10}", ("low", "mid", "high")[i % 3])
        for i in range(1, 41)]

GENERALIZATION: dict[str, Any] = {
    "source": {"table": "people", "database": "people.duckdb"},
    "attributes": {
        "age": {"role": "quasi_identifier", "type": "integer",
                "hierarchy": {"intervals": {"widths": [10, 20], "origin": 0}}},
        "zip": {"role": "quasi_identifier", "hierarchy": {"csv": "zip.csv"}},
        "sex": {"role": "quasi_identifier", "hierarchy": {"map": {"F": "*", "M": "*"}}},
        "disease": {"role": "sensitive", "hierarchy": "disease.csv"},
        "name": {"role": "identifier", "action": "hash", "salt": SALT},
        "income": "insensitive",
    },
    "privacy": [{"k_anonymity": {"k": 2}}, {"l_diversity": {"attribute": "disease", "l": 2}}],
    "transformation": {"levels": {"age": 1, "zip": 2, "sex": 1}, "suppression_limit": 0.2,
                       "search": "optimal", "metric": "loss"},
    "output": {"mode": "table", "name": "people_out", "replace": True},
    "metrics": {"names": ["loss", "discernibility", "classification"], "options": {"target": "disease"}},
}

MICROAGGREGATION: dict[str, Any] = {
    "source": {"table": "people", "database": "people.duckdb"},
    "attributes": {"age": "quasi_identifier", "income": "quasi_identifier", "disease": "sensitive",
                   "name": {"role": "identifier", "action": "pseudonymize", "salt": SALT}},
    "privacy": [{"k_anonymity": {"k": 3}}],
    "transformation": {"method": "microaggregation", "algorithm": "mdav", "k": 3, "key": "id"},
    "output": {"mode": "table", "name": "people_micro", "replace": True},
}

NOISE: dict[str, Any] = {
    "source": {"table": "people", "database": "people.duckdb"},
    "attributes": {"age": "quasi_identifier", "income": "insensitive", "sex": "insensitive"},
    "transformation": {"method": "noise", "mechanism": "laplace", "attributes": ["income"], "epsilon": 1.0,
                       "sensitivity": 100, "bounds": {"income": [0, 10000]}, "seed": 7},
    "output": {"mode": "table", "name": "people_noisy", "replace": True},
}

MODELS: dict[str, Any] = {
    "source": {"table": "people", "database": "people.duckdb"},
    "attributes": {
        "zip": {"role": "quasi_identifier",
                "hierarchy": {"mask": {"levels": 2, "from": "right", "char": "*"}}},
        "visit": {"role": "quasi_identifier", "hierarchy": {"date": ["year", "decade"]}},
        "grade": {"role": "quasi_identifier", "type": "ordinal", "order": ["low", "mid", "high"],
                  "hierarchy": {"ordered": {"sizes": [3]}}},
        "age": {"role": "quasi_identifier", "weight": 2,
                "hierarchy": {"intervals": {"widths": [10, 20], "bottom": 20, "top": 70}}},
        "disease": {"role": "sensitive", "hierarchy": {"csv": "disease.csv", "delimiter": ";"}},
        "income": "sensitive",
        "name": {"role": "identifier", "action": "mask"},
    },
    "privacy": [{"t_closeness": {"attribute": "disease", "t": 0.6, "distance": "hierarchical"}},
                {"delta_presence": {"subset": "research", "delta_min": 0, "delta_max": 0.9}},
                {"k_e_anonymity": {"attribute": "income", "k": 2, "e": 100}}],
    "transformation": {"levels": {"zip": 2, "visit": 2, "grade": 1, "age": 2}, "suppression_limit": 0.5,
                       "suppressed": "mask"},
    "output": {"mode": "sql", "dialect": "postgres", "path": "out.sql"},
    "metrics": {"names": ["entropy", "sse", "journalist_risk_max", "suppressed_cells"],
                "options": {"numeric": ["age"], "population": "people"}},
}

BASES = {"generalization": GENERALIZATION, "models": MODELS, "microaggregation": MICROAGGREGATION,
         "noise": NOISE}

WEIRD_TEXT = ["", " ", "a", "ü", "名前", "x;y", "a'b", 'a"b', "--", "a b", "__sa_x", "NULL", "*", "../x",
              "/", "x" * 300, "\t", "\u00a0", "🙂", "Robert'); DROP TABLE people;--", "${HOME}", "%s",
              "\\", "0", "-1", "1e309", "nan", "true", "people", "people_out"]
PLAUSIBLE = ["age", "zip", "sex", "disease", "income", "name", "id", "nothere", "people", "research",
             "zip.csv", "disease.csv", "people.duckdb", "k_anonymity", "l_diversity", "t_closeness",
             "delta_presence", "kpqr_anonymity", "beta_likeness", "loss", "entropy", "classification",
             "sse", "journalist_risk_max", "laplace", "gaussian", "pram", "sampling", "rank_swap",
             "condensation", "dp_microaggregation", "randomized_response", "mdav", "vmdav",
             "individual_ranking", "projection", "mdav_mixed", "tcloseness_merge", "generalization",
             "microaggregation", "noise", "table", "view", "in_place", "sql", "none", "spark", "postgres",
             "csv", "intervals", "date", "mask", "ordered", "map", "optimal", "heuristic", "binary",
             "quasi_identifier", "sensitive", "identifier", "insensitive", "ordinal", "hash", "mask",
             "pseudonymize", "drop", "distinct", "entropy", "recursive", "ordered", "hierarchical",
             "month", "year", "remove", "visit", "grade", "k_e_anonymity", "sql", "research"]
KEYS = ["source", "attributes", "privacy", "transformation", "output", "metrics", "table", "file",
        "format", "database", "connection", "schema", "delimiter", "header", "all_text", "role", "type",
        "hierarchy", "weight", "action", "salt", "order", "method", "levels", "suppression_limit",
        "suppressed", "search", "metric", "time_limit", "algorithm", "k", "l", "t", "attribute",
        "variant", "c", "p", "q", "r", "delta", "beta", "e", "subset", "delta_min", "delta_max",
        "distance", "attributes", "mechanism", "epsilon", "sensitivity", "bounds", "seed", "alpha",
        "fraction", "matrix", "categories", "mode", "name", "dialect", "path", "replace", "names",
        "options", "target", "population", "numeric", "suppressed_penalty", "widths", "origin", "bottom",
        "top", "levels", "from", "char", "values", "sizes", "null", "csv", "intervals", "date", "map",
        "ordered", "mask", "key", "block_by", "block_size", "statistic", "gamma", "dataset",
        "budget_epsilon", "budget_delta", "linkage", "keep_probability", "pd", "theta", "trust_bounds"]

NUMBERS = st.one_of(
    st.integers(-3, 12), st.sampled_from([0, 1, -1, 2**31, 2**63, -(2**63), 10**30, 2**70]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 0.5, 1.0, 1e-300, 1e300, -0.0]))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.sampled_from(WEIRD_TEXT),
                    st.sampled_from(PLAUSIBLE), st.text(max_size=6))
GARBAGE = st.recursive(
    SCALARS, lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.sampled_from(WEIRD_TEXT), st.integers(-2, 2)),
                        inner, max_size=3)),
    max_leaves=6)
OPERATIONS = ("delete", "garbage", "plausible", "number", "null", "wrap", "unwrap", "rename", "add",
              "swap_base")


def positions(node: Any, out: list[tuple[Any, Any]] | None = None) -> list[tuple[Any, Any]]:
    """Every (container, key or index) of a spec tree."""
    out = [] if out is None else out
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((node, k))
            positions(v, out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((node, i))
            positions(v, out)
    return out


def mutate(data: st.DataObject, spec: dict[str, Any]) -> dict[str, Any]:
    """One to four mutations of a copy of ``spec``, drawn from ``data``."""
    spec = copy.deepcopy(spec)
    rnd = data.draw(st.randoms(use_true_random=False), label="choices")  # uniform over places and ops
    for _ in range(rnd.choice((1, 1, 1, 2, 2, 3, 4))):
        parent, key = rnd.choice(positions(spec))
        op = rnd.choice(OPERATIONS)
        if key not in parent if isinstance(parent, dict) else key >= len(parent):
            continue  # removed by an earlier mutation
        value = parent[key]
        if op == "delete":
            del parent[key]
        elif op == "garbage":
            parent[key] = data.draw(GARBAGE, label="garbage")
        elif op == "plausible":
            parent[key] = data.draw(st.sampled_from(PLAUSIBLE + WEIRD_TEXT), label="plausible")
        elif op == "number":
            parent[key] = data.draw(NUMBERS, label="number")
        elif op == "null":
            parent[key] = None
        elif op == "wrap":
            parent[key] = data.draw(st.sampled_from([[value], {"x": value}, [value, value]]), label="wrap")
        elif op == "unwrap" and isinstance(value, (list, dict)) and value:
            parent[key] = next(iter(value.values())) if isinstance(value, dict) else value[0]
        elif op == "rename" and isinstance(parent, dict):
            new = data.draw(st.one_of(st.sampled_from(KEYS + WEIRD_TEXT), st.none(), st.integers(-1, 3)),
                            label="new key")
            parent[new] = parent.pop(key)
        elif op == "add" and isinstance(parent, dict):
            parent[data.draw(st.sampled_from(KEYS), label="added key")] = data.draw(GARBAGE, label="value")
        elif op == "swap_base" and parent is spec and isinstance(key, str):
            other = data.draw(st.sampled_from(list(BASES.values())), label="other base")
            if key in other:
                parent[key] = copy.deepcopy(other[key])
    return spec


def spec_text(data: st.DataObject) -> str:
    """The YAML text of a mutated spec, sometimes with a line written twice (a duplicate key)."""
    rnd = data.draw(st.randoms(use_true_random=False), label="choices")
    spec = mutate(data, BASES[rnd.choice(sorted(BASES))])
    text = yaml.safe_dump(spec, allow_unicode=True, sort_keys=False, default_flow_style=False)
    if rnd.random() > 0.95:  # hypothesis favours small draws: the rare case is the large one
        lines = text.splitlines()
        i = rnd.randrange(len(lines))
        lines.insert(i, lines[i])
        text = "\n".join(lines) + "\n"
    return text


def make_fixture(folder: Path) -> Path:
    """The database and hierarchy files every example starts from, in ``folder``."""
    import duckdb

    folder.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(folder / "people.duckdb"))
    con.execute("CREATE TABLE people (id INTEGER, age INTEGER, zip VARCHAR, sex VARCHAR, disease VARCHAR, "
                "income DOUBLE, name VARCHAR, visit DATE, grade VARCHAR)")
    con.executemany("INSERT INTO people VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", ROWS)
    con.execute("CREATE TABLE research AS SELECT * FROM people WHERE id % 3 = 0")
    con.close()
    zips = sorted({r[2] for r in ROWS})
    (folder / "zip.csv").write_text("".join(f"{z};{z[:4]}*;{z[:3]}**;*\n" for z in zips))
    (folder / "disease.csv").write_text("flu;respiratory;*\ncold;respiratory;*\nasthma;chronic;*\n"
                                        "gout;chronic;*\n")
    return folder


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


class UnexpectedError(AssertionError):
    """The CLI let through (or swallowed) an exception that is not one of sqlanon's errors."""


@contextlib.contextmanager
def example_folder(fixture: Path) -> Iterator[Path]:
    """A fresh copy of the fixture, and the working directory while the example runs."""
    folder = Path(tempfile.mkdtemp(prefix="ex-", dir=fixture.parent))
    cwd = os.getcwd()
    try:
        for f in fixture.iterdir():
            shutil.copy(f, folder / f.name)
        os.chdir(folder)
        yield folder
    finally:
        os.chdir(cwd)
        shutil.rmtree(folder, ignore_errors=True)


def run_cli(argv: list[str]) -> Outcome:
    """``sqlanon <argv>`` through ``main``; re-raises any exception that is not a deliberate sqlanon
    error, even when ``main`` would catch it, so a catch-all cannot hide a crash."""
    from sqlanon.cli import main as cli
    from sqlanon.errors import InternalError, SqlanonError

    caught: list[BaseException] = []
    run = cli.run

    def spy(args: Any) -> int:
        try:
            return run(args)
        except InternalError as e:
            caught.append(e)
            raise
        except SqlanonError:
            raise
        except BaseException as e:
            caught.append(e)
            raise

    out, err = io.StringIO(), io.StringIO()
    cli.run = spy
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings(record=True):  # warnings are one line each (check_outcome)
            warnings.simplefilter("always")
            code = cli.main(argv)
    except BaseException:
        if not caught:
            raise
    finally:
        cli.run = run
    if caught:
        e = caught[0]
        raise UnexpectedError(f"sqlanon {' '.join(argv)} raised {type(e).__name__}: {e}") from e
    return Outcome(code, out.getvalue(), err.getvalue())


WARNING = "sqlanon: warning: "


def check_outcome(o: Outcome) -> None:
    """Exit 0, 1 or 2, and an error (exit 2) is one line; warnings before it are one line each."""
    assert o.code in (0, 1, 2), f"exit code {o.code}: {o.stderr}"
    assert "Traceback" not in o.stderr
    if o.code == 2:
        lines = [line for line in o.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if not line.startswith(WARNING)]
        assert len(errors) == 1 and errors[0].startswith("sqlanon: "), \
            f"a multi-line error:\n{o.stderr}"


def run_example(fixture: Path, verb: str, text: str) -> Outcome:
    """Write ``text`` as the spec of a fresh example folder and run ``verb`` on it."""
    with example_folder(fixture) as folder:
        spec = folder / "spec.yml"
        spec.write_text(text, encoding="utf-8")
        # a search stops after a few seconds: the fuzzer is about specs, not about search time
        outcome = run_cli([verb, str(spec), *(["--time-limit", "3"] if verb == "anonymize" else [])])
    check_outcome(outcome)
    return outcome
