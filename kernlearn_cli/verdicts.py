"""Verdicts: each statement a paper makes, judged against the entries of our tables.

A *statement* is one sentence, table cell or figure reading of the paper that makes a claim
(``docs/studies.md``, "Statements and verdicts").  It reads one or several entries of our tables
(``read``) and is judged by one rule fixed in advance.  Its verdict is one of :data:`KINDS`:

``reproduced``
    the rule holds, nothing was calibrated on the statement and every cell it reads converged
    (or stopped on a cap the paper itself states, ``paper_cap``);
``deviates``
    the rule fails — whatever else holds: calibrated, capped or not (for a value that only bounds
    ours: every value beyond ours fails it);
``consistent``
    the rule holds, but a setting of ours was calibrated on this number or its table, or a cell
    it reads is an unfinished solve: the :data:`QUALIFIERS` say which;
``lower bound``
    a cell of an entry stopped on our iteration budget, so ours only bounds the true count or
    time from below and the rule cannot tell (never ``reproduced`` under a two-sided rule);
``not comparable``
    the paper's number cannot be compared with ours (e.g. 2013 MATLAB CPU seconds): shown as
    the ratio ours / paper, no verdict;
``context``
    a property of our stand-in data beside the paper's, no verdict;
``missing``
    an entry the statement reads has no finished cell.

``calibrated`` and ``unconverged`` are qualifiers of the value verdict (column ``qualifier``), never
verdicts of their own: a failed rule under them is still ``deviates``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

KINDS = ("reproduced", "deviates", "consistent", "lower bound", "not comparable", "context", "missing")
#: The kinds that test the paper (the others are shown beside it, outside the tested count).
TESTED = ("reproduced", "deviates", "consistent", "lower bound", "missing")
#: What may qualify a value verdict: a setting calibrated on the statement, a cell that did not converge.
QUALIFIERS = ("calibrated", "unconverged")
#: Metrics a cell stopped on its budget only bounds from below (any other metric of an unconverged
#: cell qualifies its statement ``unconverged``).
BOUNDED = ("iterations", "seconds", "cpu_seconds")
#: Metrics that measure convergence itself: an unconverged cell is their reading, not a defect of it.
ABOUT_CONVERGENCE = ("converged",)
VERDICT_COLUMNS = ("paper", "statement", "where", "entries", "metric", "read", "ours", "ours_text", "ours_std",
                   "seeds", "unconverged", "capped", "paper_value", "paper_text", "paper_std", "paper_runs", "rule",
                   "quote", "paper_cap", "delta", "holds", "calibrated", "qualifier", "verdict", "explanation")


class RuleKind:
    """One kind of rule: how its text reads, when it holds, what a value that only bounds ours
    means, and its line in ``docs/studies.md``'s rule table (:data:`RULE_KINDS`; the table is checked
    against :meth:`row` by a test).  Subclasses set the class attributes and :meth:`holds`."""

    #: ``Rule.kind``.
    name: str = ""
    #: The rule's text, with the number (if any) in the group ``x``.
    pattern: str = ""
    #: How the rule is written, in messages and in the docs' first column.
    syntax: str = ""
    #: The docs' "holds when" and "use" columns.
    when: str = ""
    use: str = ""
    #: The reads the rule can judge (None: any).
    reads: tuple | None = None
    #: The rule compares means: it needs the paper's std and run count.
    needs_std: bool = False
    #: Its number must be positive (and at least this).
    positive: bool = False
    minimum: float = 0.0

    def parse(self, text: str) -> str | None:
        """The rule's number as written in ``text`` ("" when it takes none), or None when ``text`` is
        another rule's."""
        m = re.fullmatch(r"\s*(?:" + self.pattern + r")\s*", text)
        return None if m is None else m.groupdict().get("x") or ""

    def text(self, x: float) -> str:
        return f"{self.name} {x:g}"

    def holds(self, x: float, ours: float, paper: float, se: float | None) -> bool:
        raise NotImplementedError

    def bounded(self, x: float, ours: float, paper: float, se: float | None, side: int) -> str:
        """The verdict when ours only bounds the true value: from below (``side`` +1, a count or time
        stopped on its budget) or from above (−1, a ratio whose start was stopped).  ``deviates`` when
        every value beyond ours fails the rule, ``reproduced`` only when every one passes, otherwise
        ``lower bound`` (undecided).  A two-sided rule: beyond ours it can only fail once it already
        fails on the far side of the paper."""
        if self.holds(x, ours, paper, se):
            return "lower bound"
        return "deviates" if (ours - paper) * side > 0 else "lower bound"

    def row(self) -> tuple[str, str, str]:
        """Its line in docs/studies.md's rule table: (rule, holds when, use)."""
        return f"`{self.syntax}`", self.when, self.use


