"""Generic checks of a solver, run on what it declares (:class:`kernlearn_cli.registry.Checks`).

A plugin's test module calls :func:`check_solver` (as scikit-learn's ``check_estimator`` or
``benchopt test``); kernlearn's own tests call the single checks per solver and setting.  Each check
raises ``AssertionError`` with one paragraph saying what is wrong and what to add, and where.

- :func:`check_declaration`: a :class:`~kernlearn_cli.registry.Checks` with an instance, an alternative
  value per setting (no stale one), every unused setting among them, a description per setting in
  the docstring's ``Parameters``;
- :func:`check_cost`: a declared cost (``@estimated``, what ``kernlearn plan`` reads) runs on the
  instance and on size stand-ins;
- :func:`check_certificate_earned`: on its instance, a finite factor of one row per point, and
  ``converged`` true only when every check of its certificate is met;
- :func:`check_deterministic`: the same bits from the same instance twice;
- :func:`check_setting_changes_the_result`: each alternative changes the result (the factor's bits, the
  iteration count, the certificate's values or stop reason), or is declared unused with a reason —
  and then changes nothing;
- :func:`check_kernel_is_used_or_refused`: a solver that starts from K0 gives another kernel from
  another K0; one registered with ``instead_of_kernel`` refuses a config's ``kernel:``.

The other kinds declare alternatives alike (an evaluator also its metric names, checked by
:func:`evaluator_returns_its_declared_metrics`) and run on a shared instance
(:mod:`kernlearn_cli.testing.instances`): :func:`check_kernel`, :func:`check_constraint_generator`,
:func:`check_evaluator` and :func:`check_dataset` (each with its per-setting check).
"""

from __future__ import annotations

import inspect
import json
import warnings

import numpy as np

from ..registry import REGISTRIES, Checks, Registry, solvers
from .instances import solve


def _where(entry) -> str:
    module = inspect.getmodule(inspect.unwrap(entry.func))
    return getattr(module, "__file__", None) or entry.func.__module__


def _entry(name: str, registry: Registry | None):
    return (registry or solvers).get(name)


def _decl(registry: Registry, name: str) -> Checks:
    """The component's declaration; an empty one for a component of another kind that declares none."""
    return registry.get(name).checks or Checks()


def fingerprint(result) -> tuple:
    """What a setting may change: G (its bits and shape), the iteration count, the certificate's
    measured values, its stop reason, ``converged``."""
    cert = result.certificate or {}
    checks = {k: v["value"] for k, v in cert.get("checks", {}).items()}
    return (np.asarray(result.G).tobytes(), np.asarray(result.G).shape, int(result.iterations),
            json.dumps(checks, sort_keys=True), cert.get("stopped_by"), result.converged)


def declaration_problems(name: str, registry: Registry | None = None) -> list[str]:
    """What the component's declaration lacks or holds stale, one sentence each (empty: complete).
    A solver needs an instance; a component of another kind without settings needs no declaration."""
    registry = registry or solvers
    entry = registry.get(name)
    where = f"{registry.kind} '{name}' ({_where(entry)})"
    decl = entry.checks
    out = []
    if registry.kind == "evaluator" and not entry.metrics:
        out.append(f"{where} declares no metric names: add metrics=(\"name\", ...) to its register(...), the keys "
                   f"it returns (a key may add a suffix after '_', e.g. name_std), so that two evaluators of a cell "
                   f"returning one name are refused when the config is checked.")
    if registry.kind != "solver":
        if decl is None and not entry.parameters():
            return out
        decl = _decl(registry, name)
    if decl is None or (registry.kind == "solver" and decl.instance is None):
        return out + [f"{where} declares no instance for the checks: add checks=Checks(instance=..., alternatives="
                f"{{...}}) to its register(...) (kernlearn_cli.registry.Checks; a small instance, seed -> "
                f"(G0, constraints, keyword arguments), e.g. 'kernlearn_cli.testing.instances:pairs')."]
    declared = set(entry.parameters())
    missing = sorted(declared - set(decl.alternatives))
    if missing:
        out.append(f"{where}: setting(s) {', '.join(missing)} have no alternative value: add them to "
                   f"Checks(alternatives={{...}}) in its register(...), each with another valid value that "
                   f"changes the result (or list it in unused={{setting: why}} too).")
    stale = sorted(set(decl.alternatives) - declared) + sorted(set(decl.unused) - set(decl.alternatives))
    if stale:
        out.append(f"{where}: Checks names setting(s) {', '.join(stale)} that it does not take (or "
                   f"that have no alternative): remove them from its Checks.")
    together = sorted((set(decl.together) | set(decl.base)) - declared)
    if together:
        out.append(f"{where}: Checks(together=..., base=...) names setting(s) {', '.join(together)} it does "
                   f"not take.")
    undocumented = sorted(p for p, text in entry.descriptions.items() if not text)
    if undocumented:
        out.append(f"{where}: setting(s) {', '.join(undocumented)} are not described in its docstring: add "
                   f"them to its numpydoc 'Parameters' section (kernlearn list shows them).")
    return out


