"""The two-dimensional Newton–Raphson solver of ARX's population models (``de.linearbits.newtonraphson``).

The schedule is ARX's deterministic configuration (``ARXSolverConfiguration``): accuracy 1e-6 on
both equations (|f₁| ≤ 1e-6 and |f₂| ≤ 1e-6), at most 1000 steps per start point, the given start
point first and then the 16 points of the grid {0, 0.33, 0.66, 0.99}², a try ends when a constraint
fails, the iterate is NaN or the steps are used up; the search stops for good one step after the
last grid point is taken. ARX also stops after 100 ms per try and 1 s in all; those wall-clock
limits are left out here, so the result does not depend on the machine's speed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

Vector = tuple[float, float]
Matrix = tuple[float, float, float, float]  # (∂f₁/∂x, ∂f₁/∂y, ∂f₂/∂x, ∂f₂/∂y)
System = Callable[[float, float], tuple[Vector, Matrix]]

ACCURACY = 1e-6
ITERATIONS_PER_TRY = 1000


def _grid() -> tuple[Vector, ...]:
    steps, d = [], 0.0
    while d < 1.0:  # the same float accumulation as ARX (0.33 added three times)
        steps.append(d)
        d += 0.33
    return tuple((a, b) for a in steps for b in steps)


START_GRID: tuple[Vector, ...] = _grid()


@dataclass(frozen=True)
class Solution:
    x: float
    y: float
    converged: bool
    iterations: int


def solve(system: System, start: Vector, constraint: Callable[[float, float], bool] | None = None,
          accuracy: float = ACCURACY, per_try: int = ITERATIONS_PER_TRY,
          grid: tuple[Vector, ...] = START_GRID,
          domain: Callable[[float, float], bool] | None = None) -> Solution:
    """A root of ``system`` (values and Jacobian at a point), or a NaN solution if none was found.

    ``constraint`` ends a try when an iterate fails it (ARX). ``domain`` (not in ARX) damps instead:
    a step that would leave the domain is halved until it stays inside; the try ends when 60 halvings
    do not bring it inside or the iterate stops moving.
    """
    total_limit = (len(grid) + 1) * per_try
    total = 0
    offset = 0
    first = True
    while total <= total_limit:
        if first:
            x, y = start
            first = False
        else:
            x, y = grid[offset]
            offset += 1
        iterations = 0
        while True:
            total += 1
            (f1, f2), (a, b, c, d) = system(x, y)
            if abs(f1) <= accuracy and abs(f2) <= accuracy:
                return Solution(x, y, True, total)
            nx, ny = _step(x, y, f1, f2, a, b, c, d)
            if domain is not None and domain(x, y):
                nx, ny = _damped(domain, x, y, nx, ny)
            x, y = nx, ny
            if offset == len(grid):
                return Solution(math.nan, math.nan, False, total)
            if constraint is not None and not constraint(x, y):
                break
            if math.isnan(x) or math.isnan(y) or iterations >= per_try:
                break
            iterations += 1
    return Solution(math.nan, math.nan, False, total)


def _step(x: float, y: float, f1: float, f2: float, a: float, b: float, c: float, d: float) -> Vector:
    # Java's double arithmetic: a zero determinant gives ±Infinity/NaN, not an exception.
    det = a * d - b * c
    if det == 0.0 or math.isnan(det):
        return math.nan, math.nan
    s = 1.0 / det
    i1, i2, i3, i4 = d * s, -b * s, -c * s, a * s
    return x - (i1 * f1 + i2 * f2), y - (i3 * f1 + i4 * f2)


def _damped(domain: Callable[[float, float], bool], x: float, y: float, nx: float, ny: float) -> Vector:
    """The step halved until it stays in the domain; NaN (the try ends) when it cannot move."""
    if math.isnan(nx) or math.isnan(ny):
        return nx, ny
    for _ in range(60):
        if domain(nx, ny):
            return (nx, ny) if (nx, ny) != (x, y) else (math.nan, math.nan)
        nx, ny = x + (nx - x) / 2.0, y + (ny - y) / 2.0
    return math.nan, math.nan
