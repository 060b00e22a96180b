"""Verdicts before and after a change: per paper the statements, the tested ones and each kind at git
revision BASE and in the working tree, and every statement whose verdict changed, old -> new, with
its rule then and now (statements matched by their place in the paper, ``where``).

    python benchmarks/checks/verdict_changes.py cf04d9e            # every paper
    python benchmarks/checks/verdict_changes.py cf04d9e li2009     # one
"""

from __future__ import annotations

import argparse
import io
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

REPO = Path(__file__).resolve().parents[2]
PAPERS = ("hu2013", "kulis2006", "li2009", "tsuda2005", "zhang2012")


def verdicts_at(rev: str | None, paper: str) -> pd.DataFrame:
    """The paper's verdict table at ``rev`` (None: the working tree), context rows left out."""
    import pandas as pd
    path = f"results/tables/{paper}_verdicts.csv"
    text = (REPO / path).read_text() if rev is None else subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    v = pd.read_csv(io.StringIO(text), dtype=str)
    return v[v["verdict"] != "context"]


def kinds(v: pd.DataFrame) -> str:
    return ", ".join(f"{k} {n}" for k, n in v["verdict"].value_counts().sort_index().items())


def main(base: str, papers) -> None:
    for paper in papers:
        old, new = verdicts_at(base, paper), verdicts_at(None, paper)
        print(f"## {paper}\nbefore: {len(old)} judged rows: {kinds(old)}\nafter:  {len(new)} judged rows: {kinds(new)}")
        before = {" ".join(w.split()): r for w, r in zip(old["where"], old.to_dict("records"))}
        for _, r in new.iterrows():
            o = before.pop(" ".join(r["where"].split()), None)
            if o is None:
                print(f"  new #{r['statement']}: {r['verdict']} ({r['rule']}) — {r['where'][:110]}")
            elif o["verdict"] != r["verdict"] or o["rule"] != r["rule"]:
                qual = r.get("qualifier") if isinstance(r.get("qualifier"), str) else ""
                print(f"  #{o['statement']} -> #{r['statement']}: {o['verdict']} ({o['rule']}) -> {r['verdict']} "
                      f"({r['rule']}{'; ' + qual if qual else ''}) — {r['where'][:110]}")
        for w, o in before.items():
            print(f"  gone #{o['statement']}: {o['verdict']} — {w[:110]}")


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: the git revision to compare with, and the papers (default: every one)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("base", metavar="REV", help="git revision whose verdict tables are the 'before'")
    ap.add_argument("papers", metavar="PAPER", nargs="*",
                    help=f"papers to compare (default: all of {', '.join(PAPERS)})")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.papers) - set(PAPERS))
    if unknown:
        ap.error(f"unknown paper {', '.join(unknown)}: valid are {', '.join(PAPERS)}")
    args.papers = args.papers or list(PAPERS)
    return args


if __name__ == "__main__":
    ARGS = arguments()
    main(ARGS.base, ARGS.papers)