def check_declaration(name: str, registry: Registry | None = None) -> None:
    """The component declares what the checks need (:func:`declaration_problems` is empty)."""
    problems = declaration_problems(name, registry)
    assert not problems, " ".join(problems)


def check_certificate_earned(name: str, seed: int = 0, registry: Registry | None = None) -> None:
    """On its instance: a finite 2-D factor with a row per point; ``converged`` is True only when every
    check of the certificate is met, False when one is not."""
    from ..solvers.protocol import Certificate

    entry = _entry(name, registry)
    G0, C, kw = entry.checks.make(seed)
    result = solve(name, seed, registry=registry)
    G = np.asarray(result.G)
    n = kw["dataset"].X.shape[0] if "dataset" in kw else G0.shape[0]
    assert G.ndim == 2 and G.shape[0] == n, f"solver '{name}': G has shape {G.shape}, expected ({n}, r)"
    assert np.isfinite(G).all(), f"solver '{name}': G has non-finite entries on its instance"
    cert = result.certificate
    if result.converged is None:
        return
    assert cert and cert.get("checks"), f"solver '{name}' says converged={result.converged} without a certificate"
    met = all(Certificate.met(c["value"], c["tol"]) for c in cert["checks"].values())
    assert result.converged == met, (f"solver '{name}': converged={result.converged} but its certificate's "
                                     f"checks are {'all' if met else 'not all'} met: {cert['checks']}")


def check_deterministic(name: str, seed: int = 0, registry: Registry | None = None) -> None:
    """The same instance twice gives the same bits."""
    a, b = solve(name, seed, registry=registry), solve(name, seed, registry=registry)
    assert fingerprint(a) == fingerprint(b), f"solver '{name}' gives two results from one instance and seed"


def check_setting_changes_the_result(name: str, setting: str, registry: Registry | None = None) -> None:
    """The declared alternative of ``setting`` changes the result on the settings instance, unless it is
    declared unused (then it must change nothing)."""
    entry = _entry(name, registry)
    decl = entry.checks
    value = decl.alternatives[setting]
    current = decl.make(0, settings=True)[2].get(setting, entry.parameters()[setting].default)
    assert value != current, f"solver '{name}'.{setting}: the alternative equals the instance's value {current!r}"
    both = decl.together.get(setting, {})
    base = fingerprint(solve(name, settings=True, registry=registry, **both))
    changed = fingerprint(solve(name, settings=True, registry=registry, **{**both, setting: value}))
    if setting in decl.unused:
        assert base == changed, (f"solver '{name}'.{setting} is declared unused ({decl.unused[setting]}) but "
                                 f"{value!r} changes the result: remove it from Checks(unused=...)")
    else:
        assert base != changed, (f"solver '{name}'.{setting} = {value!r} (instead of {current!r}) does not change "
                                 f"the result on its instance: give Checks(alternatives=...) a value that does, or "
                                 f"say why in Checks(unused={{'{setting}': ...}})")