class Sigma(RuleKind):
    name, pattern, syntax = "sigma", r"(?P<x>\d+(?:\.\d+)?)\s*sigma", "Nsigma (e.g. 2sigma)"
    when = "ǀours − paperǀ ≤ N · SE, SE = √(s_p² / n_p + s_o² / n_o)"
    use = ("the paper prints a per-run std s_p over n_p runs (`std`, `runs`); s_o, n_o are ours; "
           "Δ is shown in SE; with `read: same`, SE is the paired differences' (no `std` needed)")
    reads, needs_std = ("value", "each", "same"), True

    def text(self, x: float) -> str:
        return f"{x:g}sigma"

    def holds(self, x, ours, paper, se):
        return abs(ours - paper) <= x * se

    def row(self):
        return "`Nsigma` (e.g. `2sigma`)", self.when, self.use


class Factor(RuleKind):
    name, pattern, syntax = "factor", r"factor\s+(?P<x>[0-9.eE+-]+)", "factor F"
    positive, minimum = True, 1.0
    when, use = ("paper / F ≤ ours ≤ F · paper",
                 "counts, times and ratios without a spread (1.5; \"the same order\", quoted: 3); gains (2)")

    def holds(self, x, ours, paper, se):
        if paper == 0 or ours == 0 or (paper > 0) != (ours > 0):
            return ours == paper
        return abs(paper) / x <= abs(ours) <= abs(paper) * x


class Rel(RuleKind):
    name, pattern, syntax = "rel", r"rel\s+(?P<x>[0-9.eE+-]+)", "rel R"
    positive = True
    when, use = "ǀours − paperǀ ≤ R · ǀpaperǀ", "other values without a spread"

    def holds(self, x, ours, paper, se):
        return abs(ours - paper) <= x * abs(paper)


class Abs(RuleKind):
    name, pattern, syntax = "abs", r"abs\s+(?P<x>[0-9.eE+-]+)", "abs A"
    positive = True
    when = "ǀours − paperǀ ≤ A"
    use = "scores in [0, 1] without a spread (0.02), plot readings (the reading precision)"

    def holds(self, x, ours, paper, se):
        return abs(ours - paper) <= x


class AtMost(RuleKind):
    name = pattern = syntax = "at_most"
    when, use = "ours ≤ paper", "the paper states an upper bound (\"never above 600 sweeps\")"

    def text(self, x: float) -> str:
        return self.name

    def holds(self, x, ours, paper, se):
        return ours <= paper

    def bounded(self, x, ours, paper, se, side):
        """Every value above ours fails once ours does; every value below passes once ours does."""
        if self.holds(x, ours, paper, se):
            return "reproduced" if side < 0 else "lower bound"
        return "deviates" if side > 0 else "lower bound"


class AtLeast(AtMost):
    name = pattern = syntax = "at_least"
    when, use = "ours ≥ paper", "the paper states a lower bound (\"> 10000 iterations\")"

    def holds(self, x, ours, paper, se):
        return ours >= paper

    def bounded(self, x, ours, paper, se, side):
        """Every value below ours fails once ours does; every value above passes once ours does."""
        if self.holds(x, ours, paper, se):
            return "reproduced" if side > 0 else "lower bound"
        return "deviates" if side < 0 else "lower bound"


#: Every rule kind, by ``Rule.kind``, in the order messages and docs/studies.md list them.
RULE_KINDS = {k.name: k for k in (Sigma(), Factor(), Rel(), Abs(), AtMost(), AtLeast())}


