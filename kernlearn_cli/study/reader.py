"""Reading and checking a study file (``study.yaml``) and its prose (``study.md`` beside it):
:func:`load_study`, every error naming the file and the key (``docs/studies.md`` is the reference)."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from pathlib import Path

from ..errors import ConfigError
from ..verdicts import READS, RULE_KINDS, Entry, Rule, Statement
from . import QUICK_SET, Experiment, Figure, Study, Table, default_rule

#: The study's prose beside it: ``## KEY`` sections (:data:`PROSE_KINDS`).
PROSE_FILE = "study.md"
#: A prose section's heading: ``summary``, ``protocol`` or ``table NAME`` (the page's texts), or
#: ``explanation NAME`` / ``calibrated NAME`` (named by the statements that use them).
PROSE_KINDS = ("summary", "protocol", "table", "explanation", "calibrated")
AGGS = ("mean", "min", "max")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
#: A statement's kind: judged by its rule, or shown beside the paper without a verdict.
STATEMENT_KINDS = ("judged", "not comparable", "context")


def read_prose(path: Path) -> dict:
    """The sections of a study's prose file (:data:`PROSE_FILE`; none: ``{}``): ``## KEY`` -> its
    Markdown, stripped.  Before the first section only a ``# `` title line may stand."""
    path = Path(path)
    if not path.is_file():
        return {}

    def fail(what: str):
        raise ConfigError(f"study prose '{path}': {what} (see docs/studies.md).")

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        fail("not UTF-8 text")
    sections, key = {}, None
    for number, line in enumerate(lines, 1):
        if line.startswith("## "):
            key = " ".join(line[3:].split())
            kind, _, name = key.partition(" ")
            if kind not in PROSE_KINDS or bool(name) == (kind in ("summary", "protocol")) or " " in name:
                fail(f"line {number}: '## {key}' is not one of '## summary', '## protocol', "
                     f"'## table NAME', '## explanation NAME', '## calibrated NAME'")
            if key in sections:
                fail(f"line {number}: '## {key}' given twice")
            sections[key] = []
        elif key is not None:
            sections[key].append(line)
        elif line.strip() and not (number == 1 and line.startswith("# ")):
            fail(f"line {number}: text before the first '## ' section (only a '# ' title may stand there)")
    return {key: "\n".join(text).strip() for key, text in sections.items()}


class _Reader:
    """Checks one study file's mapping, naming the file and key in every error; hands out its
    prose sections (:func:`read_prose`), remembering which were used."""

    def __init__(self, path: Path):
        self.path = path
        self.prose_path = path.with_name(PROSE_FILE)
        self.prose = read_prose(self.prose_path)
        self.used: set = set()

    def fail(self, key: str, what: str):
        raise ConfigError(f"study '{self.path}': {key}: {what} (see docs/studies.md).")

    def section(self, section: str, key: str | None = None) -> str:
        """The text of prose section ``section``: named by ``key`` of the study (a missing section
        is an error), or optional (``key`` None: ``""``)."""
        if section not in self.prose:
            if key is None:
                return ""
            self.fail(key, f"no section '## {section}' in {self.prose_path}")
        self.used.add(section)
        return self.prose[section]

    def named(self, value, key: str, kind: str) -> str:
        """The section ``## kind NAME`` that ``key`` names (``value`` NAME; None: ``""``)."""
        if value is None:
            return ""
        if not isinstance(value, str) or not _NAME.match(value):
            self.fail(key, f"expected the name of a section '## {kind} NAME' of {self.prose_path}, got {value!r}")
        return self.section(f"{kind} {value}", key)

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
    r.keys(spec, key, {"title", "from", "metric", "rows", "cols", "agg"}, {"from"})
    agg = spec.get("agg", "mean")
    if agg not in AGGS:
        r.fail(f"{key}.agg", f"'{agg}' is not one of {', '.join(AGGS)}")
    metric = spec.get("metric")
    if metric is None and any(k in spec for k in ("rows", "cols")):
        r.fail(key, "rows and cols lay out one metric; give metric too")
    return Table(name, r.text(spec.get("title", name), f"{key}.title"), r.names(spec["from"], f"{key}.from", experiments),
                 None if metric is None else r.text(metric, f"{key}.metric"),
                 None if spec.get("rows") is None else r.text(spec["rows"], f"{key}.rows"),
                 None if spec.get("cols") is None else r.text(spec["cols"], f"{key}.cols"),
                 agg, r.section(f"table {name}"))


