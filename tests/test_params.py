"""Declared ranges and choices (issue 17): every registered component's invalid values, derived from
its declarations, are refused by ``Registry.bind`` naming the key and by a direct call; the
boundary values pass; and the validator's own rules (conversion, messages, unions)."""

import inspect
import math
import re
import typing
from typing import Annotated, Literal

import pytest

from kernlearn_cli.errors import ConfigError
from kernlearn_cli.params import Interval, Length, Positive, coerce, describe
from kernlearn_cli.registry import REGISTRIES, Registry

#: Settings with nothing to declare beyond their type: file paths (their checks read the file).
FREE_TEXT = {("datasets", "files", "features"), ("datasets", "files", "labels"), ("datasets", "files", "kernel"),
             ("datasets", "gyrb", "path"), ("constraints", "from_file", "path")}


def _arms(tp) -> tuple:
    return typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, type(int | None)) else (tp,)


def _base(tp):
    return typing.get_args(tp)[0] if typing.get_origin(tp) is Annotated else tp


def _kind(tp) -> str:
    """What an arm of a union takes, coarsely: two arms of one kind would make the derivation unsound."""
    base = _base(tp)
    origin = typing.get_origin(base) or base
    return {int: "number", float: "number", type(None): "None", Literal: "choice"}.get(origin, origin.__name__)


def _step(base, x, direction: int):
    return x + direction if base is int else math.nextafter(x, direction * math.inf)


def _interval(base, iv: Interval) -> tuple[list, list]:
    """Just outside and on (or just inside) each bound; an unbounded float side refuses its infinity."""
    invalid, valid = [], []
    for bound, side, closed in ((iv.low, -1, iv.closed in ("both", "left")),
                                (iv.high, 1, iv.closed in ("both", "right"))):
        if bound is None:
            invalid += [side * math.inf] if base is float else []
        elif math.isinf(bound):
            (valid if closed else invalid).append(bound)
        else:
            valid.append(base(bound if closed else _step(base, bound, -side)))
            invalid.append(base(_step(base, bound, side) if closed else bound))
    return invalid + ([math.nan] if base is float else []), valid


def _sample(tp):
    """A valid value of an annotation."""
    valid = cases(tp)[1]
    if valid:
        return valid[0]
    base = _base(_arms(tp)[0])
    if typing.get_origin(base) is list:
        return [_sample(typing.get_args(base)[0])]
    return {int: 1, float: 1.0, str: "x", bool: True}[base]


def cases(tp) -> tuple[list, list]:
    """(invalid values, valid boundary values) derived from a declaration."""
    arms = _arms(tp)
    if len(arms) > 1:
        assert len({_kind(a) for a in arms}) == len(arms), f"{tp}: two alternatives of one kind"
        parts = [cases(a) for a in arms]
        return [x for p in parts for x in p[0]], [x for p in parts for x in p[1]]
    base, meta = _base(tp), typing.get_args(tp)[1:] if typing.get_origin(tp) is Annotated else ()
    invalid, valid = [], []
    if typing.get_origin(base) is Literal:
        return ["no such choice", *(c.upper() for c in typing.get_args(base))], list(typing.get_args(base))
    for m in meta:
        if isinstance(m, Interval):
            bad, good = _interval(base, m)
            invalid, valid = invalid + bad, valid + good
    if typing.get_origin(base) is list:
        item_tp = typing.get_args(base)[0]
        item = _sample(item_tp)
        length = next((m for m in meta if isinstance(m, Length)), Length())
        least = max(length.low, 1)
        invalid += [[bad] + [item] * (least - 1) for bad in cases(item_tp)[0]]
        invalid += [[item] * (length.low - 1)] if length.low > 0 else []
        invalid += [[item] * (length.high + 1)] if length.high is not None else []
        valid += [[good] + [item] * (least - 1) for good in cases(item_tp)[1]]
        valid += [[item] * n for n in {length.low, length.high} - {None, 0}]
    return invalid, valid


def declared():
    """(registry, component, setting, annotation) of every setting of every registered component."""
    return [(key, entry.name, name, tp) for key, reg in REGISTRIES.items() for entry in reg.entries()
            for name, tp in entry.hints.items()]