@dataclass(frozen=True)
class Rule:
    """How a number is judged: ``kind`` one of :data:`RULE_KINDS` (``Nsigma``, ``factor F``,
    ``rel R``, ``abs A``, ``at_most``, ``at_least``) with its number ``x``; another kind is refused.

    ``Nsigma`` compares two means with their spreads: with the paper's std s_p over n_p runs and
    ours s_o over n_o seeds, the standard error of the difference is
    SE = sqrt(s_p² / n_p + s_o² / n_o), and the rule holds when ǀours − paperǀ ≤ N · SE.  A single
    seed has no spread of its own to measure, yet one draw varies by a whole per-run std: it is
    estimated by the paper's, SE = sqrt(s_p² / n_p + s_p²)."""

    kind: str
    x: float = 0.0

    def __post_init__(self):
        if self.kind not in RULE_KINDS:
            raise ValueError(f"rule kind '{self.kind}' is not one of {', '.join(RULE_KINDS)}")

    def __str__(self) -> str:
        return RULE_KINDS[self.kind].text(self.x)

    @staticmethod
    def standard_error(std: float | None, runs: int | None, ours_std: float | None, seeds: int) -> float:
        """SE of (ours − paper): both spreads, both run counts (a single seed: the paper's per-run std)."""
        own = std ** 2 if ours_std is None or not np.isfinite(ours_std) or seeds < 2 else ours_std ** 2 / seeds
        return math.sqrt(std ** 2 / runs + own)

    def holds(self, ours: float, paper: float, se: float | None = None) -> bool:
        """Whether ``ours`` agrees with ``paper`` under this rule (``se``: for ``Nsigma``)."""
        return RULE_KINDS[self.kind].holds(self.x, ours, paper, se)

    def judge(self, ours: float, paper: float, se: float | None = None, side: int = 0) -> str:
        """``reproduced``, ``deviates`` or ``lower bound`` for one compared value; ``side`` +1 when ours
        only bounds the true value from below (a count or time stopped on its budget), −1 from above
        (:meth:`RuleKind.bounded`), 0 when ours is the value."""
        if side == 0:
            return "reproduced" if self.holds(ours, paper, se) else "deviates"
        return RULE_KINDS[self.kind].bounded(self.x, ours, paper, se, side)


@dataclass(frozen=True)
class Entry:
    """One entry (row, col) of one of our tables."""

    table: str
    row: object
    col: object

    def __str__(self) -> str:
        return f"{self.table}: {self.row} / {self.col}"


@dataclass(frozen=True)
class Statement:
    """One statement of the paper, judged against ``entries`` (see the module docstring).

    ``read``: ``value`` (one entry), ``each`` (the rule holds for every entry), ``max`` / ``min``
    (over the entries, e.g. "never exceeded 600"), ``range`` (``paper`` = (low, high) against the
    smallest and largest cell of the entries), ``gain`` (``paper`` = the gain, or (before, after);
    ours: entry minus its ``start`` entry, for every pair), ``ratio`` (``paper`` = the ratio, or
    (before, after); ours: entry divided by its ``start`` entry, for every pair: how a time scales,
    free of the hardware's speed), ``same`` ("no significant difference": ``paper`` = the difference,
    0; ours: entry minus its ``start`` entry paired by seed, judged in paired standard errors),
    ``correlation`` (two metrics: ``paper`` = the least rank correlation
    the statement implies; ours: per column, Spearman's ρ between the entries and their ``start``
    entries of another metric, one per entry).  ``std`` and ``runs`` are the paper's
    spread and run count (for ``Nsigma``); ``calibrated`` says which of our settings was chosen
    by matching this number or its table; ``quote``: the paper's words that set a rule other than
    the default (:func:`~kernlearn_cli.study.default_rule`); ``paper_cap``: the paper's words stating
    the iteration cap its cells stop on (a cell stopped on it is the paper's protocol: its value is
    judged as a value, not qualified ``unconverged``); ``kind``: ``judged``, ``not comparable`` or ``context``;
    ``most``: for ``each``, ``gain``, ``ratio`` and ``correlation``, more than half of the entries must hold, not all ("on most
    data sets")."""

    where: str
    entries: tuple
    paper: tuple
    rule: Rule
    read: str = "value"
    starts: tuple = ()
    std: float | None = None
    runs: int | None = None
    kind: str = "judged"
    calibrated: str = ""
    explanation: str = ""
    most: bool = False
    quote: str = ""
    paper_cap: str = ""

    @property
    def paper_value(self) -> float:
        """The one number the rule compares (the gain for ``gain``, the ratio for ``ratio``; the low end
        for ``range``)."""
        if self.read == "gain" and len(self.paper) == 2:
            return self.paper[1] - self.paper[0]
        if self.read == "ratio" and len(self.paper) == 2:
            return self.paper[1] / self.paper[0]
        return self.paper[0]


