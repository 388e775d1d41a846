#!/usr/bin/env python3
"""Structure counts of a package, measured on its source tree (docs/architecture.md).

    python scripts/structure_counts.py [--root .] [--package sqlanon] [--json] [--verbose]

Counts, each with its goal:

* string comparisons of ``transformation.method`` outside the method registry (goal 0): a comparison
  (``==``, ``!=``, ``in``, ``not in``) of a string literal with ``<x>.transformation.method``, with
  ``t.method`` where ``t`` was bound to ``<x>.transformation``, with a name bound to either, with
  ``self.method`` inside ``class Transformation``, or with ``<r>.get("transformation").get("method")``;
* engine-type branches outside ``<package>/engines/`` (goal 0): ``<engine>.name`` (or ``.kind``,
  ``.dialect.name``) compared with an engine's name, and ``isinstance``/``hasattr``/``type`` applied
  to an engine (an expression whose last name part contains ``engine``);
* raw-connection reach-ins outside ``<package>/engines/`` (goal 0): ``<engine>.con`` (``.conn``,
  ``._con``, ``.connection``);
* registry styles (goal 1, best effort): the distinct ways names are mapped to parts: the Registry
  helper, ``register`` decorators of their own, lists of modules imported to fill a registry,
  subclass or module-member scans, dicts of three or more names to callables, and if/elif chains
  comparing one expression with three or more string literals;
* import cycles (goal 0): strongly connected groups of modules in grimp's import graph (imports under
  ``if TYPE_CHECKING:`` excluded);
* modules over 400 lines.

The AST is read rather than grepped, so comments, docstrings and strings do not count, and a
comparison split over lines counts once. The method registry (a module building
``Registry("transformation method", ...)`` or named ``methods/registry.py``) and the registry
helper's own module are exempt from the first and the style counts respectively.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ENGINE_NAMES = {"duckdb", "postgres", "postgresql", "spark", "snowflake", "bigquery", "trino", "sqlite"}
CONNECTION_ATTRIBUTES = {"con", "conn", "_con", "_conn", "connection", "_connection"}
ENGINE_TYPE_ATTRIBUTES = {"name", "kind", "engine_name"}
LONG_MODULE = 400
MIN_CHAIN = 3
DISPATCH_SUBJECTS = ("kind", "name", "mechanism", "method", "strategy", "algorithm", "builder", "mode",
                     "model", "metric", "scheme", "prefix")
"""An if/elif chain counts as a registry when what it compares is named like a part's name."""


@dataclass
class Counts:
    method_comparisons: list[str] = field(default_factory=list)
    engine_branches: list[str] = field(default_factory=list)
    connection_reach_ins: list[str] = field(default_factory=list)
    registry_styles: dict[str, list[str]] = field(default_factory=dict)
    import_cycles: list[list[str]] = field(default_factory=list)
    long_modules: list[tuple[str, int]] = field(default_factory=list)

    def rows(self) -> list[tuple[str, int, str]]:
        return [
            ("transformation.method string comparisons outside the method registry",
             len(self.method_comparisons), "0"),
            ("engine-type branches outside engines/", len(self.engine_branches), "0"),
            ("raw-connection reach-ins outside engines/", len(self.connection_reach_ins), "0"),
            ("registry styles", len(self.registry_styles), "1"),
            ("import cycles", len(self.import_cycles), "0"),
            (f"modules over {LONG_MODULE} lines", len(self.long_modules), "-"),
        ]

    def as_json(self) -> dict:
        return {"method_comparisons": self.method_comparisons, "engine_branches": self.engine_branches,
                "connection_reach_ins": self.connection_reach_ins,
                "registry_styles": self.registry_styles, "import_cycles": self.import_cycles,
                "long_modules": [{"module": m, "lines": n} for m, n in self.long_modules],
                "counts": {name: n for name, n, _ in self.rows()}}


# --- expressions ------------------------------------------------------------------------------------

