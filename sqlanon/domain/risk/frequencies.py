"""Sample and population frequencies per class as sdcMicro's ``freqCalc`` counts them.

Without missing values a class's sample frequency fk is its number of records and its estimated
population frequency Fk the sum of their sampling weights. A missing QI value (NULL) is a wildcard
in sdcMicro: a class with missing values also counts the records of every class that agrees with it
on the values both have, and a complete class counts the records of the classes with missing values
that match it:

- a class with missing values gets ``α·`` the records of each other such class compatible with it
  (equal wherever both have a value), plus the records of each complete class equal to it on its
  non-missing QIs;
- a complete class gets ``α·`` the records of each class with missing values matching it;
- a class missing every QI gets every record (fk = n, Fk = Σ weights);
- with a single QI the complete classes get ``α·`` the records of the missing class, which gets all.

α (sdcMicro's ``alpha``, default 1) is the weight of a wildcard match. The same sums are taken of
the weights for Fk. All sums use the counts before any adjustment, as sdcMicro does.
"""

from __future__ import annotations

import numpy as np

_CELLS = 20_000_000  # comparisons held in memory at once


def frequencies(codes: np.ndarray, count: np.ndarray, weight: np.ndarray | None, alpha: float = 1.0
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(fk, Fk)`` per class, classes given by their QI ``codes`` (-1 for a missing value)."""
    fk = count.astype(np.float64)
    Fk = fk.copy() if weight is None else weight.astype(np.float64)
    missing = codes < 0
    partial = missing.any(axis=1)
    if not partial.any():
        return fk, Fk
    if codes.shape[1] == 1:
        out_f, out_F = fk.copy(), Fk.copy()
        out_f[~partial] += alpha * fk[partial].sum()
        out_F[~partial] += alpha * Fk[partial].sum()
        out_f[partial], out_F[partial] = fk.sum(), Fk.sum()
        return out_f, out_F
    na = np.flatnonzero(partial)
    complete = np.flatnonzero(~partial)
    add_f, add_F = np.zeros_like(fk), np.zeros_like(Fk)
    all_missing = missing[na].all(axis=1)
    block = max(1, _CELLS // (max(len(na), len(complete)) * codes.shape[1]))
    for start in range(0, len(na), block):
        rows = na[start:start + block]
        c_rows, m_rows = codes[rows][:, None, :], missing[rows][:, None, :]
        # other classes with missing values: compatible where both have a value
        ok = (m_rows | missing[na][None, :, :] | (c_rows == codes[na][None, :, :])).all(axis=2)
        ok[np.arange(len(rows)), np.arange(start, start + len(rows))] = False
        add_f[rows] += alpha * (ok @ fk[na])
        add_F[rows] += alpha * (ok @ Fk[na])
        # complete classes equal on the class's non-missing values (none for an all-missing class)
        match = (m_rows | (c_rows == codes[complete][None, :, :])).all(axis=2)
        match[all_missing[start:start + len(rows)]] = False
        add_f[rows] += match @ fk[complete]
        add_F[rows] += match @ Fk[complete]
        add_f[complete] += alpha * (fk[rows] @ match)
        add_F[complete] += alpha * (Fk[rows] @ match)
    out_f, out_F = fk + add_f, Fk + add_F
    whole = na[all_missing]
    out_f[whole], out_F[whole] = fk.sum(), Fk.sum()
    return out_f, out_F