def same_label(a, b) -> bool:
    """Table labels compare as numbers when both read as numbers (YAML's 1e-3 is a string)."""
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)


def lookup(entry: Entry, entries: dict[str, pd.DataFrame]):
    """The row of :func:`~kernlearn_cli.report.tables.entry_stats` for ``entry`` (None if absent)."""
    stats = entries.get(entry.table)
    if stats is None:
        return None
    match = [i for i, (r, c) in enumerate(zip(stats["row"], stats["col"]))
             if same_label(r, entry.row) and same_label(c, entry.col)]
    return stats.iloc[match[0]] if match else None


def _combine(parts: list[str], most: bool = False) -> str:
    """The verdict of several compared values: any deviation deviates, then any lower bound; with
    ``most`` (the paper says "on most data sets") more than half must be reproduced."""
    if most:
        return "reproduced" if 2 * parts.count("reproduced") > len(parts) else \
            "deviates" if 2 * parts.count("deviates") >= len(parts) else "lower bound"
    for kind in ("deviates", "lower bound"):
        if kind in parts:
            return kind
    return "reproduced"


def describe(entries: tuple) -> str:
    """Entries in short: per table, its rows / its columns when the entries are every combination."""
    parts = []
    for table in dict.fromkeys(e.table for e in entries):
        mine = [e for e in entries if e.table == table]
        rows, cols = list(dict.fromkeys(e.row for e in mine)), list(dict.fromkeys(e.col for e in mine))
        if len(mine) == len(rows) * len(cols):
            parts.append(f"{table}: {', '.join(map(str, rows))} / {', '.join(map(str, cols))}")
        else:
            parts.append(f"{table}: " + ", ".join(f"{e.row} / {e.col}" for e in mine))
    return "; ".join(parts)