def check_kernel_is_used_or_refused(name: str, registry: Registry | None = None) -> None:
    """A solver that starts from K0 changes its kernel with K0 (another K0 of the same rank); one
    registered with ``instead_of_kernel`` refuses a config's ``kernel:`` and binds without one."""
    from ..config import Cell, bind_cell
    from ..errors import ConfigError
    from ..solvers.protocol import ConvergenceWarning

    entry = _entry(name, registry)
    base = {"name": "x", "seed": 0, "dataset": {"name": "two_gaussians", "n": 30, "dim": 3},
            "constraints": {"name": "labeled_subset", "count": 10}, "solver": {"name": name}}
    if registry is None or registry is solvers:
        if entry.instead_of_kernel:
            try:
                bind_cell(Cell(0, {**base, "kernel": {"name": "linear"}}), "x.yaml")
            except ConfigError as err:
                assert "does not use an initial kernel K0" in str(err), str(err)
            else:
                raise AssertionError(f"solver '{name}' (instead_of_kernel) accepts a config's kernel:")
            assert "kernel" not in bind_cell(Cell(0, base), "x.yaml")
            return
    elif entry.instead_of_kernel:
        return
    G0, C, kw = entry.checks.make(0, settings=True)
    R = np.linalg.qr(np.random.default_rng(1).standard_normal((G0.shape[1],) * 2))[0] \
        * np.linspace(1.0, 2.0, G0.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a, b = entry.func(G0, C, **kw), entry.func(G0 @ R, C, **kw)
    assert not np.allclose(a.G @ a.G.T, b.G @ b.G.T), (
        f"solver '{name}' gives the same kernel from another K0: if it does not use K0, register it with "
        f"instead_of_kernel='what it builds instead'")


def check_cost(name: str, registry: Registry | None = None) -> None:
    """A declared cost (:func:`~kernlearn_cli.resources.estimated`) runs on the instance's arguments (as the
    solver does) and on size stand-ins (as ``kernlearn plan`` does), giving a description and
    non-negative, finite bytes and seconds."""
    from ..registry import RUNNER_KEYWORDS
    from ..resources import Sized

    entry = _entry(name, registry)
    cost = getattr(entry.func, "cost", None)
    if cost is None:
        return
    G0, C, kw = entry.checks.make(0)
    n = np.shape(G0) if G0 is not None else kw["dataset"].X.shape
    settings = {k: v for k, v in kw.items() if k not in RUNNER_KEYWORDS}
    for args, extra in (((None if entry.instead_of_kernel else G0, C), kw), ((Sized(n), Sized((len(C),))), settings)):
        what, nbytes, seconds, _ = cost(*args, **extra)
        assert isinstance(what, str) and what, f"solver '{name}': its cost names no step"
        assert np.isfinite(nbytes) and nbytes >= 0 and np.isfinite(seconds) and seconds >= 0, (
            f"solver '{name}': its cost gives {nbytes!r} bytes and {seconds!r} s for {what}")


def check_solver(name: str, registry: Registry | None = None) -> None:
    """Every generic check of solver ``name`` (registered in ``registry``, default kernlearn's solvers):
    its declaration, certificate, determinism, each setting's effect and its use of K0.

    Examples
    --------
    In a plugin's tests (docs/extending.md)::

        from kernlearn_cli.testing import check_solver

        def test_my_solver():
            check_solver("my_solver")
    """
    check_declaration(name, registry)
    check_cost(name, registry)
    check_certificate_earned(name, registry=registry)
    check_deterministic(name, registry=registry)
    entry = _entry(name, registry)
    for setting in sorted(entry.checks.alternatives):
        check_setting_changes_the_result(name, setting, registry)
    check_kernel_is_used_or_refused(name, registry)


# ---- the other kinds --------------------------------------------------------------------------------

def _compare(kind: str, name: str, setting: str, decl, base, changed, what: str) -> None:
    value = decl.alternatives[setting]
    if setting in decl.unused:
        assert base == changed, (f"{kind} '{name}'.{setting} is declared unused ({decl.unused[setting]}) but "
                                 f"{value!r} changes the {what}: remove it from Checks(unused=...)")
    else:
        assert base != changed, (f"{kind} '{name}'.{setting} = {value!r} changes nothing in the {what} on its "
                                 f"instance: use it, refuse it, or say why in Checks(unused={{'{setting}': ...}})")


def kernel_setting_changes_k0(name: str, setting: str, registry: Registry | None = None) -> None:
    """The kernel's alternative value of ``setting`` changes K0 = G0 G0ᵀ on
    :func:`~kernlearn_cli.testing.instances.kernel_dataset` (or is declared unused, and changes nothing)."""
    from .instances import kernel_dataset

    registry = registry or REGISTRIES["kernels"]
    decl, func = _decl(registry, name), registry.get(name).func
    ds = kernel_dataset()
    G, H = func(ds, **decl.base), func(ds, **{**decl.base, setting: decl.alternatives[setting]})
    same = G.shape == H.shape and np.allclose(G @ G.T, H @ H.T, rtol=1e-12, atol=1e-12)
    _compare("kernel", name, setting, decl, 0, 0 if same else 1, "kernel K0")


#: Constraint files the generators' instance reads (``from_file``): two that differ in one bound.
CONSTRAINT_FILES = {"a.csv": "i,j,kind,bound\n0,1,dist_le,1.0\n2,3,dist_ge,4.0\n",
                    "b.csv": "i,j,kind,bound\n0,1,dist_le,2.0\n2,3,dist_ge,4.0\n"}


def generate(name: str, registry: Registry | None = None, **settings) -> tuple:
    """The constraints of generator ``name`` on two Gaussians (40 points in 3-D, linear reference), its
    declared ``base`` settings and ``settings``, as bytes; run in a scratch folder holding
    :data:`CONSTRAINT_FILES`."""
    import os
    import tempfile

    from ..data.synthetic import two_gaussians
    from ..rng import component_rng
    from ..kernels import linear

    registry = registry or REGISTRIES["constraints"]
    ds = two_gaussians(n=40, dim=3)
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="kl-check-") as tmp:
        for file, text in CONSTRAINT_FILES.items():
            with open(os.path.join(tmp, file), "w") as f:
                f.write(text)
        os.chdir(tmp)
        try:
            C = registry.get(name).func(ds, linear(ds), rng=component_rng(0, 1),
                                        **{**_decl(registry, name).base, **settings})
        finally:
            os.chdir(here)
    k = getattr(C, "k", None)
    return (C.i.tobytes(), C.j.tobytes(), C.kind.tobytes(), C.bound.tobytes(),
            None if k is None else np.asarray(k).tobytes())


