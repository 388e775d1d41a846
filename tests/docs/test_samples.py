"""Every code sample of README.md and docs/*.md runs against small data made here.

Defect guarded: docs/search.md called ``sqlanon.anonymize``, which did not exist, and nothing noticed;
samples drift from the API unless they run.

* ``python`` blocks are executed (each in a fresh namespace, in a folder holding the files and tables
  they name);
* ``yaml`` blocks are loaded as specs and validated: a whole spec as written, a fragment (a
  ``transformation``, ``output``, ``hierarchy``, ... section) inside a small spec around it;
* ``bash`` blocks: each ``sqlanon ...`` command is run through the command line's ``main`` and must
  exit 0;
* a block preceded by ``<!-- docs-test: skip: <reason> -->`` is skipped (it needs real data, a
  server, or installs software); ``json``, ``sql`` and untagged blocks show output, not code.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import load_spec, spec_from_dict
from tests.outputs.people import BASE_SPEC, load_people

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = re.compile(r"<!--\s*docs-test:\s*skip:\s*(.+?)\s*-->\s*$")
RUN = ("python", "yaml", "bash")


@dataclass
class Block:
    path: Path
    line: int
    language: str
    code: str
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.path.name}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            fence = re.match(r"^```(\w*)\s*$", lines[i])
            if not fence:
                i += 1
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            marker = SKIP.search(previous)
            found.append(Block(path, i + 1, fence.group(1), "\n".join(lines[i + 1:end]) + "\n",
                               marker.group(1) if marker else None))
            i = end + 1
    return found


BLOCKS = [b for b in blocks() if b.language in RUN]


# -- the small world the samples run in -------------------------------------------------------------

def _table(con, name: str, columns: str, rows: list[tuple]) -> None:
    con.execute(f"CREATE TABLE {name} ({columns})")
    con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(rows[0]))})", rows)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_world(where: Path) -> None:
    """people (spec.yml, spec.yaml, people.csv), visits (DP queries), clinic (patients, medical) and
    the hierarchy files the samples name."""
    engine = DuckDBEngine(str(where / "people.duckdb"))
    load_people(engine)
    engine.close()
    spec = {**BASE_SPEC, "source": {"table": "people", "database": "people.duckdb"},
            "output": {"mode": "table", "name": "people_anon", "replace": True}}
    for name in ("spec.yml", "spec.yaml"):
        _write(where / name, yaml.safe_dump(spec, sort_keys=False))
    _write(where / "people.csv", "id,age\n" + "".join(f"{i},{20 + i * 3 % 40}\n" for i in range(40)))

    import duckdb

    wards, sexes = ["north", "south", "east"], ["F", "M"]
    con = duckdb.connect(str(where / "visits.duckdb"))
    _table(con, "visits", "age INTEGER, ward VARCHAR, sex VARCHAR, cost DOUBLE, patient_id INTEGER",
           [(18 + i % 70, wards[i % 3], sexes[i % 2], float(i * 37 % 5000), i % 60) for i in range(300)])
    con.close()

    diagnoses = {"flu": "respiratory", "cold": "respiratory", "asthma": "respiratory",
                 "ulcer": "digestive", "gastritis": "digestive"}
    _write(where / "diagnosis.csv", "".join(f"{d};{g};*\n" for d, g in diagnoses.items()))
    zips = ["47601", "47602", "47605", "47901", "47905"]
    _write(where / "zip.csv", "".join(f"{z};{z[:4]}*;{z[:3]}**;*\n" for z in zips))
    con = duckdb.connect(str(where / "clinic.duckdb"))
    names = list(diagnoses)
    _table(con, "patients", "age INTEGER, income DOUBLE, diagnosis VARCHAR",
           [(20 + i % 60, float(1000 * (i % 90)), names[i % 5]) for i in range(200)])
    _table(con, "medical", "age INTEGER, zip VARCHAR, condition VARCHAR",
           [(20 + i % 40, zips[i % 5], names[i % 3]) for i in range(200)])
    con.close()

    ages = "".join(f"{a};{a // 5 * 5}-{a // 5 * 5 + 4};{a // 20 * 20}-{a // 20 * 20 + 19};*\n"
                   for a in range(0, 100)) + "NA;unknown;unknown;*\n"
    for name in ("hierarchies/age.csv", "adult_hierarchy_age.csv"):
        _write(where / name, ages)
    _write(where / "adult_hierarchy_education.csv",
           "Bachelors;Higher;*\nMasters;Higher;*\nHS-grad;School;*\n")
    _write(where / "adult_hierarchy_occupation.csv", "Sales;White;*\nCraft-repair;Blue;*\n")


@pytest.fixture(scope="module")
def made_world(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("docs")
    make_world(where)
    return where


@pytest.fixture()
def world(made_world: Path, tmp_path: Path) -> Path:
    """A fresh copy for each sample: none sees another's outputs or budget spends."""
    copy = tmp_path / "world"
    shutil.copytree(made_world, copy)
    return copy