PLOT_OPTIONS = {"metric", "x", "by", "logx", "loglog", "logy"}
HISTORY_OPTIONS = {"key", "mean", "logx", "logy", "xlabel"}
PATH_OPTIONS = {"y", "x", "by", "logx", "logy"}
FIGURE_KINDS = {"plot": (PLOT_OPTIONS, {"metric"}), "history": (HISTORY_OPTIONS, set()),
                "path": (PATH_OPTIONS, {"x", "y"})}


def _figure(r: _Reader, name: str, spec, experiments: dict) -> Figure:
    from ..report.figures import FIGURE_FORMATS

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


def parse_rule(text, metric: str | None, std: float | None, r: _Reader, key: str, read: str = "value") -> Rule:
    """A rule from its text, by the first of :data:`~kernlearn_cli.verdicts.RULE_KINDS` that reads it (``2sigma``,
    ``factor 3``, ``rel 0.1``, ``abs 0.02``, ``at_most``, ``at_least``)."""
    if text is None:
        return default_rule(metric, std, read)
    found = [(kind, x) for kind in RULE_KINDS.values() if (x := kind.parse(str(text))) is not None]
    if not found:
        r.fail(key, f"rule '{text}' is not one of: {', '.join(k.syntax for k in RULE_KINDS.values())}")
    kind, x = found[0]
    if kind.needs_std and std is None and read != "same":
        r.fail(key, f"rule '{text}' needs the paper's std (std: ...)")
    if kind.reads is not None and read not in kind.reads:
        r.fail(key, f"rule '{text}' compares means; read '{read}' has none (use factor, rel, abs or a bound)")
    try:
        x = float(x or 0.0)
    except ValueError:
        r.fail(key, f"rule '{text}': '{x}' is not a number")
    if kind.positive:
        x = r.number(x, key, positive=True)
    if x < kind.minimum:
        r.fail(key, f"{kind.name} {x:g} must be >= {kind.minimum:g}")
    return Rule(kind.name, x)


def _entries(r: _Reader, spec, key: str, tables: dict, default_table=None) -> tuple:
    """Entries from ``{table, row, col}`` mappings (a list of rows or cols: every combination)."""
    specs = spec if isinstance(spec, list) else [spec]
    if not specs:
        r.fail(key, "expected at least one entry {table, row, col}")
    out = []
    for k, one in enumerate(specs):
        where = f"{key}[{k}]" if isinstance(spec, list) else key
        one = r.mapping(one, where)
        r.keys(one, where, {"table", "row", "col"}, {"row", "col"} | (set() if default_table else {"table"}))
        name = one.get("table", default_table)
        table = tables.get(name)
        if table is None:
            r.fail(f"{where}.table", f"no table '{name}'; the study has {', '.join(tables)}")
        if table.metric is None:
            r.fail(f"{where}.table", f"table '{name}' is a long table; a statement reads a table with a metric")
        rows = one["row"] if isinstance(one["row"], list) else [one["row"]]
        cols = one["col"] if isinstance(one["col"], list) else [one["col"]]
        out += [Entry(name, row, col) for row in rows for col in cols]
    return tuple(out)


#: The keys a statement, or a matrix and its rows, columns and cells, sets for its statements.
SHARED_KEYS = {"where", "runs", "rule", "quote", "paper_cap", "kind", "calibrated", "explanation"}


