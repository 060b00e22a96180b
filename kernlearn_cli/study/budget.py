"""Sizing a study to a compute budget: how many labelings each group gets when every group gets the
same extra time (:func:`labelings_by_budget`)."""

from __future__ import annotations

import math


def labelings_by_budget(costs: dict, most: dict, budget: float) -> tuple[float, dict]:
    """Labelings per group when every group gets the same extra time (a study sized to a budget).

    A group g whose first labeling cost c_g seconds gets

        L_g = min(P_g, 1 + ⌊T / c_g⌋)

    labelings (P_g = ``most[g]``), with one T for all groups: the largest for which the extra
    labelings fit, Σ_g (L_g − 1)·c_g ≤ ``budget``.  Cheap groups reach P_g, costly ones keep few.

    Parameters
    ----------
    costs : dict
        c_g > 0, the measured cost of group g's first labeling (seconds).
    most : dict
        P_g ≥ 1, the most labelings group g may get (the paper's count, or a cap).
    budget : float
        Seconds left for the labelings after the first.

    Returns
    -------
    T : float
        The common extra time: the smallest T giving the returned L (``inf`` when every group
        reaches P_g within the budget).
    L : dict
        L_g for every group of ``costs``.
    """
    if any(c <= 0 for c in costs.values()):
        raise ValueError("every group's cost must be > 0")
    # Σ_g (L_g − 1)·c_g is a step function of T, rising at T = k·c_g (k = 1 … P_g − 1).
    steps = sorted({k * c for g, c in costs.items() for k in range(1, most[g])})

    def counts(t: float) -> dict:
        return {g: most[g] if t == math.inf else min(most[g], 1 + math.floor(t / c * (1 + 1e-12)))
                for g, c in costs.items()}

    def spent(L: dict) -> float:
        return sum((L[g] - 1) * c for g, c in costs.items())

    best = 0.0
    for t in steps:
        if spent(counts(t)) > budget:
            break
        best = t
    else:
        best = math.inf
    return best, counts(best)
