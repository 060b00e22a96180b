"""The built-in components: which module of ``kernlearn_cli`` registers which names.

A registry (:mod:`kernlearn_cli.registry`) imports a module only when one of its names is looked up,
so a cell imports the components it uses and no others (no other solver's compiled kernels);
``kernlearn list`` imports them all (:func:`load_builtins`).
"""

from __future__ import annotations

import importlib

PACKAGE = __package__

#: The built-in components: module (inside ``kernlearn_cli``) -> {registry: the names it registers}.
#: ``tests/test_startup.py`` checks this table against what the modules register.
BUILTINS: dict[str, dict[str, tuple[str, ...]]] = {
    "data.bundled": {"datasets": ("iris", "wine", "breast_cancer", "digits")},
    "data.synthetic": {"datasets": ("chessboard", "double_spiral", "two_gaussians", "gyrb_like")},
    "data.uci": {"datasets": ("sonar", "ionosphere", "heart", "glass", "soybean_small", "spambase", "uspst",
                              "breast_cancer_wisconsin", "pendigits", "adult_a1a", "adult_a2a", "adult_a3a",
                              "adult_a4a_approx", "adult_a5a_approx", "adult_a6a_approx")},
    "data.user": {"datasets": ("gyrb", "files")},
    "kernels": {"kernels": ("linear", "rbf", "identity", "precomputed", "laplacian_pinv")},
    "constraints.labeled": {"constraints": ("labeled_subset",)},
    "constraints.must_cannot": {"constraints": ("must_cannot",)},
    "constraints.pairs": {"constraints": ("random_pairs", "idealized_pairs", "itml_pairs", "from_file")},
    "constraints.streams": {"constraints": ("distance_stream",)},
    "constraints.threshold": {"constraints": ("threshold_pairs",)},
    "constraints.triplets": {"constraints": ("neighbor_triplets",)},
    "evaluate.clustering": {"evaluators": ("kernel_kmeans_nmi", "pairwise_accuracy")},
    "evaluate.kernel": {"evaluators": ("constraint_violation", "kernel_condition", "solver_info", "primal_residual")},
    "evaluate.knn": {"evaluators": ("knn_accuracy", "knn_error")},
    "evaluate.kpca": {"evaluators": ("kpca_1nn_error",)},
    "evaluate.supervised": {"evaluators": ("alignment", "svm_accuracy", "nka_criterion")},
    "solvers.admm": {"solvers": ("admm",)},
    "solvers.baseline": {"solvers": ("initial",)},
    "solvers.burg": {"solvers": ("burg",)},
    "solvers.definiteboost": {"solvers": ("definiteboost",)},
    "solvers.meg": {"solvers": ("meg",), "evaluators": ("meg_loss",)},
    "solvers.nystrom": {"solvers": ("nystrom", "nystrom_prior")},
    "solvers.pcp_sdp": {"solvers": ("pcp_sdp",)},
    "solvers.trin": {"solvers": ("trin", "pr_cg")},
    "solvers.von_neumann": {"solvers": ("von_neumann",)},
}


def modules_of(key: str) -> dict[str, str]:
    """Name -> module (``kernlearn_cli.<module>``) of the built-ins of registry ``key``."""
    return {name: f"{PACKAGE}.{module}" for module, kinds in BUILTINS.items() for name in kinds.get(key, ())}


def load_builtins() -> None:
    """Import every module that registers built-in components (``kernlearn list``)."""
    for module in BUILTINS:
        importlib.import_module(f"{PACKAGE}.{module}")
