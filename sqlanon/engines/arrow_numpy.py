"""An Arrow table as numpy columns, in the form DuckDB's ``fetchnumpy`` gives them.

Numbers and booleans become arrays of their own type, text an object array of ``str``; a column
with NULLs becomes a masked array (its NULLs masked). Other types (decimals, dates, ...) become the
array of their Python values that a list of rows gives, with ``None`` for NULL and integral decimals
as ``int``, as :meth:`Engine.fetch_numpy` builds it from rows.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


def plain(value: Any) -> Any:
    """``Decimal`` as ``int`` when integral, else ``float``, as the other engines return numbers."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def column_numpy(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """One column (see the module)."""
    import numpy as np
    import pyarrow as pa

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    kind = array.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        if not array.null_count:
            return array.to_numpy(zero_copy_only=False)
        filled = array.fill_null(pa.scalar(False if pa.types.is_boolean(kind) else 0, kind))
        return np.ma.masked_array(filled.to_numpy(zero_copy_only=False),
                                  mask=array.is_null().to_numpy(zero_copy_only=False))
    values = np.empty(len(array), dtype=object)
    values[:] = array.to_pylist()
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return np.ma.masked_array(values, mask=array.is_null().to_numpy(zero_copy_only=False)) \
            if array.null_count else values
    return np.asarray([plain(v) for v in values]) if len(values) else values


def table_numpy(data: pa.Table) -> dict[str, np.ndarray]:
    """Each column of ``data`` by name."""
    return {name: column_numpy(data.column(i)) for i, name in enumerate(data.column_names)}
