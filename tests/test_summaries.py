"""Every paper's page: its summary agrees with its verdict table (issue 54).

A summary says which statements did what only under a verdict heading (``**Deviates**``), citing
them as ``#N``; every cited statement has that verdict and every reproduced one is cited."""

from pathlib import Path

import pandas as pd
import pytest

from kernlearn_cli.reproduce.pages import check_summary, summary_claims
from kernlearn_cli.study.reader import load_study

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("paper", ["hu2013", "kulis2006", "li2009", "tsuda2005", "zhang2012"])
def test_a_pages_summary_agrees_with_its_verdicts(paper):
    study = load_study(REPO / "configs" / "papers" / paper / "study.yaml")
    v = pd.read_csv(REPO / "results" / "tables" / f"{paper}_verdicts.csv")
    assert check_summary(study, v) == []
    page = (REPO / "docs" / "papers" / f"{paper}.md").read_text()
    assert study.summary.splitlines()[0] in page          # the page shows the summary that was checked


SUMMARY = """**What we ran.** Burg on iris, #1 not cited here.

**Reproduced**
- Table 1: #1, #3–#4.

**Deviates**
- Table 2, #2.

**Within the paper's numbers**
- #5.
"""


def test_the_summary_check_catches_a_wrong_claim_and_a_missing_one(tmp_path):
    """Planted mistakes: a statement cited outside a heading, a heading that is no verdict kind, a
    deviating statement claimed reproduced (#4), a reproduced statement not cited (#6)."""
    claims, problems = summary_claims(SUMMARY)
    assert claims == {1: "reproduced", 3: "reproduced", 4: "reproduced", 2: "deviates", 5: "?"}
    assert problems == ["'#1' is cited outside a verdict heading",
                        "heading '**Within the paper's numbers**' names no verdict kind (reproduced, deviates, "
                        "consistent, lower bound, not comparable, context, missing)",
                        "'#5' is cited outside a verdict heading"]

    class Study:
        summary, path = SUMMARY, tmp_path / "study.yaml"

    v = pd.DataFrame({"statement": [1, 2, 3, 4, 5, 6],
                      "verdict": ["reproduced", "deviates", "reproduced", "deviates", "deviates", "reproduced"]})
    problems = check_summary(Study, v)
    assert any("#4 is cited under **Reproduced** but its verdict is 'deviates'" in p for p in problems)
    assert any("#6 is reproduced but not cited under **Reproduced**" in p for p in problems)
    assert not any("#1 is" in p or "#3 is" in p or "#2 is" in p for p in problems)


@pytest.mark.parametrize("paper", ["hu2013", "kulis2006", "li2009", "tsuda2005", "zhang2012"])
def test_a_failed_rule_is_deviates_and_reproduced_is_unqualified(paper):
    """Issue 54's closing numbers, read from the committed verdicts: statements whose rule fails but
    whose verdict is not ``deviates``: 0; a ``reproduced`` row holds, calibrated on nothing, every cell
    converged (no qualifier); a ``consistent`` one holds under a qualifier."""
    v = pd.read_csv(REPO / "results" / "tables" / f"{paper}_verdicts.csv", dtype={"holds": str, "qualifier": str})
    failed = v[v["holds"] == "False"]
    assert set(failed["verdict"]) <= {"deviates"}, failed[["statement", "verdict"]].to_dict("records")
    assert set(v.loc[v["verdict"] == "deviates", "holds"]) <= {"False"}
    reproduced = v[v["verdict"] == "reproduced"]
    assert (reproduced["holds"] == "True").all() and reproduced["qualifier"].isna().all()
    consistent = v[v["verdict"] == "consistent"]
    assert (consistent["holds"] == "True").all() and consistent["qualifier"].notna().all()
