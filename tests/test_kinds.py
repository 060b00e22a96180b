"""The constraint kinds have one definition (kernlearn_cli/kinds.py), read by Python and compiled code alike."""

import numpy as np

from kernlearn_cli import kinds, solvers, types
from kernlearn_cli.kinds import DISTANCE, EQUAL, KIND_CODE, KINDS, LOWER, PAIR_KINDS, UPPER, Kind
from kernlearn_cli.solvers._cyclic import sign


def test_codes_names_and_enum_agree():
    assert [k.value for k in Kind] == list(range(len(KINDS)))
    assert KINDS == ("dist_le", "dist_ge", "sim_le", "sim_ge", "dist_eq", "sim_eq", "triplet")   # the file format
    assert all(KIND_CODE[k.name.lower()] == k == getattr(kinds, k.name) for k in Kind)
    assert PAIR_KINDS == KINDS[:-1]
    assert (types.KINDS, types.KIND_CODE, types.PAIR_KINDS) == (KINDS, KIND_CODE, PAIR_KINDS)   # re-exported


def test_named_sets_follow_the_names():
    def named(pred):
        return tuple(sorted(KIND_CODE[k] for k in PAIR_KINDS if pred(k)))
    assert tuple(sorted(DISTANCE)) == named(lambda k: k.startswith("dist_"))
    assert tuple(sorted(UPPER)) == named(lambda k: k.endswith("_le"))
    assert tuple(sorted(LOWER)) == named(lambda k: k.endswith("_ge"))
    assert tuple(sorted(EQUAL)) == named(lambda k: k.endswith("_eq"))


def test_compiled_code_reads_the_same_sets():
    expected = {"le": 1.0, "ge": -1.0, "eq": 0.0}
    for name in PAIR_KINDS:
        assert sign(np.int8(KIND_CODE[name])) == expected[name.rsplit("_", 1)[1]], name


def test_the_kinds_key_the_compiled_cache(tmp_path):
    """numba compiles the kind codes in as constants: an edit of kinds.py must key a new cache for the
    kernel modules that read them (each module's cache folder is keyed to the sources it imports)."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(solvers.HERE.parent, tmp_path / "kernlearn_cli", ignore=shutil.ignore_patterns("__pycache__"))
    probe = ("from kernlearn_cli.solvers import kernel_digest as d; "
             "print(d('kernlearn_cli.solvers._cyclic'), d('kernlearn_cli.solvers._admm_kernels'))")

    def digests():
        res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                             env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
        assert res.returncode == 0, res.stderr
        return res.stdout.split()

    cyclic, admm = digests()
    kinds = tmp_path / "kernlearn_cli" / "kinds.py"
    kinds.write_text(kinds.read_text().replace("DIST_GE = 1", "DIST_GE = 7"))
    after = digests()
    assert after[0] != cyclic                    # _cyclic reads the kinds: a new cache
    assert after[1] == admm                      # the ADMM kernels do not: their cache stays
