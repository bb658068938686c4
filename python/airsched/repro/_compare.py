# SPDX-License-Identifier: Apache-2.0
"""How the reproductions' claim checkers compare two measured values: a difference within
:data:`TIE` of the larger is a tie, and a tie is never an ordering."""

from __future__ import annotations

#: Two values within this fraction of the larger (in magnitude) are tied.
TIE = 0.01


def tied(a: float, b: float) -> bool:
    """Whether ``a`` and ``b`` differ by at most :data:`TIE` of the larger magnitude."""
    return abs(a - b) <= TIE * max(abs(a), abs(b), 1e-9)


def greater(a: float, b: float) -> bool:
    """``a`` above ``b`` by more than a tie; NaN is never greater."""
    return bool(a > b and not tied(a, b))