def _fmt(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    return f"{value:.{digits}g}"


def paper_text(s: Statement) -> str:
    """The paper's side as shown: a value, a range low–high, or a gain (before → after)."""
    p = s.paper
    if s.read == "range":
        return f"{_fmt(p[0])}–{_fmt(p[1])}"
    if s.read == "gain":
        return f"{_fmt(p[0])} → {_fmt(p[1])} ({p[1] - p[0]:+.3g})" if len(p) == 2 else f"gain {p[0]:+.3g}"
    if s.read == "ratio":
        return f"{_fmt(p[0])} → {_fmt(p[1])} (×{s.paper_value:.3g})" if len(p) == 2 else f"ratio ×{p[0]:.3g}"
    if s.read == "same":
        return f"no difference ({p[0]:+.3g})"
    return _fmt(p[0])


def _read_each(s: Statement, hits, values, capped, starts, start_caps):
    """``value`` / ``each``: the rule on every entry (all must hold, or most with ``most``)."""
    parts, worst, delta = [], 0, None
    for k, (h, ours) in enumerate(zip(hits, values)):
        se = None
        if s.rule.kind == "sigma":
            se = Rule.standard_error(s.std, s.runs, float(h["std"]), int(h["seeds"]))
            d = (ours - s.paper[0]) / se if se > 0 else math.copysign(math.inf, ours - s.paper[0])
            if delta is None or abs(d) > abs(delta):
                delta, worst = d, k
        parts.append(s.rule.judge(ours, s.paper[0], se, side=int(capped[k])))
    if s.rule.kind != "sigma":           # the entry that decides: the first failing, else the farthest
        bad = [k for k, p in enumerate(parts) if p != "reproduced"]
        worst = bad[0] if bad else int(np.argmax([abs(v - s.paper[0]) for v in values]))
    return _combine(parts, s.most), dict(
        ours=values[worst], ours_std=float(hits[worst]["std"]), delta=delta,
        ours_text=", ".join(_fmt(v) for v in values) if len(values) > 1 else
        f"{_fmt(values[0])} ± {_fmt(float(hits[0]['std']), 2)} (n={int(hits[0]['seeds'])})")


def _read_extreme(s: Statement, hits, values, capped, starts, start_caps):
    """``max`` / ``min``: the rule on the largest / smallest entry."""
    k = int(np.argmax(values) if s.read == "max" else np.argmin(values))
    verdict = s.rule.judge(values[k], s.paper[0], None, side=int(any(capped)))
    return verdict, dict(ours=values[k], ours_text=f"{s.read} {_fmt(values[k])} ({s.entries[k].row} / {s.entries[k].col})")


def _read_range(s: Statement, hits, values, capped, starts, start_caps):
    """``range``: the rule on the smallest cell against the paper's low end, on the largest against its high end."""
    low, high = min(float(h["min"]) for h in hits), max(float(h["max"]) for h in hits)
    verdict = _combine([s.rule.judge(low, s.paper[0]), s.rule.judge(high, s.paper[1], None, side=int(any(capped)))])
    return verdict, dict(ours=low, ours_text=f"{_fmt(low)}–{_fmt(high)}")


def _paired(values: list[float], starts) -> list[float]:
    """The start value of each entry (one start for all, or one each)."""
    begin = [float(h["value"]) for h in starts]
    return begin * len(values) if len(begin) == 1 else begin


def _read_ratio(s: Statement, hits, values, capped, starts, start_caps):
    """``ratio``: each entry over its start.  A capped entry (a time or count stopped on its budget)
    makes its ratio a lower bound, a capped start an upper bound (each pair on its own); both
    capped: undecided."""
    begin = _paired(values, starts)
    ratios = [v / b if b else math.copysign(math.inf, v) if v else math.nan for v, b in zip(values, begin)]
    start_caps = start_caps * len(values) if len(start_caps) == 1 else start_caps
    parts = [("lower bound" if c else s.rule.judge(r, s.paper_value, None, side=-1)) if sc
             else s.rule.judge(r, s.paper_value, None, side=int(c)) for r, c, sc in zip(ratios, capped, start_caps)]
    k = next((i for i, p in enumerate(parts) if p != "reproduced"), 0)
    return _combine(parts, s.most), dict(ours=ratios[k], ours_text=", ".join(
        f"{_fmt(b)} → {_fmt(v)} (×{r:.3g})" for b, v, r in zip(begin, values, ratios)))


def paired_outcome(after: dict, before: dict, margin: float, sign: int, n: float = 2.0
                   ) -> tuple[str, float, float] | None:
    """A gain judged against its noise: the differences after − before paired by seed (the same
    labeling in both experiments), their mean d and its standard error SE = sd / √k over the k
    common seeds; ``gain`` when sign · (d − margin) > n SE, ``loss`` when < −n SE, else ``no
    difference``.  None when fewer than two seeds are common."""
    seeds = sorted(set(after) & set(before), key=str)
    if len(seeds) < 2:
        return None
    d = np.array([after[k] - before[k] for k in seeds], dtype=float)
    mean, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(len(d)))
    z = sign * (mean - margin)
    return ("gain" if z > n * se else "loss" if z < -n * se else "no difference"), mean, se


def _read_gain(s: Statement, hits, values, capped, starts, start_caps):
    """``gain``: each entry minus its start; any capped cell leaves it undecided.  A one-sided rule
    (``at_least`` / ``at_most`` a margin) over most entries ("a gain on most sets") judges each pair
    against its noise (:func:`paired_outcome`): it holds when the gains are more than half of all
    pairs, and the text gives the three counts."""
    begin = _paired(values, starts)
    gains = [v - b for v, b in zip(values, begin)]
    parts = [s.rule.judge(g, s.paper_value) for g in gains]
    k = next((i for i, p in enumerate(parts) if p != "reproduced"), 0)
    text = ", ".join(f"{_fmt(b)} → {_fmt(v)} ({g:+.3g})" for b, v, g in zip(begin, values, gains))
    firsts = starts * len(values) if len(starts) == 1 else starts
    outcomes = [paired_outcome(h.get("by_seed") or {}, f.get("by_seed") or {}, s.paper_value,
                               1 if s.rule.kind == "at_least" else -1) for h, f in zip(hits, firsts)] \
        if s.most and s.rule.kind in ("at_least", "at_most") else []
    paired = bool(outcomes) and all(o is not None for o in outcomes)
    if paired:
        kinds = [o[0] for o in outcomes]
        parts = ["reproduced" if 2 * kinds.count("gain") > len(kinds) else "deviates"]
        text = (f"{kinds.count('gain')} gain(s), {kinds.count('no difference')} no difference, "
                f"{kinds.count('loss')} loss(es) of {len(kinds)} (paired by seed, beyond ±2 SE): " + text)
    verdict = "lower bound" if any(capped) or any(start_caps) else _combine(parts, s.most and not paired)
    return verdict, dict(ours=gains[k], ours_text=text)


