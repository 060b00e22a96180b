"""A cell's bits do not depend on the process that runs it (issue 54 item 5).

scikit-learn and its OpenMP runtime are imported by the first cell that needs them; before
:func:`kernlearn_cli.threads.cell_threads`, ``threadpool_limits`` (entered before the import) did not
limit that runtime, so the first k-means of a process ran with ``OMP_NUM_THREADS`` (or one thread per
core) and the later ones with one: zhang2012's archived Nyström cells differed in their last bits, and a
spambase cell in the C its cross-validation chose, depending on whether the cell came first in its worker.
"""

import json

import numpy as np
import pytest
import yaml
from helpers import kernlearn

#: 800 generated points (no mirror, and no scikit-learn loader that would import the OpenMP runtime
#: before the k-means), in four k-means chunks of 256 points summed per thread: with more than one
#: OpenMP thread the landmarks' last bits move.
CONFIG = {"name": "threads", "seed": 0, "dataset": {"name": "double_spiral", "n": 800},
          "constraints": {"name": "labeled_subset", "count": 100},
          "solver": {"name": "nystrom", "landmarks": 30, "landmark_method": "kmeans"},
          "evaluate": [{"name": "alignment"}]}


def run_alone(tmp_path, name: str, env: dict) -> tuple[dict, np.ndarray]:
    from kernlearn_cli.factors import read_factors

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    res = kernlearn("run", cfg, "--out", tmp_path / name, env=env)
    assert res.returncode == 0, res.stderr
    (cell,) = [p for p in (tmp_path / name).iterdir() if (p / "record.json").is_file()]
    return json.loads((cell / "record.json").read_text()), read_factors(cell / "factors.h5")["G"]


@pytest.mark.slow
def test_the_first_kmeans_of_a_process_runs_at_the_cells_thread_count(tmp_path):
    """The cell alone in a fresh process (the first k-means loads libgomp), once where the machine's
    default would be four OpenMP threads and once one: the same landmarks, factor and metrics to the bit."""
    one, G_one = run_alone(tmp_path, "one", {"OMP_NUM_THREADS": "1", "KERNLEARN_BLAS_THREADS": "1"})
    four, G_four = run_alone(tmp_path, "four", {"OMP_NUM_THREADS": "4", "KERNLEARN_BLAS_THREADS": "1"})
    assert np.array_equal(G_one, G_four)
    assert one["metrics"] == four["metrics"]
    assert one["provenance"]["blas_threads"] == four["provenance"]["blas_threads"] == 1
