"""YAML experiment configs: validation, ``--set`` overrides and grid expansion into cells.

A config (the contract shape, see ``README.md``)::

    name: digits_burg            # experiment name (results/<name>/...)
    seed: 0                      # default seed of every cell
    grid:                        # optional: dotted keys -> list of values or "range(...)"
      constraints.count: [50, 100, 200]
      seed: range(20)
    dataset:     {name: pendigits}
    kernel:      {name: linear}
    constraints: {name: idealized_pairs, count: 100, epsilon: 0.25}
    solver:      {name: burg, tol: 1.0e-3}
    evaluate:    [{name: kernel_kmeans_nmi}, {name: knn_accuracy}]

Grid expansion order is fixed: the Cartesian product of the grid's keys in the
order they are written, the last key varying fastest (like nested for-loops).
Cell ``k`` therefore means the same cell on every machine and array index, and
:class:`Grid` makes cell ``k`` directly, without the others.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
import math
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError
from .params import did_you_mean
from .registry import REGISTRIES

COMPONENTS = {"dataset": "datasets", "kernel": "kernels", "constraints": "constraints", "solver": "solvers"}
TOP_KEYS = {"name", "seed", "grid", "description", "evaluate", *COMPONENTS}
#: ``kernel`` is required too, unless the solver does not use K0 (then it is refused): :func:`bind_cell`.
REQUIRED = ("name", "dataset", "constraints", "solver")
#: Experiment names: a folder name inside results/ (so never '.', '..' or hidden).
NAME = r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]*"
SEED_MAX = 2**63 - 1
_RANGE = re.compile(r"^\s*range\(\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?(?:,\s*(-?\d+)\s*)?\)\s*$")


@dataclass
class Cell:
    """One fully resolved run: a config without ``grid``, its index and stable id."""

    index: int
    config: dict
    grid_values: dict = field(default_factory=dict)

    @property
    def seed(self) -> int:
        return int(self.config.get("seed", 0))

    @functools.cached_property
    def validated(self) -> dict:
        """The config with every component's settings as the registries validate them (:func:`bind_cell`):
        ``gamma: 1``, ``gamma: 1.0`` and ``gamma: "1e0"`` all read ``gamma: 1.0`` here."""
        return self._views[0]

    @functools.cached_property
    def _views(self) -> tuple[dict, dict]:
        """(:attr:`validated`, the same as the id hashes it: :meth:`~kernlearn_cli.registry.Entry.digest_params`)."""
        bound = bind_cell(self, self.label("config"))
        views = []
        for params_of in (lambda entry, params: params, lambda entry, params: entry.digest_params(params)):
            config = {**self.config, **{key: _spec(bound[key][0], params_of(*bound[key]))
                                        for key in COMPONENTS if key in bound}}
            config["dataset"] = dict(config["dataset"])
            if "reference" in bound:
                config["constraints"] = {**config["constraints"],
                                         "reference": _spec(bound["reference"][0], params_of(*bound["reference"]))}
            for key in ("subset", "holdout"):
                if key in bound:
                    config["dataset"][key] = bound[key]
            config["evaluate"] = [_spec(entry, params_of(entry, params)) for entry, params in bound["evaluate"]]
            views.append(config)
        return views[0], views[1]

    @property
    def digest(self) -> str:
        """Hash of the validated config (:attr:`validated`, each component's settings as
        :meth:`~kernlearn_cli.registry.Entry.digest_params` gives them): the same values give the same id
        in any process, however a number was written."""
        text = json.dumps(self._views[1], sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    def label(self, where: str) -> str:
        """``where`` naming this cell, for messages: ``"x.yaml (cell 3)"`` in a grid."""
        return f"{where} (cell {self.index})" if self.grid_values else where

    @property
    def id(self) -> str:
        """Folder name of the cell: readable grid values (as validated) plus the digest."""
        parts = [f"{k.split('.')[-1]}-{_slug(get_dotted(self.validated, k))}" for k in self.grid_values]
        return "_".join(parts + [self.digest]) if parts else f"cell_{self.digest}"


def _spec(entry, params: dict) -> dict:
    return {"name": entry.name, **params}


def _slug(value: Any) -> str:
    text = value.get("name", json.dumps(value, sort_keys=True)) if isinstance(value, dict) else str(value)
    return re.sub(r"[^A-Za-z0-9.+-]+", "", text)[:24] or "x"


def load(path: str | Path, overrides: list[str] = (), seed: int | None = None, every_cell: bool = True) -> dict:
    """Read and validate a config file, apply ``--set key=value`` overrides and ``--seed``.

    ``--seed N`` sets the top-level seed and drops a ``seed`` axis from the grid.  With
    ``every_cell=False`` only the top level and the grid's axes are checked, not each cell's settings:
    for an array task, which checks the cells it runs (:func:`check_cell`) and so costs the same in
    a grid of any size.
    """
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"config '{path}' is a directory; give a YAML config file (e.g. {path}/quick.yaml).")
    if not path.is_file():
        raise ConfigError(f"config file '{path}' not found.")
    try:
        cfg = parse_yaml(path.read_bytes().decode("utf-8"), str(path))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); save the config as UTF-8.") \
            from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: a config must be a YAML mapping with keys {', '.join(REQUIRED)}.")
    settings, axes = apply_overrides(cfg, overrides)
    if seed is not None:
        if "seed" in settings or "seed" in axes:
            given = settings["seed"][0] if "seed" in settings else f"grid.seed={axes['seed']}"
            raise ConfigError(f"--seed {seed} and --set {given} both set the seed (--seed sets every cell's seed "
                              "and drops a seed grid axis); give one of them.")
        cfg["seed"] = seed
        if isinstance(cfg.get("grid"), dict) and "seed" in cfg["grid"]:
            cfg["grid"].pop("seed")
            if not cfg["grid"]:
                del cfg["grid"]
    validate(cfg, str(path), every_cell)
    for key, (text, value) in settings.items():
        check_not_shadowed(cfg, key, text, value, str(path), axes)
    return cfg


def apply_overrides(cfg: dict, overrides: Sequence[str]) -> tuple[dict, dict]:
    """Apply ``--set KEY=VALUE`` overrides to ``cfg`` in order (a later one wins), values read as YAML.

    ``grid.<key>=<values>`` sets grid axis ``<key>`` (grid keys are themselves dotted).  Returns the
    settings set, ``key -> (text, value)``, and the grid axes set, ``key -> text``: what
    :func:`check_not_shadowed` and ``--seed`` check them against.  The values themselves are checked
    with the config's (:func:`validate`).
    """
    settings, axes = {}, {}
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set '{item}': expected KEY=VALUE with a dotted key, e.g. --set solver.tol=1e-6.")
        key, text = key.strip(), text.strip()
        value = parse_yaml(text, f"--set '{item}'") if text else ""
        if key.startswith("grid."):
            if not isinstance(cfg.get("grid"), dict):
                cfg["grid"] = {}
            cfg["grid"][key[len("grid."):]] = value
            axes[key[len("grid."):]] = text
        else:
            set_dotted(cfg, key, value, f"--set {key}")
            settings[key] = (f"{key}={text}", value)
    return settings, axes


def check_not_shadowed(cfg: dict, key: str, text: str, value: Any, where: str, axes: dict) -> None:
    """Refuse an override of ``key`` that a grid axis of ``cfg`` sets again in every cell (it would do nothing).

    An axis shadows ``key`` when it is ``key`` itself, a mapping ``key`` lies in (axis ``dataset``,
    ``--set dataset.missing=drop``), or a part of ``key``'s new value (axis ``constraints.count``,
    ``--set constraints='{name: idealized_pairs, count: 50}'``).  The message names the axis, its
    values, and the ``--set grid.<axis>=...`` that does what was meant; for ``seed``, also ``--seed``.
    That axis is checked first, like a config's (:func:`bind_cell`), so a value that is not valid
    is refused as such.  ``where`` is the config file; ``axes`` are the axes set by
    ``--set grid.<axis>=<text>``, named as such.
    """
    grid = cfg.get("grid") or {}
    for axis, values in grid.items():
        if key == axis:
            meant, what = [value], f"'{key}' is a grid axis"
        elif key.startswith(axis + "."):
            meant, what = _with_dotted(values, key[len(axis) + 1:], value), f"'{key}' lies in grid axis '{axis}'"
        elif axis.startswith(key + ".") and _has_dotted(value, axis[len(key) + 1:]):
            meant = [get_dotted(value, axis[len(key) + 1:])]
            what = f"'{key}' holds '{axis}', a grid axis"
        else:
            continue
        if meant is not None:                        # the axis meant, with the others' first values
            first = {a: grid_values(a, v, where)[:1] for a, v in grid.items()}
            for cell in Grid({**cfg, "grid": {**first, axis: meant}}):
                bind_cell(cell, f"--set {text}")
        shown = [_flow(v) for v in grid_values(axis, values, where)]
        shown = ", ".join(shown) if len(shown) <= 6 else f"{', '.join(shown[:3])}, ..., {shown[-1]}; {len(shown)} values"
        source = f"(from --set grid.{axis}={axes[axis]})" if axis in axes else f"in {where}"
        fix = f"--set grid.{axis}={shlex.quote(_flow(meant))}" if meant is not None else \
            f"--set grid.{axis}='[...]' with '{key[len(axis) + 1:]}' set in each of its values"
        if axis == "seed" and isinstance(value, int):
            fix = f"--seed {value} (it sets every cell's seed and drops the seed axis), or {fix}"
        raise ConfigError(f"--set {text}: {what} {source} (values {shown}), which sets it in every cell, so "
                          f"this override would do nothing; override the axis instead: {fix}.")


def _has_dotted(node: Any, key: str) -> bool:
    try:
        get_dotted(node, key)
    except (KeyError, IndexError, TypeError, ValueError):
        return False
    return True


def _with_dotted(values: Any, key: str, value: Any) -> list | None:
    """Each of an axis's ``values`` with ``key`` set to ``value``; None where one is not a mapping."""
    if not isinstance(values, list) or not all(isinstance(v, dict) for v in values):
        return None
    values = copy.deepcopy(values)
    try:
        for v in values:
            set_dotted(v, key, copy.deepcopy(value), key)
    except ConfigError:
        return None
    return values