def _side(entry: Entry, other: Entry) -> str:
    """How one side of a pair is named: its column, or its table where both have one column."""
    return str(entry.col) if not same_label(entry.col, other.col) else entry.table


def _read_same(s: Statement, hits, values, capped, starts, start_caps):
    """``same`` ("no significant difference between A and B"): each entry against its start, the
    differences paired by seed (:func:`paired_outcome`: mean d over the k common seeds, SE = sd / √k);
    the rule ``Nsigma`` holds on a pair when ǀd − paperǀ ≤ N · SE (``paper``: the difference stated,
    0).  All pairs must hold (most with ``most``); a pair with fewer than two common seeds leaves the
    statement ``missing``, a capped cell a ``lower bound``."""
    firsts = starts * len(values) if len(starts) == 1 else starts
    named = s.starts * len(values) if len(s.starts) == 1 else s.starts
    outcomes = [paired_outcome(h.get("by_seed") or {}, f.get("by_seed") or {}, s.paper_value, 1, s.rule.x)
                for h, f in zip(hits, firsts)]
    if any(o is None for o in outcomes):
        return "missing", {}
    parts = [s.rule.judge(mean, s.paper_value, se) for _, mean, se in outcomes]
    z = [(mean - s.paper_value) / se if se > 0 else 0.0 if mean == s.paper_value
         else math.copysign(math.inf, mean - s.paper_value) for _, mean, se in outcomes]
    k = int(np.argmax(np.abs(z)))
    text = "; ".join(f"{e.row}: {_side(e, f)} − {_side(f, e)} {mean:+.3g} ± {se:.2g} ({d:+.1f} SE)"
                     for e, f, (_, mean, se), d in zip(s.entries, named, outcomes, z))
    verdict = "lower bound" if any(capped) or any(start_caps) else _combine(parts, s.most)
    return verdict, dict(ours=outcomes[k][1], delta=z[k], ours_text=f"{parts.count('reproduced')} of "
                         f"{len(parts)} pairs within {s.rule} (paired by seed): {text}")


def _read_correlation(s: Statement, hits, values, capped, starts, start_caps):
    """``correlation``: two metrics related.  The entries (one metric) and their ``start`` entries
    (another, one per entry) are paired; per column of the entries (e.g. a data set) ours is
    Spearman's rank correlation of the pairs across its rows (e.g. a parameter's values), and the
    rule holds on each column's (all must, or most with ``most``)."""
    from scipy.stats import spearmanr

    other = [float(h["value"]) for h in starts]
    cols = list(dict.fromkeys(e.col for e in s.entries))
    rhos = []
    for col in cols:
        mine = [k for k, e in enumerate(s.entries) if same_label(e.col, col)]
        rhos.append(float(spearmanr([values[k] for k in mine], [other[k] for k in mine]).statistic))
    parts = [s.rule.judge(r, s.paper_value) for r in rhos]
    k = next((i for i, p in enumerate(parts) if p != "reproduced"), 0)
    return _combine(parts, s.most), dict(ours=rhos[k], ours_text=", ".join(f"{c}: ρ = {r:+.2f}" for c, r in zip(cols, rhos)))


#: How a statement reads its entries (:data:`READS`): read -> (verdict, the row's "ours" columns).
READERS = {"value": _read_each, "each": _read_each, "max": _read_extreme, "min": _read_extreme,
           "range": _read_range, "gain": _read_gain, "ratio": _read_ratio, "same": _read_same,
           "correlation": _read_correlation}
