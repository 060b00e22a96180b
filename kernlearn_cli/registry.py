"""Name -> function registries for the five kinds of component.

A component is a plain function.  Its positional parameters are the context the
runner passes in (a dataset, a factor ...); its keyword-only parameters are the
settings a user may give in the config, and their annotations (with their ranges
and choices, :mod:`kernlearn_cli.params`) and defaults are the schema the config is
validated against, in :meth:`Registry.bind`.  ``register`` returns the function
wrapped so that a direct call checks the settings it is given against the same
schema, with the same validator (:func:`kernlearn_cli.params.coerce`).

    >>> from typing import Annotated
    >>> from kernlearn_cli.params import Interval
    >>> from kernlearn_cli.registry import solvers
    >>> @solvers.register("my_solver")
    ... def my_solver(G0, constraints, *, tol: Annotated[float, Interval(0, None, closed="neither")] = 1e-3,
    ...               callback=None): ...
"""

from __future__ import annotations

import functools
import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from .builtins import modules_of
from .errors import ConfigError
from .params import compile_check, describe, did_you_mean, parameter_docs, settings_hints

#: Keyword-only parameters the runner supplies itself; never settable from a config.
RUNNER_KEYWORDS = {"callback", "rng", "dataset", "result", "reference", "constraints", "heldout"}


@dataclass
class Entry:
    """A registered component.

    ``triplets`` (solvers only) says whether the solver accepts triplet constraints
    (kind ``triplet``, Li et al. 2009); the runner refuses to hand triplets to one that does not.
    ``instead_of_kernel`` (solvers only) is empty for a solver that starts from the initial kernel
    K0 = G0 G0ᵀ of the config's ``kernel:``; for one that does not, it says in words what the solver
    builds instead, and a config giving it a ``kernel:`` is refused (:func:`kernlearn_cli.config.bind_cell`).
    ``inductive`` (solvers only) says how ``kernlearn embed`` maps new points (:data:`INDUCTIVE`):
    ``"landmarks"``, ``"initial factor"``, or empty for a transductive solver.
    ``exact`` (solvers only) says whether the solver enforces its constraints exactly, so that two rows
    bounding one quantity incompatibly make its problem infeasible (:meth:`Entry.enforces_exactly`); the
    runner refuses such a set before solving (:func:`kernlearn_cli.refusals.refuse_conflicts`).
    ``warmup`` (solvers only) says what ``kernlearn warmup`` does to compile the solver's numba kernels
    (:func:`kernlearn_cli.warmup.warmup`): nothing (False), import its module (True: kernels declared
    with a signature compile then), or run it once on a tiny problem (a mapping: the ``constraints``
    spec, and optionally a ``kernel`` spec and ``solver`` settings, replacing those of
    :data:`~kernlearn_cli.warmup.WARMUP_CELL`).  ``budget`` (solvers only) names the setting that
    bounds its iterations, for the ``k of max`` of progress (:func:`kernlearn_cli.runner.iteration_limit`);
    empty for none.  ``estimator`` (solvers only) describes its scikit-learn estimator
    (:class:`EstimatorSpec`, :mod:`kernlearn_cli.estimators`); None for none.  When its iteration budget
    runs out, a solver's certificate says so with a word of :data:`kernlearn_cli.types.CAPPED`.
    ``checks`` (every kind) declares what the generic checks need (:class:`Checks`,
    :func:`kernlearn_cli.testing.check_solver`).
    """

    name: str
    func: Callable
    summary: str
    triplets: bool = False
    instead_of_kernel: str = ""
    inductive: str = ""
    #: False (soft constraints: a loss, a penalty, on-line examples, or none), True (always exact), or
    #: the settings that make them soft when given a value other than their default (e.g. ``slack``).
    exact: bool | tuple[str, ...] = False
    warmup: bool | dict = False
    budget: str = ""
    estimator: EstimatorSpec | None = None
    #: Evaluators: the names of the metrics it returns (each returned key is one of them, or one of them
    #: followed by ``_`` and a suffix), or the setting whose value lists them (``"keys"``).
    metrics: tuple[str, ...] | str = ()
    #: What the generic checks of :mod:`kernlearn_cli.testing` need of it (:class:`Checks`); None: not declared.
    checks: Checks | None = None
    #: Setting -> its annotation with the ``Annotated`` metadata (evaluated once, at registration) ...
    hints: dict[str, Any] = field(default_factory=dict)
    #: ... and its validator, ``(value, where) -> converted value`` (:func:`kernlearn_cli.params.compile_check`).
    validators: dict[str, Callable[[Any, str], Any]] = field(default_factory=dict)
    #: Setting -> the default it had before it became ``auto`` (e.g. ``{"factorization": "eigh"}``):
    #: :meth:`digest_params`.
    defaults_before: dict[str, Any] = field(default_factory=dict)

    def digest_params(self, params: dict) -> dict:
        """``params`` (as bound) as a cell's id hashes them: a setting in :attr:`defaults_before` given
        its former default is left out, so a config that pins what it used keeps the id it had when that
        was the default; left out, it stands for its default now (``auto``), so the two never share an id."""
        out = dict(params)
        for key, before in self.defaults_before.items():
            if key not in out:
                out[key] = self.parameters()[key].default
            elif out[key] == before:
                del out[key]
        return out

    def metric_names(self, params: dict) -> tuple[str, ...]:
        """The metric names the evaluator declares for settings ``params`` (as bound); () when it declares none."""
        if isinstance(self.metrics, str):
            value = params.get(self.metrics, self.parameters()[self.metrics].default)
            return tuple(value) if isinstance(value, (list, tuple)) else ()
        return tuple(self.metrics)

    def enforces_exactly(self, params: dict) -> bool:
        """True when the solver with settings ``params`` (as bound) enforces every constraint exactly."""
        if isinstance(self.exact, bool):
            return self.exact
        defaults = self.parameters()
        return all(params.get(key, defaults[key].default) == defaults[key].default for key in self.exact)

    def parameters(self) -> dict[str, inspect.Parameter]:
        """The settings: the keyword-only parameters but the runner's (:data:`RUNNER_KEYWORDS`)."""
        return self._parameters

    @functools.cached_property
    def _parameters(self) -> dict[str, inspect.Parameter]:
        return settings(self.func)

    @functools.cached_property
    def descriptions(self) -> dict[str, str]:
        """Setting -> its description in the numpydoc ``Parameters`` of the docstring ('' without one)."""
        docs = parameter_docs(self.func)
        return {p: docs.get(p, "") for p in self.parameters()}