def _statement(r: _Reader, key: str, spec, tables: dict) -> Statement:
    spec = r.mapping(spec, key)
    r.keys(spec, key, SHARED_KEYS | {"table", "row", "col", "entries", "start", "read", "paper", "std", "holds"},
           {"where", "paper"})
    read = spec.get("read", "value")
    if read not in READS:
        r.fail(f"{key}.read", f"'{read}' is not one of {', '.join(READS)}")
    kind = spec.get("kind", "judged")
    if kind not in STATEMENT_KINDS:
        r.fail(f"{key}.kind", f"'{kind}' is not one of {', '.join(STATEMENT_KINDS)}")
    if ("entries" in spec) == ("row" in spec or "col" in spec):
        r.fail(key, "give the entry as table, row, col or several as entries: [{table, row, col}, ...]")
    entries = _entries(r, spec["entries"], f"{key}.entries", tables, spec.get("table")) if "entries" in spec \
        else _entries(r, {x: spec.get(x) for x in ("table", "row", "col") if x in spec}, key, tables)
    if read == "value" and len(entries) != 1:
        r.fail(f"{key}.read", f"'value' reads one entry; {len(entries)} given (use each, max, min, range or gain)")
    holds = spec.get("holds", "all")
    if holds not in ("all", "most") or (holds == "most" and read not in ("each", "gain", "ratio", "same", "correlation")):
        r.fail(f"{key}.holds", f"'{holds}': all (default) or most (more than half of the entries; "
                               f"read each, gain, ratio, same or correlation only)")
    starts = ()
    if read in ("gain", "ratio", "same", "correlation"):
        if "start" not in spec:
            r.fail(key, f"a {read} needs start: the entry (or one per entry) it is measured from"
                   if read != "correlation" else "a correlation needs start: one entry of the other metric per entry")
        starts = _entries(r, spec["start"], f"{key}.start", tables, spec.get("table"))
        if len(starts) not in ((1, len(entries)) if read != "correlation" else (len(entries),)):
            r.fail(f"{key}.start", f"one start entry or one per entry ({len(entries)}); {len(starts)} given"
                   if read != "correlation" else f"one entry per entry ({len(entries)}); {len(starts)} given")
    elif "start" in spec:
        r.fail(f"{key}.start", "only a gain, a ratio, a paired difference (read: gain, ratio, same) or a "
                               "correlation (read: correlation) has a start")
    paper = spec["paper"]
    paper = tuple(r.number(x, f"{key}.paper") for x in (paper if isinstance(paper, list) else [paper]))
    size = {"range": (2,), "gain": (1, 2), "ratio": (1, 2)}.get(read, (1,))
    if len(paper) not in size:
        r.fail(f"{key}.paper", f"read '{read}' takes {' or '.join(map(str, size))} number(s), got {len(paper)}")
    if read == "ratio" and len(paper) == 2 and paper[0] == 0:
        r.fail(f"{key}.paper", "a ratio [before, after] needs before != 0")
    std = None if spec.get("std") is None else r.number(spec["std"], f"{key}.std", positive=True)
    runs = spec.get("runs")
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 1):
        r.fail(f"{key}.runs", f"expected the paper's number of runs (an integer >= 1), got {runs!r}")
    metric = tables[entries[0].table].metric
    rule = parse_rule(spec.get("rule"), metric, std, r, f"{key}.rule", read)
    if rule.kind == "sigma" and runs is None and read != "same":
        r.fail(f"{key}.runs", f"rule '{rule}' compares two means: give the paper's number of runs (runs: ...)")
    quote = r.text(spec["quote"], f"{key}.quote") if spec.get("quote") is not None else ""
    default = default_rule(metric, std, read)
    if kind == "judged" and rule != default and not quote:
        r.fail(f"{key}.rule", f"rule '{rule}' is not this statement's default ('{default}', for {read} of "
                              f"{metric or 'a value'}{' with the paper' + chr(39) + 's std' if std else ''}): "
                              f"a rule other than the default needs quote: the paper's own words that set the "
                              f"band (e.g. 'about', 'the same order', '> 10000'), or leave rule out")
    cap = r.text(spec["paper_cap"], f"{key}.paper_cap") if spec.get("paper_cap") is not None else ""
    return Statement(r.text(spec["where"], f"{key}.where"), entries, paper, rule, read, starts, std, runs, kind,
                     r.named(spec.get("calibrated"), f"{key}.calibrated", "calibrated"),
                     r.named(spec.get("explanation"), f"{key}.explanation", "explanation"), holds == "most",
                     quote, cap)


def _printed(value, percent: bool):
    """A number as the paper prints it -> as our tables hold it (a percentage exactly / 100)."""
    if not percent or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return float(Decimal(repr(value)) / 100)


def _label(r: _Reader, spec, key: str, extra: set = frozenset()) -> tuple[str, dict]:
    """A matrix row's or column's label and the statement keys it sets (``LABEL`` or ``{label, ...}``)."""
    if not isinstance(spec, dict):
        return r.text(str(spec), key), {}
    r.keys(spec, key, {"label"} | SHARED_KEYS | extra, {"label"})
    return r.text(str(spec["label"]), f"{key}.label"), {k: v for k, v in spec.items() if k != "label"}


