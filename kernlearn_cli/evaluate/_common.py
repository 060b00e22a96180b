import numpy as np

from ..errors import ConfigError


def require_labels(ds, evaluator: str) -> np.ndarray:
    """The labels an evaluator scores against (:meth:`~kernlearn_cli.types.Dataset.labels`)."""
    return ds.labels(f"evaluator '{evaluator}'")


def seed_from(rng: np.random.Generator) -> int:
    """A 32-bit seed for scikit-learn estimators, drawn from the cell's generator."""
    return int(rng.integers(0, 2**31 - 1))


def labeled_split(constraints, n: int, ds, evaluator: str) -> tuple[np.ndarray, np.ndarray]:
    """(labeled, test) indices: the points in the constraints, and all the others."""
    from ..constraints.labeled import labeled_indices

    lab = labeled_indices(constraints)
    if lab.size and (lab[0] < 0 or lab[-1] >= n):
        raise ConfigError(f"evaluate {evaluator}: the constraints index points outside 0..{n - 1}; they do "
                          f"not belong to dataset '{ds.name}'.")
    if lab.size == 0:
        raise ConfigError(f"evaluate {evaluator}: the constraint set is empty, so there is no labeled point to "
                          "train on; use constraints such as labeled_subset or neighbor_triplets.")
    test = np.setdiff1d(np.arange(n), lab)
    if test.size == 0:
        raise ConfigError(f"evaluate {evaluator}: every one of the {n} points of dataset '{ds.name}' is labeled "
                          "by the constraints, so there is nothing to test on; use a labeled subset "
                          "(labeled_subset with count < n or fraction < 1, or neighbor_triplets with fraction < 1).")
    return lab, test