@dataclass(frozen=True)
class Checks:
    """What the generic checks (:mod:`kernlearn_cli.testing`) need of a component, declared beside it in
    its ``register(..., checks=Checks(...))``.

    Parameters
    ----------
    instance : str or callable, optional
        Solvers: a small instance, ``seed -> (G0, constraints, keyword arguments)`` (the keyword
        arguments are the runner's, e.g. ``dataset``, and settings the instance needs), or the
        ``"module:function"`` that is one (imported when a check runs, so a run never imports it).
    alternatives : dict
        Per setting, another valid value; the check runs the component with its default and with the
        value and wants another result (every setting needs one).
    unused : dict
        Per setting whose alternative does not change the result on the instance: why.
    together : dict
        Per setting, settings both runs of its alternative need (e.g. ``{"stop": {"slack": 1.0}}``).
    settings_instance : str or callable, optional
        Solvers: the instance the alternatives run on, when not ``instance``.
    base : dict
        The other kinds: settings both runs need on the check's instance, where a default does not
        apply to it (e.g. a generator's ``count`` on 40 points).

    The other kinds' checks run on a shared instance (:mod:`kernlearn_cli.testing.checks`); an
    evaluator may name its own factor as ``instance`` (``seed -> (G, dataset)``).
    """

    instance: Any = None
    alternatives: dict = field(default_factory=dict)
    unused: dict = field(default_factory=dict)
    together: dict = field(default_factory=dict)
    settings_instance: Any = None
    base: dict = field(default_factory=dict)

    def make(self, seed: int, settings: bool = False):
        """The instance (``settings``: the one the alternatives run on) for ``seed``."""
        build = (self.settings_instance if settings and self.settings_instance is not None else self.instance)
        if isinstance(build, str):
            module, _, name = build.partition(":")
            build = getattr(importlib.import_module(module), name)
        return build(seed)


