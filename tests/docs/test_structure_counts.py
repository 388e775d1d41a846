"""scripts/structure_counts.py counts what docs/architecture.md promises, on a package made here.

The package holds each kind of finding a known number of times, next to look-alikes that must not
count (comments, docstrings, ``vars(self)``, a comparison of another ``method``, code inside
``engines/``), so both over- and under-counting fail.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "structure_counts.py"

FILES = {
    "__init__.py": "",
    "registry.py": """
        class Registry:
            def __init__(self, kind, modules=()):
                self.kind = kind
        """,
    "api.py": '''
        """spec.transformation.method == "noise" in a docstring does not count."""
        from toypkg.spec import Transformation

        def run(spec):
            if spec.transformation.method == "noise":          # 1
                return 1
            # spec.transformation.method == "noise" in a comment does not count
            t = spec.transformation
            if t.method in ("microaggregation", "noise"):     # 2
                return 2
            method = t.method
            if method != "generalization":                    # 3
                return 3
            if (spec.transformation
                    .method == "generalization"):             # 4: one comparison over two lines
                return 4
            return 0

        def typed(t: Transformation, r: dict):
            if "noise" == t.method:                            # 5
                return 5
            if r.get("transformation", {}).get("method") == "noise":   # 6
                return 6
            return 0

        def other(options):
            method = options.method
            return method == "insensitive"   # another method: not counted

        def engines(ds, engine, target):
            if ds.engine.name == "duckdb":        # branch 1
                con = ds.engine.con               # reach-in 1
                con.register("x", None)
            if isinstance(engine, object):        # branch 2
                pass
            if hasattr(engine, "register_file"):  # branch 3
                engine.con.execute("SELECT 1")    # reach-in 2
            if engine.dialect.name in ("postgres", "spark"):   # branch 4
                pass
            if target.name == "duckdb":           # a dialect target, not an engine: not counted
                pass
            return engine.fetch("SELECT 1")      # through the interface: not counted
        ''',
    "spec.py": """
        class Transformation:
            method: str = "generalization"

            def check(self):
                return self.method == "generalization"        # 7

        class Other:
            def check(self):
                return self.method == "generalization"        # not a Transformation: not counted
        """,
    "methods/__init__.py": "",
    "methods/registry.py": """
        from toypkg.registry import Registry

        METHODS = Registry("transformation method")

        def pick(spec):
            return spec.transformation.method == "noise"      # inside the method registry: exempt
        """,
    "methods/draws.py": """
        from toypkg.strategies import STRATEGIES

        def draw(opts):
            kind = opts.mechanism
            if kind == "laplace":
                return 1
            elif kind == "gaussian":
                return 2
            elif kind == "uniform":
                return 3
            return 0

        def units(unit):
            if unit == "month":      # a chain over date units, not over parts' names: not a registry
                return 1
            elif unit == "year":
                return 2
            elif unit == "decade":
                return 3
            return 0

        def extra():
            return 0

        STRATEGIES["extra"] = extra
        """,
    "strategies.py": """
        def a(): ...
        def b(): ...
        def c(): ...

        STRATEGIES = {"a": a, "b": b, "c": c}
        SIZES = {"a": 1, "b": 2, "c": 3}     # values, not callables: not a registry
        """,
    "models.py": """
        import importlib

        _MODULES = ("toypkg.strategies", "toypkg.spec")
        _REGISTRY = {}

        def register(name):
            def add(cls):
                _REGISTRY[name] = cls
                return cls
            return add

        def scan():
            found = {}
            for name in _MODULES:
                module = importlib.import_module(name)
                for obj in vars(module).values():
                    if hasattr(obj, "name"):
                        found[obj.name] = obj
            return found

        class Model:
            def __hash__(self):
                return hash(tuple(sorted(vars(self).items())))   # not a scan of a module

            def fields(self):
                for key in vars(self).values():
                    yield key
        """,
    "engines/__init__.py": "",
    "engines/duckdb.py": """
        from toypkg.registry import Registry

        ENGINES = Registry("engine")

        class DuckDBEngine:
            def register(self, engine, name):
                if engine.name == "duckdb":      # inside engines/: not counted
                    engine.con.register(name, None)
        """,
    "cycle_a.py": "from toypkg import cycle_b\n",
    "cycle_b.py": "from toypkg import cycle_c\n",
    "cycle_c.py": "import toypkg.cycle_a\n",
    "typed_only.py": """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from toypkg import api  # annotations only: no cycle
        """,
    "long.py": "\n".join(f"x{i} = {i}" for i in range(401)) + "\n",
    "short.py": "\n".join(f"x{i} = {i}" for i in range(400)) + "\n",
}


@pytest.fixture(scope="module")
def structure_counts():
    spec = importlib.util.spec_from_file_location("structure_counts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["structure_counts"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["structure_counts"]


@pytest.fixture(scope="module")
def toy_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("toy")
    for name, text in FILES.items():
        path = root / "toypkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    (root / "toypkg" / "api.py").write_text(
        (root / "toypkg" / "api.py").read_text() + "\nfrom toypkg import typed_only\n")
    return root


def lines(sites: list[str], module: str) -> list[int]:
    return sorted(int(s.rsplit(":", 1)[1]) for s in sites if s.rsplit(":", 1)[0] == f"toypkg/{module}")


def test_transformation_method_comparisons(structure_counts, toy_root):
    counts = structure_counts.measure(toy_root, "toypkg")
    assert len(counts.method_comparisons) == 7, counts.method_comparisons
    assert {s.rsplit(":", 1)[0] for s in counts.method_comparisons} == {"toypkg/api.py", "toypkg/spec.py"}
    assert len(lines(counts.method_comparisons, "api.py")) == 6


def test_engine_branches_and_connection_reach_ins_outside_engines(structure_counts, toy_root):
    counts = structure_counts.measure(toy_root, "toypkg")
    assert len(counts.engine_branches) == 4, counts.engine_branches
    assert len(counts.connection_reach_ins) == 2, counts.connection_reach_ins
    assert all(s.startswith("toypkg/api.py:") for s in counts.engine_branches + counts.connection_reach_ins)


def test_registry_styles(structure_counts, toy_root):
    counts = structure_counts.measure(toy_root, "toypkg")
    assert set(counts.registry_styles) == {
        "the Registry helper",                              # methods/registry.py, engines/duckdb.py
        "an if/elif chain over names",                      # draws.py (kind), not the date units
        "a dict of names to callables",                     # strategies.py STRATEGIES, not SIZES
        "a dict filled by another module's import",         # draws.py STRATEGIES["extra"]
        "a list of modules imported to fill a registry",    # models.py _MODULES
        "a register decorator of its own",                  # models.py register
        "a scan of a module's members",                     # models.py vars(module), not vars(self)
    }
    assert len(counts.registry_styles["the Registry helper"]) == 2
    assert len(counts.registry_styles["an if/elif chain over names"]) == 1
    assert len(counts.registry_styles["a dict of names to callables"]) == 1
    assert len(counts.registry_styles["a scan of a module's members"]) == 1


def test_import_cycles_ignore_type_checking_imports(structure_counts, toy_root):
    counts = structure_counts.measure(toy_root, "toypkg")
    assert counts.import_cycles == [["toypkg.cycle_a", "toypkg.cycle_b", "toypkg.cycle_c"]]


def test_long_modules(structure_counts, toy_root):
    counts = structure_counts.measure(toy_root, "toypkg")
    assert counts.long_modules == [("toypkg/long.py", 401)]


def test_the_script_prints_the_table(toy_root):
    done = subprocess.run([sys.executable, str(SCRIPT), "--root", str(toy_root), "--package", "toypkg"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {line.rsplit(None, 2)[0]: line.split()[-2:] for line in done.stdout.splitlines()[2:]}
    assert rows == {
        "transformation.method string comparisons outside the method registry": ["7", "0"],
        "engine-type branches outside engines/": ["4", "0"],
        "raw-connection reach-ins outside engines/": ["2", "0"],
        "registry styles": ["7", "1"],
        "import cycles": ["1", "0"],
        "modules over 400 lines": ["1", "-"],
    }


def test_decorators_and_module_lists_over_the_registry_helper_are_the_helper(structure_counts, tmp_path):
    """A decorator that names the entry after the class and adds it to a Registry, and a Registry's
    own list of built-in modules, are the helper itself; a function merely called ``register``
    that is no decorator (it registers a table with a database) is no registry at all."""
    package = tmp_path / "toyreg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "registry.py").write_text("class Registry:\n    def __init__(self, kind, modules=()):\n"
                                        "        self.kind = kind\n")
    (package / "models.py").write_text(textwrap.dedent('''
        from toyreg.registry import Registry

        BUILTIN_MODULES = ("toyreg.a", "toyreg.b")
        MODELS = Registry("model", modules=BUILTIN_MODULES)

        def register(cls):
            return MODELS.register(cls.name)(cls)
        '''))
    (package / "frames.py").write_text(textwrap.dedent('''
        def register(engine, name, data):
            engine.con.register(name, data)
        '''))
    counts = structure_counts.measure(tmp_path, "toyreg")
    assert set(counts.registry_styles) == {"the Registry helper"}, counts.registry_styles
