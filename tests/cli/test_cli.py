"""The command line, run as a real process on a DuckDB file the test writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

# Seed 000 Table 5.1 (Age, ZIP, Condition).
ROWS = [(21, "23058", "Heart Disease"), (24, "23059", "Heart Disease"), (26, "23060", "Viral Infection"),
        (27, "23061", "Viral Infection"), (43, "23058", "Kidney Stone"), (43, "23059", "Heart Disease"),
        (47, "23060", "Viral Infection"), (49, "23061", "Viral Infection"), (32, "23058", "Kidney Stone"),
        (34, "23059", "Kidney Stone"), (35, "23060", "AIDS"), (38, "23061", "AIDS")]

SPEC = """\
source: {{table: medical, database: {db}}}
attributes:
  age: {{role: quasi_identifier, type: integer, hierarchy: {{intervals: {{widths: [10, 50]}}}}}}
  zip: {{role: quasi_identifier, hierarchy: {{mask: {{levels: 5}}}}}}
  condition: {{role: sensitive}}
privacy:
  - k_anonymity: {{k: {k}}}
  - l_diversity: {{attribute: condition, l: 2}}
transformation: {{levels: {{age: 1, zip: 2}}}}
metrics: [discernibility, aecs, height]
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sqlanon", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    con = duckdb.connect(str(tmp_path / "med.duckdb"))
    con.execute("CREATE TABLE medical (age INTEGER, zip VARCHAR, condition VARCHAR)")
    con.executemany("INSERT INTO medical VALUES (?, ?, ?)", ROWS)
    con.close()
    return tmp_path


def test_check_json_reports_table_5_2(workdir: Path):
    # Table 5.2: ages in decades and ZIP 230** give three classes of 4 rows (4-anonymous, distinct 2-diverse).
    (workdir / "spec.yml").write_text(SPEC.format(db="med.duckdb", k=4))
    proc = run("check", "spec.yml", "--json", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["transformation"]["levels"] == {"age": 1, "zip": 2}
    assert report["classes"] == 3
    assert report["min_class_size"] == 4
    assert report["suppressed_rows"] == 0
    assert report["privacy"]["k_anonymity"]["holds"] is True
    assert report["privacy"]["l_diversity[condition]"]["achieved"] == 2
    assert report["metrics"] == {"discernibility": 48.0, "aecs": 4.0, "height": 3.0}


def test_check_exit_status_when_models_fail(workdir: Path):
    (workdir / "spec.yml").write_text(SPEC.format(db="med.duckdb", k=5))
    proc = run("check", "spec.yml", cwd=workdir)
    assert proc.returncode == 1
    assert "FAILS" in proc.stdout and "k_anonymity" in proc.stdout


def test_error_names_file_key_and_suggestion(workdir: Path):
    (workdir / "spec.yml").write_text(SPEC.format(db="med.duckdb", k=4).replace("k_anonymity", "k_anonimity"))
    proc = run("check", "spec.yml", cwd=workdir)
    assert proc.returncode == 2
    assert "spec.yml: privacy[0]" in proc.stderr
    assert "Did you mean 'k_anonymity'?" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_column_is_named(workdir: Path):
    (workdir / "spec.yml").write_text(SPEC.format(db="med.duckdb", k=4).replace("  condition:", "  conditon:")
                                      .replace("attribute: condition", "attribute: conditon"))
    proc = run("check", "spec.yml", cwd=workdir)
    assert proc.returncode == 2
    assert "unknown column 'conditon'" in proc.stderr and "Did you mean 'condition'?" in proc.stderr
