"""Studies: a paper's reproduction as data (``configs/papers/<paper>/study.yaml``).

A study lists the experiments a paper needs (configs and their overrides), the tables and
figures built from them, and the paper's own numbers with the rule each is judged by
(``docs/studies.md`` is the reference).  This module reads and checks a study, compares
every paper number with our table entry (:func:`verdicts`) and writes the per-paper page
``docs/papers/<paper>.md`` and the status table; running the experiments is the CLI's
(``kernlearn reproduce``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import ConfigError

STUDY_FILE = "study.yaml"
#: Where ``kernlearn reproduce PAPER`` looks for ``PAPER/study.yaml`` (relative to the working directory).
STUDIES_DIR = Path("configs") / "papers"
QUICK_SET = ("grid.seed=range(3)",)
AGGS = ("mean", "min", "max")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
_RULE = re.compile(r"^\s*(?:(?P<n>\d+(?:\.\d+)?)\s*sigma|(?P<kind>factor|rel|abs)\s+(?P<x>[0-9.eE+-]+)|"
                   r"(?P<bound>at_most|at_least))\s*$")
VERDICT_COLUMNS = ("paper", "table", "row", "col", "metric", "ours", "ours_std", "seeds", "unconverged",
                   "capped", "paper_value", "paper_std", "rule", "sigmas", "verdict", "where", "explanation")
#: What a cell that stopped on an iteration budget gives a table: the value to compare (the paper's
#: protocol had the same cap), or a lower bound on the count or time the paper measured.
CAPPED = ("value", "lower_bound")


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
    capped: str = "value"


@dataclass(frozen=True)
class Figure:
    """A ``kernlearn plot`` (``kind`` plot), ``plot-history`` (history) or path figure (a list metric
    against another, e.g. the error along a regularization path)."""

    name: str
    title: str
    sources: tuple
    kind: str
    options: dict


@dataclass(frozen=True)
class Rule:
    """How a number is judged: ``Nsigma``, ``factor F``, ``rel R``, ``abs A``, ``at_most``, ``at_least``."""

    kind: str
    x: float = 0.0

    def __str__(self) -> str:
        return {"sigma": f"{self.x:g}sigma", "at_most": "at_most", "at_least": "at_least"}.get(
            self.kind, f"{self.kind} {self.x:g}")

    def holds(self, ours: float, paper: float, std: float | None) -> bool:
        """Whether ``ours`` reproduces ``paper`` under this rule."""
        if self.kind == "sigma":
            return abs(ours - paper) <= self.x * std
        if self.kind == "factor":
            return paper / self.x <= ours <= paper * self.x if paper > 0 else ours == paper
        if self.kind == "rel":
            return abs(ours - paper) <= self.x * abs(paper)
        if self.kind == "abs":
            return abs(ours - paper) <= self.x
        return ours <= paper if self.kind == "at_most" else ours >= paper


@dataclass(frozen=True)
class Number:
    """A number the paper reports, against the entry (row, col) of one of our tables."""

    table: str
    row: object
    col: object
    paper: float
    std: float | None
    rule: Rule
    where: str
    explanation: str = ""


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
    numbers: list = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def selected(self, quick: bool) -> list[Experiment]:
        """The experiments a (quick) run runs, in order."""
        return [e for e in self.experiments.values() if not quick or e.quick is not None]


def default_rule(metric: str | None, std: float | None) -> Rule:
    """The rule of a number that names none (``docs/studies.md``): 2σ with a std; otherwise a
    factor of 3 for iteration counts and times, 10% for anything else."""
    if std is not None:
        return Rule("sigma", 2.0)
    if metric in ("iterations", "seconds"):
        return Rule("factor", 3.0)
    return Rule("rel", 0.1)


class _Reader:
    """Checks one study file's mapping, naming the file and key in every error."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, key: str, what: str):
        raise ConfigError(f"study '{self.path}': {key}: {what} (see docs/studies.md).")

    def mapping(self, value, key: str) -> dict:
        if not isinstance(value, dict):
            self.fail(key, f"expected a mapping, got {type(value).__name__}")
        return value

    def keys(self, spec: dict, key: str, allowed: set, required: set = frozenset()):
        unknown = sorted(set(spec) - allowed)
        if unknown:
            self.fail(key, f"unknown key(s) {', '.join(map(str, unknown))}; valid: {', '.join(sorted(allowed))}")
        missing = sorted(required - set(spec))
        if missing:
            self.fail(key, f"missing {', '.join(missing)}")

    def text(self, value, key: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            self.fail(key, f"expected text, got {value!r}")
        return value.strip()

    def strings(self, value, key: str) -> tuple:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(key, f"expected a list of strings, got {value!r}")
        return tuple(value)

    def number(self, value, key: str, *, positive: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or (positive and value <= 0):
            self.fail(key, f"expected a {'positive ' if positive else ''}finite number, got {value!r}")
        return float(value)

    def names(self, value, key: str, valid: dict) -> tuple:
        names = self.strings(value, key)
        for name in names:
            if name not in valid:
                self.fail(key, f"no experiment '{name}'; the study has {', '.join(valid)}")
        return names


def _experiment(r: _Reader, name: str, spec, folder: Path) -> Experiment:
    key = f"experiments.{name}"
    if isinstance(spec, str):
        spec = {"config": spec}
    spec = r.mapping(spec, key)
    r.keys(spec, key, {"config", "set", "out", "jobs", "env", "quick", "seconds_per_cell"}, {"config"})
    config = folder / r.text(spec["config"], f"{key}.config")
    if not config.is_file():
        r.fail(f"{key}.config", f"config file '{config}' not found")
    out = r.text(spec.get("out", name), f"{key}.out")
    if not out or any(part in ("", ".", "..") for part in out.split("/")) or out.startswith("/"):
        r.fail(f"{key}.out", f"'{out}' must be a relative folder inside the paper's results folder")
    jobs = spec.get("jobs")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        r.fail(f"{key}.jobs", f"expected an integer >= 1, got {jobs!r}")
    env = r.mapping(spec.get("env", {}), f"{key}.env")
    quick = spec.get("quick", {})
    if quick is False:
        quick_set = None
    else:
        quick = r.mapping(quick if quick is not True else {}, f"{key}.quick")
        r.keys(quick, f"{key}.quick", {"set"})
        quick_set = r.strings(quick.get("set", list(QUICK_SET)), f"{key}.quick.set")
    per_cell = spec.get("seconds_per_cell")
    if per_cell is not None and (isinstance(per_cell, bool) or not isinstance(per_cell, (int, float)) or per_cell <= 0):
        r.fail(f"{key}.seconds_per_cell", f"expected a number of seconds > 0 (the estimated compute of one cell), "
                                          f"got {per_cell!r}")
    return Experiment(name, config, r.strings(spec.get("set", []), f"{key}.set"), out, jobs,
                      {str(k): str(v) for k, v in env.items()}, quick_set,
                      float(per_cell) if per_cell is not None else None)


def _table(r: _Reader, name: str, spec, experiments: dict) -> Table:
    key = f"tables.{name}"
    spec = r.mapping(spec, key)
    r.keys(spec, key, {"title", "from", "metric", "rows", "cols", "agg", "text", "capped"}, {"from"})
    agg = spec.get("agg", "mean")
    if agg not in AGGS:
        r.fail(f"{key}.agg", f"'{agg}' is not one of {', '.join(AGGS)}")
    capped = spec.get("capped", "value")
    if capped not in CAPPED:
        r.fail(f"{key}.capped", f"'{capped}' is not one of {', '.join(CAPPED)}")
    metric = spec.get("metric")
    if metric is None and any(k in spec for k in ("rows", "cols")):
        r.fail(key, "rows and cols lay out one metric; give metric too")
    return Table(name, r.text(spec.get("title", name), f"{key}.title"), r.names(spec["from"], f"{key}.from", experiments),
                 None if metric is None else r.text(metric, f"{key}.metric"),
                 None if spec.get("rows") is None else r.text(spec["rows"], f"{key}.rows"),
                 None if spec.get("cols") is None else r.text(spec["cols"], f"{key}.cols"),
                 agg, r.text(spec.get("text"), f"{key}.text"), capped)


PLOT_OPTIONS = {"metric", "x", "by", "logx", "loglog"}
HISTORY_OPTIONS = {"key", "mean", "logx", "logy", "xlabel"}
PATH_OPTIONS = {"y", "x", "by", "logx", "logy"}
FIGURE_KINDS = {"plot": (PLOT_OPTIONS, {"metric"}), "history": (HISTORY_OPTIONS, set()),
                "path": (PATH_OPTIONS, {"x", "y"})}


def _figure(r: _Reader, name: str, spec, experiments: dict) -> Figure:
    from .report import FIGURE_FORMATS

    key = f"figures.{name}"
    spec = r.mapping(spec, key)
    r.keys(spec, key, {"title", "from", *FIGURE_KINDS}, {"from"})
    if Path(name).suffix.lower() not in FIGURE_FORMATS:
        r.fail(key, f"a figure's name is its file name, ending in one of {', '.join(FIGURE_FORMATS)}")
    kinds = [k for k in FIGURE_KINDS if k in spec]
    if len(kinds) != 1:
        r.fail(key, "give exactly one of plot: {metric, x, ...}, history: {key, ...} or path: {y, x, ...}")
    kind = kinds[0]
    options = r.mapping(spec[kind], f"{key}.{kind}")
    r.keys(options, f"{key}.{kind}", *FIGURE_KINDS[kind])
    return Figure(name, r.text(spec.get("title", ""), f"{key}.title"), r.names(spec["from"], f"{key}.from", experiments),
                  kind, dict(options))


def parse_rule(text, metric: str | None, std: float | None, r: _Reader, key: str) -> Rule:
    """A rule from its text (``2sigma``, ``factor 3``, ``rel 0.1``, ``abs 0.02``, ``at_most``, ``at_least``)."""
    if text is None:
        return default_rule(metric, std)
    m = _RULE.match(str(text))
    if not m:
        r.fail(key, f"rule '{text}' is not one of: Nsigma (e.g. 2sigma), factor F, rel R, abs A, at_most, at_least")
    if m["n"]:
        if std is None:
            r.fail(key, f"rule '{text}' needs the paper's std (std: ...)")
        return Rule("sigma", float(m["n"]))
    if m["bound"]:
        return Rule(m["bound"])
    try:
        x = float(m["x"])
    except ValueError:
        r.fail(key, f"rule '{text}': '{m['x']}' is not a number")
    x = r.number(x, key, positive=True)
    if m["kind"] == "factor" and x < 1:
        r.fail(key, f"factor {x:g} must be >= 1")
    return Rule(m["kind"], x)


def _number(r: _Reader, k: int, spec, tables: dict) -> Number:
    key = f"numbers[{k}]"
    spec = r.mapping(spec, key)
    r.keys(spec, key, {"table", "row", "col", "paper", "std", "rule", "where", "explanation"},
           {"table", "row", "col", "paper", "where"})
    table = tables.get(spec["table"])
    if table is None:
        r.fail(f"{key}.table", f"no table '{spec['table']}'; the study has {', '.join(tables)}")
    if table.metric is None:
        r.fail(f"{key}.table", f"table '{table.name}' is a long table; numbers need a table with a metric")
    std = None if spec.get("std") is None else r.number(spec["std"], f"{key}.std", positive=True)
    return Number(table.name, spec["row"], spec["col"], r.number(spec["paper"], f"{key}.paper"), std,
                  parse_rule(spec.get("rule"), table.metric, std, r, f"{key}.rule"),
                  r.text(spec["where"], f"{key}.where"), r.text(spec.get("explanation"), f"{key}.explanation"))


def load_study(path: Path) -> Study:
    """Read and check ``path`` (a ``study.yaml``): every key, every config file it names, every
    experiment a table or figure draws from, every table a number is judged against."""
    from .config import parse_yaml

    path = Path(path)
    r = _Reader(path)
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    except UnicodeDecodeError:
        r.fail("file", "not UTF-8 text")
    data = r.mapping(data, "top level")
    r.keys(data, "top level", {"paper", "title", "source", "summary", "protocol", "experiments", "tables",
                               "figures", "numbers"}, {"paper", "title", "experiments"})
    paper = r.text(data["paper"], "paper")
    if paper != path.parent.name:
        r.fail("paper", f"'{paper}' must be the name of the study's folder, '{path.parent.name}'")
    experiments = {}
    for name, spec in r.mapping(data["experiments"], "experiments").items():
        if not _NAME.match(str(name)):
            r.fail(f"experiments.{name}", "a name is letters, digits, '_', '.', '+' or '-'")
        experiments[name] = _experiment(r, name, spec, path.parent)
    tables = {}
    for name, spec in r.mapping(data.get("tables") or {}, "tables").items():
        if not _NAME.match(str(name)):
            r.fail(f"tables.{name}", "a name is letters, digits, '_', '.', '+' or '-'")
        tables[name] = _table(r, name, spec, experiments)
    figures = {name: _figure(r, name, spec, experiments)
               for name, spec in r.mapping(data.get("figures") or {}, "figures").items()}
    numbers = data.get("numbers") or []
    if not isinstance(numbers, list):
        r.fail("numbers", "expected a list")
    return Study(paper, r.text(data["title"], "title"), path, r.text(data.get("source"), "source"),
                 r.text(data.get("summary"), "summary"), r.text(data.get("protocol"), "protocol"),
                 experiments, tables, figures, [_number(r, k, spec, tables) for k, spec in enumerate(numbers)])


def study_names(root: Path = STUDIES_DIR) -> list[str]:
    """The papers with a study file under ``root``."""
    return sorted(p.parent.name for p in Path(root).glob(f"*/{STUDY_FILE}"))


def find_studies(paper: str, root: Path = STUDIES_DIR) -> list[Path]:
    """Study files for ``paper`` (a paper name, ``all``, a study file or its folder)."""
    given = Path(paper)
    if given.is_file():
        return [given]
    if (given / STUDY_FILE).is_file():
        return [given / STUDY_FILE]
    names = study_names(root)
    if paper == "all":
        if not names:
            raise ConfigError(f"reproduce all: no study files under '{root}' (run from the project's folder, "
                              f"where configs/papers/<paper>/study.yaml live).")
        return [Path(root) / n / STUDY_FILE for n in names]
    if paper not in names:
        from .registry import did_you_mean

        raise ConfigError(f"reproduce: no study '{paper}' (looked for {Path(root) / paper / STUDY_FILE}).{did_you_mean(paper, names)} "
                          f"Valid: {', '.join(names + ['all']) or 'all'}, or the path of a study.yaml.")
    return [Path(root) / paper / STUDY_FILE]


# ---- verdicts ------------------------------------------------------------------------------

def _same_label(a, b) -> bool:
    """Table labels compare as numbers when both read as numbers (YAML's 1e-3 is a string)."""
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)


def judge(number: Number, ours: float | None, lower_bound: bool = False) -> tuple[str, float | None]:
    """(verdict, difference in the paper's σ) of one number given our value.

    With ``lower_bound`` ours only bounds the true value from below (a run stopped on its budget):
    the verdict is ``deviates`` when every value from ours up fails the rule, ``reproduced`` when
    every one passes (``at_least``), and ``lower bound`` when it cannot be told."""
    sigmas = None if ours is None or number.std is None else (ours - number.paper) / number.std
    if ours is None or not np.isfinite(ours):
        return "missing", sigmas
    holds = number.rule.holds(ours, number.paper, number.std)
    if not lower_bound:
        return ("reproduced" if holds else "deviates"), sigmas
    if number.rule.kind == "at_least":
        return ("reproduced" if holds else "lower bound"), sigmas
    return ("lower bound" if holds or ours < number.paper else "deviates"), sigmas


def verdicts(study: Study, entries: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per paper number: ours (the table entry's statistic, std, seeds, cells that did not
    converge), the paper's value and std, the rule, the difference in σ and the verdict.

    ``entries`` maps a table name to :func:`report.entry_stats` of its records (keys ``row``,
    ``col``, ``value``, ``std``, ``seeds``, ``unconverged``); an absent table or entry gives the
    verdict ``missing``."""
    rows = []
    for number in study.numbers:
        table = study.tables[number.table]
        stats = entries.get(number.table)
        hit = None
        if stats is not None:
            match = [i for i, (r, c) in enumerate(zip(stats["row"], stats["col"]))
                     if _same_label(r, number.row) and _same_label(c, number.col)]
            hit = stats.iloc[match[0]] if match else None
        ours = None if hit is None else float(hit["value"])
        capped = 0 if hit is None else int(hit.get("capped", 0))
        verdict, sigmas = judge(number, ours, lower_bound=table.capped == "lower_bound" and capped > 0)
        rows.append({"paper": study.paper, "table": number.table, "row": number.row, "col": number.col,
                     "metric": table.metric, "ours": ours,
                     "ours_std": None if hit is None else float(hit["std"]),
                     "seeds": 0 if hit is None else int(hit["seeds"]),
                     "unconverged": 0 if hit is None else int(hit["unconverged"]), "capped": capped,
                     "paper_value": number.paper, "paper_std": number.std, "rule": str(number.rule),
                     "sigmas": sigmas, "verdict": verdict, "where": number.where,
                     "explanation": number.explanation})
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))


def _fmt(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    return f"{value:.{digits}g}"


def verdict_table(v: pd.DataFrame, *, explain: bool = True) -> str:
    """The verdicts as Markdown: entry, ours (± std, seeds, † if it includes unconverged cells),
    the paper's, Δ in σ, rule, verdict; the explanations of deviations numbered below (each once)."""
    from .report import MARK

    lines = ["| table | entry | ours | paper | Δ (σ) | rule | verdict |", "| --- | --- | --- | --- | --- | --- | --- |"]
    notes = []
    for _, x in v.iterrows():
        ours = "–" if x["ours"] is None or pd.isna(x["ours"]) else \
            f"{_fmt(x['ours'])} ± {_fmt(x['ours_std'], 2)} (n={x['seeds']})" + (f" {MARK}" if x["unconverged"] else "")
        paper = _fmt(x["paper_value"]) + ("" if pd.isna(x["paper_std"]) else f" ± {_fmt(x['paper_std'], 2)}")
        verdict = x["verdict"]
        if verdict != "reproduced" and explain and x["explanation"]:
            if x["explanation"] not in notes:
                notes.append(x["explanation"])
            verdict += f" [{notes.index(x['explanation']) + 1}]"
        sig = "–" if x["sigmas"] is None or pd.isna(x["sigmas"]) else f"{x['sigmas']:+.1f}"
        lines.append(f"| {x['table']} | {x['row']} / {x['col']} | {ours} | {paper} | {sig} | {x['rule']} | {verdict} |")
    text = "\n".join(lines)
    if notes:
        text += "\n\n" + "\n".join(f"[{k}] {' '.join(n.split())}" for k, n in enumerate(notes, 1))
    return text


def tally(v: pd.DataFrame) -> str:
    """'k of n reproduced' (with deviating / missing counts)."""
    n = len(v)
    counts = v["verdict"].value_counts()
    rest = ", ".join(f"{counts[s]} {s}" for s in ("deviates", "lower bound", "missing") if counts.get(s, 0))
    return f"{counts.get('reproduced', 0)} of {n} reproduced" + (f" ({rest})" if rest else "")


def paper_item(where: str) -> str:
    """The paper's table, figure or section a number comes from: the text of ``where`` before the first
    comma, semicolon, colon or parenthesis (``"Table 3, sonar"`` and ``"§6.1 text (GyrB): '...'"`` give
    ``"Table 3"`` and ``"§6.1 text"``)."""
    return re.split(r"[,;:(]", where, maxsplit=1)[0].strip()
