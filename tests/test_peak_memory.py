"""resources.PeakMemory: the peak of a block, not of the process's past."""

import json
import warnings

import numpy as np
import pytest

from kernlearn_cli.resources import PeakMemory, _reset_high_water_mark, size


@pytest.mark.slow
def test_peak_memory_sees_a_block_allocation_and_forgets_the_past():
    if not _reset_high_water_mark():
        pytest.skip("no /proc/self/clear_refs: the high-water mark cannot be reset here")
    big = np.ones(50_000_000)                 # 400 MB before the block
    del big
    with PeakMemory() as mem:
        a = np.ones(25_000_000)               # 200 MB inside it
        a[::512] += 1.0
        del a
    assert mem.reset
    assert 0.18e9 <= mem.added_bytes <= 0.3e9, mem.added_bytes   # the block's 200 MB, not the 400 MB before


def iris_cell(seed: int):
    """A cheap cell: Burg on iris with 10 pair constraints (the quick run's smallest)."""
    from kernlearn_cli.config import Cell

    return Cell(seed, {"name": "mem", "seed": seed, "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
                       "constraints": {"name": "idealized_pairs", "count": 10, "epsilon": 0.25},
                       "solver": {"name": "burg", "tol": 1e-3, "slack": 1.0}, "evaluate": []})


BIG = 300_000_000                             # bytes the first cell allocates (inside the solver's callback)


def allocate_once():
    """A ``-v`` callback that allocates (and touches) :data:`BIG` bytes on its first call."""
    calls = []

    def callback(*args, **kwargs):
        if not calls:
            a = np.ones(BIG // 8)
            a[::512] += 1.0
            calls.append(float(a[-1]))
    return callback


def test_each_cell_records_its_own_peak(tmp_path):
    """Two cells in one process: the first allocates 300 MB and records a peak above it; the second,
    run after it, records its own (small) peak, not the first one's."""
    from kernlearn_cli.experiment import run_cell
    from kernlearn_cli.report.show import describe_record

    if not _reset_high_water_mark():
        pytest.skip("no /proc/self/clear_refs: the high-water mark cannot be reset here")
    big = run_cell(iris_cell(0), tmp_path, progress=allocate_once())
    small = run_cell(iris_cell(1), tmp_path)
    assert big["peak_rss_bytes"] >= BIG
    assert small["peak_rss_bytes"] <= big["peak_rss_bytes"] - 0.8 * BIG, (small["peak_rss_bytes"], big["peak_rss_bytes"])
    stored = json.loads((tmp_path / small["cell"] / "record.json").read_text())
    assert stored["peak_rss_bytes"] == small["peak_rss_bytes"]
    assert f"memory      {size(big['peak_rss_bytes'])} peak resident" in describe_record(big)


def test_peak_is_null_and_said_once_where_it_cannot_be_reset(tmp_path, monkeypatch):
    from kernlearn_cli import resources
    from kernlearn_cli.report.show import describe_record
    from kernlearn_cli.runner import run_cells

    monkeypatch.setattr(resources, "_reset_high_water_mark", lambda: False)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        done = list(run_cells([iris_cell(0), iris_cell(1)], tmp_path, where="mem.yaml"))
    assert [rec["peak_rss_bytes"] for _, rec, _ in done] == [None, None]
    notes = [str(w.message) for w in said if "peak_rss_bytes" in str(w.message)]
    assert len(notes) == 1 and "/proc/self/clear_refs cannot be written here" in notes[0]
    assert "memory      not measured" in describe_record(done[0][1])


def write_record(folder, seed: int, **extra) -> dict:
    """A finished cell's record as older versions wrote it (no peak_rss_bytes), plus ``extra``."""
    cell = f"seed-{seed}"
    record = {"experiment": "old", "cell": cell, "grid": {"seed": seed}, "seed": seed, "solver": "burg",
              "dataset": "iris", "constraints": 10, "n": 150, "rank0": 4, "converged": True, "iterations": 10,
              "objective": 0.1, "seconds": 0.01, "cpu_seconds": 0.01, "metrics": {"nmi": 0.5}, **extra}
    (folder / cell).mkdir(parents=True)
    (folder / cell / "record.json").write_text(json.dumps(record))
    return record


def test_records_without_peak_read_as_before_and_the_peak_is_volatile(tmp_path):
    from kernlearn_cli.archive import differing, essence
    from kernlearn_cli.report.records import load_records
    from kernlearn_cli.report.show import describe_record
    from kernlearn_cli.report.tables import display, summarize

    old = [write_record(tmp_path / "old", seed) for seed in (0, 1)]
    df, _ = load_records([tmp_path / "old"])
    assert list(display(summarize(df, timing=True)).columns) == ["experiment", "seconds", "cpu_seconds", "seeds"]
    assert "memory" not in describe_record(old[0])
    for seed, peak in ((0, 200e6), (1, 300e6)):
        write_record(tmp_path / "new", seed, peak_rss_bytes=int(peak))
    df, _ = load_records([tmp_path / "new"])
    shown = display(summarize(df, timing=True))
    assert list(shown.columns) == ["experiment", "seconds", "cpu_seconds", "peak_rss_mb", "seeds"]
    assert shown["peak_rss_mb"].tolist() == ["250.0 ± 70.7"]
    assert list(summarize(df).columns) == list(summarize(load_records([tmp_path / "old"])[0]).columns)
    again = {**old[0], "peak_rss_bytes": 123}
    assert differing(old[0], again) == [] and essence(old[0]) == essence(again)
