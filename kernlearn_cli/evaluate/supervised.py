"""Supervised quality of the learned kernel: a linear SVM on a labeled subset, and kernel alignment
(Zhang et al. 2012, generalized Nystrom method)."""

from __future__ import annotations

from typing import Annotated

import numpy as np

from ..errors import ConfigError
from ..params import Interval, Positive
from ..registry import Checks, evaluators
from ._common import labeled_split, require_labels, seed_from


def nka(K1: np.ndarray, K2: np.ndarray) -> float:
    """Normalized (double-centred) kernel alignment of two explicit n x n kernels (Cortes et al. 2010).

    Both are centred as H K H with H = I - 11^T / n; returns <K1c, K2c>_F / (||K1c||_F ||K2c||_F),
    or 0.0 when either centred kernel is zero.
    """
    K1 = np.asarray(K1, dtype=np.float64)
    K2 = np.asarray(K2, dtype=np.float64)
    if K1.shape != K2.shape or K1.ndim != 2 or K1.shape[0] != K1.shape[1]:
        raise ValueError(f"nka: expected two square matrices of the same shape, got {K1.shape} and {K2.shape}.")

    def centre(K):
        K = K - K.mean(axis=0, keepdims=True)
        return K - K.mean(axis=1, keepdims=True)

    K1c, K2c = centre(K1), centre(K2)
    n1, n2 = np.linalg.norm(K1c), np.linalg.norm(K2c)
    if n1 == 0.0 or n2 == 0.0:
        return 0.0
    return float(np.sum(K1c * K2c) / (n1 * n2))


@evaluators.register("alignment", metrics=("alignment",))
def alignment(G: np.ndarray, ds, *, rng) -> dict:
    """Normalized (centred) kernel alignment (Cortes et al. 2010) of K = G G^T with the ideal kernel
    K* = Y Y^T of all n points (Y the one-hot labels), as Zhang et al. (2012) use to choose lambda.

    Computed in O(n r (r + C)) without n x n matrices: with Gc, Yc the column-centred factors,
    <Kc, K*c> = ||Gc^T Yc||_F^2, ||Kc||_F = ||Gc^T Gc||_F and ||K*c||_F = ||Yc^T Yc||_F.
    """
    y = require_labels(ds, "alignment")
    codes = np.unique(y, return_inverse=True)[1].ravel()
    Y = np.zeros((len(codes), int(codes.max()) + 1 if len(codes) else 0))
    Y[np.arange(len(codes)), codes] = 1.0
    G = np.asarray(G, dtype=np.float64)
    Gc = G - G.mean(axis=0)
    Yc = Y - Y.mean(axis=0)
    nk, ny = np.linalg.norm(Gc.T @ Gc), np.linalg.norm(Yc.T @ Yc)
    if nk == 0.0 or ny == 0.0:
        return {"alignment": 0.0}
    return {"alignment": float(np.linalg.norm(Gc.T @ Yc) ** 2 / (nk * ny))}


#: LIBSVM's guide grid for C, 2^-5, 2^-3, ..., 2^15 (Hsu, Chang & Lin 2003): the standard of
#: Zhang et al.'s time, fixed before any result was seen.
LIBSVM_C_GRID = tuple(2.0 ** k for k in range(-5, 16, 2))


def cross_validated_C(X: np.ndarray, y: np.ndarray, grid, folds: int, seed: int) -> tuple[float, float]:
    """(C, mean accuracy) maximising the stratified ``folds``-fold accuracy of a linear SVM on (X, y);
    ties go to the smallest C. Folds: min(``folds``, the smallest class count), at least 2; a fold
    whose training part holds one class only is skipped (it cannot train a classifier).

    The mean of the folds' accuracies is compared exactly, as a fraction of the correct counts: two
    C with the same counts in other folds (e.g. 17, 16, 15, 16, 17 and 17, 16, 17, 15, 16 of 20) tie,
    where the floating-point means, summed in other orders, could differ in their last bit and hand
    the tie to the larger C."""
    from fractions import Fraction

    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    k = max(2, min(folds, int(np.bincount(np.unique(y, return_inverse=True)[1]).min())))
    splits = [(tr, te) for tr, te in StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(X, y)
              if len(np.unique(y[tr])) >= 2]
    best: tuple[Fraction, float | None] = (Fraction(-1), None)
    for C in sorted(grid):
        correct = [Fraction(int(np.count_nonzero(
            LinearSVC(C=C, dual="auto", max_iter=10000, random_state=seed).fit(X[tr], y[tr]).predict(X[te]) == y[te])),
            len(te)) for tr, te in splits]
        score = sum(correct, Fraction(0)) / len(correct) if correct else Fraction(0)
        if score > best[0]:
            best = (score, float(C))
    return best[1], float(best[0])