def _flow(value: Any) -> str:
    """``value`` as one line of YAML (``[50]``, ``{name: iris}``), as a ``--set`` takes it."""
    return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=math.inf).strip() \
        .removesuffix("...").strip()


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping with the same key twice (YAML would keep the last silently)
    and reads ``1e-6`` as the number it is (YAML 1.2; PyYAML's YAML 1.1 wants ``1.0e-6`` and would
    give the string '1e-6', so ``--set solver.tol=1e-6`` and ``tol: 1.0e-6`` were two cells)."""


_StrictLoader.yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"),
                                    list("-+0123456789"))


def _mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key '{key}' (first at line {seen[key] + 1}); each key may appear once",
                key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def parse_yaml(text: str, where: str):
    """YAML text -> Python values; a syntax error or a duplicate key is a :class:`ConfigError` naming ``where``."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        text = " ".join(str(exc).replace('in "<unicode string>", ', "at ").split())
        raise ConfigError(f"{where}: not valid YAML ({text}).") from None


def set_dotted(cfg: dict, key: str, value: Any, where: str) -> None:
    """Set ``cfg[a][b][c] = value`` for ``key = "a.b.c"`` (integer parts index lists)."""
    parts = key.split(".")
    node = cfg
    for depth, part in enumerate(parts[:-1]):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node.setdefault(part, {})
        else:
            raise ConfigError(f"{where}: '{'.'.join(parts[:depth + 1])}' is not a mapping, cannot set '{key}'.")
    last = parts[-1]
    if isinstance(node, list) and last.isdigit() and int(last) < len(node):
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise ConfigError(f"{where}: cannot set '{key}'.")


