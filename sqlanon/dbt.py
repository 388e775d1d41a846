"""sqlanon inside a dbt Python model on dbt-duckdb (docs/dbt.md, "Python models").

dbt-duckdb runs ``def model(dbt, session)`` with ``session`` a cursor of the adapter's own DuckDB
connection and ``dbt.ref(...)`` / ``dbt.source(...)`` relations on it. The functions here run
sqlanon's verbs on that connection (:class:`~sqlanon.engines.duckdb.DuckDBEngine` over ``session``):
the input relation becomes a temporary view, the spec's ``source`` and ``output`` are replaced by
it and by a table of the run's own, and what comes back is a DuckDB relation on ``session`` that
dbt materializes as the model. Nothing is fetched into Python but what the methods themselves read.

A DP release in a pipeline is charged to the ledger once per **release key**
(:func:`release_key`): the first run with a key charges the budget and stores the release as the
table ``sqlanon_release_<hash of dataset and key>`` of the warehouse, in the spend's transaction
(with the ledger in a database of its own, ``transformation.ledger``, the spend commits first);
every later run with that key (a retry of a failed ``dbt build``) is charged nothing and gets that
same table back, never a fresh draw. Without a key, every run is charged.

::

    from sqlanon.dbt import apply, release_key

    def model(dbt, session):
        dbt.config(materialized="table")
        key = release_key(dbt.this, dbt.config.get("sqlanon_run_key"))
        return apply(session, "specs/adult_dp.yml", dbt.ref("adult"), release_key=key)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.methods.dp.amounts import PrivacyBudgetError, ReleaseAlreadyCharged
from sqlanon.spec.load import read_spec_file, spec_from_dict
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import table

if TYPE_CHECKING:
    from sqlanon.methods.dp.aggregates import Aggregate

__all__ = ["anonymize", "apply", "dp_query", "release_key", "release_table"]

RELEASE_PREFIX = "sqlanon_release_"


def release_key(this: object, run_key: object = None) -> str:
    """The release key of a model's DP release in one pipeline run: the model's relation
    (``dbt.this``: so dev and prod targets keep apart) and the run key.

    ``run_key`` names "the run": the same on every retry of it, new for the next release. Set it
    per run with a dbt var read into the model's config (``+sqlanon_run_key: "{{ var('sqlanon_run_key',
    run_started_at.strftime('%Y-%m-%d')) }}"`` in ``dbt_project.yml``; the model reads it with
    ``dbt.config.get("sqlanon_run_key")``). Without one it is the UTC date: one release per model
    and day, and a retry on the same day gives back that day's release.

    Raises:
        SpecError: an empty run key.
    """
    run = datetime.now(timezone.utc).strftime("%Y-%m-%d") if run_key is None else str(run_key)
    if not run.strip():
        raise SpecError("the run key of a release must be non-empty text", path="sqlanon_run_key")
    return f"{this}@{run}"


def release_table(dataset: str, key: str) -> str:
    """The warehouse table holding the release charged to ``dataset`` under ``key``."""
    return RELEASE_PREFIX + hashlib.sha256(f"{dataset}\0{key}".encode()).hexdigest()[:24]


def apply(session: Any, spec: Spec | Mapping[str, Any] | str | os.PathLike[str], source: Any, *,
          release_key: str | None = None, **options: Any) -> Any:
    """:func:`sqlanon.api.apply` of ``spec`` on ``source`` (a relation of ``session``, or a table
    name), returning the released rows as a relation of ``session``.

    ``release_key`` (DP releases charged to a ledger ``dataset`` only): charge once per key and
    give back the stored release on every later run with the key (see the module's docstring).
    ``options``: more arguments of :func:`sqlanon.api.apply` (``metrics``...).

    Raises:
        PrivacyBudgetError: the budget is exhausted (nothing written, nothing charged); or the key
            was charged but its stored release is gone (a fresh draw would be a free release).
        SpecError, UnsupportedError: as the spec's verb raises them.
    """
    return _run(api.apply, session, spec, source, release_key, options)


def anonymize(session: Any, spec: Spec | Mapping[str, Any] | str | os.PathLike[str], source: Any,
              **options: Any) -> Any:
    """:func:`sqlanon.api.anonymize` (the lattice search of ``transformation.search``, then the
    output) of ``spec`` on ``source``, returning the released rows as a relation of ``session``.
    ``options``: ``strategy``, ``metric``, ``time_limit``... of :func:`sqlanon.api.anonymize`."""
    return _run(api.anonymize, session, spec, source, None, options)


def dp_query(session: Any, source: Any, aggregate: Aggregate, *, epsilon: float, dataset: str,
             release_key: str | None = None, **options: Any) -> Any:
    """:func:`sqlanon.methods.dp.dp_query` on ``source``, the answer as a relation of ``session``:
    one row ``value`` for a number, one row per key for a histogram or a sum or mean per key.

    With ``release_key`` the answer is charged once per key: it is stored as a table of the
    warehouse right after its spend commits, and every later run with the key gets that table
    back. (A run killed between the two leaves the key charged without an answer: it is refused,
    since a new draw would be free; use a new key.) ``options``: ``budget_epsilon``,
    ``ledger``, ``mechanism``... of :func:`~sqlanon.methods.dp.dp_query`.
    """
    from sqlanon.methods.dp.queries import dp_query as answer

    engine = DuckDBEngine(connection=session)
    stored = None if release_key is None else release_table(dataset, release_key)
    with _input(engine, source) as name:
        try:
            result = answer(engine, name, aggregate, epsilon=epsilon, dataset=dataset,
                            release_key=release_key, **options)
        except ReleaseAlreadyCharged:
            assert stored is not None
            return _stored(session, engine, stored, release_key)
    import pyarrow as pa

    rows = result.value if isinstance(result.value, list) else [{"value": result.value}]
    data = pa.Table.from_pylist([{k: _cell(v) for k, v in r.items()} for r in rows])
    name = stored or _fresh("answer")
    engine.create_table_from_arrow(name, data, temporary=stored is None)
    return session.table(name)


# -- the run --------------------------------------------------------------------------------------

def _run(verb: Any, session: Any, spec: Any, source: Any, key: str | None,
         options: dict[str, Any]) -> Any:
    engine = DuckDBEngine(connection=session)
    data, path = _spec_data(spec)
    given = data.get("transformation") or {}
    transformation = dict(given) if isinstance(given, Mapping) else given  # else refused when read
    if key is not None and isinstance(transformation, dict):
        dataset = transformation.get("dataset")
        if not isinstance(dataset, str) or not dataset:
            raise SpecError("a release key charges a DP release to a ledger dataset: the spec needs "
                            "transformation.dataset", path="transformation.dataset",
                            source=None if path is None else str(path))
        transformation["release_key"] = key
        output = release_table(dataset, key)
    else:
        output = _fresh("release")
    with _input(engine, source) as name:
        data = {**data, "source": {"table": name}, "transformation": transformation,
                "output": {"mode": "table", "name": output, "replace": True}}
        built = spec_from_dict(data, source=None if path is None else str(path),
                               base=Path(".") if path is None else path.parent)
        try:
            verb(built, engine=engine, **options)
        except ReleaseAlreadyCharged:
            assert key is not None
            return _stored(session, engine, output, key)
    if key is not None:
        return session.table(output)
    # a table of this run: a temporary copy that goes with the session, the work table dropped
    kept = _fresh("model")
    engine.create_table_as(kept, exp.select(exp.Star()).from_(table(output)), temporary=True)
    engine.drop(output)
    return session.table(kept)


def _spec_data(spec: Any) -> tuple[dict[str, Any], Path | None]:
    """The spec as plain data, and its file (relative paths in it start at the file's folder)."""
    if isinstance(spec, Spec):
        raise SpecError("give the spec as a file path or a mapping: its source and output are "
                        "replaced by the model's input and relation", path="spec")
    if isinstance(spec, Mapping):
        return dict(spec), None
    path = Path(spec)
    data = read_spec_file(path)
    if not isinstance(data, dict):
        raise SpecError("the spec must be a mapping", source=str(path))
    return data, path


@contextlib.contextmanager
def _input(engine: DuckDBEngine, source: Any) -> Iterator[str]:
    """The model's input as a relation name of the session: a table name as it is, a relation as a
    temporary view for the time of the run."""
    if isinstance(source, str):
        yield source
        return
    if not hasattr(source, "to_view"):
        raise SpecError(f"the model's input must be a relation of the session (dbt.ref(...), "
                        f"dbt.source(...)) or a table name, got {type(source).__name__}", path="source")
    view = _fresh("input")
    source.to_view(view, replace=True)
    try:
        yield view
    finally:
        engine.drop(view, kind="VIEW")


def _stored(session: Any, engine: DuckDBEngine, name: str, key: str | None) -> Any:
    """The release stored under a key charged before; refused if it is gone."""
    if not engine.relation_exists(name):
        raise PrivacyBudgetError(
            f"the release key {key!r} was charged, but its stored release {name!r} is gone (dropped, "
            "or the run stopped between the charge and the store); a new draw under this key would "
            "be a release nobody paid for: run with a new release key (charged again)")
    return session.table(name)


def _fresh(what: str) -> str:
    return f"__sqlanon_dbt_{what}_{uuid.uuid4().hex[:12]}"


def _cell(value: Any) -> Any:
    return ", ".join(map(str, value)) if isinstance(value, (tuple, list)) else value
