"""resources.PeakMemory: the peak of a block, not of the process's past."""

import numpy as np
import pytest

from kernlearn_cli.resources import PeakMemory, _reset_high_water_mark


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