READS = tuple(READERS)


def qualifiers(s: Statement, found: list, metric: str | None) -> list[str]:
    """What qualifies the value verdict of ``s`` (:data:`QUALIFIERS`): ``calibrated`` when a setting
    was chosen by matching it; ``unconverged`` when a cell of its entries did not converge and the
    metric is a value (a count or a time stopped on a budget is a lower bound instead, and a metric
    about convergence reads the unconverged cell as its answer).  Under ``paper_cap`` a cell stopped
    on an iteration cap is the paper's own protocol; only cells unconverged for another reason count."""
    out = ["calibrated"] if s.calibrated else []
    if metric not in BOUNDED and metric not in ABOUT_CONVERGENCE:
        left = sum(int(h["unconverged"]) - (int(h.get("capped", 0)) if s.paper_cap else 0) for h in found)
        if left > 0:
            out.append("unconverged")
    return out


def judge(s: Statement, entries: dict[str, pd.DataFrame], metric: str | None = None) -> dict:
    """The verdict row of one statement (columns :data:`VERDICT_COLUMNS` but ``paper``/``statement``
    /``metric``).  The reader (:data:`READERS`) gives the value verdict — ``reproduced``, ``deviates``
    or ``lower bound`` (cells stopped on their budget, when ``metric``, the first entry's table's, is a
    count or a time: :data:`BOUNDED`); :func:`qualifiers` then turn a ``reproduced`` into
    ``consistent``, and never touch a ``deviates``: a failed rule deviates whatever else holds."""
    hits = [lookup(e, entries) for e in s.entries]
    starts = [lookup(e, entries) for e in s.starts]
    found = [h for h in hits + starts if h is not None]
    row = {"where": s.where, "entries": describe(s.entries), "read": s.read, "paper_text": paper_text(s),
           "ours": None, "ours_text": "–", "ours_std": None,
           "seeds": int(sum(h["seeds"] for h in found)), "unconverged": int(sum(h["unconverged"] for h in found)),
           "capped": int(sum(h.get("capped", 0) for h in found)),
           "paper_value": s.paper_value, "paper_std": s.std, "paper_runs": s.runs, "rule": str(s.rule),
           "quote": s.quote, "paper_cap": s.paper_cap, "delta": None, "holds": None, "calibrated": s.calibrated,
           "qualifier": "", "explanation": s.explanation}
    if s.kind != "judged":
        row["rule"] = "–"
    if s.kind == "context":
        shown = [float(h["value"]) for h in hits if h is not None]
        if shown:
            row.update(ours=shown[0], ours_text=", ".join(_fmt(x) for x in shown))
        return {**row, "verdict": "context"}
    if any(h is None for h in hits + starts):
        return {**row, "verdict": "missing"}
    values = [float(h["value"]) for h in hits]
    if not all(np.isfinite(values)):
        return {**row, "verdict": "missing"}
    bounded = metric in BOUNDED
    capped = [bounded and int(h.get("capped", 0)) > 0 for h in hits]
    if s.kind == "not comparable":
        ours = values[0]
        row.update(ours=ours, ours_text=_fmt(ours), ours_std=float(hits[0]["std"]),
                   delta=ours / s.paper[0] if s.paper[0] else None)
        return {**row, "verdict": "not comparable"}
    start_caps = [bounded and int(h.get("capped", 0)) > 0 for h in starts]
    verdict, shown = READERS[s.read](s, hits, values, capped, starts, start_caps)
    row.update(shown)
    row["holds"] = {"reproduced": True, "deviates": False}.get(verdict)
    row["qualifier"] = ", ".join(qualifiers(s, found, metric))
    if verdict == "reproduced" and row["qualifier"]:
        verdict = "consistent"
    return {**row, "verdict": verdict}