def get_dotted(cfg: dict, key: str) -> Any:
    """``cfg[a][b][c]`` for ``key = "a.b.c"`` (integer parts index lists), as :func:`set_dotted` set it."""
    node = cfg
    for part in key.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def validate(cfg: dict, where: str, every_cell: bool = True) -> None:
    """Check the top-level shape and the grid's axes, and (``every_cell``) each cell's settings
    (:func:`check_cell`)."""
    for key in cfg:
        if key not in TOP_KEYS:
            raise ConfigError(f"{where}: unknown top-level key '{key}'.{did_you_mean(key, TOP_KEYS)} "
                              f"Valid keys: {', '.join(sorted(TOP_KEYS))}.")
    for key in REQUIRED:
        if key not in cfg:
            raise ConfigError(f"{where}: missing required key '{key}'.")
    if not isinstance(cfg["name"], str) or not re.fullmatch(NAME, cfg["name"]):
        raise ConfigError(f"{where}: 'name' must be a string of letters, digits, '_', '-', '+', '.' that does not "
                          f"start with '.' (it names the folder results/<name>), got {cfg['name']!r}.")
    if "seed" in cfg:
        check_seed(cfg["seed"], f"{where}: 'seed'")
    if not isinstance(cfg.get("evaluate", []), list):
        raise ConfigError(f"{where}: 'evaluate' must be a list of mappings with a 'name' key.")
    grid = cfg.get("grid", {})
    if "grid" in cfg and (not isinstance(grid, dict) or not grid):
        raise ConfigError(f"{where}: 'grid' must map dotted keys to non-empty lists of values "
                          f"(e.g. constraints.count: [50, 100]); remove it for a single cell.")
    for key, values in (grid or {}).items():
        values = grid_values(key, values, where)
        if key == "seed":
            for value in values:
                check_seed(value, f"{where}: grid.seed value")
    if every_cell:
        for cell in expand(cfg):
            check_cell(cell, where)


