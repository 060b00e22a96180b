"""What a setting accepts, declared once in its annotation, and the one validator of settings.

A component's keyword-only parameters are its settings (:mod:`kernlearn_cli.registry`). Their
annotations are the schema: the type, and in ``typing.Annotated`` metadata the range of a number
(:class:`Interval`) or the length of a list (:class:`Length`); ``typing.Literal`` lists the choices
of a string::

    from typing import Annotated, Literal

    from kernlearn_cli.params import Interval

    @solvers.register("my_solver")
    def my_solver(G0, constraints, *, tol: Annotated[float, Interval(0, None, closed="neither")] = 1e-3,
                  order: Literal["cyclic", "greedy"] = "cyclic"): ...

:func:`coerce` checks a value against such an annotation, for a config (``Registry.bind``) and for
a direct call of a registered function alike: it converts first (an int where a float is
declared, a string such as ``"1e-6"`` that YAML reads as text) and then checks the range or the
choice, with a message naming where the value was given and what is valid
(``configs/x.yaml: solver.tol: expected a float in (0, inf), got -1.``). :func:`compile_check`
reads an annotation once into that check; the registry compiles a component's when it registers it.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import numbers
import re
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal

from .errors import ConfigError

CLOSED = ("both", "left", "right", "neither")


def did_you_mean(name: str, valid) -> str:
    """' Did you mean 'x'?' for the closest valid name, or ''."""
    close = difflib.get_close_matches(str(name), list(valid), n=1, cutoff=0.5)
    return f" Did you mean '{close[0]}'?" if close else ""


def _bound(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Interval:
    """The range of an ``int`` or ``float`` setting, as ``Annotated[float, Interval(...)]`` metadata.

    Parameters
    ----------
    low, high : float or None
        The bounds. None leaves that side unbounded, infinity excluded; a bound of ``math.inf``
        (``-math.inf``) that is closed admits infinity itself (``slack: inf`` means hard constraints).
    closed : {"both", "left", "right", "neither"}
        Which of the bounds belong to the range: ``Interval(0, 1, closed="left")`` is [0, 1).

    Examples
    --------
    >>> 0.0 in Interval(0, None, closed="neither"), math.inf in Interval(0, None, closed="neither")
    (False, False)
    >>> Interval(0, math.inf, closed="right").describe()
    'in (0, inf]'
    """

    low: float | None = None
    high: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"

    def __post_init__(self):
        if self.closed not in CLOSED:
            raise ValueError(f"Interval: closed must be one of {', '.join(CLOSED)}, got {self.closed!r}.")
        if self.low is not None and self.high is not None and not self.low <= self.high:
            raise ValueError(f"Interval: low {self.low} is above high {self.high}.")

    def _ends(self) -> tuple[float, float, bool, bool]:
        """(low, high, low included, high included); None is an excluded infinity."""
        return (-math.inf if self.low is None else self.low, math.inf if self.high is None else self.high,
                self.low is not None and self.closed in ("both", "left"),
                self.high is not None and self.closed in ("both", "right"))

    def __contains__(self, x) -> bool:
        low, high, with_low, with_high = self._ends()
        return (low <= x if with_low else low < x) and (x <= high if with_high else x < high)

    def describe(self) -> str:
        low, high, with_low, with_high = self._ends()
        return f"in {'[' if with_low else '('}{_bound(low)}, {_bound(high)}{']' if with_high else ')'}"


@dataclass(frozen=True)
class Length:
    """How many items a ``list`` setting holds, as ``Annotated[list[float], Length(...)]`` metadata.

    Parameters
    ----------
    low : int
        The fewest items.
    high : int or None
        The most items; None for no limit.
    """

    low: int = 0
    high: int | None = None

    def __contains__(self, items) -> bool:
        return self.low <= len(items) and (self.high is None or len(items) <= self.high)

    def describe(self) -> str:
        if self.high is None:
            return f"with at least {self.low} item{'s' * (self.low != 1)}"
        if self.low == self.high:
            return f"with exactly {self.low} item{'s' * (self.low != 1)}"
        return f"with {self.low} to {self.high} items"


#: The declarations many settings share.
Positive = Annotated[float, Interval(0, None, closed="neither")]
"""A finite float > 0 (a tolerance, a step, a weight)."""
PositiveInt = Annotated[int, Interval(1, None)]
"""An int >= 1 (a count, an iteration limit)."""
NonNegativeInt = Annotated[int, Interval(0, None)]
"""An int >= 0 (a seed, or a count where 0 means "not set")."""
Fraction = Annotated[float, Interval(0, 1, closed="left")]
"""A float in [0, 1) (a relative tolerance such as ``rank_tol``, a push such as ``epsilon``)."""

#: Type -> how a message names one value of it, and several.
_NOUNS = {bool: ("a bool", "bools"), int: ("an int", "ints"), float: ("a float", "floats"),
          str: ("a string", "strings"), dict: ("a mapping", "mappings"), list: ("a list", "lists"),
          type(None): ("None", "None")}


def describe(tp, plural: bool = False) -> str:
    """What an annotation accepts, in words: ``a float in (0, inf)``, ``one of 'kmeans', 'uniform'``,
    ``a list of floats in (0, inf) with at least 1 item or a float in (0, inf)``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Annotated:
        return " ".join([describe(args[0], plural)] + [m.describe() for m in args[1:] if isinstance(m, (Interval, Length))])
    if origin is Literal:
        return ("values among " if plural else "one of ") + ", ".join(map(repr, args))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(describe(a, plural) for a in args)
    if origin is list and args:
        return f"{'lists' if plural else 'a list'} of {describe(args[0], plural=True)}"
    nouns = _NOUNS.get(origin or tp)
    return nouns[plural] if nouns else getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


