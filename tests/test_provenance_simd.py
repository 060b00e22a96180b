"""A record says which SIMD code numpy ran (provenance ``numpy_simd``) and on which CPU: two hosts
with different dispatch targets may differ in the last bits (docs/cluster.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kernlearn_cli.provenance import environment_provenance, numpy_simd

PROBE = "import json; from kernlearn_cli.provenance import numpy_simd; print(json.dumps(numpy_simd()))"


def _simd_in_child(disabled: str) -> list[str]:
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": disabled}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_environment_names_the_cpu_and_numpys_dispatch_targets():
    env = environment_provenance()
    assert isinstance(env["cpu"], str)
    assert env["numpy_simd"] == numpy_simd()


@pytest.mark.slow
def test_a_target_switched_off_is_not_reported():
    here = numpy_simd()
    if not here:
        pytest.skip("numpy reports no dispatch target on this CPU")
    top = here[-1] if "X86_V4" not in here else "X86_V4"
    assert _simd_in_child("") == here
    assert top not in _simd_in_child(top)