@dataclass(frozen=True)
class EstimatorSpec:
    """A solver's scikit-learn estimator (:func:`kernlearn_cli.estimators.estimator_class`).

    Parameters
    ----------
    name : str
        The class name, e.g. ``"BurgKernel"``; its ``transform`` columns are ``burgkernel0``, ...
    summary : str
        The first line of the class's docstring.
    kernel : str
        The default initial kernel (a ``kernel`` parameter); not used by a solver registered with
        ``instead_of_kernel`` (its estimator has no ``kernel`` parameter).
    constraints : str
        The default constraint generator, drawing the constraints from the labels ``y``.
    constraint_defaults : dict
        The generator's settings when ``constraint_params`` is None (with a ``reference`` kernel spec,
        as a config's ``constraints.reference``).
    check_settings : dict
        Settings that let the estimator fit scikit-learn's tiny check data (10-30 points, 1-5 features).
    expected_failed : dict
        scikit-learn check name -> why it cannot apply to this estimator.
    """

    name: str
    summary: str
    kernel: str = "linear"
    constraints: str = "idealized_pairs"
    constraint_defaults: dict = field(default_factory=dict)
    check_settings: dict = field(default_factory=dict)
    expected_failed: dict = field(default_factory=dict)


#: scikit-learn's checks a transductive estimator cannot pass (:attr:`EstimatorSpec.expected_failed`).
TRANSDUCTIVE_CHECKS = dict.fromkeys(
    ("check_methods_sample_order_invariance", "check_methods_subset_invariance", "check_fit_idempotent"),
    "transductive: it transforms its training points only, and this check transforms others")


def settings(func: Callable) -> dict[str, inspect.Parameter]:
    """The keyword-only parameters of ``func`` that a config may set (not :data:`RUNNER_KEYWORDS`)."""
    return {p.name: p for p in inspect.signature(func).parameters.values()
            if p.kind is p.KEYWORD_ONLY and p.name not in RUNNER_KEYWORDS}