def name_parts(node: ast.AST) -> list[str]:
    """``a.b.c`` -> ["a", "b", "c"]; calls and subscripts in between end the chain (empty list)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return []


def is_engine(node: ast.AST) -> bool:
    """An expression naming an engine: its last name part contains ``engine``."""
    parts = name_parts(node)
    return bool(parts) and "engine" in parts[-1].lower()


def string_literals(node: ast.AST) -> list[str]:
    """The string literal, or the literals of a tuple/list/set of them; else []."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
        values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return values if len(values) == len(node.elts) else []
    return []


def compared_pairs(node: ast.Compare) -> Iterator[tuple[ast.AST, ast.AST]]:
    left = node.left
    for right in node.comparators:
        yield left, right
        left = right


def get_call_key(node: ast.AST) -> tuple[ast.AST, str] | None:
    """``x.get("key")`` or ``x["key"]`` -> (x, "key")."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.func.value, node.args[0].value
    if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)):
        return node.value, node.slice.value
    return None


# --- per-module visitor ------------------------------------------------------------------------------

def is_decorator(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``function`` is a decorator (it returns what it was given, or a call's result) or a
    decorator factory (it returns a function it defines)."""
    if not function.args.args:
        return False
    given = {function.args.args[0].arg} | {n.name for n in ast.walk(function)
                                           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                                           and n is not function}
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return) and n.value is not None]
    return any(isinstance(r.value, ast.Name) and r.value.id in given or isinstance(r.value, ast.Call)
               for r in returns)