@contextlib.contextmanager
def inside(where: Path):
    before = Path.cwd()
    os.chdir(where)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        os.chdir(before)


# -- running the samples ----------------------------------------------------------------------------

def run_python(block: Block) -> None:
    exec(compile(block.code, block.id, "exec"), {"__name__": "__docs__"})  # noqa: S102 - the sample


# a fragment is validated inside a spec over the people table; a lone hierarchy sits on a new column
FRAGMENT_BASE = {"source": {"table": "people", "database": "people.duckdb"},
                 "attributes": {"age": {"role": "quasi_identifier",
                                        "hierarchy": {"intervals": {"widths": [10]}}}}}


def as_spec(data: dict) -> dict:
    if "source" in data:
        return data
    if set(data) == {"hierarchy"}:
        hierarchy = data["hierarchy"]
        kind = next(iter(hierarchy)) if isinstance(hierarchy, dict) else None
        attribute = {"role": "quasi_identifier", "hierarchy": hierarchy}
        if kind == "date":
            attribute["type"] = "date"
        return {**FRAGMENT_BASE, "attributes": {"x": attribute}}
    spec = {**FRAGMENT_BASE, **data}
    spec["attributes"] = {**FRAGMENT_BASE["attributes"], **data.get("attributes", {})}
    named = [settings.get("attribute") if isinstance(settings, dict) else None
             for model in data.get("privacy", []) for settings in model.values()]
    metrics = data.get("metrics")
    if isinstance(metrics, dict):
        named.append((metrics.get("options") or {}).get("target"))
    for name in named:
        if name and name not in spec["attributes"]:
            spec["attributes"][name] = {"role": "sensitive", "hierarchy": {"map": {"a": ["*"]}}}
    return spec


def run_yaml(block: Block, where: Path) -> None:
    data = yaml.safe_load(block.code)
    assert isinstance(data, dict), f"{block.id}: a spec or a section of one"
    if "source" in data:
        path = where / f"sample_{block.path.stem}_{block.line}.yml"
        path.write_text(block.code, encoding="utf-8")
        load_spec(path)
    else:
        spec_from_dict(as_spec(data), source=block.id, base=where)


def commands(code: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", code)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def run_bash(block: Block) -> None:
    from sqlanon.cli.main import main

    for command in commands(block.code):
        args = shlex.split(command, comments=True)
        assert args[0] == "sqlanon", \
            f"{block.id}: only sqlanon commands run here; mark the block to skip: {command}"
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args[1:])
            except SystemExit as e:  # argparse's --help
                code = e.code or 0
        assert code == 0, f"{block.id}: `{command}` exited {code}: {err.getvalue().strip()}"


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_documented_sample_runs(block: Block, world: Path):
    if block.skip:
        pytest.skip(block.skip)
    with inside(world):
        if block.language == "python":
            run_python(block)
        elif block.language == "yaml":
            run_yaml(block, world)
        else:
            run_bash(block)


def test_samples_are_found():
    """The extraction itself: each language is seen, and a skip needs a reason."""
    languages = {b.language for b in BLOCKS}
    assert languages == set(RUN)
    assert all(b.skip is None or b.skip.strip() for b in BLOCKS)


def resolve(dotted: str) -> object:
    """The object a dotted name designates: the longest importable module, then attributes."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(dotted)


def test_every_python_name_the_prose_mentions_exists():
    """`sqlanon.anonymize` in docs/search.md named nothing; each `sqlanon.…` name in the text must."""
    names = sorted({(path.name, m) for path in DOCS
                    for m in re.findall(r"`(sqlanon(?:\.\w+)+)", path.read_text(encoding="utf-8"))})
    assert names
    missing = []
    for where, dotted in names:
        try:
            resolve(dotted)
        except (AttributeError, ModuleNotFoundError):
            missing.append(f"{where}: {dotted}")
    assert not missing
