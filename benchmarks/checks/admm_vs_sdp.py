"""Per-cell gap between KL_ADMM's objective and the exact SDP optimum, and ||V - U|| at the end.

    python benchmarks/checks/admm_vs_sdp.py [ADMM_DIR SDP_DIR]

Reads the results of configs/papers/hu2013/sdp_check_{admm,sdp}.yaml (``make hu2013-sdp-check``),
pairs the cells by (dataset, seed) -- the same constraints and Laplacian -- and prints each
relative gap (f_ADMM - f_SDP) / |f_SDP| with the factors file's ``v_minus_u``.
"""

import argparse
import json
import sys
from pathlib import Path


def load(root: Path) -> dict:
    """``{(dataset, seed): (objective, v_minus_u, iterations)}`` of the cells under ``root``."""
    import h5py
    out = {}
    for rec_path in sorted(root.glob("*/record.json")):
        rec = json.loads(rec_path.read_text())
        with h5py.File(rec_path.with_name("factors.h5")) as f:
            out[(rec["dataset"], rec["seed"])] = (rec["objective"], f.attrs.get("v_minus_u"), rec["iterations"])
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("admm_dir", nargs="?", type=Path, default=Path("results/hu2013/sdp_check_admm"),
                    help="result folder of sdp_check_admm.yaml (default: %(default)s)")
    ap.add_argument("sdp_dir", nargs="?", type=Path, default=Path("results/hu2013/sdp_check_sdp"),
                    help="result folder of sdp_check_sdp.yaml (default: %(default)s)")
    args = ap.parse_args(argv)
    admm, sdp = load(args.admm_dir), load(args.sdp_dir)
    if not admm.keys() & sdp.keys():
        sys.exit(f"no cell (dataset, seed) with a record.json in both {args.admm_dir} and {args.sdp_dir}: "
                 "run `make hu2013-sdp-check` first, or name the two result folders")
    print(f"{'dataset':>14} {'seed':>4} {'f_ADMM':>12} {'f_SDP':>12} {'rel. gap':>10} {'||V-U||':>9} {'iters':>6}")
    gaps = []
    for key in sorted(admm.keys() & sdp.keys()):
        (fa, vu, it), (fs, _, _) = admm[key], sdp[key]
        gaps.append((fa - fs) / abs(fs))
        print(f"{key[0]:>14} {key[1]:>4} {fa:>12.6f} {fs:>12.6f} {gaps[-1]:>10.2e} {vu:>9.1e} {it:>6}")
    print(f"largest relative gap {max(gaps):.2e} over {len(gaps)} cells (target: within 1%)")


if __name__ == "__main__":
    main()