class Registry:
    """A named collection of components of one kind.

    ``builtins`` maps the name of each built-in component to the module that registers it
    (:data:`kernlearn_cli.builtins.BUILTINS`); a module is imported the first time one of its names is looked up.
    ``shared`` maps each setting a config may give every component of the kind, beside the
    component's own, and that the runner handles (the constraint generators' ``reference``) to
    (what it accepts, what it does), for ``kernlearn list``.
    """

    def __init__(self, kind: str, builtins: dict[str, str], shared: dict[str, tuple[str, str]] | None = None):
        self.kind = kind
        self.shared = shared or {}
        self._entries: dict[str, Entry] = {}
        self._builtins = builtins

    def register(self, name: str, *, triplets: bool = False, instead_of_kernel: str = "", inductive: str = "",
                 exact: bool | tuple[str, ...] = False, warmup: bool | dict = False, budget: str = "",
                 estimator: EstimatorSpec | None = None, checks: Checks | None = None,
                 metrics: tuple[str, ...] | str = (), defaults_before: dict | None = None):
        """Decorator registering ``func`` under ``name``.

        Parameters
        ----------
        name : str
            The name a config uses.
        triplets : bool
            For solvers: True when the solver accepts triplet constraints (``Constraints.k`` set).
        instead_of_kernel : str
            For solvers that do not use the initial kernel K0 (their ``G0`` argument is None): what
            they build instead, in words, for the message refusing a config's ``kernel:``.
        inductive : {"", "landmarks", "initial factor"}
            For solvers: how ``kernlearn embed`` maps new points (:data:`INDUCTIVE`); empty for a
            transductive solver.
        exact : bool or tuple of str
            For solvers: True when the solver enforces its constraints exactly (contradicting rows are
            refused before solving), or the names of the settings that make them soft when set to a
            value other than their default (``("slack", ...)``); False (default) for soft constraints.
        warmup : bool or dict
            For solvers with numba kernels: True when importing the module compiles them (declared with
            a signature), or the cell parts (``constraints``; optionally ``kernel``, ``solver`` settings,
            or a list of settings, one run each, when settings select different kernels) of the tiny
            problem ``kernlearn warmup`` runs the solver on to compile them; False (default)
            for a solver without compiled kernels.
        budget : str
            For solvers: the setting (an int) that bounds the iterations, e.g. ``"max_iter"``; empty
            (default) for none.
        estimator : EstimatorSpec, optional
            For solvers: its scikit-learn estimator; None (default) for none.
        checks : Checks, optional
            What the generic checks need of it (:class:`Checks`, :mod:`kernlearn_cli.testing`).
        metrics : tuple of str, or str
            For evaluators: the names of the metrics it returns (a returned key is one of them, or one of
            them followed by ``_`` and a suffix, e.g. ``knn_accuracy_std``), or the name of the setting
            that lists them; two evaluators of a cell declaring one name are refused when the config is
            checked.
        defaults_before : dict, optional
            Setting -> its former default, for a setting whose default changed (to ``auto``): cells
            that pin the former value keep their ids (:meth:`Entry.digest_params`).

        Raises
        ------
        ValueError
            An unknown ``inductive``, a ``budget`` that is not one of the solver's settings, or a
            solver's argument given to a registry of another kind.
        """
        solver_only = {"triplets": triplets, "instead_of_kernel": instead_of_kernel, "inductive": inductive,
                       "exact": exact, "warmup": warmup, "budget": budget, "estimator": estimator}
        given = [key for key, value in solver_only.items() if value not in (False, "", None)]
        if metrics and self.kind != "evaluator":
            raise ValueError(f"{self.kind} '{name}': metrics describe an evaluator; a {self.kind} returns none.")
        if self.kind != "solver" and given:
            raise ValueError(f"{self.kind} '{name}': {', '.join(given)} describe(s) a solver; a {self.kind} "
                             f"takes none of register()'s solver arguments (register it with its name alone).")
        if inductive not in ("", *INDUCTIVE):
            raise ValueError(f"{self.kind} '{name}': inductive must be '' or one of {', '.join(INDUCTIVE)}, "
                             f"got {inductive!r}.")

        def deco(func):
            if name in self._entries or self._builtins.get(name, func.__module__) != func.__module__:
                raise RuntimeError(f"{self.kind} '{name}' registered twice")
            doc = inspect.getdoc(func) or ""
            hints = settings_hints(func, settings(func))
            if budget and budget not in hints:
                raise ValueError(f"{self.kind} '{name}': budget must name one of its settings "
                                 f"({', '.join(hints) or 'none'}), got {budget!r}.")
            for key, before in (defaults_before or {}).items():
                if key not in hints or settings(func)[key].default == before:
                    raise ValueError(f"{self.kind} '{name}': defaults_before names '{key}', which is not a "
                                     "setting whose default differs from the value given.")
            if isinstance(metrics, str) and metrics not in hints:
                raise ValueError(f"{self.kind} '{name}': metrics must name the setting that lists them "
                                 f"({', '.join(hints) or 'none'}), or be a tuple of names; got {metrics!r}.")
            validators = {key: compile_check(tp) for key, tp in hints.items()}
            where = f"{self.kind} '{name}'"

            @functools.wraps(func)
            def checked(*args, **kwargs):
                return func(*args, **{k: validators[k](v, f"{where}: {k}") if k in validators else v
                                      for k, v in kwargs.items()})

            self._entries[name] = Entry(name, checked, doc.split("\n\n")[0].replace("\n", " "), triplets=triplets,
                                        instead_of_kernel=instead_of_kernel, inductive=inductive, exact=exact,
                                        warmup=warmup, budget=budget, estimator=estimator, metrics=metrics,
                                        checks=checks, hints=hints, validators=validators,
                                        defaults_before=dict(defaults_before or {}))
            return checked
        return deco

    def setting_rows(self, entry: Entry) -> list[tuple[str, str, str, str]]:
        """(setting, default, what it accepts, description) of each setting of ``entry``, then of the
        settings every component of the kind takes (``shared``); the default is ``(required)`` for a
        setting without one, the description '' for a setting its docstring does not describe."""
        rows = [(p, "(required)" if par.default is par.empty else repr(par.default), describe(entry.hints[p]),
                 entry.descriptions[p]) for p, par in entry.parameters().items()]
        return rows + [(p, "", accepts, what) for p, (accepts, what) in self.shared.items()]

    def names(self) -> list[str]:
        """Every name registered so far or built in (imports nothing)."""
        return sorted(set(self._entries) | set(self._builtins))

    def entries(self) -> list[Entry]:
        """Every entry (imports the modules of every built-in of this kind and every plugin)."""
        from .plugins import load_plugins

        for module in sorted(set(self._builtins.values())):
            importlib.import_module(module)
        load_plugins()
        return [self._entries[n] for n in self.names()]

    def get(self, name: str, where: str = "") -> Entry:
        """The entry of ``name``, importing the module of a built-in the first time it is asked for,
        and the installed plugins (:func:`kernlearn_cli.plugins.load_plugins`) when no built-in has that name."""
        if name not in self._entries and name in self._builtins:
            importlib.import_module(self._builtins[name])
        if name not in self._entries:
            from .plugins import load_plugins

            load_plugins(where)
        if name not in self._entries:
            raise ConfigError(
                f"{where or self.kind}: unknown {self.kind} '{name}'.{did_you_mean(name, self.names())} "
                f"Valid {self.kind}s: {', '.join(self.names())}.")
        return self._entries[name]

    def bind(self, spec: dict, where: str) -> tuple[Entry, dict]:
        """Validate a config mapping ``{name: ..., **params}``; return the entry and params.

        Unknown keys, values of the wrong type and values outside their declared range or choices
        (:func:`kernlearn_cli.params.coerce`) raise :class:`ConfigError` naming ``where`` (e.g.
        ``"configs/x.yaml: solver"``) and the key, and what is valid; the params returned are the
        converted values (``1`` as ``1.0`` for a float, ``"1e-6"`` as ``1e-06``).
        """
        if not isinstance(spec, dict) or "name" not in spec:
            raise ConfigError(f"{where}: expected a mapping with a 'name' key naming a {self.kind}, "
                              f"got {spec!r}. Valid {self.kind}s: {', '.join(self.names())}.")
        entry = self.get(spec["name"], where)
        params = {k: v for k, v in spec.items() if k != "name"}
        allowed = entry.parameters()
        for key, value in list(params.items()):
            if key not in allowed:
                valid = ", ".join(sorted(allowed)) or "(none)"
                raise ConfigError(f"{where}: unknown key '{key}' for {self.kind} '{entry.name}'."
                                  f"{did_you_mean(key, allowed)} Valid keys: {valid}.")
            params[key] = entry.validators[key](value, f"{where}.{key}")
        missing = [p for p, par in allowed.items() if par.default is inspect.Parameter.empty
                   and p not in params]
        if missing:
            raise ConfigError(f"{where}: {self.kind} '{entry.name}' needs key(s) {', '.join(missing)}.")
        return entry, params


