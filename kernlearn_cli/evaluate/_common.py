import numpy as np

from ..errors import DataError


def require_labels(ds, evaluator: str) -> np.ndarray:
    if ds.y is None:
        raise DataError(f"evaluator '{evaluator}' needs class labels, but dataset '{ds.name}' has none.")
    return ds.y


def seed_from(rng: np.random.Generator) -> int:
    """A 32-bit seed for scikit-learn estimators, drawn from the cell's generator."""
    return int(rng.integers(0, 2**31 - 1))
