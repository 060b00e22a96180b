"""Issue 55 item 6: plant each mutant of the audit's list and check that the named test catches it.

A mutant is a text patch of a few lines to one file of the package (``old`` -> ``new``, ``old`` found
exactly once), and the tests that must fail under it.  Each mutant is planted in a temporary copy of
the repository's tracked files (``git ls-files``), never in the working tree: the tree is the same
whatever happens (an error, Ctrl-C), and the copy is deleted at the end.  For each mutant the named
tests run in the copy (``pytest -x -q -p no:cacheprovider``, its own numba cache folder, one BLAS
thread): **caught** when they fail (exit 1), **survived** when they pass (exit 0), **error** otherwise
(a patch that does not apply, a collection error).  First the named tests run once unmutated: they must
pass, or "caught" would mean nothing.

With ``--before`` each mutant also runs the fast tier of the named tests' files *without* the named
tests (``-m "not slow" --deselect ...``): what the suite caught before the test was written ("survived"
there is the audit's finding).

    python benchmarks/checks/mutants.py                      # every mutant, about a minute
    python benchmarks/checks/mutants.py --only pivot quotas  # some of them (names as listed by --list)
    python benchmarks/checks/mutants.py --before             # and what the rest of each file catches
    python benchmarks/checks/mutants.py --list

Exit code 1 when a mutant survives its named tests (or errs), 0 otherwise.  Add a mutant by adding
an entry to ``MUTANTS`` (docs/testing.md, "Checking that a test can fail").
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutant:
    name: str
    what: str
    path: str                 # a file of the repository
    old: str                  # found exactly once in it
    new: str
    tests: tuple[str, ...]    # pytest node ids that must fail under the mutant


MUTANTS = [
    Mutant("pivot", "pivoted Cholesky takes its pivots from diag(K) instead of the residual diagonal",
           "kernlearn_cli/lowrank.py", "        p = int(np.argmax(d))\n",
           "        p = int(np.argmax(np.where(d > 0, diagonal, -np.inf)))\n",
           ("tests/test_low_rank_k0.py::test_pivots_follow_the_residual_diagonal_on_a_permuted_matrix",)),
    Mutant("quotas", "subset quotas rounded instead of floored + largest remainder ([5, 5, 5], size 8: 11 rows)",
           "kernlearn_cli/data/subset.py", "    m = np.floor(exact).astype(int)\n",
           "    m = np.round(exact).astype(int)\n",
           ("tests/test_subset.py::"
            "test_quotas_over_many_counts_and_sizes_sum_to_the_size_each_within_one_of_its_share",)),
    Mutant("gyrb_inputs", "the gyrb loader records (hashes) only its kernel file, not its labels file",
           "kernlearn_cli/data/user.py", '"inputs": input_files(*found.values())})',
           '"inputs": input_files(found["kernel"])})',
           ("tests/test_data.py::test_every_user_file_loaders_recorded_inputs_are_the_files_it_read",)),
    Mutant("triplet_inputs", "a triplets file read by from_file is not recorded among the cell's inputs",
           "kernlearn_cli/constraints/pairs.py",
           "    return replace(Constraints.triplets(ijk[:, 0], ijk[:, 1], ijk[:, 2]), files=input_files(path))\n",
           "    return Constraints.triplets(ijk[:, 0], ijk[:, 1], ijk[:, 2])\n",
           ("tests/test_inputs.py::test_a_constraint_files_recorded_inputs_are_the_files_it_read",)),
    Mutant("tidy_position", "collect --tidy joins the settings by position, one row per cell id "
           "(two roots with the same cells: 18 of 36 rows lose their settings)",
           "kernlearn_cli/report/tidy.py",
           '    more = pd.DataFrame([extra[key] for key in zip(cells["cell"], cells.groupby("cell").cumcount())],\n'
           '                        index=cells.index)\n',
           '    more = pd.DataFrame(list({c: v for (c, k), v in extra.items() if k == 0}.values()))\n',
           ("tests/test_report.py::test_tidy_over_two_roots_with_overlapping_cells_keeps_each_rows_own_record",)),
    Mutant("tidy_cell_id", "collect --tidy joins the environment by cell id alone (the second root's rows show "
           "the first root's provenance; the code before issue 55)",
           "kernlearn_cli/report/tidy.py",
           '    more = pd.DataFrame([extra[key] for key in zip(cells["cell"], cells.groupby("cell").cumcount())],\n'
           '                        index=cells.index)\n',
           '    more = pd.DataFrame([extra[c, 0] for c in cells["cell"]], index=cells.index)\n',
           ("tests/test_report.py::test_tidy_over_two_roots_with_overlapping_cells_keeps_each_rows_own_record",)),
    Mutant("report_cpu", "the report's cell CPU time summed from the cells' wall seconds",
           "kernlearn_cli/report/html.py", '    cell_cpu = sum(float(p.get("cpu_seconds") or 0) for p in prov)\n',
           '    cell_cpu = sum(float(p.get("wall_seconds") or 0) for p in prov)\n',
           ("tests/test_report.py::test_report_time_sums_are_the_sums_of_the_records",)),
    Mutant("prior_gradient", "the Nyström-prior gradient's lambda term halved (prior_value_and_gradient)",
           "kernlearn_cli/solvers/nystrom.py", "), 2.0 * lam * D + 2.0 * El.T @ R @ El\n",
           "), lam * D + 2.0 * El.T @ R @ El\n",
           ("tests/test_nystrom.py::test_prior_gradient_is_the_derivative_of_the_objective",)),
    Mutant("mapping_gradient", "the Nyström-prior gradient's lambda term halved (the steps of gradient_mapping)",
           "kernlearn_cli/solvers/nystrom.py", "        return (J, 2.0 * lam * (M @ D @ M) + 2.0 * EM.T @ Q @ EM)",
           "        return (J, lam * (M @ D @ M) + 2.0 * EM.T @ Q @ EM)",
           ("tests/test_nystrom.py::test_gradient_mapping_steps_along_the_derivative_of_its_objective",)),
    Mutant("strong_convexity", "the lambda term of the Nyström prior's strong convexity halved (the certified "
           "bound doubles: runs at small lambda end unconverged)",
           "kernlearn_cli/solvers/nystrom.py", "        return 2.0 * lam + 2.0 * e_min * e_min\n    return 2.0 * lam\n",
           "        return lam + 2.0 * e_min * e_min\n    return lam\n",
           ("tests/test_nystrom.py::test_strong_convexity_is_the_smallest_curvature_of_the_objective",)),
    Mutant("krein_sign", "MEG's Krein trace shift with its sign flipped (update: lanczos)",
           "kernlearn_cli/solvers/meg.py", "        after, _ = self._rule(m, alpha * mu0)\n",
           "        after, _ = self._rule(m, -alpha * mu0)\n",
           ("tests/test_meg.py::test_lanczos_stream_from_a_dense_k0_equals_the_dense_reference",)),
    Mutant("krein_step", "MEG's dist_eq trace shift taken for the step of the other sign (update: lanczos)",
           "kernlearn_cli/solvers/meg.py", "            self._shift(self.run, 2.0, -0.5 * g)\n",
           "            self._shift(self.run, 2.0, 0.5 * g)\n",
           ("tests/test_meg.py::test_lanczos_stream_from_a_dense_k0_equals_the_dense_reference",)),
]


def copy_tree(dest: Path) -> None:
    """The repository's tracked files (as they are in the working tree, edits included) copied to ``dest``,
    made a git repository of one commit (records carry the commit; some tests read it back)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git = ["git", "-c", "user.name=mutants", "-c", "user.email=mutants@localhost", "-c", "commit.gpgsign=false"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "unmutated copy"]):
        subprocess.run([*git, *step], cwd=dest, check=True, capture_output=True)


