"""A greedy DefiniteBoost step against its floor (issue 45, item 5), one core, in one run.

    python benchmarks/profiles/profile_definiteboost.py [--n 10000] [--c 10000] [--r 16] [--steps 2000]

Instance: G0 ~ N(0, 1) (n x r, seed 0), c random pairs bounded by their distance under a target
kernel of the same trace (G0 with columns scaled by U(0.2, 1.8), renormalised): ``dist_le`` where
the target is closer than K0, ``dist_ge`` where it is farther, so the set is feasible and every
constraint is violated at the start.
The solver's own compiled pieces are timed (CPU seconds, ``time.process_time``, the best of 3
after a warm-up): a whole greedy step (``_steps``, ``projection: approximate``, Tsuda et al.'s
rule), and its parts -- the residual scan r_j = tr(W C_j) over all c constraints
(``_residuals``) and the eigen-update of the chosen constraint (``_apply``: the secular
equation, O(r^2), and the rotation of the n x r rows Y <- Y U, O(n r^2)).  The dense rate is
numpy's matmul (one BLAS thread) on the shapes of the floor, measured here, beside a square
1024 x 1024 product.  Floors:

* the issue's: every residual as w_j^T M w_j with M = V diag(p) V^T (r x r), 2 c r^2 flops a
  step, at the c x r by r x r matmul rate;
* this implementation's: the residuals in the eigenbasis (the rows of Y = Q V), 4 c r flops
  (a difference, a square, a weighted sum), plus the rotation Y U, 2 n r^2 flops, at the
  n x r by r x r matmul rate.

"Before" is the step as it was before issue 45 (the residual scan calling ``_value`` once per
constraint, a numba call that is not inlined: 34 ns a constraint at r = 16), compiled here from the
solver's own ``_steps`` with that scan; both runs start from the same state, and the script
fails unless their iterates (Y, theta, gamma, the dual objectives) are equal to the bit.
"""

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--c", type=int, default=10000)
    parser.add_argument("--r", type=int, default=16)
    parser.add_argument("--steps", type=int, default=2000)
    return parser.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numba as nb  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.solvers import definiteboost as db  # noqa: E402
from kernlearn_cli.types import Constraints  # noqa: E402


def instance(n: int, c: int, r: int):
    """G0 and c distance constraints that a target kernel of the same trace meets, K0 does not."""
    rng = np.random.default_rng(0)
    G0 = rng.standard_normal((n, r))
    T = G0 * np.sqrt(rng.uniform(0.2, 1.8, r))                     # the target K* = T T^T
    T *= np.sqrt(np.sum(G0 * G0) / np.sum(T * T))                   # tr K* = tr K0
    i = rng.integers(0, n, c)
    j = (i + 1 + rng.integers(0, n - 1, c)) % n
    d0, dt = (np.sum((F[i] - F[j]) ** 2, axis=1) for F in (G0, T))
    le = dt < d0
    return G0, Constraints.from_lists(i, j, np.where(le, "dist_le", "dist_ge").tolist(), dt)


@nb.njit(cache=True)
def residuals_by_call(Y, p, ii, jj, isdist, sig, beta, out):
    """The residual scan before issue 45: one ``_value`` call a constraint."""
    for q in range(ii.shape[0]):
        out[q] = sig[q] * (db._value(Y, p, ii[q], jj[q], isdist[q]) - beta[q])


#: ``_steps`` with the scan before issue 45 (the same source, ``_residuals`` bound to the old scan).
steps_before = nb.njit(types.FunctionType(db._steps.py_func.__code__,
                                          {**db._steps.py_func.__globals__, "_residuals": residuals_by_call}))


def prepared(G0, C):
    """The solver's arrays before its first step (as :func:`definiteboost.definiteboost` makes them)."""
    Q, sig2 = db._range_basis(G0)
    s = float(sig2.sum())
    logm1 = np.log(sig2 / s)
    ca = db._constraint_arrays(Q, s, C)
    active = np.where(ca["iseq"], (ca["lmin"] < 0) & (ca["lmax"] > 0), ca["lmax"] > 0)
    return {"Y": np.array(Q, order="C"), "theta": logm1.copy(), "ca": ca, "active": active,
            "floor": float(logm1.min()) - 1.0}


