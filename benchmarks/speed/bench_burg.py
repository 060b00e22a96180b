"""Speed benchmark of the low-rank Burg (LogDet) projections (Kulis et al. 2006, Alg. 1).

Measures, for r in {16, 64, 256}, projections per second of

* the compiled sweep ``kernlearn_cli.solvers._burg_kernels.burg_sweep`` (numba), and
* a straightforward NumPy loop of the same Algorithm 1 projection (defined below),

on one core, for hard distance constraints (slack = inf), and prints the speed-up and the
growth of the time per projection with r (ideally r^2: 16x per 4x in r).

Run from the repository root::

    python benchmarks/speed/bench_burg.py            # full run (>= 0.5 s per measurement, best of 3)
    python benchmarks/speed/bench_burg.py --quick    # smoke run

It reports and exits 0 whatever the speed.  The only failure is the equivalence check at
the start (baseline and compiled sweep must give the same B), without which the
comparison would not be of the same algorithm.
"""

# ---- single core: must be set before numpy / numba are imported -------------------------
import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short timings (smoke run)")
    ap.add_argument("--ranks", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--n", type=int, default=2000, help="number of points (cost does not depend on it)")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

_LIMITS = threadpool_limits(limits=1)   # kept alive for the whole run

import numba  # noqa: E402

from kernlearn_cli.solvers import _burg_kernels as _k  # noqa: E402
from kernlearn_cli.types import KIND_CODE, Constraints  # noqa: E402

DIST_LE = KIND_CODE["dist_le"]
DIST_GE = KIND_CODE["dist_ge"]

# Targets from the issue.
TARGET_RATE_R16 = 2_000_000     # compiled projections / s at r = 16
TARGET_SPEEDUP = 30.0           # compiled / NumPy loop
TARGET_T64_T16 = 20.0           # t(64) / t(16); the r^2 ratio is 16


# ---- instance ------------------------------------------------------------------------------

def make_instance(n: int, r: int, c: int, seed: int, n_classes: int = 5):
    """Random G0 (n x r) and c random-pair distance constraints that start violated:
    same class -> d <= 0.9 d0, different class -> d >= 1.1 d0 (d0 = current distance)."""
    rng = np.random.default_rng(seed)
    G0 = np.ascontiguousarray(rng.standard_normal((n, r)))
    y = rng.integers(0, n_classes, n)
    i = rng.integers(0, n, c)
    j = (i + rng.integers(1, n, c)) % n                      # i != j
    d0 = np.einsum("ij,ij->i", G0[i] - G0[j], G0[i] - G0[j])
    same = y[i] == y[j]
    cons = Constraints(i, j, np.where(same, DIST_LE, DIST_GE), np.where(same, 0.9 * d0, 1.1 * d0))
    return G0, cons


def _sub(cons: Constraints, m: int) -> Constraints:
    """The first m constraints (contiguous copies, as the compiled signature requires)."""
    return Constraints(cons.i[:m].copy(), cons.j[:m].copy(), cons.kind[:m].copy(), cons.bound[:m].copy())


# ---- the two implementations -----------------------------------------------------------------

def numpy_sweep(G0, ci, cj, kind, bhat, lam, B):
    """Algorithm 1 (hard distance constraints) as a plain NumPy loop, in place on B and lam."""
    for q in range(ci.shape[0]):
        v = G0[ci[q]] - G0[cj[q]]
        w = B.T @ v
        p = float(w @ w)
        alpha = 1.0 / p - 1.0 / bhat[q]
        if kind[q] == DIST_LE:        # alpha' = min(lambda, alpha), lambda -= alpha'
            alpha = min(lam[q], alpha)
            lam[q] -= alpha
        else:                         # >=: same in the signed form (constraint -z^T K z <= -b)
            alpha = -min(lam[q], -alpha)
            lam[q] += alpha
        beta = alpha / (1.0 - alpha * p)
        sigma = beta / (1.0 + math.sqrt(1.0 + beta * p))   # L = I + sigma w w^T, L L^T = I + beta w w^T
        B += sigma * np.outer(B @ w, w)                     # B <- B L


def fresh_state(cons: Constraints, r: int):
    return np.eye(r), np.zeros(len(cons)), cons.bound.copy()


def run_compiled(G0, cons: Constraints, sweeps: int) -> int:
    """``sweeps`` cyclic sweeps from fresh state; returns the number of projections done."""
    r = G0.shape[1]
    B, lam, bhat = fresh_state(cons, r)
    work = [np.empty(r) for _ in range(4)]
    done = 0
    for _ in range(sweeps):
        status, q, _, _ = _k.burg_sweep(G0, cons.i, cons.j, cons.kind, bhat, lam, B, math.inf, *work)
        if status != _k.OK:
            print(f"  WARNING: burg_sweep stopped with status {status} at constraint {q} (r={r})")
            return done + q
        done += len(cons)
    return done


def run_numpy(G0, cons: Constraints, sweeps: int = 1) -> int:
    B, lam, bhat = fresh_state(cons, G0.shape[1])
    for _ in range(sweeps):
        numpy_sweep(G0, cons.i, cons.j, cons.kind, bhat, lam, B)
    return sweeps * len(cons)


def check_equivalence() -> float:
    """Same B (1e-10 relative) from the NumPy loop and the compiled sweep, small instance."""
    G0, cons = make_instance(n=200, r=8, c=300, seed=1)
    worst = 0.0
    for sweeps in (1, 3):
        B1, lam1, bhat1 = fresh_state(cons, 8)
        B2, lam2, bhat2 = fresh_state(cons, 8)
        work = [np.empty(8) for _ in range(4)]
        for _ in range(sweeps):
            numpy_sweep(G0, cons.i, cons.j, cons.kind, bhat1, lam1, B1)
            status, q, _, _ = _k.burg_sweep(G0, cons.i, cons.j, cons.kind, bhat2, lam2, B2, math.inf, *work)
            if status != _k.OK:
                raise AssertionError(f"equivalence check: burg_sweep status {status} at constraint {q}")
        err = np.linalg.norm(B1 - B2) / np.linalg.norm(B2)
        lam_err = np.linalg.norm(lam1 - lam2) / max(np.linalg.norm(lam2), 1e-300)
        if not (err <= 1e-10 and lam_err <= 1e-10):
            raise AssertionError(f"NumPy baseline and compiled burg_sweep disagree after {sweeps} sweep(s): "
                                 f"|dB|/|B| = {err:.3g}, |dlam|/|lam| = {lam_err:.3g} (> 1e-10)")
        worst = max(worst, err)
    return worst


# ---- timing ----------------------------------------------------------------------------------

def measure(prepare, min_time: float, repeats: int, est_rate: float):
    """Best-of-``repeats`` projections/s.  ``prepare(count)`` builds (untimed) a callable that
    runs about ``count`` projections from fresh state and returns how many it did; ``count``
    is grown until every measurement takes at least ``min_time`` seconds."""
    count = max(1, int(math.ceil(1.2 * min_time * est_rate)))
    while True:
        run = prepare(count)
        best, short = 0.0, False
        for _ in range(repeats):
            t0 = time.perf_counter()
            done = run()
            dt = time.perf_counter() - t0
            short |= dt < min_time
            best = max(best, done / dt)
        if not short:
            return best
        count = int(math.ceil(count * 1.3 * min_time / dt)) + 1


def bench_rank(r: int, n: int, min_time: float, repeats: int, pool: int, seed: int):
    """(compiled proj/s, NumPy proj/s) at rank r on a pool of distinct constraints."""
    G0, cons = make_instance(n, r, pool, seed)

    def prepare_compiled(count):
        # whole sweeps over the first m <= pool constraints (state carries over between sweeps)
        m = min(count, pool)
        block = _sub(cons, m)
        sweeps = int(math.ceil(count / m))
        return lambda: run_compiled(G0, block, sweeps)

    def prepare_numpy(count):
        m = min(count, pool)
        block = _sub(cons, m)
        sweeps = int(math.ceil(count / m))
        return lambda: run_numpy(G0, block, sweeps)

    run_compiled(G0, _sub(cons, 10), 1)                      # warm-up (JIT / cache load, dispatch)
    probe = prepare_compiled(min(pool, 2000))
    t0 = time.perf_counter()
    est = probe() / (time.perf_counter() - t0)
    rate_c = measure(prepare_compiled, min_time, repeats, est)

    run_numpy(G0, _sub(cons, 10))                            # warm-up
    probe = prepare_numpy(200)
    t0 = time.perf_counter()
    est = probe() / (time.perf_counter() - t0)
    rate_n = measure(prepare_numpy, min_time, repeats, est)
    return rate_c, rate_n


def describe_environment():
    print(f"python {platform.python_version()}  numpy {np.__version__}  numba {numba.__version__}  "
          f"({platform.machine()}, {os.cpu_count()} logical CPUs)")
    print(f"numba threads: NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}, "
          f"get_num_threads()={numba.get_num_threads()}")
    pools = threadpool_info()
    try:
        np_blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"].get("version")
    except Exception:  # noqa: BLE001 - informational only
        np_blas = None
    if not pools:
        print("BLAS/OpenMP threadpools: none detected")
    for p in pools:
        print(f"threadpool: {p.get('user_api')}/{p.get('internal_api')} {p.get('version', '')} "
              f"num_threads={p.get('num_threads')} ({os.path.basename(p.get('filepath', ''))})"
              + ("  <- numpy's BLAS" if np_blas and p.get("user_api") == "blas" and p.get("version") == np_blas
                 else ""))


def main(argv=None) -> int:
    args = arguments(argv)
    min_time = 0.05 if args.quick else 0.5
    repeats = 3
    pool = 20_000 if args.quick else 200_000     # distinct constraints per rank

    print("Burg (LogDet) low-rank projections, Kulis et al. 2006 Alg. 1 — hard distance constraints")
    describe_environment()
    err = check_equivalence()
    print(f"equivalence check (n=200, r=8, c=300, 1 and 3 sweeps): NumPy loop vs burg_sweep "
          f"|dB|/|B| = {err:.2e} <= 1e-10  OK")
    print(f"n = {args.n}, min {min_time:g} s per measurement, best of {repeats}"
          + ("  [--quick]" if args.quick else ""))
    print()

    rows = []
    for r in args.ranks:
        rate_c, rate_n = bench_rank(r, args.n, min_time, repeats, pool, args.seed + r)
        rows.append((r, rate_c, rate_n))

    head = f"{'r':>5} {'compiled proj/s':>16} {'numpy proj/s':>14} {'speed-up':>9} {'t/proj µs':>10}"
    print(head)
    print("-" * len(head))
    for r, rc, rn in rows:
        print(f"{r:>5} {rc:>16,.0f} {rn:>14,.0f} {rc / rn:>8.1f}x {1e6 / rc:>10.3f}")
    print()
    t = {r: 1.0 / rc for r, rc, _ in rows}
    rs = [r for r, _, _ in rows]
    for a, b in zip(rs, rs[1:]):
        print(f"t({b})/t({a}) = {t[b] / t[a]:5.1f}   (r^2 ratio {(b / a) ** 2:.0f}x)")
    print()
    print("targets (issue):")

    def target(label, value, ok):
        print(f"  {label:<32} {value:>12}  {'met' if ok else 'MISSED'}")

    rates = {r: rc for r, rc, _ in rows}
    if 16 in rates:
        target(f">= {TARGET_RATE_R16:,} proj/s at r = 16", f"{rates[16]:,.0f}", rates[16] >= TARGET_RATE_R16)
    for r, rc, rn in rows:
        target(f">= {TARGET_SPEEDUP:.0f}x NumPy loop at r = {r}", f"{rc / rn:.1f}x", rc / rn >= TARGET_SPEEDUP)
    if 16 in t and 64 in t:
        target(f"t(64)/t(16) <= {TARGET_T64_T16:.0f}", f"{t[64] / t[16]:.1f}", t[64] / t[16] <= TARGET_T64_T16)
    print("(t/proj = compiled time per projection; exit status is 0 whatever the speed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