def _settings(kind):
    out = []
    for key, name, setting, tp in declared():
        for value in cases(tp)[kind]:
            out.append(pytest.param(key, name, setting, value, id=f"{key}:{name}.{setting}={value!r}"))
    return out


def _required(registry: Registry, name: str, but: str) -> dict:
    entry = registry.get(name)
    return {p: _sample(entry.hints[p]) for p, par in entry.parameters().items()
            if par.default is inspect.Parameter.empty and p != but}


def test_every_setting_declares_its_range_or_choices():
    """A number or a string setting says what it accepts, unless it is free text (a path)."""
    undeclared = {(key, name, setting) for key, name, setting, tp in declared()
                  if tp is not bool and not cases(tp)[0]}
    assert undeclared == FREE_TEXT
    assert len(_settings(0)) > 300


@pytest.mark.parametrize("key, name, setting, value", _settings(0))
def test_invalid_values_are_refused_by_bind_and_by_a_direct_call(key, name, setting, value):
    registry = REGISTRIES[key]
    with pytest.raises(ConfigError, match=f"^{re.escape(f'c.yaml: {key}.{setting}: expected ')}"):
        registry.bind({"name": name, setting: value, **_required(registry, name, setting)}, f"c.yaml: {key}")
    func = registry.get(name).func
    context = [p for p in inspect.signature(func).parameters.values()
               if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
    with pytest.raises(ConfigError, match=f"^{re.escape(f'{registry.kind} {name!r}: {setting}: expected ')}"):
        func(*[None] * len(context), **{setting: value})


@pytest.mark.parametrize("key, name, setting, value", _settings(1))
def test_boundary_values_pass(key, name, setting, value):
    registry = REGISTRIES[key]
    _, params = registry.bind({"name": name, setting: value, **_required(registry, name, setting)}, "c.yaml")
    assert params[setting] == value


def test_messages_name_the_place_the_value_and_what_is_valid():
    where = "configs/x.yaml: solver.tol"
    with pytest.raises(ConfigError, match=r"^configs/x.yaml: solver.tol: expected a float in \(0, inf\), got -1\.$"):
        coerce(-1, Positive, where)
    with pytest.raises(ConfigError, match=r"expected one of 'kmeans', 'uniform', got 'kmean'\. Did you mean 'kmeans'\?"):
        coerce("kmean", Literal["kmeans", "uniform"], "x")
    with pytest.raises(ConfigError, match=r"expected an int in \[1, inf\) or None, got 0\.$"):
        coerce(0, Annotated[int, Interval(1, None)] | None, "x")
    tp = Annotated[list[Annotated[float, Interval(0, 100)]], Length(2, 2)]
    assert describe(tp) == "a list of floats in [0, 100] with exactly 2 items"
    assert describe(Annotated[float, Interval(0, math.inf, closed="right")]) == "a float in (0, inf]"


def test_conversion_comes_before_the_check():
    assert coerce("1e-6", Positive, "x") == 1e-6 and type(coerce(1, Positive, "x")) is float
    assert coerce(math.inf, Annotated[float, Interval(0, math.inf, closed="right")], "x") == math.inf
    np = pytest.importorskip("numpy")
    assert type(coerce(np.int64(3), Annotated[int, Interval(1, None)], "x")) is int
    for bad in (True, "nan", math.nan, "tight"):
        with pytest.raises(ConfigError, match=rf"^x: expected a float in \(0, inf\), got {re.escape(repr(bad))}"):
            coerce(bad, Positive, "x")
    with pytest.raises(ValueError, match="low 1 is above high 0"):
        Interval(1, 0)
    with pytest.raises(ValueError, match="closed must be one of both, left, right, neither, got 'open'"):
        Interval(0, 1, closed="open")


def test_a_direct_call_converts_and_checks_without_evaluating_annotations_again(monkeypatch):
    registry = Registry("solver", {})
    seen = {}

    @registry.register("probe")
    def probe(G0, constraints, *, tol: Positive = 1e-3, order: Literal["a", "b"] = "a", callback=None):
        seen.update(tol=tol, order=order)

    monkeypatch.setattr(typing, "get_type_hints", None)           # any per-call evaluation would fail
    probe(None, None, tol=1)
    assert seen == {"tol": 1.0, "order": "a"} and type(seen["tol"]) is float
    with pytest.raises(ConfigError, match=r"^solver 'probe': order: expected one of 'a', 'b', got 'c'\.$"):
        probe(None, None, order="c")
    assert registry.get("probe").func is probe and probe.__name__ == "probe"


def test_defaults_satisfy_their_declarations_and_optional_settings_take_none():
    """Every default passes its own check (a tuple as the list a config would give), and a setting declared ``... | None`` takes None."""
    optional = 0
    for key, name, setting, tp in declared():
        check = REGISTRIES[key].get(name).validators[setting]
        default = REGISTRIES[key].get(name).parameters()[setting].default
        if default is not inspect.Parameter.empty:
            expected = list(default) if isinstance(default, tuple) else default      # tuples come back as lists
            assert check(default, "d") == expected, (key, name, setting, default)
        if type(None) in _arms(tp):
            optional += 1
            assert check(None, "d") is None, (key, name, setting)
    assert optional >= 4                     # threshold_pairs.gamma, slack_if_infeasible (2), max_path_iter (2)


def _helper_calls():
    """Plain functions (not registered components) whose settings have declared choices or ranges:
    a direct call with a value outside them is refused, naming the function and the argument."""
    import numpy as np

    from kernlearn_cli.graph import knn_laplacian, scale_features
    from kernlearn_cli.kernels import rbf_bandwidth
    from kernlearn_cli.solvers._trin_problem import build_problem, smooth_hinge
    from kernlearn_cli.types import KIND_CODE, Constraints

    X = np.random.default_rng(0).standard_normal((12, 3))
    C = Constraints(np.array([0]), np.array([1]), np.array([KIND_CODE["dist_le"]], dtype=np.int8), np.array([1.0]))
    problem = dict(G0=X, constraints=C, loss="log", gamma=1.0, normalize=True, t=0.7,
                   itml_percentiles=(5.0, 95.0), solver="trin")
    return [("scale_features", "how", lambda: scale_features(X, "zscore")),
            ("knn_laplacian", "kind", lambda: knn_laplacian(X, kind="random_walk")),
            ("knn_laplacian", "bandwidth", lambda: knn_laplacian(X, bandwidth="bogus")),
            ("rbf_bandwidth", "rule", lambda: rbf_bandwidth(X, "bogus")),
            ("smooth_hinge", "t", lambda: smooth_hinge(1.0)),
            ("build_problem", "loss", lambda: build_problem(**{**problem, "loss": "bogus"})),
            ("build_problem", "gamma", lambda: build_problem(**{**problem, "gamma": -1.0})),
            ("build_problem", "t", lambda: build_problem(**{**problem, "t": 1.0}))]


@pytest.mark.parametrize("case", range(8))
def test_plain_helpers_check_their_declared_arguments(case):
    func, arg, call = _helper_calls()[case]
    with pytest.raises(ConfigError, match=rf"^{func}: {arg}: expected "):
        call()


def test_plain_helpers_pass_valid_arguments_through():
    import numpy as np

    from kernlearn_cli.graph import knn_laplacian, scale_features

    X = np.random.default_rng(0).standard_normal((12, 3))
    assert np.array_equal(scale_features(X, how="none"), X)
    L, info = knn_laplacian(X, neighbors=3, sigma_neighbors=3, kind="unnormalized", bandwidth="edge_mean")
    assert np.allclose(np.asarray(L.sum(axis=1)).ravel(), 0.0) and info["edges"] > 0


@pytest.mark.parametrize("argument", [{"triplets": True}, {"instead_of_kernel": "its own"}, {"inductive": "landmarks"},
                                      {"exact": True}, {"warmup": True}, {"budget": "k"}])
def test_a_solvers_register_arguments_are_refused_on_another_kind(argument):
    """Issue 55 item 2: register()'s solver arguments mean nothing to an evaluator (or a dataset, a
    kernel, a generator): giving one is refused at registration, naming it."""
    from kernlearn_cli.registry import Registry

    registry = Registry("evaluator", {})
    with pytest.raises(ValueError, match=f"evaluator 'probe': {next(iter(argument))} describe"):
        registry.register("probe", **argument)
    solver = Registry("solver", {})
    solver.register("probe", **{k: v for k, v in argument.items() if k != "budget"})(lambda G0, C, k=1: None)
