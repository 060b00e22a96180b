"""The constraint kinds: one definition, for Python and for compiled code.

A constraint bounds tr(K A) for one pair (i, j) or, for ``triplet``, one triplet (i, j, k):
``dist_*`` the squared feature-space distance d(i, j) = K_ii + K_jj - 2 K_ij, ``sim_*`` the
similarity K_ij; ``le`` is <=, ``ge`` is >=, ``eq`` is =.  ``triplet`` is the relative comparison
of Li et al. (2009, Table 2): tr(K A_ijk) = d(i, j) - d(i, k) >= bound (normally 0), j the
out-of-class and k the in-class neighbour of i.

The codes are part of the file format (a constraints file stores them): new kinds are appended at
the end.  numba freezes module-level integers and tuples of integers into compiled code as
constants, so compiled kernels test ``kind == DIST_LE`` or ``kind in DISTANCE`` with the names
below; numpy code tests ``np.isin(kind, DISTANCE)``.  A kernel module that imports this one is keyed
to it in the compiled kernels' cache (:func:`kernlearn_cli.solvers.cache_dir`).
"""

from enum import IntEnum


class Kind(IntEnum):
    """A constraint kind and its integer code."""

    DIST_LE = 0
    DIST_GE = 1
    SIM_LE = 2
    SIM_GE = 3
    DIST_EQ = 4
    SIM_EQ = 5
    TRIPLET = 6


# The codes as plain ints (what numba compiles as constants).
DIST_LE, DIST_GE, SIM_LE, SIM_GE, DIST_EQ, SIM_EQ, TRIPLET = (int(k) for k in Kind)

#: The kind names in code order (``KINDS[code]``) and their codes (``KIND_CODE[name]``).
KINDS = tuple(k.name.lower() for k in Kind)
KIND_CODE = {name: code for code, name in enumerate(KINDS)}
#: The pairwise kinds (every kind but ``triplet``): what the pairwise solvers accept.
PAIR_KINDS = tuple(k for k in KINDS if k != "triplet")

#: Kinds on the distance d(i, j) (the others but ``triplet`` are on the similarity K_ij).
DISTANCE = (DIST_LE, DIST_GE, DIST_EQ)
#: Pairwise kinds bounding their quantity from above (<=), from below (>=), and equalities (=).
UPPER = (DIST_LE, SIM_LE)
LOWER = (DIST_GE, SIM_GE)
EQUAL = (DIST_EQ, SIM_EQ)
#: Constraints that pull a pair together (a distance bounded above, a similarity below) / push it apart.
SIMILAR = (DIST_LE, SIM_GE)
DISSIMILAR = (DIST_GE, SIM_LE)
