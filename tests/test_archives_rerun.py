"""Archived cells rerun give their records' bits (issue 54 item 5).

For every paper of ``configs/papers/*/study.yaml``, its two cheapest archived cells (the cheapest of its
two cheapest experiments, :func:`kernlearn_cli.reproduce.verify.cheapest_of_paper`) are rerun here, after the cells of
the papers before it, and once more each alone in a fresh process (``benchmarks/checks/verify_archives.py``):

- the two reruns give the same bits (a cell's record does not depend on the process that computes it:
  what ran before it, which libraries were loaded yet -- the cause of zhang2012's spambase mismatch);
- each rerun is the archived result to the archives' rounding rule (:func:`kernlearn_cli.archive.differing`);
- and to the bit wherever the record was made on this kind of machine
  (:func:`kernlearn_cli.reproduce.verify.machine_change`: the same library versions, BLAS CPU kernels and numpy SIMD
  targets).  Records made on another kind of machine (today every archived record: they name OpenBLAS's
  Haswell kernels, this machine runs SkylakeX's, or they are too old to name any) are listed, not
  failed: their last bits are the other CPU's.

Compared: every key of the record but its provenance, timings and ``index`` (the module docstring of
:mod:`kernlearn_cli.reproduce.verify`).
"""

import json
import os
import subprocess
import sys

import pytest
from helpers import REPO, has_mirror

from kernlearn_cli.reproduce import verify as va

PAPERS = sorted(p.parent.name for p in (REPO / "configs" / "papers").glob("*/study.yaml"))


@pytest.fixture(scope="module")
def in_repo():
    """The studies name their configs relative to the repository (``configs/papers/...``)."""
    before = os.getcwd()
    os.chdir(REPO)
    yield
    os.chdir(before)


def alone(job, out) -> dict:
    """The cell rerun alone in a fresh process; its record as archived."""
    res = subprocess.run([sys.executable, str(REPO / "benchmarks" / "checks" / "verify_archives.py"), job.paper,
                          "--experiment", job.experiment, "--per-experiment", "1", "--max-seconds", "600",
                          "--out", str(out), "--json", str(out / "outcome.json")],
                         capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])})
    assert res.returncode in (0, 1), res.stderr[-2000:]
    (cell,) = json.loads((out / "outcome.json").read_text())["cells"]
    assert cell["cell"] == job.cell.id and cell["status"] != "failed", cell
    record = json.loads((out / job.paper / job.experiment / job.cell.id / "record.json").read_text())
    from kernlearn_cli.reproduce.layout import archived_record

    return archived_record(record, out / job.paper / job.experiment / job.cell.id, job.history)


@pytest.mark.slow
@pytest.mark.skipif(not has_mirror(), reason="the studies' datasets come from the mirror")
@pytest.mark.parametrize("paper", PAPERS)
def test_archived_cells_rerun_to_the_same_bits(paper, in_repo, tmp_path, capsys):
    jobs = va.cheapest_of_paper(paper, 2)
    assert len(jobs) == 2, f"{paper}: fewer than two experiments with archived cells"
    other_machine = []
    for job in jobs:
        here = va.rerun(job, tmp_path / "here")
        assert here.status != "failed", here.error
        fresh = alone(job, tmp_path / f"alone_{job.experiment}")
        assert va.canonical(fresh) == va.canonical(here.record), (
            f"{paper}/{job.experiment} {job.cell.id}: other bits alone in a fresh process: "
            f"{va.differences(here.record, fresh)[:5]}")
        assert here.status in ("identical", "rounding"), (
            f"{paper}/{job.experiment} {job.cell.id}: the rerun differs from its record beyond rounding: "
            f"{here.differences[:5]}")
        if here.machine is None:
            assert here.status == "identical", (
                f"{paper}/{job.experiment} {job.cell.id}: archived on this kind of machine, other bits: "
                f"{here.differences[:5]}")
        elif here.status != "identical":
            other_machine.append(f"{job.experiment} {job.cell.id}: {here.machine}")
    with capsys.disabled():
        if other_machine:
            print(f"\n{paper}: not bit-identical, archived on another kind of machine: " + "; ".join(other_machine))