_REFUSED = object()


def _same(value):
    return value


def _none(value):
    return None if value is None else _REFUSED


def _bool(value):
    return value if isinstance(value, bool) else _REFUSED


def _int(value):
    return int(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else _REFUSED


def _float(value):
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return _REFUSED
    elif not isinstance(value, numbers.Real) or isinstance(value, bool):
        return _REFUSED
    value = float(value)
    return _REFUSED if math.isnan(value) else value


def _str(value):
    return value if isinstance(value, str) else _REFUSED


def _dict(value):
    return value if isinstance(value, dict) else _REFUSED


#: The plain types: value -> the value converted, or _REFUSED.
_PLAIN = {type(None): _none, bool: _bool, int: _int, float: _float, str: _str, dict: _dict}


def _acceptor(tp) -> Callable[[Any], Any]:
    """``value -> converted value``, or ``_REFUSED``, for annotation ``tp``, read once."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Annotated:
        base, meta = _acceptor(args[0]), tuple(m for m in args[1:] if isinstance(m, (Interval, Length)))

        def annotated(value):
            converted = base(value)
            return converted if converted is not _REFUSED and all(converted in m for m in meta) else _REFUSED
        return annotated
    if origin is Literal:
        return lambda value: value if any(value == c and type(value) is type(c) for c in args) else _REFUSED
    if origin in (typing.Union, types.UnionType):
        arms = tuple(_acceptor(a) for a in args)

        def union(value):
            for arm in arms:
                converted = arm(value)
                if converted is not _REFUSED:
                    return converted
            return _REFUSED
        return union
    if origin is list or tp is list:
        item = _acceptor(args[0]) if args else _same

        def items(value):
            if not isinstance(value, (list, tuple)):
                return _REFUSED
            converted = [item(v) for v in value]
            return _REFUSED if any(v is _REFUSED for v in converted) else converted
        return items
    return _PLAIN.get(origin or tp, _same)          # Any, no annotation, or one this checker does not know


def compile_check(tp) -> Callable[[Any, str], Any]:
    """The check of annotation ``tp`` as a function ``(value, where) -> converted value``.

    The annotation is read here, once (``Registry.register`` compiles the checks of a component's
    settings when it is registered), so a check costs a few comparisons. The rules are those of
    :func:`coerce`.
    """
    accept = _acceptor(tp)
    choices = typing.get_args(tp) if typing.get_origin(tp) is Literal else ()

    def check(value, where: str):
        converted = accept(value)
        if converted is _REFUSED:
            raise ConfigError(f"{where}: expected {describe(tp)}, got {value!r}."
                              + (did_you_mean(value, map(str, choices)) if choices else ""))
        return converted
    return check


def coerce(value: Any, tp, where: str) -> Any:
    """``value`` converted to annotation ``tp`` and checked against its declaration.

    Accepts ints (and numpy integers) for floats, numeric strings such as ``"1e-6"`` or ``"inf"``
    (YAML reads those as strings) for floats, and numpy integers for ints; refuses NaN and bools
    where a number is declared. Then checks the :class:`Interval` and :class:`Length` metadata of an
    ``Annotated`` annotation and the choices of a ``Literal``; unions take the first alternative
    that accepts the value. Any other annotation passes the value through unchecked.

    Raises
    ------
    ConfigError
        ``"{where}: expected {what the annotation accepts}, got {value!r}."``
    """
    return compile_check(tp)(value, where)


def settings_hints(func, settings) -> dict[str, Any]:
    """The annotation of each of ``settings`` (parameter names of ``func``), with its ``Annotated``
    metadata; ``Any`` for a setting without one. Evaluated once, when the function is registered;
    only these annotations are evaluated (the others may name types imported for type checkers only)."""
    wanted = {k: v for k, v in getattr(func, "__annotations__", {}).items() if k in settings}
    hints = typing.get_type_hints(types.SimpleNamespace(__annotations__=wanted), include_extras=True,
                                  globalns=getattr(inspect.unwrap(func), "__globals__", None))
    return {name: hints.get(name, Any) for name in settings}


def checked_arguments(*names: str):
    """Decorator for a plain function that is not a registered component: check its arguments
    ``names`` against their annotations on every call, as a config's settings are checked
    (:func:`compile_check`), so that a direct call with a value outside a ``Literal`` or an
    ``Interval`` raises :class:`ConfigError` naming the function and the argument instead of falling
    through to another branch. The registry's components get the same checks without it."""
    def deco(func):
        signature = inspect.signature(func)
        checks = {k: compile_check(tp) for k, tp in settings_hints(func, names).items()}
        where = func.__qualname__

        @functools.wraps(func)
        def checked(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            for key, check in checks.items():
                if key in bound.arguments:
                    bound.arguments[key] = check(bound.arguments[key], f"{where}: {key}")
            return func(*bound.args, **bound.kwargs)
        return checked
    return deco


_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.MULTILINE)
_PARAMETER = re.compile(r"^(\w[\w, ]*?)\s*(?::.*)?$")


def parameter_docs(func) -> dict[str, str]:
    """Each parameter's description in the numpydoc ``Parameters`` section of ``func``'s docstring,
    as one line (``{}`` without that section); names listed together (``low, high : float``) share one.

    Examples
    --------
    >>> def f(*, tol=1e-3, low=0, high=1):
    ...     '''Solve.
    ...
    ...     Parameters
    ...     ----------
    ...     tol : float
    ...         Stop when the change is below it.
    ...         Relative.
    ...     low, high : int
    ...         The bounds.
    ...     '''
    >>> parameter_docs(f)
    {'tol': 'Stop when the change is below it. Relative.', 'low': 'The bounds.', 'high': 'The bounds.'}
    """
    doc = inspect.getdoc(func) or ""
    sections = list(_SECTION.finditer(doc))
    start = next((k for k, m in enumerate(sections) if m.group(1) == "Parameters"), None)
    if start is None:
        return {}
    end = sections[start + 1].start() if start + 1 < len(sections) else len(doc)
    docs: dict[str, list[str]] = {}
    names: list[str] = []
    for line in doc[sections[start].end():end].splitlines():
        if line[:1].strip():                                   # "name : type" at the section's indent
            match = _PARAMETER.match(line)
            names = [n.strip() for n in match.group(1).split(",")] if match else []
            for name in names:
                docs[name] = []
        elif line.strip():
            for name in names:
                docs[name].append(line.strip())
    return {name: " ".join(words) for name, words in docs.items()}