def check_cell(cell: Cell, where: str) -> dict:
    """Check one cell's settings: its grid keys and every component through its registry; returns the
    components as bound (:func:`bind_cell`)."""
    check_grid_keys(cell, cell.label(where))
    return bind_cell(cell, cell.label(where))


def check_seed(value: Any, where: str) -> None:
    """A seed is an integer in 0 .. 2**63 - 1 (it is stored as int64 in the factors file)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= SEED_MAX:
        raise ConfigError(f"{where} must be an integer from 0 to 2**63 - 1 = {SEED_MAX}, got {value!r}.")


def check_grid_keys(cell: Cell, where: str) -> None:
    """A grid key must name a setting of the component it points into."""
    for key in cell.grid_values:
        parts = key.split(".")
        if parts[0] in COMPONENTS and len(parts) == 2 and parts[1] != "name":
            spec = cell.config[parts[0]]
            entry = REGISTRIES[COMPONENTS[parts[0]]].get(spec.get("name"), f"{where}: {parts[0]}")
            allowed = set(entry.parameters()) | ({"reference"} if parts[0] == "constraints" else set())
            if parts[1] not in allowed:
                raise ConfigError(f"{where}: grid key '{key}' does not exist: {parts[0]} '{entry.name}' has no "
                                  f"setting '{parts[1]}'.{did_you_mean(parts[1], allowed)} "
                                  f"Valid: {', '.join(sorted(allowed))}.")


def grid_values(key: str, values: Any, where: str) -> list:
    if isinstance(values, str):
        m = _RANGE.match(values)
        if not m:
            raise ConfigError(f"{where}: grid.{key}: expected a list or 'range(...)', got {values!r}.")
        return list(range(*(int(g) for g in m.groups() if g is not None)))
    if not isinstance(values, list) or not values:
        raise ConfigError(f"{where}: grid.{key}: expected a non-empty list of values or 'range(...)', got {values!r}.")
    if key.split(".")[0] not in TOP_KEYS - {"grid"}:
        raise ConfigError(f"{where}: grid key '{key}' does not start with a config key "
                          f"({', '.join(sorted(TOP_KEYS - {'grid'}))}).")
    if key == "evaluate":
        raise ConfigError(f"{where}: grid key 'evaluate': the list of evaluators is not a grid axis (every cell "
                          f"runs each of them, and its table shows their metrics side by side); a setting of one "
                          f"is (e.g. grid: {{evaluate.0.k: [1, 15]}}).")
    return values


class Grid(Sequence):
    """The cells of a config in the fixed expansion order, each made when it is asked for.

    ``len(grid)`` and ``grid[k]`` cost O(grid keys), not O(cells): cell ``k`` is the mixed-radix
    digits of ``k`` over the keys' value counts, the last key varying fastest (as in
    ``itertools.product``).  Iterating makes every cell.
    """

    def __init__(self, cfg: dict):
        cfg = copy.deepcopy(cfg)
        self.base = {k: v for k, v in cfg.items() if k != "grid"}
        self.base.setdefault("seed", 0)
        self.base.setdefault("evaluate", [])
        self.axes = [(k, grid_values(k, v, "grid")) for k, v in (cfg.get("grid") or {}).items()]

    def __len__(self) -> int:
        return math.prod(len(values) for _, values in self.axes)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[k] for k in range(len(self))[index]]
        index = range(len(self))[index]                   # IndexError outside the grid, as for a list
        combo, rest = [], index
        for _, values in reversed(self.axes):
            rest, digit = divmod(rest, len(values))
            combo.append(values[digit])
        return self._cell(index, combo[::-1])

    def __iter__(self):
        for index, combo in enumerate(itertools.product(*(values for _, values in self.axes))):
            yield self._cell(index, combo)

    def _cell(self, index: int, combo) -> Cell:
        config = copy.deepcopy(self.base)
        for (key, _), value in zip(self.axes, combo):
            set_dotted(config, key, copy.deepcopy(value), f"grid.{key}")
        return Cell(index, config, {key: value for (key, _), value in zip(self.axes, combo)})


def expand(cfg: dict) -> list[Cell]:
    """The cells of a config, numbered in the fixed expansion order (all of them: see :class:`Grid`)."""
    return list(Grid(cfg))


def bind_cell(cell: Cell, where: str) -> dict:
    """Resolve every component of a cell through its registry; returns name -> (entry, params).

    ``kernel`` is bound only for a solver that uses the initial kernel K0, and is then required; a
    solver registered with ``instead_of_kernel`` refuses it (it would be ignored), and ``bound`` has
    no ``kernel``.  The settings every component of a kind takes are bound beside it when given:
    ``reference`` (the constraints' reference kernel), ``subset`` (the dataset's,
    :func:`~kernlearn_cli.data.subset.check_subset`) and ``holdout`` (the dataset's held-out points,
    :func:`~kernlearn_cli.data.holdout.check_holdout`; its seed defaults to the cell's).
    """
    cfg = cell.config
    bound = {}
    for comp, reg in COMPONENTS.items():
        if comp == "kernel":
            continue
        spec = dict(cfg[comp]) if isinstance(cfg[comp], dict) else cfg[comp]
        if comp == "constraints" and isinstance(spec, dict) and "reference" in spec:
            bound["reference"] = REGISTRIES["kernels"].bind(spec.pop("reference"), f"{where}: constraints.reference")
        if comp == "dataset" and isinstance(spec, dict) and "subset" in spec:
            from .data.subset import check_subset

            bound["subset"] = check_subset(spec.pop("subset"), f"{where}: dataset.subset")
        if comp == "dataset" and isinstance(spec, dict) and "holdout" in spec:
            from .data.holdout import check_holdout

            bound["holdout"] = check_holdout(spec.pop("holdout"), cell.seed, f"{where}: dataset.holdout")
        bound[comp] = REGISTRIES[reg].bind(spec, f"{where}: {comp}")
    solver = bound["solver"][0]
    if solver.instead_of_kernel and "kernel" in cfg:
        raise ConfigError(f"{where}: kernel: solver '{solver.name}' does not use an initial kernel K0 "
                          f"({solver.instead_of_kernel}), so the key 'kernel' ({cfg['kernel']!r}) would be "
                          "ignored; remove it (only the solvers that start from K0 take a 'kernel').")
    if not solver.instead_of_kernel:
        if "kernel" not in cfg:
            raise ConfigError(f"{where}: missing required key 'kernel': solver '{solver.name}' starts from the "
                              "initial kernel K0 it names (e.g. kernel: {name: linear}).")
        bound["kernel"] = REGISTRIES["kernels"].bind(cfg["kernel"], f"{where}: kernel")
    bound["evaluate"] = [REGISTRIES["evaluators"].bind(spec, f"{where}: evaluate[{k}]")
                         for k, spec in enumerate(cfg.get("evaluate", []))]
    first: dict[str, int] = {}
    for k, (entry, params) in enumerate(bound["evaluate"]):
        if entry.name in first:
            j = first[entry.name]
            setting = next(iter({**bound["evaluate"][j][1], **params}), "SETTING")
            raise ConfigError(f"{where}: evaluate[{j}] and evaluate[{k}] are both '{entry.name}' "
                              f"({bound['evaluate'][j][1] or 'its defaults'} and {params or 'its defaults'}): one "
                              f"evaluator's metrics have one set of names, so the second would overwrite the first. "
                              f"Keep one entry and make the setting a grid axis (e.g. grid: {{evaluate.{j}.{setting}: "
                              f"[...]}}): each cell then has its value.")
        first[entry.name] = k
    owner: dict[str, int] = {}
    for k, (entry, params) in enumerate(bound["evaluate"]):
        for metric in entry.metric_names(params):
            if metric in owner:
                j = owner[metric]
                raise ConfigError(f"{where}: evaluate[{j}] ('{bound['evaluate'][j][0].name}') and evaluate[{k}] "
                                  f"('{entry.name}') both return the metric '{metric}', so the second would overwrite "
                                  f"the first. Keep one of them (or, for solver_info, leave '{metric}' out of its "
                                  f"keys).")
            owner[metric] = k
    return bound


def load_cells(path: Path, overrides: Sequence[str] = (), seed: int | None = None) -> tuple[dict, list[Cell]]:
    """The checked config of ``path`` (with ``--set`` overrides and ``--seed``) and all its cells."""
    cfg = load(path, list(overrides), seed)
    return cfg, expand(cfg)
