"""Random streams: one independent, reproducible stream per component of a cell.

A component draws from NumPy's generator seeded by the cell's seed, the component's stream
(:data:`STREAM_CONSTRAINTS`, :data:`STREAM_EVALUATE`, :data:`STREAM_SOLVER`) and a sub-stream (an
evaluator's index): :func:`component_rng`.  What one component draws does not move another's draws.
"""

from __future__ import annotations

import numpy as np


def component_rng(seed: int, stream: int, sub: int = 0) -> np.random.Generator:
    """Independent, reproducible random stream per component: (seed, stream, sub)."""
    return np.random.default_rng([seed, stream, sub])


STREAM_CONSTRAINTS, STREAM_EVALUATE, STREAM_SOLVER = 1, 2, 3
