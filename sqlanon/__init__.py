"""sqlanon: anonymize tables inside the database.

Modules, from the user's side inward:

* :mod:`sqlanon.api`: ``check``, ``apply``, ``anonymize``, ``compile_sql``: the verbs of the command
  line (also here, as ``sqlanon.check`` ...), with ``dp_query`` and ``dp_microaggregate`` from
  :mod:`sqlanon.methods.dp`; ``check``, ``apply`` and ``anonymize`` also take a pandas or polars
  DataFrame or an Arrow table as ``data=`` (``apply`` and ``anonymize`` then return a ``Result``);
* :mod:`sqlanon.spec`: the specification (YAML or Python objects);
* :mod:`sqlanon.domain.hierarchy`: generalization hierarchies (ARX CSV files and builders);
* :mod:`sqlanon.domain.models`: privacy models, each a per-class SQL check;
* :mod:`sqlanon.domain.metrics`: utility and risk metrics (ARX's definitions where ARX has them);
* :mod:`sqlanon.methods.generalization.evaluator`: checking one transformation on an engine;
* :mod:`sqlanon.compile`: the only code that builds SQL (sqlglot trees, rendered strictly per dialect);
* :mod:`sqlanon.outputs`: tables, views, in-place updates and portable SQL;
* :mod:`sqlanon.engines`: DuckDB and PostgreSQL behind one interface.
"""

from __future__ import annotations

from sqlanon.api import Report as Report
from sqlanon.api import anonymize as anonymize
from sqlanon.api import apply as apply
from sqlanon.api import check as check
from sqlanon.api import compile_sql as compile_sql
from sqlanon.engines import connect as connect
from sqlanon.errors import HierarchyError as HierarchyError
from sqlanon.errors import InfeasibleError as InfeasibleError
from sqlanon.errors import SpecError as SpecError
from sqlanon.errors import SqlanonError as SqlanonError
from sqlanon.errors import UnsupportedError as UnsupportedError
from sqlanon.spec import Spec as Spec
from sqlanon.spec import load_spec as load_spec
from sqlanon.spec import spec_from_dict as spec_from_dict

__all__ = [
    "HierarchyError", "InfeasibleError", "Report", "Result", "SpecError", "SqlanonError", "Spec",
    "UnsupportedError", "anonymize", "apply", "check", "compile_sql", "connect", "dp_microaggregate",
    "dp_query", "load_spec", "spec_from_dict",
]
__version__ = "0.1.0"

_NOISE = ("dp_query", "dp_microaggregate")  # loaded on first use, as in sqlanon.methods.dp


def __getattr__(name: str) -> object:
    if name in _NOISE:
        import sqlanon.methods.dp

        return getattr(sqlanon.methods.dp, name)
    if name == "Result":  # what apply and anonymize return for in-memory data; loads pyarrow
        from sqlanon.outputs.in_memory import Result

        return Result
    raise AttributeError(f"module 'sqlanon' has no attribute {name!r}")