@evaluators.register("svm_accuracy", metrics=("svm_accuracy", "svm_cv_C"), checks=Checks(
    alternatives={"C": 1e-6, "cv": True, "cv_folds": 3},
    unused={"cv_folds": "only read with cv: true (the base is cv: false)"}))
def svm_accuracy(G: np.ndarray, ds, *, rng, constraints, heldout=None, C: Positive = 1.0, cv: bool = False,
                 cv_folds: Annotated[int, Interval(2, None)] = 5) -> dict:
    """Linear SVM on the rows of G (kernel K = G G^T, as Zhang et al. 2012 feed K = A^T A to a linear
    SVM), trained on the labeled points of the cell's constraints and scored on all the others.

    The labeled set is the set of indices appearing in the constraints (``labeled_subset``);
    features are used as they are, not standardized.  ``C`` is the SVM's regularization (> 0).
    With ``cv``, C is also chosen by stratified ``cv_folds``-fold cross-validation on the labeled
    points over :data:`LIBSVM_C_GRID` (:func:`cross_validated_C`): ``svm_accuracy_cv`` is the test
    accuracy at the chosen C and ``svm_cv_C`` that C, beside ``svm_accuracy`` at ``C``. The test
    points are never seen by the choice.

    With held-out points (the dataset's ``holdout``, :mod:`kernlearn_cli.data.holdout`; ``heldout``
    their factor rows, from the runner), the same classifiers also score them:
    ``svm_accuracy_heldout`` (at ``C``) and ``svm_accuracy_cv_heldout`` (at the C chosen by CV).
    The other scores stay on the training part's unlabeled points, with or without ``seen``.

    Parameters
    ----------
    C : float
        The SVM's regularization (> 0).
    cv : bool
        Also choose C by cross-validation.
    cv_folds : int
        Its folds (>= 2).
    """
    from sklearn.svm import LinearSVC

    from ..data.holdout import training_count

    y = require_labels(ds, "svm_accuracy")
    G = np.asarray(G, dtype=np.float64)
    n = training_count(ds)                # the held-out rows of a seen holdout are scored apart
    lab, test = labeled_split(constraints, n, ds, "svm_accuracy")
    if len(np.unique(y[lab])) < 2:
        raise ConfigError(f"evaluate svm_accuracy: the {lab.size} labeled point(s) of the constraints cover "
                          f"fewer than two classes, so no classifier can be trained; use constraints "
                          "labeled_subset with a larger count or fraction.")
    held = None
    if heldout is not None:
        held = (np.asarray(heldout, dtype=np.float64), require_labels(ds.heldout, "svm_accuracy"))
    seed = seed_from(rng)
    clf = LinearSVC(C=C, dual="auto", max_iter=10000, random_state=seed)
    clf.fit(G[lab], y[lab])
    out = {"svm_accuracy": float(clf.score(G[test], y[test]))}
    if held is not None:
        out["svm_accuracy_heldout"] = float(clf.score(*held))
    if cv:
        C_cv, _ = cross_validated_C(G[lab], y[lab], LIBSVM_C_GRID, cv_folds, seed)
        if C_cv != C:                        # the same C and seed would fit the same classifier again
            clf = LinearSVC(C=C_cv, dual="auto", max_iter=10000, random_state=seed).fit(G[lab], y[lab])
        out.update(svm_accuracy_cv=float(clf.score(G[test], y[test])), svm_cv_C=C_cv)
        if held is not None:
            out["svm_accuracy_cv_heldout"] = float(clf.score(*held))
    return out


@evaluators.register("nka_criterion", metrics=("nka_score",),
                     checks=Checks(instance="kernlearn_cli.testing.instances:nystrom_prior_result"))
def nka_criterion(G: np.ndarray, ds, *, rng, result) -> dict:
    """The lambda-selection score of ``nystrom_prior`` at the lambda it returned,
    rho[S, S0] * rho[E_l S E_l^T, K*_l] (Zhang et al. 2012), as a metric -- so that a grid over
    ``solver.lam`` draws the paper's Fig. 1 (score vs lambda beside accuracy vs lambda)."""
    if "nka" not in result.info:
        raise ConfigError("evaluator 'nka_criterion' reads the selection score of solver 'nystrom_prior'; "
                          "this solver does not report one.")
    return {"nka_score": float(result.info["nka"])}
