"""How a Spark connection string is read, and the one-line error without pyspark (no JVM needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from sqlanon.engines.connect import connect
from sqlanon.engines.spark_sessions import parse_target
from sqlanon.errors import EngineError


@pytest.mark.parametrize("target, master", [("spark://local", "local"), ("spark://local[2]", "local[2]"),
                                            ("spark://local[*]", "local[*]"),
                                            ("spark://local[4, 2]", "local[4, 2]")])
def test_local_masters_are_read(target, master):
    assert parse_target(target) == (master, {})


def test_settings_follow_the_master():
    assert parse_target("spark://local[2]?spark.sql.shuffle.partitions=8&spark.ui.enabled=false") == (
        "local[2]", {"spark.sql.shuffle.partitions": "8", "spark.ui.enabled": "false"})


@pytest.mark.parametrize("target, message", [
    ("spark://10.0.0.1:7077", "names no local session"),
    ("spark://local[0]", "names no local session"),
    ("spark://local[2]?partitions", "cannot read the settings"),
])
def test_other_targets_are_one_line_errors_naming_them(target, message):
    with pytest.raises(EngineError, match=message) as e:
        connect(target)
    assert target in str(e.value) and "\n" not in str(e.value)


SPEC = textwrap.dedent("""\
    source: {table: people}
    attributes: {age: {role: quasi_identifier, hierarchy: {intervals: {widths: [10]}}}}
    privacy: [{k_anonymity: {k: 2}}]
    transformation: {levels: {age: 1}}
    """)


def check_without(modules: list[str], database: str, folder) -> subprocess.CompletedProcess:
    """``sqlanon check`` on ``database`` in a process where importing ``modules`` fails."""
    spec = folder / "spec.yml"
    spec.write_text(SPEC, encoding="utf-8")
    blocked = ("import sys; " + "".join(f"sys.modules[{m!r}] = None; " for m in modules)
               + "from sqlanon.cli.main import main; "
               f"sys.exit(main(['check', {str(spec)!r}, '--database', {database!r}]))")
    return subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=120)


def test_without_pyspark_the_error_names_the_extra(tmp_path):
    run = check_without(["pyspark", "pyspark.sql"], "spark://local[2]", tmp_path)
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'sqlanon[spark]'" in lines[0], run.stderr


@pytest.mark.spark
def test_without_java_the_error_says_spark_needs_it(tmp_path):
    """No JVM starts: JAVA_HOME names a folder without Java."""
    spec = tmp_path / "spec.yml"
    spec.write_text("source: {table: people}\n"
                    "attributes: {age: {role: quasi_identifier, hierarchy: {intervals: {widths: [10]}}}}\n"
                    "privacy: [{k_anonymity: {k: 2}}]\n", encoding="utf-8")
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    command = [sys.executable, "-m", "sqlanon", "check", str(spec), "--database", "spark://local[2]"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]  # Spark's launch script writes its own lines first
    assert last.startswith("sqlanon: error: spark: cannot start a session on 'local[2]'")
    assert "Java 17" in last
