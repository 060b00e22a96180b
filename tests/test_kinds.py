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


def test_the_kinds_key_the_compiled_cache(tmp_path, monkeypatch):
    """numba compiles the kind codes in as constants: an edit of kinds.py must key a new cache."""
    assert solvers.HERE.parent / "kinds.py" in solvers.CONSTANTS
    edited = tmp_path / "kinds.py"
    edited.write_text((solvers.HERE.parent / "kinds.py").read_text().replace("DIST_GE = 1", "DIST_GE = 7"))
    before = solvers.source_digest()
    monkeypatch.setattr(solvers, "CONSTANTS", (edited,))
    assert solvers.source_digest() != before
