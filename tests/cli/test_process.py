"""The ``sqlanon`` process ends without Python's teardown, after its output and exit handlers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """\
import atexit, sys
from sqlanon.cli.process import entry

class Canary:
    def __del__(self):
        sys.stderr.write("torn down")

def arm():  # the last exit handler: a cycle that only the teardown's collections would free
    canary = Canary()
    canary.cycle = canary

atexit.register(arm)
atexit.register(print, "exit handler ran")
sys.argv = ["sqlanon", "check", "missing.yml", "--json"]
entry()
"""


def test_exit_skips_teardown_after_output_and_exit_handlers(tmp_path: Path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    report, handler = proc.stdout.rsplit("}", 1)
    assert json.loads(report + "}")["kind"] == "spec"
    assert handler.strip() == "exit handler ran"
    assert "torn down" not in proc.stderr
