"""Studies: a paper's reproduction as data (``configs/papers/<paper>/study.yaml``).

A study lists the experiments a paper needs (configs and their overrides), the tables and
figures built from them, and the paper's statements with the entries and rule each is judged
by, a paper's table as one matrix of its numbers; its prose (summary, protocol, the tables'
texts, explanations) is Markdown beside it, ``study.md`` (``docs/studies.md`` is the reference).
Judging is :mod:`kernlearn_cli.verdicts`', running the experiments and writing pages the CLI's
(``kernlearn reproduce``, :mod:`kernlearn_cli.reproduce`).

This module holds a study as data (:class:`Study`, :class:`Experiment`, :class:`Table`,
:class:`Figure`) and the rule of a statement that names none (:func:`default_rule`).  One job per
module besides::

    reader    reading and checking a study file and its prose (:func:`~.reader.load_study`)
    find      the studies under a folder, and the study file a paper's name means
    budget    labelings per group sized to a time budget (:func:`~.budget.labelings_by_budget`)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..verdicts import Rule

#: The overrides a ``--quick`` run adds to an experiment by default.
QUICK_SET = ("grid.seed=range(3)",)
#: Metrics that are scores in [0, 1] (default rule without a spread: abs 0.02).
SCORES = ("alignment", "error", "error_best", "error_loo", "knn_accuracy", "knn_error", "nka_score", "nmi",
          "pairwise_accuracy", "svm_accuracy", "svm_accuracy_cv")


@dataclass(frozen=True)
class Experiment:
    """One ``kernlearn run`` of the study: results in ``<results>/<paper>/<out>``.

    ``quick`` holds the overrides a ``--quick`` run adds (None: skipped in quick mode)."""

    name: str
    config: Path
    set: tuple = ()
    out: str = ""
    jobs: int | None = None
    env: dict = field(default_factory=dict)
    quick: tuple | None = QUICK_SET
    seconds_per_cell: float | None = None      # stated estimate of a cell's compute, for --plan


@dataclass(frozen=True)
class Table:
    """A ``kernlearn collect`` over some experiments: the long table, or one metric (rows x cols)."""

    name: str
    title: str
    sources: tuple
    metric: str | None = None
    rows: str | None = None
    cols: str | None = None
    agg: str = "mean"
    text: str = ""


@dataclass(frozen=True)
class Figure:
    """A ``kernlearn plot`` (``kind`` plot), ``plot-history`` (history) or path figure (a list metric
    against another, e.g. the error along a regularization path)."""

    name: str
    title: str
    sources: tuple
    kind: str
    options: dict


@dataclass
class Study:
    """A paper's reproduction: see ``docs/studies.md``."""

    paper: str
    title: str
    path: Path
    source: str = ""
    summary: str = ""
    protocol: str = ""
    experiments: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict)
    statements: list = field(default_factory=list)
    untested: list = field(default_factory=list)       # (where, why) of statements we cannot test
    citation: dict = field(default_factory=dict)       # CITATION_KEYS -> text (year: int); empty: none given

    @property
    def folder(self) -> Path:
        return self.path.parent

    def selected(self, quick: bool) -> list[Experiment]:
        """The experiments a (quick) run runs, in order."""
        return [e for e in self.experiments.values() if not quick or e.quick is not None]


def default_rule(metric: str | None, std: float | None, read: str = "value") -> Rule:
    """The rule of a statement that names none (``docs/studies.md``, Rules): 2σ (of the difference)
    with the paper's std, and on a difference paired by seed (``read: same``); a factor of 2 on a gain; a factor of 1.5 on a ratio and on iteration
    counts and times; an absolute 0.02 for scores in [0, 1] (accuracy, NMI) and 10% for anything
    else.  Any other rule needs the paper's own words (``quote``)."""
    if (std is not None and read in ("value", "each")) or read == "same":
        return Rule("sigma", 2.0)
    if read == "gain":
        return Rule("factor", 2.0)
    if read == "ratio":
        return Rule("factor", 1.5)
    if metric in ("iterations", "seconds", "cpu_seconds") or (metric or "").startswith(("sweeps", "iterations")):
        return Rule("factor", 1.5)
    if metric in SCORES:
        return Rule("abs", 0.02)
    return Rule("rel", 0.1)
