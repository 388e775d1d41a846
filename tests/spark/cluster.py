"""A standalone Spark cluster on this machine for the tests: a master, two workers (one core each) and
a Spark Connect server whose application runs on them, each a process of pyspark's own Spark.

Everything listens on 127.0.0.1 on free ports and writes under one temporary folder; :meth:`stop`
ends every process it started (terminate, then kill after a grace period).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.ports import free_port

JAVA_HOME = Path("/usr/lib/jvm/java-17-openjdk-amd64")
CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"
WORKERS = 2
READY_TIMEOUT = 180.0
GRACE = 20.0


class ClusterUnavailable(RuntimeError):
    """pyspark or Java is missing, or a process of the cluster did not come up."""


def spark_home() -> Path:
    """The Spark pyspark ships: its bin/ holds spark-class and spark-submit, its jars/ Spark itself."""
    try:
        import pyspark
    except ImportError as e:
        raise ClusterUnavailable("the cluster needs pyspark: pip install -e '.[spark]'") from e
    return Path(pyspark.__file__).resolve().parent


def get_json(url: str) -> Any:
    """The JSON at ``url``, or None while nothing answers there."""
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return json.load(answer)
    except (OSError, ValueError, urllib.error.URLError):
        return None


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Cluster:
    """The cluster's processes and addresses. Use as a context manager, or call start and stop."""

    root: Path
    home: Path = field(default_factory=spark_home)
    master_port: int = field(default_factory=free_port)
    master_ui: int = field(default_factory=free_port)
    connect_port: int = field(default_factory=free_port)
    driver_ui: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def master(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def remote(self) -> str:
        """The Connect server's address, as sqlanon's ``--database`` takes it."""
        return f"sc://127.0.0.1:{self.connect_port}"

    @property
    def driver_api(self) -> str:
        """The REST API of the Connect server's driver (its Spark UI)."""
        return f"http://127.0.0.1:{self.driver_ui}/api/v1"

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _env(self) -> dict[str, str]:
        conf = self.root / "conf"  # empty: no spark-defaults.conf or spark-env.sh from elsewhere
        conf.mkdir(parents=True, exist_ok=True)
        java = Path(os.environ.get("JAVA_HOME") or JAVA_HOME)
        if not (java / "bin" / "java").exists():
            java = JAVA_HOME
        return dict(os.environ, SPARK_HOME=str(self.home), JAVA_HOME=str(java), SPARK_CONF_DIR=str(conf),
                    SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=str(self.root / "logs"),
                    SPARK_NO_DAEMONIZE="1")

    def _spawn(self, name: str, *args: str, memory: str = "256m") -> None:
        """Start a process; ``memory``: its heap (Spark reads a daemon's and the Connect server's from
        SPARK_DAEMON_MEMORY)."""
        log = (self.root / f"{name}.log").open("wb")
        env = dict(self._env(), SPARK_DAEMON_MEMORY=memory)
        self.processes[name] = subprocess.Popen(args, env=env, cwd=self.root, stdout=log,
                                                stderr=subprocess.STDOUT, start_new_session=True)
        log.close()

    def start(self) -> Cluster:
        if not (self.home / "bin" / "spark-class").exists():
            raise ClusterUnavailable(f"no spark-class in {self.home / 'bin'}")
        self.root.mkdir(parents=True, exist_ok=True)
        spark_class = str(self.home / "bin" / "spark-class")
        self._spawn("master", spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.master_port), "--webui-port", str(self.master_ui))
        self._wait("the master", lambda: get_json(f"http://127.0.0.1:{self.master_ui}/json") is not None)
        # the workers and the Connect server start together: the master gives the application its
        # executors as the workers register
        for i in range(1, WORKERS + 1):
            work = self.root / f"worker-{i}"
            work.mkdir()
            self._spawn(f"worker-{i}", spark_class, "org.apache.spark.deploy.worker.Worker",
                        "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                        "--webui-port", str(free_port()), "--work-dir", str(work), self.master)
        self._spawn("connect", str(self.home / "bin" / "spark-submit"), "--class", CONNECT_SERVER,
                    "--name", "sqlanon-connect", "--master", self.master,
                    *self._conf({
                        "spark.connect.grpc.binding.address": "127.0.0.1",
                        "spark.connect.grpc.binding.port": str(self.connect_port),
                        "spark.driver.host": "127.0.0.1",
                        "spark.driver.bindAddress": "127.0.0.1",
                        "spark.ui.port": str(self.driver_ui),
                        "spark.port.maxRetries": "0",
                        # one single-core executor on each worker
                        "spark.executor.cores": "1",
                        "spark.executor.memory": "512m",
                        "spark.cores.max": str(WORKERS),
                        "spark.sql.warehouse.dir": str(self.root / "warehouse"),
                        "spark.local.dir": str(self.root / "tmp"),
                        "spark.sql.shuffle.partitions": "4",
                        # keep four tasks per shuffle stage: small tables would be coalesced into one
                        "spark.sql.adaptive.coalescePartitions.enabled": "false",
                        "spark.sql.files.maxPartitionBytes": "131072",  # a Parquet file in several tasks
                        "spark.ui.showConsoleProgress": "false",
                    }), memory="768m")
        self._wait(f"{WORKERS} ALIVE workers on the master", lambda: len(self.workers()) == WORKERS)
        self._wait("the Spark Connect server to accept connections", lambda: _accepts(self.connect_port))
        self._wait(f"{WORKERS} executors registered with the Connect server",
                   lambda: len(self.executors()) == WORKERS)
        return self

    @staticmethod
    def _conf(settings: dict[str, str]) -> list[str]:
        return [a for key, value in settings.items() for a in ("--conf", f"{key}={value}")]

    def _wait(self, what: str, ready: Any) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while not ready():
            ended = {n: p.returncode for n, p in self.processes.items() if p.poll() is not None}
            if ended or time.monotonic() > deadline:
                why = f"processes ended: {ended}" if ended else f"not ready after {READY_TIMEOUT:.0f} s"
                raise ClusterUnavailable(f"waiting for {what}: {why}\n{self.logs()}")
            time.sleep(0.5)

    def workers(self) -> list[dict[str, Any]]:
        """The master's ALIVE workers (``id``, ``webuiaddress``, ``coresused``, ...)."""
        state = get_json(f"http://127.0.0.1:{self.master_ui}/json") or {}
        return [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]

    def application(self) -> str | None:
        """The id of the Connect server's application, once its UI answers."""
        apps = get_json(f"{self.driver_api}/applications")
        return apps[0]["id"] if apps else None

    def executors(self) -> list[dict[str, Any]]:
        """The application's active executors, without the driver."""
        app = self.application()
        found = get_json(f"{self.driver_api}/applications/{app}/executors") if app else None
        return [e for e in found or [] if e.get("id") != "driver"]

    def logs(self, tail: int = 40) -> str:
        """The last lines of each process's output, for a failure message."""
        parts = []
        for name in self.processes:
            lines = (self.root / f"{name}.log").read_text(errors="replace").splitlines()
            parts.append(f"--- {name} ({self.root / f'{name}.log'}) ---\n" + "\n".join(lines[-tail:]))
        return "\n".join(parts)

    def stop(self) -> None:
        """End every process started, the Connect server first, the master last."""
        for name in reversed(list(self.processes)):
            process = self.processes[name]
            # each process leads a group of its own, which holds what it started (a worker's executors)
            _signal_group(process, signal.SIGTERM)
            try:
                process.wait(GRACE)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(process, signal.SIGKILL)
            process.wait(GRACE)
        self.processes.clear()


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:  # the group has ended
        pass
