"""Noise on an engine that draws it where it reads the rows (capability ``row_stream_map``: Spark).

Such an engine cannot join values drawn in sqlanon back to its rows (it declares neither
``positional_join`` nor ``stable_row_key``), so only the mechanisms whose draws ignore the values
run there (additive noise, and the uniforms PRAM applies in SQL): each partition draws its rows'
values by position (:mod:`row_stream`). The others are refused before anything is read, saying why
and what to do instead.

Such an engine has no transactions either, so a DP release charged to a ledger dataset needs the
ledger in a database of its own (``transformation.ledger``): the spend commits there first, then
the release is written; a write that fails drops what it wrote, then the spend is refunded
(:meth:`~sqlanon.methods.dp.release_budget.ReleaseBudget.charged_ahead`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.engines.row_values import schema_name
from sqlanon.engines.staging import StagingArea
from sqlanon.engines.swap import swapped_in
from sqlanon.errors import EngineError, InternalError, UnsupportedError
from sqlanon.methods.base import TableWriter
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.dp.release_budget import ReleaseBudget
from sqlanon.methods.perturbation.categorical import MAX_BRANCHES, Transitions
from sqlanon.methods.perturbation.draws import Draw
from sqlanon.methods.perturbation.options import ADDITIVE, CATEGORICAL, DP_MICRODATA, NoiseOptions

_WHY = {
    "rank_swap": "swaps each value with one of close rank, each swap depending on the swaps of "
                 "every lower rank: one pass in numpy over every value of the column",
    "condensation": "builds groups of k records and their synthetic records in numpy over every "
                    "record",
    "sampling": "draws a sample of exact size from the row numbers of the whole table",
    DP_MICRODATA: "numbers every row of the table in one order (a window over the whole table, "
                  "which runs in one task) and joins each group's noisy values back to the rows by "
                  "that numbering",
}


def refuse_unmapped(engine: Engine, opts: NoiseOptions) -> None:
    """Refuse a mechanism the engine cannot run, before anything is read or drawn."""
    caps = engine.capabilities
    if caps.positional_join or caps.stable_row_key or not caps.row_stream_map:
        return
    if opts.mechanism not in ADDITIVE + CATEGORICAL:
        joins = "" if opts.mechanism == DP_MICRODATA else \
            ", and its values would have to be joined back to their rows, which " \
            f"{engine.name} cannot do (it declares neither positional_join nor stable_row_key)"
        raise UnsupportedError(
            f"transformation.mechanism: {opts.mechanism} {_WHY.get(opts.mechanism, 'reads the values')}"
            f"{joins}; on {engine.name}, noise runs the mechanisms drawn apart from the values "
            f"({', '.join(ADDITIVE + CATEGORICAL)}): use one of them, or run {opts.mechanism} on "
            "DuckDB or PostgreSQL")
    if opts.ledger is not None and opts.ledger.ledger is None and not caps.transactional_ddl:
        raise UnsupportedError(
            f"transformation.dataset: charging the release to the ledger dataset "
            f"{opts.ledger.dataset!r} needs a transaction holding the spend, and {engine.name} has "
            "none: keep the ledger in a database of its own with transformation.ledger (a DuckDB "
            "file or a postgresql:// URL), or write the release on DuckDB or PostgreSQL")


def refuse_large_matrices(engine: Engine, opts: NoiseOptions, settings: Sequence[Transitions]) -> None:
    """Refuse transition matrices too large for SQL where their numpy draws cannot meet the rows."""
    caps = engine.capabilities
    if caps.positional_join or caps.stable_row_key:
        return
    entries = sum(int(np.count_nonzero(t.matrix)) for t in settings)
    raise UnsupportedError(
        f"transformation.attributes: the transition matrices of {opts.mechanism} have {entries} non-zero "
        f"entries, more than the {MAX_BRANCHES} applied in SQL, and {engine.name} cannot join values "
        "drawn in numpy back to its rows (it declares neither positional_join nor stable_row_key): "
        "list fewer categories, perturb fewer attributes at once, or run it on DuckDB or PostgreSQL")


def write_mapped(ds: Dataset, draw: Draw, name: str, exists: bool, tables: TableWriter,
                 budget: ReleaseBudget, release: Callable[[exp.Select], exp.Select],
                 figures: Callable[[exp.Select], dict[str, Any]]) -> dict[str, Any]:
    """One CREATE TABLE AS over the rows the engine maps to their values where it reads them
    (Spark's executors), charged ahead to ``budget``; returns ``figures`` of the mapped rows.

    ``release`` gives the released rows from the mapped ones; the figures read the same mapping
    again, which draws the same values. A failing write drops the tables it created (an
    interrupted replacement undoes itself) before the spend is refunded; a replacement that
    failed after the result took the table's place keeps the spend charged.
    """
    independent = draw.independent
    if independent is None:
        raise InternalError("a mapped write needs a draw whose noise each partition can redraw on its own")
    engine, schema = ds.engine, schema_name(ds.relation)
    in_steps = exists and tables.swaps_in_steps
    created: list[str] = []

    with StagingArea(engine) as area:
        staging = area.name() if exists and not in_steps else name

        def work() -> dict[str, Any]:
            with engine.map_row_stream(ds.relation, draw.schema, independent) as skeleton:
                released = release(skeleton)
                if not in_steps:
                    tables.create(staging, released)
                    created.append(staging)
                # read before a swap: in place, the swap replaces the table the mapping reads
                metrics = figures(skeleton)
                if in_steps:  # the mapping draws the same values again for the staged copy
                    tables.replace_in_steps(name, released)
                elif exists:
                    tables.move_into_place(staging, name, replace=True)
                return metrics

        def discard() -> None:
            for written in created:
                engine.drop(written, schema=schema)
            if in_steps and swapped_in(engine, name, schema=schema):
                raise EngineError(f"{name!r} already holds the release")

        return budget.charged_ahead(work, discard=discard)