def run_steps(P, C, steps: int, kernel=db._steps):
    """CPU seconds of ``steps`` greedy steps from the start (fresh state), and the iterates."""
    Y, theta, ca = P["Y"].copy(), P["theta"].copy(), P["ca"]
    state, gamma, res, hist = np.zeros(3), np.zeros(len(C)), np.empty(len(C)), np.empty(steps)
    t = time.process_time()
    done, status = kernel(Y, theta, state, gamma, C.i, C.j, ca["isdist"], ca["iseq"], P["active"], ca["sig"],
                             ca["beta"], ca["lmin"], ca["lmax"], steps, False, False, False, P["floor"], hist, res)
    cpu = time.process_time() - t
    assert done == steps and status == db.OK, (done, status)
    return cpu, Y, theta, gamma, hist


def best_of(func, repeats: int = 3) -> float:
    func()
    return min(func() for _ in range(repeats))


def timed(func, calls: int) -> float:
    t = time.process_time()
    for _ in range(calls):
        func()
    return (time.process_time() - t) / calls


def matmul_rate(m: int, k: int, nn: int) -> float:
    """flop/s of numpy's (m x k) @ (k x nn), best of 3."""
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((m, k)), rng.standard_normal((k, nn))
    calls = max(1, int(2e8 / (2 * m * k * nn)))
    return 2 * m * k * nn / best_of(lambda: timed(lambda: A @ B, calls))


def main() -> None:
    args = arguments()
    n, c, r, steps = args.n, args.c, args.r, args.steps
    G0, C = instance(n, c, r)
    P = prepared(G0, C)
    ca = P["ca"]
    with threadpool_limits(1):
        before, after = (run_steps(P, C, steps, kernel)[1:] for kernel in (steps_before, db._steps))
        if not all(np.array_equal(x, y) for x, y in zip(before, after)):
            raise SystemExit("the step before and after issue 45 differ: not the same iterates")
        step_before = best_of(lambda: run_steps(P, C, steps, steps_before)[0]) / steps
        step = best_of(lambda: run_steps(P, C, steps)[0]) / steps
        Y, theta = after[0], after[1]                                # a mid-run state for the parts
        p, res = np.empty(r), np.empty(c)
        db._probs(theta, p)
        args = (Y, p, C.i, C.j, ca["isdist"], ca["sig"], ca["beta"], res)
        scan_before = best_of(lambda: timed(lambda: residuals_by_call(*args), 200))
        scan = best_of(lambda: timed(lambda: db._residuals(*args), 200))
        Yc, thc = Y.copy(), theta.copy()
        update = best_of(lambda: timed(lambda: db._apply(thc, Yc, int(C.i[0]), int(C.j[0]), True, -1e-3), 200))
        rate_issue = matmul_rate(c, r, r)
        rate_rot = matmul_rate(n, r, r)
        rate_square = matmul_rate(1024, 1024, 1024)
    floor_issue = 2 * c * r * r / rate_issue
    floor_here = 4 * c * r / rate_issue + 2 * n * r * r / rate_rot
    print(f"n = {n}, c = {c}, r = {r}, {steps} greedy steps (approximate projection), one thread; "
          "iterates before = after to the bit")
    print("                           before       after")
    print(f"  measured step          {step_before * 1e6:9.1f} us {step * 1e6:9.1f} us")
    print(f"    residual scan (c)    {scan_before * 1e6:9.1f} us {scan * 1e6:9.1f} us  "
          f"({scan_before / c * 1e9:.1f} -> {scan / c * 1e9:.1f} ns a constraint)")
    print(f"    eigen-update + Y U                {update * 1e6:9.1f} us")
    print(f"    rest (argmax, softmax)            {(step - scan - update) * 1e6:9.1f} us")
    print(f"  dense rate: (c x r)(r x r) {rate_issue / 1e9:.2f} Gflop/s, (n x r)(r x r) {rate_rot / 1e9:.2f} Gflop/s, "
          f"1024^3 {rate_square / 1e9:.2f} Gflop/s")
    print(f"  floor, issue's (2 c r^2 flops)               {floor_issue * 1e6:9.1f} us  "
          f"(at the 1024^3 rate {2 * c * r * r / rate_square * 1e6:.1f} us)")
    print(f"  floor, eigenbasis (4 c r + 2 n r^2 flops)    {floor_here * 1e6:9.1f} us")
    print(f"  measured / issue's floor {step_before / floor_issue:.1f}x -> {step / floor_issue:.1f}x, "
          f"/ eigenbasis floor {step_before / floor_here:.1f}x -> {step / floor_here:.1f}x")


if __name__ == "__main__":
    main()