def delegates_to_registry(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``function`` adds to a module-level registry (``NAMES.register(...)``, ``NAMES.add(...)``):
    a decorator that derives the name from the class, over the Registry helper, is not a style of its own."""
    for node in ast.walk(function):
        func = node.func if isinstance(node, ast.Call) else None
        while isinstance(func, ast.Call):
            func = func.func
        if isinstance(func, ast.Attribute) and func.attr in ("register", "add") \
                and isinstance(func.value, ast.Name) and func.value.id.isupper():
            return True
    return False


def registry_module_lists(tree: ast.AST) -> set[str]:
    """Names passed as ``modules=`` to a ``Registry(...)``: the helper's own list of built-in modules."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and name_parts(node.func)[-1:] == ["Registry"]:
            out |= {k.value.id for k in node.keywords
                    if k.arg in ("modules", "packages") and isinstance(k.value, ast.Name)}
    return out


class ModuleScan(ast.NodeVisitor):
    """One module's findings. Name bindings are tracked per function (and at module level)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.method_comparisons: list[str] = []
        self.engine_branches: list[str] = []
        self.connection_reach_ins: list[str] = []
        self.styles: dict[str, list[str]] = {}
        self.registry_module_lists: set[str] = set()
        self.imports_modules = False
        self.scopes: list[dict[str, str]] = [{}]  # name -> "transformation" | "method"
        self.classes: list[str] = []
        self.imported: set[str] = set()
        self.elifs: set[int] = set()  # ids of the If nodes that continue a chain already looked at

    def at(self, node: ast.AST) -> str:
        return f"{self.where}:{getattr(node, 'lineno', 0)}"

    def style(self, name: str, node: ast.AST) -> None:
        self.styles.setdefault(name, []).append(self.at(node))

    # what an expression is
    def kind(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            for scope in reversed(self.scopes):
                if node.id in scope:
                    return scope[node.id]
            return None
        if isinstance(node, ast.Attribute):
            if node.attr == "transformation":
                return "transformation"
            if node.attr == "method":
                base = node.value
                if self.kind(base) == "transformation":
                    return "method"
                if (isinstance(base, ast.Name) and base.id == "self" and self.classes
                        and self.classes[-1] == "Transformation"):
                    return "method"
            return None
        keyed = get_call_key(node)
        if keyed is not None:
            owner, key = keyed
            if key == "transformation":
                return "transformation"
            if key == "method" and self.kind(owner) == "transformation":
                return "method"
        return None

    # scopes
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        scope: dict[str, str] = {}
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            if annotation.split(".")[-1].strip("'\"") == "Transformation":
                scope[arg.arg] = "transformation"
        if node.name == "register" and not self.classes and is_decorator(node) \
                and not delegates_to_registry(node):
            self.style("a register decorator of its own", node)
        self.scopes.append(scope)
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node.name)
        self.generic_visit(node)
        self.classes.pop()

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        value_kind = self.kind(node.value)
        for target in node.targets:
            if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                    and target.value.id in self.imported and target.value.id.isupper()):
                self.style("a dict filled by another module's import", node)
            if isinstance(target, ast.Name):
                if value_kind:
                    self.scopes[-1][target.id] = value_kind
                else:
                    self.scopes[-1].pop(target.id, None)
                if len(self.scopes) == 1:
                    self.module_level_assignment(target.id, node.value, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        if isinstance(node.target, ast.Name) and node.value is not None:
            value_kind = self.kind(node.value)
            if value_kind:
                self.scopes[-1][node.target.id] = value_kind
            if len(self.scopes) == 1:
                self.module_level_assignment(node.target.id, node.value, node)

    def module_level_assignment(self, name: str, value: ast.AST, node: ast.AST) -> None:
        if name.upper() == name and name.endswith("MODULES") and string_literals(value) \
                and name not in self.registry_module_lists:
            self.style("a list of modules imported to fill a registry", node)
        if isinstance(value, ast.Dict) and len(value.keys) >= MIN_CHAIN:
            keys = [k for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            callables = [v for v in value.values if isinstance(v, (ast.Name, ast.Attribute, ast.Lambda))]
            if len(keys) == len(value.keys) and len(callables) == len(value.values):
                self.style("a dict of names to callables", node)

    # the counts
    def visit_Compare(self, node: ast.Compare) -> None:
        for (left, right), op in zip(compared_pairs(node), node.ops):
            if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                continue
            for a, b in ((left, right), (right, left)):
                if self.kind(a) == "method" and string_literals(b):
                    self.method_comparisons.append(self.at(node))
                    break
                if self.is_engine_type(a) and set(string_literals(b)) & ENGINE_NAMES:
                    self.engine_branches.append(self.at(node))
                    break
                if (isinstance(a, ast.Call) and isinstance(a.func, ast.Name) and a.func.id == "type"
                        and a.args and is_engine(a.args[0])):
                    self.engine_branches.append(self.at(node))
                    break
            else:
                continue
            break
        self.generic_visit(node)

    def is_engine_type(self, node: ast.AST) -> bool:
        parts = name_parts(node)
        if len(parts) < 2 or parts[-1] not in ENGINE_TYPE_ATTRIBUTES:
            return False
        owner = parts[:-1]
        if owner[-1] == "dialect":
            owner = owner[:-1]
        return bool(owner) and "engine" in owner[-1].lower()

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in ("isinstance", "hasattr") and node.args and is_engine(node.args[0]):
                self.engine_branches.append(self.at(node))
            if func.id == "Registry":
                self.style("the Registry helper", node)
        if isinstance(func, ast.Attribute) and func.attr == "__subclasses__":
            self.style("a scan of subclasses", node)
        if isinstance(func, ast.Attribute) and func.attr == "getmembers":
            self.style("a scan of a module's members", node)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        # for obj in vars(module).values(): ... (not vars(self), which reads an instance's fields)
        it = node.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
                and it.func.attr in ("values", "items") and isinstance(it.func.value, ast.Call)
                and isinstance(it.func.value.func, ast.Name) and it.func.value.func.id == "vars"
                and it.func.value.args and not (isinstance(it.func.value.args[0], ast.Name)
                                                and it.func.value.args[0].id == "self")):
            self.style("a scan of a module's members", node)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.imported.update(a.asname or a.name for a in node.names)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in CONNECTION_ATTRIBUTES and is_engine(node.value):
            self.connection_reach_ins.append(self.at(node))
        self.generic_visit(node)

    @staticmethod
    def dispatch_subject(node: ast.AST) -> str | None:
        parts = name_parts(node)
        if parts and parts[-1].lower().lstrip("_").endswith(DISPATCH_SUBJECTS):
            return ast.dump(node)
        return None

    def visit_If(self, node: ast.If) -> None:
        subject, names, branch = None, 0, node
        while True:
            test = branch.test
            compared = None
            if (isinstance(test, ast.Compare) and len(test.ops) == 1
                    and isinstance(test.ops[0], (ast.Eq, ast.In))):
                if string_literals(test.comparators[0]):
                    compared = self.dispatch_subject(test.left)
                elif string_literals(test.left):
                    compared = self.dispatch_subject(test.comparators[0])
            if compared is None or (subject is not None and compared != subject):
                break
            subject, names = compared, names + 1
            if len(branch.orelse) == 1 and isinstance(branch.orelse[0], ast.If):
                branch = branch.orelse[0]
            else:
                break
        if names >= MIN_CHAIN and id(node) not in self.elifs:
            self.style("an if/elif chain over names", node)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            self.elifs.add(id(node.orelse[0]))
        self.generic_visit(node)


# --- the tree ------------------------------------------------------------------------------------------

def python_files(package_dir: Path) -> list[Path]:
    return sorted(p for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts)


def is_method_registry(path: Path, tree: ast.AST) -> bool:
    if path.name == "registry.py" and path.parent.name == "methods":
        return True
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Registry"
                and node.args and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).endswith("method")):
            return True
    return False


def import_cycles(root: Path, package: str) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan's algorithm over grimp's graph)."""
    import grimp

    sys.path.insert(0, str(root))
    try:
        graph = grimp.build_graph(package, exclude_type_checking_imports=True, cache_dir=None)
    finally:
        sys.path.remove(str(root))
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, []))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def measure(root: Path, package: str, *, cycles: bool = True) -> Counts:
    package_dir = root / package
    engines_dir = package_dir / "engines"
    counts = Counts()
    for path in python_files(package_dir):
        where = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > LONG_MODULE:
            counts.long_modules.append((where, lines))
        tree = ast.parse(text, filename=where)
        scan = ModuleScan(where)
        scan.registry_module_lists = registry_module_lists(tree)
        scan.visit(tree)
        if not is_method_registry(path, tree):
            counts.method_comparisons += scan.method_comparisons
        if engines_dir not in path.parents:
            counts.engine_branches += scan.engine_branches
            counts.connection_reach_ins += scan.connection_reach_ins
        if path != package_dir / "registry.py":
            for style, sites in scan.styles.items():
                counts.registry_styles.setdefault(style, []).extend(sites)
    if cycles:
        counts.import_cycles = import_cycles(root, package)
    return counts


