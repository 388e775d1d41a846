"""The search's load through Arrow, for a frequency table of text keys and counts only.

Factorizing the fetched keys in Python costs a dictionary look-up per row and column; Arrow's
dictionary encoding numbers them in C, in the same order of first appearance (NULL a value of its
own), and only the distinct keys become Python objects.
"""

from __future__ import annotations

import numpy as np
from sqlglot import exp

from sqlanon.domain.factorize import code_dtype
from sqlanon.engines.base import Engine


def fetch_factorized(engine: Engine, query: exp.Select, keys: list[str], count: str
                     ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """The ``count`` column (integers) of ``query``, and per column of ``keys`` its codes and distinct
    values as :func:`~sqlanon.domain.factorize.factorize_text` gives them, the codes in the narrowest
    type holding them (:func:`~sqlanon.domain.factorize.code_dtype`; capability ``arrow_in``)."""
    from sqlanon.domain.arrow_buffers import compute, integers  # imports pyarrow

    data = engine.fetch_arrow(query)
    counts = np.asarray(integers(data.column(count).combine_chunks()), dtype=np.int64)
    factorized = []
    for name in keys:
        encoded = compute("dictionary_encode", data.column(name).combine_chunks(), encode_nulls=True)
        distinct = np.empty(len(encoded.dictionary), dtype=object)
        distinct[:] = encoded.dictionary.to_pylist()
        factorized.append((integers(encoded.indices).astype(code_dtype(len(distinct))), distinct))
    return counts, factorized
