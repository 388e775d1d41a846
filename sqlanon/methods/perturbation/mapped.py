"""Noise on an engine that draws it where it reads the rows (capability ``row_stream_map``: Spark).

Such an engine cannot join values drawn in sqlanon back to its rows (it declares neither
``positional_join`` nor ``stable_row_key``), so only the mechanisms whose draws ignore the values
run there (additive noise, and the uniforms PRAM applies in SQL): each partition draws its rows'
values by position (:mod:`row_stream`). The others are refused before anything is read, saying why
and what to do instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sqlanon.engines.base import Engine
from sqlanon.errors import UnsupportedError
from sqlanon.methods.perturbation.categorical import MAX_BRANCHES, Transitions
from sqlanon.methods.perturbation.options import ADDITIVE, CATEGORICAL, DP_MICRODATA, NoiseOptions

_WHY = {
    "rank_swap": "swaps each value with one of close rank, each swap depending on the swaps of "
                 "every lower rank: one pass in numpy over every value of the column",
    "condensation": "builds groups of k records and their synthetic records in numpy over every "
                    "record",
    "sampling": "draws a sample of exact size from the row numbers of the whole table",
    DP_MICRODATA: "writes its release in transactions",
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
    if opts.ledger is not None and not caps.transactional_ddl:
        raise UnsupportedError(
            f"transformation.dataset: charging the release to the ledger dataset "
            f"{opts.ledger.dataset!r} writes it in the spend's transaction, and {engine.name} has no "
            "transactions: leave out dataset (and charge the release to a ledger yourself), or "
            "write the release on DuckDB or PostgreSQL")


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
