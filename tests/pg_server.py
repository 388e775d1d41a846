"""Start a throwaway PostgreSQL server for the tests: initdb in a temporary folder, 127.0.0.1, a free port.

When the tests run as root the server runs as the ``postgres`` OS user (PostgreSQL refuses to run as
root), and the folder is owned by that user. The cluster uses the C locale so that text sorts by
bytes, as in DuckDB.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.ports import free_port

DEFAULT_BIN = Path("/usr/lib/postgresql/15/bin")
INSTALL_HINT = (
    "PostgreSQL 15 server binaries (initdb, pg_ctl) were not found in {where}. Install them with "
    "`apt-get install -y postgresql-15` (Debian/Ubuntu), or set SQLANON_PG_BIN to the folder that "
    "holds initdb and pg_ctl."
)


class PostgresUnavailable(RuntimeError):
    """The server binaries are missing or the server did not start."""


def find_bindir() -> Path:
    """The folder holding initdb and pg_ctl: $SQLANON_PG_BIN, PostgreSQL 15's Debian path, or $PATH."""
    candidates = []
    if os.environ.get("SQLANON_PG_BIN"):
        candidates.append(Path(os.environ["SQLANON_PG_BIN"]))
    candidates.append(DEFAULT_BIN)
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for c in candidates:
        if (c / "initdb").exists() and (c / "pg_ctl").exists():
            return c
    raise PostgresUnavailable(INSTALL_HINT.format(where=", ".join(str(c) for c in candidates)))


class PostgresServer:
    """One PostgreSQL cluster for a test session. Use as a context manager or call start/stop."""

    def __init__(self, bindir: Path | None = None) -> None:
        self.bindir = bindir or find_bindir()
        self.root = Path(tempfile.mkdtemp(prefix="sqlanon-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self.as_root = os.geteuid() == 0

    @property
    def dsn(self) -> str:
        return self.dsn_for("postgres")

    def dsn_for(self, database: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={database}"

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)

    def start(self) -> PostgresServer:
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
        done = self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                         "--locale=C", "--no-sync")
        if done.returncode != 0:
            raise PostgresUnavailable(f"initdb failed:\n{done.stdout}\n{done.stderr}")
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off")
        done = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w",
                         "-t", "60", "start")
        if done.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise PostgresUnavailable(f"pg_ctl start failed:\n{done.stdout}\n{done.stderr}\n{log}")
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 30) -> None:
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(self.dsn, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def create_schema(self, name: str) -> str:
        """A fresh, empty schema; returns a DSN whose search path starts there (cheaper than a
        database per test)."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.dsn, autocommit=True) as con:
            con.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
            con.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        return f"{self.dsn} options='-c search_path={name}'"

    def stop(self) -> None:
        if self.data.exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