def generator_setting_changes_the_constraints(name: str, setting: str, registry: Registry | None = None) -> None:
    """The generator's alternative value of ``setting`` changes the constraints (:func:`generate`)."""
    registry = registry or REGISTRIES["constraints"]
    decl = _decl(registry, name)
    both = decl.together.get(setting, {})
    _compare("constraint generator", name, setting, decl, generate(name, registry, **both),
             generate(name, registry, **{**both, setting: decl.alternatives[setting]}), "constraints")


def evaluate(name: str, registry: Registry | None = None, **settings) -> str:
    """The metrics of evaluator ``name`` (as JSON) on its declared instance, ``seed -> (G, dataset)`` or
    ``(G, dataset, result)`` (default :func:`~kernlearn_cli.testing.instances.overlapping_factor`), 10
    labeled points' constraints and, without a declared result, a Burg result on the pairs instance."""
    from ..constraints.labeled import labeled_subset
    from ..rng import component_rng
    from .instances import overlapping_factor

    registry = registry or REGISTRIES["evaluators"]
    decl = _decl(registry, name)
    G, ds, *result = decl.make(0) if decl.instance else overlapping_factor()
    C = labeled_subset(ds, G, rng=component_rng(0, 1), count=10)
    func = registry.get(name).func
    wants = inspect.signature(func).parameters
    extra = {k: v for k, v in (("constraints", C),) if k in wants}
    if "result" in wants:
        extra["result"] = result[0] if result else solve("burg", settings=True, slack=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metrics = func(G, ds, rng=component_rng(0, 2, 0), **extra, **{**decl.base, **settings})
    return json.dumps(metrics, sort_keys=True, default=str)


def evaluator_setting_changes_the_metrics(name: str, setting: str, registry: Registry | None = None) -> None:
    """The evaluator's alternative value of ``setting`` changes its metrics (:func:`evaluate`)."""
    registry = registry or REGISTRIES["evaluators"]
    decl = _decl(registry, name)
    _compare("evaluator", name, setting, decl, evaluate(name, registry),
             evaluate(name, registry, **{setting: decl.alternatives[setting]}), "metrics")


def evaluator_returns_its_declared_metrics(name: str, registry: Registry | None = None) -> None:
    """Every key the evaluator returns (on :func:`evaluate`'s instance, with each alternative setting) is a
    declared metric name, or one followed by ``_`` and a suffix."""
    registry = registry or REGISTRIES["evaluators"]
    entry, decl = registry.get(name), _decl(registry, name)
    for settings in [{}, *({k: v} for k, v in decl.alternatives.items())]:
        names = entry.metric_names({**decl.base, **settings})
        returned = json.loads(evaluate(name, registry, **settings))
        extra = [key for key in returned if not any(key == m or key.startswith(m + "_") for m in names)]
        assert not extra, (f"evaluator '{name}' returns {', '.join(extra)} with settings {settings or 'the defaults'}, "
                           f"not among its declared metrics {names}: add them to register(..., metrics=(...))")


def dataset_setting_changes_the_data(name: str, setting: str, registry: Registry | None = None) -> None:
    """The dataset's alternative value of ``setting`` changes its points or labels (loaded with its
    declared ``base`` settings)."""
    registry = registry or REGISTRIES["datasets"]
    decl, func = _decl(registry, name), registry.get(name).func
    base, changed = func(**decl.base), func(**{**decl.base, setting: decl.alternatives[setting]})

    def data(ds):
        return (np.asarray(ds.X if ds.X is not None else ds.K).tobytes(),
                None if ds.y is None else np.asarray(ds.y).tobytes())

    _compare("dataset", name, setting, decl, data(base), data(changed), "data")


def _check_kind(key: str, per_setting, name: str, registry: Registry | None) -> None:
    registry = registry or REGISTRIES[key]
    check_declaration(name, registry)
    for setting in sorted(_decl(registry, name).alternatives):
        per_setting(name, setting, registry)


def check_kernel(name: str, registry: Registry | None = None) -> None:
    """Every generic check of kernel ``name``: its declaration, each setting's effect on K0."""
    _check_kind("kernels", kernel_setting_changes_k0, name, registry)


def check_constraint_generator(name: str, registry: Registry | None = None) -> None:
    """Every generic check of constraint generator ``name``: its declaration, each setting's effect."""
    _check_kind("constraints", generator_setting_changes_the_constraints, name, registry)


def check_evaluator(name: str, registry: Registry | None = None) -> None:
    """Every generic check of evaluator ``name``: its declaration, each setting's effect on the metrics."""
    _check_kind("evaluators", evaluator_setting_changes_the_metrics, name, registry)
    evaluator_returns_its_declared_metrics(name, registry)


def check_dataset(name: str, registry: Registry | None = None) -> None:
    """Every generic check of dataset ``name``: its declaration, each setting's effect on the data
    (a loader of the user's files needs them: check it with real files instead)."""
    _check_kind("datasets", dataset_setting_changes_the_data, name, registry)
