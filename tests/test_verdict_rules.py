"""The verdict rules: one class per rule (its text, when it holds, what a bounded value means,
its line in docs/studies.md), and no rule outside them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernlearn_cli.verdicts import READERS, READS, RULE_KINDS, Rule

DOCS = Path(__file__).resolve().parent.parent / "docs" / "studies.md"


def _docs_rule_rows() -> list[tuple[str, ...]]:
    text = DOCS.read_text()
    table = text[text.index("| rule | holds when | use |"):].split("\n\n", 1)[0].splitlines()[2:]
    return [tuple(cell.strip() for cell in line.strip().strip("|").split(" | ")) for line in table]


def test_the_docs_rule_table_is_the_codes():
    assert _docs_rule_rows() == [kind.row() for kind in RULE_KINDS.values()]


def test_an_unknown_rule_kind_is_impossible():
    with pytest.raises(ValueError, match="rule kind 'at_leest' is not one of sigma, factor, rel, abs, at_most, at_least"):
        Rule("at_leest")


@pytest.mark.parametrize("rule", [Rule("sigma", 2), Rule("factor", 3), Rule("rel", 0.1), Rule("abs", 0.02),
                                  Rule("at_most"), Rule("at_least")])
def test_each_rule_reads_back_from_its_text_by_its_own_kind_only(rule):
    readers = [k.name for k in RULE_KINDS.values() if k.parse(str(rule)) is not None]
    assert readers == [rule.kind]
    assert float(RULE_KINDS[rule.kind].parse(str(rule)) or 0.0) == rule.x


@pytest.mark.parametrize("rule, ours, paper", [(Rule("at_most"), 5, 6), (Rule("at_most"), 7, 6),
                                               (Rule("at_least"), 5, 6), (Rule("at_least"), 7, 6),
                                               (Rule("factor", 2), 2, 6), (Rule("factor", 2), 13, 6),
                                               (Rule("factor", 2), 5, 6)])
def test_a_bounded_value_is_decided_only_when_every_value_beyond_it_agrees(rule, ours, paper):
    """Brute force over the values beyond ours (side +1: above, −1: below): ``reproduced`` iff all
    pass, ``deviates`` iff all fail, else ``lower bound``."""
    for side in (1, -1):
        beyond = [ours + side * 0.01 * k for k in range(0, 5000)]
        passes = [rule.holds(v, paper) for v in beyond]
        expected = "reproduced" if all(passes) else "deviates" if not any(passes) else "lower bound"
        assert rule.judge(ours, paper, side=side) == expected, (side, expected)


def test_every_read_has_one_reader():
    assert set(READS) == set(READERS) and len(READS) == 9


def test_a_gain_counts_only_beyond_two_paired_standard_errors():
    """Issue 47: differences paired by seed; d = (0.01, 0.03) has mean 0.02, SE 0.01: exactly 2 SE is
    not beyond (no difference); a larger mean is a gain, a negative one a loss; one seed: no judgement."""
    from kernlearn_cli.verdicts import paired_outcome

    before = {0: 0.5, 1: 0.5}
    assert paired_outcome({0: 0.51, 1: 0.53}, before, 0.0, 1)[0] == "no difference"
    assert paired_outcome({0: 0.52, 1: 0.53}, before, 0.0, 1)[0] == "gain"
    assert paired_outcome({0: 0.47, 1: 0.48}, before, 0.0, 1)[0] == "loss"
    assert paired_outcome({0: 0.47, 1: 0.48}, before, 0.0, -1)[0] == "gain"       # at_most: lower is better
    assert paired_outcome({0: 0.6}, before, 0.0, 1) is None


def test_most_sets_means_more_than_half_are_gains_beyond_noise():
    """Three sets: one clear gain, one tie (no difference), one within noise: 1 of 3 is not most,
    although every mean gain is >= 0 (the old reading: holds)."""
    import pandas as pd

    from kernlearn_cli.verdicts import Entry, Statement, verdicts

    def stats(values):
        return pd.DataFrame([{"row": r, "col": c, "value": sum(v.values()) / len(v), "std": 0.0, "min": 0.0,
                              "max": 1.0, "seeds": len(v), "unconverged": 0, "capped": 0, "by_seed": v}
                             for (r, c), v in values.items()])

    t = stats({("a", "new"): {0: 0.60, 1: 0.61, 2: 0.62}, ("a", "old"): {0: 0.50, 1: 0.50, 2: 0.50},
               ("b", "new"): {0: 0.50, 1: 0.50, 2: 0.50}, ("b", "old"): {0: 0.50, 1: 0.50, 2: 0.50},
               ("c", "new"): {0: 0.52, 1: 0.48, 2: 0.51}, ("c", "old"): {0: 0.50, 1: 0.50, 2: 0.50}})
    s = Statement("text", tuple(Entry("t", r, "new") for r in "abc"), (0.0,), Rule("at_least"), "gain",
                  tuple(Entry("t", r, "old") for r in "abc"), most=True)
    v = verdicts("p", [s], {"t": t})
    assert v.loc[0, "verdict"] == "deviates"
    assert v.loc[0, "ours_text"].startswith("1 gain(s), 2 no difference, 0 loss(es) of 3 (paired by seed")


def _stats(values):
    import pandas as pd

    return pd.DataFrame([{"row": r, "col": c, "value": sum(v.values()) / len(v), "std": 0.0, "min": 0.0,
                          "max": 1.0, "seeds": len(v), "unconverged": 0, "capped": 0, "by_seed": v}
                         for (r, c), v in values.items()])


def test_no_significant_difference_is_every_paired_difference_within_two_standard_errors():
    """``read: same``: d = (0.01, 0.03) has mean 0.02, SE 0.01 — exactly 2 SE holds; (0.02, 0.03)
    (mean 0.025, SE 0.005: 5 SE) deviates, and one such pair among equal ones makes the statement
    deviate; a pair with one common seed cannot be judged (missing).  The rule's N is honoured:
    under 6sigma the 5-SE pair holds."""
    from kernlearn_cli.verdicts import Entry, Statement, verdicts

    base = {0: 0.5, 1: 0.5}
    t = _stats({("a", "x"): {0: 0.51, 1: 0.53}, ("a", "y"): base,
                ("b", "x"): {0: 0.52, 1: 0.53}, ("b", "y"): base,
                ("c", "x"): {0: 0.52}, ("c", "y"): base})

    def judged(rows, rule=Rule("sigma", 2)):
        s = Statement("no significant differences", tuple(Entry("t", r, "x") for r in rows), (0.0,), rule, "same",
                      tuple(Entry("t", r, "y") for r in rows))
        return verdicts("p", [s], {"t": t}).loc[0]

    assert judged("a")["verdict"] == "reproduced"
    assert judged("a")["delta"] == pytest.approx(2.0)
    worst = judged("ab")
    assert worst["verdict"] == "deviates" and worst["delta"] == pytest.approx(5.0)
    assert worst["ours_text"].startswith("1 of 2 pairs within 2sigma (paired by seed): a: x − y +0.02")
    assert judged("ab", Rule("sigma", 6))["verdict"] == "reproduced"
    assert judged("ac")["verdict"] == "missing"


def test_a_paired_difference_takes_two_sigma_by_default_without_the_papers_std():
    """``read: same`` defaults to 2sigma (2 paired SE), with no std of the paper's; a gain stays factor 2."""
    from kernlearn_cli.study import default_rule

    assert default_rule("error", None, "same") == Rule("sigma", 2.0)
    assert default_rule("error", None, "gain") == Rule("factor", 2.0)