def verdicts(paper: str, statements: list[Statement], entries: dict[str, pd.DataFrame],
             metrics: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per statement: our reading of its entries, the paper's value, the rule, Δ (in
    standard errors of the difference, for ``Nsigma``; ours / paper for ``not comparable``) and
    the verdict.  ``entries`` maps a table name to :func:`~kernlearn_cli.report.tables.entry_stats` of its records,
    ``metrics`` a table name to its metric."""
    metrics = metrics or {}
    rows = [{"paper": paper, "statement": k + 1, "metric": metrics.get(s.entries[0].table),
             **judge(s, entries, metrics.get(s.entries[0].table))} for k, s in enumerate(statements)]
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))


#: The columns of a verdict table (:func:`verdict_cells`).
VERDICT_HEADER = ("#", "paper's statement", "our entries", "ours", "paper", "Δ", "rule", "capped", "calibrated",
                  "verdict")


def verdict_cells(x) -> list[str]:
    """One verdict row (of :func:`verdicts`) as a table shows it, one text per :data:`VERDICT_HEADER`:
    ours with a † if a cell did not converge, the paper's with its std and runs, Δ, and the verdict
    with its qualifiers (``consistent (calibrated)``, ``deviates (unconverged)``)."""
    from .report.records import MARK

    ours = str(x["ours_text"]) + (f" {MARK}" if x["unconverged"] else "")
    paper = str(x["paper_text"]) + ("" if pd.isna(x["paper_std"]) else f" ± {_fmt(x['paper_std'], 2)}") \
        + ("" if pd.isna(x["paper_runs"]) else f" (n={int(x['paper_runs'])})")
    verdict = x["verdict"]
    if isinstance(x.get("qualifier"), str) and x["qualifier"]:
        verdict += f" ({x['qualifier']})"
    delta = x["delta"]
    delta = "–" if delta is None or pd.isna(delta) else (
        f"×{delta:.3g}" if x["verdict"] == "not comparable" else f"{delta:+.1f} SE")
    calibrated = x["calibrated"] if isinstance(x["calibrated"], str) and x["calibrated"] else "–"
    return [str(x["statement"]), " ".join(str(x["where"]).split()), str(x["entries"]), ours, paper, delta,
            str(x["rule"]), str(x["capped"] or "–"), calibrated, verdict]


def verdict_table(v: pd.DataFrame, *, explain: bool = True) -> str:
    """The verdicts as Markdown (:func:`verdict_cells`); explanations numbered below (each once)."""
    lines = ["| " + " | ".join(VERDICT_HEADER) + " |", "| " + " | ".join("---" for _ in VERDICT_HEADER) + " |"]
    notes = []
    for _, x in v.iterrows():
        cells = verdict_cells(x)
        cells[2] = cells[2].replace("|", "/")
        text = x["explanation"] if isinstance(x["explanation"], str) else ""
        if x["verdict"] != "reproduced" and explain and text:
            if text not in notes:
                notes.append(text)
            cells[-1] += f" [{notes.index(text) + 1}]"
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    if notes:
        text += "\n\n" + "\n".join(f"[{k}] {' '.join(n.split())}" for k, n in enumerate(notes, 1))
    return text


def counts(v: pd.DataFrame) -> dict:
    """Verdict kind -> how many statements have it."""
    found = v["verdict"].value_counts() if len(v) else {}
    return {kind: int(found.get(kind, 0)) for kind in KINDS}


def tally(v: pd.DataFrame, untested: int = 0) -> str:
    """'N statement(s), T tested: a reproduced, b deviates, …; outside the tested count: c not
    comparable, u untested' (zero kinds left out; ``deviates`` always shown)."""
    c = counts(v)
    stated = len(v) - c["context"] + untested
    tested = sum(c[k] for k in TESTED)
    parts = [f"{c[k]} {k}" for k in TESTED if c[k] or k == "deviates"]
    outside = [f"{n} {k}" for k, n in (("not comparable", c["not comparable"]), ("untested", untested)) if n]
    text = f"{stated} statement(s), {tested} tested" + (f": {', '.join(parts)}" if tested else "")
    text += f"; outside the tested count: {', '.join(outside)}" if outside else ""
    return text + (f"; {c['context']} context" if c["context"] else "")


def paper_item(where: str) -> str:
    """The paper's table, figure or section a statement comes from: the text of ``where`` before
    the first comma, semicolon, colon or parenthesis (``"Table 3, sonar"`` and ``"§6.1 text
    (GyrB): '...'"`` give ``"Table 3"`` and ``"§6.1 text"``)."""
    return re.split(r"[,;:(]", where, maxsplit=1)[0].strip()
