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
    assert set(READS) == set(READERS) and len(READS) == 8