def pytest(tree: Path, args: list[str], scratch: Path) -> tuple[int, str, float]:
    """``python -m pytest ARGS`` in ``tree``: (exit code, the last lines of its output, seconds)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": str(scratch / "numba"),
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *args], cwd=tree,
                          env=env, capture_output=True, text=True)
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-3:])
    return done.returncode, tail, time.perf_counter() - t0


def verdict(code: int) -> str:
    return {0: "survived", 1: "caught"}.get(code, f"error (pytest exit {code})")


def plant(tree: Path, m: Mutant) -> str:
    """Write the mutant into the copy; returns the original text (to restore)."""
    text = (tree / m.path).read_text()
    if text.count(m.old) != 1:
        raise ValueError(f"{m.name}: the text to replace occurs {text.count(m.old)} times in {m.path} "
                         f"(expected once); update the mutant to the code.")
    (tree / m.path).write_text(text.replace(m.old, m.new))
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run these mutants only")
    ap.add_argument("--before", action="store_true",
                    help="also run the fast tier of each named test's file without the named tests")
    ap.add_argument("--list", action="store_true", help="list the mutants and their tests, run nothing")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    unknown = set(args.only or ()) - {m.name for m in MUTANTS}
    if unknown:
        ap.error(f"unknown mutant(s) {', '.join(sorted(unknown))}; valid: {', '.join(m.name for m in MUTANTS)}")
    if args.list:
        for m in chosen:
            print(f"{m.name:16} {m.path}: {m.what}")
            print("".join(f"{'':17}{t}\n" for t in m.tests), end="")
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="kernlearn-mutants-"))
    failed, rest_unmutated = False, {}
    try:
        tree = scratch / "tree"
        copy_tree(tree)
        named = sorted({t for m in chosen for t in m.tests})
        code, tail, seconds = pytest(tree, named, scratch)
        print(f"unmutated: {len(named)} named test(s) {'pass' if code == 0 else 'FAIL'} ({seconds:.1f} s)")
        if code != 0:
            print(tail)
            return 1
        for m in chosen:
            try:
                original = plant(tree, m)
            except ValueError as exc:
                print(f"{m.name:16} error: {exc}")
                failed = True
                continue
            try:
                code, tail, seconds = pytest(tree, list(m.tests), scratch)
                line = f"{m.name:16} {verdict(code):9} {m.path} ({seconds:.1f} s): {m.what}"
                if args.before:
                    files = sorted({t.split("::")[0] for t in m.tests})
                    rest = [*files, "-m", "not slow", *(a for t in m.tests for a in ("--deselect", t))]
                    before, _, _ = pytest(tree, rest, scratch)
                    line += f"; the rest of {', '.join(files)} (fast tier): {verdict(before)}"
            finally:
                (tree / m.path).write_text(original)
            if args.before and before != 0:      # is it the mutant? the same tests unmutated must pass
                if rest_unmutated.setdefault(tuple(rest), pytest(tree, rest, scratch)[0]) != 0:
                    line += " (they fail unmutated too: not the mutant's doing)"
            print(line)
            if code != 1:
                failed = True
                print("    " + tail.replace("\n", "\n    "))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