#: How an inductive solver's learned kernel maps new points (``kernlearn embed``, :mod:`kernlearn_cli.embed`).
INDUCTIVE = {"landmarks": "through their landmarks",
             "initial factor": "through the initial factor G0, with a linear or rbf initial kernel"}


datasets = Registry("dataset", modules_of("datasets"), shared={
    "subset": ("a mapping {size: N, seed: S} (default: every point)",
               "A stratified random subset of N points, each class in proportion to its size (seed S, default 0; "
               "docs/data.md)."),
    "holdout": ("a mapping {size: N | fraction: F, seed: S, seen: false|true} (default: none held out)",
                "N stratified points held out of the solver's data (seed S, default the cell's seed) and scored "
                "afterwards through the learned kernel's inductive map; seen: true keeps them in the solver's "
                "data, never labeled, scored alike (docs/data.md).")})
kernels = Registry("kernel", modules_of("kernels"))
constraints = Registry("constraint generator", modules_of("constraints"), shared={
    "reference": ("a kernel spec such as {name: rbf} (default: the initial kernel)",
                  "The kernel whose squared distances the generator reads (e.g. the bounds b of random_pairs).")})
solvers = Registry("solver", modules_of("solvers"))
evaluators = Registry("evaluator", modules_of("evaluators"))

REGISTRIES = {"datasets": datasets, "kernels": kernels, "constraints": constraints,
              "solvers": solvers, "evaluators": evaluators}