def _matrix(r: _Reader, key: str, spec, tables: dict) -> list[Statement]:
    """A paper's table as statements: one per cell of ``paper`` (row by row, in the order of ``rows``
    and ``cols``; ``null`` or a short row: no statement), each reading its entry of table ``matrix``
    by its value rule; ``where`` formatted with the row's and column's labels and the cell's
    numbers.  A cell, its column, its row and the matrix set the statement keys, in that order."""
    spec = r.mapping(spec, key)
    r.keys(spec, key, SHARED_KEYS | {"matrix", "rows", "cols", "paper", "std", "percent"},
           {"matrix", "where", "rows", "cols", "paper"})
    percent = spec.get("percent", False)
    if not isinstance(percent, bool):
        r.fail(f"{key}.percent", f"expected true (the numbers are printed in percent) or false, got {percent!r}")
    rows = {row: _label(r, x, f"{key}.rows.{row}") for row, x in r.mapping(spec["rows"], f"{key}.rows").items()}
    cols = {col: _label(r, x, f"{key}.cols.{col}", {"table"})
            for col, x in r.mapping(spec["cols"], f"{key}.cols").items()}
    grids = {}
    for name in ("paper", "std"):
        grid = r.mapping(spec.get(name, {}), f"{key}.{name}")
        for row, values in grid.items():
            values = values if isinstance(values, list) else [values]
            if row not in rows or len(values) > len(cols):
                r.fail(f"{key}.{name}.{row}", f"no row '{row}' in rows ({', '.join(map(str, rows))})"
                       if row not in rows else f"{len(values)} values for {len(cols)} columns")
            grid[row] = values
        grids[name] = grid
    common = {k: spec[k] for k in SHARED_KEYS if k in spec}
    out = []
    for row, (row_label, row_keys) in rows.items():
        for j, (col, (col_label, col_keys)) in enumerate(cols.items()):
            cell = (grids["paper"].get(row, []) + [None] * len(cols))[j]
            if cell is None:
                continue
            where = f"{key}.paper.{row}[{j}]"
            if not isinstance(cell, dict):
                cell = {"paper": cell}
            r.keys(cell, where, SHARED_KEYS | {"paper", "std"}, {"paper"})
            std = cell.get("std", (grids["std"].get(row, []) + [None] * len(cols))[j])
            one = {**common, **row_keys, **{k: v for k, v in col_keys.items() if k != "table"}, **cell,
                   "table": col_keys.get("table", spec["matrix"]), "row": row, "col": col,
                   "paper": _printed(cell["paper"], percent)}
            if std is not None:
                one["std"] = _printed(std, percent)
            try:
                one["where"] = r.text(one["where"], f"{where}.where").format(
                    row=row_label, col=col_label, paper=cell["paper"], std=std)
            except (KeyError, IndexError, ValueError, TypeError) as exc:
                r.fail(f"{where}.where", f"'{one['where']}' does not format with row, col, paper and std ({exc})")
            out.append(_statement(r, where, one, tables))
    return out


#: The keys of a study's ``citation`` (all but ``doi`` and ``note`` required).
CITATION_KEYS = ("authors", "title", "venue", "year", "url", "doi", "note")


def _citation(r: _Reader, spec) -> dict:
    if spec is None:
        return {}
    spec = r.mapping(spec, "citation")
    r.keys(spec, "citation", set(CITATION_KEYS), set(CITATION_KEYS) - {"doi", "note"})
    year = spec["year"]
    if isinstance(year, bool) or not isinstance(year, int):
        r.fail("citation.year", f"expected the year of publication as an integer, got {year!r}")
    return {k: year if k == "year" else r.text(spec[k], f"citation.{k}") for k in CITATION_KEYS if k in spec}


def _untested(r: _Reader, k: int, spec) -> tuple:
    key = f"untested[{k}]"
    spec = r.mapping(spec, key)
    r.keys(spec, key, {"where", "why"}, {"where", "why"})
    return r.text(spec["where"], f"{key}.where"), r.text(spec["why"], f"{key}.why")


def load_study(path: Path) -> Study:
    """Read and check ``path`` (a ``study.yaml``) and its prose (``study.md`` beside it): every key,
    every config file it names, every experiment a table or figure draws from, every table a
    number is judged against, every prose section (each used once or more)."""
    from ..config import parse_yaml

    path = Path(path)
    r = _Reader(path)
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    except UnicodeDecodeError:
        r.fail("file", "not UTF-8 text")
    data = r.mapping(data, "top level")
    r.keys(data, "top level", {"paper", "title", "source", "citation", "experiments", "tables", "figures",
                               "statements", "untested"}, {"paper", "title", "experiments"})
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
    statements, untested = data.get("statements") or [], data.get("untested") or []
    for key, value in (("statements", statements), ("untested", untested)):
        if not isinstance(value, list):
            r.fail(key, "expected a list")
    judged = [s for k, spec in enumerate(statements)
              for s in (_matrix(r, f"statements[{k}]", spec, tables) if isinstance(spec, dict) and "matrix" in spec
                        else [_statement(r, f"statements[{k}]", spec, tables)])]
    study = Study(paper, r.text(data["title"], "title"), path, r.text(data.get("source"), "source"),
                  r.section("summary"), r.section("protocol"), experiments, tables, figures, judged,
                  [_untested(r, k, spec) for k, spec in enumerate(untested)], _citation(r, data.get("citation")))
    unused = [key for key in r.prose if key not in r.used]
    if unused:
        raise ConfigError(f"study prose '{r.prose_path}': section(s) {', '.join(f'## {k}' for k in unused)} "
                          f"used by nothing in {path} (a table or statement of that name; see docs/studies.md).")
    return study
