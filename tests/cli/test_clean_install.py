"""`pip install .` without extras gives a working `sqlanon`: generalization, microaggregation, noise.

Defect guarded: pandas was imported by the search and microaggregation modules but declared only in
the test extra, so `sqlanon anonymize` failed with ModuleNotFoundError after a plain install. The
package now needs no pandas (numpy and pyarrow do that work), and the environment is checked to have
none, so an import of it anywhere on these paths fails here.

Defect guarded: the SQL templates were installed as a top-level package named ``sql_templates``
in site-packages. They are package data of sqlanon now: the wheel holds them under
``sqlanon/sql_templates/`` (and ``py.typed``), holds no other top-level package, and the installed
``sqlanon demo`` (which writes its output table through a template) runs with no checkout in sight.

A wheel is built from this checkout (``pip wheel . --no-deps``) and installed into a fresh virtual
environment (no system site packages; pip may use its cache and needs the package index). Without a
network the test is skipped with pip's reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = ("Failed to establish a new connection", "Temporary failure in name resolution",
           "No matching distribution found", "Could not find a version", "Network is unreachable",
           "ProxyError", "ConnectTimeout", "Read timed out")

SPECS = {
    "generalize.yml": """
        source: {table: people}
        attributes:
          id: insensitive
          name: identifier
          age: {role: quasi_identifier, hierarchy: {intervals: {origin: 0, widths: [10, 20, 40]}}}
          sex: {role: quasi_identifier, hierarchy: {map: {F: ["*"], M: ["*"]}}}
          income: sensitive
        privacy: [{k_anonymity: {k: 3}}]
        transformation: {suppression_limit: 0.1}
        output: {mode: table, name: people_generalized}
    """,
    "microaggregate.yml": """
        source: {table: people}
        attributes: {id: insensitive, name: identifier, age: quasi_identifier,
                     income: quasi_identifier, sex: sensitive}
        transformation: {method: microaggregation, algorithm: mdav, k: 3, key: id}
        output: {mode: table, name: people_microaggregated}
    """,
    "noise.yml": """
        source: {table: people}
        attributes: {id: insensitive, name: identifier, age: insensitive, sex: insensitive,
                     income: sensitive}
        transformation: {method: noise, mechanism: uncorrelated, attributes: [income], alpha: 0.5}
        output: {mode: table, name: people_noisy}
    """,
}
MAKE_DATABASE = """
import duckdb
con = duckdb.connect("people.duckdb")
con.execute(\"\"\"CREATE TABLE people AS SELECT i AS id, 'person ' || i AS name,
    (20 + i % 50)::INTEGER AS age, CASE i % 2 WHEN 0 THEN 'F' ELSE 'M' END AS sex,
    (1000 + (i * 37) % 900)::DOUBLE AS income FROM range(200) r(i)\"\"\")
con.close()
"""


def run(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def pip(python: Path, args: list[str], cwd: Path, what: str) -> None:
    """Run ``python -m pip args``; skip the test when the package index cannot be reached."""
    try:
        done = run([str(python), "-m", "pip", *args], cwd, 600)
    except subprocess.TimeoutExpired:
        pytest.skip(f"{what} did not finish in 10 minutes (slow or no network)")
    if done.returncode != 0:
        if any(s in done.stderr for s in OFFLINE):
            pytest.skip(f"pip cannot reach the package index: {done.stderr.strip().splitlines()[-1]}")
        pytest.fail(f"{what} failed:\n{done.stderr}")


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory) -> Path:
    """The bin folder of a new virtual environment without system site packages."""
    where = tmp_path_factory.mktemp("clean")
    try:
        venv.EnvBuilder(with_pip=True, system_site_packages=False, clear=True).create(where / "venv")
    except Exception as e:  # noqa: BLE001 - any failure to build the venv means the test cannot run
        pytest.skip(f"cannot create a virtual environment: {e}")
    return where / "venv" / ("Scripts" if sys.platform == "win32" else "bin")


# What a checkout holds besides its files: build leftovers (setuptools reuses ``build/`` and an old
# ``*.egg-info``, so a stale one would put its old contents in the wheel), caches and environments.
NOT_SOURCES = ("build", "dist", "*.egg-info", ".git", ".venv", "venv", "__pycache__", ".mypy_cache",
               ".ruff_cache", ".hypothesis", ".pytest_cache", "sqlanon_demo")


@pytest.fixture(scope="module")
def wheel(fresh_venv, tmp_path_factory) -> Path:
    """The wheel ``pip wheel . --no-deps`` builds from a clean copy of this checkout."""
    source = tmp_path_factory.mktemp("source") / "sqlanon"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    out = tmp_path_factory.mktemp("wheel")
    pip(fresh_venv / "python", ["wheel", "--quiet", "--no-deps", "-w", str(out), str(source)], out,
        "pip wheel . --no-deps")
    built = sorted(out.glob("sqlanon-*.whl"))
    assert len(built) == 1, f"expected one sqlanon wheel, found {[w.name for w in built]}"
    return built[0]


@pytest.fixture(scope="module")
def clean_install(fresh_venv, wheel) -> Path:
    """The virtual environment with that wheel installed, without extras."""
    pip(fresh_venv / "python", ["install", "--quiet", "--no-compile", str(wheel)], wheel.parent,
        "pip install of the wheel")
    return fresh_venv


def test_wheel_ships_templates_and_py_typed_inside_the_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    templates = sorted(n.removeprefix("sqlanon/sql_templates/") for n in names
                       if n.startswith("sqlanon/sql_templates/"))
    shipped = [p.name for p in (ROOT / "sql_templates").glob("*.sql.j2")]
    assert templates == sorted([*shipped, "compiled.json"])
    assert "default__create_table.sql.j2" in templates
    assert "sqlanon/py.typed" in names
    top_level = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top_level == {"sqlanon"}, f"the wheel installs other top-level names: {top_level}"
    info = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
    assert zipfile.ZipFile(wheel).read(info).decode().split() == ["sqlanon"]


def test_installed_demo_writes_its_table_through_the_shipped_templates(clean_install, tmp_path):
    python, sqlanon = clean_install / "python", clean_install / "sqlanon"
    no_top_level = run([str(python), "-c", "import sql_templates"], tmp_path, 60)
    assert no_top_level.returncode != 0 and "No module named 'sql_templates'" in no_top_level.stderr
    compiled = run([str(python), "-c", "from sqlanon.outputs.scripts import compiled; "
                    "print(compiled() is not None)"], tmp_path, 60)
    assert compiled.stdout.split() == ["True"], compiled.stderr  # shipped compiled, and up to date
    demo = run([str(sqlanon), "demo", "--json"], tmp_path, 300)
    assert demo.returncode == 0, f"sqlanon demo:\n{demo.stdout}\n{demo.stderr}"
    count = ("import duckdb; con = duckdb.connect('sqlanon_demo/people.duckdb'); "
             "print(con.execute('SELECT count(*) FROM people_anon').fetchone()[0])")
    counted = run([str(python), "-c", count], tmp_path, 60)
    assert counted.returncode == 0, counted.stderr
    assert int(counted.stdout) > 0


def test_plain_install_runs_anonymize_microaggregation_and_noise(clean_install, tmp_path):
    python, sqlanon = clean_install / "python", clean_install / "sqlanon"
    no_pandas = run([str(python), "-c", "import pandas"], tmp_path, 60)
    assert no_pandas.returncode != 0, "pandas came in with the dependencies: the test would prove nothing"
    made = run([str(python), "-c", MAKE_DATABASE], tmp_path, 120)
    assert made.returncode == 0, made.stderr
    for name, text in SPECS.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    for verb, spec in (("anonymize", "generalize.yml"), ("apply", "microaggregate.yml"),
                       ("apply", "noise.yml")):
        done = run([str(sqlanon), verb, spec, "--database", "people.duckdb", "--json"], tmp_path, 120)
        assert done.returncode == 0, f"sqlanon {verb} {spec}:\n{done.stdout}\n{done.stderr}"
    counted = run([str(python), "-c", "import duckdb; con = duckdb.connect('people.duckdb'); print(*["
                   "con.execute(f'SELECT count(*) FROM {t}').fetchone()[0] for t in "
                   "('people_generalized', 'people_microaggregated', 'people_noisy')])"], tmp_path, 60)
    assert counted.returncode == 0, counted.stderr
    generalized, microaggregated, noisy = map(int, counted.stdout.split())
    assert generalized >= 180 and microaggregated == noisy == 200