def table(counts: Counts, verbose: bool) -> str:
    rows = counts.rows()
    width = max(len(name) for name, _, _ in rows)
    out = [f"{'count'.ljust(width)}  {'now':>5}  goal", f"{'-' * width}  {'-' * 5}  ----"]
    for name, n, goal in rows:
        out.append(f"{name.ljust(width)}  {n:>5}  {goal}")
    if verbose:
        details = [("transformation.method comparisons", counts.method_comparisons),
                   ("engine-type branches", counts.engine_branches),
                   ("raw-connection reach-ins", counts.connection_reach_ins)]
        for title, sites in details:
            if sites:
                out += ["", f"{title}:", *(f"  {s}" for s in sites)]
        if counts.registry_styles:
            out += ["", "registry styles:"]
            for style, sites in sorted(counts.registry_styles.items()):
                shown = ", ".join(sites[:6]) + (f", ... ({len(sites)} sites)" if len(sites) > 6 else "")
                out.append(f"  {style}: {shown}")
        if counts.import_cycles:
            out += ["", "import cycles:", *(f"  {' <-> '.join(g)}" for g in counts.import_cycles)]
        if counts.long_modules:
            out += ["", f"modules over {LONG_MODULE} lines:",
                    *(f"  {m} ({n})" for m, n in sorted(counts.long_modules, key=lambda x: -x[1]))]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]),
                        help="the folder holding the package (default: this repository)")
    parser.add_argument("--package", default="sqlanon")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument("--verbose", "-v", action="store_true", help="list where each count comes from")
    args = parser.parse_args(argv)
    counts = measure(Path(args.root).resolve(), args.package)
    print(json.dumps(counts.as_json(), indent=2) if args.json else table(counts, args.verbose))
    return 0


if __name__ == "__main__":
    sys.exit(main())
