"""Issue 47 item 5, tsuda2005 ``error_to_target``: a 52-point subset of wine (the paper's GyrB size).

Writes ``wine_n52/features.csv`` and ``wine_n52/labels.txt`` beside this script: per class, in class
order, ``np.sort(np.random.default_rng(0).choice(rows, m, replace=False))`` with m proportional to the
class's size (17, 21, 14 of 59, 71, 48); features as the ``wine`` dataset gives them.

    python configs/papers/tsuda2005/causes/wine_n52_subset.py
"""

from pathlib import Path

import numpy as np

from kernlearn_cli.registry import datasets

SIZES = (17, 21, 14)


def subset_rows(y: np.ndarray) -> np.ndarray:
    """The subset's rows of wine (labels ``y``), class by class."""
    rng = np.random.default_rng(0)
    return np.concatenate([np.sort(rng.choice(np.flatnonzero(y == c), m, replace=False)) for c, m in enumerate(SIZES)])


def main() -> None:
    ds = datasets.get("wine").func()
    rows = subset_rows(ds.y)
    out = Path(__file__).with_name("wine_n52")
    out.mkdir(exist_ok=True)
    np.savetxt(out / "features.csv", ds.X[rows], delimiter=",", fmt="%.10g")   # wine's values have <= 5 digits
    np.savetxt(out / "labels.txt", ds.y[rows], fmt="%d")


if __name__ == "__main__":
    main()
